"""How many pages a student's sheet takes, without TeX: a model of the exam layout.

The sheet template (``templates/latex/sheet.tex.j2``) types each question into a box and
places it with the macros after "The exam layout of sheets and keys" in ``base.tex.j2``
(``\\wsbeginquestion`` ... ``\\wsendquestion``, ``\\ws@qsplit``, ``\\ws@nextpage``,
``\\ws@examspace``). This module mirrors both halves in Python: ``question_fit`` estimates the
height of each piece of a question's box (its opening with the first part, then each later
part or pair of parts, where the box may be split), the height of its data printed again and
its room to work, from the solved item alone (text widths from TeX Gyre Pagella's metrics,
tables and matrices by their rows, heights calibrated against pdfLaTeX's own boxes); and
``sheet_pages`` places those pieces on pages by the rules the macros follow. Nothing here
runs TeX or prints: the pipeline asks, ``check`` says.

It imports only ``model`` and the markup splitter of this package.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from worksheetgen.model import Answer, Item, Shown
from worksheetgen.render.markup import split_markup

__all__ = [
    "LARGE_SCALE",
    "PAPERS",
    "Paper",
    "QuestionFit",
    "header_height",
    "large_geometry",
    "large_half_cm",
    "large_paper",
    "question_fit",
    "sheet_pages",
]

PT_PER_MM = 72.27 / 25.4


@dataclass(frozen=True)
class Paper:
    """A paper's text block (11pt article, geometry margin=2cm, headheight 14pt), in pt."""

    name: str
    text_height: float
    text_width: float
    #: the widest table (cm) that goes beside another, half the line (macros.tex.j2's narrow)
    half_cm: float = 8.3
    #: the given values as a centred paragraph, as many to a line as fit (large print),
    #: not one display
    wrap_givens: bool = False


PAPERS = {
    "a4": Paper("a4", 731.23584, 170 * PT_PER_MM),
    "letter": Paper("letter", 681.15898, (215.9 - 40) * PT_PER_MM),
}

#: Large print (``--large-print``, a roster's ``large_print`` column): a sheet is set as the
#: 11pt layout on a page ``LARGE_SCALE`` times smaller, and each page is scaled up by it when
#: shipped (base.tex.j2's ``\wslargeprint``), so the body is 10.95pt x 1.28 = 14pt and math,
#: tables, answer cells and rooms to work grow with it. On paper, the text block is the page
#: less these margins (mm): narrower margins than the 2 cm of a standard sheet, so the text
#: is 180 mm wide on A4 (140.6 mm before scaling, which the widest tables fit).
LARGE_SCALE = 1.28
LARGE_SIDE_MM = 15.0
LARGE_TOP_MM = 22.0  # above the text and below it; the head and foot sit inside
LARGE_HEADSEP_PT = 12.0  # before scaling (article's 11pt: 25pt)
LARGE_FOOTSKIP_PT = 24.0  # before scaling (article's: 30pt)
PAPER_MM = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
INCH_MM = 25.4


def large_paper(paper: str) -> Paper:
    """The text block a large-print sheet is set in (before its pages are scaled up)."""
    width, height = PAPER_MM[paper]
    text_width = (width - 2 * LARGE_SIDE_MM) / LARGE_SCALE
    return Paper(
        paper,
        (height - 2 * LARGE_TOP_MM) / LARGE_SCALE * PT_PER_MM,
        text_width * PT_PER_MM,
        large_half_cm(paper),
        wrap_givens=True,
    )


def large_half_cm(paper: str) -> float:
    """The widest table (cm) set beside another on a large-print sheet: the standard
    sheet's 8.3 cm of its 17 cm, in proportion to the large-print text block's width."""
    width = (PAPER_MM[paper][0] - 2 * LARGE_SIDE_MM) / LARGE_SCALE
    return round(8.3 * width / 170.0, 2)


def large_geometry(paper: str) -> str:
    """``\newgeometry``'s options for a large-print sheet on ``paper``: the text block of
    ``large_paper``, placed so that once a page is scaled up by ``LARGE_SCALE`` about TeX's
    origin (1 in from the top and left edges) its margins are ``LARGE_SIDE_MM`` and
    ``LARGE_TOP_MM``."""
    width, height = PAPER_MM[paper]
    left = INCH_MM + (LARGE_SIDE_MM - INCH_MM) / LARGE_SCALE
    top = INCH_MM + (LARGE_TOP_MM - INCH_MM) / LARGE_SCALE
    text_width = (width - 2 * LARGE_SIDE_MM) / LARGE_SCALE
    text_height = (height - 2 * LARGE_TOP_MM) / LARGE_SCALE
    return (
        f"left={left:.3f}mm,top={top:.3f}mm,textwidth={text_width:.3f}mm,"
        f"textheight={text_height:.3f}mm,headheight=14pt,headsep={LARGE_HEADSEP_PT:g}pt,"
        f"footskip={LARGE_FOOTSKIP_PT:g}pt"
    )


