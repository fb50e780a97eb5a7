"""What a person has not marked is never a zero by default (issue 32 §3): a student with no
responses gets no total and no feedback page unless the instructor asks for zeros
(``--absent zero``); the class report leaves parts still to mark out of every number
instead of counting them 0 points.

The class is tests/banks/part_points.yaml for a roster of three (points per part: soft
(a) 2 (b) 4; heads (a) 1 (b) 1 (c) 3; keys (a) 2.5 (b)-(d) 1.5, (d) written; plain 1.5 + 1.5).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import FIXTURES
from worksheetgen.cli import main

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


def _marks(key: Path, tmp_path: Path, marks: dict[tuple[str, str, str], str]) -> Path:
    """A marks file with ``marks`` (student, question, answer → mark) and nothing else."""
    path = tmp_path / "marks.csv"
    lines = ["student,question,answer,entry,value,mark"]
    lines += [f"{s},{q},{a},,,{m}" for (s, q, a), m in marks.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _grade(key: Path, responses: Path, out: Path, *args: str) -> None:
    result = CliRunner().invoke(
        main, ["grade", "--key", str(key), str(responses), "--out", str(out), *args]
    )
    assert result.exit_code == 0, result.output


def _rows(path: Path) -> dict[str, dict[str, str]]:
    return {r["student"]: r for r in csv.DictReader(io.StringIO(path.read_text("utf-8")))}


ALL_RIGHT = {
    ("s1", q, a): "right"
    for q, a in [
        ("soft", "scaled"),
        ("soft", "A"),
        ("heads", "d_k"),
        ("heads", "concat_width"),
        ("heads", "W_O_shape"),
        ("plain", "scaled"),
        ("plain", "A"),
    ]
}


def test_a_student_with_no_responses_gets_no_total_and_no_feedback_page(key, tmp_path):
    _grade(key, _marks(key, tmp_path, ALL_RIGHT), tmp_path / "g")
    rows = _rows(tmp_path / "g" / "scores.csv")
    for sid in ("s2", "s3"):
        row = rows[sid]
        assert row["total"] == "" and row["max"] == "21", row
        assert all(row[q] == "" for q in ("soft", "heads", "keys", "plain")), row
        assert row.get("ungraded", "") == ""
    assert rows["s1"]["total"] == "14"
    feedback = sorted(p.name for p in (tmp_path / "g" / "feedback").iterdir())
    assert feedback == ["s1.html", "s1.pdf"]
    report = (tmp_path / "g" / "report.md").read_text("utf-8")
    assert "## s2 (Bo): no responses, no total (of 21)" in report
    assert "to grade by hand" not in report.split("## s2")[1]


def test_absent_zero_records_zeros_and_says_so(key, tmp_path):
    _grade(key, _marks(key, tmp_path, ALL_RIGHT), tmp_path / "g", "--absent", "zero")
    rows = _rows(tmp_path / "g" / "scores.csv")
    assert (rows["s2"]["total"], rows["s2"]["max"]) == ("0", "21")
    assert rows["s2"]["soft"] == "0"
    page = (tmp_path / "g" / "feedback" / "s2.html").read_text("utf-8")
    assert "Score: 0 / 21" in page and "No answers were handed in: counted as 0." in page
    assert "(+ " not in page  # nothing "to be marked by hand" for an empty sheet
    report = (tmp_path / "g" / "report.md").read_text("utf-8")
    assert "No responses from: s2, s3; counted as 0 (--absent zero)." in report
