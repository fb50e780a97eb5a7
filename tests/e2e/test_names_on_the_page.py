"""Every name right on the page (issue 32 section 4), as a class build prints it with LuaLaTeX.

Arabic and Hebrew names in their order (the first word of the name, in the order it is
written, is the rightmost; each word's letters run from the right) and Arabic letters joined;
one font per script in every document, whole words (a Greek name with accents is never
Pagella and DejaVu by turns); long names in the answer grid broken at spaces and hyphens,
never inside a word; no word within 1.2 cm of a page's edge. Read from the PDFs: word
positions from pdftotext -bbox, each character's font from PDFium, ink from pdftoppm.
"""

from __future__ import annotations

import ctypes
import html
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import needs_tex
from tests.e2e.test_class_build import SMALL_BANK, _roster, needs_lua
from worksheetgen.pipeline.build import BuildOptions, build
from worksheetgen.render import scripts

needs_poppler = pytest.mark.skipif(
    shutil.which("pdftotext") is None or shutil.which("pdftoppm") is None,
    reason="poppler-utils is not installed",
)

ARABIC = "محمد بن سلمان"
HEBREW = "דוד בן־גוריון"
MIXED = "Omar الفاروق Haddad"
GREEK = "Ἀλέξανδρος Παπαδόπουλος"
CYRILLIC = "Екатерина Иванова"
CJK = "山田太郎"
LONG = "Subramanian-Krishnamurthy Venkataraman"
NAMES = [ARABIC, HEBREW, MIXED, GREEK, CYRILLIC, CJK, LONG, "Zoë O'Brien"]
CM = 72 / 2.54


