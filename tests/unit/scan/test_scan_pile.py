"""Any pile of pages (issue 36, section 2): a pile where nothing is marked is graded like
any other (no totals, never zeros), blank backs with dust, a scanner's edge or 1-bit
dithering are blank pages while pages with print but no code are not, and the pages are
streamed (memory does not grow with the pile).

A behaviour across modules, not one module's tests (errors, scan.identify, scan.images,
scan.pages)."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest


def _decoded(data: bytes):
    from worksheetgen.scan.identify import load_page
    from worksheetgen.scan.images import kind_of

    return load_page("page", kind_of(data) or "png", data, 0)


@pytest.mark.slow
@pytest.mark.parametrize("dpi", [150, 200, 300])
def test_blank_backs_with_dust_edges_dithering_or_dirt_are_blank(dpi: int):
    """Issue 36: 9 of 32 such backs were unidentified pages (every 1-bit one: its dithered
    noise was ink; a scanner's dark edge; dust). Each kind, moved and noised as a copier
    does, in PNG, JPEG and 1-bit (PNG and CCITT TIFF)."""
    from PIL import Image

    from tests.scansynth import blank_back, dark_edge, distort, encoded
    from worksheetgen.scan.pages import is_blank

    rng = random.Random(dpi)
    missed = []
    for kind in ("dust", "dirty", "grey", "edge"):
        for fmt in ("png", "jpeg", "1bit", "1bit-tiff"):
            image = blank_back(dpi, kind, rng)
            image = Image.open(io.BytesIO(distort(image, rng, jpeg=False)))
            if kind == "edge":
                image = dark_edge(image, dpi, rng)
            if not is_blank(_decoded(encoded(image, fmt, rng)), "a4"):
                missed.append((kind, fmt))
    assert missed == []


def test_a_streamed_scan_changed_during_the_run_is_one_line(tmp_path: Path):
    """A page's file is opened again when decoded: it must be the file checked at the start."""
    from worksheetgen.errors import ScanError
    from worksheetgen.scan.images import check_scan, open_scan

    page = tmp_path / "p.png"
    page.write_bytes(b"\x89PNG first")
    kind, scan = check_scan(str(page))
    assert kind == "png"
    with open_scan(scan) as fh:
        assert fh.read() == b"\x89PNG first"
    page.write_bytes(b"\x89PNG second, longer")
    with pytest.raises(ScanError, match="p.png: expected the scan as it was when the run began"):
        open_scan(scan)
