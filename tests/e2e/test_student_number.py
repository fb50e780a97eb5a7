"""One sheet photocopied for a class (#36 §3): ``build --scannable --student-number DIGITS``
prints a grid of digit boxes on each sheet's first page, and ``scan --roster`` tells the
copies apart by the pile's order, reads each copy's number with the boxes' own rules and
matches it to the roster; what it cannot match is an issue for a person, settled by a
corrections row ``copy:<page>,<student id>``. The pages are rendered, marked with the pen
model of tests/scanpens.py and scanned as a copier would."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.conftest import ROOT, needs_tex
from tests.scanpens import draw_case, scan_page
from tests.scansynth import render

pytestmark = needs_tex
QUIZ = str(ROOT / "banks" / "quiz.yaml")
DPI = 200
ROSTER = "name,id\nAda Lovelace,123456\nZoë O'Brien,204518\nIvan Petrov,000777\nMei Chen,555555\n"


def _main(args: list[str]) -> int:
    from worksheetgen.cli import main

    try:
        main(args)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _build(out: Path, *extra: str) -> Path:
    args = ["build", "--seed", "5", "--bank", QUIZ, "--out", str(out), "-q", "--scannable"]
    assert _main([*args, "--student-number", "6", *extra]) == 0
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return folder


@pytest.fixture(scope="module")
def photocopied(tmp_path_factory) -> Path:
    """Two versions of the quiz with answer sheets and a 6-digit grid, A4."""
    return _build(tmp_path_factory.mktemp("copies"), "--answer-sheet", "--versions", "2")


def _meanings(folder: Path) -> tuple[dict, dict]:
    """scan.json's boxes with their meaning, by sheet index and page; and its document."""
    from worksheetgen.grading.key import grade_key
    from worksheetgen.keyjson.read import load_key
    from worksheetgen.scan.contract import parse_positions
    from worksheetgen.scan.positions import SCAN_FORMAT, SCAN_VERSIONS
    from worksheetgen.scan.setup import _meanings as meanings

    records = load_key(folder / "key.json")
    doc = json.loads((folder / "scan.json").read_text("utf-8"))
    positions = parse_positions(doc, "scan.json", len(records.sheets), SCAN_FORMAT, SCAN_VERSIONS)
    return meanings(positions, records.sheets, grade_key(records), "scan.json"), doc


class Pile:
    """Copies of the versions' answer sheets, marked and scanned into a folder in order."""

    def __init__(self, folder: Path, work: Path, seed: int = 1) -> None:
        self.folder, self.work = folder, work
        self.rng = random.Random(seed)
        self.meanings, self.doc = _meanings(folder)
        work.mkdir(parents=True, exist_ok=True)
        self.files: list[str] = []
        #: what each copy's answers were marked as: (question, answer) -> option or mark
        self.expected: list[dict[tuple[str, str], str]] = []
        self.pages: dict[int, list[Image.Image]] = {}

    def _images(self, sheet: int) -> list[Image.Image]:
        if sheet not in self.pages:
            version = "ABCDEFG"[sheet]
            self.pages[sheet] = render(self.folder / "versions" / f"{version}-answers.pdf", DPI)
        return [im.copy() for im in self.pages[sheet]]

    def copy(
        self,
        sheet: int,
        number: str,
        pick: int,
        pages: tuple[int, ...] | None = None,
        number_pen: dict[int, str] | None = None,
        fmt: str = "png",
        pen: str = "ballpoint-cross",
    ) -> str:
        """A copy of ``sheet``: ``number`` marked in its grid (a digit a column, from the
        left, with ``pen``; ``number_pen``: another pen for a column), every part's box
        ``pick`` (modulo its boxes) marked with a ballpoint; ``pages``: the pages scanned, in
        that order, as ``fmt`` (scanpens.FORMATS). Returns where its first page is
        (``copy.png#1``)."""
        images = self._images(sheet)
        grid = {
            b["id"]: (b["x"], b["y"])
            for p in self.doc["sheets"][sheet]["pages"]
            for b in p.get("number_boxes", [])
        }
        expected: dict[tuple[str, str], str] = {}
        arrays = [np.asarray(im, dtype=np.float64).copy() for im in images]
        for column, digit in enumerate(number, start=1):
            drawn = (number_pen or {}).get(column, pen)
            draw_case(arrays[0], drawn, grid[f"n.{column}.{digit}"], DPI, self.rng)
        for page, boxes in self.meanings[sheet].items():
            groups: dict[tuple[str, str], list[dict]] = {}
            for b in boxes:
                groups.setdefault((b["question"], b["answer"]), []).append(b)
            for part, members in groups.items():
                box = members[pick % len(members)]
                draw_case(arrays[page - 1], "ballpoint-tick", (box["x"], box["y"]), DPI, self.rng)
                expected[part] = box["mark"] if "mark" in box else box["option"]
        self.expected.append(expected)
        first = ""
        for p in pages or tuple(range(1, len(images) + 1)):
            image = Image.fromarray(np.clip(arrays[p - 1], 0, 255).astype(np.uint8))
            ext = "jpg" if fmt.startswith("jpeg") else "png"
            path = self.work / f"{len(self.files) + 1:03d}.{ext}"
            path.write_bytes(scan_page(image, fmt, self.rng))
            self.files.append(str(path))
            first = first or f"{path.name}#1"
        return first


