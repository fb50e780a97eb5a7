"""LMS round trip, round two (issue 22, the export side), checked by parsing back the exports.

- a pooled quiz deals only what the bank's pool allows: every question set the exported
  structure (categories and how many random questions each says to add; Canvas groups and
  their picks) permits is a set some sheet printed, distinct alternatives, one version each;
- each student's maximum in the LMS is their printed sheet's total, or the export refuses the
  slot with one line naming it;
- gap weights (and Canvas blank shares) follow the sheet's part points for every question,
  a plain ``points: N`` split equally among the answers as the sheet and ``grade`` split it;
- GIFT questions carry the key as general feedback, and marks a person can type;
- a Canvas blank whose value is 0 accepts the leading ``+`` every item promises.
"""

from __future__ import annotations

import pytest

from tests.unit.export.test_pools_points_and_feedback import _build, _quiz
from worksheetgen.cli import main


@pytest.mark.parametrize("fmt", ["moodle", "qti", "gift"])
def test_a_pool_whose_sheets_differ_in_points_is_refused_with_one_line(runner, tmp_path, fmt):
    # the real run: attention-slot's alternatives are worth 6, 4 and 5 points
    folder = _build(tmp_path / "o", _quiz(tmp_path / "quiz.yaml"), 4)
    out = tmp_path / "x"
    result = runner.invoke(
        main, ["export", "--to", fmt, "--key", str(folder / "key.json"), "--out", str(out)]
    )
    assert result.exit_code == 1
    line = result.output.strip()
    assert "\n" not in line and "Traceback" not in line and not out.exists()
    assert "pool attention-slot: expected every sheet's graded points for it to be equal" in line
    assert "got 4, 5, 6: give its alternatives equal points" in line


def test_a_pick_2_pool_of_unequal_sets_is_refused(runner, tmp_path):
    # attention-slot equal now; shapes' sets are worth 2 or 3 (q-cross-mc is worth 2)
    folder = _build(tmp_path / "o", _quiz(tmp_path / "quiz.yaml", 5, 2, 5), 4)
    for fmt in ("moodle", "qti"):
        result = runner.invoke(
            main, ["export", "--to", fmt, "--key", str(folder / "key.json"), "--out", "-"]
        )
        assert result.exit_code == 1
        assert "pool shapes: expected every sheet's graded points for it to be equal" in (
            result.output
        )
