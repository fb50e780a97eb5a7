"""Read a class's responses CSV and check every row against the key.

The file has one row per student, question, answer and entry (``COLUMNS``; a ``sheet``
column when students share versions): ``read_responses`` reads it within its size limit,
finds the columns in the header (``,``, ``;`` or a tab between them, as rosters), and checks
each row's student, sheet, question, answer, entry and value against the key, raising
``GradeError`` ("responses.csv:LINE: column: expected ..., got ...") on the first bad row.
Cells written by ``grade --template`` are read back through ``csvcells.unprotect``.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from worksheetgen.attention.slips import MISCONCEPTIONS
from worksheetgen.bank.roster import delimiter
from worksheetgen.errors import GradeError, did_you_mean
from worksheetgen.exact.masked import MASKED_SPELLINGS
from worksheetgen.grading.csvcells import protect, unprotect
from worksheetgen.grading.key import (
    GradedAnswer,
    GradeKey,
    QuestionKey,
    SheetKey,
    entry_label,
    norm_text,
)
from worksheetgen.inputs import read_limited
from worksheetgen.language import said

COLUMNS = ("student", "question", "answer", "entry", "value")
#: ``sheet`` when students share versions; ``mark`` for marks per part (``grade --template
#: --marks``): a row with a mark gives the part's points, whatever its cells say
OPTIONAL_COLUMNS = ("sheet", "mark")
#: what a TA may type for a part that is all right or all wrong (compared without case)
RIGHT_WORDS = frozenset({"✓", "✔", "r", "right", "correct", "y", "yes", "ok", "full"})
WRONG_WORDS = frozenset({"x", "✗", "✘", "×", "w", "wrong", "incorrect", "n", "no"})
#: a mark still to give: the part is counted "to be marked by hand" (scan writes it for a
#: part whose boxes a person has to look at)
PENDING_WORDS = frozenset({"?", "pending"})
#: what a student may write for a masked (−∞) cell, compared without regard to case
MASKED_WORDS = frozenset(MASKED_SPELLINGS)
#: the largest responses file read (the filled template of the largest class build is
#: about a third of it)
MAX_RESPONSES_BYTES = 500_000_000
#: the longest number a value cell may hold (digits, sign, point, exponent, a fraction)
MAX_NUMBER_CHARS = 100

# ASCII digits only: Python's \d and int() also take Arabic-Indic and other decimal digits,
# which no responses file means; row, column and shape numbers have at most 6 digits
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$", re.ASCII)
#: a number with its digits in groups of three, as sheets and keys may print it
#: (2 359 296, 0.123 45): separated by a plain, thin (U+2009), narrow no-break (U+202F) or
#: no-break (U+00A0) space; only whole groups of three, so "12 34" is no number
_GROUP = "[ \u2009\u202f\u00a0]"
_GROUPED = re.compile(
    rf"^[+-]?\d{{1,3}}(?:{_GROUP}\d{{3}})*"  # the whole part: 2 359 296
    rf"(?:\.(?:\d{{3}}(?:{_GROUP}\d{{3}})*(?:{_GROUP}\d{{1,2}})?|\d+))?$",  # .123 45
    re.ASCII,
)
_FRACTION = re.compile(r"^([+-]?\d+)\s*/\s*(\d+)$", re.ASCII)
_INDEX = re.compile(r"^\d{1,6}$", re.ASCII)
_CELL = re.compile(r"^\(?\s*(\d{1,6})\s*[,;: ]\s*(\d{1,6})\s*\)?$", re.ASCII)
_CELL_RC = re.compile(r"^r\s*(\d{1,6})\s*c\s*(\d{1,6})$", re.IGNORECASE | re.ASCII)
_SHAPE = re.compile(
    r"^[(\[]?\s*(\d{1,6})\s*(?:x|×|\*|,|by)\s*(\d{1,6})\s*[)\]]?$", re.IGNORECASE | re.ASCII
)


@dataclass(frozen=True)
class ResponseCell:
    """One value a student wrote, with the CSV line it came from."""

    line: int
    text: str
    value: float | str  # a float (-inf for masked) for numeric kinds, else the text


@dataclass(frozen=True)
class PartMark:
    """The points a TA typed for one whole part (a mark row), with its CSV line; ``pending``:
    a mark still to give (``?``), the part counted to be marked by hand."""

    line: int
    text: str
    points: Fraction
    pending: bool = False


@dataclass(frozen=True)
class TryPenalty:
    """What Moodle's adaptive mode takes off a question for the wrong tries before the try
    that counts (``points``: the penalty times the question's graded points per earlier
    try, never more than that try earned)."""

    points: Fraction
    counted: int  # the try that counts (1: the first)
    tries: int  # the tries the student made
    #: the question's points without carried credit, as Moodle gives them (its best try
    #: without carried credit may be another)
    plain: Fraction | None = None


@dataclass
class StudentAnswers:
    """One student's responses: answer cells by question id, answer name and (row, col)."""

    student: str
    sheet: str
    first_line: int
    cells: dict[str, dict[str, dict[tuple[int, int], ResponseCell]]] = field(default_factory=dict)
    #: a submitted attempt (a Moodle download): graded and counted even when all blank
    submitted: bool = False
    #: marks typed per part (mark rows), by question id and answer name: each replaces
    #: the grading of that part's cells
    marks: dict[str, dict[str, PartMark]] = field(default_factory=dict)
    #: parts whose mark row was left blank (a marks template not filled in there), by
    #: question id: without cells of their own they are still to mark, never a 0
    unmarked: dict[str, set[str]] = field(default_factory=dict)
    #: an adaptive quiz's penalties for wrong tries (a Moodle "All tries" download), by
    #: question id
    penalties: dict[str, TryPenalty] = field(default_factory=dict)
    #: Moodle's grading method "Average grade": every finished attempt (its sheet of the
    #: versions drawn, its answers), this one among them; the grade is their mean
    averaged: tuple[tuple[SheetKey, StudentAnswers], ...] = ()

    @property
    def responded(self) -> bool:
        """Did the student hand anything in: a submitted attempt, or at least one value (a
        template's rows left blank are no response)?"""
        return (
            self.submitted
            or any(cells for answer in self.cells.values() for cells in answer.values())
            or any(self.marks.values())
        )


