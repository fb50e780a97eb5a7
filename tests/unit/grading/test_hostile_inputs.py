"""Hostile and odd inputs on the reading side (issue 14): formula cells in every CSV written
from user data, devices and endless files, deep or broken key.json, extreme numbers in a
responses file, one verdict on a key for grade and export, unprintable ids, and report.md
escaping names as sheets.md does.

Each case must end in one line (``worksheetgen: error: file[:line]: field: expected ...``)
and exit 1, or grade as documented, never in a traceback.

A behaviour across modules, not one module's tests (errors, grading.csvcells, inputs,
textrules).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from worksheetgen.errors import GradeError
from worksheetgen.grading.csvcells import FORMULA_START, protect, unprotect
from worksheetgen.inputs import read_limited
from worksheetgen.textrules import id_problem


@pytest.mark.parametrize(
    "text",
    [
        "=1+1",
        "@SUM(1)",
        "+1",
        "-2+3",
        "\tx",
        "\rx",
        "'",
        "''=",
        "'=1",
        "'abc",
        "abc",
        "",
        "-0.5",
        "Zoë",
    ],
)
def test_protected_csv_cells_read_back_as_written(text):
    cell = protect(text)
    assert cell[:1] not in FORMULA_START
    assert unprotect(cell) == text


def test_unprotect_leaves_a_quote_protect_never_wrote():
    assert unprotect("'abc") == "'abc" and unprotect("'") == "'"


def test_a_file_longer_than_its_size_says_is_read_only_to_its_limit():
    # /proc files say they are empty and are not: the limit holds while reading, not only
    # from the size the file claims
    status = Path("/proc/self/status")
    if not status.is_file():
        pytest.skip("no /proc")
    with pytest.raises(GradeError, match=r"of at most 10 bytes, got more"):
        read_limited(status, 10, what="a file", error=GradeError)
    assert read_limited(status, 1_000_000, what="a file", error=GradeError).startswith(b"Name:")


def test_a_folder_or_a_missing_file_is_named_as_such(tmp_path):
    with pytest.raises(GradeError, match=r"expected a file, got a folder$"):
        read_limited(tmp_path, 10, what="a file", error=GradeError)
    with pytest.raises(GradeError, match=r"expected a file, got no such file$"):
        read_limited(tmp_path / "none" / "x", 10, what="a file", error=GradeError)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("s01", None),
        ("Zoë O'Brien", None),
        ("s 01", None),
        ("क्‍ष", None),
        ("", "nothing"),
        ("  ", "nothing"),
        ("abc\n", "U+000A, a control character"),
        ("q1\t", "U+0009, a control character"),
        (" q1", "white space at its start"),
        ("q1\u00a0", "white space at its end"),
        ("a\ufffe", "U+FFFE, a noncharacter"),
        ("a\uffff", "U+FFFF, a noncharacter"),
        ("a\ufdd0", "U+FDD0, a noncharacter"),
        ("a\U0001fffe", "U+1FFFE, a noncharacter"),
        ("a\u202e", "U+202E (RIGHT-TO-LEFT OVERRIDE), an invisible formatting"),
        ("a\ufeff", "U+FEFF (ZERO WIDTH NO-BREAK SPACE), an invisible formatting"),
        ("a\u2028", "U+2028 (LINE SEPARATOR), a line separator"),
        ("a\x85", "U+0085, a control character"),
        ("a\x7f", "U+007F, a control character"),
    ],
)
def test_the_id_rule(text, problem):
    got = id_problem(text)
    assert (got is None) if problem is None else (got is not None and got.startswith(problem))
