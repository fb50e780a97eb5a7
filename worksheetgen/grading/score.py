"""Grade a class's responses against key.json: partial credit, carried-forward credit, diagnoses.

The responses are a CSV with one row per student, question, answer and entry (documented in
the README). Grading is done in three steps that never touch the file system until the end:

1. ``load_key`` reads key.json into ``GradeKey`` (what each answer is, its tolerance and the
   misconception distractors);
2. ``read_responses`` reads and validates every row of the CSV against that key, raising
   ``GradeError`` ("responses.csv:LINE: column: expected ..., got ...") on the first bad row;
3. ``grade`` scores every student and names the slip that reproduces each wrong answer.

``scores_csv`` and ``report_md`` render the result; ``write_outputs`` writes both files
atomically, only after everything above has succeeded.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Any, BinaryIO, Literal

import numpy as np

from worksheetgen.attention.slips import MISCONCEPTIONS
from worksheetgen.bank.roster import delimiter
from worksheetgen.errors import ExportError, GradeError, did_you_mean
from worksheetgen.exact.mathtex import decimals_in
from worksheetgen.families import FAMILIES, get_family
from worksheetgen.files import (
    STDOUT,
    check_replaceable,
    write_failure,
    write_file,
    write_stream,
)
from worksheetgen.grading.csvcells import protect, unprotect
from worksheetgen.inputs import read_limited
from worksheetgen.keyjson.contract import read_key_data
from worksheetgen.keyjson.read import parse_key as export_view
from worksheetgen.render.documents import escape_md_inline

COLUMNS = ("student", "question", "answer", "entry", "value")
OPTIONAL_COLUMNS = ("sheet",)
NUMERIC_KINDS = ("matrix", "vector", "scalar", "shape")
MASKED_WORDS = frozenset({"-inf", "−inf", "-∞", "−∞", "masked", "-infinity", "−infinity"})
SCORES_FILE = "scores.csv"
REPORT_FILE = "report.md"
_EPS = 1e-9  # floating-point slack on top of a tolerance
#: the largest responses file read (the filled template of the largest class build is
#: about a third of it)
MAX_RESPONSES_BYTES = 500_000_000
#: the longest number a value cell may hold (digits, sign, point, exponent, a fraction)
MAX_NUMBER_CHARS = 100

# ASCII digits only: Python's \d and int() also take Arabic-Indic and other decimal digits,
# which no responses file means; row, column and shape numbers have at most 6 digits
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$", re.ASCII)
_FRACTION = re.compile(r"^([+-]?\d+)\s*/\s*(\d+)$", re.ASCII)
_INDEX = re.compile(r"^\d{1,6}$", re.ASCII)
_CELL = re.compile(r"^\(?\s*(\d{1,6})\s*[,;: ]\s*(\d{1,6})\s*\)?$", re.ASCII)
_CELL_RC = re.compile(r"^r\s*(\d{1,6})\s*c\s*(\d{1,6})$", re.IGNORECASE | re.ASCII)
_SHAPE = re.compile(
    r"^[(\[]?\s*(\d{1,6})\s*(?:x|×|\*|,|by)\s*(\d{1,6})\s*[)\]]?$", re.IGNORECASE | re.ASCII
)


# --------------------------------------------------------------------------- the key


@dataclass(frozen=True)
class KeyAnswer:
    """One graded part of a question: the key's value as a grid, with its tolerance."""

    name: str
    part: str  # "(a)", "(b)", ... as printed on the sheet
    kind: str
    grid: np.ndarray | None  # rows x cols of floats (-inf masked) for numeric kinds
    text: str | None  # the correct text of a choice, the model answer of a text part
    rounded: Any
    tolerance: float
    options: tuple[str, ...] = ()
    #: for a multiple-choice item: the misconception behind each wrong label
    choice_slips: tuple[tuple[str, str], ...] = ()

    @property
    def dims(self) -> tuple[int, int]:
        """Rows and columns of the answer grid (1 x 1 for a single value)."""
        return (1, 1) if self.grid is None else (int(self.grid.shape[0]), int(self.grid.shape[1]))

    @property
    def n_entries(self) -> int:
        """How many entries the student fills in."""
        return self.dims[0] * self.dims[1]


@dataclass(frozen=True)
class Slip:
    """One misconception's answers for one question (from key.json's "distractors")."""

    misconception: str
    description: str
    answers: dict[str, Any]
    grids: dict[str, np.ndarray] = field(default_factory=dict)  # numeric answers, parsed


@dataclass(frozen=True)
class CarryStep:
    """One carried-forward step of a question: answer ``answer`` recomputed by ``steps`` from
    ``inputs`` (the student's earlier answers; given values where the question does not ask
    them), with the steps' arguments (see worksheetgen.families.base.Carry)."""

    answer: str
    inputs: tuple[str, ...]
    steps: tuple[str, ...]
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class QuestionKey:
    """One question of one sheet, as the grader needs it."""

    id: str
    number: int
    title: str
    family: str
    points: Fraction
    given: dict[str, Any]
    answers: tuple[KeyAnswer, ...]
    slips: tuple[Slip, ...]
    #: how later answers follow from earlier ones (key.json's "carries"), in the key's order
    carries: tuple[CarryStep, ...] = ()

    def answer(self, name: str) -> KeyAnswer | None:
        """The graded answer called ``name``, if the question has one."""
        for a in self.answers:
            if a.name == name:
                return a
        return None

    @property
    def names(self) -> tuple[str, ...]:
        """The graded answer names in part order."""
        return tuple(a.name for a in self.answers)


@dataclass(frozen=True)
class SheetKey:
    """One sheet (student or version) of key.json."""

    id: str
    name: str
    questions: tuple[QuestionKey, ...]

    def question(self, qid: str) -> QuestionKey | None:
        """The question with id ``qid`` on this sheet."""
        for q in self.questions:
            if q.id == qid:
                return q
        return None


