"""No silent misread (#36 §1): answer sheets marked by the pen model of tests/scanpens.py
(ballpoint crosses and ticks, felt tip, light grainy pencil, stray dots, specks, a dot and a
speck in one box, boxes filled in to take a mark back), scanned at 150-300 dpi, turned and
scaled, as JPEG quality 40, JPEG, PNG and 1-bit dithered pages. Every part is read right or
flagged for a person (issues.csv, ``?`` in responses.csv), never misread; at most 3 % of the
parts marked with an ordinary pen are flagged."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import needs_tex
from tests.e2e.scan.builds import build_folder
from tests.scanpens import ORDINARY, run_mix

pytestmark = needs_tex
# the pens are tried on answer sheets of the bundled quiz, so many versions
PENS_ARGS = ("--scannable", "--answer-sheet", "--versions")


def _assert_no_silent_misread(tally, boxes: int) -> None:
    assert tally.boxes >= boxes
    assert tally.misreads == [], (tally.misreads, tally.table())
    # the model's every case was drawn and seen: the test can fail
    assert tally.parts(("pencil",)) > 0 and tally.total("right", ("correction",)) > 0
    assert tally.total("flagged", ("dot+speck", "dot", "correction-alone")) > 0
    ordinary = tally.parts(ORDINARY)
    assert ordinary > 0 and tally.total("flagged", ORDINARY) <= 0.03 * ordinary, tally.table()


def test_a_few_hundred_boxes_of_every_pen_are_read_right_or_flagged(tmp_path: Path):
    folder = build_folder(tmp_path / "build", *PENS_ARGS, "4", seed=5)
    tally = run_mix(folder, tmp_path / "scans", seed=1, sheets=list(range(4)), jobs=2)
    _assert_no_silent_misread(tally, 350)


@pytest.mark.slow
def test_thousands_of_boxes_of_every_pen_are_read_right_or_flagged(tmp_path: Path):
    folder = build_folder(tmp_path / "build", *PENS_ARGS, "40", seed=5)
    tally = run_mix(folder, tmp_path / "scans", seed=2, sheets=list(range(40)), jobs=0)
    _assert_no_silent_misread(tally, 3500)
