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