@dataclass(frozen=True)
class Responses:
    """Every student's responses, in the order the grader reports them."""

    path: str
    students: tuple[StudentAnswers, ...]
    has_sheet_column: bool
    #: students whose attempt is not finished (a Moodle download): listed, not graded
    in_progress: tuple[str, ...] = ()
    #: students with several finished attempts (a Moodle download): which one counts
    attempts: tuple[str, ...] = ()
    #: a Moodle download of one row per attempt graded where a penalty for wrong tries was
    #: asked for: the sentence report.md says of it (empty: nothing to say)
    tries_note: str = ""
    #: attempts the LMS dealt against the bank's pool rule (two versions of one question),
    #: by student and question: listed, not graded
    against_pool: tuple[str, ...] = ()
    #: values that could not be read, graded as wrong (``--lenient``): each as its error line
    unreadable: tuple[str, ...] = ()


class RowErrors(GradeError):
    """Every bad row of a responses file at once, one ``file:line: column: ...`` line each
    (``str`` is those lines; each line alone is the one-line error it would have been)."""

    def __init__(self, errors: Sequence[GradeError]) -> None:
        super().__init__(errors[0].message, file=errors[0].file, line=errors[0].line)
        self.field = errors[0].field
        self.errors = tuple(errors)

    def __str__(self) -> str:
        return "\n".join(GradeError.__str__(e) for e in self.errors)


#: the columns whose unreadable cells ``--lenient`` grades as wrong (other row errors, a
#: student or question the key does not have, stop grading whatever the switch)
LENIENT_COLUMNS = ("value", "mark")
#: the most bad rows listed in one run
MAX_LISTED = 200
#: what an unreadable value is graded as: +inf, which no key or slip holds (a wrong entry)
UNREADABLE = math.inf
UNREADABLE_CHOICE = "\x00unreadable"


def shorten(text: str, n: int = 40) -> str:
    """``text`` cut to ``n`` characters with "..." (as got-messages and the report show it)."""
    return text if len(text) <= n else text[: n - 3] + "..."


def _got(text: str) -> str:
    return "nothing" if text == "" else repr(shorten(text))


def _one_of(options: Sequence[str], limit: int = 6) -> str:
    shown = ", ".join(options[:limit])
    more = len(options) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def _close_match(word: str, options: Iterable[str]) -> str:

    return did_you_mean(word, options)


