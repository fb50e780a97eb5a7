"""The TA's answer grid: every sheet's answers, question by question, in compact tables.

The grid is one more rendering of the solved sheets the key prints (the same ``Answer``
records, printed the same way): each sheet gives a ``GridRow`` (plain strings, cheap to pass
from a class build's workers), and ``grid_questions`` lays the rows out per question, a
table block of at most ``MAX_COLUMNS`` answer cells each, one row per sheet. Matrices and
vectors are flattened into one column per cell (``A11 .. A44``), whole rows to a block where
they fit; multiple choice shows the letter, a choice among printed options its text. The
accepted margin is printed once, over its columns, when every sheet shares it; else each row
says its own.

May import: the standard library, model, exact and render.documents (the key's margin).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from worksheetgen.exact import mathtex
from worksheetgen.model import Item, Sheet
from worksheetgen.render.documents import margin

#: answer cells in one table block: a block fits the width of a portrait page in small type
MAX_COLUMNS = 12
#: the kinds whose entries are words or letters, not math
_WORDS = ("choice", "letter", "text")
#: how many number columns a column of text (a choice among printed options) takes up
TEXT_WIDTH = 3
LETTERS = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class PartAnswer:
    """One part of one sheet's question, as the grid prints it."""

    letter: str  # the part's letter, as the key prints it
    label: str  # the answer's LaTeX label (A, S, o_1, ...)
    kind: str  # matrix, vector, scalar, shape, choice (an option's text), letter (multiple
    # choice: the right option's letter) or text (written: the key has it)
    rows: tuple[tuple[str, ...], ...]  # printed entries: a matrix's rows, else one row
    margin: str  # the accepted margin when wider than half a unit of the last digit, else ""


@dataclass(frozen=True)
class GridItem:
    """One question of one sheet: its id, number, title and the answers of its parts."""

    qid: str
    number: int
    title: str
    parts: tuple[PartAnswer, ...]


@dataclass(frozen=True)
class GridRow:
    """One sheet's line of the grid: who (label and sheet code) and its questions."""

    label: str
    code: str
    items: tuple[GridItem, ...]


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
    elif answer.kind == "choice":  # one of the printed options (no letters): its text
        rows = ((str(answer.value),),)
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


@dataclass(frozen=True)
class Column:
    """One answer cell's column: which part, its index text ("11", "2", ""), and where
    its entry sits in the part's rows."""

    row: int
    col: int
    index: str


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

    @property
    def label_is_math(self) -> bool:
        """True when the label is LaTeX math (a choice's label may be plain words)."""
        return self.kind != "choice" or any(c in self.label for c in "\\^_{")

    @property
    def width(self) -> int:
        """How much of a block's ``MAX_COLUMNS`` it takes: a column per number (a text
        column as ``TEXT_WIDTH``), and one for the rows' own margins."""
        return len(self.columns) * (TEXT_WIDTH if self.kind == "choice" else 1) + self.own_margin


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


@dataclass(frozen=True)
class Block:
    """One table: a few parts' columns and a row per sheet."""

    groups: tuple[Group, ...]
    lines: tuple[Line, ...]

    @property
    def width(self) -> int:
        """How much of ``MAX_COLUMNS`` its groups take."""
        return sum(g.width for g in self.groups)


@dataclass(frozen=True)
class GridQuestion:
    """One question of the grid: its heading and its table blocks."""

    qid: str
    #: its number, when every sheet prints it at the same place; 0 when sheets differ (a
    #: shuffled order, or pools): each row then says where its sheet prints it
    number: int
    title: str
    blocks: tuple[Block, ...]


def _chunks(rows: int, cols: int, limit: int) -> list[list[tuple[int, int]]]:
    """A part's cells (row-major) in pieces of at most ``limit``: whole rows to a piece when a
    row fits, the rows shared out evenly (a 4 x 4 table at 12: two pieces of two rows)."""
    cells = [(r, c) for r in range(rows) for c in range(cols)]
    if rows * cols <= limit:
        return [cells]
    if cols <= limit:
        pieces = -(-rows * cols // limit)
        per = -(-rows // pieces)
        if per * cols > limit:
            per = limit // cols
        return [cells[i : i + per * cols] for i in range(0, len(cells), per * cols)]
    return [cells[i : i + limit] for i in range(0, len(cells), limit)]


def _index(kind: str, rows: int, cols: int, r: int, c: int) -> str:
    if kind == "matrix":
        return f"{r + 1}{c + 1}" if rows < 10 and cols < 10 else f"{r + 1},{c + 1}"
    if kind == "vector":
        return str(c + 1)
    return ""


def _question(qid: str, rows: Sequence[tuple[GridRow, GridItem]]) -> GridQuestion:
    first = rows[0][1]
    count = max(len(item.parts) for _, item in rows)
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
        for piece in _chunks(height, width, MAX_COLUMNS - own):
            columns = tuple(Column(r, c, _index(head.kind, height, width, r, c)) for r, c in piece)
            groups.append(Group(p, head.letter, label, head.kind, columns, shared, own))
    blocks: list[list[Group]] = [[]]
    for group in groups:
        used = sum(g.width for g in blocks[-1])
        if blocks[-1] and used + group.width > MAX_COLUMNS:
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
            lines.append(Line(row.label, row.code, tuple(cells), item.number))
        out.append(Block(tuple(block), tuple(lines)))
    same = all(item.number == first.number for _, item in rows)
    return GridQuestion(qid, first.number if same else 0, first.title, tuple(out))


def _entry(part: PartAnswer | None, col: Column) -> str:
    if part is None or col.row >= len(part.rows) or col.col >= len(part.rows[col.row]):
        return ""
    return part.rows[col.row][col.col]


def grid_questions(rows: Sequence[GridRow]) -> list[GridQuestion]:
    """The grid's questions, in the order they first appear, each with a row for every
    sheet that has it."""
    by_id: dict[str, list[tuple[GridRow, GridItem]]] = {}
    for row in rows:
        for item in row.items:
            by_id.setdefault(item.qid, []).append((row, item))
    return [_question(qid, found) for qid, found in by_id.items()]
