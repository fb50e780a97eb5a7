"""scan.json and corrections files damaged by hand are one line naming the field or line
(issue 33, section 3); a scannable build without PDFs is refused or said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT, needs_tex
from worksheetgen.errors import ScanError
from worksheetgen.scan.run import scan_files

QUIZ = str(ROOT / "banks" / "quiz.yaml")


@pytest.fixture(scope="module")
def page(quiz: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sheet's first page, as a scan (PNG)."""
    from tests.scansynth import render

    path = tmp_path_factory.mktemp("page") / "page.png"
    render(quiz / "sheet.pdf", 100)[0].save(path)
    return path


def _damaged(quiz: Path, tmp: Path, change) -> Path:
    """A copy of the build's key.json and scan.json, scan.json changed by ``change``."""
    folder = tmp / "build"
    folder.mkdir()
    (folder / "key.json").write_bytes((quiz / "key.json").read_bytes())
    doc = json.loads((quiz / "scan.json").read_text("utf-8"))
    text = change(doc)
    (folder / "scan.json").write_text(text if isinstance(text, str) else json.dumps(doc), "utf-8")
    return folder / "key.json"


def _set(path: list, value):
    """A change setting the field at ``path`` (keys and indexes) to ``value`` (or, with
    the value ``...``, removing it)."""

    def change(doc):
        target = doc
        for step in path[:-1]:
            target = target[step]
        if value is ...:
            del target[path[-1]]
        else:
            target[path[-1]] = value

    return change


BOX = ["sheets", 0, "pages", 0, "boxes", 0]


def _box_twice(doc):
    """The first page's first box listed again right after it: one box, two places."""
    boxes = doc["sheets"][0]["pages"][0]["boxes"]
    boxes.insert(1, dict(boxes[0], x=boxes[0]["x"] + 10))


CASES = [
    (_set(["paper"], "a5"), "paper: expected a4 or letter, got 'a5'"),
    (_set(["paper"], ...), "paper: expected a value, got none"),
    (_set(["paper"], 4), "paper: expected a4 or letter, got 4"),
    (_set(["box_mm"], "x"), "box_mm: expected a size in mm from 1 to 20, got 'x'"),
    (_set(["box_mm"], -4), "box_mm: expected a size in mm from 1 to 20, got -4"),
    (_set(["box_mm"], True), "box_mm: expected a size in mm from 1 to 20, got true"),
    (_set(["build"], "x"), "build: expected an integer from 0 to 65535, got 'x'"),
    (_set(["version"], "1"), "version: expected 1 or 2, got '1'"),
    (_set(["sheets"], None), "sheets: expected a list of sheets, got null"),
    (_set(["sheets"], {}), "sheets: expected a list of sheets, got an object"),
    (_set(["sheets", 0], 7), "sheets[0]: expected an object, got 7"),
    (_set(["sheets", 0, "index"], "a"), "sheets[0].index: expected a sheet of the key (0 to 0)"),
    (_set(["sheets", 0, "index"], 5), "sheets[0].index: expected a sheet of the key (0 to 0)"),
    (_set(["sheets", 0, "index"], False), "sheets[0].index: expected a sheet of the key"),
    (_set(["sheets", 0, "index"], ...), "sheets[0].index: expected a value, got none"),
    (_set(["sheets", 0, "pages"], "all"), "sheets[0].pages: expected a list of pages, got 'all'"),
    (_set(["sheets", 0, "pages", 0, "page"], "1"), "sheets[0].pages[0].page: expected an integer"),
    (_set(["sheets", 0, "pages", 0, "page"], 0), "sheets[0].pages[0].page: expected an integer"),
    (
        _set(["sheets", 0, "pages", 1, "page"], 1),
        "sheets[0].pages[1].page: expected each page once",
    ),
    (_set(["sheets", 0, "pages", 0, "boxes"], None), "sheets[0].pages[0].boxes: expected a list"),
    (_set([*BOX], "box"), "sheets[0].pages[0].boxes[0]: expected an object, got 'box'"),
    (_set([*BOX, "x"], "left"), "boxes[0].x: expected a number of mm on the page, got 'left'"),
    (_set([*BOX, "x"], 1e6), "boxes[0].x: expected a number of mm on the page, got 1000000.0"),
    (_set([*BOX, "y"], ...), "boxes[0].y: expected a value, got none"),
    (_set([*BOX, "id"], 5), "boxes[0].id: expected a box id"),
    (_set([*BOX, "id"], "1.a.s\u00b9"), "boxes[0].id: expected a box id"),
    (_set([*BOX, "id"], "1.a.s99"), "boxes: expected score boxes up to"),
    (lambda doc: doc["sheets"].pop(), "sheets: expected every sheet of the key (0 to 0), got none"),
    (_box_twice, "pages[0].boxes[1].id: expected each box once (pages[0].boxes[0] has it)"),
    (lambda doc: "[" * 5000 + "]" * 5000, "expected JSON nested at most"),
    (lambda doc: '{"format": "worksheetgen-scan", "version": 1, "x": NaN}', "scan.json"),
    (lambda doc: "[]", "scan.json: expected an object, got a list"),
    (
        lambda doc: json.dumps(doc)[:-1] + ', "paper": "letter"}',
        "scan.json: paper: expected each key of an object once, got it twice",
    ),
]


@needs_tex
@pytest.mark.parametrize("case", range(len(CASES)))
def test_a_damaged_scan_json_is_one_line_naming_the_field(quiz, page, tmp_path, case):
    change, says = CASES[case]
    key = _damaged(quiz, tmp_path, change)
    out = tmp_path / "out"
    with pytest.raises(ScanError) as caught:
        scan_files([str(page)], key, out)
    line = str(caught.value)
    assert "\n" not in line and f"{key.parent / 'scan.json'}:" in line, line
    assert says in line, line
    assert not out.exists()