# 11pt article: \normalsize is 10.95pt on 13.6pt lines, \small 10pt on 12pt, \parskip 3pt
FONT = 10.95
BASELINE = 13.6
PARSKIP = 3.0
SMALLSKIP = 3.0

# TeX Gyre Pagella's advance widths (1/1000 em) for the printable ASCII characters, from its
# AFM (qplr.afm); any other letter counts as 500
_WIDTHS = [
    250, 278, 371, 500, 500, 840, 778, 208, 456, 456, 390, 760, 250, 333, 250, 486, 500, 500,
    500, 500, 500, 500, 500, 500, 500, 500, 250, 250, 767, 760, 767, 444, 747, 778, 611, 709,
    774, 611, 556, 763, 832, 337, 333, 726, 611, 946, 831, 786, 604, 786, 668, 525, 613, 778,
    722, 1000, 667, 667, 667, 428, 486, 428, 606, 500, 333, 500, 553, 444, 611, 479, 333, 556,
    582, 287, 234, 556, 291, 883, 582, 546, 601, 560, 395, 424, 326, 603, 565, 834, 516, 556,
    500, 441, 208, 441, 606,
]  # fmt: skip
_SPACE = 0.25  # an interword space, in em
_COMMAND_RE = re.compile(r"\\([A-Za-z]+|.)")
# commands of math that print nothing wide (spacing, fonts, delimiters' sizes)
_MATH_SILENT = {
    "left", "right", "mathrm", "mathbf", "mathit", "text", "textrm", "operatorname",
    "displaystyle", "top", "big", "Big", "bigl", "bigr", "limits", "nolimits", "mathcal",
}  # fmt: skip


_EM = {chr(32 + i): w / 1000 for i, w in enumerate(_WIDTHS)}


def _char_em(c: str) -> float:
    return _EM.get(c, 0.5)


def _text_em(text: str) -> float:
    """The width of a run of text, in em."""
    em = _EM
    return sum(em.get(c, 0.5) for c in text)


_TEXT_IN_MATH = {"text", "textrm", "mathrm", "operatorname", "mathbf", "textbf"}
_ACCENTS = {"tilde", "hat", "bar", "vec", "dot", "widetilde", "widehat", "overline"}


@lru_cache(maxsize=8192)  # prompts, parts and options recur on every sheet of a class
def _math_em(math_text: str) -> float:
    """About how wide inline math is, in em: letters in italics, a relation or operator
    with its spaces (a minus sign that starts a term without), a command a letter's width
    (``\\infty`` wider, accents, fonts and sizes nothing, ``\\text{...}`` its letters),
    sub- and superscripts at 70%."""
    width = 0.0
    script = False
    unary = True  # a minus sign here would be a sign, not an operator
    s = math_text
    i = 0
    while i < len(s):
        c = s[i]
        scale = 0.7 if script else 1.0
        if c == "\\":
            m = _COMMAND_RE.match(s, i)
            name = m.group(1) if m else ""
            i = m.end() if m else i + 1
            if name in _TEXT_IN_MATH and i < len(s) and s[i] == "{":
                end = s.find("}", i)
                end = len(s) if end < 0 else end
                width += sum(_char_em(ch) for ch in s[i + 1 : end]) * scale
                i = end + 1
            elif name in (",", ";", " "):
                width += 0.17
            elif name in ("quad", "qquad"):
                width += 1.0 if name == "quad" else 2.0
            elif name == "sqrt":
                width += 0.8 * scale
            elif name == "infty":
                width += 1.0 * scale
            elif name in ("le", "ge", "approx", "in", "times", "cdot", "ldots", "to"):
                width += (1.34 if name not in ("times", "cdot", "ldots") else 1.2) * scale
            elif name in _MATH_SILENT or name in _ACCENTS or name == "!":
                pass
            else:
                width += 0.6 * scale
            script = False
            unary = name in ("le", "ge", "approx", "in", "times", "cdot", "to")
            continue
        i += 1
        if c in "^_":
            script = True
            continue
        if c in "{}":
            continue
        if c == " ":
            continue
        if c in "=<>":
            em, unary = 0.78 + 0.56, True  # a relation, with its thick spaces
        elif c in "+-" and not unary:
            em = 0.78 + 0.44  # a binary operator, with its medium spaces
        elif c in "+-":
            em, unary = 0.78, False
        elif c in "(,[&":
            em, unary = _char_em(c), True
        else:
            em, unary = (0.55 if c.isalpha() else _char_em(c)), False
        width += em * scale
        if c != "{":
            script = False
    return width


