"""``build --scannable --answer-sheet``: a question booklet and a short answer sheet per
student, only the answer sheet scanned. Built as a whole class (long, accented, Greek and
CJK names), on A4 and Letter, for the bundled quiz and a 12-question section with two
pools: every answer sheet takes one or two pages, holds every box the scanner reads, and
synthetic scans of its pages grade exactly as the same marks on the full scannable sheet."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import ImageDraw

from tests import pagewords
from tests.conftest import ROOT, needs_tex
from tests.scansynth import BOX_MM, _pen, distort, render
from worksheetgen.bank.roster import file_stems
from worksheetgen.scan.run import scan_files

QUIZ = ROOT / "banks" / "quiz.yaml"
MIDTERM = ROOT / "tests" / "fixtures" / "midterm12.yaml"
HARD = ROOT / "tests" / "fixtures" / "roster-hard.csv"
DPI = 150


def _roster(tmp: Path, rows: list[int]) -> Path:
    """A roster of the hard roster's students ``rows`` (1: its first)."""
    lines = HARD.read_text("utf-8").splitlines()
    path = tmp / "roster.csv"
    path.write_text("\n".join([lines[0], *(lines[r] for r in rows)]) + "\n", "utf-8")
    return path


def _build(out: Path, bank: Path, roster: Path, paper: str, *extra: str) -> Path:
    from worksheetgen.cli import main

    args = ["build", "--seed", "3", "--bank", str(bank), "--roster", str(roster)]
    try:
        main([*args, "--paper", paper, "--out", str(out), "-q", "--scannable", *extra])
    except SystemExit as exc:
        assert exc.code in (0, None)
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return folder


def _stems(key: dict) -> dict[str, str]:
    """Each sheet id's file stem (ids that are no file names are changed)."""
    ids = [s["id"] for s in key["sheets"]]
    return dict(zip(ids, file_stems(ids), strict=True))


def _pdf_pages(path: Path) -> int:
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True)
    return int(next(ln for ln in info.stdout.splitlines() if ln.startswith("Pages:")).split()[1])


