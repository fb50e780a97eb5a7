"""The one rule for user text (bank fields, roster cells, command-line text) and the one way
error messages show it.

A text a person gives may hold any letter, digit, symbol or space of any script, but no
character that prints nothing or changes how the rest prints: control characters (C0, DEL,
C1; tab and line feed only where a field may span lines), format characters (bidi overrides
such as U+202E, the byte-order mark, soft hyphen ...; zero-width (non-)joiners stay: they
spell words in several scripts), line/paragraph separators, surrogates and Unicode
noncharacters (U+FFFE, U+FDD0 ...). None of them can be written to XML 1.0, and in a
sheet, a terminal or an LMS they hide or reorder what is shown.

Also here, for every door alike: the one rule for numbers (:func:`integer`,
:func:`is_decimal`: ASCII digits only, whatever Python's ``int()`` and ``\\d`` would take),
how long a path the file system takes (:func:`path_problem`), and how much of a found value
an error line quotes (:func:`excerpt`).
"""

from __future__ import annotations

import os
import re
import unicodedata

#: the invisible word joiner (U+2060) the Moodle export puts inside text a filter of Moodle's
#: would rewrite (an emoticon's "(h)" in a cloze option); readers of Moodle's downloads drop it
WORD_JOINER = "\u2060"

#: joiners that are part of the spelling of words (Persian, Indic scripts, emoji sequences)
KEPT_FORMAT = frozenset("\u200c\u200d")
_REFUSED_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))


def is_noncharacter(c: str) -> bool:
    """True for the 66 Unicode noncharacters (U+FDD0..U+FDEF and U+xxFFFE/U+xxFFFF)."""
    n = ord(c)
    return 0xFDD0 <= n <= 0xFDEF or (n & 0xFFFE) == 0xFFFE


def refused(c: str, *, lines: bool = False) -> bool:
    """True when the character ``c`` may not appear in user text (``lines``: tab and line
    feed are allowed, for fields that span lines)."""
    if c.isascii():
        if " " <= c <= "~":
            return False
        return not (lines and c in "\t\n")
    if c in KEPT_FORMAT:
        return False
    return unicodedata.category(c) in _REFUSED_CATEGORIES or is_noncharacter(c)


def first_refused(text: str, *, lines: bool = False) -> str | None:
    """The first character of ``text`` the rule refuses, or None when all are allowed."""
    if text.isascii() and text.isprintable():
        return None
    for c in text:
        if refused(c, lines=lines):
            return c
    return None


def char_name(c: str) -> str:
    """A character as messages name it: ``U+202E (RIGHT-TO-LEFT OVERRIDE)``."""
    name = unicodedata.name(c, "")
    return f"U+{ord(c):04X}" + (f" ({name})" if name else "")


def problem(text: str, *, lines: bool = False) -> str | None:
    """'expected printable text, got U+001B, a control character' (the complaint about
    ``text``), or None."""
    c = first_refused(text, lines=lines)
    if c is None:
        return None
    return f"expected printable text, got {char_name(c)}, {char_kind(c)}"


