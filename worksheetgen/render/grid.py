"""The TA's answer grid: every sheet's answers, question by question, in compact tables.

The grid is one more rendering of the solved sheets the key prints (the same ``Answer``
records, printed the same way): each sheet gives a ``GridRow`` (plain strings, cheap to pass
from a class build's workers), and ``grid_questions`` lays the rows out per question, in
table blocks as wide as a page's text, one row per sheet. Matrices and vectors are flattened
into one column per cell (``A11 .. A44``), whole rows to a block where they fit; a choice
(multiple choice, or a pick-one among printed options) shows the letter of the right option
as the sheet prints it. The accepted margin is printed once, over its columns, when every
sheet shares it; else each row says its own.

Every column has a width fixed here, from the widest thing it holds (a generous estimate of
the printed width at the grid's type size), so that the LaTeX tables break across pages and
are set in one TeX run (a table whose columns are measured by TeX needs a second run to
line its pages up), and each block fits the text width of either paper. ``grid_layout``
gives the columns every table shares: the sheet's label (long names wrap, and are shortened
past a few lines, the full name then listed at the end of the grid), its code, and the
question's number on the sheet where the sheets number it differently.

May import: the standard library, model, exact, render.markup and render.documents (the
key's margin).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from worksheetgen.exact import mathtex
from worksheetgen.model import Item, Sheet
from worksheetgen.render.documents import margin
from worksheetgen.render.markup import escape_tex, escape_tex_breaking

#: the size of the grid's type, points (LaTeX's footnotesize in an 11 pt document)
FONT_PT = 9.0
#: the space either side of a column's entries (LaTeX's tabcolsep in the grid), points
COLUMN_SEP = 3.0
#: the width of a rule between two parts' columns, points
RULE = 0.4
#: the width the grid's tables may take, points: a little less than the text width of A4
#: with 2 cm margins (481 pt; US Letter's is 498 pt)
TABLE_WIDTH = 476.0
#: the widest the sheets' label column gets, points (about 3.5 cm: a long name wraps)
NAME_WIDTH = 100.0
#: the lines a label may take in its column before it is shortened (the full name is listed)
NAME_LINES = 3
#: the kinds whose entries are words or letters, not math
_WORDS = ("choice", "letter", "text")
LETTERS = "abcdefghijklmnopqrstuvwxyz"
# an option's letter, as the sheet prints it before the option (A, B, C, ...)
OPTION_LETTERS = LETTERS.upper()


# ------------------------------------------------------------------ printed widths
# Widths in em of the grid's type, on the generous side of Palatino's and Latin Modern's: a
# column set from them is never narrower than what it holds.

_NARROW = set(".,;:'!|()[]ijlt")
_WIDE = set("mwMW@%&")
_MATH_SYMBOLS = {
    "infty": 1.05,
    "times": 0.8,
    "pm": 0.8,
    "cdot": 0.3,
    "top": 0.8,
    "sqrt": 0.9,
    "ldots": 1.0,
    "cdots": 1.0,
    "to": 1.0,
    "leq": 0.8,
    "geq": 0.8,
    "approx": 0.8,
    "in": 0.7,
    "mathbb": 0.0,
    "mathrm": 0.0,
    "text": 0.0,
    "operatorname": 0.0,
    "mathit": 0.0,
    "mathbf": 0.0,
    "left": 0.0,
    "right": 0.0,
    "big": 0.0,
    "Big": 0.0,
    "frac": 0.0,
    "tfrac": 0.0,
    "dfrac": 0.0,
}
_COMMAND = re.compile(r"\\([A-Za-z]+|.)")


def _char_em(c: str) -> float:
    if c == " ":
        return 0.34
    if c.isdigit():
        return 0.52
    if unicodedata.east_asian_width(c) in "WF":
        return 1.02
    if c in _NARROW:
        return 0.34
    if c in _WIDE:
        return 0.95
    if c.isupper():
        return 0.78
    if c.isascii():
        return 0.56
    if unicodedata.combining(c):
        return 0.0
    return 0.8 if c.isupper() or not c.isalpha() else 0.62


@lru_cache(maxsize=4096)
def text_em(text: str) -> float:
    """About how wide ``text`` prints, in em (never much less than it is)."""
    return sum(_char_em(c) for c in text)


@lru_cache(maxsize=4096)
def math_em(math: str) -> float:
    """About how wide LaTeX math prints, in em (commands as their symbols, scripts as full
    size letters: generous)."""
    width = 0.0
    pos = 0
    for m in _COMMAND.finditer(math):
        width += _math_run(math[pos : m.start()])
        name = m.group(1)
        width += _MATH_SYMBOLS.get(name, 0.3 if not name.isalpha() else 1.0)
        pos = m.end()
    return width + _math_run(math[pos:])


def _math_run(run: str) -> float:
    width = 0.0
    for c in run:
        if c in "{}^_ \t\n&$":
            continue
        if c in "-+=<>":
            width += 0.85
        elif c in ".,;:":
            width += 0.3
        elif c in "()[]|/":
            width += 0.42
        else:
            width += _char_em(c) * 1.08  # math italic leans out
    return width


def _pt(em: float) -> float:
    return round(em * FONT_PT + 1.0, 1)


# ------------------------------------------------------------------ one sheet's answers


@dataclass(frozen=True)
class PartAnswer:
    """One part of one sheet's question, as the grid prints it."""

    letter: str  # the part's letter, as the key prints it
    label: str  # the answer's LaTeX label (A, S, o_1, ...)
    kind: str  # matrix, vector, scalar, shape, choice (a pick-one among printed options: the
    # right option's letter as the sheet prints it), letter (multiple choice: the right
    # option's letter) or text (written: the key has it)
    rows: tuple[tuple[str, ...], ...]  # printed entries: a matrix's rows, else one row
    margin: str  # the accepted margin when wider than half a unit of the last digit, else ""


