"""Marks per part (issue 26 §5): ``grade --template --marks`` writes one row per student and
part with the part's points, a TA types each part's points (or right/wrong) in its ``mark``
column, and ``grade`` reads those rows, mixed with per-entry answer rows in one file. Also
(issue 26 §4) numbers with their digits grouped by plain, thin or no-break spaces.

The class is tests/banks/part_points.yaml for a roster of three (points per part: soft
(a) 2 (b) 4; heads (a) 1 (b) 1 (c) 3; keys (a) 2.5 (b)-(d) 1.5, (d) written; plain 1.5 + 1.5).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from worksheetgen.cli import main
from worksheetgen.errors import GradeError
from worksheetgen.grading.key import parse_key
from worksheetgen.grading.responses import parse_responses


@pytest.fixture(scope="module")
def key(part_points_key: Path) -> Path:
    """key.json of the three-student class (conftest.py)."""
    return part_points_key


@pytest.fixture(scope="module")
def blank(key: Path, tmp_path_factory) -> str:
    """The marks template's text."""
    path = tmp_path_factory.mktemp("tpl") / "marks.csv"
    result = CliRunner().invoke(
        main, ["grade", "--key", str(key), "--template", "--marks", str(path)]
    )
    assert result.exit_code == 0, result.output
    assert "fill in the mark column" in result.output
    return path.read_text(encoding="utf-8")


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def fill(text: str, marks: dict[tuple[str, str, str], str]) -> str:
    """The template with ``marks`` (student, question, answer → mark) typed in."""
    out = io.StringIO()
    reader = csv.DictReader(io.StringIO(text))
    assert reader.fieldnames is not None
    w = csv.DictWriter(out, reader.fieldnames, lineterminator="\n")
    w.writeheader()
    for row in reader:
        row["mark"] = marks.pop((row["student"], row["question"], row["answer"]), "")
        w.writerow(row)
    assert not marks, f"no template row for {marks}"
    return out.getvalue()


def run(key: Path, text: str, tmp_path: Path):
    resp = tmp_path / "marks.csv"
    resp.write_text(text, encoding="utf-8")
    out = tmp_path / "graded"
    result = CliRunner().invoke(main, ["grade", "--key", str(key), str(resp), "--out", str(out)])
    return result, out


def scores(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "scores.csv", encoding="utf-8", newline="") as fh:
        return {r["student"]: r for r in csv.DictReader(fh)}


def test_the_marks_template_has_a_row_per_student_and_part_with_its_points(key, blank):
    rows = rows_of(blank)
    assert list(rows[0]) == [
        "student",
        "name",
        "question",
        "answer",
        "entry",
        "value",
        "mark",
        "max",
        "part",
    ]
    assert len(rows) == 3 * 11  # 11 parts each, not one row per table entry
    s1 = [(r["question"], r["answer"], r["max"], r["part"]) for r in rows if r["student"] == "s1"]
    assert s1[:5] == [
        ("soft", "scaled", "2", "(a)"),
        ("soft", "A", "4", "(b)"),
        ("heads", "d_k", "1", "(a)"),
        ("heads", "concat_width", "1", "(b)"),
        ("heads", "W_O_shape", "3", "(c)"),
    ]
    assert ("keys", "scores", "2.5", "(a)") in s1
    assert all(r["mark"] == r["entry"] == r["value"] == "" for r in rows)
    assert sum(float(r["max"]) for r in rows if r["student"] == "s1") == 21


def test_marks_grade_to_the_points_typed(key, blank, tmp_path):
    every = {(r["question"], r["answer"]) for r in rows_of(blank) if r["student"] == "s1"}
    marks = {("s1", q, a): "✓" for q, a in every}  # all right
    marks |= {
        ("s2", "soft", "scaled"): "1.5",
        ("s2", "soft", "A"): "x",
        ("s2", "heads", "d_k"): "r",
        ("s2", "heads", "concat_width"): "W",
        ("s2", "heads", "W_O_shape"): "3/2",
        ("s2", "keys", "explain"): "1",  # the written part, marked by hand
        ("s2", "plain", "A"): "right",
    }
    result, out = run(key, fill(blank, marks), tmp_path)
    assert result.exit_code == 0, result.output
    got = scores(out)
    assert (got["s1"]["total"], got["s1"]["max"]) == ("21", "21")
    # 1.5 + 0 + 1 + 0 + 1.5 + 1 + 1.5
    assert got["s2"]["total"] == "6.5"
    assert (got["s2"]["soft"], got["s2"]["heads"], got["s2"]["keys"]) == ("1.5", "2.5", "1")
    # s3 has no mark at all: no total (nothing marked is no 0), nothing to mark by hand
    assert (got["s3"]["total"], got["s3"]["max"]) == ("", "21")
    # a marked written part is no longer to grade by hand; s2's parts left blank in the
    # template are still to mark (keys (a) 2.5, (b) and (c) 1.5 each, plain (a) 1.5), not 0
    assert (got["s1"]["ungraded"], got["s2"]["ungraded"]) == ("0", "7")
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "- (a) `scaled`: marked by hand (1.5/2)." in report
    assert "- (b) `A`: marked by hand (0/4)." in report
    assert "- (d) `explain`: marked by hand (1/1.5)." in report
    s2 = report[report.index("## s2") : report.index("## s3")]
    assert "## s2 (Bo): 6.5 / 21 (+ 7 to grade by hand)" in s2
    assert s2.count("not marked yet") == 4
    assert "Reproduced by" not in report and "No slip" not in report
    assert "No responses from: s3; no total in scores.csv" in report