@lru_cache(maxsize=8192)
def _words(markup: str) -> tuple[float, ...]:
    """The widths (em) of a markup text's words, math runs as words of their own, in order."""
    words: list[float] = []
    for is_math, text in split_markup(markup):
        if is_math:
            pieces = re.split(r"(?<=[=<>,])\s+|\s+(?=[=<>])", text)
            words += [_math_em(p) for p in pieces if p.strip()]
        else:
            words += [_text_em(w) for w in text.split()]
    return tuple(words)


@lru_cache(maxsize=8192)
def _wrap(markup: str, width: float, size: float, first: float) -> tuple[int, float]:
    """A paragraph of ``markup`` broken into lines of ``width`` pt at ``size`` pt, greedily
    as its words come (interword spaces may shrink a little), its first line starting
    ``first`` pt in: how many lines, and how far the last one reaches (pt)."""
    lines, used = 1, first
    for em in _words(markup):
        w = em * size
        gap = _SPACE * size if used > (first if lines == 1 else 0.0) else 0.0
        if used > 0 and used + gap + w > width * 1.02:
            lines += 1
            used = w
        else:
            used += gap + w
    return lines, used


def text_lines(markup: str, width: float, size: float = FONT, first: float = 0.0) -> int:
    """How many lines a paragraph of ``markup`` takes in ``width`` pt at ``size`` pt, its
    first line starting ``first`` pt in (after a part's letter); 1 for an empty one."""
    return _wrap(markup, width, size, first)[0]


def _last_line_fill(markup: str, width: float, size: float = FONT, first: float = 0.0) -> float:
    """How far the last line of a paragraph reaches, in pt (as ``text_lines`` breaks it)."""
    return _wrap(markup, width, size, first)[1]


# ------------------------------------------------------------------ heights of the pieces

TABLE_LABEL_ROW = 4.4 * PT_PER_MM  # a table to fill in: its column labels' row
TABLE_ROW = 6.5 * PT_PER_MM  # each row to fill in
MATRIX_ROW = BASELINE  # a bmatrix's row: the array strut of a \baselineskip
DISPLAY_SKIPS = 11.0 + 11.0  # \abovedisplayskip and \belowdisplayskip
SHORT_SKIPS = 0.0 + 6.5  # their short forms, after a line that ends left of the display
DISPLAY_SHRINK = 6.0 + 6.0  # how far they may shrink
SHORT_SHRINK = 0.0 + 3.0
SMALLSKIP_SHRINK = 1.0
HEADER_SHRINK = 18.0  # page 1's header (its centred lines' skips)
HEATMAP_ROW = 0.8 * 28.4528  # a heatmap's rows are 0.8 cm
HEATMAP_SHRINK = 5.0  # its centre's skips
HEATMAP_BASE = 245.0 - 4 * HEATMAP_ROW  # its labels, caption and centre skips (calibrated)
SCAN_BOX = 4 * PT_PER_MM
SCORE_DEPTH = 2.5  # a score row's last line's depth (its parts' letters' parentheses)
MARK_ROW = 10 * PT_PER_MM + 0.4  # the score table's row for marks, with its rule
CIRCLE = 8.4
TOP_DISCARD = 6.0 + PARSKIP  # a question's space above its heading, dropped at a page's top
ROOM_SKIP = 4.0  # above a room to work
CONTINUED = BASELINE  # "Question N, continued; its data again:" (or "; its data is on page P:")
# data taller than this part of a page is not printed again above a continued part: the
# heading names the page it is on (base.tex.j2's \ws@talldata)
TALL_DATA = 0.15
# the data printed again starts a paragraph of its own: the empty line TeX sets above its
# display, less the skips it drops (calibrated)
DATA_AGAIN = 12.0
# what a worked solution's first line adds over its lines (calibrated)
# the depth of the prompt's last line, which the options below it do not take back (they
# follow it at \\lineskip, being taller than a line; calibrated)
PREV_DEPTH = 3.0
# a line with a superscript over a subscript ($W_Q^{(i)}$) is taller than a line leaves room
# for: the lines around it are set apart by more (calibrated)
TALL_LINE = 4.7
_TALL_RE = re.compile(r"\$[^$]*_[^$]*\^\{[^$]*\$")
HALF_TOP = 1.5  # a half's first line: as tall as its letters, not a whole line (calibrated)
STEPS_EXTRA = 4.0


@dataclass(frozen=True)
class QuestionFit:
    """A question as the layout places it: the heights (pt) of its box's pieces between the
    places it may split (the opening and first part, then each later part or pair of parts;
    ``opens``: the opening is a piece of its own, a question with data breaking after it too),
    the height of its data printed again above a continued piece (0: it has none to repeat),
    the room to work under it (pt, 0 for none) and how far the skips in its box may shrink
    (display skips, smallskips), which TeX counts in what is left of a page."""

    pieces: tuple[float, ...]
    data: float
    room: float
    shrink: float = 0.0
    opens: bool = False

    @property
    def height(self) -> float:
        return sum(self.pieces)


