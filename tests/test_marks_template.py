"""Marks per part (issue 26 §5): ``grade --template --marks`` writes one row per student and
part with the part's points, a TA types each part's points (or right/wrong) in its ``mark``
column, and ``grade`` reads those rows, mixed with per-entry answer rows in one file. Also
(issue 26 §4) numbers with their digits grouped by plain, thin or no-break spaces.

The class is tests/banks/part_points.yaml for a roster of three (points per part: soft
(a) 2 (b) 4; heads (a) 1 (b) 1 (c) 3; keys (a) 2.5 (b)-(d) 1.5, (d) written; plain 1.5 + 1.5).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import FIXTURES
from worksheetgen.cli import main
from worksheetgen.errors import GradeError
from worksheetgen.grading.key import parse_key
from worksheetgen.grading.responses import parse_responses

BANK = FIXTURES / "part_points.yaml"


@pytest.fixture(scope="module")
def key(tmp_path_factory) -> Path:
    """key.json of the three-student class (built without PDFs)."""
    tmp = tmp_path_factory.mktemp("class")
    roster = tmp / "roster.csv"
    roster.write_text("name,id\nAda,s1\nBo,s2\nCy,s3\n", encoding="utf-8")
    args = ["build", "--bank", str(BANK), "--seed", "1", "--roster", str(roster)]
    result = CliRunner().invoke(main, [*args, "--no-pdf", "--out", str(tmp / "o"), "-q"])
    assert result.exit_code == 0, result.output
    (path,) = (tmp / "o").glob("*/key.json")
    return path


# ------------------------------------------------------------------ grouped digits (§4)


@pytest.mark.parametrize(
    ("typed", "value"),
    [
        ("2 359 296", 2359296.0),
        ("2\u2009359\u2009296", 2359296.0),  # thin space
        ("2\u202f359\u202f296", 2359296.0),  # narrow no-break space
        ("2\u00a0359\u00a0296", 2359296.0),  # no-break space
        ("-1 000.5", -1000.5),
        ("0.123 45", 0.12345),
        ("2359296", 2359296.0),
    ],
)
def test_grade_reads_digits_grouped_by_spaces(key, typed, value):
    k = parse_key(json.loads(key.read_text(encoding="utf-8")), "key.json")
    text = f"student,question,answer,entry,value\ns1,heads,d_k,,{typed}\n"
    (s1,) = [s for s in parse_responses(text, k, "r.csv").students if s.student == "s1"]
    assert s1.cells["heads"]["d_k"][(0, 0)].value == value


@pytest.mark.parametrize("typed", ["12 34", "1 2345", "1  000", "1 000 0"])
def test_digits_not_in_groups_of_three_are_no_number(key, typed):
    k = parse_key(json.loads(key.read_text(encoding="utf-8")), "key.json")
    text = f"student,question,answer,entry,value\ns1,heads,d_k,,{typed}\n"
    with pytest.raises(GradeError, match="expected a number like 0.73"):
        parse_responses(text, k, "r.csv")
