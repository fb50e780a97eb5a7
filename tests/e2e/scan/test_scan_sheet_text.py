"""What a scannable sheet's LaTeX says (no TeX runs): each score row names its part as the
sheet prints it, "(a)" (Jinja's delimiters once ate the parentheses and left "a"), and the
score table on page 1 has a row for marks only where a TA writes them there: not on a
scannable sheet (the TA marks its score boxes) nor on a booklet (--answer-sheet: the marks
are on the answer sheet)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ROOT
from worksheetgen.cli import main

QUIZ = str(ROOT / "banks" / "quiz.yaml")


def _sheet_tex(out: Path, *args: str) -> str:
    try:
        main(["build", "--seed", "3", "--bank", QUIZ, "--out", str(out), "-q", "--no-pdf", *args])
    except SystemExit as exc:
        assert exc.code in (0, None)
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return (folder / "sheet.tex").read_text("utf-8")


def test_score_rows_print_each_parts_letter_in_parentheses(tmp_path: Path) -> None:
    tex = _sheet_tex(tmp_path, "--scannable")
    letters = re.findall(r"\\wsscorepart\{([^}]*)\}", tex)
    assert letters, "no score row on the scannable sheet"
    assert all(re.fullmatch(r"\([a-z]\)", x) for x in letters), letters
    # each box's id names the part whose letter stands before it
    current = None
    boxes = 0
    for part, box in re.findall(
        r"\\wsscorepart\{\(([a-z])\)\}|\\wsscore\{\d+\.([a-z])\.s\d+\}", tex
    ):
        if part:
            current = part
        else:
            assert box == current, (box, current)
            boxes += 1
    assert boxes > len(letters)


def test_the_score_table_has_a_row_for_marks_only_on_a_plain_sheet(tmp_path: Path) -> None:
    assert "Mark\\rule" in _sheet_tex(tmp_path / "plain")
    assert "Mark\\rule" not in _sheet_tex(tmp_path / "scan", "--scannable")
    booklet = _sheet_tex(tmp_path / "booklet", "--scannable", "--answer-sheet")
    assert "Answer on your answer sheet" in booklet
    assert "Mark\\rule" not in booklet