def _scan(folder: Path, pile: Pile, out: Path, *extra: str) -> int:
    roster = pile.work / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    args = ["scan", *pile.files, "--key", str(folder / "key.json"), "--out", str(out)]
    return _main([*args, "--roster", str(roster), "-q", "--jobs", "1", *extra])


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _read(out: Path) -> dict[str, dict[tuple[str, str], str]]:
    """responses.csv by student: (question, answer) -> the value or mark read."""
    got: dict[str, dict[tuple[str, str], str]] = {}
    for r in _rows(out / "responses.csv"):
        got.setdefault(r["student"], {})[(r["question"], r["answer"])] = r["value"] or r["mark"]
    return got


def test_each_copy_is_read_as_the_student_whose_number_it_carries(photocopied, tmp_path):
    pile = Pile(photocopied, tmp_path / "pile")
    pile.copy(0, "123456", pick=0)
    pile.copy(1, "204518", pick=1)  # the other version
    pile.copy(0, "777", pick=2)  # 000777 on the roster, its number written short
    unknown = pile.copy(0, "999999", pick=1)
    dotted = pile.copy(1, "555555", pick=0, number_pen={3: "dot"})
    out = tmp_path / "out"
    assert _scan(photocopied, pile, out) == 0
    got = _read(out)
    assert got["123456"] == pile.expected[0]
    assert got["204518"] == pile.expected[1]
    assert got["000777"] == pile.expected[2]
    rows = _rows(out / "responses.csv")
    sheets = {r["student"]: r["sheet"] for r in rows}
    assert sheets["123456"] == "A" and sheets["204518"] == "B" and sheets["000777"] == "A"
    issues = {(i["kind"], i["id"]): i for i in _rows(out / "issues.csv")}
    # never a guess: the number not on the roster and the unclear digit are for a person,
    # their answers read under the copy's id until a person names the student
    assert ("unknown-number", f"copy:{unknown}") in issues
    unclear = issues[("unclear-number", f"copy:{dotted}")]
    assert "column 3" in unclear["detail"] and unclear["crop"].startswith("crops/")
    assert (out / unclear["crop"]).stat().st_size > 0
    assert got[f"copy:{unknown}"] == pile.expected[3]
    assert ("absent", "absent:555555") in issues
    assert not [k for k in issues if k[0] in ("duplicate-page", "stray-page", "missing-page")]
    scores = {r["student"]: r for r in _rows(out / "scores.csv")}
    assert scores["123456"]["name"] == "Ada Lovelace" and scores["123456"]["sheet"] == "A"
    assert scores["204518"]["name"] == "Zoë O'Brien"
    assert "Ada Lovelace" in (out / "feedback" / "123456.html").read_text("utf-8")
    assert "## 123456 (Ada Lovelace), sheet A:" in (out / "report.md").read_text("utf-8")

    # settled by hand: the unknown copy is Mei Chen's, the unclear one taken out
    fixes = tmp_path / "fixes.csv"
    fixes.write_text(f"id,value\ncopy:{unknown},555555\ncopy:{dotted},ignore\n", "utf-8")
    assert _scan(photocopied, pile, out, "--corrections", str(fixes)) == 0
    got = _read(out)
    assert got["555555"] == pile.expected[3] and f"copy:{unknown}" not in got
    assert f"copy:{dotted}" not in got
    issues = {(i["kind"], i["id"]): i for i in _rows(out / "issues.csv")}
    assert issues[("unknown-number", f"copy:{unknown}")]["settled"] == "555555"
    assert ("absent", "absent:555555") not in issues
    scores = {r["student"]: r for r in _rows(out / "scores.csv")}
    assert scores["555555"]["name"] == "Mei Chen"