def _cells(sid: str, qid: str, name: str, grid: list) -> list[str]:
    return [
        f'{sid},,{qid},{name},"{r},{c}",{v}'
        for r, row in enumerate(grid, 1)
        for c, v in enumerate(row, 1)
    ]


def test_answer_rows_and_mark_rows_in_one_file_a_mark_overriding_its_cells(key, blank, tmp_path):
    sheets = {s["id"]: s for s in json.loads(key.read_text(encoding="utf-8"))["sheets"]}
    soft = {q["id"]: q for q in sheets["s3"]["questions"]}["soft"]
    zeros = [["0" for _ in row] for row in soft["rounded"]["A"]]
    text = fill(blank, {("s3", "soft", "A"): "✓", ("s3", "heads", "d_k"): "0"})
    text += "\n".join(
        [
            *_cells("s3", "soft", "scaled", soft["rounded"]["scaled"]),  # right: 2
            *_cells("s3", "soft", "A", zeros),  # wrong, but marked 4 above
            "s3,,plain,scaled,,",  # a blank answer row
        ]
    )
    result, out = run(key, text + "\n", tmp_path)
    assert result.exit_code == 0, result.output
    got = scores(out)["s3"]
    assert (got["soft"], got["heads"], got["total"]) == ("6", "0", "6")
    report = (out / "report.md").read_text(encoding="utf-8")
    s3 = report[report.index("## s3") :]
    assert "- (a) `scaled`: right (2/2)." in s3
    assert "- (b) `A`: marked by hand (4/4)." in s3


@pytest.mark.parametrize(
    ("mark", "says"),
    [
        ("2.5", "mark: expected points from 0 to 2 (or ✓/x, right/wrong, r/w), got '2.5'"),
        ("-1", "mark: expected points from 0 to 2"),
        ("half", "mark: expected points from 0 to 2 (or ✓/x, right/wrong, r/w), got 'half'"),
        ("1,5", "mark: expected points from 0 to 2 (or ✓/x, right/wrong, r/w), got '1,5'"),
        ("1e999", "mark: expected a number a float can hold"),
    ],
)
def test_a_bad_mark_is_one_line_with_its_file_and_line(key, blank, tmp_path, mark, says):
    text = fill(blank, {("s1", "soft", "A"): "4", ("s2", "soft", "scaled"): mark})
    result, out = run(key, text, tmp_path)
    assert result.exit_code != 0
    line = 2 + 11  # the header, s1's 11 parts, then s2's first
    assert f"marks.csv:{line}: {says}" in result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert not out.exists()  # nothing written


def test_a_mark_on_an_entry_row_or_twice_is_refused(key, blank, tmp_path):
    text = fill(blank, {("s1", "soft", "A"): "4"})
    result, _ = run(key, text + 's1,,soft,A,"1,1",,2\n', tmp_path)
    assert result.exit_code != 0
    assert "marks.csv:35: entry: expected an empty entry on a row with a mark" in result.output
    result, _ = run(key, text + "s1,,soft,A,,,3\n", tmp_path)
    assert (
        "marks.csv:35: mark: expected one mark per student, question and answer, got a "
        "second for s1/soft/A (first on line 3)" in result.output
    )


def test_marks_without_template_is_a_usage_error(key, tmp_path):
    result = CliRunner().invoke(main, ["grade", "--key", str(key), "--marks", str(tmp_path / "x")])
    assert result.exit_code == 2 and "use it with --template" in result.output


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
