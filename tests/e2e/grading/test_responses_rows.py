"""A responses CSV of a million rows is refused by its row limit at once (issue 33,
section 6: it was read for more than a minute)."""

from __future__ import annotations

import time

import pytest

from worksheetgen.errors import GradeError
from worksheetgen.report.grade import grade_files


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory):
    from worksheetgen.cli import main

    out = tmp_path_factory.mktemp("key")
    try:
        main(["build", "--seed", "42", "--no-pdf", "-q", "--out", str(out)])
    except SystemExit as exc:
        assert exc.code in (0, None)
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return folder / "key.json"


def test_a_million_rows_are_refused_from_the_line_count_at_once(key, tmp_path):
    responses = tmp_path / "responses.csv"
    responses.write_text(
        "student,question,answer,entry,value\n" + "s1,q1,a,,1\n" * 1_000_000, "utf-8"
    )
    start = time.monotonic()
    with pytest.raises(GradeError) as caught:
        grade_files(key, responses, tmp_path / "out")
    assert time.monotonic() - start < 1.0
    assert str(caught.value).startswith(f"{responses}: expected at most 100,000 lines")
    assert "got 1,000,002" in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_a_file_within_the_limit_is_read_as_before(key, tmp_path):
    """Just under the limit: read (and refused for what its rows say, not their count)."""
    responses = tmp_path / "responses.csv"
    rows = 100_000 - 2  # the limit (MIN_RESPONSE_LINES), header and last line
    responses.write_text("student,question,answer,entry,value\n" + "s1,q1,a,,1\n" * rows, "utf-8")
    with pytest.raises(GradeError) as caught:
        grade_files(key, responses, tmp_path / "out")
    assert "lines (2 for each entry" not in str(caught.value)
