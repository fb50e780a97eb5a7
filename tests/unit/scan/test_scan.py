"""Scannable sheets and ``worksheetgen scan``, on synthetic scans of the project's own PDFs:
rendered at 150-300 dpi, boxes marked as a pen would, then turned, scaled, shifted,
blurred, noised, JPEG-compressed, on a grey background; a page upside down, one missing,
one twice. Every clearly planted mark must be read back; every unclear one listed."""

from __future__ import annotations

import random

import pytest

from tests.conftest import ROOT, needs_tex
from tests.scansynth import BOX_MM, box_sheet
from worksheetgen.scan.boxes import box_state
from worksheetgen.scan.layout import decode_cells, page_cells, score_values

pytestmark = needs_tex


def test_page_codes_read_back_and_refuse_others():
    for build, sheet, page in [(0, 0, 1), (65535, 4095, 63), (12345, 17, 5)]:
        cells = page_cells(build, sheet, page)
        assert decode_cells(cells) == (build, sheet, page)
        assert decode_cells(cells[::-1]) is None  # read upside down: not a code
        for i in range(len(cells)):  # any one cell misread: refused
            flipped = cells[:i] + ("1" if cells[i] == "0" else "0") + cells[i + 1 :]
            assert decode_cells(flipped) is None


def test_box_states_by_ink_and_spread():
    # (ink share, light ink share, spread, depth) -> state
    cases = {
        (0.0, 0.0, 0.0, 0.0): "empty",
        (0.01, 0.3, 0.95, 0.6): "marked",  # a thin scribble, blurred: little dark ink, spread
        (0.07, 0.08, 0.83, 0.5): "marked",  # the same, fainter
        (0.3, 0.4, 1.0, 1.0): "marked",
        (0.12, 0.15, 0.5, 0.5): "unclear",  # a stray dot: compact
        (0.35, 0.4, 0.6, 0.6): "unclear",  # a dark blob, compact
        (0.08, 0.08, 1.0, 0.08): "unclear",  # one line along the box's side
        (0.85, 0.9, 1.0, 1.0): "unclear",
        (0.97, 0.98, 1.0, 1.0): "taken-back",
    }
    assert {k: box_state(*k) for k in cases} == cases


def test_the_scanning_guide_states_the_reading_rules_in_use():
    from worksheetgen.scan import boxes, pages

    guide = (ROOT / "docs" / "guide" / "scanning.md").read_text("utf-8")
    rules = {
        "ink": (pages.INK_LEVEL, 1 - pages.FAINT_LEVEL),
        "table": (boxes.TAKEN_BACK, boxes.FULL, boxes.SPREAD, boxes.DEPTH),
    }
    for value in rules["ink"]:
        assert f"darker than {value * 100:.0f} %" in guide, value
    flat = " ".join(guide.split())  # the guide's lines joined
    assert f"no lighter than {(1 - pages.STROKE_FLOOR) * 100:.0f} %" in flat
    assert f"no darker than {(1 - pages.STROKE_LEVEL) * 100:.0f} %" in flat
    assert f"averaged over {pages.SMOOTH_MM:g} mm" in flat
    assert f"{pages.SMOOTH_1BIT_MM:g} mm on a 1-bit scan" in flat
    assert f"{pages.SPECK_MM2:g} mm² of black, that reach {pages.FAINT_SPAN * 100:.0f} %" in flat
    assert f"a dot's ink, {pages.DOT_MM2:g} mm²" in flat
    assert f"reach {'half' if pages.STROKE_SPAN == 0.5 else pages.STROKE_SPAN} across" in flat
    table = guide[guide.index("| what the box holds |") :]
    for value in rules["table"]:
        assert f"{value * 100:.0f} %" in table, value
    assert f"(under {boxes.EMPTY * 100:g} % of it)" in table


def _read_box_sheet(dpi: int, seed: int, kinds: list[str | None]) -> list[str]:
    import numpy as np

    from worksheetgen.scan.identify import load_page
    from worksheetgen.scan.pages import BOX_INSET_MM, Aligned, box_measures, ink_mask

    data, corners = box_sheet(dpi, kinds, random.Random(seed))
    image = load_page("sheet.jpg", "image", data, 0)
    px = dpi / 25.4
    page = Aligned(0, 0, 0, np.diag([px, px, 1.0]), ink_mask(image), image)
    measures = box_measures(page, np.array(corners), BOX_MM, BOX_INSET_MM)
    return [box_state(*map(float, m)) for m in measures]


