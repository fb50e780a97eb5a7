"""The exam layout of a graded paper quiz (issue 26, section 3), checked in the PDFs' text.

One class build of the bundled quiz (banks/quiz.yaml) for the 30 students of the golden
roster (long, accented, Greek and CJK names) on US Letter: page 1 of each sheet has the score
table, every page says "Page x of y" (y per student) with the student's name and sheet
code, each sheet fits in five pages, options carry the letters grading reads, a part is
never a page away from its question's data, each student's PDF has an even number of pages
(the next starts on an odd page) and the class PDF is in roster order.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, needs_tex
from worksheetgen.cli import main

pytestmark = [needs_tex, pytest.mark.slow]

ROSTER = ROOT / "tests" / "golden" / "roster.csv"
PAGE = re.compile(r"Page (\d+) of (\d+)")


def _pages(pdf: Path) -> list[str]:
    """The text of each page of a PDF (pdftotext -layout), in order."""
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    return text.split("\f")[:-1]


@pytest.fixture(scope="module")
def quiz(tmp_path_factory) -> Path:
    if shutil.which("pdftotext") is None:
        pytest.skip("Poppler's pdftotext is not installed")
    from click.testing import CliRunner

    out = tmp_path_factory.mktemp("exam")
    args = ["build", "--bank", str(ROOT / "banks" / "quiz.yaml"), "--seed", "42"]
    args += ["--roster", str(ROSTER), "--paper", "letter", "--out", str(out), "-q"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    (folder,) = out.iterdir()
    return folder


@pytest.fixture(scope="module")
def key(quiz: Path) -> dict:
    return json.loads((quiz / "key.json").read_text(encoding="utf-8"))


def _sheet_pdf(quiz: Path, sheet: dict, kind: str = "sheet") -> Path:
    (pdf,) = (quiz / "students").glob(f"{sheet['id']}-{kind}.pdf")
    return pdf


def _number(points: float) -> str:
    return f"{points:g}"


def test_page_one_has_the_score_table_with_each_questions_points_and_the_total(quiz, key):
    for sheet in key["sheets"]:
        first = _pages(_sheet_pdf(quiz, sheet))[0]
        questions = sorted(sheet["questions"], key=lambda q: q["number"])
        numbers = " ".join(str(q["number"]) for q in questions)
        points = [_number(q["points"]) for q in questions]
        total = _number(sum(q["points"] for q in questions))
        rows: dict[str, list[str]] = {}
        for line in first.splitlines():
            if line.split():
                rows.setdefault(line.split()[0], line.split()[1:])
        assert " ".join(rows["Question"]) == f"{numbers} Total", sheet["id"]
        assert rows["Points"] == [*points, total], sheet["id"]
        assert rows["Mark"] == [], sheet["id"]  # the boxes to write the marks in are empty
        assert total == "35"


def test_every_page_says_page_x_of_y_per_student_with_the_name_and_sheet_code(quiz, key):
    for sheet in key["sheets"]:
        for kind in ("sheet", "key"):
            pages = [p for p in _pages(_sheet_pdf(quiz, sheet, kind)) if p.strip()]
            seen = []
            for text in pages:
                (found,) = PAGE.findall(text)
                seen.append((int(found[0]), int(found[1])))
                footer = next(line for line in text.splitlines() if PAGE.search(line))
                assert f"sheet code {sheet['code']}" in footer, (sheet["id"], kind, footer)
            assert seen == [(i, len(pages)) for i in range(1, len(pages) + 1)], (sheet["id"], kind)


def test_each_students_sheet_fits_in_five_letter_pages(quiz, key):
    counts = {}
    for sheet in key["sheets"]:
        pages = [p for p in _pages(_sheet_pdf(quiz, sheet)) if p.strip()]
        counts[sheet["id"]] = len(pages)
    assert max(counts.values()) <= 5, counts


def test_each_students_pdf_has_an_even_number_of_pages_for_duplex_printing(quiz, key):
    for sheet in key["sheets"]:
        for kind in ("sheet", "key"):
            pages = _pages(_sheet_pdf(quiz, sheet, kind))
            assert len(pages) % 2 == 0, (sheet["id"], kind, len(pages))
            # a blank back is the only page without a footer
            assert all(p.strip() for p in pages[:-1])


def test_the_class_pdf_prints_the_sheets_in_roster_order(quiz, key):
    roster = [line.split(",")[-1].strip() for line in ROSTER.read_text().splitlines()[1:]]
    assert [s["id"] for s in key["sheets"]] == roster
    codes = []
    for text in _pages(quiz / "sheets.pdf"):
        m = re.search(r"sheet code (\w{4}-\w{4})\s+Page 1 of", text)
        if m:
            codes.append(m.group(1))
    assert codes == [s["code"] for s in key["sheets"]]


def test_options_carry_the_letters_grading_reads_in_the_order_printed(quiz, key):
    """Grading takes a letter as the option printed at that place (A the first): the sheet
    prints each pick-one option after its letter, in key.json's order."""
    checked = 0
    for sheet in key["sheets"][:6]:
        text = re.sub(r"\s+", " ", "\n".join(_pages(_sheet_pdf(quiz, sheet))))
        for q in sheet["questions"]:
            for options in q["options"].values():
                if q["format"] == "choice":
                    continue  # multiple choice: its own lettered options (key.json's choices)
                for letter, option in zip("ABCDEFGH"[: len(options)], options, strict=True):
                    words = " ".join(option.split()[:3])
                    assert f"{letter} {words}" in text, (sheet["id"], q["id"], letter, option)
                    checked += 1
    assert checked >= 6 * 3 * 4