@dataclass(frozen=True)
class GridItem:
    """One question of one sheet: its id, number, title and the answers of its parts."""

    qid: str
    number: int
    title: str
    parts: tuple[PartAnswer, ...]
    #: the version of the question's worked key that the TA key prints for this sheet
    #: ("v2"), where it prints several (worksheetgen.render.worked); "" otherwise
    version: str = ""


@dataclass(frozen=True)
class GridRow:
    """One sheet's line of the grid: who (label and sheet code) and its questions."""

    label: str
    code: str
    items: tuple[GridItem, ...]


def option_letter(options: Sequence[str], value: object) -> str:
    """The letter the sheet prints before ``value`` among ``options`` (A, B, C, ... in the
    order printed, as grading reads a letter), or the value itself when it is not one."""
    text = str(value)
    if text in options and options.index(text) < len(OPTION_LETTERS):
        return OPTION_LETTERS[options.index(text)]
    return text


def _part(item: Item, index: int) -> PartAnswer:
    sol = item.solution
    part = sol.parts[index]
    answer = sol.answer(part.answer)
    letter = LETTERS[index]
    if sol.choices:  # multiple choice: the letter of the right option
        right = sol.choice_answer or next((c.label for c in sol.choices if c.correct), "")
        return PartAnswer(letter, answer.label, "letter", ((right,),), "")
    value = answer.rounded
    if answer.kind == "matrix" and isinstance(value, list | tuple):
        rows = tuple(tuple(str(c) for c in r) for r in value)
    elif answer.kind == "vector" and isinstance(value, list | tuple):
        rows = (tuple(str(c) for c in value),)
    elif answer.kind == "shape":
        rows = ((rf"{mathtex.shape(value)}",),)
    elif answer.kind == "choice":  # the printed options' letters (every right one)
        rows = ((", ".join(option_letter(answer.options, v) for v in answer.right),),)
    elif answer.kind == "scalar":
        rows = ((str(value),),)
    else:  # a written answer has no compact form: the key has it
        rows = (("",),)
    return PartAnswer(letter, answer.label, answer.kind, rows, margin(answer))


