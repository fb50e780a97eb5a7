"""Scannable sheets and ``worksheetgen scan``, on synthetic scans of the project's own PDFs:
rendered at 150-300 dpi, boxes marked as a pen would, then turned, scaled, shifted,
blurred, noised, JPEG-compressed, on a grey background; a page upside down, one missing,
one twice. Every clearly planted mark must be read back; every unclear one listed."""

from __future__ import annotations

import csv
import io
import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, needs_tex
from tests.e2e.scan.builds import build_folder as _build
from tests.scansynth import Plan, distort, fill, render, smudge_code
from worksheetgen.errors import ScanError
from worksheetgen.grading.key import grade_key
from worksheetgen.keyjson.read import KeyDoc, load_key
from worksheetgen.scan.contract import Positions, parse_positions
from worksheetgen.scan.layout import score_values
from worksheetgen.scan.positions import SCAN_FORMAT, SCAN_VERSIONS
from worksheetgen.scan.run import scan_files
from worksheetgen.scan.setup import _meanings

pytestmark = needs_tex


JPEG = b"\xff\xd8"


@pytest.fixture(scope="module")
def klass(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A class of three students (the golden roster's first three), scannable."""
    tmp = tmp_path_factory.mktemp("class")
    roster = tmp / "roster.csv"
    lines = (ROOT / "tests" / "golden" / "roster.csv").read_text("utf-8").splitlines()
    roster.write_text("\n".join(lines[:4]) + "\n", "utf-8")
    return _build(tmp / "out", "--scannable", "--roster", str(roster))


def _scenario(boxes: list[dict], rng: random.Random) -> list[str | None]:
    """How a group of boxes (one part's options or score boxes) is marked."""
    n = len(boxes)
    kinds: list[str | None] = [None] * n
    roll = rng.random()
    picks = rng.sample(range(n), 2)
    if roll < 0.6:
        kinds[picks[0]] = rng.choice(["cross", "tick", "fill"])
    elif roll < 0.7:
        pass  # left blank
    elif roll < 0.76:  # a mark taken back (its box filled in), another marked instead
        kinds[picks[0]] = "blacken"
        kinds[picks[1]] = rng.choice(["cross", "tick"])
    elif roll < 0.8:  # a box filled in and nothing else: flagged for a person
        kinds[picks[0]] = "blacken"
    elif roll < 0.9:
        kinds[picks[0]] = "faint"
    else:
        kinds[picks[0]] = "cross"
        kinds[picks[1]] = "tick"
    return kinds


def _expected(plan: Plan, sheet: int, ids: list[str]) -> tuple[str | None, bool]:
    """What a group's planted marks mean: (the box id read, or None; whether it is unclear)."""
    kinds = {i: plan.planted[(sheet, i)] for i in ids}
    if any(k == "faint" for k in kinds.values()):
        return None, True
    marked = [i for i, k in kinds.items() if k in ("cross", "tick", "fill")]
    if len(marked) > 1:
        return None, True
    if not marked and "blacken" in kinds.values():
        return None, True  # only a mark taken back: the student may have meant it
    return (marked[0] if marked else None), False


def _checked(positions: dict, key: KeyDoc) -> Positions:
    """scan.json's records, from its parsed document (as ``scan`` reads them)."""
    return parse_positions(positions, "scan.json", len(key.sheets), SCAN_FORMAT, SCAN_VERSIONS)


def _read_csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text("utf-8"))))


def _check(folder: Path, out: Path, plans: dict[int, Plan], scanned: set[tuple[int, int]]) -> int:
    """Compare what scan read with what was planted; the number of boxes checked."""
    key_doc = json.loads((folder / "key.json").read_text())
    positions = json.loads((folder / "scan.json").read_text())
    records = load_key(folder / "key.json")
    meanings = _meanings(
        _checked(positions, records), records.sheets, grade_key(records), "scan.json"
    )
    rows = _read_csv(out / "responses.csv")
    got = {(r["student"], r["question"], r["answer"]): r["value"] or r["mark"] for r in rows}
    flagged = {
        r["id"]
        for r in _read_csv(out / "issues.csv")
        if r["kind"] in ("unclear-box", "several-marked", "only-taken-back", "unmarked")
    }
    boxes = 0
    misreads = []
    for s, plan in plans.items():
        sid = key_doc["sheets"][s]["id"]
        for page, group_boxes in meanings[s].items():
            groups: dict[tuple[str, str], list[dict]] = {}
            for b in group_boxes:
                groups.setdefault((b["question"], b["answer"]), []).append(b)
            for (question, answer), members in groups.items():
                gid = f"{sid}/{question}/{answer}"
                if (s, page) not in scanned:  # its page missing: a mark still to give
                    assert got.get((sid, question, answer)) == "?", gid
                    continue
                boxes += len(members)
                want, unclear = _expected(plan, s, [b["id"] for b in members])
                if want is None and "mark" in members[0]:
                    unclear = True  # a score row left unticked: not marked yet, listed
                value = got.get((sid, question, answer), "")
                if unclear:  # listed, and its part graded as still to mark ("?")
                    if gid not in flagged or value != "?":
                        misreads.append((gid, "not flagged", value))
                    continue
                if gid in flagged:
                    misreads.append((gid, "flagged though clear", want))
                    continue
                box = next((b for b in members if b["id"] == want), None)
                expect = "" if box is None else box.get("option", box.get("mark"))
                if value.casefold() != str(expect).casefold():
                    misreads.append((gid, want, value))
    assert misreads == [], (misreads, open(out / "issues.csv").read())
    return boxes