def _decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise GradeError(
            f'expected UTF-8 text (save the sheet as "CSV UTF-8"), got byte '
            f"0x{data[exc.start]:02X}",
            file=name,
            line=line,
        ) from None


def _records(text: str, name: str) -> Iterable[tuple[int, list[str]]]:
    """CSV records with the line each starts on (separated as the header is: ',', ';' or a
    tab, as rosters are)."""

    header = next((ln for ln in text.splitlines() if ln.strip()), "")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter(header), strict=True)
    start = 1
    while True:
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise GradeError(
                f"expected well-formed CSV, got {exc}", file=name, line=reader.line_num or start
            ) from None
        yield start, record
        start = reader.line_num + 1


def _parse_number(text: str, masked_ok: bool = True, comma: bool = False) -> float | None:
    """The number a value cell holds: a decimal (ASCII digits, an exponent allowed) or a
    fraction like 1/2, finite; -inf for a masked word where ``masked_ok``; None for anything
    else. Longer than MAX_NUMBER_CHARS is a row error, never a conversion of its digits.

    With ``comma`` (a key whose sheets print a decimal comma) a comma is the decimal
    separator and a point is one too: ``0,25`` and ``0.25`` are a quarter, ``1,234`` is
    1.234, never a thousand. A number with two separators (``1.234,5``, ``1,234,567``) is
    none: a thousands separator is never guessed (digits grouped by spaces still are)."""
    t = text.strip().replace("\u2212", "-")
    if masked_ok and t.casefold() in MASKED_WORDS:
        return -math.inf
    if len(t) > MAX_NUMBER_CHARS:
        raise _RowError(
            "value", f"expected a number of at most {MAX_NUMBER_CHARS} characters, got {len(t)}"
        )
    if comma and "," in t:
        if t.count(",") + t.count(".") > 1:
            return None
        t = t.replace(",", ".")
    x: float | None = None
    grouped = _GROUPED.match(t)
    if grouped and re.search(_GROUP, t):
        t = re.sub(_GROUP, "", t)
    if _NUMBER.match(t):
        x = float(t)
    else:
        m = _FRACTION.match(t)
        if m and int(m.group(2)) != 0:
            x = float(Fraction(int(m.group(1)), int(m.group(2))))  # exact, then rounded once
    if x is not None and not math.isfinite(x):
        raise _RowError(
            "value", f"expected a number a float can hold (below 1e308 in size), got {_got(t)}"
        )
    return x


class _RowError(Exception):
    """A bad value in one column of the row being read."""

    def __init__(self, column: str, message: str) -> None:
        super().__init__(message)
        self.column = column
        self.message = message


class _Unreadable(_RowError):
    """A value or mark that cannot be read, recorded as wrong (``--lenient``)."""


def _parse_entry(ans: GradedAnswer, text: str) -> list[tuple[int, int]]:
    """The (row, col) cells, 0-based, that an entry names (several for a whole shape)."""
    t = text.strip()
    rows, cols = ans.dims
    if ans.kind == "matrix":
        m = _CELL.match(t) or _CELL_RC.match(t)
        if m:
            r, c = int(m.group(1)), int(m.group(2))
            if 1 <= r <= rows and 1 <= c <= cols:
                return [(r - 1, c - 1)]
        raise _RowError(
            "entry",
            f'expected a cell "row,col" of the {rows}x{cols} table '
            f"{ans.name} (row 1-{rows}, column 1-{cols}), got {_got(t)}",
        )
    if ans.kind in ("vector", "shape"):
        if ans.kind == "shape" and t == "":
            return [(0, c) for c in range(cols)]
        m = _CELL.match(t) or _CELL_RC.match(t)
        if m and m.group(1) == "1":
            t = m.group(2)
        if _INDEX.match(t) and 1 <= int(t) <= cols:
            return [(0, int(t) - 1)]
        what = "dimension" if ans.kind == "shape" else "entry"
        extra = " (or nothing for the whole shape)" if ans.kind == "shape" else ""
        raise _RowError(
            "entry", f"expected the {what} number 1-{cols} of {ans.name}{extra}, got {_got(t)}"
        )
    if t:
        raise _RowError(
            "entry", f"expected an empty entry for the single answer {ans.name}, got {_got(t)}"
        )
    return [(0, 0)]


