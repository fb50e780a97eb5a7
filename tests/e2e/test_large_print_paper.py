"""Large print on paper (issue 37 §2): every bundled bank and the midterm built in large print
on A4 and on Letter, read back from the PDFs as a reader meets them: no word over another
or in the margins, no ink in the side margins (a table run off the text leaves its rules
there), the body at least 14 pt (its words 1.28 times as wide as a standard sheet's), every
table's cells at least 1.28 times as wide and as tall as the standard sheet's; a roster's
large_print column changes only that student's pages; the page model's count within a
page of what pdfLaTeX sets."""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
from pathlib import Path

import pytest

from tests import paths
from tests.e2e.test_page_counts import sheet_pages
from tests.pagewords import Word, faults, pages
from worksheetgen.pipeline.build import BuildOptions, build
from worksheetgen.pipeline.pages import draw_versions, page_counts
from worksheetgen.render.pagefit import LARGE_SCALE, LARGE_SIDE_MM

pytestmark = [
    pytest.mark.tex,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("pdflatex") is None, reason="TeX is not installed"),
    pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="no poppler"),
]

BANKS = sorted((paths.ROOT / "banks").glob("*.yaml")) + [paths.FIXTURES / "midterm.yaml"]
SEED = 5
VERSIONS = 3
BODY_PT = 10.95  # 11pt article's \normalsize


def _build(tmp: Path, bank: Path, paper: str, large: bool) -> Path:
    return build(
        BuildOptions(
            seed=SEED,
            banks=(str(bank),),
            out=str(tmp / f"{paper}-{large}"),
            paper=paper,
            versions=VERSIONS,
            large_print=large,
        )
    ).folder


def _ink_in_side_margins(pdf: Path, tmp: Path, margin_mm: float) -> list[str]:
    """The pages with ink (darker than light grey) in the outer ``margin_mm`` of either side."""
    import numpy as np
    from PIL import Image

    dpi = 40
    folder = tmp / f"png-{pdf.stem}"
    folder.mkdir()
    subprocess.run(["pdftoppm", "-gray", "-png", "-r", str(dpi), str(pdf), str(folder / "p")])
    strip = int(margin_mm / 25.4 * dpi)
    found = []
    for page in sorted(folder.glob("*.png")):
        grey = np.asarray(Image.open(page))
        if (grey[:, :strip] < 200).any() or (grey[:, -strip:] < 200).any():
            found.append(page.name)
    return found


def _widths(pdf: Path) -> dict[str, float]:
    """Each word of a document (letters only, three or more) and its narrowest printing."""
    found: dict[str, float] = {}
    for _, _, words in pages(pdf):
        for w in words:
            if re.fullmatch(r"[a-z]{3,}", w.text):
                found[w.text] = min(found.get(w.text, 1e9), w.x1 - w.x0)
    return found


def _cells(pdf: Path) -> tuple[float, float]:
    """The narrowest and the shortest answer cell of a document's tables: the distance from
    one column's label ("key 1") to the next's on its line, and from one row's label
    ("query 1") to the next's below it."""
    across, down = [], []
    for _, _, words in pages(pdf):
        labels: list[tuple[str, Word]] = []
        for a, b in zip(words, words[1:], strict=False):
            if re.fullmatch(r"\d", b.text) and re.fullmatch(r"[a-z]+", a.text):
                labels.append((f"{a.text} {b.text}", a))
        for (ta, a), (tb, b) in zip(labels, labels[1:], strict=False):
            na, nb = ta.split(), tb.split()
            if na[0] != nb[0] or int(nb[1]) != int(na[1]) + 1:
                continue
            if abs(a.y0 - b.y0) < 1 and b.x0 > a.x0:
                across.append(b.x0 - a.x0)
            elif abs(a.x0 - b.x0) < 1 and b.y0 > a.y0:
                down.append(b.y0 - a.y0)
    assert across and down, f"{pdf.name}: no table labels found"
    return min(across), min(down)