def test_a_part_is_never_a_page_away_from_its_questions_data(quiz, key):
    """A part on a page without its question's heading follows the question's data again, or
    a heading that names the page the data is on (where the question broke right after its
    opening, or its data is too tall to print twice: docs/guide/course.md)."""
    for sheet in key["sheets"]:
        current = at = None
        for page, text in enumerate(_pages(_sheet_pdf(quiz, sheet)), 1):
            headed = re.findall(r"Question (\d+)\.", text)
            again = re.search(r"Question (\d+), continued; its data again", text)
            named = re.search(r"Question (\d+), continued; its data is on page (\d+)", text)
            first_part = re.search(r"^\s*\(([a-z])\)", text, re.M)
            if first_part and (
                not headed or text.index(first_part.group(0)) < text.index(f"Question {headed[0]}.")
            ):
                if named:
                    assert (int(named.group(1)), int(named.group(2))) == (current, at), (
                        sheet["id"],
                        text[:300],
                    )
                else:
                    assert again and int(again.group(1)) == current, (sheet["id"], text[:300])
            if headed:
                current, at = int(headed[-1]), page


@needs_tex
def test_a_200_character_cjk_name_leaves_the_sheet_in_five_pages(tmp_path):
    """roster-hard's third student (200 CJK characters) once had the name twice on page 1,
    the second time in a half-width field of 13 lines, and a sixth page; the name now takes
    the whole line under the title, once."""
    if shutil.which("pdftotext") is None:
        pytest.skip("Poppler's pdftotext is not installed")
    from click.testing import CliRunner

    rows = (ROOT / "tests" / "fixtures" / "roster-hard.csv").read_text(encoding="utf-8")
    header, *students = rows.splitlines()
    (name, sid) = next(csv.reader([students[2]]))
    assert len(name) >= 200 and sid == "s03"
    roster = tmp_path / "roster.csv"
    roster.write_text(f"{header}\n{students[2]}\n", encoding="utf-8")
    args = ["build", "--bank", str(ROOT / "banks" / "quiz.yaml"), "--seed", "7", "--shuffle"]
    args += ["--roster", str(roster), "--paper", "letter", "--out", str(tmp_path / "o"), "-q"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    (pdf,) = (tmp_path / "o").glob("*/students/s03-sheet.pdf")
    pages = [p for p in _pages(pdf) if p.strip()]
    assert len(pages) <= 5
    first = re.sub(r"\s+", "", pages[0])
    assert first.count(name) == 1