def _chosen_option(ans: GradedAnswer, text: str) -> str:
    """The option a response names, normalized: its text (any case and spacing), the start of
    one option only, the name of the slip an option describes (spot the bug: "no-scale"), or
    the option's letter in the order printed (as the Canvas export asks)."""
    t = norm_text(text)
    if not ans.options or t in {norm_text(o) for o in ans.options}:
        return t
    labels = bool(ans.choice_slips) or all(len(o) == 1 for o in ans.options)
    if not labels:  # a multiple-choice item's labels are taken only as they are
        named = MISCONCEPTIONS.get(t)
        # a spot-the-bug option is the slip's description in the key's language (grade_files
        # reads in it), an older key's in English
        described = (
            {norm_text(named.description), norm_text(said(named.description))}
            if named is not None
            else set()
        )
        candidates = [o for o in ans.options if norm_text(o) in described]
        if not candidates and len(t) >= 4:
            candidates = [o for o in ans.options if norm_text(o).startswith(t)]
        if not candidates and len(t) == 1 and "a" <= t <= "z":
            index = ord(t) - ord("a")
            candidates = [ans.options[index]] if index < len(ans.options) else []
        if len(candidates) == 1:
            return norm_text(candidates[0])
    raise _RowError(
        "value", f"expected one of {_one_of([repr(o) for o in ans.options])}, got {_got(text)}"
    )


#: between the options of a mark-all answer in a responses file: letters or option texts,
#: "B;D" (as scan writes them) or "opt1; opt2" (as Moodle's Responses report does)
SET_SEPARATOR = ";"
#: between the options of a mark-all answer once read (normalized option texts never hold
#: a newline)
CHOSEN_SEPARATOR = "\n"


def _chosen_set(ans: GradedAnswer, text: str) -> str:
    """The options a mark-all response names, separated by ";" (letters or texts, each as
    ``_chosen_option`` reads one; a text that holds ";" itself is read whole, the longest
    run of pieces that is one option first), normalized, each once, in the order printed."""
    pieces = text.split(SET_SEPARATOR)
    chosen: set[str] = set()
    i = 0
    while i < len(pieces):
        if not pieces[i].strip():
            i += 1
            continue
        for j in range(len(pieces), i, -1):
            try:
                chosen.add(_chosen_option(ans, SET_SEPARATOR.join(pieces[i:j]).strip()))
            except _RowError:
                if j == i + 1:
                    raise
                continue
            i = j
            break
    order = [norm_text(o) for o in ans.options]
    return CHOSEN_SEPARATOR.join(sorted(chosen, key=order.index))


def _parse_value(
    ans: GradedAnswer, text: str, cells: list[tuple[int, int]], comma: bool = False
) -> list[float | str]:
    """The value(s) a response row gives for ``cells`` (``comma``: the key's sheets print a
    decimal comma, :func:`_parse_number`)."""
    t = text.strip()
    if ans.kind == "choice" and ans.multi:
        return [_chosen_set(ans, t)]
    if ans.kind == "choice":
        return [_chosen_option(ans, t)]
    if ans.kind == "text":
        return [t]
    if ans.kind == "shape" and len(cells) > 1:
        m = _SHAPE.match(t)
        if not m:
            raise _RowError("value", f"expected a shape like 4x4 or (4, 4), got {_got(t)}")
        if len(cells) != 2:
            raise _RowError(
                "value",
                f"expected one row per dimension of {ans.name}, got a whole shape {_got(t)}",
            )
        return [float(m.group(1)), float(m.group(2))]
    x = _parse_number(t, masked_ok=ans.kind in ("matrix", "vector"), comma=comma)
    if x is None:
        masked = ", or -inf/masked for a masked cell" if ans.kind in ("matrix", "vector") else ""
        if comma:  # the sheets printed 0,73: a point is read too, a thousands separator never
            hint = " (one decimal separator, no thousands separator)" if "," in t else ""
            raise _RowError("value", f"expected a number like 0,73{masked}, got {_got(t)}{hint}")
        hint = " (use a point for decimals)" if re.fullmatch(r"[+\-\u2212]?\d*,\d+", t) else ""
        raise _RowError("value", f"expected a number like 0.73{masked}, got {_got(t)}{hint}")
    return [x]