def _matrix_rows(value: object) -> int:
    if isinstance(value, list) and value and isinstance(value[0], list):
        return len(value)
    return 1


_MATRIX_RE = re.compile(r"\\begin\{[bp]?matrix\}(.*?)\\end\{[bp]?matrix\}", re.S)


def _math_rows(tex: str) -> int:
    """The rows of the tallest matrix in a piece of display math (1 without one)."""
    best = 1
    for m in _MATRIX_RE.finditer(tex):
        best = max(best, m.group(1).count("\\\\") + 1)
    return best


@lru_cache(maxsize=8192)
def _matrix_em(tex: str) -> float:
    """About how wide a piece of display math is, in em: its matrices' entries and columns
    and the math around them, by weights fitted to pdfLaTeX's widths of 1036 displays, steps
    and options of the bundled banks (3 pt off on average, at most 15)."""
    entries = 0.0
    columns = matrices = 0
    rest = tex
    for m in _MATRIX_RE.finditer(tex):
        rows = [r.split("&") for r in m.group(1).split("\\\\")]
        cols = max(len(r) for r in rows)
        entries += sum(
            max((_math_em(r[c]) if c < len(r) else 0.0) for r in rows) for c in range(cols)
        )
        columns += cols
        matrices += 1
        rest = rest.replace(m.group(0), "")
    quads = rest.count("\\qquad")
    rest = rest.replace("\\qquad", "")
    return 0.88 * entries + 1.24 * columns + 0.18 * matrices + 1.07 * _math_em(rest) + 1.66 * quads


def _display(rows: int) -> float:
    """A math display of matrices ``rows`` tall inside a paragraph, its skips included."""
    return DISPLAY_SKIPS + max(BASELINE, rows * MATRIX_ROW + 3.2)


def _value_tex(value: object) -> str:
    """A given value as a display prints it (a matrix's rows and columns, a vector's
    entries), for its width."""
    if isinstance(value, list) and value and isinstance(value[0], list):
        rows = " \\\\ ".join(" & ".join(str(c) for c in r) for r in value)
        return f"\\begin{{bmatrix}}{rows}\\end{{bmatrix}}"
    if isinstance(value, list):
        return "[" + ", ".join(str(c) for c in value) + "]"
    return str(value)


def _wrapped_givens(inline: Sequence[Shown], width: float) -> float:
    """A large-print sheet's given values: a centred paragraph of them, as many to a line as
    fit (2em between), each line as tall as its tallest, 8 pt apart, a smallskip above and
    below."""
    lines: list[list[Shown]] = [[]]
    used = 0.0
    for g in inline:
        wide = _matrix_em(f"{g.label} = {_value_tex(g.value)}") * FONT + 2 * FONT
        if lines[-1] and used + wide > width:
            lines.append([])
            used = 0.0
        lines[-1].append(g)
        used += wide
    tall = [
        max(BASELINE, max(_matrix_rows(g.value) for g in line) * MATRIX_ROW + 3.2) for line in lines
    ]
    return 2 * SMALLSKIP + PARSKIP + sum(tall) + 8.0 * (len(lines) - 1)


def _givens(
    item: Item, width: float, prompt_fill: float, wrap: bool = False
) -> tuple[float, float]:
    """The question's given values: one math display of the inline ones (the short skips
    above and below it where the prompt's last line ends left of it; ``wrap``: a centred
    paragraph of them), then each block: (height, how far it may shrink)."""
    height = shrink = 0.0
    inline = [g for g in item.solution.shown if g.inline]
    if inline and wrap:
        height += _wrapped_givens(inline, width)
        shrink += 2 * SMALLSKIP / 3
    elif inline:
        tex = ", \\qquad ".join(f"{g.label} = {_value_tex(g.value)}" for g in inline)
        left = (width - _matrix_em(tex) * FONT) / 2
        rows = max(_matrix_rows(g.value) for g in inline)
        height += _display(rows)
        shrink += DISPLAY_SHRINK
        if prompt_fill + 2 * FONT < left:
            height -= DISPLAY_SKIPS - SHORT_SKIPS
            shrink -= DISPLAY_SHRINK - SHORT_SHRINK
    for g in item.solution.shown:
        if g.inline:
            continue
        if g.kind == "heatmap":
            cells = getattr(g.value, "rows", None) or []
            height += HEATMAP_BASE + len(cells) * HEATMAP_ROW
            shrink += HEATMAP_SHRINK
        else:  # a block kind of a template folder's own: the lines the model gives it
            height += PARSKIP + g.lines * BASELINE
    return height, shrink


