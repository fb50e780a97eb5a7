"""Grading a mark-all-that-apply part: Moodle's multi-answer rule (each right option marked
earns 1/(number right), each wrong one costs 1/(number wrong), at least 0) or all or
nothing; responses.csv spells a set "B;D" (letters or texts), Moodle's Responses report
"opt1; opt2"."""

from __future__ import annotations

import json

from tests.unit.grading.test_mark_all_grading import _letters


def test_the_feedback_page_names_every_right_option_after_a_partial_answer(key, tmp_path):
    from click.testing import CliRunner

    from worksheetgen.cli import main

    (tmp_path / "key.json").write_text(json.dumps(key), encoding="utf-8")
    q = key["sheets"][0]["questions"][0]
    right = q["answer"]["marked"]
    letters = _letters(key, 0, right)
    (tmp_path / "r.csv").write_text(
        f"student,question,answer,entry,value\nmark-all-quiz,ma-mask,marked,,{letters[0]}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        main,
        [
            "grade",
            "--key",
            str(tmp_path / "key.json"),
            str(tmp_path / "r.csv"),
            "--out",
            str(tmp_path / "out"),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    page = (tmp_path / "out" / "feedback" / "mark-all-quiz.html").read_text(encoding="utf-8")
    assert "partly right" in page
    assert "The right options are " + letters[0] + ": " in page
    assert all(f"; {x}: " in page for x in letters[1:])
    assert "No named slip reproduces" not in page
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert f"key {';'.join(letters)}" in report
