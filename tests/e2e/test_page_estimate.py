"""How close `check`'s page count (render/pagefit.py, no TeX) comes to what pdfLaTeX sets:
every bundled bank and two realistic quizzes, built as twelve versions on A4 and on Letter,
plain and scannable; each sheet's real count read from its first page's footer ("Page 1 of
N"). Per bank, at least 80% of the sheets are counted exactly and none is off by more than a
page (docs/guide/checking.md says how close it came when it was calibrated)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests import paths
from tests.e2e.test_page_counts import sheet_pages
from worksheetgen.pipeline.build import BuildOptions, build
from worksheetgen.pipeline.pages import draw_versions, page_counts

pytestmark = [
    pytest.mark.tex,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("pdflatex") is None, reason="TeX is not installed"),
    pytest.mark.skipif(shutil.which("pdftotext") is None, reason="no pdftotext"),
]

BANKS = sorted((paths.ROOT / "banks").glob("*.yaml")) + [
    paths.FIXTURES / "midterm.yaml",
    paths.FIXTURES / "quiz9-letter.yaml",
]
SEED = 3
VERSIONS = 12


@pytest.mark.parametrize("bank", BANKS, ids=lambda p: p.stem)
def test_the_page_count_matches_pdflatex(tmp_path: Path, bank: Path) -> None:
    drawn = draw_versions(BuildOptions(seed=SEED, banks=(str(bank),)), VERSIONS)
    misses = []
    exact = total = 0
    for paper in ("a4", "letter"):
        for scannable in (False, True):
            out = tmp_path / f"{paper}-{scannable}"
            result = build(
                BuildOptions(
                    seed=SEED,
                    banks=(str(bank),),
                    out=str(out),
                    paper=paper,
                    versions=VERSIONS,
                    scannable=scannable,
                )
            )
            real = sheet_pages(result.folder)
            estimated = page_counts(drawn, paper, scannable)
            for sheet, counted in zip(drawn.sheets, estimated, strict=True):
                actual = real[f"{sheet.id}-sheet.pdf"]
                total += 1
                exact += counted == actual
                if counted != actual:
                    misses.append((paper, scannable, sheet.id, counted, actual))
    assert all(abs(c - a) <= 1 for *_, c, a in misses), misses
    assert exact >= 0.8 * total, (exact, total, misses)