def _steps(item: Item, width: float) -> float:
    """A worked solution shown with the question: its heading line, then its steps side by
    side, as many to a line as fit, 6pt between the lines."""
    steps = item.solution.shown_steps
    if not steps:
        return 0.0
    height = PARSKIP + BASELINE  # "The worked solution to check:"
    lines: list[float] = []
    used = 0.0
    tall = 0.0
    for step in steps:
        if step.text:
            if used:
                lines.append(tall)
                used, tall = 0.0, 0.0
            text = f"{step.title} {step.text}"
            lines.append(text_lines(text, width) * BASELINE)
            if step.math:
                lines.append(_math_rows(step.math) * MATRIX_ROW + 3.2)
            continue
        box_h = 10.0 + 2.0 + _math_rows(step.math) * MATRIX_ROW + 3.2
        title_w = (_text_em(step.title) + 1.5) * 10.0
        box_w = max(title_w, _matrix_em(step.math) * FONT)
        gap = 1.5 * FONT
        if used and used + gap + box_w > width:
            lines.append(tall)
            used, tall = 0.0, 0.0
        used += (gap if used else 0.0) + box_w
        tall = max(tall, box_h)
    if used:
        lines.append(tall)
    return height + PARSKIP + sum(lines) + 6.0 * (len(lines) - 1) + STEPS_EXTRA


def _is_narrow(answer: Answer, half_cm: float = 8.3) -> bool:
    """As the macro ``narrow``: a table that fits in half the text's width (``half_cm``)."""
    if answer.kind not in ("matrix", "vector"):
        return False
    cols = len(answer.rounded[0]) if answer.kind == "matrix" else len(answer.rounded)
    return cols * (_cell_cm(answer) + 0.3) + 1.6 <= half_cm


def _cell_cm(answer: Answer) -> float:
    rows = answer.rounded if answer.kind == "matrix" else [answer.rounded]
    base = 1.45 if len(rows[0]) > 3 else 1.7
    decimals = 0
    for c in rows[0]:
        text = str(c)
        if "." in text:
            decimals = max(decimals, len(text.split(".")[1].rstrip("}")))
    return round(base + 0.25 * max(0, decimals - 2), 2)


def _table(answer: Answer) -> float:
    """A table to fill in, with its smallskips and the paragraph it sits in."""
    rows = len(answer.rounded) if answer.kind == "matrix" else 1
    return SMALLSKIP + PARSKIP + 1.0 + TABLE_LABEL_ROW + rows * TABLE_ROW + 1.0 + SMALLSKIP


def _options(options: Sequence[str], width: float, scannable: bool) -> float:
    """Lettered options (\\wsoptions): four, two or one to a line by their length."""
    longest = max((len(o) for o in options), default=0)
    per = 4 if longest <= 16 else (2 if longest <= 38 else 1)
    cell = width / per
    mark = (SCAN_BOX if scannable else CIRCLE) + 0.5 * FONT
    rows = [options[i : i + per] for i in range(0, len(options), per)]
    height = 0.0
    for row in rows:
        lines = max(
            text_lines(o, cell - 2.2 * FONT, first=mark + 1.3 * FONT - 2.2 * FONT) for o in row
        )
        height += lines * BASELINE  # a box no taller than the row's line with a circle
    return PREV_DEPTH + SMALLSKIP + PARSKIP + 1.0 + height + SMALLSKIP


def _choices(item: Item, width: float, scannable: bool) -> float:
    """A multiple-choice question's options (\\wsoption): boxes of displayed math, as many
    to a line as fit, 6pt apart where tall."""
    used, tall, lines = 0.0, 0.0, []
    for c in item.solution.choices:
        box_w = (
            (SCAN_BOX if scannable else CIRCLE)
            + 0.9 * FONT
            + _matrix_em(c.text) * FONT
            + 2.2 * FONT
        )
        box_h = (
            max(BASELINE, _math_rows(c.text) * MATRIX_ROW + 3.2)
            if "matrix" in c.text
            else (BASELINE + 2.0)
        )
        if used and used + box_w > width:
            lines.append(tall)
            used, tall = 0.0, 0.0
        used += box_w
        tall = max(tall, box_h)
    if used:
        lines.append(tall)
    gaps = sum(6.0 if h > BASELINE + 2.0 else 0.0 for h in lines[1:])
    return SMALLSKIP + PARSKIP + sum(lines) + gaps + SMALLSKIP


def _answer_line_width(kind: str) -> float:
    # "Answer: " and a 3 cm line, or "Shape: " and two 1.5 cm lines with a times sign
    if kind == "shape":
        return 3.3 * FONT + 3 * 28.4528 + 1.6 * FONT
    return 3.9 * FONT + 3 * 28.4528


