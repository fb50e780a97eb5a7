"""A page with one corner mark lost (cut off, torn, stapled over, off the scanner's glass)
is identified from the other three and read as a whole one is; with two lost, or three that
do not lie as the printed page puts them, it is not (listed for a person, never guessed).

A behaviour across modules, not one module's tests (scan.layout, scan.pages)."""

from __future__ import annotations

import numpy as np

from tests.conftest import needs_tex
from worksheetgen.scan.layout import mark_centres
from worksheetgen.scan.pages import _four_corners

pytestmark = needs_tex


def test_three_marks_that_do_not_lie_as_the_page_puts_them_make_no_fourth() -> None:
    printed = np.array(mark_centres("a4"), dtype=float)
    scale = 150 / 25.4
    seen = [tuple(p) for p in printed * scale]
    assert _four_corners(seen, printed) is not None  # all four: as found
    lost = [None, *seen[1:]]
    inferred = _four_corners(lost, printed)
    assert inferred is not None and np.allclose(inferred[0], seen[0])
    sheared = [None, seen[1], (seen[2][0] + 60, seen[2][1]), seen[3]]  # not a right angle
    assert _four_corners(sheared, printed) is None
    stretched = [None, seen[1], seen[2], (seen[3][0], seen[3][1] * 1.2)]  # sides unlike
    assert _four_corners(stretched, printed) is None
    assert _four_corners([None, None, seen[2], seen[3]], printed) is None
