"""A whole class on paper: every bundled bank (and a pooled, shuffled quiz with per-part
points) built for 30 students with long, accented, Greek and CJK names, on A4 and on Letter.
Every sheet's code is in every table of the TA's answer grid that should hold it, and no word
of any PDF (sheets, keys, grid) lies past the edge of its page."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import pagewords, paths
from worksheetgen.pipeline.build import BuildOptions, build
from worksheetgen.resources import data_dir

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="TeX is not installed")
needs_poppler = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="no pdftotext")

FIXTURES = paths.FIXTURES
#: 30 students: four names of 200 characters (words; one unbroken word; CJK; Greek), a
#: 64-character id, accented, Greek, Cyrillic, CJK, Korean and TeX-special names
ROSTER = FIXTURES / "roster-hard.csv"
BANKS = sorted(p.name for p in data_dir("banks").glob("*.yaml"))
#: a graded quiz: pools, shuffled order, per-part points (a Moodle check's bank)
QUIZ = FIXTURES / "quiz-pool.yaml"
#: a twelve-question midterm unlike the bundled banks (pools, shuffle, points, math in the title)
MIDTERM = FIXTURES / "midterm.yaml"
#: a course name as long as a real one, which the running head must not run into the title
COURSE = "Department of Computer Science and Engineering: CS 4780/5780 Machine Learning (Sec. 2)"

_PAGE = re.compile(r'<page width="([\d.]+)" height="([\d.]+)">')
_WORD = re.compile(
    r'<word xMin="(-?[\d.]+)" yMin="(-?[\d.]+)" xMax="(-?[\d.]+)" yMax="(-?[\d.]+)">(.*?)</word>'
)


def off_page(pdf: Path) -> list[str]:
    """Every word of ``pdf`` that lies (partly) past an edge of its page, said with its page."""
    out = subprocess.run(
        ["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    bad = []
    for number, page in enumerate(out.split("<page ")[1:], 1):
        size = _PAGE.match("<page " + page)
        assert size is not None, f"{pdf.name}: page {number} without a size"
        width, height = float(size.group(1)), float(size.group(2))
        for x0, y0, x1, y1, word in _WORD.findall(page):
            if float(x0) < 0 or float(y0) < 0 or float(x1) > width or float(y1) > height:
                bad.append(
                    f"{pdf.name} p{number}: {html.unescape(word)!r} at x {x0}-{x1}, y {y0}-{y1}"
                )
    return bad


def grid_sections(text: str, qids: list[str]) -> dict[str, str]:
    """The grid PDF's text of each question (in the grid's order): from the heading line that
    ends in the question's id to the next one."""
    lines = text.splitlines()
    starts = []
    at = 0
    for qid in qids:
        found = next(
            (i for i in range(at, len(lines)) if re.search(rf"(^|\s){re.escape(qid)}$", lines[i])),
            None,
        )
        assert found is not None, f"no heading for question {qid} in the grid PDF"
        starts.append(found)
        at = found + 1
    ends = starts[1:] + [len(lines)]
    return {q: "\n".join(lines[s:e]) for q, s, e in zip(qids, starts, ends, strict=True)}


def check_class(folder: Path) -> None:
    """The grid PDF has every sheet's code in each question's table that should hold it (the
    sheets that got the question), and no PDF of the folder has a word past a page's edge."""
    key = json.loads((folder / "key.json").read_text("utf-8"))
    order: dict[str, list[str]] = {}  # question id -> codes of the sheets that have it
    for sheet in key["sheets"]:
        for q in sheet["questions"]:
            order.setdefault(q["id"], []).append(sheet["code"])
    text = subprocess.run(
        ["pdftotext", "-raw", str(folder / "keys-grid.pdf"), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    sections = grid_sections(text, list(order))
    missing = [
        f"{qid}: {code}"
        for qid, codes in order.items()
        for code in codes
        if code not in sections[qid]
    ]
    assert not missing, f"{len(missing)} sheet codes missing from the grid PDF: {missing[:10]}"
    pdfs = sorted(folder.glob("*.pdf")) + sorted((folder / "students").glob("*.pdf"))[:1]
    assert len(pdfs) >= 4
    bad = [w for pdf in pdfs for w in off_page(pdf)]
    assert not bad, f"{len(bad)} words past a page's edge: {bad[:10]}"
    bad = [w for pdf in pdfs for w in pagewords.faults(pdf)]
    assert not bad, f"{len(bad)} words over each other or within 1.2 cm of an edge: {bad[:10]}"


@needs_tex
@needs_poppler
@pytest.mark.slow
@pytest.mark.parametrize("paper", ["a4", "letter"])
@pytest.mark.parametrize("bank", [*BANKS, "quiz-pool", "midterm"])
def test_a_whole_class_is_on_the_page_and_in_the_grid(tmp_path, monkeypatch, bank, paper):
    path = {"quiz-pool": QUIZ, "midterm": MIDTERM}.get(bank, data_dir("banks") / bank)
    result = _built_class(tmp_path, monkeypatch, path, paper)
    assert "keys-grid.pdf" in result.files
    check_class(result.folder)


def _built_class(tmp_path, monkeypatch, path, paper, **options):
    """The 30-student class of a bank, with the hard roster and a long course name."""
    from worksheetgen.tex import run as tex

    # what is checked here is the pages, not the time: on a loaded machine the whole note
    # with LuaLaTeX can take longer than TeX's limit for 30 sheets (about 3 minutes)
    monkeypatch.setattr(tex, "TEX_TIMEOUT_SECONDS", 900)
    return build(
        BuildOptions(
            seed=7,
            banks=(str(path),),
            out=str(tmp_path),
            roster=str(ROSTER),
            paper=paper,
            course=COURSE,
            **options,
        )
    )


@needs_tex
@needs_poppler
@pytest.mark.slow
@pytest.mark.parametrize("paper", ["a4", "letter"])
@pytest.mark.parametrize("bank", ["quiz.yaml", "midterm"])
def test_a_scannable_class_is_on_the_page_and_in_the_grid(tmp_path, monkeypatch, bank, paper):
    """As above with --scannable: the score boxes beside a table or under a question, the
    option boxes and the page code print over no word and within the page."""
    path = MIDTERM if bank == "midterm" else data_dir("banks") / bank
    result = _built_class(tmp_path, monkeypatch, path, paper, scannable=True)
    assert "scan.json" in result.files
    check_class(result.folder)