def read_responses(
    path: str | os.PathLike[str], key: GradeKey, display: str | None = None
) -> Responses:
    """Read and validate a responses CSV against ``key`` (GradeError on the first bad row)."""
    name = display or str(path)
    return parse_responses(read_text(path, name), key, name)


def read_text(path: str | os.PathLike[str], name: str) -> str:
    """A responses file's text (UTF-8, a BOM dropped), within the size limit."""
    data = read_limited(
        path, MAX_RESPONSES_BYTES, what="a responses CSV file", error=GradeError, shown=name
    )
    return _decode(data, name)


def header_row(text: str, name: str) -> list[str]:
    """The first non-blank record of a CSV text (empty when there is none)."""
    for _, record in _records(text, name):
        if any(c.strip() for c in record):
            return record
    return []


def _header(records: Iterable[tuple[int, list[str]]], name: str) -> tuple[int, dict[str, int]]:
    """The header's line and the index of each known column (extra columns are ignored)."""
    for line, record in records:
        if not any(c.strip() for c in record):
            continue
        index: dict[str, int] = {}
        for i, raw in enumerate(record):
            c = raw.strip().casefold()
            if c in COLUMNS or c in OPTIONAL_COLUMNS:
                if c in index:
                    raise GradeError(
                        f"expected each column once, got '{c}' twice",
                        file=name,
                        line=line,
                        field="header",
                    )
                index[c] = i
        missing = [c for c in COLUMNS if c not in index]
        if missing:
            got = ", ".join(repr(c.strip()) for c in record)
            raise GradeError(
                f"expected the columns {', '.join(COLUMNS)}, got {got} (missing "
                f"{', '.join(missing)})",
                file=name,
                line=line,
                field="header",
            )
        index["<width>"] = len(record)
        return line, index
    raise GradeError(
        f"expected a header row with the columns {', '.join(COLUMNS)}, got an empty file",
        file=name,
        line=1,
        field="header",
    )


#: the columns whose cells come from user data (ids), spreadsheet-protected when written
_PROTECTED_COLUMNS = ("student", "sheet", "question", "answer")


@dataclass(frozen=True)
class ResponseRow:
    """One row of our responses format (``ROW_COLUMNS``: no ``sheet`` column): what
    ``scan`` writes to responses.csv and hands the grader as it is (``responses_of_rows``),
    without reading the file back."""

    student: str
    question: str
    answer: str
    entry: str = ""
    value: str = ""
    mark: str = ""
    #: the key's sheet the student's copy is of (``scan --roster``: a photocopied class,
    #: whose students are not the key's sheets), written in a ``sheet`` column; "": none
    sheet: str = ""

    def cells(self, by_sheet: bool = False) -> list[str]:
        """The row's cells as a responses CSV holds them, in ``ROW_COLUMNS``'s order (with
        ``by_sheet``, ``SHEET_ROW_COLUMNS``'s): the ids spreadsheet-safe
        (``csvcells.protect``, undone when they are read)."""
        sheet = (protect(self.sheet),) if by_sheet else ()
        ids = (protect(self.student), *sheet, protect(self.question), protect(self.answer))
        return [*ids, self.entry, self.value, self.mark]


#: the header of a responses CSV written with a mark column (as ``scan`` writes it)
ROW_COLUMNS = (*COLUMNS, "mark")
#: the same with a ``sheet`` column (``scan --roster``: each student's copy is of a sheet)
SHEET_ROW_COLUMNS = ("student", "sheet", *COLUMNS[1:], "mark")
#: what ends a line of a CSV text (as ``_records`` reads it: ``newline=""``)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def parse_responses(
    text: str,
    key: GradeKey,
    name: str = "responses.csv",
    lenient: bool = False,
    unanswered: bool = False,
) -> Responses:
    """Validate responses CSV text against ``key``: every bad row at once (``RowErrors``,
    one line each); with ``lenient``, values and marks that cannot be read are graded as
    wrong and listed in ``Responses.unreadable`` instead. With ``unanswered``, a file with
    no answer in it (no rows, or every row blank) is read as it is, every student without
    responses (``scan``'s pile of unmarked pages), instead of refused as a blank template."""
    records = iter(_records(text, name))
    header_line, index = _header(records, name)
    width = index.pop("<width>")
    rows = _RowReader(key, name, "sheet" in index, lenient)
    for line, record in records:
        if not any(c.strip() for c in record):
            continue
        if len(record) > width and any(c.strip() for c in record[width:]):
            rows.refuse(
                GradeError(
                    f"expected at most {width} fields as in the header, got "
                    f'{len(record)} (quote an entry like "1,2" or write it as 1;2)',
                    file=name,
                    line=line,
                    field="fields",
                )
            )
            continue
        rows.add(line, {col: (record[i] if i < len(record) else "") for col, i in index.items()})
        if rows.full:
            break
    return rows.responses(header_line, "mark" in index, unanswered)


