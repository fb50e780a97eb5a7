"""A copier's PDF and a multi-page TIFF are streamed (issue 36, section 2): a page is decoded
from its file, opened again when it is read, so memory does not grow with the pile (the whole
file was held while the run lasted: 2,000 pages of a copier would not fit), and each page
decodes to the same image as from the file's bytes in memory."""

from __future__ import annotations

import io
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, needs_tex
from tests.scansynth import distort, render

QUIZ = str(ROOT / "banks" / "quiz.yaml")

pytestmark = needs_tex


def _pages(quiz: Path, dpi: int) -> list:
    """The sheet's pages as a copier scans them (turned, scaled, blurred, noised), grey."""
    from PIL import Image

    rng = random.Random(4)
    return [
        Image.open(io.BytesIO(distort(page, rng, upside_down=i == 1, jpeg=False)))
        for i, page in enumerate(render(quiz / "sheet.pdf", dpi))
    ]


def _save(pages: list, path: Path, **options) -> None:
    pages = [page.copy() for page in pages]  # a save leaves its options on the images
    pages[0].save(path, save_all=True, append_images=pages[1:], **options)


def test_each_page_from_its_file_is_the_page_from_the_files_bytes(quiz: Path, tmp_path: Path):
    """The pages PDFium and Pillow read from the file, a piece at a time, are byte for byte
    the pages they read from the whole file held in memory (as every scan was read before)."""
    import numpy as np

    from worksheetgen.scan.images import check_scan, page_count, read_page

    pages = _pages(quiz, 150)
    files = {
        "pdf": tmp_path / "copier.pdf",
        "lzw.tif": tmp_path / "lzw.tif",
        "raw.tif": tmp_path / "raw.tif",
    }
    _save(pages, files["pdf"], format="PDF", resolution=150)
    _save(pages, files["lzw.tif"], format="TIFF", compression="tiff_lzw")
    _save(pages, files["raw.tif"], format="TIFF")
    for name, path in files.items():
        kind, scan = check_scan(str(path))
        data = path.read_bytes()
        count = page_count(str(path), kind, scan, 100)
        assert count == page_count(str(path), kind, data, 100) == len(pages) > 2, name
        for i in range(count):
            streamed = read_page(str(path), kind, scan, i)
            held = read_page(str(path), kind, data, i)
            assert streamed.dtype == held.dtype and np.array_equal(streamed, held), (name, i)


def test_a_pile_changed_during_the_run_is_one_line_naming_it(quiz: Path, tmp_path: Path):
    """A page is read from the file checked at the start: a PDF written again since (another
    pile under the same name) is refused, never read as the pile that was counted."""
    from worksheetgen.errors import ScanError
    from worksheetgen.scan.images import check_scan, read_page

    pages = _pages(quiz, 100)
    pile = tmp_path / "copier.pdf"
    _save(pages, pile, format="PDF", resolution=100)
    kind, scan = check_scan(str(pile))
    read_page(str(pile), kind, scan, 1)
    _save(pages[::-1], pile, format="PDF", resolution=100)
    with pytest.raises(ScanError) as caught:
        read_page(str(pile), kind, scan, 1)
    assert str(caught.value) == (
        f"{pile}: expected the scan as it was when the run began, got a file changed since"
    )
    pile.unlink()
    with pytest.raises(ScanError, match="when the run began, got no such file any more"):
        read_page(str(pile), kind, scan, 0)


# the process's own peak (VmHWM: getrusage's maxrss keeps the peak of the process it was
# forked from, across exec)
_PEAK = """
import sys
from worksheetgen.scan.run import scan_files
result = scan_files(sys.argv[3:], sys.argv[1], sys.argv[2])
assert result.pages == int(sys.argv[3].rsplit("-", 1)[1].split(".")[0]), result.pages
status = open("/proc/self/status").read().split("VmHWM:")[1]
print(status.split()[0])
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux's /proc")
def test_a_copier_pdf_and_a_multi_page_tiff_are_streamed_not_held(quiz: Path, tmp_path: Path):
    """A PDF of 40 pages (1.9 MB each) and a TIFF of 40 (4.5 MB each) take no more memory
    to scan than ones of 8 (0.2 MB more): the whole file was held (112 and 282 MB more for
    the 32 pages more; a regression of 1 MB a page shows)."""
    page = _pages(quiz, 200)[0]
    for fmt, options in (("pdf", {"quality": 95, "resolution": 200}), ("tif", {})):
        peaks, sizes = [], []
        for n in (8, 40):
            pile = tmp_path / f"pile-{n}.{fmt}"
            _save([page] * n, pile, format="PDF" if fmt == "pdf" else "TIFF", **options)
            sizes.append(pile.stat().st_size / 1e6)
            run = subprocess.run(
                [sys.executable, "-c", _PEAK, str(quiz / "key.json"), str(tmp_path / f"out{n}")]
                + [str(pile)],
                capture_output=True,
                text=True,
            )
            assert run.returncode == 0, run.stderr[-2000:]
            peaks.append(int(run.stdout.split()[-1]) / 1024)  # MB
        assert sizes[1] - sizes[0] > 55, (fmt, sizes)  # what holding the file would add
        assert peaks[1] - peaks[0] < 30, (fmt, peaks)