@pytest.mark.slow
@pytest.mark.parametrize("dpi", [150, 200, 300])
def test_thin_scribbles_are_marks_and_stray_dots_are_never_read_as_marks(dpi: int):
    """A scribble of 3-4 thin strokes, blurred at 150 dpi, can have less dark ink than a
    stray dot: read by ink alone, one was empty or the other marked. Read by spread, every
    pen mark is marked, every dot unclear, every untouched box empty (1,200 boxes a dpi)."""
    want = {"fill": "marked", "tick": "marked", "cross": "marked", "faint": "unclear"}
    misreads = []
    for seed in range(4):
        rng = random.Random(seed)
        kinds = [rng.choice(["fill", "fill", "tick", "cross", "faint", None]) for _ in range(300)]
        for i, (kind, got) in enumerate(zip(kinds, _read_box_sheet(dpi, seed, kinds), strict=True)):
            if got != want.get(kind or "", "empty"):
                misreads.append((seed, i, kind, got))
    assert misreads == []


def _worker_signals_seen(task):
    import signal

    return (
        signal.getsignal(signal.SIGTERM) is signal.SIG_DFL,
        signal.getsignal(signal.SIGINT) is signal.SIG_IGN,
    )


def test_scan_workers_die_at_once_on_sigterm_whatever_the_parents_handler(monkeypatch):
    """The command line turns SIGTERM into KeyboardInterrupt; the pool's workers inherited
    it, and the pool's exit (SIGTERM to every worker) once left a worker waiting forever on
    the task queue's lock that another, stopped by the exception, still held."""
    import signal

    from worksheetgen.scan import identify

    def raising(signum, frame):
        raise KeyboardInterrupt

    monkeypatch.setattr(identify, "_read_page", _worker_signals_seen)
    previous = signal.signal(signal.SIGTERM, raising)
    try:
        seen = list(identify._read_all(object(), [("p", "png", i) for i in range(6)], 2))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == [(True, True)] * 6


def test_an_issue_names_a_score_box_as_the_sheet_labels_it():
    from worksheetgen.scan.boxes import _box_name

    assert _box_name({"mark": "5/2"}) == "box 2.5"
    assert _box_name({"mark": "9/5"}) == "box 1.8"
    assert _box_name({"mark": "3"}) == "box 3"
    assert _box_name({"option": "B"}) == "option B"


@pytest.mark.parametrize(
    ("points", "boxes"),
    [
        ("1", "0 0.5 1"),
        ("2.5", "0 0.5 1 1.5 2 2.5"),
        ("4", "0 0.5 1 1.5 2 2.5 3 3.5 4"),
        ("0.75", "0 0.25 0.5 0.75"),
        ("0.5", "0 0.25 0.5"),
        ("1.4", "0 0.2 0.4 0.6 0.8 1 1.2 1.4"),
        ("0.3", "0 0.1 0.2 0.3"),
        ("1.8", "0 0.5 1 1.5 1.8"),
        ("5/3", "0 0.5 1 1.5 5/3"),
        ("4.5", "0 1 2 3 4 4.5"),
        ("6", "0 1 2 3 4 5 6"),
    ],
)
def test_score_boxes_offer_part_marks_by_the_one_rule_the_guide_states(points, boxes):
    """Parts of 1.4 and 0.75 points had no box between 0 and all (0, 1, 1.4; 0, 0.75)
    although the guide promised halves up to 4 points: one rule, stated in the guide with
    these very examples."""
    from fractions import Fraction as F

    from worksheetgen.scan.layout import value_text

    assert " ".join(value_text(v) for v in score_values(F(points))) == boxes
    guide = (ROOT / "docs" / "guide" / "scanning.md").read_text("utf-8")
    said = " ".join(guide.split())
    for example in ("1 point: 0, 0.5, 1", "0.75: 0, 0.25, 0.5, 0.75", "1.4: 0, 0.2, 0.4, …, 1.4"):
        assert example in said
    for example in ("1.8: 0, 0.5, 1, 1.5, 1.8", "4.5: 0, 1, 2, 3, 4, 4.5"):
        assert example in said
