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

from worksheetgen.cli import main


@pytest.fixture(scope="module")
def key(part_points_key: Path) -> Path:
    """key.json of the three-student class (conftest.py)."""
    return part_points_key


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


def test_the_class_report_leaves_parts_still_to_mark_out_instead_of_counting_them_0(key, tmp_path):
    """s1's soft (b) (4 points) is still to mark ('?'): soft's facility is s1's 2 of 2 and
    s2's 4 of 6, not 2 of 6; each student's percent is of the points marked (the written
    keys (d), 1.5, is unmarked for both), and the mean says what it leaves out."""
    marks = {
        ("s1", "soft", "scaled"): "right",
        ("s1", "soft", "A"): "?",
        ("s2", "soft", "scaled"): "x",
        ("s2", "soft", "A"): "right",
    }
    _grade(key, _marks(key, tmp_path, marks), tmp_path / "g")
    data = tmp_path / "g" / "class-report"
    questions = _rows_by(data / "questions.csv", "question")
    assert questions["soft"]["facility"] == f"{(1 + 4 / 6) / 2:.3f}"  # 0.833, not 0.500
    assert questions["soft"]["mean"] == f"{(1 + 4 / 6) / 2 * 6:.3f}"
    parts = {
        r["answer"]: r
        for r in csv.DictReader(io.StringIO((data / "parts.csv").read_text()))
        if r["question"] == "soft"
    }
    assert parts["A"]["success"] == "1.000"  # as parts.csv always did: s2's alone
    s1, s2 = 100 * 2 / (21 - 4 - 1.5), 100 * 4 / (21 - 1.5)
    histogram = [
        int(r["students"])
        for r in csv.DictReader(io.StringIO((data / "histogram.csv").read_text()))
    ]
    assert histogram[int(s1 // 10)] + histogram[int(s2 // 10)] >= 2 and sum(histogram) == 2
    mean = f"Mean score: {(s1 + s2) / 2:.1f} % of the points marked so far (3 parts still"
    assert mean in (tmp_path / "g" / "class-report.html").read_text("utf-8")
    report = (tmp_path / "g" / "report.md").read_text("utf-8")
    assert f"so far: {(s1 + s2) / 2:.1f} % of the points marked" in report


def _rows_by(path: Path, column: str) -> dict[str, dict[str, str]]:
    return {r[column]: r for r in csv.DictReader(io.StringIO(path.read_text("utf-8")))}


def test_a_one_point_part_still_to_mark_reads_1_point(key, tmp_path):
    _grade(key, _marks(key, tmp_path, {("s1", "heads", "d_k"): "?"}), tmp_path / "g")
    report = (tmp_path / "g" / "report.md").read_text("utf-8")
    assert "- (a) `d_k`: to mark by hand (1 point): not marked yet." in report
    page = (tmp_path / "g" / "feedback" / "s1.html").read_text("utf-8")
    assert "not marked yet (1 point)." in page
