"""The feedback pages' PDF fonts: cut fast, and to the same font fontTools' subsetter makes."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fontTools.ttLib import TTFont

from worksheetgen.report import textpdf

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


def _words(pdf: Path) -> list[tuple[float, float, str]]:
    """Each word pdftotext finds on the first page: (top, left, text), text as drawn."""
    import html
    import re
    import subprocess

    out = subprocess.run(
        ["pdftotext", "-bbox", "-f", "1", "-l", "1", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)"[^>]*>([^<]*)</word>', out)
    return [(round(float(y)), float(x), html.unescape(t)) for x, y, t in found]


def test_right_to_left_names_print_in_their_order_and_arabic_letters_joined(tmp_path):
    """Issue 32: an Arabic or Hebrew name printed left to right, its letters unjoined. The
    first word of the name (in the order it is written) is now the rightmost on the page,
    each word's letters run from the right, and Arabic letters are drawn in the forms they
    take in a word (the glyphs of Unicode's presentation forms)."""
    import shutil
    import unicodedata

    if shutil.which("pdftotext") is None:
        pytest.skip("needs poppler's pdftotext")
    arabic, hebrew = "محمد بن سلمان", "דוד בן־גוריון"
    doc = textpdf.TextPdf()
    doc.add(
        [
            ("h1", f"Feedback: {arabic}"),
            ("plain", f"Student: {hebrew} (s25)"),
            ("plain", "Omar الفاروق Haddad"),
        ]
    )
    pdf = tmp_path / "page.pdf"
    pdf.write_bytes(doc.pdf())
    lines: dict[int, list[tuple[float, str]]] = {}
    for top, left, text in _words(pdf):
        lines.setdefault(top, []).append((left, text))
    first, second, third = (sorted(words) for _, words in sorted(lines.items()))
    # Arabic: right to left, the first word rightmost; each word drawn from its last letter
    # (leftmost) to its first, every letter in its joined form
    assert first[0][1] == "Feedback:"
    drawn = [text for _, text in first[1:]]
    assert [unicodedata.normalize("NFKC", w)[::-1] for w in reversed(drawn)] == arabic.split()
    assert all(unicodedata.name(c).endswith("FORM") for w in drawn for c in w)
    assert "".join(drawn) == "\ufee5\ufe8e\ufee4\ufee0\ufeb3\ufee6\ufe91\ufeaa\ufee4\ufea4\ufee3"
    # Hebrew: right to left inside a left-to-right line; the id after it stays after it
    assert [t for _, t in second] == ["Student:", "ןוירוג־ןב", "דוד", "(s25)"]
    # a Latin name with an Arabic word: each run in its direction
    assert [t for _, t in third] == ["Omar", "\ufed5\ufeed\ufead\ufe8e\ufed4\ufedf\ufe8d", "Haddad"]


def test_pages_without_right_to_left_text_are_set_as_before():
    """Only a line with Arabic or Hebrew letters is reordered or shaped: the pages of others
    draw what they drew before right-to-left text was set right (a Greek, Cyrillic or CJK
    name as written; the digest of the pages' drawing, recorded before that change)."""
    import hashlib

    doc = textpdf.TextPdf()
    doc.add(
        [
            ("h1", "Feedback: Ελένη Παπαδοπούλου"),
            ("h2", "Question 1"),
            ("plain", TEXT),
            ("slip", "(a) 0.25 ≠ 0.5"),
        ]
    )
    drawn = hashlib.sha256(b"\n".join(doc.pages)).hexdigest()
    assert drawn == "93462ebe17971d397ce81e1a9cf0807d6ed36f85a2730ec064423b0e3d5bcb76"