def _part(item: Item, index: int, points: str, width: float, scannable: bool) -> float:
    """One part at the full width: its letter and prompt, then where to answer."""
    part = item.solution.parts[index]
    prompt = part.prompt
    first = _part_start(points)
    lines = text_lines(prompt, width, first=first)
    height = PARSKIP + 2.0 + lines * BASELINE + (TALL_LINE if _TALL_RE.search(prompt) else 0.0)
    if item.solution.choices:
        return height + _choices(item, width, scannable)
    try:
        answer = item.solution.answer(part.answer)
    except KeyError:
        return height + 3 * 26.0
    if answer.kind in ("matrix", "vector"):
        return height + _table(answer)
    if answer.kind in ("scalar", "shape"):
        fill = _last_line_fill(prompt, width, first=first)
        if fill + 1.5 * FONT + _answer_line_width(answer.kind) > width * 1.02:
            height += BASELINE
        return height
    if answer.kind == "choice":
        return height + _options(answer.options, width, scannable)
    return height + 3 * 26.0  # three lines to write on


def _part_start(points: str) -> float:
    """Where a part's prompt starts on its first line: after its bold letter and, where the
    part has points of its own, "(2 points)" in small italics."""
    start = 1.6 * FONT
    if points:
        start += (_text_em(f"({points})") * 0.92 + _SPACE) * 10.0
    return start


def _half(item: Item, index: int, points: str, width: float) -> float:
    """A part in half the width (its table narrow), as \\wshalf sets it."""
    part = item.solution.parts[index]
    half = 0.485 * width
    lines = text_lines(part.prompt, half, first=_part_start(points))
    answer = item.solution.answer(part.answer)
    # a minipage: no \\parskip in it, its first line only as tall as its letters (the line
    # above the pair's own baseline skip), no lineskip after the table
    return lines * BASELINE - HALF_TOP + _table(answer) - PARSKIP - 1.0


def _groups(item: Item, half_cm: float = 8.3) -> list[list[int]]:
    """The parts in the lines they print on: narrow tables two to a line (sheet.tex.j2)."""
    groups: list[list[int]] = []
    open_pair = False
    for i, part in enumerate(item.solution.parts):
        narrow = False
        if not item.solution.choices:
            try:
                narrow = _is_narrow(item.solution.answer(part.answer), half_cm)
            except KeyError:
                narrow = False
        if narrow and open_pair:
            groups[-1].append(i)
            open_pair = False
        else:
            groups.append([i])
            open_pair = narrow
    return groups


def _score_lines(rows: Sequence[Sequence[str]], width: float) -> int:
    """How many lines the TA's score boxes take in ``width`` pt (scan.tex.j2's
    ``\\wsscorerow``, ragged right): "Marks (TA):", then each part's letter and a box for
    every mark it may get (its value in 6pt figures after it), a part on one line where it fits
    in one."""
    used = _text_em("Marks (TA):") * 8.0 + 0.5 * FONT
    lines = 1
    gap = 1.5 * PT_PER_MM
    for values in rows:
        boxes = [SCAN_BOX + 1.0 + _text_em(v) * 6.0 + gap for v in values]
        boxes[-1] -= gap
        letter = _text_em("(a)") * 10.0 * 1.1 + 1.83
        part = letter + sum(boxes)
        if part < width:
            items = [part]
        else:
            items = [letter + boxes[0], *boxes[1:]]
        items[-1] += 0.8 * FONT
        for w in items:
            if used + w > width:
                lines += 1
                used = w
            else:
                used += w
    return lines


def _score_rows(
    rows: Sequence[Sequence[str]], width: float, beside: tuple[Answer, str] | None = None
) -> float:
    """The height the TA's score boxes add under a question: none where they go beside its
    last part's table (``beside``: its answer and row label, the part alone on its line) in the
    width and height it leaves; else a paragraph of their own, no skip above it but the
    paragraph's, its lines a baseline apart."""
    if not rows:
        return 0.0
    under = PARSKIP + 1.0 + SCAN_BOX + 0.95 + (_score_lines(rows, width) - 1) * BASELINE
    if beside is not None:
        table_w, table_h = _table_size(*beside)
        lines = _score_lines(rows, width - table_w - 1.5 * FONT)
        # beside the table, or from its top down past its foot where that adds less
        return min(under, max(0.0, SCAN_BOX + (lines - 1) * BASELINE + SCORE_DEPTH - table_h))
    return under