def _pdf_of(images: list[bytes]) -> bytes:
    from PIL import Image

    pages = [Image.open(io.BytesIO(b)).convert("L") for b in images]
    out = io.BytesIO()
    pages[0].save(out, format="PDF", save_all=True, append_images=pages[1:], resolution=200)
    return out.getvalue()


def _scan_set(folder: Path, tmp: Path, seed: int, dpi: int, sheets: list[int] | None = None):
    """Synthetic scans of ``sheets`` (default: the first): a page upside down, one missing,
    one twice; PDF, JPEG, PNG and TIFF files. Returns the plans, the pages scanned and the
    files."""
    rng = random.Random(seed)
    positions = json.loads((folder / "scan.json").read_text())
    by_index = {s["index"]: s for s in positions["sheets"]}
    ids = [s["id"] for s in json.loads((folder / "key.json").read_text())["sheets"]]
    # a class of versions or of students: each sheet's own PDF
    each = next((folder / d for d in ("versions", "students") if (folder / d).exists()), None)
    pdfs = [each / f"{i}-sheet.pdf" for i in ids] if each is not None else []
    plans: dict[int, Plan] = {}
    scanned: set[tuple[int, int]] = set()
    files: list[Path] = []
    for s in sheets or [0]:
        pdf = pdfs[s] if pdfs else folder / "sheet.pdf"
        images = render(pdf, dpi)
        plan = plans.setdefault(s, Plan())
        fill(images, {"sheets": [by_index[s]]}, 0, dpi, _scenario, rng, plan)
        plan.planted = {(s, i): k for (_, i), k in plan.planted.items()}
        n = len(by_index[s]["pages"])
        missing = rng.randrange(1, n) if n > 2 else None
        twice = (missing % n) + 1 if missing is not None else 1
        upside = rng.randrange(n) + 1
        blobs = []
        for p in range(1, n + 1):
            if p == missing:
                continue
            scanned.add((s, p))
            blobs.append(distort(images[p - 1], rng, upside_down=p == upside, jpeg=p % 2 == 0))
            if p == twice:
                blobs.append(distort(images[p - 1], rng))
        rng.shuffle(blobs)
        half = len(blobs) // 2
        (tmp / f"s{s}.pdf").write_bytes(_pdf_of(blobs[:half]))
        files.append(tmp / f"s{s}.pdf")
        for k, blob in enumerate(blobs[half:]):
            ext = "jpg" if blob.startswith(JPEG) else "png"
            name = tmp / f"s{s}-{k}.{ext}"
            name.write_bytes(blob)
            files.append(name)
    return plans, scanned, files


def test_scannable_build_records_every_box(quiz: Path):
    positions = json.loads((quiz / "scan.json").read_text())
    doc = load_key(quiz / "key.json")
    key = grade_key(doc)
    meanings = _meanings(_checked(positions, doc), doc.sheets, key, "scan.json")
    sheet = key.sheets[0]
    seen: dict[tuple[str, str], list[dict]] = {}
    for boxes in meanings[0].values():
        for b in boxes:
            assert 0 < b["x"] < 210 and 0 < b["y"] < 297
            seen.setdefault((b["question"], b["answer"]), []).append(b)
    for q in sheet.questions:
        for a in q.answers:
            group = seen[(q.id, a.name)]
            if a.kind == "choice":
                assert sorted(b["option"] for b in group) == [
                    "ABCDEFGH"[i] for i in range(len(a.options))
                ]
            else:  # score boxes 0 .. the part's points, as grading counts them
                assert [b["mark"] for b in group] == [
                    str(v) for v in score_values(q.points_of(a.name))
                ]
    text = subprocess.run(
        ["pdftotext", "-layout", str(quiz / "sheet.pdf"), "-"], capture_output=True, text=True
    ).stdout
    assert "mark a box with a cross or a tick" in text and "Marks (TA):" in text


def test_without_scannable_nothing_changes(tmp_path: Path, quiz: Path):
    plain = _build(tmp_path, "--no-pdf")
    assert not (plain / "scan.json").exists()
    assert "wsscan" not in (plain / "sheet.tex").read_text()
    assert (plain / "key.tex").read_text() == (quiz / "key.tex").read_text()