def grid_row(sheet: Sheet, titles: Sequence[str]) -> GridRow:
    """The grid's line of one solved sheet (``titles``: each question's heading)."""
    items = tuple(
        GridItem(
            item.spec.id,
            item.number,
            title,
            tuple(_part(item, i) for i in range(len(item.solution.parts))),
        )
        for item, title in zip(sheet.items, titles, strict=True)
    )
    return GridRow(sheet.label, sheet.code, items)


def with_versions(row: GridRow, versions: dict[str, str]) -> GridRow:
    """The row with each question's worked-key version (question id -> "v2") noted."""
    if not versions:
        return row
    items = tuple(replace(i, version=versions.get(i.qid, "")) for i in row.items)
    return replace(row, items=items)


# ------------------------------------------------------------------ the columns every table shares


@dataclass(frozen=True)
class Layout:
    """The columns before the answers, shared by every table of the grid (widths in points)."""

    name_width: float
    code_width: float
    #: the question's number on each sheet, where the sheets number a question differently
    number_width: float
    #: each sheet's label as the LaTeX tables print it (by sheet code): shortened past
    #: ``NAME_LINES`` lines, long runs without spaces breakable
    labels: dict[str, str]
    #: (code, full label) of every sheet whose label the tables shorten
    shortened: tuple[tuple[str, str], ...]

    @property
    def version_width(self) -> float:
        """The width of the column naming each sheet's worked-key version ("v12")."""
        return _pt(max(text_em("v12"), text_em("key")))

    @property
    def answers_width(self) -> float:
        """The width left for a table's answer columns (a question numbered per sheet takes
        ``number_width`` of it)."""
        used = self.name_width + self.code_width + 2 * COLUMN_SEP
        return TABLE_WIDTH - used


# where a name may break across the lines of its column: after a space or a hyphen, and
# between two characters of a script written without spaces (CJK); never elsewhere inside
# a word, where a break would read as two names
_HYPHENS = "-\u2010"


def _wide(c: str) -> bool:
    return unicodedata.east_asian_width(c) in "WF"


def _label_pieces(label: str) -> list[str]:
    """``label`` cut where a line may break, each piece with the space or hyphen it ends in."""
    pieces, cur = [], ""
    for c, nxt in zip(label, [*label[1:], ""], strict=True):
        cur += c
        if not nxt or nxt.isspace() or unicodedata.combining(nxt):
            continue
        if c.isspace() or c in _HYPHENS or _wide(c) or _wide(nxt):
            pieces.append(cur)
            cur = ""
    return [*pieces, cur] if cur else pieces


def _label_tex(label: str, width: float) -> tuple[str, bool]:
    """A label as the LaTeX tables print it in a column ``width`` points wide, and whether
    it is shortened: its words laid out in at most ``NAME_LINES`` lines, breaking only after a
    space or a hyphen (or between CJK characters); a name that does not fit, or has a word
    wider than the column, is cut where the room ends (…) and listed in full."""
    # a line's room, in em, as grid_layout measures the column (_pt: the widest label and
    # 1 pt, rounded to a tenth): the widest label fits it
    line = (width - 0.95) / FONT_PT
    pieces = _label_pieces(label)
    lines, used, kept = 1, 0.0, 0
    short = False
    for piece in pieces:
        w = text_em(piece.rstrip())
        if used and used + w > line:  # the piece starts a line
            if lines == NAME_LINES:
                short = True
                break
            lines, used = lines + 1, 0.0
        if w > line:
            short = True
            break
        used += text_em(piece)
        kept += 1
    if short:  # what fits of the rest on the line, and the ellipsis
        cut, rest = "", "".join(pieces[kept:])
        for c in rest:
            if text_em(cut + c) > line - used - 1.0:
                break
            cut += c
        while cut and len(cut) < len(rest) and unicodedata.combining(rest[len(cut)]):
            cut = cut[:-1]  # a letter goes with its accents
        label = ("".join(pieces[:kept]) + cut).rstrip() + "\u2026"
    breaks = []
    at = 0
    for piece in _label_pieces(label)[:-1]:
        at += len(piece)
        if label[at] == "\u2026":  # the ellipsis ends the line it is on
            continue
        if _wide(label[at - 1]) or _wide(label[at]):  # spaces and hyphens break in TeX
            breaks.append(at)
    tex = escape_tex_breaking(label, tuple(breaks))
    if short or text_em(label) > (width - 2.0) / FONT_PT:  # maybe more than a line: a
        # paragraph of the column's width
        tex = rf"\parbox[t]{{{width}pt}}{{\raggedright {tex}}}"
    return tex, short


