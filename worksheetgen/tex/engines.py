"""Which TeX engine can print a text: pdfLaTeX for the letters its T1 fonts have, else LuaLaTeX.

Kept apart from ``worksheetgen.tex.run`` (which starts TeX and needs subprocess and threads),
so that a build without PDFs still records the engine its documents would need without
importing any of that.
"""

from __future__ import annotations

from collections.abc import Iterable

PDFLATEX = "pdflatex"
LUALATEX = "lualatex"


def _ranges(*spans: tuple[int, int]) -> frozenset[str]:
    return frozenset(chr(c) for a, b in spans for c in range(a, b + 1))


# Characters pdfLaTeX prints with T1 + utf8 + mathpazo + tgpagella as real outline glyphs
# (checked by a test that compiles all of them): ASCII, Latin-1 (not the spacing accents
# ¨ ¯ ´, which only exist as bitmaps), Latin Extended-A but for a few letters T1 lacks,
# Romanian comma-below letters, and common punctuation. Anything else makes the document a
# LuaLaTeX one.
PDFLATEX_CHARS = _ranges(
    (0x0A, 0x0A),
    (0x20, 0x7E),
    (0xA0, 0xA7),
    (0xA9, 0xAE),
    (0xB0, 0xB3),
    (0xB5, 0xFF),
    (0x100, 0x125),
    (0x128, 0x137),
    (0x139, 0x13E),
    (0x141, 0x148),
    (0x14A, 0x165),
    (0x168, 0x17E),
    (0x218, 0x21B),
    (0x2010, 0x2016),
    (0x2018, 0x201A),
    (0x201C, 0x201E),
    (0x2020, 0x2022),
    (0x2026, 0x2026),
    (0x2030, 0x2030),
    (0x2039, 0x203A),
    (0x20AC, 0x20AC),
)


def needs_unicode_engine(text: str) -> bool:
    """True when ``text`` has a character pdfLaTeX's T1 fonts cannot print."""
    if text.isascii():
        return False
    return not PDFLATEX_CHARS.issuperset(text)


def choose_engine(texts: Iterable[str]) -> str:
    """pdflatex, or lualatex when some text needs letters beyond pdfLaTeX's fonts."""
    return LUALATEX if any(needs_unicode_engine(t) for t in texts) else PDFLATEX


def unprintable_sample(text: str, limit: int = 5) -> str:
    """A few characters of ``text`` that pdfLaTeX cannot print, for messages."""
    seen: list[str] = []
    for c in text:
        if c not in PDFLATEX_CHARS and c not in seen:
            seen.append(c)
            if len(seen) == limit:
                break
    return " ".join(seen)