def _words(pdf: Path, page: int | None = None) -> list[tuple[int, int, float, float, str]]:
    """Every word pdftotext finds: (page, top, left, right, text); an Arabic or Hebrew letter is a
    word of its own (each glyph is placed on its own)."""
    pages = ["-f", str(page), "-l", str(page)] if page else []
    out = subprocess.run(
        ["pdftotext", "-bbox", *pages, str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    found = []
    for number, chunk in enumerate(out.split("<page ")[1:], 1):
        for x0, y0, x1, text in re.findall(
            r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)"[^>]*>([^<]*)</word>', chunk
        ):
            found.append((number, round(float(y0)), float(x0), float(x1), html.unescape(text)))
    return found


def _line(pdf: Path, page: int, after: str, before: str | None) -> list[tuple[float, float, str]]:
    """The words on the line of the word ``after``, right of it and left of ``before``."""
    words = _words(pdf, page)
    top, start = next((w[1], w[3]) for w in words if w[4] == after)
    end = next((w[2] for w in words if w[4] == before and abs(w[1] - top) < 3), 1e9)
    return sorted((w[2], w[3], w[4]) for w in words if abs(w[1] - top) < 3 and start <= w[2] < end)


def _in_visual_order(name: str) -> str:
    """The letters of ``name`` as they stand on the page from left to right, spelled out by
    hand: each right-to-left run reversed in place, the runs in the line's order."""
    return {
        ARABIC: ARABIC.replace(" ", "")[::-1],
        HEBREW: HEBREW.replace(" ", "")[::-1],
        MIXED: "Omar" + "الفاروق"[::-1] + "Haddad",
    }[name]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("names")
    bank = tmp / "bank.yaml"
    bank.write_text(SMALL_BANK, encoding="utf-8")
    rows = [(n, f"s{i}") for i, n in enumerate(NAMES)]
    result = build(
        BuildOptions(
            seed=7,
            banks=(str(bank),),
            out=str(tmp / "out"),
            pdf=True,
            roster=str(_roster(tmp / "r.csv", rows)),
        )
    )
    return result.folder


@needs_tex
@needs_poppler
@needs_lua
@pytest.mark.slow
@pytest.mark.parametrize("name", [ARABIC, HEBREW, MIXED])
def test_right_to_left_names_print_in_their_order(folder, name):
    sid = f"s{NAMES.index(name)}"
    for kind in ("sheet", "key"):
        pdf = folder / "students" / f"{sid}-{kind}.pdf"
        words = _line(pdf, 1, "Name:", "ID:") if kind == "sheet" else None
        if words is None:  # the key's footer names the student: "name · sheet code ..."
            last = _words(pdf, 1)
            top = max(w[1] for w in last)
            words = sorted((w[2], w[3], w[4]) for w in last if w[1] == top and w[2] < 300)
        drawn = "".join(t for _, _, t in words).replace("·", "")
        # left to right on the page: of a right-to-left name, its last letter first and its
        # first word rightmost
        assert _in_visual_order(name) in drawn, (kind, drawn)


@needs_tex
@needs_poppler
@needs_lua
@pytest.mark.slow
def test_arabic_letters_are_drawn_joined(folder, tmp_path):
    """Joined, the letters of محمد are one stroke: no column of the word's box without ink.
    Set letter by letter (isolated forms, as before), white gaps part them."""
    from PIL import Image

    pdf = folder / "students" / "s0-sheet.pdf"
    words = _line(pdf, 1, "Name:", "ID:")
    word = "محمد"
    boxes = [(x0, x1) for x0, x1, t in words if t in word][-len(word) :]  # the rightmost
    left, right = min(b[0] for b in boxes), max(b[1] for b in boxes)
    top = next(w[1] for w in _words(pdf, 1) if w[4] == "Name:")
    scale = 4  # 288 dpi
    subprocess.run(
        ["pdftoppm", "-png", "-gray", "-r", str(72 * scale), "-f", "1", "-l", "1", str(pdf)]
        + [str(tmp_path / "p")],
        check=True,
    )
    (png,) = tmp_path.glob("p*.png")
    img = Image.open(png).convert("L")
    # the letters' band, above the name line's rule
    box = (int(left * scale) + 2, int(top * scale), int(right * scale) - 2, int((top + 9) * scale))
    crop = img.crop(box)
    crop.save(tmp_path / "word.png")
    columns = range(crop.width)
    inked = [any(crop.getpixel((x, y)) < 128 for y in range(crop.height)) for x in columns]
    ink = "".join("#" if i else "." for i in inked).strip(".")  # the side bearings
    assert len(ink) > 0.8 * len(inked) and "." not in ink, ink


def _fonts_by_script(pdf: Path) -> dict[str, set[str]]:
    """For each script, the fonts its letters are drawn in anywhere in ``pdf``."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    found: dict[str, set[str]] = {}
    doc = pdfium.PdfDocument(str(pdf))
    buf = ctypes.create_string_buffer(256)
    flags = ctypes.c_int()
    for page in doc:
        text = page.get_textpage()
        for k in range(text.count_chars()):
            c = chr(raw.FPDFText_GetUnicode(text.raw, k))
            script = scripts.script(c) if c.isalpha() else None
            if script in ("greek", "cyrillic", "arabic", "hebrew", "cjk"):
                raw.FPDFText_GetFontInfo(text.raw, k, buf, 256, ctypes.byref(flags))
                found.setdefault(script, set()).add(buf.value.decode().split("+")[-1])
    return found


@needs_tex
@needs_poppler
@needs_lua
@pytest.mark.slow
def test_one_font_for_each_script_in_every_document(folder):
    for doc in ("sheets.pdf", "keys.pdf", "keys-grid.pdf"):
        fonts = _fonts_by_script(folder / doc)
        assert set(fonts) == {"greek", "cyrillic", "arabic", "hebrew", "cjk"}, (doc, fonts)
        for script, used in fonts.items():
            assert len(used) == 1, (doc, script, used)
        assert fonts["greek"] == fonts["cyrillic"] == {"DejaVuSerif"}, (doc, fonts)


@needs_tex
@needs_poppler
@needs_lua
@pytest.mark.slow
def test_the_grid_breaks_long_names_at_spaces_and_hyphens_only(folder):
    words = {w[4] for w in _words(folder / "keys-grid.pdf")}
    assert {"Subramanian-", "Krishnamurthy", "Venkataraman"} <= words or (
        "Subramanian-Krishnamurthy" in words
    )
    assert not any(w.startswith("Krishn") and w != "Krishnamurthy" for w in words)
    assert not any(w.startswith("Subramanian-Krishn") and "murthy" not in w for w in words)


@needs_tex
@needs_poppler
@needs_lua
@pytest.mark.slow
def test_no_word_comes_within_1_2_cm_of_a_pages_edge(folder):
    for doc in ("sheets.pdf", "keys.pdf", "keys-grid.pdf"):
        pdf = folder / doc
        info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout
        width = float(re.search(r"Page size:\s+([\d.]+)", info).group(1))
        for page, _, x0, x1, text in _words(pdf):
            assert x0 >= 1.2 * CM and x1 <= width - 1.2 * CM, (doc, page, text, x0, x1)