def grid_layout(rows: Sequence[GridRow]) -> Layout:
    """The label, code and number columns of the grid's tables for these sheets."""
    widest = max((text_em(r.label) for r in rows), default=0.0)
    name_width = min(NAME_WIDTH, max(_pt(widest), _pt(text_em("sheet"))))
    code_width = _pt(max((0.55 * len(r.code) for r in rows), default=2.5))
    labels = {}
    shortened = []
    for r in rows:
        tex, short = _label_tex(r.label, name_width)
        labels[r.code] = tex
        if short:
            shortened.append((r.code, r.label))
    number = max((len(str(i.number)) for r in rows for i in r.items), default=1)
    return Layout(
        name_width,
        code_width,
        _pt(max(0.52 * (number + 1), text_em("Q"))),
        labels,
        tuple(shortened),
    )


# ------------------------------------------------------------------ per question


@dataclass(frozen=True)
class Column:
    """One answer cell's column: which part, its index text ("11", "2", ""), where its
    entry sits in the part's rows, and its width (points, between the column's spaces)."""

    row: int
    col: int
    index: str
    width: float = 0.0


@dataclass(frozen=True)
class Group:
    """The columns of one part within a block: the part's heading and its margin (shared
    by every sheet, or "" with ``own_margin`` when the sheets' margins differ)."""

    part: int
    letter: str
    label: str
    kind: str
    columns: tuple[Column, ...]
    margin: str
    own_margin: bool
    #: the width of the rows' own margin column (points), when ``own_margin``
    margin_width: float = 0.0

    @property
    def label_is_math(self) -> bool:
        """True when the label is LaTeX math (a choice's label may be plain words)."""
        return self.kind != "choice" or any(c in self.label for c in "\\^_{")

    @property
    def heading(self) -> str:
        """The heading's text as the LaTeX table prints it (math where it is)."""
        head = f"({self.letter})"
        if self.kind == "text":
            return head + " written"
        if not self.label_is_math:
            return f"{head} {escape_tex(self.label)}"
        if self.label:
            head += f" ${self.label}$"
        if self.margin:
            head += rf" $\pm{self.margin}$"
        return head

    @property
    def inner(self) -> float:
        """The width its columns span between the outer spaces (points)."""
        cols = [c.width for c in self.columns] + ([self.margin_width] if self.own_margin else [])
        return sum(cols) + 2 * COLUMN_SEP * (len(cols) - 1)

    @property
    def width(self) -> float:
        """The width it takes in a table (points): its columns, their spaces and a rule."""
        return self.inner + 2 * COLUMN_SEP + RULE


@dataclass(frozen=True)
class Cell:
    """What one sheet shows in one group: its entries (one per column) and its own margin."""

    entries: tuple[str, ...]
    margin: str
    #: the entries as math, ready for a table row of either format ("$0.25$", "$-\\infty$",
    #: "" for a blank), when they are numbers: a class has thousands of them
    math: tuple[str, ...] = ()


def _math(entry: str) -> str:
    return f"${mathtex.cell(entry)}$" if entry else ""


@dataclass(frozen=True)
class Line:
    """One sheet's row of a block."""

    label: str
    code: str
    cells: tuple[Cell, ...]
    number: int = 0  # the question's number on this sheet (shown where sheets differ)
    version: str = ""  # the version of the worked key for this sheet ("v2"), if numbered