def test_two_copies_of_one_number_and_a_stray_page_are_for_a_person(photocopied, tmp_path, capsys):
    pile = Pile(photocopied, tmp_path / "pile", seed=2)
    stray = pile.copy(0, "123456", pick=0, pages=(2,))  # a page 2 before any page 1
    first = pile.copy(0, "123456", pick=0)
    second = pile.copy(1, "123456", pick=1)
    out = tmp_path / "out"
    assert _scan(photocopied, pile, out) == 0
    issues = {(i["kind"], i["id"]): i for i in _rows(out / "issues.csv")}
    assert ("duplicate-number", f"copy:{first}") in issues
    assert ("duplicate-number", f"copy:{second}") in issues
    assert ("stray-page", f"page:{stray}") in issues
    got = _read(out)
    assert "123456" not in got  # neither copy given the student: a person decides
    assert got[f"copy:{first}"] == pile.expected[1]

    # a person names one copy's student, and may not give the other the same student
    fixes = tmp_path / "fixes.csv"
    fixes.write_text(f"id,value\ncopy:{second},123456\ncopy:{first},123456\n", "utf-8")
    capsys.readouterr()
    assert _scan(photocopied, pile, out, "--corrections", str(fixes)) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "each student once" in err and "Traceback" not in err
    fixes.write_text(f"id,value\ncopy:{second},123456\ncopy:{first},ignore\n", "utf-8")
    assert _scan(photocopied, pile, out, "--corrections", str(fixes)) == 0
    assert _read(out)["123456"] == pile.expected[2]
    fixes.write_text("id,value\ncopy:nowhere.png#1,123456\n", "utf-8")
    capsys.readouterr()
    assert _scan(photocopied, pile, out, "--corrections", str(fixes)) != 0
    assert "fixes.csv:2: id: expected a copy" in capsys.readouterr().err


def test_the_grid_is_refused_on_a_roster_build_and_needs_scannable(tmp_path, capsys):
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    base = ["build", "--seed", "5", "--bank", QUIZ, "--out", str(tmp_path), "--no-pdf"]
    assert _main([*base, "--scannable", "--student-number", "6", "--roster", str(roster)]) != 0
    assert "--student-number: expected a lone sheet or --versions N" in capsys.readouterr().err
    assert _main([*base, "--student-number", "6"]) != 0
    assert "--student-number: expected --scannable too" in capsys.readouterr().err
    assert _main([*base, "--scannable", "--student-number", "13"]) != 0
    assert not [p for p in tmp_path.iterdir() if p.is_dir()]  # nothing half-written