def _table_size(answer: Answer, row_label: str = "query") -> tuple[float, float]:
    """A table to fill in as the sheet sets it: its width (row labels in footnotesize, columns
    of its cells' width with 4pt each side and a rule) and height (the labels' row and the
    rows to fill in), in pt."""
    rows = len(answer.rounded) if answer.kind == "matrix" else 1
    cols = len(answer.rounded[0]) if answer.kind == "matrix" else len(answer.rounded)
    label = _text_em(f"{row_label} {rows}") * 9.0 + 4.0 if row_label else 4.0
    width = label + cols * (_cell_cm(answer) * 28.4528 + 8.4) + 0.4
    return width, TABLE_LABEL_ROW + rows * TABLE_ROW


def question_fit(
    item: Item,
    paper: Paper,
    *,
    title: str,
    points: str,
    part_points: Sequence[str] = (),
    room_mm: float = 0.0,
    score_rows: Sequence[Sequence[str]] = (),
    scannable: bool = False,
    own_decimals: bool = False,
) -> QuestionFit:
    """A question as the sheet prints it (``title`` and ``points``: its heading; ``part_points``:
    each part's points as printed before its prompt, "" where none; ``room_mm``: the room to
    work under it; ``score_rows``: the TA's score boxes of a scannable sheet, per part the
    marks printed; ``own_decimals``: it says how it rounds)."""
    width = paper.text_width
    head_w = (_text_em(f"Question {item.number}. {title}") * 1.05) * 12.0
    head_w += _text_em(points) * 10.0
    heading = 6.0 + 10.0 + (BASELINE if head_w > width else 0.0)
    opening = heading + PARSKIP + text_lines(item.prompt, width) * BASELINE
    fill = _last_line_fill(item.prompt, width)
    if own_decimals:
        opening += PARSKIP + BASELINE
        fill = width / 2
    givens, shrink = _givens(item, width, fill, paper.wrap_givens)
    data = givens + _steps(item, width)
    opening += data
    pieces: list[float] = []
    texts = list(part_points) + [""] * (len(item.solution.parts) - len(part_points))
    for group in _groups(item, paper.half_cm):
        if len(group) == 2:
            a, b = group
            height = (
                PARSKIP
                + 2.0
                + max(_half(item, a, texts[a], width), _half(item, b, texts[b], width))
            )
        else:
            height = _part(item, group[0], texts[group[0]], width, scannable)
            shrink += _part_shrink(item, group[0])
        pieces.append(height)
    if not pieces:
        pieces = [0.0]
    pieces[-1] += _score_rows(score_rows, width, _last_table(item))
    room = room_mm * PT_PER_MM
    has_data = bool(item.solution.shown or item.solution.shown_steps)
    repeated = data if has_data else 0.0
    # a question with data may break after its opening (its first part on the next page)
    opens = has_data and bool(item.solution.parts)
    if opens:
        pieces.insert(0, opening)
    else:
        pieces[0] += opening
    return QuestionFit(tuple(pieces), repeated, room, shrink, opens)


def _last_table(item: Item) -> tuple[Answer, str] | None:
    """The answer and row label of a question's last part where it is a table alone on its
    line (a scannable sheet's score boxes go beside it), else None."""
    last = _groups(item)[-1] if item.solution.parts else []
    if len(last) != 1 or item.solution.choices:
        return None
    part = item.solution.parts[last[0]]
    try:
        answer = item.solution.answer(part.answer)
    except KeyError:
        return None
    return (answer, part.row_label) if answer.kind in ("matrix", "vector") else None


def _part_shrink(item: Item, index: int) -> float:
    """How far a full-width part's skips may shrink: the smallskips around its table or
    options (a pair's sit in boxes, which do not shrink)."""
    if item.solution.choices:
        return 2 * SMALLSKIP_SHRINK
    try:
        answer = item.solution.answer(item.solution.parts[index].answer)
    except KeyError:
        return 0.0
    return 2 * SMALLSKIP_SHRINK if answer.kind in ("matrix", "vector", "choice") else 0.0


def header_height(
    paper: Paper,
    *,
    title: str,
    course: str,
    questions: int,
    instructions: str,
    scannable: bool,
    student_name: str = "",
) -> float:
    """Page 1's header: course and title, the sheet's line, the name and ID lines, the score
    table (twelve questions to a row; a scannable sheet's without its row for marks), the
    instructions box, a scannable sheet's rule."""
    width = paper.text_width
    height = 0.0
    if course:
        height += 12.0
    title_lines = math.ceil(sum(_words(title)) * 17.28 * 1.05 / width) if title else 1
    height += 22.0 * max(1, title_lines) + 4.0 + 12.0 + 2 * 9.0  # center's skips
    if student_name and sum(_words(student_name)) * FONT > 0.5 * width:
        height += 2 * BASELINE + 2.0
    else:
        height += BASELINE
    rows = 1 if questions <= 12 else math.ceil(questions / 12)
    per_row = 3 * 1.25 * 12.0 + 10 * PT_PER_MM - 1.25 * 12.0 * 0.7 + 1.6
    if scannable:  # no row for marks: the TA marks the score boxes
        per_row -= MARK_ROW
    height += 6.0 + 2 * 9.0 + rows * per_row + (rows - 1) * 4.0
    if instructions:
        inner = width - 2 * 3.4 - 2 * 0.4
        height += 6.0 + PARSKIP + text_lines(instructions, inner, 10.0) * 12.0 + 2 * 3.4
    height += 4.0
    if scannable:
        rule = (
            "Read by a scanner: mark a box with a cross or a tick; to take a mark back, fill it "
            "in completely. Keep the black squares clean."
        )
        # in footnotesize italics, about 8% narrower than the upright widths here
        height += PARSKIP + text_lines(rule, width / 0.92, 9.0) * 11.0
    return height


