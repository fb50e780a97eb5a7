"""The tables of a sheet and a key as they print: the slip fingerprints at the size of the
text around them, in rows that break across pages; the row labels of a table to fill in in
the middle of their rows.

A behaviour across modules, not one module's tests (pipeline.build)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from worksheetgen.pipeline.build import BuildOptions, build

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="TeX is not installed")
needs_poppler = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="no pdftotext")

BANK = """\
sheet: {id: tables, title: Tables}
questions:
  - id: mask
    family: causal
    params: {T: 3}
"""

_WORD = re.compile(
    r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>'
)


def _words(pdf: Path) -> list[tuple[float, float, float, float, str]]:
    """Every word of the PDF's first page with its box (points, y down)."""
    out = subprocess.run(
        ["pdftotext", "-bbox", "-f", "1", "-l", "1", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [(float(a), float(b), float(c), float(d), w) for a, b, c, d, w in _WORD.findall(out)]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("tables")
    bank = tmp / "bank.yaml"
    bank.write_text(BANK, encoding="utf-8")
    return build(BuildOptions(seed=3, banks=(str(bank),), out=str(tmp / "out"))).folder


@needs_tex
@needs_poppler
def test_the_slip_fingerprints_print_at_a_readable_size(built):
    words = _words(built / "key.pdf")
    text = [w[4] for w in words]
    start = text.index("fingerprints.")
    end = text.index("Worked") if "Worked" in text else len(text)
    numbers = [w for w in words[start:end] if re.fullmatch(r"\d\.\d\d", w[4])]
    assert len(numbers) >= 9 * 3  # the correct table and at least two slips', 3 x 3 each
    # the numbers' height is about their font size: the text's small size (10 pt), not a
    # script size (8 pt or less)
    assert min(y1 - y0 for _, y0, _, y1, _ in numbers) > 9.0


@needs_tex
@needs_poppler
def test_a_row_label_sits_in_the_middle_of_its_row(built):
    words = _words(built / "sheet.pdf")
    # the first table of the page, at the left (narrow tables stand two to a line)
    left = min(w[0] for w in words if w[4] == "query")
    keys = [w for w in words if w[4] == "key" and w[0] < 595 / 2]
    header = min(w[3] for w in keys)  # the column labels' foot: the table's top row starts
    labels = sorted(
        (y0 + y1) / 2
        for (x0, y0, _, y1, w), nxt in zip(words, words[1:], strict=False)
        if w == "query" and nxt[4] in ("1", "2") and abs(x0 - left) < 2
    )[:2]
    assert len(labels) >= 2
    pitch = labels[1] - labels[0]  # one row's height
    first = labels[0] - header  # the first label's middle, below the header's foot
    # in the middle of the row: half a pitch below its top, which is the header row's depth
    # below the column labels' foot (about a quarter of a pitch in the exam layout's taller
    # rows); a label at its row's foot would stand a whole pitch and that depth below
    assert 0.35 * pitch < first < 0.85 * pitch
