"""Which characters a one-line name or an id may hold: one rule for rosters, key.json and banks.

A name or an id is printed on sheets, written into XML exports and file names, and matched
against what a person types in a responses file, so it may not hold a character that prints
as nothing or breaks those files: control characters (a newline, ESC), invisible format
characters (a byte order mark, the bidirectional overrides such as U+202E; the zero-width
joiners some scripts need are kept), line and paragraph separators, lone surrogates and
Unicode noncharacters (U+FFFE, U+FFFF, U+FDD0-U+FDEF and the last two of every plane). An id
also may not start or end with white space, which a spreadsheet or an editor strips.
"""

from __future__ import annotations

import unicodedata

_JOINERS = "\u200c\u200d"  # zero-width non-joiner and joiner: part of writing some names


def is_noncharacter(c: str) -> bool:
    """True for the 66 code points Unicode reserves never to be characters."""
    n = ord(c)
    return 0xFDD0 <= n <= 0xFDEF or (n & 0xFFFE) == 0xFFFE


def unprintable(text: str) -> str | None:
    """The first character of ``text`` a name or an id may not hold, or None."""
    if text.isascii():  # the common case: only the C0 controls and DEL to look for
        return next((c for c in text if c < " " or c == "\x7f"), None)
    for c in text:
        if is_noncharacter(c):
            return c
        cat = unicodedata.category(c)
        if cat in ("Cc", "Zl", "Zp", "Cs") or (cat == "Cf" and c not in _JOINERS):
            return c
    return None


def char_kind(c: str) -> str:
    """What an unprintable character is, in words."""
    if is_noncharacter(c):
        return "a noncharacter"
    return {
        "Cc": "a control character",
        "Cf": "an invisible format character",
        "Zl": "a line separator",
        "Zp": "a paragraph separator",
        "Cs": "a lone surrogate",
    }.get(unicodedata.category(c), "not printable")


def char_problem(text: str) -> str | None:
    """Why ``text`` cannot be a name, as the end of a message ("U+0007, a control
    character"), or None when every character is printable."""
    bad = unprintable(text)
    return None if bad is None else f"U+{ord(bad):04X}, {char_kind(bad)}"


def id_problem(text: str) -> str | None:
    """Why ``text`` cannot be an id ("nothing", "white space at its end", "U+000A, a control
    character"), or None for a good id."""
    if text == "" or text.isspace():
        return "nothing"
    bad = char_problem(text)
    if bad is not None:
        return bad
    if text != text.strip():
        return "white space at its " + ("start" if text[0].isspace() else "end")
    return None
