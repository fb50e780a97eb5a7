"""Names in every script, set right: which letters need a font of their own, which way a run of
text reads, and Arabic letters in the forms they take in a word.

A class keeps one typeface, TeX Gyre Pagella, where Pagella has the letters. Where it does not,
a word is set in one font as a whole, the same font for every word of its script in every
document, never letter by letter (Pagella has the unaccented Greek letters but none with a
tonos: Ελένη would mix two typefaces in one word). :func:`font_class` says which font a letter's
word takes: ``serif`` (DejaVu Serif: Greek, Cyrillic, and a Latin word with a letter Pagella
lacks), ``arab`` and ``hebr`` (DejaVu Sans, shaped by HarfBuzz), ``cjk`` (WenQuanYi Micro Hei),
or none (Pagella; a letter of another script is left to the fallback fonts).

:func:`levels` is the Unicode bidirectional algorithm (UAX #9) for text without explicit
embeddings or isolates, which user text never holds (worksheetgen.textrules refuses those
controls): each character's embedding level, from which LaTeX gets its right-to-left runs
(worksheetgen.render.markup) and the feedback PDF its visual order (:func:`visual`).
:func:`shape_arabic` gives Arabic letters their joined forms (Unicode's presentation forms,
read from Python's own Unicode tables) for the feedback PDF, which sets glyphs one by one.

May import: the standard library.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import lru_cache


def _ranges(*spans: tuple[int, int]) -> frozenset[int]:
    return frozenset(c for a, b in spans for c in range(a, b + 1))


#: the letters, marks and punctuation below U+2000 (and the Latin ligatures) that TeX Gyre
#: Pagella has, in all four styles (read from texgyrepagella-*.otf's cmap; a test checks the
#: installed font against it)
PAGELLA = _ranges(
    (0x20, 0x7E),
    (0xA0, 0x137),
    (0x139, 0x148),
    (0x14A, 0x165),
    (0x168, 0x17F),
    (0x18E, 0x18E),
    (0x192, 0x192),
    (0x1A0, 0x1A1),
    (0x1AF, 0x1B0),
    (0x1CD, 0x1D4),
    (0x1D7, 0x1DD),
    (0x1E6, 0x1E7),
    (0x1EA, 0x1EB),
    (0x1F0, 0x1F0),
    (0x1F4, 0x1F5),
    (0x1FA, 0x201),
    (0x204, 0x205),
    (0x208, 0x209),
    (0x20C, 0x20D),
    (0x210, 0x211),
    (0x214, 0x215),
    (0x218, 0x21B),
    (0x237, 0x237),
    (0x258, 0x259),
    (0x2BE, 0x2BF),
    (0x2C6, 0x2C7),
    (0x2D8, 0x2DD),
    (0x300, 0x30C),
    (0x30F, 0x30F),
    (0x311, 0x311),
    (0x323, 0x323),
    (0x326, 0x328),
    (0x32C, 0x333),
    (0x338, 0x338),
    (0x33F, 0x33F),
    (0x34D, 0x34D),
    (0x361, 0x361),
    (0x391, 0x3A1),
    (0x3A3, 0x3A9),
    (0x3B1, 0x3C9),
    (0x3D1, 0x3D1),
    (0x3D5, 0x3D6),
    (0x3F0, 0x3F1),
    (0x3F4, 0x3F5),
    (0xE3F, 0xE3F),
    (0x1E0C, 0x1E0F),
    (0x1E24, 0x1E27),
    (0x1E2A, 0x1E2B),
    (0x1E2E, 0x1E2F),
    (0x1E36, 0x1E39),
    (0x1E42, 0x1E47),
    (0x1E58, 0x1E5D),
    (0x1E62, 0x1E63),
    (0x1E6C, 0x1E6F),
    (0x1E80, 0x1E85),
    (0x1E92, 0x1E93),
    (0x1E97, 0x1E97),
    (0x1EA0, 0x1EF9),
    (0xFB00, 0xFB04),
)

SERIF, ARAB, HEBR, CJK = "serif", "arab", "hebr", "cjk"
# a character's script, by the first word of its Unicode name (a letter, a mark, or the
# punctuation of CJK text); None for the characters every script shares
_SCRIPTS = {
    "LATIN": "latin",
    "GREEK": "greek",
    "COPTIC": "greek",
    "CYRILLIC": "cyrillic",
    "HEBREW": "hebrew",
    "ARABIC": "arabic",
    "CJK": "cjk",
    "HIRAGANA": "cjk",
    "KATAKANA": "cjk",
    "HALFWIDTH": "cjk",
    "FULLWIDTH": "cjk",
    "HANGUL": "cjk",
    "BOPOMOFO": "cjk",
    "IDEOGRAPHIC": "cjk",
}
# scripts whose punctuation is their own (the Arabic comma, the Hebrew maqaf, the ideographic
# full stop): it takes the script's font
_OWN_MARKS = frozenset(("arabic", "hebrew", "cjk"))
_FONTS = {"greek": SERIF, "cyrillic": SERIF, "hebrew": HEBR, "arabic": ARAB, "cjk": CJK}


@lru_cache(maxsize=8192)
def script(c: str) -> str | None:
    """``c``'s script: latin, greek, cyrillic, hebrew, arabic, cjk, ``other`` (a letter or mark
    of another script), ``mark`` (a combining mark every script uses) or None (spaces, digits,
    punctuation, symbols)."""
    if c.isascii():
        return "latin" if c.isalpha() else None
    name = unicodedata.name(c, "")
    first = name.split(" ", 1)[0]
    found = _SCRIPTS.get(first)
    if found is not None and (found in _OWN_MARKS or unicodedata.category(c)[0] in "LM"):
        return found
    if unicodedata.category(c)[0] == "M":
        return "mark" if first == "COMBINING" else "other"
    if first == "MODIFIER":  # ʼ ˀ ʻ: part of the word they are in, whatever its script
        return "mark"
    if unicodedata.category(c)[0] == "L" or first in ("CJK", "IDEOGRAPHIC"):
        return "other"
    return None


def _word_font(word_script: str | None, letters: str) -> str | None:
    if word_script == "latin":
        return None if all(ord(c) in PAGELLA for c in letters) else SERIF
    return _FONTS.get(word_script or "")


@lru_cache(maxsize=4096)
def needs_fonts(text: str) -> bool:
    """True when some word of ``text`` is set in a font other than Pagella, or some of it
    reads right to left."""
    if text.isascii():
        return False
    for c in text:
        if ord(c) in PAGELLA and ord(c) < 0x370:
            continue
        s = script(c)
        if s in _FONTS or (s in ("latin", "mark") and ord(c) not in PAGELLA):
            return True
        if unicodedata.bidirectional(c) in ("R", "AL"):
            return True
    return False


def fonts(text: str) -> list[str | None]:
    """The font class of each character of ``text`` (:data:`SERIF`, :data:`ARAB`,
    :data:`HEBR`, :data:`CJK` or None for Pagella and the fallback fonts).

    A word (between spaces) is cut where its script changes; punctuation, digits and marks
    go with the letters before them (or after, at a word's start). Each piece takes its
    script's font, a Latin piece Pagella's unless Pagella lacks one of its characters. A
    space between two words of one font takes it too, so a name is one run."""
    out: list[str | None] = [None] * len(text)
    i = 0
    n = len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        j = i
        while j < n and not text[j].isspace():
            j += 1
        _word_fonts(text, i, j, out)
        i = j
    # spaces between two pieces of one font
    k = 0
    while k < n:
        if text[k].isspace():
            m = k
            while m < n and text[m].isspace() and text[m] != "\n":
                m += 1
            if 0 < k and m < n and out[k - 1] is not None and out[k - 1] == out[m]:
                for s in range(k, m):
                    out[s] = out[k - 1]
            k = max(m, k + 1)
        else:
            k += 1
    return out


def _word_fonts(text: str, start: int, end: int, out: list[str | None]) -> None:
    pieces: list[tuple[int, int, str | None]] = []  # start, end, script
    current: str | None = None
    begin = start
    for k in range(start, end):
        s = script(text[k])
        if s is None or s == "mark" or s == current:
            continue
        if current is None:
            current = s  # the characters before the first letter go with it
            continue
        pieces.append((begin, k, current))
        begin, current = k, s
    pieces.append((begin, end, current))
    # the punctuation before a word's first letter and after its last is the text's
    while pieces and pieces[0][2] is None:
        pieces.pop(0)
    if pieces:
        first, last = pieces[0], pieces[-1]
        lead = first[0]
        while lead < first[1] and script(text[lead]) is None:
            lead += 1
        pieces[0] = (lead, first[1], first[2])
        tail = last[1] if len(pieces) > 1 else pieces[0][1]
        while tail > pieces[-1][0] and script(text[tail - 1]) is None:
            tail -= 1
        pieces[-1] = (pieces[-1][0], tail, pieces[-1][2])
    for a, b, s in pieces:
        font = _word_font(s, text[a:b])
        for k in range(a, b):
            out[k] = font


# ------------------------------------------------------------------ direction (UAX #9)

_STRONG = {"L": 0, "R": 1, "AL": 1}
_NEUTRAL = frozenset(("B", "S", "WS", "ON", "BN", "LRE", "RLE", "LRO", "RLO", "PDF"))
_NEUTRAL |= frozenset(("LRI", "RLI", "FSI", "PDI"))


def has_rtl(text: str) -> bool:
    """True when ``text`` has a letter written right to left."""
    return not text.isascii() and any(unicodedata.bidirectional(c) in ("R", "AL") for c in text)


def base_level(text: str) -> int:
    """0 (left to right) or 1: the direction of ``text``'s first strong letter (P2, P3)."""
    for c in text:
        d = _STRONG.get(unicodedata.bidirectional(c))
        if d is not None:
            return d
    return 0


def levels(text: str, base: int | None = None) -> list[int]:
    """Each character's embedding level in a paragraph of ``text`` whose direction is
    ``base`` (0, 1, or that of its first strong letter): rules W1-W7, N1-N2 and I1-I2."""
    if base is None:
        base = base_level(text)
    sos = "R" if base else "L"
    types = [unicodedata.bidirectional(c) or "L" for c in text]
    n = len(types)
    # W1: a mark takes the type of what it sits on
    prev = sos
    for k in range(n):
        if types[k] == "NSM":
            types[k] = "ON" if prev in ("LRI", "RLI", "FSI", "PDI") else prev
        prev = types[k]
    # W2: European digits after Arabic letters are Arabic numbers; W3: AL is R
    strong = sos
    for k in range(n):
        t = types[k]
        if t in ("L", "R", "AL"):
            strong = t
        elif t == "EN" and strong == "AL":
            types[k] = "AN"
    types = ["R" if t == "AL" else t for t in types]
    # W4: one separator between two numbers of a kind
    for k in range(1, n - 1):
        t, a, b = types[k], types[k - 1], types[k + 1]
        if t == "ES" and a == b == "EN":
            types[k] = "EN"
        elif t == "CS" and a == b and a in ("EN", "AN"):
            types[k] = a
    # W5: terminators next to European numbers are European numbers
    k = 0
    while k < n:
        if types[k] == "ET":
            m = k
            while m < n and types[m] == "ET":
                m += 1
            if (k > 0 and types[k - 1] == "EN") or (m < n and types[m] == "EN"):
                for s in range(k, m):
                    types[s] = "EN"
            k = m
        else:
            k += 1
    # W6: other separators and terminators are neutral
    types = ["ON" if t in ("ES", "ET", "CS") else t for t in types]
    # W7: European numbers after a Latin letter (or at the start of a left-to-right
    # paragraph) are left to right
    strong = sos
    for k in range(n):
        if types[k] in ("L", "R"):
            strong = types[k]
        elif types[k] == "EN" and strong == "L":
            types[k] = "L"
    # N1, N2: neutrals between two strong types of one direction take it, else the
    # paragraph's
    k = 0
    while k < n:
        if types[k] in _NEUTRAL:
            m = k
            while m < n and types[m] in _NEUTRAL:
                m += 1
            before = _direction(types[k - 1]) if k > 0 else sos
            after = _direction(types[m]) if m < n else sos
            fill = before if before == after else sos
            for s in range(k, m):
                types[s] = fill
            k = m
        else:
            k += 1
    # I1, I2
    out = []
    for t in types:
        if base % 2 == 0:
            out.append(base + (1 if t == "R" else 2 if t in ("AN", "EN") else 0))
        else:
            out.append(base + (1 if t in ("L", "EN", "AN") else 0))
    return out


def _direction(t: str) -> str:
    return "L" if t == "L" else "R"


#: brackets as a right-to-left run shows them (Unicode's mirrored pairs, rule L4)
MIRRORED = dict(zip("()[]{}<>«»‹›", ")(][}{><»«›‹", strict=True))


def visual(text: str, base: int | None = None) -> str:
    """``text`` (one line) in the order it is seen, left to right (rule L2), brackets in
    right-to-left runs mirrored (L4)."""
    if not has_rtl(text):
        return text
    lv = levels(text, base)
    chars = [MIRRORED.get(c, c) if lv[k] % 2 else c for k, c in enumerate(text)]
    order = list(range(len(text)))
    top = max(lv)
    lowest_odd = min(v for v in lv if v % 2) if any(v % 2 for v in lv) else top + 1
    for level in range(top, lowest_odd - 1, -1):
        k = 0
        while k < len(order):
            if lv[order[k]] >= level:
                m = k
                while m < len(order) and lv[order[m]] >= level:
                    m += 1
                order[k:m] = order[k:m][::-1]
                k = m
            else:
                k += 1
    return "".join(chars[k] for k in order)


# ------------------------------------------------------------------ Arabic letters joined


_ALEFS = "\u0622\u0623\u0625\u0627"  # the alefs lam joins with into one ligature


@lru_cache(maxsize=1)
def _arabic_forms() -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str]]:
    """Unicode's presentation forms: (letter, form) -> the form's character, and (lam and
    alef, form) -> the ligature's, read from the decompositions of U+FB50-U+FEFC."""
    single: dict[tuple[str, str], str] = {}
    pairs: dict[tuple[str, str], str] = {}
    for code in (*range(0xFB50, 0xFE00), *range(0xFE70, 0xFEFD)):
        parts = unicodedata.decomposition(chr(code)).split()
        if len(parts) < 2 or parts[0] not in ("<isolated>", "<final>", "<initial>", "<medial>"):
            continue
        form = parts[0][1:-1]
        letters = "".join(chr(int(p, 16)) for p in parts[1:])
        if len(letters) == 1:
            single.setdefault((letters, form), chr(code))
        elif len(letters) == 2 and letters[0] == "\u0644" and letters[1] in _ALEFS:
            pairs.setdefault((letters, form), chr(code))
    return single, pairs


