"""Issue 34 §2: which of a student's attempts counts follows Moodle's grading method as the
download states it.

A behaviour across modules, not one module's tests (grading.key, grading.moodle, keyjson.read)."""

from __future__ import annotations

import csv
import io

from tests.paths import MOODLE
from worksheetgen.grading.key import grade_key
from worksheetgen.grading.moodle import parse_moodle
from worksheetgen.keyjson.read import load_key

REAL = MOODLE / "real-4"


def _with_grades(grades: dict[int, str]) -> str:
    """real-4's Right-answer download with the Grade column of some rows (by row index)
    set, as Moodle writes it once the essays are marked."""
    rows = list(csv.reader(io.StringIO((REAL / "responses-right.csv").read_text("utf-8-sig"))))
    col = next(i for i, c in enumerate(rows[0]) if c.startswith("Grade/"))
    for k, text in grades.items():
        rows[k][col] = text
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def _gia(text: str):
    doc = load_key(REAL / "key.json")
    responses, _ = parse_moodle(text, doc, grade_key(doc), "r.csv")
    (line,) = [a for a in responses.attempts if "Gia" in a]
    return line


def test_highest_grade_counts_the_attempt_moodle_graded_highest():
    """Gia's second attempt is the key (grade's own score higher), but Moodle graded her
    first higher (an adaptive quiz's penalties, or a teacher's essay marks): Moodle's
    "Highest grade" counts the first, and so does grade when the download states both."""
    rows = list(csv.reader(io.StringIO((REAL / "responses-right.csv").read_text("utf-8-sig"))))
    gia = [k for k, r in enumerate(rows) if r[1] == "Gia"]
    assert len(gia) == 2
    assert "attempt 2 of 2 counts" in _gia(_with_grades({}))  # no grades stated: its scores
    assert "attempt 1 of 2 counts" in _gia(_with_grades({gia[0]: "25.00", gia[1]: "20.50"}))
    assert "attempt 2 of 2 counts" in _gia(_with_grades({gia[0]: "20.00", gia[1]: "30.00"}))
    # equal grades: the earliest, as Moodle keeps it
    assert "attempt 1 of 2 counts" in _gia(_with_grades({gia[0]: "30.00", gia[1]: "30.00"}))