def responses_of_rows(
    rows: Iterable[ResponseRow],
    key: GradeKey,
    name: str = "responses.csv",
    unanswered: bool = False,
    by_sheet: bool = False,
) -> Responses:
    """The responses ``rows`` give, validated against ``key`` exactly as ``parse_responses``
    validates the same rows read from a responses CSV with a header line and the columns of
    ``ROW_COLUMNS`` (with ``by_sheet``: ``SHEET_ROW_COLUMNS``), each row on the next line
    (``name``: what the errors and the report call the file)."""
    reader = _RowReader(key, name, by_sheet=by_sheet, lenient=False)
    columns = SHEET_ROW_COLUMNS if by_sheet else ROW_COLUMNS
    line = 2  # line 1: the header
    for row in rows:
        cells = row.cells(by_sheet)
        if any(c.strip() for c in cells):
            reader.add(line, dict(zip(columns, cells, strict=True)))
            if reader.full:
                break
        line += 1 + sum(len(_LINE_BREAK.findall(c)) for c in cells)  # a quoted cell's own
    return reader.responses(1, True, unanswered)


class _RowReader:
    """The rows of one responses file, each checked against the key as it comes (its cells
    by column, as written), into every student's answers; the bad rows' errors kept."""

    def __init__(self, key: GradeKey, name: str, by_sheet: bool, lenient: bool) -> None:
        self.key, self.name, self.by_sheet, self.lenient = key, name, by_sheet, lenient
        self.students: dict[str, StudentAnswers] = {}
        self.seen: dict[tuple[str, str, str, str, tuple[int, int]], int] = {}
        self.marked: dict[tuple[str, str, str, str], int] = {}
        self.rows = self.answered = 0
        self.errors: list[GradeError] = []
        self.unreadable: list[str] = []

    @property
    def full(self) -> bool:
        """True once as many bad rows are listed as one run lists."""
        return len(self.errors) >= MAX_LISTED

    def refuse(self, error: GradeError) -> None:
        """A row refused before its cells are read (too many fields)."""
        self.rows += 1
        self.errors.append(error)

    def add(self, line: int, cells: dict[str, str]) -> None:
        """One row that is not blank, at ``line``: its cells by column."""
        self.rows += 1
        row = {col: text.strip() for col, text in cells.items()}
        for col in _PROTECTED_COLUMNS:  # written by --template through csvcells.protect
            if col in row:
                row[col] = unprotect(row[col])
        self.answered += bool(row.get("value")) or bool(row.get("mark"))
        key, by_sheet, students, lenient = self.key, self.by_sheet, self.students, self.lenient
        try:
            if row.get("mark") or ("mark" in row and not row["entry"] and not row["value"]):
                _read_mark_row(key, row, line, by_sheet, students, self.marked, lenient)
            else:
                _read_row(key, row, line, by_sheet, students, self.seen, lenient)
        except _Unreadable as exc:
            error = GradeError(exc.message, file=self.name, line=line, field=exc.column)
            self.unreadable.append(str(error))
        except _RowError as exc:
            self.errors.append(GradeError(exc.message, file=self.name, line=line, field=exc.column))

    def responses(self, header_line: int, marks: bool, unanswered: bool) -> Responses:
        """Every student's responses, once every row is read (``marks``: the file has a mark
        column): every bad row at once, or a file with no answer refused unless
        ``unanswered``."""
        name, rows = self.name, self.rows
        if self.errors:
            raise RowErrors(self.errors)
        if not rows and not unanswered:  # grading it would replace earlier scores with zeros
            raise GradeError(
                "expected a row per answer entry after the header, got none (a "
                "blank file to fill in: grade --template)",
                file=name,
                line=header_line + 1,
                field="rows",
            )
        if not self.answered and not unanswered:  # a template nobody filled in: the same zeros
            column = "value or mark column" if marks else "value column"
            raise GradeError(
                f"expected at least one answer in the {column}, got {rows} rows "
                "with none (is this the blank template?)",
                file=name,
                line=header_line + 1,
                field="value",
            )
        if self.by_sheet:
            order = list(self.students.values())
        else:
            # every sheet of the key is a student: key order, students without responses too
            order = [
                self.students.get(s.id) or StudentAnswers(s.id, s.id, 0) for s in self.key.sheets
            ]
        return Responses(
            path=name,
            students=tuple(order),
            has_sheet_column=self.by_sheet,
            unreadable=tuple(self.unreadable),
        )


