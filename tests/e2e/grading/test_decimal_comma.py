"""A class whose sheets print a decimal comma (``build --language de``, or ``--decimal
comma``): grade reads the students' 0,25 from its key (key.json's ``decimal``), still reads
0.25, and never reads 1.234,5 or 1,234,567 as a number with thousands; a key printed with a
point reads 0,25 as before (refused, with a hint)."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from worksheetgen.errors import GradeError
from worksheetgen.grading.key import load_key
from worksheetgen.grading.template import template_csv
from worksheetgen.report.grade import grade_files


def _built(out: Path, *extra: str) -> Path:
    from worksheetgen.cli import main

    try:
        main(
            ["build", "--seed", "11", "--versions", "3", "--no-pdf", "-q", "--out", str(out)]
            + list(extra)
        )
    except SystemExit as exc:
        assert exc.code in (0, None)
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return folder / "key.json"


@pytest.fixture(scope="module")
def german(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _built(tmp_path_factory.mktemp("de"), "--language", "de")


def _printed(value: object, comma: bool) -> str:
    text = str(value)
    return text.replace(".", ",") if comma else text


def _answers(key_path: Path, comma: bool) -> tuple[str, int]:
    """The template filled in with every sheet's printed answers (their points as commas
    with ``comma``), and how many of the values hold a comma."""
    key = load_key(key_path)
    rows = list(csv.reader(io.StringIO(template_csv(key))))
    header, body = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}
    answers = {(s.id, q.id, a.name): a for s in key.sheets for q in s.questions for a in q.answers}
    commas = 0
    for row in body:
        a = answers[(row[col["student"]], row[col["question"]], row[col["answer"]])]
        entry = row[col["entry"]]
        if a.kind == "matrix":
            r, c = (int(x) for x in entry.split(","))
            value = a.rounded[r - 1][c - 1]
        elif a.kind in ("vector", "shape"):
            value = a.rounded[int(entry) - 1] if entry else "x".join(map(str, a.rounded))
        elif a.kind in ("choice", "text"):
            value = a.text
        else:
            value = a.rounded
        text = str(value) if a.kind in ("choice", "text") else _printed(value, comma)
        commas += "," in text
        row[col["value"]] = text
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *body])
    return out.getvalue(), commas


def test_the_key_says_its_sheets_print_a_decimal_comma(german):
    data = json.loads(german.read_text("utf-8"))
    assert data["decimal"] == ","
    assert load_key(german).decimal == ","


@pytest.mark.parametrize("comma", [True, False], ids=["commas", "points"])
def test_a_german_class_answering_as_its_sheets_print_gets_full_marks(german, tmp_path, comma):
    text, commas = _answers(german, comma)
    assert (commas > 20) is comma
    responses = tmp_path / "responses.csv"
    responses.write_text(text, "utf-8")
    run = grade_files(german, responses, tmp_path / "out", pictures=False)
    assert len(run.result.students) == 3
    for student in run.result.students:
        assert student.earned == student.possible - student.ungraded, student.student


def test_two_separators_are_no_number_never_thousands(german, tmp_path):
    text, _ = _answers(german, True)
    lines = text.splitlines()
    # the first numeric row: its value replaced by a number with a thousands separator
    header = lines[0].split(",")
    for i, line in enumerate(lines[1:], 1):
        cells = next(csv.reader([line]))
        if cells[header.index("value")].replace(",", "").replace("-", "").isdigit():
            cells[header.index("value")] = "1.234,5"
            out = io.StringIO()
            csv.writer(out, lineterminator="").writerow(cells)
            lines[i] = out.getvalue()
            break
    responses = tmp_path / "responses.csv"
    responses.write_text("\n".join(lines) + "\n", "utf-8")
    with pytest.raises(GradeError) as caught:
        grade_files(german, responses, tmp_path / "out", pictures=False)
    message = str(caught.value)
    assert "expected a number like 0,73" in message
    assert "got '1.234,5' (one decimal separator, no thousands separator)" in message
    assert not (tmp_path / "out").exists()


def test_a_point_key_still_refuses_a_comma_with_its_hint(tmp_path):
    key = _built(tmp_path / "en")
    assert "decimal" not in json.loads(key.read_text("utf-8"))
    text, commas = _answers(key, True)
    assert commas > 20
    responses = tmp_path / "responses.csv"
    responses.write_text(text, "utf-8")
    with pytest.raises(GradeError) as caught:
        grade_files(key, responses, tmp_path / "out", pictures=False)
    assert "(use a point for decimals)" in str(caught.value)


def test_a_comma_keys_reports_print_points_with_its_comma_and_its_csv_with_points(german, tmp_path):
    """The points a report shows a reader (report.md, the feedback pages) are written as the
    key's sheets wrote numbers ("2,67"); scores.csv is data for a spreadsheet or an LMS and
    keeps the point ("2.67")."""
    text, _ = _answers(german, True)
    rows = list(csv.reader(io.StringIO(text)))
    col = {name: i for i, name in enumerate(rows[0])}
    for n, row in enumerate(rows[1:]):  # every third cell left blank: partial credit
        if "," in row[col["entry"]] and n % 3 == 0:
            row[col["value"]] = ""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    responses = tmp_path / "responses.csv"
    responses.write_text(out.getvalue(), "utf-8")
    run = grade_files(german, responses, tmp_path / "out")
    totals = [s.earned for s in run.result.students]
    assert any(t.denominator != 1 for t in totals), totals
    report = (tmp_path / "out" / "report.md").read_text("utf-8")
    scores = (tmp_path / "out" / "scores.csv").read_text("utf-8")
    point = re.compile(r"\b\d+\.\d+\b")
    comma = re.compile(r"\b\d+,\d+\b")
    score_lines = [line for line in report.splitlines() if re.search(r"\d / \d", line)]
    assert score_lines and not [line for line in score_lines if point.search(line)]
    assert any(comma.search(line) for line in score_lines)
    cells = [c for row in list(csv.reader(io.StringIO(scores)))[1:] for c in row[2:] if c]
    assert any("." in c for c in cells)
    assert all(re.fullmatch(r"\d+(\.\d+)?", c) for c in cells), cells
    pages = sorted((tmp_path / "out" / "feedback").glob("*.html"))
    assert pages
    for page in pages:
        body = re.sub(r"<[^>]+>", " ", page.read_text("utf-8"))
        headline = next(line for line in body.splitlines() if "Punktzahl" in line)
        assert not point.search(headline), headline
