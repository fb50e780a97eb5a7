"""Lines TeX can read: a rendered LaTeX document whose line is longer than TeX's input
buffer (``buf_size``, 200,000 bytes in TeX Live) stops TeX with "Unable to read an entire
line", which it writes to the terminal but not to the log. A prompt that renders one long
word (every letter already with a break allowed after it) makes such a line: it is folded
here, at places where folding changes nothing TeX sets.

May import: nothing but the standard library.
"""

from __future__ import annotations

#: the longest line handed to TeX, in characters (at most 4 bytes each in UTF-8: well
#: inside TeX's buffer of 200,000 bytes, whatever the script)
MAX_TEX_LINE_CHARS = 12_000


def fold_long_lines(tex: str, limit: int = MAX_TEX_LINE_CHARS) -> str:
    """``tex`` with every line longer than ``limit`` characters folded: before a control
    word (a backslash and a letter, the line ending in ``%`` so no space is added), or else
    at a space (which an end of line is to TeX). A line is left as it is from the first
    comment on (``%`` not escaped), and where it offers no such place."""
    if len(tex) <= limit or all(len(line) <= limit for line in tex.split("\n")):
        return tex
    return "\n".join(
        "\n".join(_fold(line, limit)) if len(line) > limit else line for line in tex.split("\n")
    )


def _fold(line: str, limit: int) -> list[str]:
    pieces: list[str] = []
    start = 0
    comment = _comment_at(line)
    while len(line) - start > limit:
        end = min(start + limit, comment)
        cut, space = _control_word(line, start, end), line.rfind(" ", start + 1, end)
        if cut < 0 and space < 0:  # none in reach: the first after it
            cut, space = _control_word(line, end, comment, last=False), line.find(" ", end, comment)
        if cut > start:
            pieces.append(line[start:cut] + "%")
            start = cut
        elif space > start:
            pieces.append(line[start:space])
            start = space + 1
        else:
            break
    pieces.append(line[start:])
    return pieces


def _escaped(line: str, at: int) -> bool:
    """True when the character at ``at`` follows an odd number of backslashes (it is part
    of a control symbol such as ``\\%`` or ``\\\\``)."""
    n = 0
    while at - n - 1 >= 0 and line[at - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _comment_at(line: str) -> int:
    """Where the line's comment starts (an unescaped ``%``), or its length."""
    at = line.find("%")
    while at >= 0:
        if not _escaped(line, at):
            return at
        at = line.find("%", at + 1)
    return len(line)


def _control_word(line: str, start: int, end: int, *, last: bool = True) -> int:
    """The last (or first) place in ``line[start + 1:end]`` where a control word starts (a
    backslash that is not itself escaped, then an ASCII letter), or -1 when there is none."""
    at = line.rfind("\\", start + 1, end) if last else line.find("\\", start + 1, end)
    while at > start:
        nxt = line[at + 1 : at + 2]
        if nxt.isascii() and nxt.isalpha() and not _escaped(line, at):
            return at
        at = line.rfind("\\", start + 1, at) if last else line.find("\\", at + 1, end)
    return -1