@dataclass(frozen=True)
class GradeKey:
    """What key.json says, for grading."""

    path: str
    title: str
    seed: Any
    sheets: tuple[SheetKey, ...]

    def sheet(self, sid: str) -> SheetKey | None:
        """The sheet with id ``sid``."""
        for s in self.sheets:
            if s.id == sid:
                return s
        return None

    @property
    def question_ids(self) -> tuple[str, ...]:
        """Every question id in key order (the union over sheets)."""
        seen: dict[str, None] = {}
        for s in self.sheets:
            for q in s.questions:
                seen.setdefault(q.id, None)
        return tuple(seen)


def _cell_float(x: Any) -> float:
    if isinstance(x, str) and x.strip().lower() in ("-inf", "-oo"):
        return -math.inf
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise TypeError(f"not a number: {x!r}")
    return float(x)


def _as_grid(kind: str, value: Any) -> np.ndarray:
    """A key (or distractor) value of a numeric kind as a 2-D float array."""
    if kind == "matrix":
        rows = [[_cell_float(x) for x in row] for row in value]
        if not rows or any(len(r) != len(rows[0]) for r in rows):
            raise TypeError("ragged matrix")
        return np.array(rows, dtype=float)
    if kind in ("vector", "shape"):
        return np.array([[_cell_float(x) for x in value]], dtype=float)
    return np.array([[_cell_float(value)]], dtype=float)


def _norm_text(text: Any) -> str:
    """Choice text compared case- and space-insensitively."""
    return " ".join(str(text).casefold().split())


def _part_label(index: int) -> str:
    return f"({chr(ord('a') + index)})" if index < 26 else f"({index + 1})"


def _multiple_choice(a: KeyAnswer, q: dict[str, Any]) -> KeyAnswer:
    """A multiple-choice item's part: the student gives the label of the option they chose."""
    choices = q["choices"]
    labels = tuple(str(c["label"]) for c in choices)
    slips = tuple(
        (_norm_text(c["label"]), str(c["misconception"])) for c in choices if c.get("misconception")
    )
    return KeyAnswer(
        name=a.name,
        part=a.part,
        kind="choice",
        grid=None,
        text=str(q.get("choice_answer")),
        rounded=q.get("choice_answer"),
        tolerance=0.0,
        options=labels,
        choice_slips=slips,
    )


def _slip(d: dict[str, Any], answers: Sequence[KeyAnswer]) -> Slip:
    values = dict(d.get("answer", {}))
    grids = {}
    for a in answers:
        if a.grid is not None and a.name in values:
            try:
                grid = _as_grid(a.kind, values[a.name])
            except (TypeError, ValueError, OverflowError):
                continue  # a slip value of another form (or no float) is never matched
            if grid.shape == a.grid.shape:
                grids[a.name] = grid
    return Slip(str(d["misconception"]), str(d.get("description", "")), values, grids)


def _carries(q: dict[str, Any], names: Sequence[str]) -> tuple[CarryStep, ...]:
    """A question's carried-forward steps as key.json states them. A key written before
    key.json had them gets its family's steps for the variant, as a build would write them."""
    raw = q.get("carries")
    if raw is None:
        family = str(q.get("family", ""))
        given = q.get("given", {})
        raw = (
            get_family(family).carries_for(given, names)
            if family in FAMILIES and isinstance(given, dict)
            else []
        )
    if not isinstance(raw, list):
        raise TypeError("carries: expected a list")
    out = []
    for c in raw:
        inputs, steps, args = c["from"], c["steps"], c.get("args", {})
        if not (
            isinstance(inputs, list)
            and isinstance(steps, list)
            and isinstance(args, dict)
            and all(isinstance(x, str) for x in inputs + steps)
        ):
            raise TypeError("carries: expected lists of names and a mapping of arguments")
        unknown = [x for x in steps if x not in CARRY_STEPS]
        if unknown:
            raise ValueError(f"carries: unknown step {unknown[0]!r}")
        out.append(CarryStep(str(c["answer"]), tuple(inputs), tuple(steps), dict(args)))
    return tuple(out)


def _question_key(q: dict[str, Any]) -> QuestionKey:
    kinds: dict[str, str] = q.get("kinds", {})
    values: dict[str, Any] = q["answer"]
    names = [p["answer"] for p in q.get("parts", [])] or list(values)
    names = list(dict.fromkeys(names))
    answers = []
    for i, name in enumerate(names):
        kind = kinds.get(name, "scalar")
        value = values[name]
        tol = float(q.get("tolerance", {}).get(name) or 0.0)
        if kind in NUMERIC_KINDS:
            grid, text = _as_grid(kind, value), None
        else:
            grid, text = None, str(value)
        answers.append(
            KeyAnswer(
                name=name,
                part=_part_label(i),
                kind=kind,
                grid=grid,
                text=text,
                rounded=q.get("rounded", {}).get(name),
                tolerance=tol,
                options=tuple(q.get("options", {}).get(name, ())),
            )
        )
    if q.get("format") == "choice" and q.get("choices"):
        answers = [_multiple_choice(a, q) for a in answers]
    slips = tuple(_slip(d, answers) for d in q.get("distractors", []))
    return QuestionKey(
        id=str(q["id"]),
        number=int(q.get("number", 0)),
        title=str(q.get("title") or q["id"]),
        family=str(q.get("family", "")),
        points=Fraction(str(q.get("points", 1))),
        given=dict(q.get("given", {})),
        answers=tuple(answers),
        slips=slips,
        carries=_carries(q, names),
    )


def check_key(data: Any, path: str = "key.json") -> None:
    """Check a loaded key.json document against the contract exactly as ``export`` does
    (``worksheetgen.keyjson.read.parse_key``): one verdict for both commands."""

    try:
        export_view(data, path)
    except ExportError as exc:
        raise GradeError(exc.message, file=exc.file, line=exc.line, field=exc.field) from None