def _pick_sheet(
    key: GradeKey,
    row: dict[str, str],
    line: int,
    by_sheet: bool,
    students: dict[str, StudentAnswers],
) -> SheetKey:
    student = row["student"]
    if not student:
        raise _RowError("student", "expected a student id, got nothing")
    column = "sheet" if by_sheet else "student"
    sid = row[column]
    sheet = key.sheet(sid)
    if sheet is None:
        ids = [s.id for s in key.sheets]
        raise _RowError(
            column,
            f"expected a sheet id from the key (one of {_one_of(ids)}), "
            f"got {_got(sid)}{_close_match(sid, ids)}",
        )
    prev = students.get(student)
    if by_sheet and prev is not None and prev.sheet != sheet.id:
        if not row["value"] and not row.get("mark"):
            # a blank row of another version (a per-student template has every version's
            # rows for each student): it ties the student to no version
            return sheet
        if not prev.responded:  # only blank rows so far: the version written is this one
            students[student] = StudentAnswers(student, sheet.id, line)
            return sheet
    if prev is not None and prev.sheet != sheet.id:
        raise _RowError(
            "sheet",
            f"expected sheet '{prev.sheet}' for student '{student}' as on "
            f"line {prev.first_line}, got {_got(sid)}",
        )
    return sheet


def _question_answer(sheet: SheetKey, row: dict[str, str]) -> tuple[QuestionKey, GradedAnswer]:
    """The question and answer a row names (a _RowError saying which ids there are)."""
    qid = row["question"]
    q = sheet.question(qid)
    if q is None:
        ids = [x.id for x in sheet.questions]
        raise _RowError(
            "question",
            f"expected a question id of sheet '{sheet.id}' (one of "
            f"{_one_of(ids)}), got {_got(qid)}{_close_match(qid, ids)}",
        )
    aname = row["answer"]
    ans = q.answer(aname)
    if ans is None:
        raise _RowError(
            "answer",
            f"expected an answer of question '{q.id}' (one of "
            f"{_one_of(list(q.names))}), got {_got(aname)}"
            f"{_close_match(aname, q.names)}",
        )
    return q, ans


def points_cell(x: Fraction) -> str:
    """A part's points as a mark template and its errors show them (3, 1.5, 3.333)."""
    return str(x.numerator) if x.denominator == 1 else f"{float(x):.4g}"


def parse_mark(text: str, possible: Fraction, comma: bool = False) -> Fraction:
    """The points a mark cell gives a part worth ``possible``: a word or sign for all or
    nothing (✓, r, right, ... / x, w, wrong, ...), else a number of points from 0 to
    ``possible`` (1.5, 1/2; digits grouped or not), exactly as typed (``comma``: a key
    printed with a decimal comma, where 1,5 is read too, as :func:`_parse_number` reads it).
    (``?`` or ``pending``, a mark still to give, is read before: see ``PENDING_WORDS``.)"""
    t = text.strip()
    word = t.casefold()
    if word in RIGHT_WORDS:
        return possible
    if word in WRONG_WORDS:
        return Fraction(0)
    said = f"points from 0 to {points_cell(possible)} (or ✓/x, right/wrong, r/w)"
    try:
        number = _parse_number(t, masked_ok=False, comma=comma)
    except _RowError as exc:  # too long, or too large for a float: said of this column
        raise _RowError("mark", exc.message) from None
    if number is None:
        raise _RowError("mark", f"expected {said}, got {_got(t)}")
    plain = re.sub(_GROUP, "", t.replace("\u2212", "-"))
    if comma:  # one separator at most (_parse_number): a decimal comma
        plain = plain.replace(",", ".")
    m = _FRACTION.match(plain)
    try:
        x = Fraction(int(m.group(1)), int(m.group(2))) if m else Fraction(plain)
    except (ValueError, ZeroDivisionError):
        raise _RowError("mark", f"expected {said}, got {_got(t)}") from None
    if not 0 <= x <= possible:
        raise _RowError("mark", f"expected {said}, got {_got(t)}")
    return x


