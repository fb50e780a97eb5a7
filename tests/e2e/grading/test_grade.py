"""Grading responses against a real key.json: scores, partial and carried-forward credit,
the slip behind each wrong answer, and clear errors for bad response files.

The key comes from the pipeline (banks/practice.yaml pins the note's numbers); every value a
student "writes" below is typed from the note or computed by hand, never read from the key.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.oracles import softmax
from worksheetgen.cli import main
from worksheetgen.errors import GradeError, KeyFileError
from worksheetgen.grading.key import load_key, parse_key
from worksheetgen.grading.responses import parse_responses
from worksheetgen.grading.score import grade
from worksheetgen.report.grade import points_text

E = math.e


# softmax([1, 0]) = e / (1 + e), by hand
P73, P27 = E / (1 + E), 1 / (1 + E)


HEADER = "student,question,answer,entry,value\n"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """key.json of `worksheetgen build --bank banks/practice.yaml --seed 1 --no-pdf`."""
    from click.testing import CliRunner

    out = tmp_path_factory.mktemp("build")
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--bank",
            str(ROOT / "banks" / "practice.yaml"),
            "--seed",
            "1",
            "--no-pdf",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    (key,) = out.glob("*/key.json")
    return key


@pytest.fixture(scope="module")
def sheet_id(built: Path) -> str:
    (sheet,) = json.loads(built.read_text(encoding="utf-8"))["sheets"]
    return sheet["id"]


def cells(sid: str, qid: str, name: str, grid: list[list[object]] | list[object]) -> str:
    """Response rows for a table (list of rows) or a vector (flat list), typed by hand."""
    lines = []
    if grid and isinstance(grid[0], list):
        for r, row in enumerate(grid, 1):
            for c, v in enumerate(row, 1):
                lines.append(f'{sid},{qid},{name},"{r},{c}",{v}')
    else:
        for c, v in enumerate(grid, 1):
            lines.append(f"{sid},{qid},{name},{c},{v}")
    return "\n".join(lines) + "\n"


def single(sid: str, qid: str, name: str, value: str) -> str:
    return f"{sid},{qid},{name},,{value}\n"


def all_right(sid: str) -> str:
    """Every answer of the practice sheet, from the note and by hand, to 2 decimals."""
    return "".join(
        [
            cells(sid, "worked-example", "scaled", [[1.41, 0], [0, 1.41]]),
            cells(sid, "worked-example", "A", [[0.80, 0.20], [0.20, 0.80]]),
            cells(sid, "worked-example-unscaled", "A_unscaled", [0.88, 0.12]),
            cells(sid, "worked-example-unscaled", "scaled", [1.41, 0]),
            cells(sid, "worked-example-unscaled", "A", [0.80, 0.20]),
            single(sid, "worked-example-unscaled", "peaked", "without the scale"),
            single(sid, "worked-example-unscaled", "largest_change", "it lost probability"),
            cells(sid, "worked-example-causal", "scaled", [[1.41, 0], [0, 1.41]]),
            cells(sid, "worked-example-causal", "masked", [[1.41, "-inf"], [0, 1.41]]),
            cells(sid, "worked-example-causal", "A", [[1, 0], [0.20, 0.80]]),
            cells(sid, "practice-identity", "scores", [[1, 0], [0, 1]]),
            cells(sid, "practice-identity", "scaled", [[0.71, 0], [0, 0.71]]),
            cells(sid, "practice-identity", "A", [[0.67, 0.33], [0.33, 0.67]]),
            cells(sid, "practice-identity", "output", [[0.67, 0.33], [0.33, 0.67]]),
            cells(sid, "practice-scale-row", "A_unscaled", [0.12, 0.88]),
            cells(sid, "practice-scale-row", "scaled", [0, 1.41]),
            cells(sid, "practice-scale-row", "A", [0.20, 0.80]),
            single(sid, "practice-scale-row", "peaked", "without the scale"),
            single(sid, "practice-scale-row", "largest_change", "it lost probability"),
            cells(sid, "practice-causal", "masked", [[1, "-inf"], [0, 1]]),
            cells(sid, "practice-causal", "A", [[1, 0], [0.27, 0.73]]),
            single(sid, "practice-heads", "d_k", "2"),
            single(sid, "practice-heads", "concat_width", "4"),
            single(sid, "practice-heads", "W_O_shape", "4x4"),
        ]
    )


def replace_rows(text: str, qid: str, name: str, new: str) -> str:
    """``text`` with the rows of one answer swapped for ``new``."""
    keep = [ln for ln in text.splitlines(keepends=True) if f",{qid},{name}," not in ln]
    return "".join(keep) + new


def run_grade(runner, key: Path, text: str | bytes, tmp_path: Path):
    resp = tmp_path / "responses.csv"
    if isinstance(text, str):
        resp.write_text(text, encoding="utf-8")
    else:
        resp.write_bytes(text)
    out = tmp_path / "graded"
    result = runner.invoke(main, ["grade", "--key", str(key), str(resp), "--out", str(out)])
    return result, out


def read_scores(out: Path) -> list[dict[str, str]]:
    with open(out / "scores.csv", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def graded(key_data: dict, text: str):
    key = parse_key(key_data, "key.json")
    return grade(key, parse_responses(text, key, "responses.csv"))


def part(result, qid: str, name: str):
    (student,) = result.students
    (q,) = [q for q in student.questions if q.id == qid]
    (p,) = [p for p in q.parts if p.answer == name]
    return p


def with_distractors(key: Path) -> dict:
    """The real key plus hand-computed slip results (as key.json "distractors" carry them)."""
    data = json.loads(key.read_text(encoding="utf-8"))
    qs = {q["id"]: q for q in data["sheets"][0]["questions"]}
    # S = [[2, 0], [0, 2]], d_k = 2: dividing by 2 gives [[1, 0], [0, 1]]; without any scale
    # row 1 is softmax([2, 0]) = e^2 / (1 + e^2).
    p88 = E**2 / (1 + E**2)
    qs["worked-example"]["distractors"] = [
        {
            "misconception": "scale-by-dk",
            "description": "divides by d_k instead of sqrt(d_k)",
            "answer": {"scaled": [[1.0, 0.0], [0.0, 1.0]], "A": [[P73, P27], [P27, P73]]},
            "rounded": {},
        },
        {
            "misconception": "no-scale",
            "description": "skips the scale",
            "answer": {"scaled": [[2.0, 0.0], [0.0, 2.0]], "A": [[p88, 1 - p88], [1 - p88, p88]]},
            "rounded": {},
        },
    ]
    # scores [[1, 3], [0, 1]] under the mask: 0 instead of -inf gives softmax([1, 0]) in row 1;
    # softmax over columns of [[1, -inf], [0, 1]] gives columns [e, 1]/(1+e) and [0, 1].
    qs["practice-causal"]["distractors"] = [
        {
            "misconception": "mask-with-zero",
            "description": "masks with 0 instead of -inf",
            "answer": {"masked": [[1.0, 0.0], [0.0, 1.0]], "A": [[P73, P27], [P27, P73]]},
            "rounded": {},
        },
        {
            "misconception": "softmax-over-columns",
            "description": "normalizes columns",
            "answer": {"masked": [[1.0, "-inf"], [0.0, 1.0]], "A": [[P73, 0.0], [P27, 1.0]]},
            "rounded": {},
        },
    ]
    return data


def test_grade_all_right_scores_full_marks(runner, built, sheet_id, tmp_path):
    result, out = run_grade(runner, built, HEADER + all_right(sheet_id), tmp_path)
    assert result.exit_code == 0, result.output
    (row,) = read_scores(out)
    # points in banks/practice.yaml: 4 + 3 + 3 + 3 + 3 + 3 + 2
    assert row["student"] == sheet_id
    assert (row["total"], row["max"]) == ("21", "21")
    assert row["worked-example"] == "4" and row["practice-heads"] == "2"
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "21 / 21" in report and "carried forward" not in report


def test_grade_quiet_prints_nothing_and_still_writes(runner, built, sheet_id, tmp_path):
    blank = tmp_path / "blank.csv"
    result = runner.invoke(main, ["grade", "--key", str(built), "--template", str(blank), "-q"])
    assert (result.exit_code, result.output) == (0, "") and blank.is_file()
    resp = tmp_path / "responses.csv"
    resp.write_text(HEADER + all_right(sheet_id), encoding="utf-8")
    result = runner.invoke(
        main,
        ["grade", "--key", str(built), str(resp), "--quiet", "--out", str(tmp_path / "graded")],
    )
    assert (result.exit_code, result.output) == (0, "")
    assert read_scores(tmp_path / "graded")[0]["total"] == "21"


def test_grade_accepts_every_spelling_of_a_masked_cell(built, sheet_id):
    data = json.loads(built.read_text(encoding="utf-8"))
    for word in ("-inf", "−∞", "-∞", "masked", "MASKED", " Masked "):
        text = HEADER + cells(sheet_id, "practice-causal", "masked", [[1, word], [0, 1]])
        p = part(graded(data, text), "practice-causal", "masked")
        assert (p.status, p.right) == ("right", 4), word


def test_grade_counts_zero_for_a_masked_cell_as_wrong(built, sheet_id):
    text = HEADER + cells(sheet_id, "practice-causal", "masked", [[1, 0], [0, 1]])
    p = part(
        graded(json.loads(built.read_text(encoding="utf-8")), text), "practice-causal", "masked"
    )
    assert (p.status, p.right, p.total) == ("partial", 3, 4)


def test_grade_choice_ignores_case_and_spaces(built, sheet_id):
    text = HEADER + single(sheet_id, "practice-scale-row", "peaked", "  WITHOUT   the Scale ")
    p = part(
        graded(json.loads(built.read_text(encoding="utf-8")), text), "practice-scale-row", "peaked"
    )
    assert p.status == "right"


def test_grade_accepts_values_within_tolerance_and_not_beyond(built, sheet_id):
    data = json.loads(built.read_text(encoding="utf-8"))
    # exact A row 1 is e^sqrt2 / (1 + e^sqrt2) = 0.8044...; the key allows 0.015 (three
    # rounded steps): 0.81 is within it, 0.83 is not
    exact = math.exp(math.sqrt(2)) / (1 + math.exp(math.sqrt(2)))
    assert abs(0.81 - exact) < 0.015 < abs(0.83 - exact)
    near = HEADER + cells(sheet_id, "worked-example", "A", [[0.81, 0.19], [0.19, 0.81]])
    assert part(graded(data, near), "worked-example", "A").status == "right"
    far = HEADER + cells(sheet_id, "worked-example", "A", [[0.83, 0.17], [0.17, 0.83]])
    assert part(graded(data, far), "worked-example", "A").status == "wrong"


def test_grade_gives_partial_credit_per_matrix_entry(runner, built, sheet_id, tmp_path):
    # worked-example: 4 points, 2 parts (scaled, A) -> 2 points each; A with 3 of 4 entries
    # right earns 2 * 3/4 = 1.5, so the question scores 2 + 1.5 = 3.5
    text = HEADER + replace_rows(
        all_right(sheet_id),
        "worked-example",
        "A",
        cells(sheet_id, "worked-example", "A", [[0.80, 0.20], [0.20, 0.55]]),
    )
    result, out = run_grade(runner, built, text, tmp_path)
    assert result.exit_code == 0, result.output
    (row,) = read_scores(out)
    assert row["worked-example"] == "3.5"
    assert row["total"] == "20.5"
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "partly right (3 of 4 entries)" in report
    assert "(2,2) wrote 0.55, key 0.80" in report


def test_grade_scores_a_shape_per_dimension_and_blank_as_zero(built, sheet_id):
    # one rule with the LMS exports (a gap or blank per dimension): a shape earns its share
    # per right dimension (it was all or nothing here, 0.40 against Moodle's 0.70)
    data = json.loads(built.read_text(encoding="utf-8"))
    (q,) = [
        q
        for s in data["sheets"]
        if s["id"] == sheet_id
        for q in s["questions"]
        if q["id"] == "practice-heads"
    ]
    rows, cols = q["answer"]["W_O_shape"]
    text = (
        HEADER
        + single(sheet_id, "practice-heads", "W_O_shape", f"{rows} by {cols + 1}")
        + f"{sheet_id},practice-heads,d_k,,\n"
    )
    result = graded(data, text)
    shape = part(result, "practice-heads", "W_O_shape")
    assert shape.status == "partial" and shape.earned == shape.possible / 2
    wrong = single(sheet_id, "practice-heads", "W_O_shape", f"{rows + 1} by {cols + 1}")
    shape = part(graded(data, HEADER + wrong), "practice-heads", "W_O_shape")
    assert (shape.status, shape.earned) == ("wrong", 0)
    assert part(result, "practice-heads", "d_k").status == "blank"


def test_grade_carries_a_wrong_scaled_table_forward_into_a(runner, built, sheet_id, tmp_path):
    # the student divides by 4/3 instead of sqrt 2: scaled = [[1.5, 0], [0, 1.5]], and then
    # softmax([1.5, 0]) = 1 / (1 + e^-1.5) = 0.8176 -> writes 0.82 / 0.18 (the key's 0.80 is
    # 0.0156 away from 0.82: outside its tolerance of 0.015)
    assert round(1 / (1 + math.exp(-1.5)), 2) == 0.82
    text = replace_rows(
        all_right(sheet_id),
        "worked-example",
        "scaled",
        cells(sheet_id, "worked-example", "scaled", [[1.5, 0], [0, 1.5]]),
    )
    text = HEADER + replace_rows(
        text,
        "worked-example",
        "A",
        cells(sheet_id, "worked-example", "A", [[0.82, 0.18], [0.18, 0.82]]),
    )
    result, out = run_grade(runner, built, text, tmp_path)
    assert result.exit_code == 0, result.output
    (row,) = read_scores(out)
    # scaled: 2 of 4 entries (the zeros) -> 1 of 2 points; A: all 4 carried -> 2 of 2
    assert row["worked-example"] == "3"
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "`A`: credit carried forward from your scaled (2/2)" in report


def test_grade_gives_no_carried_credit_when_a_does_not_follow_from_scaled(built, sheet_id):
    data = json.loads(built.read_text(encoding="utf-8"))
    text = (
        HEADER
        + cells(sheet_id, "worked-example", "scaled", [[1.5, 0], [0, 1.5]])
        + cells(sheet_id, "worked-example", "A", [[0.6, 0.4], [0.4, 0.6]])
    )
    p = part(graded(data, text), "worked-example", "A")
    assert (p.status, p.carried, p.earned) == ("wrong", 0, 0)


def test_grade_carries_forward_through_mask_and_into_the_output(built, sheet_id):
    data = json.loads(built.read_text(encoding="utf-8"))
    # practice-identity: scores right, scaled wrong as [[1, 0], [0, 1]] (forgot the scale),
    # A = softmax rows = [[0.73, 0.27], [0.27, 0.73]], output = A V = A (V = I)
    text = HEADER + "".join(
        [
            cells(sheet_id, "practice-identity", "scores", [[1, 0], [0, 1]]),
            cells(sheet_id, "practice-identity", "scaled", [[1, 0], [0, 1]]),
            cells(sheet_id, "practice-identity", "A", [[0.73, 0.27], [0.27, 0.73]]),
            cells(sheet_id, "practice-identity", "output", [[0.73, 0.27], [0.27, 0.73]]),
        ]
    )
    result = graded(data, text)
    a = part(result, "practice-identity", "A")
    assert (a.status, a.carried_from) == ("carried", ("scaled",))
    # output follows from the student's A, which is wrong: carried again
    out = part(result, "practice-identity", "output")
    assert (out.status, out.carried_from) == ("carried", ("A",))
    # 3 points over 4 parts: scores 0.75, scaled 2/4 entries -> 0.375, A 0.75, output 0.75
    (q,) = [q for q in result.students[0].questions if q.id == "practice-identity"]
    assert points_text(q.earned) == "2.63"  # 2.625, rounded half-up


def test_grade_counts_an_output_worked_from_the_students_right_a_as_right(built, sheet_id):
    data = json.loads(built.read_text(encoding="utf-8"))
    # practice-identity: A = softmax([1/sqrt(2), 0]) = [0.6698, 0.3302] per row (V = I).
    # [[0.66, 0.34], ...] is within A's tolerance (0.01); the output the student works from it
    # is 0.0098 from the exact value, outside a tolerance of half a unit
    (q,) = [q for q in data["sheets"][0]["questions"] if q["id"] == "practice-identity"]
    q["tolerance"]["output"] = 0.005
    mine = [[0.66, 0.34], [0.34, 0.66]]
    text = HEADER + "".join(
        [
            cells(sheet_id, "practice-identity", "scores", [[1, 0], [0, 1]]),
            cells(sheet_id, "practice-identity", "scaled", [[0.71, 0], [0, 0.71]]),
            cells(sheet_id, "practice-identity", "A", mine),
            cells(sheet_id, "practice-identity", "output", mine),
        ]
    )
    out = part(graded(data, text), "practice-identity", "output")
    assert (out.status, out.right, out.carried, out.wrong) == ("right", 4, 0, ())
    # the same output without the A it follows from is 0.0098 off: wrong
    text = HEADER + cells(sheet_id, "practice-identity", "output", mine)
    assert part(graded(data, text), "practice-identity", "output").status == "wrong"


def test_grade_carries_a_wrong_head_width_into_the_later_parts(built, sheet_id):
    data = json.loads(built.read_text(encoding="utf-8"))
    # d = 4, h = 2; a student who takes d_k = d = 4 gets concat 2 * 4 = 8 and W_O 8 x 4
    text = (
        HEADER
        + single(sheet_id, "practice-heads", "d_k", "4")
        + single(sheet_id, "practice-heads", "concat_width", "8")
        + single(sheet_id, "practice-heads", "W_O_shape", "8 x 4")
    )
    result = graded(data, text)
    assert part(result, "practice-heads", "d_k").status == "wrong"
    assert part(result, "practice-heads", "concat_width").status == "carried"
    assert part(result, "practice-heads", "W_O_shape").status == "carried"


def test_grade_diagnoses_scale_by_dk(runner, built, sheet_id, tmp_path):
    key = tmp_path / "key.json"
    key.write_text(json.dumps(with_distractors(built)), encoding="utf-8")
    # S/d_k = [[1, 0], [0, 1]]; row 1 of A = softmax([1, 0]) = [0.73, 0.27]
    text = (
        HEADER
        + cells(sheet_id, "worked-example", "scaled", [[1, 0], [0, 1]])
        + cells(sheet_id, "worked-example", "A", [[0.73, 0.27], [0.27, 0.73]])
    )
    result, out = run_grade(runner, key, text, tmp_path)
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text(encoding="utf-8")
    scaled_line = next(ln for ln in report.splitlines() if "`scaled`" in ln)
    a_line = next(ln for ln in report.splitlines() if ln.startswith("- (b) `A`"))
    assert "Reproduced by **scale-by-dk**" in scaled_line
    assert "Reproduced by **scale-by-dk**" in a_line and "no-scale" not in a_line
    assert "carried forward from your scaled" in a_line
    assert "| scale-by-dk |" in report


def test_grade_diagnoses_mask_with_zero(built, sheet_id, tmp_path):
    data = with_distractors(built)
    # the practice scores [[1, 3], [0, 1]] masked with 0: row 1 = softmax([1, 0])
    text = (
        HEADER
        + cells(sheet_id, "practice-causal", "masked", [[1, 0], [0, 1]])
        + cells(sheet_id, "practice-causal", "A", [[0.73, 0.27], [0.27, 0.73]])
    )
    result = graded(data, text)
    masked = part(result, "practice-causal", "masked")
    a = part(result, "practice-causal", "A")
    assert [s.misconception for s in masked.slips] == ["mask-with-zero"]
    assert [s.misconception for s in a.slips] == ["mask-with-zero"]
    assert a.status == "carried"


def test_grade_names_no_slip_when_none_reproduces_the_answer(built, sheet_id):
    data = with_distractors(built)
    text = HEADER + cells(sheet_id, "practice-causal", "A", [[0.5, 0.5], [0.27, 0.73]])
    result = graded(data, text)
    a = part(result, "practice-causal", "A")
    assert (a.status, a.slips) == ("partial", ())
    from worksheetgen.report.grade import report_md

    section = report_md(result).split("(`practice-causal`)")[1]
    line = next(ln for ln in section.splitlines() if ln.startswith("- (b) `A`"))
    assert "No slip in the misconception library reproduces it" in line


def test_grade_does_not_diagnose_a_right_answer(built, sheet_id):
    data = with_distractors(built)
    text = HEADER + cells(sheet_id, "practice-causal", "masked", [[1, "-inf"], [0, 1]])
    assert part(graded(data, text), "practice-causal", "masked").slips == ()


def test_grade_template_lists_every_entry_and_is_refused_until_filled_in(runner, built, tmp_path):
    tpl = tmp_path / "blank.csv"
    result = runner.invoke(main, ["grade", "--key", str(built), "--template", str(tpl)])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(tpl.read_text(encoding="utf-8"))))
    # 2x2 tables: 2 + 3 + 4 + 2 of them; vectors of 2: 6; single answers: 4 choices + 3 heads
    assert len(rows) == 11 * 4 + 6 * 2 + 4 + 3
    assert {r["value"] for r in rows} == {""}
    again = runner.invoke(main, ["grade", "--key", str(built), "--template", str(tpl)])
    assert again.exit_code != 0 and "never overwritten" in again.output
    # graded as it is, it gave everyone 0 (over any earlier scores)
    result = runner.invoke(main, ["grade", "--key", str(built), str(tpl)])
    assert result.exit_code == 1
    assert (
        "blank.csv:2: value: expected at least one answer in the value column, got 63 "
        "rows with none (is this the blank template?)" in result.output
    )
    assert not (tmp_path / "scores.csv").exists()
    text = tpl.read_text(encoding="utf-8").replace(
        "practice-heads,d_k,,\n", "practice-heads,d_k,,2\n"
    )
    tpl.write_text(text, encoding="utf-8")
    result = runner.invoke(main, ["grade", "--key", str(built), str(tpl)])
    assert result.exit_code == 0, result.output
    (row,) = read_scores(tmp_path)
    assert row["max"] == "21" and row["total"] != "0"


def test_grade_sheet_column_lets_many_students_share_a_version(built, sheet_id):
    data = json.loads(built.read_text(encoding="utf-8"))
    text = (
        "Student,Sheet,Question,Answer,Entry,Value,comment\n"
        f"ann,{sheet_id},practice-heads,d_k,,2,fine\n"
        f"bob,{sheet_id},practice-heads,d_k,,4,\n"
    )
    result = graded(data, text)
    assert [s.student for s in result.students] == ["ann", "bob"]
    # 2 points over 3 parts: a right d_k earns 2/3
    assert [points_text(s.earned) for s in result.students] == ["0.67", "0"]


def test_grade_accepts_cell_spellings_for_a_spreadsheet(built, sheet_id):
    data = json.loads(built.read_text(encoding="utf-8"))
    text = HEADER + "".join(
        f"{sheet_id},practice-causal,A,{entry},{value}\n"
        for entry, value in (("1;1", "1"), ("r1c2", "0"), ('"(2, 1)"', "0.27"), ("2:2", ".73"))
    )
    assert part(graded(data, text), "practice-causal", "A").status == "right"


BAD_FILES = [
    (
        "unknown student",
        HEADER + "{sid},practice-heads,d_k,,2\nnobody,practice-heads,d_k,,2\n",
        "responses.csv:3: student: expected a sheet id",
    ),
    (
        "unknown question",
        HEADER + "{sid},practice-hedas,d_k,,2\n",
        "responses.csv:2: question: expected a question id",
    ),
    (
        "unknown answer",
        HEADER + "{sid},practice-heads,dk,,2\n",
        "responses.csv:2: answer: expected an answer of question 'practice-heads'",
    ),
    (
        "not a number",
        HEADER + '{sid},practice-causal,A,"1,1",one\n',
        "responses.csv:2: value: expected a number like 0.73, or -inf/masked for a masked cell, "
        "got 'one'",
    ),
    (
        "decimal comma",
        HEADER + '{sid},practice-causal,A,"1,1","0,73"\n',
        "(use a point for decimals)",
    ),
    (
        "missing columns",
        "student,question,value\n{sid},practice-heads,2\n",
        "responses.csv:1: header: expected the columns student, question, answer, entry, value",
    ),
    (
        "duplicate row",
        HEADER + '{sid},practice-causal,A,"1,1",1\n{sid},practice-causal,A,1;1,1\n',
        "responses.csv:3: entry: expected one row per student, question, answer and entry, got a "
        "second row",
    ),
    (
        "cell outside the table",
        HEADER + '{sid},practice-causal,A,"3,1",1\n',
        'responses.csv:2: entry: expected a cell "row,col" of the 2x2 table A',
    ),
    (
        "entry on a single answer",
        HEADER + "{sid},practice-heads,d_k,1,2\n",
        "responses.csv:2: entry: expected an empty entry",
    ),
    (
        "unquoted cell",
        HEADER + "{sid},practice-causal,A,1,1,0.5\n",
        "responses.csv:2: fields: expected at most 5 fields as in the header, got 6",
    ),
    (
        "unknown option",
        HEADER + "{sid},practice-scale-row,peaked,,the first one\n",
        "responses.csv:2: value: expected one of 'without the scale'",
    ),
    ("empty file", "", "responses.csv:1: header: expected a header row"),
    # graded, it replaced earlier scores.csv with zeros for everyone and exited 0
    (
        "only a header",
        HEADER + "\n,,,,\n",
        "responses.csv:2: rows: expected a row per answer "
        "entry after the header, got none (a blank file to fill in: grade --template)",
    ),
]


@pytest.mark.parametrize("case,text,message", BAD_FILES, ids=[c[0] for c in BAD_FILES])
def test_grade_rejects_a_bad_response_file_and_writes_nothing(
    runner, built, sheet_id, tmp_path, case, text, message
):
    result, out = run_grade(runner, built, text.format(sid=sheet_id), tmp_path)
    assert result.exit_code != 0
    assert message in result.output, result.output
    assert "Traceback" not in result.output
    assert not out.exists()


def test_grade_rejects_undecodable_bytes_with_their_line(runner, built, sheet_id, tmp_path):
    data = (
        HEADER + f"{sheet_id},practice-heads,d_k,,2\n"
    ).encode() + f"{sheet_id},practice-heads,concat_width,,4 caf\xe9\n".encode("latin-1")
    result, out = run_grade(runner, built, data, tmp_path)
    assert result.exit_code != 0
    assert "responses.csv:3: expected UTF-8 text" in result.output
    assert "got byte 0xE9" in result.output
    assert not out.exists()


def test_grade_leaves_earlier_outputs_alone_when_a_file_is_bad(runner, built, sheet_id, tmp_path):
    result, out = run_grade(runner, built, HEADER + all_right(sheet_id), tmp_path)
    assert result.exit_code == 0

    def files() -> dict[str, bytes]:  # the class report's folders too
        return {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    before = files()
    result, _ = run_grade(runner, built, HEADER + "nobody,practice-heads,d_k,,2\n", tmp_path)
    assert result.exit_code != 0
    assert files() == before


def test_real_key_diagnoses_scale_by_dk_from_the_misconception_library(built, sheet_id):
    data = json.loads(built.read_text(encoding="utf-8"))
    # S = [[2, 0], [0, 2]], d_k = 2 divided by 2: [[1, 0], [0, 1]]; A row 1 = [0.73, 0.27]
    text = (
        HEADER
        + cells(sheet_id, "worked-example", "scaled", [[1, 0], [0, 1]])
        + cells(sheet_id, "worked-example", "A", [[0.73, 0.27], [0.27, 0.73]])
    )
    result = graded(data, text)
    assert [s.misconception for s in part(result, "worked-example", "scaled").slips] == [
        "scale-by-dk"
    ]
    a = part(result, "worked-example", "A")
    assert [s.misconception for s in a.slips] == ["scale-by-dk"]
    assert a.status == "carried"


def test_real_key_diagnoses_mask_with_zero_from_the_misconception_library(built, sheet_id):
    data = json.loads(built.read_text(encoding="utf-8"))
    # practice scores [[1, 3], [0, 1]] masked with 0: row 1 = softmax([1, 0]) = [0.73, 0.27]
    text = (
        HEADER
        + cells(sheet_id, "practice-causal", "masked", [[1, 0], [0, 1]])
        + cells(sheet_id, "practice-causal", "A", [[0.73, 0.27], [0.27, 0.73]])
    )
    result = graded(data, text)
    assert [s.misconception for s in part(result, "practice-causal", "masked").slips] == [
        "mask-with-zero"
    ]
    assert [s.misconception for s in part(result, "practice-causal", "A").slips] == [
        "mask-with-zero"
    ]


def test_real_key_diagnoses_softmax_over_columns(built, sheet_id):
    data = json.loads(built.read_text(encoding="utf-8"))
    # columns of [[1, -inf], [0, 1]] normalized: [e, 1]/(1 + e) and [0, 1]
    assert (round(P73, 2), round(P27, 2)) == (0.73, 0.27)
    text = HEADER + cells(sheet_id, "practice-causal", "A", [[0.73, 0], [0.27, 1]])
    a = part(graded(data, text), "practice-causal", "A")
    assert [s.misconception for s in a.slips] == ["softmax-over-columns"]
    assert (a.right, a.total) == (2, 4)


def test_real_key_diagnoses_dk_equals_d_and_carries_it_forward(built, sheet_id):
    data = json.loads(built.read_text(encoding="utf-8"))
    # d = 4, h = 2: a student who gives each head the full width writes 4, 2 * 4 = 8, 8 x 4
    text = (
        HEADER
        + single(sheet_id, "practice-heads", "d_k", "4")
        + single(sheet_id, "practice-heads", "concat_width", "8")
        + f'{sheet_id},practice-heads,W_O_shape,,"(8, 4)"\n'
    )
    result = graded(data, text)
    d_k = part(result, "practice-heads", "d_k")
    assert [s.misconception for s in d_k.slips] == ["dk-equals-d"]
    (q,) = [q for q in result.students[0].questions if q.id == "practice-heads"]
    assert points_text(q.earned) == "1.33"  # 2 of 3 parts, carried: 2 * 2/3


def test_multiple_choice_item_is_graded_by_label_and_names_the_chosen_slip(
    runner, write_bank, tmp_path
):
    bank = write_bank("""
        sheet: {id: quiz, title: Quiz}
        questions:
          - id: mask
            family: causal
            points: 2
            format: choice
            params: {S: [[1, 3], [0, 1]], prescaled: true}
        """)
    result = runner.invoke(
        main,
        ["build", "--bank", str(bank), "--seed", "5", "--no-pdf", "--out", str(tmp_path / "b")],
    )
    assert result.exit_code == 0, result.output
    (key,) = (tmp_path / "b").glob("*/key.json")
    data = json.loads(key.read_text(encoding="utf-8"))
    (q,) = data["sheets"][0]["questions"]
    # find the options by their printed tables, computed by hand: the right A has row 1
    # [1, 0]; masking with 0 gives softmax([1, 0]) = [0.73, 0.27] in row 1
    by_table = {json.dumps(c["rounded"]): c["label"] for c in q["choices"]}
    right = by_table[json.dumps([["1.00", "0.00"], ["0.27", "0.73"]])]
    zero = by_table[json.dumps([["0.73", "0.27"], ["0.27", "0.73"]])]
    text = HEADER + f"quiz,mask,A,,{right.lower()}\n"
    assert part(graded(data, text), "mask", "A").status == "right"
    slip = part(graded(data, HEADER + f"quiz,mask,A,,{zero}\n"), "mask", "A")
    assert slip.status == "wrong"
    assert [s.misconception for s in slip.slips] == ["mask-with-zero"]
    with pytest.raises(GradeError, match=r"responses\.csv:2: value: expected one of 'A'"):
        graded(data, HEADER + "quiz,mask,A,,Z\n")


def test_grade_has_help(runner):
    result = runner.invoke(main, ["grade", "--help"])
    assert result.exit_code == 0 and "--template" in result.output


def test_grade_reads_a_spreadsheet_export_with_bom_and_crlf(runner, built, sheet_id, tmp_path):
    text = ("\ufeff" + HEADER + all_right(sheet_id)).replace("\n", "\r\n").encode("utf-8")
    result, out = run_grade(runner, built, text, tmp_path)
    assert result.exit_code == 0, result.output
    assert read_scores(out)[0]["total"] == "21"


def test_grade_reports_a_missing_key_or_responses_file(runner, built, tmp_path):
    result = runner.invoke(
        main, ["grade", "--key", str(tmp_path / "nokey.json"), str(tmp_path / "r.csv")]
    )
    assert result.exit_code != 0 and "expected a key.json file, got no such file" in result.output
    result = runner.invoke(main, ["grade", "--key", str(built), str(tmp_path / "r.csv")])
    assert result.exit_code != 0
    assert "expected a responses CSV file, got no such file" in result.output
    assert not (tmp_path / "scores.csv").exists()


def test_grade_reports_an_output_folder_that_is_a_file(runner, built, sheet_id, tmp_path):
    resp = tmp_path / "responses.csv"
    resp.write_text(HEADER + all_right(sheet_id), encoding="utf-8")
    blocker = tmp_path / "taken"
    blocker.write_text("a file", encoding="utf-8")
    result = runner.invoke(
        main, ["grade", "--key", str(built), str(resp), "--out", str(blocker / "grades")]
    )
    assert result.exit_code != 0
    assert "--out: expected a folder to write into, got" in result.output
    assert "taken, a regular file" in result.output
    assert "Traceback" not in result.output


@pytest.fixture(scope="module")
def lab_versions(tmp_path_factory) -> dict:
    """key.json of `build --seed 3 --versions 12 --no-pdf` (the default bank: lab3; in two of
    its sheets the no-scale slip's written A times V lies beyond the output margin)."""
    from click.testing import CliRunner

    out = tmp_path_factory.mktemp("versions")
    result = CliRunner().invoke(
        main, ["build", "--seed", "3", "--versions", "12", "--no-pdf", "--out", str(out), "-q"]
    )
    assert result.exit_code == 0, result.output
    (key_path,) = out.glob("*/key.json")
    return json.loads(key_path.read_text(encoding="utf-8"))


def slip_responses(data: dict, slip: str, output_shift: float = 0.0) -> str:
    """Every lab3 answer of every sheet as a student who makes ``slip`` writes it (its printed
    values), with the output moved by ``output_shift``."""
    rows = [HEADER.strip()]
    for sheet in data["sheets"]:
        (q,) = [q for q in sheet["questions"] if q["id"] == "lab3"]
        (d,) = [d for d in q["distractors"] if d["misconception"] == slip]
        for name in q["answer"]:
            grid = d["rounded"].get(name, q["rounded"][name])
            if name == "output" and output_shift:
                grid = [[f"{float(x) + output_shift:.2f}" for x in row] for row in grid]
            rows.append(cells(sheet["id"], "lab3", name, grid).strip())
    return "\n".join(rows) + "\n"


def test_grade_carries_an_output_worked_from_a_wrong_a_before_the_student_rounded_it(lab_versions):
    """A student who makes a slip, works at full precision and writes each answer rounded
    (the slip's printed values in key.json) gets the output carried forward, although their
    written A times V is a few hundredths off what they wrote (V's entries carry A's rounding)."""
    data = lab_versions
    worked = 0
    for sheet in data["sheets"]:
        (q,) = [q for q in sheet["questions"] if q["id"] == "lab3"]
        (slip,) = [d for d in q["distractors"] if d["misconception"] == "no-scale"]
        written_a = [[float(x) for x in row] for row in slip["rounded"]["A"]]
        v = q["given"]["V"]
        redone = [
            [sum(a * v[k][j] for k, a in enumerate(row)) for j in range(len(v[0]))]
            for row in written_a
        ]
        written = [[float(x) for x in row] for row in slip["rounded"]["output"]]
        if (
            max(
                abs(x - y)
                for r1, r2 in zip(redone, written, strict=True)
                for x, y in zip(r1, r2, strict=True)
            )
            > q["tolerance"]["output"]
        ):
            worked += 1  # the case the old check refused
    assert worked >= 2, worked  # sheets where the old check took no account of the rounding
    res = graded(data, slip_responses(data, "no-scale"))
    for student in res.students:
        (q,) = [q for q in student.questions if q.id == "lab3"]
        (out,) = [p for p in q.parts if p.answer == "output"]
        assert out.right + out.carried == out.total, (out.status, out.wrong)
        assert [s.misconception for s in out.slips] in ([], ["no-scale"])


@pytest.mark.parametrize(
    "written, status",
    [
        ("no-scale", "right"),  # the name of the slip the option describes
        ("Skips the scale", "right"),  # the start of one option
        # the whole option as key.json and keys.md write it (its math in $…$)
        ("  SKIPS the   scale: takes the softmax of the raw scores $QK^\\top$. ", "right"),
        ("c", "right"),  # its letter in the printed order (as Canvas asks)
        ("scale-by-dk", "wrong"),
        ("a", "wrong"),
    ],
)
def test_grade_takes_a_spot_the_bug_slip_by_name_start_or_letter(written, status, tmp_path):
    from click.testing import CliRunner

    result = CliRunner().invoke(
        main,
        [
            "build",
            "--bank",
            str(ROOT / "banks" / "slips.yaml"),
            "--seed",
            "11",
            "--no-pdf",
            "--out",
            str(tmp_path),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    (key_path,) = tmp_path.glob("*/key.json")
    data = json.loads(key_path.read_text(encoding="utf-8"))
    (sheet,) = data["sheets"]
    (q,) = [q for q in sheet["questions"] if q["id"] == "find-the-slip"]
    assert q["answer"]["slip"] == q["options"]["slip"][2]  # no-scale is option c here
    assert q["answer"]["slip"].startswith("Skips the scale")
    text = HEADER + f'{sheet["id"]},find-the-slip,slip,,"{written}"\n'
    assert part(graded(data, text), "find-the-slip", "slip").status == status


def test_grade_refuses_an_option_it_cannot_tell_apart(built, sheet_id):
    key = parse_key(json.loads(built.read_text(encoding="utf-8")), "key.json")
    # "it" starts both "it lost probability" and "it gained probability"
    text = HEADER + single(sheet_id, "practice-scale-row", "largest_change", "it ")
    with pytest.raises(GradeError, match="expected one of 'it lost probability'"):
        parse_responses(text, key, "responses.csv")


def test_grade_template_of_a_roster_names_each_student_and_still_grades(runner, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("name,id\nZoë O'Brien,s1\nAda Lovelace,s2\n=SUM(A1),s3\n", encoding="utf-8")
    result = runner.invoke(
        main,
        [
            "build",
            "--seed",
            "3",
            "--roster",
            str(roster),
            "--no-pdf",
            "--out",
            str(tmp_path / "o"),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    (key,) = (tmp_path / "o").glob("*/key.json")
    tpl = tmp_path / "blank.csv"
    assert runner.invoke(main, ["grade", "--key", str(key), "--template", str(tpl)]).exit_code == 0
    rows = list(csv.DictReader(tpl.open(encoding="utf-8")))
    assert {(r["student"], r["name"]) for r in rows} == {
        ("s1", "Zoë O'Brien"),
        ("s2", "Ada Lovelace"),
        ("s3", "'=SUM(A1)"),
    }  # no formula
    text = tpl.read_text(encoding="utf-8")
    assert "s1,Zoë O'Brien,head-widths,d_k,,\n" in text  # the name beside the id
    text = text.replace("s1,Zoë O'Brien,head-widths,d_k,,\n", "s1,Zoë O'Brien,head-widths,d_k,,4\n")
    result, out = run_grade(runner, key, text, tmp_path)
    assert result.exit_code == 0, result.output  # the extra column is ignored


def test_grade_does_not_carry_forward_an_output_that_does_not_follow_from_the_students_a(
    lab_versions,
):
    """The same slip students, but every output entry 0.1 too high: more than any rounding of
    their A can carry through V (half a unit times V's column sums, at most 0.085 here)."""
    data = lab_versions
    for sheet in data["sheets"]:
        (q,) = [q for q in sheet["questions"] if q["id"] == "lab3"]
        assert max(sum(abs(r[j]) for r in q["given"]["V"]) for j in range(2)) <= 16
    res = graded(data, slip_responses(data, "no-scale", output_shift=0.1))
    for student in res.students:
        (q,) = [q for q in student.questions if q.id == "lab3"]
        (out,) = [p for p in q.parts if p.answer == "output"]
        assert out.carried == 0, (student.sheet, out.carried)


def test_grade_report_names_no_missing_slip_for_a_wrong_pick_one_answer(
    runner, built, sheet_id, tmp_path
):
    text = HEADER + replace_rows(
        all_right(sheet_id),
        "practice-scale-row",
        "largest_change",
        single(sheet_id, "practice-scale-row", "largest_change", "no change"),
    )
    result, out = run_grade(runner, built, text, tmp_path)
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text(encoding="utf-8")
    assert (
        "- (e) `largest_change`: wrong (0/0.6). Not credited: wrote no change, key it "
        "lost probability."
    ) in report.splitlines()


@pytest.mark.parametrize("separator", [";", "\t"])
def test_grade_reads_a_semicolon_or_tab_separated_file_as_rosters_are_read(
    built, sheet_id, separator
):
    # a comma-decimal locale's spreadsheet saves "CSV" with semicolons: it was refused
    rows = list(csv.reader(io.StringIO(HEADER + all_right(sheet_id))))
    buf = io.StringIO()
    csv.writer(buf, delimiter=separator, lineterminator="\n").writerows(rows)
    assert "1,1" in buf.getvalue()  # a cell "1,1" needs no quotes there
    key = parse_key(json.loads(built.read_text(encoding="utf-8")), "key.json")
    res = grade(key, parse_responses(buf.getvalue(), key, "responses.csv"))
    (student,) = res.students
    assert student.earned == student.possible


CARRY_BANK = """
sheet: {id: carry, title: Carried forward}
questions:
  - id: big-v
    family: lab3
    params: {Q: [[1, 0], [0, 1]], K: [[1, 0], [0, 1]], V: [[4, 0], [0, 4]], causal: false}
  - id: proj
    family: projections
    params: {X: [[1, 0], [0, 1]], W_Q: [[1, 1], [0, 1]], W_K: [[1, 0], [1, 1]],
             W_V: [[2, 0], [0, 3]], output: true}
  - id: effect
    family: scale-effect
    params: {row: [[2, 0]], d_k: 4, variance: false}
  - id: ties
    family: identical-keys
    params: {Q: [[1, 0], [0, 1], [1, 1]], K: [[1, 0], [1, 0], [0, 1]], explain: false}
  - id: widths
    family: multihead
    params: {d: 8, h: 2, d_v: 3, biases: false, head_shape: false}
"""


@pytest.fixture(scope="module")
def carry_key(tmp_path_factory) -> dict:
    """key.json of CARRY_BANK (seed 1): one question per family whose carried steps differ."""
    from click.testing import CliRunner

    out = tmp_path_factory.mktemp("carry")
    bank = out / "carry.yaml"
    bank.write_text(CARRY_BANK, encoding="utf-8")
    result = CliRunner().invoke(
        main, ["build", "--bank", str(bank), "--seed", "1", "--no-pdf", "--out", str(out), "-q"]
    )
    assert result.exit_code == 0, result.output
    (key_path,) = out.glob("*/key.json")
    return json.loads(key_path.read_text(encoding="utf-8"))


R2 = math.sqrt(2)


def test_grade_credits_an_output_from_a_right_a_only_within_the_keys_tolerance(carry_key):
    """A right A: AV must be within the key's tolerance of the exact AV or of the written A
    times V. The grader also accepted up to half a unit plus half a unit times V's column
    (0.025 here): 2.70 from the key's own printed A, 0.021 off the exact 2.679 ± 0.015."""
    q = carry_key["sheets"][0]["questions"][0]
    assert q["id"] == "big-v" and q["tolerance"]["output"] == 0.015
    a = softmax([1 / R2, 0])  # Q = K = I, d_k = 2: row 1 of A; V = 4 I
    mine = [[round(a[0], 2), round(a[1], 2)], [round(a[1], 2), round(a[0], 2)]]
    assert mine[0] == [0.67, 0.33] and abs(4 * a[0] - 2.70) > 0.015
    base = (
        HEADER
        + cells("carry", "big-v", "scores", [[1, 0], [0, 1]])
        + cells("carry", "big-v", "scaled", [[0.71, 0], [0, 0.71]])
        + cells("carry", "big-v", "A", mine)
    )
    out = part(
        graded(carry_key, base + cells("carry", "big-v", "output", [[2.70, 1.32], [1.32, 2.68]])),
        "big-v",
        "output",
    )
    assert (out.right, out.carried, out.status) == (3, 0, "partial")
    assert [w.entry for w in out.wrong] == ["1,1"]
    # 2.69 is 0.01 from 4 x 0.67 = 2.68, the written A times V: within the tolerance
    out = part(
        graded(carry_key, base + cells("carry", "big-v", "output", [[2.69, 1.32], [1.32, 2.68]])),
        "big-v",
        "output",
    )
    assert out.status == "right"


def test_grade_carries_an_output_from_a_wrong_a_with_the_rounding_of_that_a(carry_key):
    """A wrong A (no scale: softmax([1, 0]) = [0.73, 0.27]): the student may have multiplied
    it before rounding it, so AV may be up to half a unit (AV's digits) plus half a unit of
    A's digits times |V| down the column (0.005 + 0.005 x 4) off the written A times V."""
    a = softmax([1, 0])
    mine = [[round(a[0], 2), round(a[1], 2)], [round(a[1], 2), round(a[0], 2)]]
    assert mine[0] == [0.73, 0.27]  # 4 x 0.73 = 2.92, 4 x 0.27 = 1.08
    base = (
        HEADER
        + cells("carry", "big-v", "scores", [[1, 0], [0, 1]])
        + cells("carry", "big-v", "scaled", [[1, 0], [0, 1]])
        + cells("carry", "big-v", "A", mine)
    )
    out = part(
        graded(carry_key, base + cells("carry", "big-v", "output", [[2.94, 1.06], [1.08, 2.92]])),
        "big-v",
        "output",
    )
    assert (out.carried, out.status, out.carried_from) == (4, "carried", ("A",))
    out = part(
        graded(carry_key, base + cells("carry", "big-v", "output", [[2.95, 1.08], [1.08, 2.92]])),
        "big-v",
        "output",
    )
    assert (out.carried, [w.entry for w in out.wrong]) == (3, ["1,1"])


def test_grade_credits_whole_number_scores_from_right_q_and_k_only_exactly(carry_key):
    """projections' scores are whole numbers with tolerance 0: 3.4 for 3 (here 1.4 for 1)
    was credited as following from right Q and K within half a unit."""
    q_, k_ = [[1, 1], [0, 1]], [[1, 0], [1, 1]]  # X = I: Q = W_Q, K = W_K
    scores = [[sum(a * b for a, b in zip(qr, kr, strict=True)) for kr in k_] for qr in q_]
    assert scores == [[1, 2], [0, 1]]
    text = (
        HEADER
        + cells("carry", "proj", "Q", q_)
        + cells("carry", "proj", "K", k_)
        + cells("carry", "proj", "scores", [[1.4, 2], [0, 1]])
    )
    p = part(graded(carry_key, text), "proj", "scores")
    assert (p.right, p.carried, [w.entry for w in p.wrong]) == (3, 0, ["1,1"])
    # from a wrong Q (row 1 written [1, 2]: scores [1, 3]): carried exactly, not within 0.5
    wrong_q = [[1, 2], [0, 1]]
    text = HEADER + cells("carry", "proj", "Q", wrong_q) + cells("carry", "proj", "K", k_)
    p = part(
        graded(carry_key, text + cells("carry", "proj", "scores", [[1, 3], [0, 1]])),
        "proj",
        "scores",
    )
    assert (p.status, p.carried_from) == ("carried", ("Q", "K"))
    p = part(
        graded(carry_key, text + cells("carry", "proj", "scores", [[1, 3.4], [0, 1]])),
        "proj",
        "scores",
    )
    assert (p.right, p.carried) == (3, 0)


def test_grade_credits_a_whole_concat_width_only_exactly(built, sheet_id):
    """heads: d = 4, h = 2. 4.4 for the concat width 4 was credited from the right d_k 2."""
    data = json.loads(built.read_text(encoding="utf-8"))
    text = (
        HEADER
        + single(sheet_id, "practice-heads", "d_k", "2")
        + single(sheet_id, "practice-heads", "concat_width", "4.4")
    )
    assert part(graded(data, text), "practice-heads", "concat_width").status == "wrong"
    text = (
        HEADER
        + single(sheet_id, "practice-heads", "d_k", "4")
        + single(sheet_id, "practice-heads", "concat_width", "8.4")
    )
    assert part(graded(data, text), "practice-heads", "concat_width").status == "wrong"


def test_grade_carries_scale_effects_choices_from_the_students_own_softmaxes(carry_key):
    """scale-effect asks the scaling row too: 'more peaked' and 'gained or lost' follow from
    the student's two softmaxes there as well (they did only for the family scaling)."""
    # row [2, 0], d_k = 4: scaled [1, 0], A = softmax([1, 0]) = [0.73, 0.27] (right); the
    # student's unscaled softmax is wrong, [0.50, 0.50], so key 1 gains with the scale
    assert [round(x, 2) for x in softmax([1, 0])] == [0.73, 0.27]
    text = (
        HEADER
        + cells("carry", "effect", "A_unscaled", [0.5, 0.5])
        + cells("carry", "effect", "scaled", [1, 0])
        + cells("carry", "effect", "A", [0.73, 0.27])
        + single("carry", "effect", "peaked", "with the scale")
        + single("carry", "effect", "largest_change", "it gained probability")
    )
    result = graded(carry_key, text)
    for name in ("peaked", "largest_change"):
        p = part(result, "effect", name)
        assert (p.status, p.carried_from) == ("carried", ("A_unscaled", "A")), name
    # the same choice without the softmaxes it would follow from: wrong
    text = HEADER + single("carry", "effect", "peaked", "with the scale")
    assert part(graded(carry_key, text), "effect", "peaked").status == "wrong"


def test_grade_carries_identical_keys_scores_straight_into_a(carry_key):
    """identical-keys asks S, then A = softmax(S/√d_k) with no scale part: A follows from
    the student's S (now in the README's list)."""
    # row 1 of S written [2, 2, 0] instead of [1, 1, 0]; rows 2 and 3 right
    mine = [[2, 2, 0], [0, 0, 1], [1, 1, 1]]
    a = [[round(x, 2) for x in softmax([s / R2 for s in row])] for row in mine]
    assert a[0] == [0.45, 0.45, 0.11]
    text = HEADER + cells("carry", "ties", "scores", mine) + cells("carry", "ties", "A", a)
    result = graded(carry_key, text)
    assert part(result, "ties", "scores").right == 7  # 0 in row 1 is right
    p = part(result, "ties", "A")
    assert (p.status, p.right, p.carried, p.carried_from) == ("carried", 6, 3, ("scores",))


def test_grade_carries_projections_output_from_the_students_own_v(carry_key):
    """projections has no given V: AV follows from the student's A and their own V."""
    a = softmax([1 / R2, R2])  # S = [[1, 2], [0, 1]] / sqrt 2: both rows softmax to this
    mine_a = [[round(x, 2) for x in a]] * 2
    assert mine_a[0] == [0.33, 0.67]
    wrong_v = [[2, 0], [0, 2]]  # the right V is [[2, 0], [0, 3]]
    out = [[round(mine_a[0][0] * 2, 2), round(mine_a[0][1] * 2, 2)]] * 2
    text = (
        HEADER
        + cells("carry", "proj", "V", wrong_v)
        + cells("carry", "proj", "A", mine_a)
        + cells("carry", "proj", "output", out)
    )
    p = part(graded(carry_key, text), "proj", "output")
    assert (p.status, p.carried_from) == ("carried", ("A", "V"))


def test_grade_multihead_with_its_own_d_v_carries_no_concat_width_from_d_k(carry_key):
    """d = 8, h = 2, d_v = 3: the concat width is h d_v = 6 whatever d_k is; W_O's shape
    still follows from the student's concat width."""
    text = (
        HEADER
        + single("carry", "widths", "d_k", "8")
        + single("carry", "widths", "concat_width", "16")
        + single("carry", "widths", "W_O_shape", "16x8")
    )
    result = graded(carry_key, text)
    assert part(result, "widths", "concat_width").status == "wrong"
    p = part(result, "widths", "W_O_shape")
    assert (p.status, p.carried_from) == ("carried", ("concat_width",))


def test_grade_carries_what_key_json_states_not_what_the_family_is_called(built, sheet_id):
    """The grader reads each question's "carries": a renamed family still carries; a key
    that states none carries nothing; a current key without the field is refused; a
    version 1 key from before the field gets its family's."""
    text = (
        HEADER
        + single(sheet_id, "practice-heads", "d_k", "4")
        + single(sheet_id, "practice-heads", "concat_width", "8")
    )

    def heads(change, version: int = 2) -> str:
        data = json.loads(built.read_text(encoding="utf-8"))
        data["version"] = version
        (q,) = [q for q in data["sheets"][0]["questions"] if q["id"] == "practice-heads"]
        change(q)
        return part(graded(data, text), "practice-heads", "concat_width").status

    assert heads(lambda q: q.update(family="renamed")) == "carried"
    assert heads(lambda q: q.update(carries=[])) == "wrong"
    with pytest.raises(KeyFileError, match=r"questions\[\d+\]\.carries: expected a value"):
        heads(lambda q: q.pop("carries"))
    assert heads(lambda q: q.pop("carries"), version=1) == "carried"
    with pytest.raises(KeyFileError, match="sheets\\[0\\]"):
        heads(
            lambda q: q.update(
                carries=[
                    {"answer": "concat_width", "from": ["d_k"], "steps": ["guess"], "args": {}}
                ]
            )
        )


def test_grade_module_names_no_family():
    """Carried-forward credit is the families' data: grading/ tests no family by name."""
    from worksheetgen.families import FAMILIES

    source = "\n".join(
        p.read_text(encoding="utf-8")
        for p in sorted((ROOT / "worksheetgen" / "grading").glob("*.py"))
    )
    steps = {"softmax"}  # a step of the vocabulary, and a family's name too
    for name in set(FAMILIES) - steps:
        assert f'"{name}"' not in source and f"'{name}'" not in source, name
    assert "q.family" not in source and "d_v_given" not in source


def test_grade_reads_key_json_once_through_the_one_reader(built, monkeypatch):
    """grading/ builds its grids from keyjson's records: the file is parsed and checked once,
    by the reader export uses, and nothing in grading/ reads JSON itself."""
    from worksheetgen.keyjson import read as keyread

    calls: list[str] = []
    checked = keyread.parse_key

    def counting(data, source="key.json"):
        calls.append(source)
        return checked(data, source)

    monkeypatch.setattr(keyread, "parse_key", counting)
    key = load_key(built)
    assert calls == [str(built)]
    assert key.sheets and all(q.answers for s in key.sheets for q in s.questions)
    source = "\n".join(
        p.read_text(encoding="utf-8")
        for p in sorted((ROOT / "worksheetgen" / "grading").glob("*.py"))
    )
    assert "import json" not in source and "read_json" not in source


def test_grade_and_export_refuse_a_bad_carried_step_with_the_same_line(built):
    from worksheetgen.export import export_bytes

    data = json.loads(built.read_text(encoding="utf-8"))
    data["sheets"][0]["questions"][0]["carries"] = [{"answer": "A", "from": [], "steps": [7]}]
    with pytest.raises(KeyFileError) as by_grade:  # one reader, one error type
        parse_key(data, "key.json")
    with pytest.raises(KeyFileError) as by_export:
        export_bytes(data, "gift")
    expected = "sheets[0].questions[0].carries[0].steps[0]: expected a non-empty string, got 7"
    assert str(by_grade.value) == str(by_export.value) == f"key.json: {expected}"