def _corrections(tmp: Path, text: str | bytes) -> str:
    path = tmp / "fixes.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return str(path)


@needs_tex
def test_a_corrections_file_is_read_within_its_limits_and_one_line_otherwise(quiz, page, tmp_path):
    sid = json.loads((quiz / "key.json").read_text("utf-8"))["sheets"][0]["id"]
    cases = [
        # a cell of a million characters, under the file's 10 MB limit
        (f"id,value\n{sid}/q/a,{'1' * 1_000_000}\n", ":2: expected a cell of at most 1,000"),
        (f"id,value\n{sid}/q/a,{'1' * 5_000}\n", ":2: value: expected at most 1,000"),
        (f'id,value\n"{"x" * 1_000_000}",1\n', "expected a cell of at most 1,000 characters"),
        # a page named with a digit that is not ASCII
        (f"id,value\npage:page.png#1,{sid}/\u00b9\n", ":2: value: expected a page of sheet"),
        (f"id,value\npage:page.png#1,{sid}/\u0661\n", ":2: value: expected a page of sheet"),
        (f"id,value\npage:page.png#1,{sid}/+1\n", ":2: value: expected a page of sheet"),
        # two rows for one part: refused, naming both lines
        (
            f"id,value\n{sid}/q/a,1\n{sid}/q/b,2\n{sid}/q/a,2\n",
            f":4: id: expected each id once, got '{sid}/q/a' again (also on line 2)",
        ),
        (
            "id,value\npage:page.png#1,ignore\npage:page.png#1,ignore\n",
            ":3: id: expected each id once, got 'page:page.png#1' again (also on line 2)",
        ),
        # control and format characters, NUL included
        (f"id,value\n{sid}/q/a,1\x00\n", ":2: value: expected printable text, got U+0000"),
        (f"id,value\n{sid}/q\x1b[2J/a,1\n", ":2: id: expected printable text, got U+001B"),
        (f"id,value\n{sid}/q/a,\u202e1\n", ":2: value: expected printable text, got U+202E"),
        ("", ":1: header: expected id,value"),
        # a byte that is not UTF-8: its line and the byte, as key.json's reader says it
        (
            b"id,value\n" + f"{sid}/q/a,1\n".encode() + b"x,\xe9\n",
            ":3: expected UTF-8 text, got the byte 0xE9",
        ),
    ]
    for text, says in cases:
        out = tmp_path / "out"
        fixes = _corrections(tmp_path, text)
        with pytest.raises(ScanError) as caught:
            scan_files([str(page)], quiz / "key.json", out, fixes)
        line = str(caught.value)
        assert "\n" not in line and line.startswith(fixes), line
        assert says in line, (says, line[:300])
        assert not out.exists()


def test_a_scannable_build_without_pdfs_says_it_writes_no_scan_json(tmp_path, runner):
    """Issue 33, section 3: it exited 0 without scan.json and without a word (the .tex alone
    are still worth having: the scannable sheet's source)."""
    from worksheetgen.cli import main

    res = runner.invoke(
        main,
        ["build", "--seed", "1", "--scannable", "--no-pdf", "-q", "--out", str(tmp_path / "o")],
    )
    assert res.exit_code == 0, res.output
    assert res.output.startswith(
        "worksheetgen: warning: --scannable with --no-pdf: the sheets' .tex carry the marks, "
        "but no scan.json is written"
    )
    assert res.output.count("\n") == 1
    (folder,) = (tmp_path / "o").iterdir()
    assert not (folder / "scan.json").exists()
    config = tmp_path / "worksheetgen.toml"
    config.write_text("scannable = true\n", "utf-8")
    res = runner.invoke(
        main,
        ["build", "--seed", "1", "--no-pdf", "--config", str(config)]
        + ["--out", str(tmp_path / "o2")],
    )
    assert res.exit_code == 0, res.output
    assert "warning: the configuration's scannable = true with --no-pdf" in res.output


@needs_tex
def test_file_names_reach_issues_csv_as_the_text_rule_shows_them(quiz, tmp_path):
    """Issue 33, section 5: a scan's file name with ESC, BEL or a bidi override is written
    escaped into issues.csv, and a corrections file settles it by that escaped id."""
    from PIL import Image

    from worksheetgen.textrules import first_refused

    name = "a\x1b[2Jb\x07c\u202e.png"
    scan = tmp_path / name
    Image.new("L", (850, 1100), 255).save(scan)  # a blank page: listed, already settled
    odd = tmp_path / "odd\u202e.png"
    image = Image.new("L", (850, 1100), 255)
    image.paste(0, (100, 100, 700, 900))  # ink, but no marks nor code: for a person
    image.save(odd)
    out = tmp_path / "out"
    scan_files([str(scan), str(odd)], quiz / "key.json", out)
    text = (out / "issues.csv").read_text("utf-8")
    assert [c for c in text if c != "\n" and first_refused(c)] == []
    assert "page:a\\x1b[2Jb\\x07c\\u202e.png#1" in text
    assert "page:odd\\u202e.png#1" in text
    fixes = tmp_path / "fixes.csv"
    fixes.write_text("id,value\npage:odd\\u202e.png#1,ignore\n", "utf-8")
    result = scan_files([str(scan), str(odd)], quiz / "key.json", out, str(fixes))
    assert not result.open_issues
