"""``scan`` hands its responses to the grader as records (issue 35 §2), not through a CSV
round trip: ``responses_of_rows`` reads the rows exactly as ``parse_responses`` reads the
same rows written to responses.csv as scan writes it: the same answers, marks and students,
or the same errors on the same lines."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from worksheetgen.errors import GradeError
from worksheetgen.grading.key import GradeKey, grade_key
from worksheetgen.grading.responses import (
    ROW_COLUMNS,
    ResponseRow,
    Responses,
    parse_responses,
    responses_of_rows,
)
from worksheetgen.keyjson.read import load_key


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> GradeKey:
    from worksheetgen.cli import main

    out = tmp_path_factory.mktemp("key")
    try:
        main(["build", "--seed", "42", "--versions", "3", "--no-pdf", "-q", "--out", str(out)])
    except SystemExit as exc:
        assert exc.code in (0, None)
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return grade_key(load_key(Path(folder / "key.json")))


def _as_scan_writes(rows: list[ResponseRow]) -> str:
    """responses.csv's text, as scan writes it."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(ROW_COLUMNS)
    for row in rows:
        w.writerow(row.cells())
    return buf.getvalue()


def _both(rows: list[ResponseRow], key: GradeKey) -> tuple[Responses | str, Responses | str]:
    """What each path reads of ``rows``: the responses, or the error's text."""

    def read(how):
        try:
            return how()
        except GradeError as exc:
            return str(exc)

    text = _as_scan_writes(rows)
    return (
        read(lambda: responses_of_rows(rows, key, "out/responses.csv", unanswered=True)),
        read(lambda: parse_responses(text, key, "out/responses.csv", unanswered=True)),
    )


def _class_rows(key: GradeKey) -> list[ResponseRow]:
    """Every part of the first two sheets: marks (given, to give, words), options picked,
    values left blank."""
    marks = ["1", "?", "r", "x", "0", "0.5"]
    rows = []
    for s, sheet in enumerate(key.sheets[:2]):
        for q in sheet.questions:
            for k, a in enumerate(q.answers):
                if a.kind == "choice":
                    value = a.options[k % len(a.options)] if s == 0 else ""
                    rows.append(ResponseRow(sheet.id, q.id, a.name, value=value))
                else:
                    rows.append(ResponseRow(sheet.id, q.id, a.name, mark=marks[k % len(marks)]))
    return rows


def test_records_read_as_the_csv_scan_writes_them(key):
    rows = _class_rows(key)
    assert any(r.mark == "?" for r in rows) and any(r.value for r in rows)
    records, written = _both(rows, key)
    assert isinstance(records, Responses)
    assert records == written
    assert [s.responded for s in records.students] == [True, True, False]


def test_nothing_marked_is_read_as_the_csv_reads_it(key):
    rows = [ResponseRow(r.student, r.question, r.answer) for r in _class_rows(key)]
    records, written = _both(rows, key)
    assert isinstance(records, Responses) and records == written
    assert not any(s.responded for s in records.students)
    assert _both([], key)[0] == _both([], key)[1]


def test_bad_rows_are_the_same_errors_on_the_same_lines(key):
    """Ids a spreadsheet would run (protected, then read back), a line break inside a cell
    (the lines after it count it), a question the key does not have, a mark too large."""
    sheet = key.sheets[0]
    q = sheet.questions[0]
    rows = [
        ResponseRow(sheet.id, q.id, q.answers[0].name, mark="1"),
        ResponseRow("=1+1", q.id, q.answers[0].name, mark="1"),
        ResponseRow("'quoted", "two\nlines", q.answers[0].name, mark="1"),
        ResponseRow(sheet.id, "no-such-question", "a", mark="1"),
        ResponseRow(sheet.id, q.id, q.answers[0].name, mark="999"),
        ResponseRow("\tA", q.id, q.answers[0].name, mark="1"),
        ResponseRow(" ", "", ""),  # a blank row: skipped, still a line
        ResponseRow(sheet.id, q.id, "no-such-answer", mark="1"),
    ]
    records, written = _both(rows, key)
    assert isinstance(records, str), records
    assert records == written
    lines = records.splitlines()
    assert len(lines) == 6
    assert [line.split(": ")[0:2] for line in lines] == [
        ["out/responses.csv:3", "student"],  # =1+1, read back as written
        ["out/responses.csv:4", "student"],  # 'quoted, on lines 4 and 5
        ["out/responses.csv:6", "question"],
        ["out/responses.csv:7", "mark"],
        ["out/responses.csv:8", "student"],  # a tab first, kept as a spreadsheet cell
        ["out/responses.csv:10", "answer"],  # after the blank line 9
    ]
