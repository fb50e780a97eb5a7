"""A class whose sheets print a decimal comma (``build --language de``, or ``--decimal
comma``): grade reads the students' 0,25 from its key (key.json's ``decimal``), still reads
0.25, and never reads 1.234,5 or 1,234,567 as a number with thousands; a key printed with a
point reads 0,25 as before (refused, with a hint).

A behaviour across modules, not one module's tests (errors, grading.key, grading.moodle,
grading.responses, grading.score, keyjson.read)."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from tests.paths import MOODLE
from worksheetgen.errors import GradeError
from worksheetgen.grading.key import grade_key
from worksheetgen.grading.moodle import parse_moodle_rows
from worksheetgen.grading.responses import _parse_number, _records
from worksheetgen.grading.score import grade
from worksheetgen.keyjson.read import parse_key, read_key_data


def test_the_rule_for_a_comma_key_and_for_a_point_key():
    assert _parse_number("0,25", comma=True) == 0.25
    assert _parse_number("0.25", comma=True) == 0.25
    assert _parse_number("\u22121,5", comma=True) == -1.5
    assert _parse_number("1,234", comma=True) == 1.234  # a decimal comma, never a thousand
    assert _parse_number("1 234,5", comma=True) == 1234.5  # digits grouped by spaces
    for two in ("1.234,5", "1,234.5", "1,234,567", "1.234.567"):
        assert _parse_number(two, comma=True) is None, two
    # a key printed with a point: 0,25 is no number, as before (grade says to use a point)
    assert _parse_number("0,25") is None
    assert _parse_number("1,234") is None


#: a number of a Responses or Right answer cell with its decimal point
_POINT_NUMBER = re.compile(r"(?<=[0-9])\.(?=[0-9])")


def _moodle_graded(doc, rows) -> dict[str, Fraction]:
    responses, graded_key = parse_moodle_rows(rows, doc, grade_key(doc), "responses.csv")
    result = grade(graded_key, responses)
    return {s.student: s.earned for s in result.students}


def test_a_moodle_download_in_a_language_with_a_decimal_comma_grades_as_with_points():
    """A course Moodle shows in German (its language pack's decsep ","): the students type
    0,88, Moodle reads it so (qtype_numerical_answer_processor::apply_units) and its Right
    answer column says 0,88 too (get_correct_response writes the decsep). The real download
    of tests/fixtures/moodle/real-2/default with its numbers so written grades as it did,
    from a key that says ``decimal: ","``; a key printed with a point does not read it."""
    folder = MOODLE / "real-2" / "default"
    data = read_key_data(folder / "key.json")
    rows = list(_records((folder / "responses-right.csv").read_text("utf-8-sig"), "r.csv"))
    header = rows[0][1]
    numeric = [i for i, c in enumerate(header) if c.startswith(("Response ", "Right answer "))]
    commas = [
        (line, [_POINT_NUMBER.sub(",", c) if i in numeric else c for i, c in enumerate(r)])
        for line, r in rows
    ]
    assert sum(c.count(",") for _, r in commas[1:] for c in r) > 50
    before = _moodle_graded(parse_key(data, "key.json"), rows)
    assert any(before.values())
    comma_doc = parse_key({**data, "decimal": ","}, "key.json")
    assert _moodle_graded(comma_doc, commas) == before
    with pytest.raises(GradeError, match="expected the right answer of a version"):
        _moodle_graded(parse_key(data, "key.json"), commas)


def test_a_mark_of_points_is_read_with_a_comma_from_a_comma_key():
    """A TA's mark (grade's mark column, scan's corrections) of a comma key may say 1,5
    points; a point key reads 1,5 as no mark, as before."""
    from worksheetgen.grading.responses import _RowError, parse_mark

    assert parse_mark("1,5", Fraction(2), comma=True) == Fraction(3, 2)
    assert parse_mark("1.5", Fraction(2), comma=True) == Fraction(3, 2)
    for bad in ("1.234,5", "2,5"):  # two separators; more than the part's points
        with pytest.raises(_RowError):
            parse_mark(bad, Fraction(2), comma=True)
    with pytest.raises(_RowError):
        parse_mark("1,5", Fraction(2))