def test_scan_roster_is_refused_for_a_key_without_the_grid(tmp_path, capsys):
    out = tmp_path / "b"
    args = ["build", "--seed", "5", "--bank", QUIZ, "--out", str(out), "-q", "--scannable"]
    assert _main([*args, "--versions", "1", "--answer-sheet"]) == 0
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    page = tmp_path / "p.png"
    render(folder / "versions" / "A-answers.pdf", 100)[0].save(page)
    code = _main(
        ["scan", str(page), "--key", str(folder / "key.json"), "--roster", str(roster), "-q"]
    )
    assert code != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--roster: expected a key whose sheets carry" in err


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_the_grid_is_printed_where_scan_json_says(tmp_path, paper):
    """A lone full sheet with a 6-digit grid: its 60 boxes in scan.json, on page 1, each a
    printed empty frame where scan.json puts it, under the box for the written digit."""
    folder = _build(tmp_path / "b", "--paper", paper)
    doc = json.loads((folder / "scan.json").read_text("utf-8"))
    assert doc["student_number"] == 6
    (sheet,) = doc["sheets"]
    grid = [b for p in sheet["pages"] for b in p.get("number_boxes", [])]
    assert [p["page"] for p in sheet["pages"] if p.get("number_boxes")] == [1]
    assert sorted(b["id"] for b in grid) == sorted(
        f"n.{c}.{d}" for c in range(1, 7) for d in range(10)
    )
    (image,) = render(folder / "sheet.pdf", DPI)[:1]
    a = np.asarray(image)
    px = DPI / 25.4
    for b in grid:
        x, y = b["x"] * px, b["y"] * px
        inside = a[
            int(y + 0.3 * 4 * px) : int(y + 0.7 * 4 * px),
            int(x + 0.3 * 4 * px) : int(x + 0.7 * 4 * px),
        ]
        frame = a[int(y + 2 * px), int(x - 0.2 * px) : int(x + 0.4 * px)]
        assert inside.min() > 200 and frame.min() < 128, b
    xs = sorted({b["x"] for b in grid})
    ys = sorted({b["y"] for b in grid})
    assert len(xs) == 6 and len(ys) == 10
    width = {"a4": 210.0, "letter": 215.9}[paper]
    assert xs[-1] + 4 < width - 13  # clear of the corner marks' column


def test_without_roster_the_copies_are_duplicates_that_say_to_give_it(photocopied, tmp_path):
    pile = Pile(photocopied, tmp_path / "pile", seed=3)
    pile.copy(0, "123456", pick=0, pages=(1,))
    again = pile.copy(0, "204518", pick=1, pages=(1,))
    out = tmp_path / "out"
    args = ["scan", *pile.files, "--key", str(photocopied / "key.json"), "--out", str(out)]
    assert _main([*args, "-q", "--jobs", "1"]) == 0
    issues = {(i["kind"], i["id"]): i for i in _rows(out / "issues.csv")}
    assert "scan with --roster" in issues[("duplicate-page", f"page:{again}")]["detail"]
    assert {r["student"] for r in _rows(out / "responses.csv")} <= {"A", "B"}


def test_copies_fed_interleaved_and_marked_with_other_pens_are_never_misread(photocopied, tmp_path):
    """Two copies whose pages alternate in the pile (A1, B1, A2, B2), their numbers marked
    with felt tip and light pencil, scanned as JPEG quality 40 and 1-bit pages: each copy
    keeps its own pages, and its number is read right or listed for a person, never read as
    another student's."""
    pile = Pile(photocopied, tmp_path / "pile", seed=4)
    felt = pile.copy(0, "123456", pick=0, fmt="jpeg40", pen="felt-tip")
    pencil = pile.copy(1, "204518", pick=1, fmt="1bit", pen="pencil")
    a1, a2, b1, b2 = pile.files
    pile.files = [a1, b1, a2, b2]
    out = tmp_path / "out"
    assert _scan(photocopied, pile, out) == 0
    issues = {(i["kind"], i["id"]): i for i in _rows(out / "issues.csv")}
    kinds = {k for k, _ in issues}
    assert not kinds & {"stray-page", "missing-page", "unknown-number", "duplicate-number"}
    got = _read(out)
    for where, student, expected in ((felt, "123456", 0), (pencil, "204518", 1)):
        label = student if student in got else f"copy:{where}"
        assert label == student or ("unclear-number", f"copy:{where}") in issues
        flagged = {i["id"] for i in issues.values() if i["id"].startswith(f"{label}/")}
        for (question, answer), value in got[label].items():
            meant = pile.expected[expected][(question, answer)]
            assert value == meant or (value == "?" and f"{label}/{question}/{answer}" in flagged), (
                label,
                question,
                answer,
                value,
                meant,
            )
    assert "123456" in got  # felt tip on JPEG 40 reads as the number it is