def _first_footer(pdf: Path) -> str:
    """The footer line of a PDF's first page: the line that says "Page 1 of N"."""
    first = subprocess.run(
        ["pdftotext", "-layout", "-f", "1", "-l", "1", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (foot,) = [line for line in first.splitlines() if "Page 1 of" in line]
    return foot


# the long names (a 200-letter German one, 200 x's, 200 CJK letters, a long Greek one), a
# short CJK, Korean and accented Vietnamese one
ROWS = [1, 2, 3, 4, 5, 6, 9]


@pytest.fixture(scope="module")
def answer_class(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled quiz for the hard roster's students, with answer sheets, on A4."""
    tmp = tmp_path_factory.mktemp("answers")
    return _build(tmp / "out", QUIZ, _roster(tmp, ROWS), "a4", "--answer-sheet")


@pytest.fixture(scope="module")
def full_class(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same class as full scannable sheets."""
    tmp = tmp_path_factory.mktemp("full")
    return _build(tmp / "out", QUIZ, _roster(tmp, ROWS), "a4")


def _check_answer_sheets(folder: Path) -> None:
    """Every sheet's answer sheet has one or two pages with boxes, every box of its
    questions, and a PDF of its own; the booklets carry no boxes and no page code."""
    scan = json.loads((folder / "scan.json").read_text())
    key = json.loads((folder / "key.json").read_text())
    stems = _stems(key)
    assert scan["document"] == "answers"
    assert [s["index"] for s in scan["sheets"]] == list(range(len(key["sheets"])))
    total = 0
    for sheet, ks in zip(scan["sheets"], key["sheets"], strict=True):
        pages = [p["page"] for p in sheet["pages"]]
        assert pages in ([1], [1, 2]), (ks["id"], pages)
        count = _pdf_pages(folder / "students" / f"{stems[ks['id']]}-answers.pdf")
        assert count == 2 and len(pages) <= count  # a blank back where one page is printed
        # the footer is one line, whatever the name's length: "name · sheet code … · answer
        # sheet" beside "Page 1 of 2" (a long name is shortened, as on the key)
        foot = _first_footer(folder / "students" / f"{stems[ks['id']]}-answers.pdf")
        assert "answer sheet" in foot, (ks["id"], foot)
        total += count
        ids = [b["id"] for p in sheet["pages"] for b in p["boxes"]]
        assert len(ids) == len(set(ids))
        questions = {str(q["number"]) for q in ks["questions"]}
        assert {i.split(".")[0] for i in ids} == questions, ks["id"]
    assert _pdf_pages(folder / "answers.pdf") == total
    sheets = (folder / "sheets.tex").read_text("utf-8")
    assert "\\wsscanbox" not in sheets and "\\wsscansheet" not in sheets
    assert "Answer on your answer sheet" in sheets


@needs_tex
@pytest.mark.slow
def test_quiz_answer_sheets_a4(answer_class: Path) -> None:
    _check_answer_sheets(answer_class)


@needs_tex
@pytest.mark.slow
@pytest.mark.parametrize("bank", [QUIZ, MIDTERM], ids=["quiz", "midterm12"])
def test_answer_sheets_letter(tmp_path: Path, bank: Path) -> None:
    folder = _build(tmp_path / "out", bank, _roster(tmp_path, ROWS), "letter", "--answer-sheet")
    _check_answer_sheets(folder)
    key = json.loads((folder / "key.json").read_text())
    if bank == MIDTERM:
        assert {len(s["questions"]) for s in key["sheets"]} == {12}


MIDTERM_TABLES = ROOT / "tests" / "fixtures" / "midterm.yaml"
CLASS_45 = ROOT / "tests" / "fixtures" / "roster-45.csv"


SHORT_18 = ROOT / "tests" / "fixtures" / "quiz18-short.yaml"


def _class_45(tmp_path: Path, bank: Path, seed: int, paper: str) -> Path:
    """The 45-student class's answer sheets of ``bank``: each one or two pages with every
    box, one PDF a student, and nothing printed over anything else or in the margin."""
    from worksheetgen.cli import main

    out = tmp_path / "out"
    args = ["build", "--seed", str(seed), "--bank", str(bank), "--paper", paper]
    args += ["--roster", str(CLASS_45), "--out", str(out), "-q", "--scannable", "--answer-sheet"]
    try:
        main(args)
    except SystemExit as exc:
        assert exc.code in (0, None)
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    _check_answer_sheets(folder)
    assert len(list((folder / "students").glob("*-answers.pdf"))) == 45
    assert pagewords.faults(folder / "answers.pdf") == []
    return folder


@needs_tex
@pytest.mark.slow
@pytest.mark.parametrize("paper", ["a4", "letter"])
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_a_table_heavy_midterms_answer_sheets_take_at_most_two_pages(
    tmp_path: Path, seed: int, paper: str
) -> None:
    """The 12-question midterm with six questions of tables to copy (#32): every one of the
    45 students' answer sheets takes one or two pages (at seed 3 on A4 one took three, at
    seed 1 on Letter two, while a number's or a shape's part sat alone on its line: its
    score boxes now go under its cell, three such parts to a line)."""
    _class_45(tmp_path, MIDTERM_TABLES, seed, paper)


@needs_tex
@pytest.mark.slow
@pytest.mark.parametrize(
    ("bank", "seed", "paper"),
    [
        (SHORT_18, 1, "letter"),
        (SHORT_18, 2, "a4"),
        (QUIZ, 5, "letter"),
        (MIDTERM, 4, "a4"),
    ],
    ids=["short18-letter", "short18-a4", "quiz-letter", "midterm12-a4"],
)
def test_other_quizzes_answer_sheets_take_at_most_two_pages(
    tmp_path: Path, bank: Path, seed: int, paper: str
) -> None:
    """Twenty short questions (numbers, shapes, multiple choice; no table), the bundled quiz
    and the other 12-question midterm, for 45 students: one or two pages each."""
    _class_45(tmp_path, bank, seed, paper)


def _mark(sheet_id: str, group: str, count: int) -> tuple[str | None, int, str | None, int]:
    """How a part's boxes are marked, the same on any page that holds them: (a pen's kind, on
    which box; a second kind, on which box), from the sheet and part alone."""
    h = int(hashlib.sha256(f"{sheet_id}/{group}".encode()).hexdigest(), 16)
    roll, first, second = h % 20, (h >> 8) % count, (h >> 16) % count
    if roll < 11:
        return ("cross", "tick", "fill")[roll % 3], first, None, 0
    if roll < 13:
        return None, 0, None, 0  # left blank
    if roll < 15 and first != second:  # taken back, another marked
        return "blacken", first, "cross", second
    if roll < 17:
        return "faint", first, None, 0  # a stray dot: unclear
    if first != second:
        return "cross", first, "tick", second  # two marks
    return "tick", first, None, 0


def _marked_scans(folder: Path, kind: str, out: Path) -> list[str]:
    """Every page with boxes of every sheet's ``kind`` PDF (sheet or answers), marked as
    ``_mark`` says (each part's strokes drawn from its own generator, so a part looks alike
    on both documents), turned, blurred and noised; the files written."""
    scan = json.loads((folder / "scan.json").read_text())
    key = json.loads((folder / "key.json").read_text())
    ids, stems = [s["id"] for s in key["sheets"]], _stems(key)
    px = DPI / 25.4
    files = []
    for sheet in scan["sheets"]:
        sid = ids[sheet["index"]]
        images = render(folder / "students" / f"{stems[sid]}-{kind}.pdf", DPI)
        groups: dict[str, list[tuple[int, dict]]] = {}
        for page in sheet["pages"]:
            for box in page["boxes"]:
                groups.setdefault(box["id"].rsplit(".", 1)[0], []).append((page["page"], box))
        for group, members in groups.items():
            pen, at, pen2, at2 = _mark(sid, group, len(members))
            rng = random.Random(f"{sid}/{group}")
            for k, w in ((pen, at), (pen2, at2)):
                if k is not None:
                    page, box = members[w]
                    draw = ImageDraw.Draw(images[page - 1])
                    _pen(draw, k, box["x"] * px, box["y"] * px, BOX_MM * px, rng)
        rng = random.Random(sid)
        for page in sheet["pages"]:
            name = out / f"{kind}-{sheet['index']}-{page['page']}.png"
            name.write_bytes(distort(images[page["page"] - 1], rng, jpeg=False))
            files.append(str(name))
    return files


def _rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text("utf-8"))))


@needs_tex
@pytest.mark.slow
def test_answer_sheets_grade_as_the_full_sheet(
    answer_class: Path, full_class: Path, tmp_path: Path
) -> None:
    """The same marks on the answer sheets and on the full sheets give the same responses,
    the same issues (by id), the same scores and the same report."""
    assert (answer_class / "key.json").read_bytes() == (full_class / "key.json").read_bytes()

    def box_ids(folder: Path) -> list[set[str]]:
        scan = json.loads((folder / "scan.json").read_text())
        return [{b["id"] for p in s["pages"] for b in p["boxes"]} for s in scan["sheets"]]

    assert box_ids(answer_class) == box_ids(full_class)  # every box, and no other
    results = {}
    for folder, kind in ((full_class, "sheet"), (answer_class, "answers")):
        pages = tmp_path / kind
        pages.mkdir()
        scans = _marked_scans(folder, kind, pages)
        result = scan_files(scans, folder / "key.json", tmp_path / f"scan-{kind}")
        assert result.identified == result.pages == len(scans)
        results[kind] = result
    full, answers = tmp_path / "scan-sheet", tmp_path / "scan-answers"

    # the same rows (in the order each document's pages set the boxes: a part's score boxes
    # sit under the whole question on the full sheet, beside the part on the answer sheet)
    def responses(folder: Path) -> list[tuple[str, ...]]:
        return sorted(tuple(r.values()) for r in _rows(folder / "responses.csv"))

    assert responses(answers) == responses(full)
    # (a score row nobody ticked is listed as unmarked, a mark still to give)
    boxes = ("unclear-box", "several-marked", "only-taken-back", "unmarked")

    def issues(folder: Path) -> list[tuple[str, str]]:
        return sorted((r["kind"], r["id"]) for r in _rows(folder / "issues.csv"))

    assert issues(answers) == issues(full)
    assert {k for k, _ in issues(answers)} <= set(boxes)
    assert any(k == "unclear-box" for k, _ in issues(answers))  # the stray dots were listed
    assert (answers / "scores.csv").read_bytes() == (full / "scores.csv").read_bytes()
    for name in sorted((full / "class-report").glob("*.csv")) + sorted(
        (full / "feedback").glob("*.html")
    ):
        other = answers / name.relative_to(full)
        assert other.read_bytes() == name.read_bytes(), name

    # the report names the key and the responses read, and its issues (issue 36) the pages
    # and pictures they are on, which differ: the rest is the same, and the same issues
    def without_issues(text: str) -> tuple[str, list[str]]:
        head, _, rest = text.partition("## Issues for a person")
        listed, _, tail = rest.partition("## Slips seen")
        ids = re.findall(r"^\| ([a-z-]+) \| `([^`]*)` \|", listed, flags=re.M)
        return head + tail, sorted(f"{k} {i}" for k, i in ids)

    report, listed = without_issues(
        (full / "report.md").read_text("utf-8").replace(str(full_class), "KEY")
    )
    assert listed == sorted(f"{k} {i}" for k, i in issues(full) if k != "blank-page")
    assert without_issues(
        (answers / "report.md")
        .read_text("utf-8")
        .replace(str(answer_class), "KEY")
        .replace(str(answers), str(full))
    ) == (report, listed)
    marked = [r for r in _rows(answers / "responses.csv") if r["value"] or r["mark"]]
    assert len(marked) > 20
    # far fewer pages to scan than the full sheets
    assert results["answers"].pages * 2 <= results["sheet"].pages


@needs_tex
@pytest.mark.slow
def test_a_full_sheet_page_is_not_an_answer_sheet_page(
    answer_class: Path, full_class: Path, tmp_path: Path
) -> None:
    """A page of the same seed's full scannable sheets, scanned with the answer sheets, is
    a page of another build (its page code says so): listed, never read with the wrong
    boxes."""
    page = render(full_class / "students" / "s05-sheet.pdf", DPI)[0]
    path = tmp_path / "full-page.png"
    path.write_bytes(distort(page, random.Random(1), jpeg=False))
    result = scan_files([str(path)], answer_class / "key.json", tmp_path / "scan")
    assert result.identified == 0
    assert [i.kind for i in result.issues if i.id == "page:full-page.png#1"] == ["other-class-page"]
    assert _rows(tmp_path / "scan" / "responses.csv") == []


@needs_tex
@pytest.mark.slow
def test_lone_sheet_answer_sheet(tmp_path: Path) -> None:
    """A lone sheet gets its booklet, answers.pdf and scan.json from the answer sheet; its
    marked answer sheet scans back."""
    from worksheetgen.cli import main

    try:
        main(
            ["build", "--seed", "4", "--bank", str(QUIZ), "--out", str(tmp_path), "-q"]
            + ["--scannable", "--answer-sheet"]
        )
    except SystemExit as exc:
        assert exc.code in (0, None)
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert (folder / "answers.pdf").exists() and (folder / "answers.tex").exists()
    scan = json.loads((folder / "scan.json").read_text())
    assert scan["document"] == "answers" and len(scan["sheets"][0]["pages"]) in (1, 2)
    images = render(folder / "answers.pdf", DPI)
    box = scan["sheets"][0]["pages"][0]["boxes"][0]
    px = DPI / 25.4
    _pen(
        ImageDraw.Draw(images[0]),
        "cross",
        box["x"] * px,
        box["y"] * px,
        BOX_MM * px,
        random.Random(2),
    )
    files = []
    for n, image in enumerate(images[: len(scan["sheets"][0]["pages"])]):
        files.append(tmp_path / f"p{n}.png")
        files[-1].write_bytes(distort(image, random.Random(n), jpeg=False))
    result = scan_files([str(f) for f in files], folder / "key.json", tmp_path / "scan")
    assert result.identified == len(files)
    # (every score row nobody ticked is a mark still to give, "?")
    rows = [
        r
        for r in _rows(tmp_path / "scan" / "responses.csv")
        if r["value"] or r["mark"] not in ("", "?")
    ]
    key = json.loads((folder / "key.json").read_text())
    number = int(box["id"].split(".")[0])
    (question,) = [q["id"] for q in key["sheets"][0]["questions"] if q["number"] == number]
    assert [r["question"] for r in rows] == [question]


def test_answer_sheet_needs_scannable(tmp_path: Path) -> None:
    """--answer-sheet without --scannable: one line, exit 1, nothing written."""
    from click.testing import CliRunner

    from worksheetgen.cli import main

    result = CliRunner().invoke(
        main,
        ["build", "--seed", "1", "--no-pdf", "--answer-sheet", "--out", str(tmp_path / "o")],
    )
    assert result.exit_code != 0
    lines = [ln for ln in result.output.splitlines() if "error" in ln]
    assert len(lines) == 1 and "--answer-sheet: expected --scannable too" in lines[0]
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())
    assert "Traceback" not in result.output


def test_answer_sheet_setting(tmp_path: Path) -> None:
    """answer_sheet in worksheetgen.toml: true or false, else one line with file and line."""
    from worksheetgen.errors import ConfigError
    from worksheetgen.pipeline.config import load_config

    config = tmp_path / "worksheetgen.toml"
    config.write_text("scannable = true\nanswer_sheet = true\n", "utf-8")
    loaded = load_config(str(config), {"answer_sheet": None}, environ={})
    assert loaded.value("answer_sheet") is True
    assert loaded.settings["answer_sheet"].source.endswith("worksheetgen.toml:2")
    assert (
        load_config(str(config), {"answer_sheet": False}, environ={}).value("answer_sheet") is False
    )
    config.write_text('course = "x"\nanswer_sheet = "yes"\n', "utf-8")
    with pytest.raises(
        ConfigError, match=r"worksheetgen.toml:2: answer_sheet: expected true or false"
    ):
        load_config(str(config), {}, environ={})


def test_without_answer_sheet_nothing_changes(tmp_path: Path) -> None:
    """Without --answer-sheet the sheet's LaTeX has no word of an answer sheet (the golden
    digests hold every byte)."""
    from click.testing import CliRunner

    from worksheetgen.cli import main

    out = tmp_path / "o"
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--seed",
            "1",
            "--bank",
            str(QUIZ),
            "--no-pdf",
            "--scannable",
            "--out",
            str(out),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    (folder,) = list(out.iterdir())
    assert not (folder / "answers.tex").exists()
    assert "answer sheet" not in (folder / "sheet.tex").read_text("utf-8")
    shutil.rmtree(out)


@needs_tex
def test_three_tables_sit_side_by_side_where_their_score_boxes_are_many(tmp_path: Path) -> None:
    """A table part's many score boxes (1.6 points: a box per mark) go under its cells, not beside
    its name, in lines no wider than a third of the line, so three such parts share a line
    (the projections question's Q, K and V, then S and S/sqrt(2); before, one a line made the
    midterm's answer sheet three pages and a half, two a line three for 25 of 45 students)."""
    roster = tmp_path / "roster.csv"
    lines = (ROOT / "tests" / "fixtures" / "roster-45.csv").read_text("utf-8").splitlines()
    roster.write_text("\n".join(lines[:2]) + "\n", "utf-8")
    bank = ROOT / "tests" / "fixtures" / "midterm.yaml"
    folder = _build(tmp_path / "out", bank, roster, "a4", "--answer-sheet")
    key = json.loads((folder / "key.json").read_text("utf-8"))
    (number,) = [q["number"] for q in key["sheets"][0]["questions"] if q["id"] == "m-proj"]
    (pdf,) = (folder / "students").glob("*-answers.pdf")
    words = subprocess.run(
        ["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    tops = {}
    for line in words.splitlines():
        if "<word" in line:
            text = line.split(">", 1)[1].split("<", 1)[0]
            tops.setdefault(text, float(line.split('yMin="')[1].split('"')[0]))
    name = [f"{number}({letter})" for letter in "abcde"]
    assert all(n in tops for n in name), sorted(tops)[:40]
    a, b, c, d, e = (tops[n] for n in name)
    assert abs(a - b) < 1 and abs(a - c) < 1 and abs(d - e) < 1 and d > a + 20


@needs_tex
def test_short_answers_sit_three_to_a_line(tmp_path: Path) -> None:
    """A question of numbers and shapes to copy (the heads question: d_k, the concat width,
    the shape of W_O) puts its three parts on one line, each part's score boxes under its
    cell (#32: one to a line, such parts made answer sheets three pages long)."""
    roster = tmp_path / "roster.csv"
    lines = CLASS_45.read_text("utf-8").splitlines()
    roster.write_text("\n".join(lines[:2]) + "\n", "utf-8")
    folder = _build(tmp_path / "out", SHORT_18, roster, "a4", "--answer-sheet")
    key = json.loads((folder / "key.json").read_text("utf-8"))
    (number,) = [q["number"] for q in key["sheets"][0]["questions"] if q["id"] == "s-heads1"]
    (pdf,) = (folder / "students").glob("*-answers.pdf")
    words = subprocess.run(
        ["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    boxes: dict[str, list[tuple[float, float]]] = {}
    for line in words.splitlines():
        if "<word" in line:
            text = line.split(">", 1)[1].split("<", 1)[0]
            x = float(line.split('xMin="')[1].split('"')[0])
            y = float(line.split('yMin="')[1].split('"')[0])
            boxes.setdefault(text, []).append((x, y))
    name = [f"{number}({letter})" for letter in "abc"]
    assert all(n in boxes for n in name), sorted(boxes)[:40]
    (a, b, c) = (boxes[n][0] for n in name)
    assert abs(a[1] - b[1]) < 1 and abs(a[1] - c[1]) < 1 and a[0] < b[0] < c[0]
    # each part's "TA:" under its name, not beside it
    below = [t for t in boxes["TA:"] if a[1] + 8 < t[1] < a[1] + 30]
    assert len(below) == 3 and all(
        abs(t[0] - p[0]) < 2 for t, p in zip(sorted(below), (a, b, c), strict=True)
    )
    assert pagewords.faults(pdf) == []


@needs_tex
@pytest.mark.slow
def test_every_footer_is_one_line_however_long_the_name(full_class: Path) -> None:
    """A sheet's and a key's footer end on their first line with the sheet code and the
    document's kind, beside "Page 1 of N", for the hard roster's longest names (issue 32
    section 2: a long Greek name wrapped "· answer key" onto a second line)."""
    pdfs = sorted((full_class / "students").glob("*-sheet.pdf"))
    pdfs += sorted((full_class / "students").glob("*-key.pdf"))
    assert len(pdfs) == 2 * len(ROWS)
    for pdf in pdfs:
        foot = _first_footer(pdf)
        ends = "answer key" if pdf.name.endswith("-key.pdf") else "sheet code"
        assert ends in foot, (pdf.name, foot)