def parse_key(data: Any, path: str = "key.json") -> GradeKey:
    """Turn a loaded key.json document into a GradeKey (GradeError if it is not one)."""
    check_key(data, path)
    sheets = []
    for i, s in enumerate(data["sheets"]):
        try:
            student = s.get("student") or {}
            sheets.append(
                SheetKey(
                    id=str(s["id"]),
                    name=str(student.get("name", "")),
                    questions=tuple(_question_key(q) for q in s["questions"]),
                )
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise GradeError(
                f"expected a question list with answers, kinds and parts, got a problem at {exc!s}",
                file=path,
                field=f"sheets[{i}]",
            ) from None
    ids = [s.id for s in sheets]
    if len(set(ids)) != len(ids):
        dup = next(x for x in ids if ids.count(x) > 1)
        raise GradeError(f"expected unique sheet ids, got '{dup}' twice", file=path, field="sheets")
    return GradeKey(
        path=path, title=str(data.get("title", "")), seed=data.get("seed"), sheets=tuple(sheets)
    )


def load_key(path: str | os.PathLike[str]) -> GradeKey:
    """Read key.json from disk, as ``export`` reads it (``worksheetgen.keyjson.contract``)."""

    return parse_key(read_key_data(path, GradeError), str(path))


# --------------------------------------------------------------------------- the responses


@dataclass(frozen=True)
class Cell:
    """One value a student wrote, with the CSV line it came from."""

    line: int
    text: str
    value: float | str  # a float (-inf for masked) for numeric kinds, else the text


@dataclass
class StudentAnswers:
    """One student's responses: answer cells by question id, answer name and (row, col)."""

    student: str
    sheet: str
    first_line: int
    cells: dict[str, dict[str, dict[tuple[int, int], Cell]]] = field(default_factory=dict)


@dataclass(frozen=True)
class Responses:
    """Every student's responses, in the order the grader reports them."""

    path: str
    students: tuple[StudentAnswers, ...]
    has_sheet_column: bool


def _shorten(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def _got(text: str) -> str:
    return "nothing" if text == "" else repr(_shorten(text))


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


def _parse_number(text: str, masked_ok: bool = True) -> float | None:
    """The number a value cell holds: a decimal (ASCII digits, an exponent allowed) or a
    fraction like 1/2, finite; -inf for a masked word where ``masked_ok``; None for anything
    else. Longer than MAX_NUMBER_CHARS is a row error, never a conversion of its digits."""
    t = text.strip().replace("\u2212", "-")
    if masked_ok and t.casefold() in MASKED_WORDS:
        return -math.inf
    if len(t) > MAX_NUMBER_CHARS:
        raise _RowError(
            "value", f"expected a number of at most {MAX_NUMBER_CHARS} characters, got {len(t)}"
        )
    x: float | None = None
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


def _parse_entry(ans: KeyAnswer, text: str) -> list[tuple[int, int]]:
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


def _chosen_option(ans: KeyAnswer, text: str) -> str:
    """The option a response names, normalized: its text (any case and spacing), the start of
    one option only, the name of the slip an option describes (spot the bug: "no-scale"), or
    the option's letter in the order printed (as the Canvas export asks)."""
    t = _norm_text(text)
    if not ans.options or t in {_norm_text(o) for o in ans.options}:
        return t
    labels = bool(ans.choice_slips) or all(len(o) == 1 for o in ans.options)
    if not labels:  # a multiple-choice item's labels are taken only as they are
        named = MISCONCEPTIONS.get(t)
        candidates = [
            o
            for o in ans.options
            if named is not None and _norm_text(o) == _norm_text(named.description)
        ]
        if not candidates and len(t) >= 4:
            candidates = [o for o in ans.options if _norm_text(o).startswith(t)]
        if not candidates and len(t) == 1 and "a" <= t <= "z":
            index = ord(t) - ord("a")
            candidates = [ans.options[index]] if index < len(ans.options) else []
        if len(candidates) == 1:
            return _norm_text(candidates[0])
    raise _RowError(
        "value", f"expected one of {_one_of([repr(o) for o in ans.options])}, got {_got(text)}"
    )


def _parse_value(ans: KeyAnswer, text: str, cells: list[tuple[int, int]]) -> list[float | str]:
    """The value(s) a response row gives for ``cells``."""
    t = text.strip()
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
    x = _parse_number(t, masked_ok=ans.kind in ("matrix", "vector"))
    if x is None:
        hint = " (use a point for decimals)" if re.fullmatch(r"[+\-\u2212]?\d*,\d+", t) else ""
        masked = ", or -inf/masked for a masked cell" if ans.kind in ("matrix", "vector") else ""
        raise _RowError("value", f"expected a number like 0.73{masked}, got {_got(t)}{hint}")
    return [x]


def _entry_label(ans: KeyAnswer, cell: tuple[int, int]) -> str:
    if ans.kind == "matrix":
        return f"{cell[0] + 1},{cell[1] + 1}"
    if ans.kind in ("vector", "shape"):
        return str(cell[1] + 1)
    return ""


def read_responses(
    path: str | os.PathLike[str], key: GradeKey, display: str | None = None
) -> Responses:
    """Read and validate a responses CSV against ``key`` (GradeError on the first bad row)."""
    name = display or str(path)
    data = read_limited(
        path, MAX_RESPONSES_BYTES, what="a responses CSV file", error=GradeError, shown=name
    )
    return parse_responses(_decode(data, name), key, name)


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


def parse_responses(text: str, key: GradeKey, name: str = "responses.csv") -> Responses:
    """Validate responses CSV text against ``key`` (GradeError on the first bad row)."""
    records = iter(_records(text, name))
    header_line, index = _header(records, name)
    width = index.pop("<width>")
    by_sheet = "sheet" in index
    students: dict[str, StudentAnswers] = {}
    seen: dict[tuple[str, str, str, tuple[int, int]], int] = {}
    rows = answered = 0
    for line, record in records:
        if not any(c.strip() for c in record):
            continue
        rows += 1
        if len(record) > width and any(c.strip() for c in record[width:]):
            raise GradeError(
                f"expected at most {width} fields as in the header, got "
                f'{len(record)} (quote an entry like "1,2" or write it as 1;2)',
                file=name,
                line=line,
                field="fields",
            )
        row = {col: (record[i].strip() if i < len(record) else "") for col, i in index.items()}
        for col in _PROTECTED_COLUMNS:  # written by --template through csvcells.protect
            if col in row:
                row[col] = unprotect(row[col])
        answered += bool(row.get("value"))
        try:
            _read_row(key, row, line, by_sheet, students, seen)
        except _RowError as exc:
            raise GradeError(exc.message, file=name, line=line, field=exc.column) from None
    if not rows:  # grading it would replace earlier scores with zeros for everyone
        raise GradeError(
            "expected a row per answer entry after the header, got none (a "
            "blank file to fill in: grade --template)",
            file=name,
            line=header_line + 1,
            field="rows",
        )
    if not answered:  # a template nobody filled in: the same zeros
        raise GradeError(
            f"expected at least one answer in the value column, got {rows} rows "
            "with none (is this the blank template?)",
            file=name,
            line=header_line + 1,
            field="value",
        )
    if by_sheet:
        order = list(students.values())
    else:
        # every sheet of the key is a student: key order, students without responses too
        order = [students.get(s.id) or StudentAnswers(s.id, s.id, 0) for s in key.sheets]
    return Responses(path=name, students=tuple(order), has_sheet_column=by_sheet)


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
    if prev is not None and prev.sheet != sheet.id:
        raise _RowError(
            "sheet",
            f"expected sheet '{prev.sheet}' for student '{student}' as on "
            f"line {prev.first_line}, got {_got(sid)}",
        )
    return sheet


def _read_row(
    key: GradeKey,
    row: dict[str, str],
    line: int,
    by_sheet: bool,
    students: dict[str, StudentAnswers],
    seen: dict[tuple[str, str, str, tuple[int, int]], int],
) -> None:
    sheet = _pick_sheet(key, row, line, by_sheet, students)
    student = row["student"]
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
    cells = _parse_entry(ans, row["entry"])
    for cell in cells:
        first = seen.get((student, q.id, ans.name, cell))
        if first is not None:
            where = "/".join(x for x in (student, q.id, ans.name, _entry_label(ans, cell)) if x)
            raise _RowError(
                "entry" if row["entry"] else "answer",
                f"expected one row per student, question, answer and entry, got a "
                f"second row for {where} (first on line {first})",
            )
    for cell in cells:
        seen[(student, q.id, ans.name, cell)] = line
    entry = students.setdefault(student, StudentAnswers(student, sheet.id, line))
    if row["value"] == "":
        return  # a blank in a filled-in template: not answered
    values = _parse_value(ans, row["value"], cells)
    slot = entry.cells.setdefault(q.id, {}).setdefault(ans.name, {})
    for cell, value in zip(cells, values, strict=True):
        slot[cell] = Cell(line, row["value"], value)


# --------------------------------------------------------------------------- grading

Status = Literal["right", "carried", "partial", "wrong", "blank", "ungraded"]


@dataclass(frozen=True)
class WrongEntry:
    """An entry that is neither right nor carried forward: what was written, what the key says."""

    entry: str
    wrote: str
    expected: str


@dataclass(frozen=True)
class PartResult:
    """The grade of one part of one question."""

    answer: str
    part: str
    kind: str
    earned: Fraction
    possible: Fraction
    right: int
    carried: int
    answered: int
    total: int
    carried_from: tuple[str, ...] = ()
    slips: tuple[Slip, ...] = ()
    wrong: tuple[WrongEntry, ...] = ()
    response: str = ""
    model: str = ""

    @property
    def status(self) -> Status:
        """right, carried (all credit, some of it carried forward), partial, wrong, blank or
        ungraded (free text for a person to mark)."""
        if self.kind == "text":
            return "ungraded"
        if self.answered == 0:
            return "blank"
        if self.right == self.total:
            return "right"
        if self.right + self.carried == self.total:
            return "carried"
        if self.kind in ("scalar", "shape", "choice"):
            return "wrong"  # all or nothing
        return "partial" if self.right + self.carried > 0 else "wrong"


@dataclass(frozen=True)
class QuestionResult:
    """The grade of one question."""

    id: str
    number: int
    title: str
    points: Fraction
    parts: tuple[PartResult, ...]

    @cached_property
    def earned(self) -> Fraction:
        return sum((p.earned for p in self.parts), Fraction(0))

    @cached_property
    def ungraded(self) -> Fraction:
        return sum((p.possible for p in self.parts if p.kind == "text"), Fraction(0))


@dataclass(frozen=True)
class StudentResult:
    """One student's grade."""

    student: str
    sheet: str
    name: str
    responded: bool
    questions: tuple[QuestionResult, ...]

    @cached_property
    def earned(self) -> Fraction:
        return sum((q.earned for q in self.questions), Fraction(0))

    @cached_property
    def possible(self) -> Fraction:
        return sum((q.points for q in self.questions), Fraction(0))

    @cached_property
    def ungraded(self) -> Fraction:
        return sum((q.ungraded for q in self.questions), Fraction(0))


@dataclass(frozen=True)
class GradeResult:
    """The whole class's grades, ready to render."""

    key: GradeKey
    responses: str
    has_sheet_column: bool
    students: tuple[StudentResult, ...]

    def slip_counts(self) -> list[tuple[Slip, int, int]]:
        """Each diagnosed misconception with how many answers and students it reproduced."""
        answers: dict[str, int] = {}
        students: dict[str, set[str]] = {}
        first: dict[str, Slip] = {}
        for s in self.students:
            for q in s.questions:
                for p in q.parts:
                    for slip in p.slips:
                        first.setdefault(slip.misconception, slip)
                        answers[slip.misconception] = answers.get(slip.misconception, 0) + 1
                        students.setdefault(slip.misconception, set()).add(s.student)
        return sorted(
            ((first[m], answers[m], len(students[m])) for m in first),
            key=lambda t: (-t[2], -t[1], t[0].misconception),
        )


def _close(expected: np.ndarray, got: np.ndarray, tol: float) -> np.ndarray:
    """Entry-wise: is ``got`` within ``tol`` of ``expected`` (−∞ only matches −∞)."""
    with np.errstate(invalid="ignore"):
        # inf - inf and anything with NaN (a blank) give NaN, which compares False
        return (np.abs(expected - got) <= tol + _EPS) | (expected == got)


def _mask(m: np.ndarray) -> np.ndarray:
    out = m.copy()
    out[np.triu(np.ones(out.shape, dtype=bool), k=1)] = -math.inf
    return out


def _softmax_rows(m: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        top = np.max(m, axis=1, keepdims=True)
        e = np.exp(m - top)
        return e / e.sum(axis=1, keepdims=True)


def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    if a.shape[1] != b.shape[0]:
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        return a @ b


@dataclass(frozen=True)
class Recomputed:
    """An answer carried through a step: the student's earlier answers it used, the value
    (a grid, or a choice's normalized text) and how far the student's own rounding of those
    answers may move it (0, or per entry)."""

    sources: tuple[str, ...]
    value: Any
    slack: Any = 0.0


def _half_unit_printed(ans: KeyAnswer | None) -> float:
    """Half a unit of the last digit the key prints for ``ans`` (0 for none)."""

    if ans is None or ans.rounded is None:
        return 0.0
    return 0.5 * 10.0 ** -decimals_in(ans.rounded)


def _rounding(q: QuestionKey, name: str) -> float:
    """How far a student's written answer ``name`` may be from what they worked with: half a
    unit of its printed digits when the key rounds it (tolerance above 0), else 0 (a whole
    number is written exactly; a given value is exact)."""
    a = q.answer(name)
    return _half_unit_printed(a) if a is not None and a.tolerance > 0 else 0.0


def _product(
    q: QuestionKey, names: Sequence[str], a: np.ndarray, b: np.ndarray, transpose: bool
) -> tuple[np.ndarray, np.ndarray] | None:
    """a·b (or a·bᵀ) with what the rounding of each factor carries into it: half a unit of a
    rounded factor times the sum of the other factor's magnitudes along the product."""
    right = b.T if transpose else b
    out = _matmul(a, right)
    if out is None:
        return None
    with np.errstate(invalid="ignore"):
        slack = _rounding(q, names[0]) * np.abs(right).sum(axis=0, keepdims=True) + _rounding(
            q, names[1]
        ) * np.abs(a).sum(axis=1, keepdims=True)
    return out, slack


def _top_choice(before: np.ndarray, after: np.ndarray, args: dict[str, Any]) -> str | None:
    """The option two softmaxes support at the largest entry of ``top_of``: options[0] when
    it has more weight in ``before``, options[1] when in ``after``, options[2] when equal."""
    top_of, options = args.get("top_of"), args.get("options")
    if (
        not isinstance(top_of, list)
        or not top_of
        or not isinstance(options, list)
        or len(options) != 3
    ):
        return None
    top = max(range(len(top_of)), key=lambda i: top_of[i])
    if before.shape[0] != 1 or after.shape[0] != 1 or top >= min(before.shape[1], after.shape[1]):
        return None
    u, v = before[0, top], after[0, top]
    if math.isnan(u) or math.isnan(v):
        return None
    return _norm_text(options[0] if u > v else options[1] if u < v else options[2])


def _step(
    q: QuestionKey, op: str, names: Sequence[str], xs: list[Any], args: dict[str, Any]
) -> tuple[Any, Any] | None:
    """One step of CARRY_STEPS applied to ``xs`` (all inputs, named ``names``, for the first
    step; the value so far after it): the value and the rounding it carries, or None where
    the step does not fit the values."""
    x = xs[0]
    if op in ("matmul", "matmul_t"):
        return _product(q, names, x, xs[1], op == "matmul_t") if len(xs) == 2 else None
    if op == "scale":
        d_k = args.get("d_k")
        return (
            (x / math.sqrt(float(d_k)), 0.0) if isinstance(d_k, int | float) and d_k > 0 else None
        )
    if op == "mask":
        return (_mask(x), 0.0) if x.shape[0] == x.shape[1] else None
    if op == "softmax":
        return _softmax_rows(x), 0.0
    if op == "times":
        factor = args.get("factor")
        return (x * float(factor), 0.0) if isinstance(factor, int | float) else None
    if op == "shape":
        cols = args.get("cols")
        if not isinstance(cols, int | float) or x.shape != (1, 1):
            return None
        return np.array([[x[0, 0], cols]], dtype=float), 0.0
    if op == "compare_top":
        text = _top_choice(x, xs[1], args) if len(xs) == 2 else None
        return None if text is None else (text, 0.0)
    return None


#: the steps key.json's "carries" may name (the vocabulary of families.base.Carry)
CARRY_STEPS = ("matmul", "matmul_t", "scale", "mask", "softmax", "times", "shape", "compare_top")


def _given_grid(value: Any) -> np.ndarray | None:
    """A given value (a number, a list or a list of rows) as a 2-D grid, if it is one."""
    try:
        if isinstance(value, list) and value and isinstance(value[0], list):
            return _as_grid("matrix", value)
        if isinstance(value, list) and value:
            return _as_grid("vector", value)
        return _as_grid("scalar", value)
    except (TypeError, ValueError):
        return None


def _recompute(q: QuestionKey, name: str, vals: dict[str, Any]) -> Recomputed | None:
    """Answer ``name`` carried through the first of the question's steps for it that applies:
    its inputs are answers the student was graded on (at least one) or given values."""
    asked = set(q.names)
    for c in q.carries:
        if c.answer != name:
            continue
        if not any(n in asked for n in c.inputs) or any(
            n in asked and not isinstance(vals.get(n), np.ndarray) for n in c.inputs
        ):
            continue
        xs = [vals[n] if n in asked else _given_grid(q.given.get(n)) for n in c.inputs]
        if any(x is None for x in xs):
            continue
        value: Any = None
        slack: Any = 0.0
        for i, op in enumerate(c.steps):
            done = _step(q, op, c.inputs, xs if i == 0 else [value], c.args)
            if done is None:
                break
            value = done[0]
            # the rounding a product carries is what it is when the product is the answer
            slack = done[1] if i == len(c.steps) - 1 else 0.0
        else:
            return Recomputed(tuple(n for n in c.inputs if n in asked), value, slack)
    return None


def _shown(ans: KeyAnswer, cell: tuple[int, int]) -> str:
    r = ans.rounded
    try:
        if ans.kind == "matrix":
            return str(r[cell[0]][cell[1]])
        if ans.kind in ("vector", "shape"):
            return str(r[cell[1]])
    except (IndexError, TypeError, KeyError):
        pass
    return str(r if r is not None else ans.text)


def _diagnose(
    q: QuestionKey, ans: KeyAnswer, grid: np.ndarray, answered: np.ndarray, right: np.ndarray
) -> tuple[Slip, ...]:
    """The slips whose result matches every entry the student gave (and some wrong one)."""
    if not (answered & ~right).any():
        return ()
    return tuple(
        slip
        for slip in q.slips
        if ans.name in slip.grids
        and (_close(slip.grids[ans.name], grid, ans.tolerance) | ~answered).all()
    )


def _grade_numeric(
    q: QuestionKey,
    ans: KeyAnswer,
    got: dict[tuple[int, int], Cell],
    share: Fraction,
    vals: dict[str, Any],
    full: dict[str, bool],
) -> PartResult:
    assert ans.grid is not None
    grid = np.full(ans.grid.shape, np.nan)
    for (r, c), cell in got.items():
        grid[r, c] = float(cell.value)
    vals[ans.name] = grid
    answered = ~np.isnan(grid)
    right = _close(ans.grid, grid, ans.tolerance) & answered
    carried = np.zeros(grid.shape, dtype=bool)
    sources: tuple[str, ...] = ()
    if not right.all():
        redo = _recompute(q, ans.name, vals)
        if (
            redo is not None
            and isinstance(redo.value, np.ndarray)
            and redo.value.shape == grid.shape
        ):
            if all(full.get(s, True) for s in redo.sources):
                # worked from the student's own earlier answers, which are right (within
                # their tolerance, such as an A one unit off the key's): right when within
                # the key's tolerance of what follows from them
                right |= answered & ~right & _close(redo.value, grid, ans.tolerance)
            else:
                # from a wrong earlier answer, which the student may have used before
                # rounding it: the key's tolerance, or that rounding carried through (plus
                # this answer's own rounding), if wider
                own = _rounding(q, ans.name) + redo.slack
                carried = (
                    answered & ~right & _close(redo.value, grid, np.maximum(ans.tolerance, own))
                )
                sources = redo.sources if carried.any() else ()
    full[ans.name] = bool(right.all())
    total = ans.n_entries
    n_right, n_carried = int(right.sum()), int(carried.sum())
    whole = ans.kind in ("scalar", "shape")  # all or nothing
    if whole:
        credit = Fraction(1) if n_right + n_carried == total else Fraction(0)
    else:
        credit = Fraction(n_right + n_carried, total)
    wrong = tuple(
        WrongEntry(_entry_label(ans, cell), got[cell].text, _shown(ans, cell))
        for cell in sorted(got)
        if not right[cell] and not carried[cell]
    )
    return PartResult(
        answer=ans.name,
        part=ans.part,
        kind=ans.kind,
        earned=share * credit,
        possible=share,
        right=n_right,
        carried=n_carried,
        answered=int(answered.sum()),
        total=total,
        carried_from=sources,
        slips=_diagnose(q, ans, grid, answered, right),
        wrong=wrong,
    )


def _grade_choice(
    q: QuestionKey,
    ans: KeyAnswer,
    cell: Cell | None,
    share: Fraction,
    vals: dict[str, Any],
    full: dict[str, bool],
) -> PartResult:
    text = str(cell.value) if cell is not None else None
    vals[ans.name] = text
    ok = text is not None and text == _norm_text(ans.text)
    full[ans.name] = ok
    carried, sources = False, ()
    if text is not None and not ok:
        redo = _recompute(q, ans.name, vals)
        if (
            redo is not None
            and isinstance(redo.value, str)
            and not all(full.get(s, True) for s in redo.sources)
        ):
            carried = redo.value == text
            sources = redo.sources if carried else ()
    slips: tuple[Slip, ...] = ()
    if text is not None and not ok and ans.choice_slips:
        chosen = {m for label, m in ans.choice_slips if label == text}
        slips = tuple(s for s in q.slips if s.misconception in chosen)
        named = {s.misconception for s in slips}
        slips += tuple(Slip(m, "", {}) for m in sorted(chosen - named))
    elif text is not None and not ok:
        slips = tuple(
            s for s in q.slips if ans.name in s.answers and _norm_text(s.answers[ans.name]) == text
        )
    wrong = (
        ()
        if ok or carried or cell is None
        else (WrongEntry("", cell.text, str(ans.rounded or ans.text)),)
    )
    return PartResult(
        answer=ans.name,
        part=ans.part,
        kind=ans.kind,
        earned=share if ok or carried else Fraction(0),
        possible=share,
        right=int(ok),
        carried=int(carried),
        answered=int(text is not None),
        total=1,
        carried_from=sources,
        slips=slips,
        wrong=wrong,
    )


def grade_question(q: QuestionKey, got: dict[str, dict[tuple[int, int], Cell]]) -> QuestionResult:
    """Score one question: equal shares per part, per-entry credit in tables, carried credit."""
    share = q.points / len(q.answers) if q.answers else Fraction(0)
    vals: dict[str, Any] = {}
    full: dict[str, bool] = {}
    parts = []
    for ans in q.answers:
        cells = got.get(ans.name, {})
        if ans.kind in NUMERIC_KINDS:
            parts.append(_grade_numeric(q, ans, cells, share, vals, full))
        elif ans.kind == "choice":
            parts.append(_grade_choice(q, ans, cells.get((0, 0)), share, vals, full))
        else:
            cell = cells.get((0, 0))
            parts.append(
                PartResult(
                    answer=ans.name,
                    part=ans.part,
                    kind=ans.kind,
                    earned=Fraction(0),
                    possible=share,
                    right=0,
                    carried=0,
                    answered=int(cell is not None),
                    total=1,
                    response=cell.text if cell else "",
                    model=ans.text or "",
                )
            )
    return QuestionResult(
        id=q.id, number=q.number, title=q.title, points=q.points, parts=tuple(parts)
    )


def grade(key: GradeKey, responses: Responses) -> GradeResult:
    """Grade every student of ``responses`` against ``key``."""
    students = []
    for s in responses.students:
        sheet = key.sheet(s.sheet)
        assert sheet is not None  # read_responses only accepts the key's sheets
        questions = tuple(grade_question(q, s.cells.get(q.id, {})) for q in sheet.questions)
        students.append(
            StudentResult(
                student=s.student,
                sheet=sheet.id,
                name=sheet.name,
                responded=s.first_line > 0,
                questions=questions,
            )
        )
    return GradeResult(
        key=key,
        responses=responses.path,
        has_sheet_column=responses.has_sheet_column,
        students=tuple(students),
    )


# --------------------------------------------------------------------------- outputs


def points_text(x: Fraction) -> str:
    """Points rounded half-up to 2 decimals, without trailing zeros (2.67, 3.5, 4)."""
    d = (Decimal(x.numerator) / Decimal(x.denominator)).quantize(
        Decimal("0.01"), rounding=ROUND_HALF_UP
    )
    text = f"{d:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def scores_csv(result: GradeResult) -> str:
    """One row per student: each question's score, the total and the maximum."""
    qids = result.key.question_ids
    ungraded = any(s.ungraded for s in result.students)
    head = (
        ["student"]
        + (["sheet"] if result.has_sheet_column else [])
        + ["name", *(protect(q) for q in qids), "total", "max"]
    )
    if ungraded:
        head.append("ungraded")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(head)
    for s in result.students:
        by_id = {q.id: q for q in s.questions}
        row = [protect(s.student)] + ([protect(s.sheet)] if result.has_sheet_column else [])
        row.append(protect(s.name))
        row += [points_text(by_id[q].earned) if q in by_id else "" for q in qids]
        row += [points_text(s.earned), points_text(s.possible)]
        if ungraded:
            row.append(points_text(s.ungraded))
        w.writerow(row)
    return buf.getvalue()


def _md(text: Any) -> str:
    """Text that prints as written in the Markdown report (one line, no markup, no HTML, no
    math): the sheets' own escaping (``render.escape_md_inline``), so a name reads the same
    in sheets.md and report.md."""

    return escape_md_inline(text)


def _code(text: Any) -> str:
    """A one-line code span that shows ``text`` as written, whatever backticks it holds."""
    one_line = " ".join(str(text).split())
    run = max((len(m) for m in re.findall(r"`+", one_line)), default=0)
    fence = "`" * (run + 1)
    pad = " " if one_line.startswith("`") or one_line.endswith("`") else ""
    return f"{fence}{pad}{one_line}{pad}{fence}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _names(names: Sequence[str]) -> str:
    """'scaled', 'A and V', 'Q, K and V'."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _part_line(p: PartResult) -> str:
    head = f"- {p.part} {_code(p.answer)}: "
    entries = f"{p.right + p.carried} of {p.total} entries" if p.total > 1 else ""
    status = p.status
    if status == "ungraded":
        wrote = _md(_shorten(p.response, 200)) if p.response else "(blank)"
        return (
            head + f"free text, to grade by hand ({points_text(p.possible)} points). "
            f"Wrote: {wrote.rstrip('.')}. Model answer: {_md(_shorten(p.model, 200))}"
        )
    if status == "blank":
        text = "blank"
    elif status == "right":
        text = "right"
    elif status == "carried":
        text = f"credit carried forward from your {_names(list(p.carried_from))}"
    elif status == "partial":
        text = f"partly right ({entries})"
        if p.carried:
            text += f", {p.carried} carried forward from your {_names(list(p.carried_from))}"
    else:
        text = "wrong"
    line = head + text + f" ({points_text(p.earned)}/{points_text(p.possible)})"
    if p.slips:
        named = "; ".join(
            f"**{_md(s.misconception)}**"
            + (f" ({_md(s.description.rstrip('.'))})" if s.description else "")
            for s in p.slips
        )
        line += f". Reproduced by {named}"
    elif status in ("partial", "wrong") and p.kind != "choice":
        # (a pick-one answer names its slip when an option is one: else there is none to name)
        line += ". No slip in the misconception library reproduces it"
    if p.wrong:
        shown = "; ".join(
            (f"({w.entry}) " if w.entry else "") + f"wrote {_md(w.wrote)}, key {_md(w.expected)}"
            for w in p.wrong[:12]
        )
        more = f"; and {len(p.wrong) - 12} more" if len(p.wrong) > 12 else ""
        line += f". Not credited: {shown}{more}"
    return line + "."


def report_md(result: GradeResult) -> str:
    """A Markdown report: class summary, slips seen, and each student's parts with diagnoses."""
    key = result.key
    out = [f"# Grading report: {_md(key.title or 'worksheet')}", ""]
    seed = f" (seed {key.seed})" if key.seed is not None else ""
    out.append(
        f"Key: {_code(key.path)}{seed}. Responses: {_code(result.responses)}. "
        f"{_count(len(result.students), 'student')}."
    )
    graded = [s for s in result.students if s.responded]
    if graded:
        mean = sum((s.earned for s in graded), Fraction(0)) / len(graded)
        top = max(s.possible for s in graded)
        out.append(
            f"Mean score of the {_count(len(graded), 'student')} with responses: "
            f"{points_text(mean)} of {points_text(top)}."
        )
    missing = [s.student for s in result.students if not s.responded]
    if missing:
        out.append(f"No responses from: {_md(', '.join(missing))}.")
    out += ["", "## Slips seen", ""]
    counts = result.slip_counts()
    if counts:
        out += ["| misconception | what it is | answers | students |", "|---|---|---:|---:|"]
        out += [
            f"| {_md(s.misconception)} | {_md(s.description)} | {n} | {k} |" for s, n, k in counts
        ]
    else:
        out.append("No wrong answer was reproduced by a slip in the misconception library.")
    for s in result.students:
        who = _md(s.student) + (f" ({_md(s.name)})" if s.name and s.name != s.student else "")
        if result.has_sheet_column:
            who += f", sheet {_md(s.sheet)}"
        score = f"{points_text(s.earned)} / {points_text(s.possible)}"
        if s.ungraded:
            score += f" (+ {points_text(s.ungraded)} to grade by hand)"
        out += ["", f"## {who}: {score}", ""]
        if not s.responded:
            out.append("No responses.")
            continue
        for q in s.questions:
            out.append(
                f"### Question {q.number}: {_md(q.title)} ({_code(q.id)}), "
                f"{points_text(q.earned)} / {points_text(q.points)}"
            )
            out.append("")
            out += [_part_line(p) for p in q.parts]
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def write_outputs(result: GradeResult, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write scores.csv and report.md into ``out_dir``, each atomically (temp file + rename)."""
    files = {SCORES_FILE: scores_csv(result), REPORT_FILE: report_md(result)}
    out = Path(out_dir)
    for name in files:  # both may be replaced, or neither is written
        check_replaceable(out / name)
    try:
        for name, text in files.items():
            write_file(out / name, text.encode("utf-8"))
    except OSError as exc:
        error = write_failure(exc, out)
        if error is None:
            raise
        raise error from None
    return [out / name for name in files]


@dataclass(frozen=True)
class GradeRun:
    """What ``grade_files`` did: the result and the files it wrote."""

    result: GradeResult
    files: tuple[Path, ...]


def grade_files(
    key_path: str | os.PathLike[str],
    responses_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str] | None = None,
) -> GradeRun:
    """Load, validate and grade everything, then (only then) write scores.csv and report.md."""
    out = Path(out_dir) if out_dir is not None else Path(responses_path).parent
    responses_file = Path(responses_path)
    for name in (SCORES_FILE, REPORT_FILE):
        target = out / name
        if target.exists() and responses_file.exists() and target.samefile(responses_file):
            raise GradeError(
                f"expected an output folder where {name} is not the responses "
                "file itself, got the same file",
                file=str(out),
                field="--out",
            )
    for name in (SCORES_FILE, REPORT_FILE):
        check_replaceable(out / name)  # before any work
    key = load_key(key_path)
    responses = read_responses(responses_path, key)
    result = grade(key, responses)
    return GradeRun(result, tuple(write_outputs(result, out)))


# --------------------------------------------------------------------------- a blank template


def template_csv(key: GradeKey) -> str:
    """A blank responses CSV for ``key``: one row per student, question, answer and entry."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    # a roster key names its students beside their ids (grading ignores the column: it
    # helps a TA find rows; a name like "=SUM(A1)" is kept from running as a formula)
    named = any(s.name for s in key.sheets)
    header = list(COLUMNS)
    if named:
        header.insert(1, "name")
    w.writerow(header)
    for s in key.sheets:
        for q in s.questions:
            for a in q.answers:
                rows, cols = a.dims
                if a.kind == "matrix":
                    entries = [f"{r},{c}" for r in range(1, rows + 1) for c in range(1, cols + 1)]
                elif a.kind == "vector":
                    entries = [str(c) for c in range(1, cols + 1)]
                else:
                    entries = [""]
                who = [protect(s.id), protect(s.name)] if named else [protect(s.id)]
                w.writerows([*who, protect(q.id), protect(a.name), e, ""] for e in entries)
    return buf.getvalue()


def write_template(
    key_path: str | os.PathLike[str], target: str | os.PathLike[str], stdout: BinaryIO | None = None
) -> Path | None:
    """Write a blank responses CSV for a key; never overwrites an existing file (nor
    anything else: a symlink, a FIFO, a device). ``target`` ``-`` writes it to ``stdout``
    and returns None."""
    if os.fspath(target) == STDOUT:
        if stdout is None:
            raise GradeError("expected a stream to write the template to, got none")
        write_stream(stdout, template_csv(load_key(key_path)).encode("utf-8"))
        return None
    path = Path(target)
    if os.path.lexists(path):
        # a device, a FIFO, a symlink to nothing: said as what it is
        check_replaceable(path, field=None, what="a new file for the template")
        raise GradeError(
            "expected a new file for the template, got an existing file (it is never overwritten)",
            file=str(path),
        )
    # a parent that is a symlink to nothing, or a file
    check_replaceable(path, field=None, what="a new file for the template")
    key = load_key(key_path)
    text = template_csv(key)
    try:
        write_file(path, text.encode("utf-8"))
    except OSError as exc:
        error = write_failure(exc, path)
        if error is None:
            raise
        raise error from None
    return path
