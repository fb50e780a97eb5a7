"""grade and a real Moodle download of a quiz from today's pooled export (issue 22 §2): a pool
of pick 2 or more is one question per sheet holding that sheet's picks, so the download has
one Response column for it, its gaps numbered through the picks in the sheet's order.
tests/fixtures/moodle/real-3/ holds the download (its README says how it was made; what
Moodle drew and each student typed is in attempts.json).

A behaviour across modules, not one module's tests (errors, grading.key, grading.moodle,
grading.responses, grading.score, grading.spreadsheet, keyjson.read)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.paths import MOODLE
from worksheetgen.errors import GradeError
from worksheetgen.grading.key import grade_key
from worksheetgen.grading.moodle import parse_moodle_rows
from worksheetgen.grading.responses import _records
from worksheetgen.grading.score import grade
from worksheetgen.grading.spreadsheet import read_rows
from worksheetgen.keyjson.read import load_key

REAL = MOODLE / "real-3"


KEY = REAL / "key.json"


DOWNLOADS = ["responses-right.csv", "responses-right.xlsx", "responses-right.ods"]


def _rows(path: Path) -> list[tuple[int, list[str]]]:
    if path.suffix in (".xlsx", ".ods"):
        return read_rows(path, str(path))
    return list(_records(path.read_bytes().decode("utf-8-sig"), str(path)))


def _attempts() -> list[dict]:
    return json.loads((REAL / "attempts.json").read_text("utf-8"))["attempts"]


def _picks(key: dict, sheet: str) -> list[str]:
    """The questions sheet ``sheet`` printed from pool ``shapes``, in its order."""
    got = next(s for s in key["sheets"] if s["id"] == sheet)
    return [q["id"] for q in got["questions"] if q.get("slot") == "shapes"]


@pytest.mark.parametrize("name", DOWNLOADS)
def test_a_download_of_the_pooled_quiz_is_read_with_the_sheet_each_student_drew(name):
    doc = load_key(KEY)
    key = json.loads(KEY.read_text("utf-8"))
    responses, graded_key = parse_moodle_rows(_rows(REAL / name), doc, grade_key(doc), name)
    assert responses.against_pool == ()
    assert responses.in_progress == ("finn.olsen@example.com (Finn Olsen)",)
    counted = {}  # the attempt that counts (Highest grade: Gia's second)
    for a in _attempts():
        if a["state"] == "finished":
            best = counted.get(a["name"])
            if best is None or float(a["sumgrades"]) > float(best["sumgrades"]):
                counted[a["name"]] = a
    assert sorted(s.name for s in graded_key.sheets) == sorted(counted)
    for sheet in graded_key.sheets:
        drawn = counted[sheet.name]["drawn"]
        m = re.fullmatch(r"5\. shapes \[(\w)\]", drawn["5"])
        assert m, drawn
        picks = [(q.id, q.version) for q in sheet.questions if q.number == 5]
        # the two questions that sheet printed in the pool, in its order, its version
        assert picks == [(qid, m.group(1)) for qid in _picks(key, m.group(1))]
        # the other slots: the question drawn (a concept question's versions ask the same,
        # so its version is the first of those with the same right answer)
        others = {q.id for q in sheet.questions if q.number != 5}
        assert others == {
            re.sub(r"^\d+\. (\S+) \[\w\]$", r"\1", q) for s, q in drawn.items() if s != "5"
        }


def test_the_question_text_tells_the_sheet_of_a_pooled_slot_and_ties_that_change_no_score_pass():
    """Without the Right answer columns the pooled slot (5) is told by its text. The concept
    questions (6 to 8) read the same in every version (they state no numbers): which version
    Moodle drew changes no score there, so the download is graded (it was refused at line 2,
    issue 34 §2), every student as from the Right-answer download."""
    doc = load_key(KEY)
    by_text = grade(
        *_swap(parse_moodle_rows(_rows(REAL / "responses-qtext.csv"), doc, grade_key(doc), "q.csv"))
    )
    by_right = grade(
        *_swap(parse_moodle_rows(_rows(REAL / "responses-right.csv"), doc, grade_key(doc), "r.csv"))
    )
    assert len(by_text.students) == len(by_right.students) >= 7
    right = {s.student: s for s in by_right.students}
    for s in by_text.students:
        assert s.earned == right[s.student].earned, s.student
        assert [q.id for q in s.questions] == [q.id for q in right[s.student].questions]
        # the pooled slot's sheet is told by its numbers: the same as the Right answer says
        assert [q.version for q in s.questions if q.number == 5] == [
            q.version for q in right[s.student].questions if q.number == 5
        ]


def test_a_question_text_tie_that_changes_a_score_is_still_refused():
    """Two versions whose texts fit alike but whose keys differ cannot be graded from the
    text: refused with the line, as before."""
    doc = load_key(KEY)
    rows = _rows(REAL / "responses-qtext.csv")
    column = [c.strip() for c in rows[0][1]].index("Question 1")
    line, first = rows[1]
    first[column] = "Compute the scaled scores"  # no number: every version fits alike
    with pytest.raises(GradeError) as info:
        parse_moodle_rows(rows, doc, grade_key(doc), "q.csv")
    assert f"q.csv:{line}: Question 1: expected the question text of one version" in str(info.value)


def _swap(pair):
    responses, key = pair
    return key, responses


def test_a_pooled_right_answer_of_no_sheet_is_refused_with_its_line():
    rows = _rows(REAL / "responses-right.csv")
    column = [c.strip() for c in rows[0][1]].index("Right answer 5")
    line, first = rows[1]
    assert first[column].startswith("part 1: ") and "; part 2: " in first[column]
    first[column] += "0"  # the last gap's right answer of no sheet
    doc = load_key(KEY)
    with pytest.raises(GradeError) as info:
        parse_moodle_rows(rows, doc, grade_key(doc), "r.csv")
    message = str(info.value)
    assert f"r.csv:{line}: Right answer 5: expected the right answer of a version (A/B/C/D)" in (
        message
    )