def _joining(c: str) -> str:
    """``c``'s joining type: D (both sides), R (to the letter before it only), C (causes
    joining: tatweel, zero width joiner), T (transparent: a mark) or U (none)."""
    if c in ("\u0640", "\u200d"):
        return "C"
    cat = unicodedata.category(c)
    if cat in ("Mn", "Me") or (cat == "Cf" and c != "\u200c"):
        return "T"
    single, _ = _arabic_forms()
    if (c, "initial") in single or (c, "medial") in single:
        return "D"
    if (c, "final") in single:
        return "R"
    return "U"


def shape_arabic(text: str, has: Callable[[str], bool] | None = None) -> str:
    """``text`` (in logical order) with each Arabic letter in the form its neighbours give
    it (isolated, initial, medial or final) and lam-alef as its ligature; ``has``: whether
    the font has a form's character (a form it lacks keeps the letter as it is)."""
    if not any("\u0600" <= c <= "\u06ff" for c in text):
        return text
    single, pairs = _arabic_forms()
    if has is not None:
        single = {k: v for k, v in single.items() if has(v)}
        pairs = {k: v for k, v in pairs.items() if has(v)}
    kinds = [_joining(c) for c in text]
    n = len(text)

    def neighbour(k: int, step: int) -> str:
        k += step
        while 0 <= k < n and kinds[k] == "T":
            k += step
        return kinds[k] if 0 <= k < n else "U"

    out: list[str] = []
    k = 0
    while k < n:
        c, kind = text[k], kinds[k]
        if kind not in ("D", "R"):
            out.append(c)
            k += 1
            continue
        joins_before = neighbour(k, -1) in ("D", "C")
        nxt = k + 1
        while nxt < n and kinds[nxt] == "T":
            nxt += 1
        form = "final" if joins_before else "isolated"
        if c == "\u0644" and nxt < n and (c + text[nxt], form) in pairs:
            out.append(pairs[(c + text[nxt], form)])
            out.extend(text[k + 1 : nxt])  # marks on the lam
            k = nxt + 1
            continue
        joins_after = kind == "D" and neighbour(k, 1) in ("D", "R", "C")
        form = (
            ("medial" if joins_after else "final")
            if joins_before
            else ("initial" if joins_after else "isolated")
        )
        out.append(single.get((c, form), single.get((c, "isolated"), c)))
        k += 1
    return "".join(out)