@dataclass(frozen=True)
class Block:
    """One table: a few parts' columns and a row per sheet."""

    groups: tuple[Group, ...]
    lines: tuple[Line, ...]

    @property
    def width(self) -> float:
        """The width its groups take (points)."""
        return sum(g.width for g in self.groups)

    @property
    def columns(self) -> int:
        """How many answer columns it has (the rows' own margins included)."""
        return sum(len(g.columns) + g.own_margin for g in self.groups)


@dataclass(frozen=True)
class GridQuestion:
    """One question of the grid: its heading and its table blocks."""

    qid: str
    #: its number, when every sheet prints it at the same place; 0 when sheets differ (a
    #: shuffled order, or pools): each row then says where its sheet prints it
    number: int
    title: str
    blocks: tuple[Block, ...]
    #: True when the TA key prints several worked versions of it: each row names its own
    versioned: bool = False

    @property
    def lead(self) -> int:
        """How many columns come before the answers: label, code, Q and the version."""
        return 2 + (not self.number) + self.versioned


def _pieces(widths: Sequence[Sequence[float]], limit: float) -> list[list[tuple[int, int]]]:
    """A part's cells (row-major; ``widths``: each cell's room in a table, points) in pieces
    no wider than ``limit``: whole rows to a piece when a row fits, the rows shared out
    evenly (a 4 x 4 table too wide for one piece: two pieces of two rows)."""
    rows = len(widths)
    cells = [(r, c) for r in range(rows) for c in range(len(widths[r]))]
    row_width = [sum(w) for w in widths]
    if sum(row_width) <= limit:
        return [cells]
    if max(row_width) <= limit:
        for count in range(2, rows + 1):
            per = -(-rows // count)
            spans = [range(i, min(i + per, rows)) for i in range(0, rows, per)]
            if all(sum(row_width[r] for r in span) <= limit for span in spans):
                return [[(r, c) for r in span for c in range(len(widths[r]))] for span in spans]
    out: list[list[tuple[int, int]]] = [[]]
    used = 0.0
    for r, c in cells:
        if out[-1] and used + widths[r][c] > limit:
            out.append([])
            used = 0.0
        out[-1].append((r, c))
        used += widths[r][c]
    return out


def _index(kind: str, rows: int, cols: int, r: int, c: int) -> str:
    if kind == "matrix":
        return f"{r + 1}{c + 1}" if rows < 10 and cols < 10 else f"{r + 1},{c + 1}"
    if kind == "vector":
        return str(c + 1)
    return ""


def _entry_em(kind: str, entry: str) -> float:
    if kind in ("choice", "letter"):
        return text_em(entry) * 1.1  # bold
    if kind == "text":
        return 0.0
    return math_em(mathtex.cell(entry))


def _question(qid: str, rows: Sequence[tuple[GridRow, GridItem]], room: float) -> GridQuestion:
    first = rows[0][1]
    count = max(len(item.parts) for _, item in rows)
    same = all(item.number == first.number for _, item in rows)
    groups: list[Group] = []
    for p in range(count):
        parts = [item.parts[p] for _, item in rows if p < len(item.parts)]
        head = parts[0]
        # a label that varies with the variant (s/\sqrt{2} on one sheet, s/\sqrt{4} on
        # another) is left out: the part's letter says which it is
        label = head.label if all(part.label == head.label for part in parts) else ""
        height = max(len(part.rows) for part in parts)
        width = max(len(r) for part in parts for r in part.rows)
        margins = {part.margin for part in parts}
        shared = margins.pop() if len(margins) == 1 else ""
        own = bool(margins)  # more than one margin among the sheets
        own_width = _pt(max((math_em(m) for m in {p.margin for p in parts}), default=0.0))
        own_width = max(own_width, _pt(0.8)) if own else 0.0
        cell_em = [[0.0] * width for _ in range(height)]
        for answer in parts:
            for r, entries in enumerate(answer.rows):
                for c, entry in enumerate(entries):
                    cell_em[r][c] = max(cell_em[r][c], _entry_em(head.kind, entry))
        widths = [
            [
                _pt(max(cell_em[r][c], text_em(_index(head.kind, height, width, r, c))))
                for c in range(width)
            ]
            for r in range(height)
        ]
        spaced = [[w + 2 * COLUMN_SEP for w in row] for row in widths]
        extra = own_width + 2 * COLUMN_SEP if own else 0.0
        for piece in _pieces(spaced, room - RULE - extra):
            columns = tuple(
                Column(r, c, _index(head.kind, height, width, r, c), widths[r][c]) for r, c in piece
            )
            group = Group(p, head.letter, label, head.kind, columns, shared, own, own_width)
            groups.append(_fit_heading(group))
    blocks: list[list[Group]] = [[]]
    for group in groups:
        used = sum(g.width for g in blocks[-1])
        if blocks[-1] and used + group.width > room:
            blocks.append([])
        blocks[-1].append(group)
    out = []
    for block in blocks:
        lines = []
        for row, item in rows:
            cells = []
            for g in block:
                part = item.parts[g.part] if g.part < len(item.parts) else None
                entries = tuple(_entry(part, col) for col in g.columns)
                math = tuple(map(_math, entries)) if g.kind not in _WORDS else ()
                cells.append(Cell(entries, part.margin if part is not None else "", math))
            lines.append(Line(row.label, row.code, tuple(cells), item.number, item.version))
        out.append(Block(tuple(block), tuple(lines)))
    versioned = any(item.version for _, item in rows)
    return GridQuestion(qid, first.number if same else 0, first.title, tuple(out), versioned)


def _heading_em(group: Group) -> float:
    head = text_em(f"({group.letter}) ")
    if group.kind == "text":
        return head + text_em("written")
    if not group.label_is_math:
        return head + text_em(group.label)
    margin = math_em(rf"\pm{group.margin}") + 0.4 if group.margin else 0.0
    return head + math_em(group.label) + margin


def _fit_heading(group: Group) -> Group:
    """The group with its columns widened evenly where its heading is wider than they are
    (a heading too wide for a page's table wraps in its cell)."""
    want = min(_pt(_heading_em(group)), 14 * FONT_PT)
    short = want - group.inner
    if short <= 0:
        return group
    add = round(short / (len(group.columns) + group.own_margin) + 0.05, 1)
    columns = tuple(Column(c.row, c.col, c.index, round(c.width + add, 1)) for c in group.columns)
    wider = group.margin_width + add if group.own_margin else 0.0
    return Group(
        group.part,
        group.letter,
        group.label,
        group.kind,
        columns,
        group.margin,
        group.own_margin,
        round(wider, 1),
    )


def _entry(part: PartAnswer | None, col: Column) -> str:
    if part is None or col.row >= len(part.rows) or col.col >= len(part.rows[col.row]):
        return ""
    return part.rows[col.row][col.col]


def grid_questions(rows: Sequence[GridRow], layout: Layout | None = None) -> list[GridQuestion]:
    """The grid's questions, in the order they first appear, each with a row for every
    sheet that has it, in blocks that fit beside ``layout``'s columns (by default, those of
    ``grid_layout(rows)``)."""
    layout = layout if layout is not None else grid_layout(rows)
    by_id: dict[str, list[tuple[GridRow, GridItem]]] = {}
    for row in rows:
        for item in row.items:
            by_id.setdefault(item.qid, []).append((row, item))
    out = []
    for qid, found in by_id.items():
        numbered = all(item.number == found[0][1].number for _, item in found)
        room = layout.answers_width - (0 if numbered else layout.number_width + 2 * COLUMN_SEP)
        if any(item.version for _, item in found):
            room -= layout.version_width + 2 * COLUMN_SEP
        out.append(_question(qid, found, room))
    return out
