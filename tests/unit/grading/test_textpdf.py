"""The feedback pages' PDF fonts: cut fast, and to the same font fontTools' subsetter makes."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fontTools.ttLib import TTFont

from worksheetgen.grading import textpdf

TEXT = "Zoë O'Brien Αλέξης Иван Nguyễn Văn √dₖ QKᵀ −∞ fi 王小明 0123456789"


def _fonts() -> list[tuple[str, int]]:
    import matplotlib

    ttf = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    return [(str(ttf / "DejaVuSans.ttf"), 0), (str(ttf / "DejaVuSans-Bold.ttf"), 0)] + [
        *textpdf._fallbacks()
    ]


@pytest.mark.parametrize("path,number", _fonts())
def test_fast_cut_is_the_subsetters_cut(path, number):
    """Reading only the glyphs and widths used makes the same tables as decoding them all."""
    font = textpdf._Font(path, number)
    for ch in TEXT:
        if font.has(ch):
            font.glyph(ch)
    fast, kept = textpdf._subset(font)
    slow, kept_slow = textpdf._subset(font, fast=False)
    assert kept == kept_slow and set(font.used) <= set(kept)
    a, b = TTFont(io.BytesIO(fast)), TTFont(io.BytesIO(slow))
    assert sorted(a.keys()) == sorted(b.keys())
    for tag in a.keys():
        if tag not in ("GlyphOrder", "head"):
            assert a.reader[tag] == b.reader[tag], tag
    assert a["hmtx"].metrics == b["hmtx"].metrics
    widths = font.tt["hmtx"].metrics  # fontTools' own reading of the whole table
    for new, old in enumerate(kept):  # each glyph is at its new id, with its width
        assert a["hmtx"].metrics[a.getGlyphName(new)] == widths[font.tt.getGlyphOrder()[old]]


def test_each_font_is_cut_once_per_document(monkeypatch):
    calls = []
    real = textpdf._subset
    monkeypatch.setattr(textpdf, "_subset", lambda f, *a: calls.append(f.path) or real(f, *a))
    doc = textpdf.TextPdf()
    for _ in range(5):
        doc.add([("h1", "Feedback"), ("plain", TEXT)])
    doc.pdf()
    doc.pdf()
    assert len(calls) == len(set(calls)) and len(calls) >= 2


def test_the_fallback_font_is_read_only_for_text_that_needs_it(monkeypatch):
    opened = []
    real = textpdf._open
    monkeypatch.setattr(textpdf, "_open", lambda p, n: opened.append(p) or real(p, n))
    doc = textpdf.TextPdf()
    doc.add([("h1", "Feedback: Zoë"), ("plain", "Αλέξης Иван √dₖ QKᵀ −∞")])
    doc.pdf()
    assert doc._extra is None
    assert all(Path(p).name.startswith("DejaVuSans") for p in opened)


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_a_line_without_spaces_wider_than_the_page_is_cut_to_fit(tmp_path, paper):
    """A name in a script written without spaces (200 CJK characters) or one very long word
    wraps inside the page's margins, every character kept."""
    import shutil
    import subprocess

    if shutil.which("pdftotext") is None:
        pytest.skip("needs poppler's pdftotext")
    cjk = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗" * 10
    long = "Wolfeschlegelsteinhausenbergerdorff" * 6
    doc = textpdf.TextPdf(paper)
    doc.add([("h1", "Feedback"), ("plain", f"Student: {cjk}"), ("plain", long)])
    pdf = tmp_path / "page.pdf"
    pdf.write_bytes(doc.pdf())
    width = doc.size[0]
    out = subprocess.run(
        ["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    import re

    right = [float(m) for m in re.findall(r'xMax="([\d.]+)"', out)]
    assert right and max(right) <= width - textpdf.MARGIN + 1, (max(right), width)
    text = subprocess.run(
        ["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert cjk in "".join(text.split()) and long in "".join(text.split())