def test_synthetic_scans_read_back(quiz: Path, tmp_path: Path):
    plans, scanned, files = _scan_set(quiz, tmp_path, seed=11, dpi=200)
    out = tmp_path / "out"
    result = scan_files([str(f) for f in files], quiz / "key.json", out, jobs=2)
    # three of the sheet's four pages (one is left out): some forty boxes
    assert _check(quiz, out, plans, scanned) > 35
    kinds = [i.kind for i in result.issues]
    assert kinds.count("duplicate-page") == 1 and kinds.count("missing-page") == 1
    assert (out / "scores.csv").exists() and (out / "report.md").exists()
    for issue in _read_csv(out / "issues.csv"):
        if issue["kind"] in ("unclear-box", "several-marked", "only-taken-back"):
            assert (out / issue["crop"]).read_bytes()[:4] == b"\x89PNG"


def test_corrections_settle_issues(quiz: Path, tmp_path: Path):
    plans, scanned, files = _scan_set(quiz, tmp_path, seed=5, dpi=150)
    out = tmp_path / "out"
    first = scan_files([str(f) for f in files], quiz / "key.json", out)
    kinds = ("unclear-box", "several-marked", "only-taken-back", "unmarked")
    open_ids = [i.id for i in first.open_issues if i.kind in kinds]
    assert open_ids
    fixes = tmp_path / "fixes.csv"
    fixes.write_text("id,value\n" + "".join(f"{i},blank\n" for i in open_ids))
    again = scan_files([str(f) for f in files], quiz / "key.json", out, str(fixes))
    assert not [i for i in again.open_issues if i.kind in kinds]
    # settled: a score row said blank is 0 points (a person's mark), an option row blank
    rows = {
        f"{r['student']}/{r['question']}/{r['answer']}": r for r in _read_csv(out / "responses.csv")
    }
    settled = [rows[i] for i in open_ids if i in rows]
    assert settled and all(r["mark"] in ("0", "") and r["value"] == "" for r in settled)
    assert any(r["mark"] == "0" for r in settled)
    fixes.write_text("id,value\nnobody/q-none/x,a\n")
    before = (out / "responses.csv").read_bytes()
    with pytest.raises(ScanError, match=r"fixes.csv:2: id: expected"):
        scan_files([str(f) for f in files], quiz / "key.json", out, str(fixes))
    assert (out / "responses.csv").read_bytes() == before


def test_lualatex_sheets_are_read_too(tmp_path: Path):
    if shutil.which("lualatex") is None:
        pytest.skip("LuaLaTeX is not installed")
    folder = _build(tmp_path / "lua", "--scannable", "--engine", "lualatex")
    plans, scanned, files = _scan_set(folder, tmp_path, seed=3, dpi=300)
    out = tmp_path / "out"
    scan_files([str(f) for f in files], folder / "key.json", out)
    assert _check(folder, out, plans, scanned) > 35  # three of its four pages


def test_bad_scans_are_one_line_and_write_nothing(quiz: Path, tmp_path: Path, runner):
    from worksheetgen.cli import main

    text = tmp_path / "notes.txt"
    text.write_text("not a scan")
    broken = tmp_path / "broken.pdf"
    broken.write_bytes((quiz / "sheet.pdf").read_bytes()[:300])
    out = tmp_path / "out"
    for bad, says in [(text, "expected a scan"), (broken, "expected a readable PDF")]:
        res = runner.invoke(
            main, ["scan", str(bad), "--key", str(quiz / "key.json"), "--out", str(out)]
        )
        assert res.exit_code != 0
        assert res.output.count("\n") == 1 and says in res.output
        assert not out.exists() or not any(out.iterdir())