def sheet_pages(
    header: float,
    questions: Sequence[QuestionFit],
    paper: Paper,
    trace: list[tuple[int, float, float]] | None = None,
) -> int:
    """The pages a sheet takes: its header, then each question placed as \\wsendquestion
    places it (whole where it fits with a third of its room, on the next page where it fits
    there and what is left here would hold little more than its data again, else split
    before a part) and its room, which shrinks to a third at a page's foot (``trace``: gets
    the page, the height used on it and how far that may shrink where each question
    starts)."""
    pages = _Pages(paper.text_height, header, HEADER_SHRINK)
    for q in questions:
        if trace is not None:
            trace.append((pages.page, pages.total, pages.shrink))
        pages.place(q)
    return pages.page


class _Pages:
    """The page being filled: its number, the natural height on it and how far its rooms to
    work may shrink."""

    def __init__(self, goal: float, header: float, shrink: float) -> None:
        self.goal = goal
        self.page = 1
        self.total = header
        self.shrink = shrink

    def left(self) -> float:
        return self.goal - self.total + self.shrink if self.total > 0 else self.goal

    def new_page(self) -> None:
        """\\newpage: a page break, where the page has something on it."""
        if self.total > 0:
            self.page += 1
            self.total, self.shrink = 0.0, 0.0

    def put(self, height: float, shrink: float = 0.0) -> None:
        """Material of ``height`` (pt) on this page and, where it is taller than the page
        (a question too tall to split before a part), the pages after."""
        if self.total == 0:
            height -= TOP_DISCARD  # the space above a question goes at a page's top
        self.total += height
        self.shrink += shrink
        while self.total - self.shrink > self.goal:
            self.total -= self.goal
            self.page += 1
            self.shrink = 0.0

    def place(self, q: QuestionFit) -> None:
        goal = self.goal
        room_min = q.room / 3
        need = q.height + room_min + BASELINE
        left = self.left()
        data = q.data if q.data <= TALL_DATA * goal else 0.0
        if need < left:
            self.put(q.height, q.shrink)
        elif need < goal and q.data and left < data + 0.08 * goal:
            self.new_page()
            self.put(q.height, q.shrink)
        else:
            self.split(q, left, room_min)
        if q.room:
            left = self.goal - self.total + self.shrink - BASELINE - ROOM_SKIP
            room, low = q.room, room_min
            if left < room_min:
                room = low = max(left, 0.0)
            self.total += ROOM_SKIP + room
            self.shrink += room - low

    def split(self, q: QuestionFit, left: float, room_min: float) -> None:
        """\\ws@qsplit: the pieces that fill what is left of this page (ending before a
        part, or after the opening of a question with data; at least four lines), the rest
        on the next page under its heading and data again (only the heading where the data
        is tall or just above the break); or the whole question on the next page when no such
        piece fits."""
        if left < room_min + 6 * BASELINE:
            self.new_page()
            left = self.goal
        pieces = q.pieces
        # the latest break before a part where the question fills the page and the room
        # goes on with the rest; else one that leaves space for the room
        fit = _fitting(pieces, left - BASELINE)
        if fit == len(pieces):
            fit = _fitting(pieces, left - room_min - BASELINE)
        first = sum(pieces[:fit])
        if fit == 0 or fit == len(pieces) or first < 4 * BASELINE:
            self.new_page()
            self.put(q.height, q.shrink)
            return
        self.put(first)
        self.new_page()
        repeat = q.data and not (q.opens and fit == 1) and q.data <= TALL_DATA * self.goal
        again = q.data + PARSKIP + DATA_AGAIN if repeat else 0.0
        self.put(CONTINUED + again + sum(pieces[fit:]))


def _fitting(pieces: Sequence[float], height: float) -> int:
    """How many whole pieces from the start fit in ``height``."""
    used, count = 0.0, 0
    for p in pieces:
        if used + p > height:
            break
        used += p
        count += 1
    return count