@pytest.mark.parametrize("paper", ["a4", "letter"])
@pytest.mark.parametrize("bank", BANKS, ids=lambda p: p.stem)
def test_large_print_sheets_fit_the_page_at_14pt(tmp_path: Path, bank: Path, paper: str) -> None:
    large = _build(tmp_path, bank, paper, True)
    standard = _build(tmp_path, bank, paper, False)
    big, small = large / "sheets.pdf", standard / "sheets.pdf"
    assert faults(big) == []
    # the text block's margins are 15 mm: nothing in the outer 14 mm, rules included
    assert _ink_in_side_margins(big, tmp_path, LARGE_SIDE_MM - 1.0) == []
    # the body: the same words, 1.28 times as wide as 10.95pt's (14pt)
    wide, narrow = _widths(big), _widths(small)
    ratio = statistics.median(wide[w] / narrow[w] for w in wide.keys() & narrow.keys())
    assert ratio == pytest.approx(LARGE_SCALE, abs=0.01)
    assert BODY_PT * ratio >= 14.0
    # every answer cell grows as much: its width and height at least 1.27 times the
    # standard sheet's narrowest and shortest
    (w_big, h_big), (w_small, h_small) = _cells(big), _cells(small)
    assert w_big >= 1.27 * w_small and h_big >= 1.27 * h_small, (w_big, h_big, w_small, h_small)
    # the page model knows the large-print text block: within a page of pdfLaTeX's count
    drawn = draw_versions(BuildOptions(seed=SEED, banks=(str(bank),)), VERSIONS)
    real = sheet_pages(large)
    counted = page_counts(drawn, paper, large=True)
    for sheet, count in zip(drawn.sheets, counted, strict=True):
        assert abs(real[f"{sheet.id}-sheet.pdf"] - count) <= 1, (sheet.id, count, real)


def _page_images(pdf: Path, folder: Path) -> list[bytes]:
    folder.mkdir()
    subprocess.run(["pdftoppm", "-png", "-r", "30", str(pdf), str(folder / "p")], check=True)
    return [p.read_bytes() for p in sorted(folder.glob("*.png"))]


def test_a_roster_column_makes_only_that_students_sheet_large(tmp_path: Path) -> None:
    bank = str(paths.ROOT / "banks" / "default.yaml")
    rosters = {
        "plain": "name,id\nAda Lovelace,a1\nBob,b1\n",
        "large": "name,id,large_print\nAda Lovelace,a1,yes\nBob,b1,no\n",
    }
    folders = {}
    for name, text in rosters.items():
        roster = tmp_path / f"{name}.csv"
        roster.write_text(text, encoding="utf-8")
        folders[name] = build(
            BuildOptions(seed=SEED, banks=(bank,), out=str(tmp_path / name), roster=str(roster))
        ).folder
    plain, large = folders["plain"] / "students", folders["large"] / "students"
    # Bob's sheet and both keys: the same pages; Ada's sheet: larger
    for pdf in ("b1-sheet.pdf", "a1-key.pdf", "b1-key.pdf"):
        assert _page_images(plain / pdf, tmp_path / f"p-{pdf}") == _page_images(
            large / pdf, tmp_path / f"l-{pdf}"
        ), pdf
    wide, narrow = _widths(large / "a1-sheet.pdf"), _widths(plain / "a1-sheet.pdf")
    ratio = statistics.median(wide[w] / narrow[w] for w in wide.keys() & narrow.keys())
    assert ratio == pytest.approx(LARGE_SCALE, abs=0.01)
    assert faults(large / "a1-sheet.pdf") == []

    # Bob's part of the class's LaTeX is the same text
    def bob(folder: Path) -> str:
        tex = (folder / "sheets.tex").read_text("utf-8")
        return tex[tex.index("{Bob}") : tex.index("\\wsendsheet", tex.index("{Bob}"))]

    assert bob(folders["plain"]) == bob(folders["large"])