def shown(text: str) -> str:
    """``text`` safe to print on a terminal: control, format and separator characters as
    ``\\x1b`` / ``\\u202e`` escapes (they could retitle or clear the terminal, or reverse the
    line); everything else as written."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escaped(c) if refused(c) else c for c in text)


def _escaped(c: str) -> str:
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


#: the longest error line, in characters as shown (escapes count in full): an error quotes an
#: excerpt of what it found, never all of it
MAX_LINE_CHARS = 1000
#: the longest run without white space an error line shows whole (a value, a path)
MAX_RUN_CHARS = 200


def excerpt(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """``text`` as one line may show it: escaped as :func:`shown` does, every run of more
    than :data:`MAX_RUN_CHARS` characters without a space cut to its start and end, and the
    whole cut to ``limit`` characters (its start and end, joined by "…"); lengths count the
    escapes in full, and an escape is never cut in two. A field of a million characters is
    quoted by a few hundred."""
    if len(text) <= min(limit, MAX_RUN_CHARS) and text.isascii() and text.isprintable():
        return text
    if len(text) > 4 * limit:  # bound the work: only the start and the end can be shown
        text = text[: 2 * limit] + "\u2026" + text[-2 * limit :]
    units: list[str] = []
    run: list[str] = []
    for c in text:
        if c == " ":
            units += _clip(run, MAX_RUN_CHARS)
            units.append(c)
            run = []
        else:
            run.append(_escaped(c) if refused(c) else c)
    units += _clip(run, MAX_RUN_CHARS)
    return "".join(_clip(units, limit))


def _clip(units: list[str], limit: int) -> list[str]:
    """``units`` (characters as shown), or when they are longer than ``limit`` together,
    their start (three quarters) and end joined by "…"."""
    if sum(len(u) for u in units) <= limit:
        return units
    head_room = (limit - 1) * 3 // 4
    tail_room = limit - 1 - head_room
    head: list[str] = []
    used = 0
    for u in units:
        if used + len(u) > head_room:
            break
        head.append(u)
        used += len(u)
    tail: list[str] = []
    used = 0
    for u in reversed(units[len(head) :]):
        if used + len(u) > tail_room:
            break
        tail.append(u)
        used += len(u)
    return [*head, "\u2026", *reversed(tail)]


#: an integer as a person writes one: ASCII digits only, an optional sign (Python's int()
#: and regular expressions' \d also take Arabic-Indic, full-width and other digits, and
#: int() underscores and superscripts' neighbours; TeX and every file format take ASCII)
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
#: a decimal number without sign or exponent: ``6``, ``2.5``, ``2.``
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]*)?", re.ASCII)
#: the most digits an integer written by a person may have (far above every limit)
MAX_INT_DIGITS = 30


def integer(text: str) -> int | None:
    """``text`` read as an integer by the one rule for numbers, or None when it is not one:
    ASCII digits only, an optional sign, white space around it ignored, at most
    :data:`MAX_INT_DIGITS` digits (``"٣"``, ``"１"``, ``"²"``, ``"1_0"``, ``"10**100"`` are
    None)."""
    t = text.strip(" \t")
    if len(t) > MAX_INT_DIGITS + 1 or not _INTEGER.fullmatch(t):
        return None
    return int(t)


def is_decimal(text: str) -> bool:
    """True when ``text`` is an unsigned decimal number in ASCII digits (``6``, ``2.5``)."""
    return len(text) <= 2 * MAX_INT_DIGITS and _DECIMAL.fullmatch(text) is not None


#: the longest file or folder name (bytes) and path (bytes, with the ending NUL: 4,095) the
#: usual file systems take (ext4, XFS, Btrfs, tmpfs; Linux's PATH_MAX)
MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 4095


def path_problem(path: str) -> str | None:
    """Why the file system would refuse ``path`` for its length ("a name of 300 bytes"), as
    the end of an 'expected a path …, got …' message, or None."""
    try:
        data = os.fsencode(path)
    except UnicodeEncodeError:  # a lone surrogate no file name decodes to: its length still
        data = path.encode("utf-8", "surrogatepass")
    if len(data) <= MAX_NAME_BYTES:
        return None
    if len(data) > MAX_PATH_BYTES:
        return f"a path of {len(data):,} bytes"
    longest = max(data.split(b"/"), key=len)
    if len(longest) > MAX_NAME_BYTES:
        return f"a name of {len(longest):,} bytes ({excerpt(os.fsdecode(longest), 40)})"
    return None


PATH_LIMITS = f"at most {MAX_NAME_BYTES} bytes a name and {MAX_PATH_BYTES:,} in all"


def unprintable(text: str) -> str | None:
    """The first character of ``text`` a one-line name or an id may not hold, or None."""
    return first_refused(text)


def char_kind(c: str) -> str:
    """What a refused character is, in words."""
    if is_noncharacter(c):
        return "a noncharacter"
    return {
        "Cc": "a control character",
        "Cf": "an invisible formatting character",
        "Zl": "a line separator",
        "Zp": "a paragraph separator",
        "Cs": "a lone surrogate",
    }.get(unicodedata.category(c), "not printable")


def char_problem(text: str) -> str | None:
    """Why ``text`` cannot be a name, as the end of a message ("U+0007, a control
    character"), or None when every character is printable."""
    bad = first_refused(text)
    return None if bad is None else f"{char_name(bad)}, {char_kind(bad)}"


def id_problem(text: str) -> str | None:
    """Why ``text`` cannot be an id ("nothing", "white space at its end", "U+000A, a control
    character"), or None for a good id. An id also may not start or end with white space,
    which a spreadsheet or an editor strips."""
    if text == "" or text.isspace():
        return "nothing"
    bad = char_problem(text)
    if bad is not None:
        return bad
    if text != text.strip():
        return "white space at its " + ("start" if text[0].isspace() else "end")
    return None
