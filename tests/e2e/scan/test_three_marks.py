"""A page with one corner mark lost (cut off, torn, stapled over, off the scanner's glass)
is identified from the other three and read as a whole one is; with two lost, or three that
do not lie as the printed page puts them, it is not (listed for a person, never guessed)."""

from __future__ import annotations

import io
import random

import numpy as np
import pytest
from PIL import Image, ImageDraw

from tests.conftest import ROOT, needs_tex
from tests.scansynth import distort, render
from worksheetgen.scan.layout import MARK_MM, mark_centres
from worksheetgen.scan.pages import align

pytestmark = needs_tex


QUIZ = str(ROOT / "banks" / "quiz.yaml")


DPI = 150


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> list[Image.Image]:
    from worksheetgen.cli import main

    out = tmp_path_factory.mktemp("three")
    try:
        main(["build", "--seed", "4", "--bank", QUIZ, "--out", str(out), "-q", "--scannable"])
    except SystemExit as exc:
        assert exc.code in (0, None)
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return render(folder / "sheet.pdf", DPI)


def _without(image: Image.Image, corners: list[int], paper: str = "a4") -> Image.Image:
    """The page with the corner marks named (0 top left .. 3 bottom right) painted white,
    with a margin around each, as a cut or a torn corner leaves it."""
    px = DPI / 25.4
    out = image.copy()
    draw = ImageDraw.Draw(out)
    for i in corners:
        x, y = mark_centres(paper)[i]
        r = MARK_MM * px
        draw.rectangle([x * px - r, y * px - r, x * px + r, y * px + r], fill=255)
    return out


def _grey(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("L"))


@pytest.mark.parametrize("lost", [0, 1, 2, 3])
def test_a_page_with_one_corner_mark_lost_is_identified_and_aligned(pages, lost) -> None:
    whole = align(np.asarray(pages[0]), "a4")
    assert whole is not None
    for seed in range(3):
        scan = _grey(distort(_without(pages[0], [lost]), random.Random(seed), jpeg=True))
        page = align(scan, "a4")
        assert page is not None, (lost, seed)
        assert (page.build, page.sheet, page.page) == (whole.build, whole.sheet, whole.page)
        # the inferred corner lands where the same scan of the whole page has its mark
        same = align(_grey(distort(pages[0], random.Random(seed), jpeg=True)), "a4")
        assert same is not None
        corner = np.array([mark_centres("a4")[lost]])
        px_per_mm = scan.shape[1] / 210
        gap = np.hypot(*(page.to_pixels(corner)[0] - same.to_pixels(corner)[0]))
        assert gap < 0.5 * px_per_mm, (lost, seed, gap)


def test_a_page_upside_down_with_a_corner_lost_is_still_read(pages) -> None:
    scan = _grey(distort(_without(pages[1], [3]), random.Random(7), upside_down=True))
    page = align(scan, "a4")
    whole = align(np.asarray(pages[1]), "a4")
    assert page is not None and whole is not None
    assert (page.sheet, page.page) == (whole.sheet, whole.page)


def test_two_corner_marks_lost_leave_the_page_unidentified(pages) -> None:
    scan = _grey(distort(_without(pages[0], [0, 3]), random.Random(1)))
    assert align(scan, "a4") is None