def _read_mark_row(
    key: GradeKey,
    row: dict[str, str],
    line: int,
    by_sheet: bool,
    students: dict[str, StudentAnswers],
    marked: dict[tuple[str, str, str, str], int],
    lenient: bool = False,
) -> None:
    """A mark row: one part's points typed by a TA (entry and value empty; a blank mark is
    a part not marked)."""
    sheet = _pick_sheet(key, row, line, by_sheet, students)
    student = row["student"]
    q, ans = _question_answer(sheet, row)
    for column in ("entry", "value"):
        if row[column]:
            raise _RowError(
                column,
                f"expected an empty {column} on a row with a mark (one row per part: a "
                f"mark gives the whole part's points), got {_got(row[column])}",
            )
    entry = students.setdefault(student, StudentAnswers(student, sheet.id, line))
    if not row["mark"]:
        # a blank in a filled-in marks template: not marked (yet), unless cells grade it
        entry.unmarked.setdefault(q.id, set()).add(ans.name)
        return
    first = marked.get((student, sheet.id, q.id, ans.name))
    if first is not None:
        raise _RowError(
            "mark",
            f"expected one mark per student, question and answer, got a second for "
            f"{student}/{q.id}/{ans.name} (first on line {first})",
        )
    marked[(student, sheet.id, q.id, ans.name)] = line
    if row["mark"].strip().casefold() in PENDING_WORDS:
        entry.marks.setdefault(q.id, {})[ans.name] = PartMark(
            line, row["mark"], Fraction(0), pending=True
        )
        return
    try:
        points = parse_mark(row["mark"], q.points_of(ans.name), key.decimal == ",")
    except _RowError as exc:
        if not lenient:
            raise
        entry.marks.setdefault(q.id, {})[ans.name] = PartMark(line, row["mark"], Fraction(0))
        raise _Unreadable(exc.column, exc.message) from None
    entry.marks.setdefault(q.id, {})[ans.name] = PartMark(line, row["mark"], points)


def _read_row(
    key: GradeKey,
    row: dict[str, str],
    line: int,
    by_sheet: bool,
    students: dict[str, StudentAnswers],
    seen: dict[tuple[str, str, str, str, tuple[int, int]], int],
    lenient: bool = False,
) -> None:
    sheet = _pick_sheet(key, row, line, by_sheet, students)
    student = row["student"]
    q, ans = _question_answer(sheet, row)
    cells = _parse_entry(ans, row["entry"])
    for cell in cells:
        first = seen.get((student, sheet.id, q.id, ans.name, cell))
        if first is not None:
            where = "/".join(x for x in (student, q.id, ans.name, entry_label(ans, cell)) if x)
            raise _RowError(
                "entry" if row["entry"] else "answer",
                f"expected one row per student, question, answer and entry, got a "
                f"second row for {where} (first on line {first})",
            )
    for cell in cells:
        seen[(student, sheet.id, q.id, ans.name, cell)] = line
    entry = students.setdefault(student, StudentAnswers(student, sheet.id, line))
    if row["value"] == "":
        return  # a blank in a filled-in template: not answered
    slot = entry.cells.setdefault(q.id, {}).setdefault(ans.name, {})
    try:
        values = _parse_value(ans, row["value"], cells, comma=key.decimal == ",")
    except _RowError as exc:
        if not lenient or exc.column not in LENIENT_COLUMNS:
            raise
        wrong: float | str = UNREADABLE_CHOICE if ans.kind == "choice" else UNREADABLE
        for cell in cells:
            slot[cell] = ResponseCell(line, row["value"], wrong)
        raise _Unreadable(exc.column, exc.message) from None
    for cell, value in zip(cells, values, strict=True):
        slot[cell] = ResponseCell(line, row["value"], value)