def test_a_page_of_another_build_is_listed_never_read(quiz: Path, tmp_path: Path, runner):
    """A page of another build anywhere in the pile (here between this build's pages) is an
    issue naming its file and page; the rest of the pile is read as without it."""
    from worksheetgen.cli import main

    other = tmp_path / "other"
    other.mkdir()
    folder = _build(other, "--scannable", "--title", "Another quiz")
    page = render(folder / "sheet.pdf", 150)[0]
    scan = tmp_path / "other.png"
    page.save(scan)
    plans, scanned, files = _one_sheet_scans(quiz, tmp_path, 8, 150, {})
    alone, out = tmp_path / "alone", tmp_path / "out"
    scan_files([str(f) for f in files], quiz / "key.json", alone)
    pile = [*files[:2], scan, *files[2:]]
    res = runner.invoke(
        main, ["scan", *map(str, pile), "--key", str(quiz / "key.json"), "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    (issue,) = [i for i in _read_csv(out / "issues.csv") if i["kind"] == "other-class-page"]
    assert issue["id"] == "page:other.png#1" and issue["where"] == "other.png#1"
    assert "another class" in issue["detail"] and not issue["settled"]
    _check(quiz, out, plans, scanned)
    assert (out / "responses.csv").read_bytes() == (alone / "responses.csv").read_bytes()


@pytest.mark.slow
def test_a_class_of_synthetic_scans_reads_thousands_of_boxes(tmp_path: Path):
    folder = _build(tmp_path / "class", "--scannable", "--versions", "30")
    plans, scanned, files = _scan_set(folder, tmp_path, seed=7, dpi=200, sheets=list(range(30)))
    out = tmp_path / "out"
    scan_files([str(f) for f in files], folder / "key.json", out, jobs=0)
    assert _check(folder, out, plans, scanned) >= 1500  # 1,795 at seed 7


def test_absent_students_are_listed_once_each_and_get_no_rows(klass: Path, tmp_path: Path, runner):
    from worksheetgen.cli import main

    ids = [s["id"] for s in json.loads((klass / "key.json").read_text())["sheets"]]
    plans, scanned, files = _scan_set(klass, tmp_path, seed=2, dpi=200, sheets=[1])
    out = tmp_path / "out"
    res = runner.invoke(
        main, ["scan", *map(str, files), "--key", str(klass / "key.json"), "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert "2 student(s) with no page scanned (absent)" in res.output
    issues = _read_csv(out / "issues.csv")
    absent = [i for i in issues if i["kind"] == "absent"]
    assert [i["id"] for i in absent] == [f"absent:{ids[0]}", f"absent:{ids[2]}"]
    assert all(i["kind"] != "missing-page" or ids[1] in i["id"] for i in issues)
    students = {r["student"] for r in _read_csv(out / "responses.csv")}
    assert students == {ids[1]}  # no rows at all for the absent, not rows of zeros
    _check(klass, out, plans, scanned)
    report = (out / "report.md").read_text("utf-8")
    assert "No responses from:" in report
    scores = {r["student"]: r for r in _read_csv(out / "scores.csv")}
    assert scores[ids[0]]["total"] == scores[ids[2]]["total"] == ""  # no total, not 0
    assert not (out / "feedback" / f"{ids[0]}.html").exists()
    zero = scan_files([str(f) for f in files], klass / "key.json", tmp_path / "z", absent="zero")
    assert zero.grade is not None
    scores = {r["student"]: r for r in _read_csv(tmp_path / "z" / "scores.csv")}
    assert scores[ids[0]]["total"] == "0"
    assert "counted as 0" in (tmp_path / "z" / "feedback" / f"{ids[0]}.html").read_text("utf-8")
    # report.md names the responses file scan put in place, not its staging copy
    assert f"Responses: `{out / 'responses.csv'}`" in report and ".scan-" not in report
    # settled like a page issue: seen, and no longer open
    fixes = tmp_path / "fixes.csv"
    fixes.write_text(f"id,value\nabsent:{ids[0]},absent\n", "utf-8")
    again = scan_files([str(f) for f in files], klass / "key.json", out, str(fixes))
    assert [i.id for i in again.open_issues if i.kind == "absent"] == [f"absent:{ids[2]}"]


def _one_sheet_scans(folder: Path, tmp: Path, seed: int, dpi: int, smudged: dict[int, range]):
    """Every page of the first sheet, marked, as PNG files (page order), the codes of the
    pages in ``smudged`` papered over in those cells and the pages turned upside down."""
    rng = random.Random(seed)
    positions = json.loads((folder / "scan.json").read_text())
    images = render(folder / "sheet.pdf", dpi)
    plan = Plan()
    fill(images, {"sheets": [positions["sheets"][0]]}, 0, dpi, _scenario, rng, plan)
    files = []
    for p, image in enumerate(images, start=1):
        if p in smudged:
            smudge_code(image, dpi, smudged[p])
        path = tmp / f"page{p}.png"
        path.write_bytes(distort(image, rng, upside_down=p in smudged, jpeg=False))
        files.append(path)
    return {0: plan}, {(0, p) for p in range(1, len(images) + 1)}, files


def test_corrections_read_an_unidentified_page_as_the_sheet_and_page_named(
    quiz: Path, tmp_path: Path
):
    plans, scanned, files = _one_sheet_scans(quiz, tmp_path, 4, 150, {2: range(26, 40)})
    sid = json.loads((quiz / "key.json").read_text())["sheets"][0]["id"]
    out = tmp_path / "out"
    first = scan_files([str(f) for f in files], quiz / "key.json", out)
    kinds = {(i.kind, i.id) for i in first.issues}
    page = f"page:{files[1].name}#1"
    assert ("unidentified-page", page) in kinds and ("missing-page", f"page:{sid}/2") in kinds
    fixes = tmp_path / "fixes.csv"
    fixes.write_text(f"id,value\n{page},{sid}/2\n", "utf-8")
    again = scan_files([str(f) for f in files], quiz / "key.json", out, str(fixes))
    assert again.identified == len(files)
    assert not [i for i in again.issues if i.kind == "missing-page"]
    assert [i.settled for i in again.issues if i.id == page] == [f"{sid}/2"]
    _check(quiz, out, plans, scanned)  # page 2's boxes read too, none misread


def test_a_page_issue_id_does_not_depend_on_how_its_scan_was_spelled(
    quiz: Path, tmp_path: Path, monkeypatch
):
    """A page's id names its scan by file name (more folders only where two scans share a
    name), so a corrections file still settles it when scan runs again from another
    folder or with the path spelled otherwise; one file given twice is refused."""
    from worksheetgen.scan.identify import scan_labels

    plans, scanned, files = _one_sheet_scans(quiz, tmp_path, 4, 150, {2: range(26, 40)})
    sid = json.loads((quiz / "key.json").read_text())["sheets"][0]["id"]
    fixes = tmp_path / "fixes.csv"
    fixes.write_text(f"id,value\npage:{files[1].name}#1,{sid}/2\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    spelled = [f"./{files[0].name}", str(files[1]), f"../{tmp_path.name}/{files[2].name}"]
    spelled += [str(f) for f in files[3:]]
    again = scan_files(spelled, quiz / "key.json", tmp_path / "out", str(fixes))
    assert again.identified == len(files)
    assert [i.settled for i in again.issues if i.kind == "unidentified-page"] == [f"{sid}/2"]
    (tmp_path / "day1").mkdir()
    (tmp_path / "day2").mkdir()
    for day in ("day1", "day2"):
        (tmp_path / day / "copier.pdf").write_bytes(b"")
    assert scan_labels(["day1/copier.pdf", "./day2/copier.pdf", str(files[0])]) == {
        "day1/copier.pdf": "day1/copier.pdf",
        "./day2/copier.pdf": "day2/copier.pdf",
        str(files[0]): files[0].name,
    }
    with pytest.raises(ScanError, match=r"day1/copier\.pdf: expected each scan once"):
        scan_labels(["day1/copier.pdf", "./day1/copier.pdf"])


def test_photocopies_of_one_sheet_are_duplicates_that_say_how_to_scan_a_class(
    quiz: Path, tmp_path: Path
):
    """A sheet that names no student (a version, a lone sheet) photocopied for a class: its
    copies share page codes, so the second copy is a duplicate page, and the issue says how
    to build a class that can be scanned."""
    plans, scanned, files = _one_sheet_scans(quiz, tmp_path, 5, 150, {})
    copy = tmp_path / "second-copy.png"
    copy.write_bytes(files[0].read_bytes())
    result = scan_files([str(f) for f in [*files, copy]], quiz / "key.json", tmp_path / "out")
    (dup,) = [i for i in result.issues if i.kind == "duplicate-page"]
    assert dup.id == "page:second-copy.png#1"
    assert "copies of one printed sheet share its page codes" in dup.detail
    assert "--roster" in dup.detail


def test_a_correction_naming_nothing_is_one_line_and_writes_nothing(
    quiz: Path, tmp_path: Path, runner
):
    from worksheetgen.cli import main

    # page 2's code papered over in part, page 3's whole: no way up can be told
    plans, scanned, files = _one_sheet_scans(
        quiz, tmp_path, 6, 150, {2: range(26, 40), 3: range(0, 58)}
    )
    doc = json.loads((quiz / "key.json").read_text())
    sid = doc["sheets"][0]["id"]
    boxes = [
        b["id"].split(".")
        for pg in json.loads((quiz / "scan.json").read_text())["sheets"][0]["pages"]
        for b in pg["boxes"]
    ]
    number, letter, _ = next(b for b in boxes if not b[2].startswith("s"))  # an option
    question = next(x for x in doc["sheets"][0]["questions"] if str(x["number"]) == number)
    choice = (question["id"], question["parts"]["abcdefgh".index(letter)]["answer"])
    out = tmp_path / "out"
    scan_files([str(f) for f in files], quiz / "key.json", out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    fixes = tmp_path / "fixes.csv"
    two, three = f"page:{files[1].name}#1", f"page:{files[2].name}#1"
    bad = [
        (f"{two},nobody/2", "value: expected a sheet id of the key"),
        (f"{two},{sid}/99", f"value: expected a page of sheet {sid}"),
        (f"{two},{sid}/x", f"value: expected a page of sheet {sid}"),
        (f"{sid}/q-none/x,A", "id: expected an id of issues.csv"),
        (f"{sid}/{choice[0]}/{choice[1]},Z", "value: expected one of the options"),
        (f"page:{files[0].name}#1,{sid}/2", "id: expected an unidentified page"),
        (f"{two},{sid}/1", f"value: expected a page no scan gave, got {sid}/1"),
        (f"{three},{sid}/3", "scan it again"),
    ]
    for row, says in bad:
        fixes.write_text(f"id,value\n{row}\n", "utf-8")
        with pytest.raises(ScanError, match=re.escape(says)) as err:
            scan_files([str(f) for f in files], quiz / "key.json", out, str(fixes))
        assert str(err.value).startswith(f"{fixes}:2: "), err.value
        assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    res = runner.invoke(
        main,
        ["scan", *map(str, files), "--key", str(quiz / "key.json"), "--out", str(out)]
        + ["--corrections", str(fixes)],
    )
    assert res.exit_code != 0 and res.output.count("\n") == 1, res.output
    assert "fixes.csv:2: value: expected a page whose corner marks read" in res.output


def _page_sizes(folder: Path) -> set[str]:
    sizes = set()
    for pdf in sorted(folder.glob("*.pdf")):
        info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout
        sizes |= {
            line.split(":", 1)[1].strip()
            for line in info.splitlines()
            if line.startswith("Page size")
        }
    return sizes


def test_feedback_pages_are_on_the_builds_paper(tmp_path: Path, runner):
    from worksheetgen.cli import main

    folder = _build(tmp_path / "letter", "--scannable", "--paper", "letter")
    assert json.loads((folder / "scan.json").read_text())["paper"] == "letter"
    _, _, files = _one_sheet_scans(folder, tmp_path, 8, 150, {})
    out = tmp_path / "out"
    scan_files([str(f) for f in files], folder / "key.json", out)
    assert _page_sizes(out / "feedback") == {"612 x 792 pts (letter)"}
    text = subprocess.run(
        ["pdftotext", str(next((out / "feedback").glob("*.pdf"))), "-"],
        capture_output=True,
        text=True,
    ).stdout
    assert "Self-attention quiz" in text  # the page's text is set, not only its size
    # grade itself: the configuration's paper, else a4, or --paper
    for args, size in [([], "(A4)"), (["--paper", "letter"], "(letter)")]:
        again = tmp_path / f"grade{len(args)}"
        res = runner.invoke(
            main,
            ["grade", "--key", str(folder / "key.json"), str(out / "responses.csv")]
            + ["--out", str(again), "-q", *args],
        )
        assert res.exit_code == 0, res.output
        assert {s.rsplit(" ", 1)[1] for s in _page_sizes(again / "feedback")} == {size}


def test_a_letter_class_gets_letter_feedback_pages(tmp_path: Path):
    """A class (a roster, one combined sheets.pdf) printed on Letter: scan writes its feedback
    pages and class report on Letter, as a single Letter build's (#32)."""
    roster = tmp_path / "roster.csv"
    roster.write_text("name,id\nAda Lovelace,1\nAlan Turing,2\n", "utf-8")
    folder = _build(tmp_path / "b", "--scannable", "--paper", "letter", "--roster", str(roster))
    positions = json.loads((folder / "scan.json").read_text())
    assert positions["paper"] == "letter"
    dpi = 150
    images = render(folder / "sheets.pdf", dpi)[: len(positions["sheets"][0]["pages"])]
    rng = random.Random(2)
    fill(images, {"sheets": [positions["sheets"][0]]}, 0, dpi, _scenario, rng, Plan())
    files = []
    for p, image in enumerate(images, start=1):
        files.append(tmp_path / f"page{p}.png")
        files[-1].write_bytes(distort(image, rng, upside_down=False, jpeg=False))
    out = tmp_path / "out"
    scan_files([str(f) for f in files], folder / "key.json", out)
    assert list((out / "feedback").glob("*.pdf"))
    assert _page_sizes(out / "feedback") == {"612 x 792 pts (letter)"}
    assert _page_sizes(out) == {"612 x 792 pts (letter)"}  # the class report


def test_scanned_marks_typed_marks_and_typed_answers_mix_in_one_class(
    klass: Path, tmp_path: Path, runner
):
    """Student 2's pages scanned; student 1's answers typed entry by entry and student 3's
    marks typed per part (their pages lost), added to scan's responses.csv: one grade run
    grades all three, the scanned student as scan graded them."""
    from worksheetgen.cli import main
    from worksheetgen.grading.key import load_key as grading_key

    key = grading_key(klass / "key.json")
    a, b, c = key.sheets[:3]
    _, _, files = _scan_set(klass, tmp_path, seed=9, dpi=200, sheets=[1])
    out = tmp_path / "scan"
    scan_files([str(f) for f in files], klass / "key.json", out)
    scanned = {r["student"]: r for r in _read_csv(out / "scores.csv")}[b.id]
    lines = []
    for sheet, how in ((a, "answers"), (c, "marks")):
        for q in sheet.questions:
            for ans in q.answers:
                if how == "marks":
                    lines.append(f"{sheet.id},{q.id},{ans.name},,,r\n")
                elif ans.kind == "matrix":
                    for r, row in enumerate(ans.rounded, 1):
                        for col, v in enumerate(row, 1):
                            lines.append(f'{sheet.id},{q.id},{ans.name},"{r},{col}",{v},\n')
                elif ans.kind in ("vector", "shape"):
                    for col, v in enumerate(ans.rounded, 1):
                        lines.append(f"{sheet.id},{q.id},{ans.name},{col},{v},\n")
                else:
                    value = ans.text if ans.kind in ("choice", "text") else ans.rounded
                    lines.append(f'{sheet.id},{q.id},{ans.name},,"{value}",\n')
    mixed = tmp_path / "mixed.csv"
    mixed.write_text((out / "responses.csv").read_text("utf-8") + "".join(lines), "utf-8")
    res = runner.invoke(
        main,
        ["grade", "--key", str(klass / "key.json"), str(mixed), "--out", str(tmp_path / "g")],
    )
    assert res.exit_code == 0, res.output
    scores = {r["student"]: r for r in _read_csv(tmp_path / "g" / "scores.csv")}
    for sheet in (a, c):
        row = scores[sheet.id]
        assert float(row["total"]) + float(row.get("ungraded") or 0) == float(row["max"]), row
    assert scores[b.id] == scanned
    report = (tmp_path / "g" / "report.md").read_text("utf-8")
    assert "No responses from" not in report


def test_a_blank_page_is_listed_but_needs_no_person(quiz: Path, tmp_path: Path, runner):
    """The blank back of a sheet printed on one side (a copier scanning both sides) is
    listed as a blank page, settled; a page with print but no code (the key's) is not."""
    from PIL import Image

    from worksheetgen.cli import main

    rng = random.Random(1)
    size = render(quiz / "sheet.pdf", 150)[0].size
    blank = tmp_path / "back.png"
    blank.write_bytes(distort(Image.new("L", size, 255), rng, jpeg=False))
    printed = tmp_path / "key.png"
    printed.write_bytes(distort(render(quiz / "key.pdf", 150)[0], rng, jpeg=False))
    out = tmp_path / "out"
    res = runner.invoke(
        main,
        ["scan", str(blank), str(printed), "--key", str(quiz / "key.json"), "--out", str(out)],
    )
    assert res.exit_code == 0, res.output
    issues = {i["id"]: i for i in _read_csv(out / "issues.csv")}
    assert issues[f"page:{blank.name}#1"]["kind"] == "blank-page"
    assert issues[f"page:{blank.name}#1"]["settled"] == "blank"
    assert issues[f"page:{printed.name}#1"]["kind"] == "unidentified-page"
    assert issues[f"page:{printed.name}#1"]["settled"] == ""
    assert "1 item(s) need a person" in res.output


def test_score_box_labels_print_the_points_as_the_sheet_does(tmp_path: Path):
    """A part worth 1.8 points (9 shared by 5 parts) gets score boxes 0, 0.5, 1, 1.5, 1.8:
    the label the sheet prints for its points, not 9/5; a value no decimal writes exactly
    stays a fraction."""
    from fractions import Fraction as F

    from worksheetgen.scan.layout import score_values, value_text

    assert [value_text(v) for v in score_values(F(9, 5))] == ["0", "0.5", "1", "1.5", "1.8"]
    assert [value_text(v) for v in (F(1, 2), F(7, 4), F(1, 8), F(5, 3))] == [
        "0.5",
        "1.75",
        "0.125",
        "5/3",
    ]
    bank = tmp_path / "b.yaml"
    bank.write_text(
        "sheet:\n  title: Points\nquestions:\n  - id: q-lab3\n    family: lab3\n"
        "    points: {total: 9}\n",
        "utf-8",
    )
    from worksheetgen.cli import main

    out = tmp_path / "out"
    try:
        main(
            ["build", "--seed", "3", "--bank", str(bank), "--out", str(out), "-q"]
            + ["--scannable", "--no-pdf"]
        )
    except SystemExit as exc:
        assert exc.code in (0, None)
    (tex_path,) = out.glob("*/sheet.tex")
    tex = tex_path.read_text("utf-8")
    assert "(1.8 points)" in tex or "1.8 points" in tex
    labels = re.findall(r"\\wsscore\{[^}]*\}\{([^}]*)\}", tex)
    assert labels and set(labels) == {"0", "0.5", "1", "1.5", "1.8"}, labels


def _tick_options_only(boxes: list[dict], rng: random.Random) -> list[str | None]:
    """Every option group gets one cross; every score row is left unticked (the TA has not
    marked those parts yet)."""
    if boxes[0]["id"].rsplit(".", 1)[1].startswith("s"):
        return [None] * len(boxes)
    kinds: list[str | None] = [None] * len(boxes)
    kinds[rng.randrange(len(boxes))] = "cross"
    return kinds


def test_an_unticked_score_row_is_a_mark_still_to_give_never_a_zero(klass: Path, tmp_path: Path):
    """A score row nobody ticked is a part the TA has not marked: '?' in responses.csv,
    listed in issues.csv as unmarked (with its crop), counted in scores.csv's ungraded
    column, 'not marked yet' in report.md and on the feedback page, never 0 points."""
    ids = [s["id"] for s in json.loads((klass / "key.json").read_text())["sheets"]]
    positions = json.loads((klass / "scan.json").read_text())
    sheet = next(s for s in positions["sheets"] if s["index"] == 1)
    images = render(klass / "students" / f"{ids[1]}-sheet.pdf", 150)
    rng = random.Random(4)
    fill(images, {"sheets": [sheet]}, 0, 150, _tick_options_only, rng, Plan())
    files = []
    for p, image in enumerate(images, 1):
        files.append(tmp_path / f"p{p}.png")
        files[-1].write_bytes(distort(image, rng, jpeg=False))
    out = tmp_path / "out"
    scan_files([str(f) for f in files], klass / "key.json", out)
    rows = [r for r in _read_csv(out / "responses.csv") if r["student"] == ids[1]]
    scored = {
        (b["id"].split(".")[0], b["id"].split(".")[1])
        for p in sheet["pages"]
        for b in p["boxes"]
        if ".s" in b["id"]
    }
    marks = [r for r in rows if r["mark"]]
    assert len(marks) == len(scored) and all(r["mark"] == "?" for r in marks)
    unmarked = {i["id"]: i for i in _read_csv(out / "issues.csv") if i["kind"] == "unmarked"}
    assert set(unmarked) == {f"{ids[1]}/{r['question']}/{r['answer']}" for r in marks}
    assert all(i["crop"] and (out / i["crop"]).is_file() for i in unmarked.values())
    row = {r["student"]: r for r in _read_csv(out / "scores.csv")}[ids[1]]
    key = grade_key(load_key(klass / "key.json")).sheets[1]
    pending = sum(key.question(r["question"]).points_of(r["answer"]) for r in marks)
    assert float(row["ungraded"]) == pytest.approx(float(pending))
    report = (out / "report.md").read_text("utf-8")
    assert report.count("not marked yet") == len(marks)
    page = (out / "feedback" / f"{ids[1]}.html").read_text("utf-8")
    assert page.count("not marked yet") == len(marks)


def test_a_class_printed_before_the_score_box_rule_is_read_as_it_was_printed(quiz: Path):
    """scan.json names a score box by its place in the row (s1, s2, ...), not its points: a
    class printed with the old boxes (scan.json version 1: 0, 1, 1.8 for a 1.8-point part)
    must not be read with the new row (0, 0.5, 1, 1.5, 1.8), where s1 is 0.5."""
    from worksheetgen.scan.positions import SCAN_VERSION

    positions = json.loads((quiz / "scan.json").read_text())
    assert positions["version"] == SCAN_VERSION == 2
    key_doc = json.loads((quiz / "key.json").read_text())
    records = load_key(quiz / "key.json")
    grading = grade_key(records)

    def marks(doc: dict) -> dict[str, str]:
        meanings = _meanings(_checked(doc, records), records.sheets, grading, "scan.json")
        return {
            b["id"]: b["mark"]
            for pages in meanings.values()
            for bs in pages.values()
            for b in bs
            if "mark" in b
        }

    lab = {k: v for k, v in marks(positions).items() if k.startswith(_number_of(key_doc, "q-lab3"))}
    assert lab and {v for k, v in lab.items() if k.endswith(".s1")} == {"1/2"}
    # what the old build recorded for lab3's parts: s0, s1, s2 (0, 1, 1.8); other rows left out
    printed = json.loads(json.dumps(positions))
    for sheet in printed["sheets"]:
        for page in sheet["pages"]:
            page["boxes"] = [
                b
                for b in page["boxes"]
                if ".s" not in b["id"] or b["id"] in lab and int(b["id"].split(".s")[1]) < 3
            ]
    old = marks({**printed, "version": 1})
    assert {v for k, v in old.items() if k in lab and k.endswith(".s1")} == {"1"}
    assert {v for k, v in old.items() if k in lab and k.endswith(".s2")} == {"9/5"}


def _number_of(key_doc: dict, qid: str) -> str:
    q = next(q for q in key_doc["sheets"][0]["questions"] if q["id"] == qid)
    return f"{q['number']}."


def test_scan_help_imports_no_image_machinery():
    code = (
        "import sys; from worksheetgen.cli import main\n"
        "try:\n    main(['scan', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('numpy', 'sympy', 'PIL', 'pypdfium2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith("[]")
