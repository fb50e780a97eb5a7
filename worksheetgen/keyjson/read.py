"""The one strict reader of key.json: ``load_key`` for a file, ``parse_key`` for parsed JSON.

``export`` and ``grade`` both read a key here, so a key one command refuses, the other refuses
with the same line. The file is read as a regular file of at most ``MAX_KEY_BYTES``, JSON
within ``inputs.MAX_JSON_DEPTH`` levels and text without lone surrogates; then ``format`` and
``version`` are checked before anything else (``key.json: version: expected 1, got 7``), then
every field the commands use. A key that does not fit the contract is refused with one error
of the class the caller names (``ExportError``, ``GradeError``) naming the field.

The result is frozen records: a ``KeyDoc`` with its ``KeySheet``s in key order (each with its
``Variant``s, one per question), and the same variants grouped by question id as
``KeyQuestion``s (in the order of the first sheet). Each numeric answer is split into
``Cell``s (the numbers a student types) carrying the value at full precision, the printed
string and the tolerance. docs/reference/key.schema.json describes the same contract.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from worksheetgen.bank.roster import MAX_STUDENTS
from worksheetgen.errors import ConfigError, ExportError, WorksheetgenError, shorten
from worksheetgen.exact.kinds import NUMERIC_KINDS, PART_KINDS
from worksheetgen.exact.masked import MASKED_TEXT
from worksheetgen.exact.rounding import SLACK
from worksheetgen.families import FAMILIES, get_family
from worksheetgen.inputs import load_json, read_limited
from worksheetgen.keyjson.write import KEY_FORMAT, KEY_VERSION
from worksheetgen.render.markup import markup_lms
from worksheetgen.textrules import char_problem, id_problem

#: the largest key.json read: well above the key of the largest class build (40,000
#: questions), far below what would exhaust memory before it is refused
MAX_KEY_BYTES = 1_000_000_000

#: the most sheets a key holds: a class build has one per student of a roster (at most
#: bank.roster.MAX_STUDENTS) or one per version (at most 702)
MAX_KEY_SHEETS = MAX_STUDENTS
#: the most questions a key holds, all sheets together (pipeline.class_build.MAX_CLASS_ITEMS)
MAX_KEY_QUESTIONS = 40_000

KINDS = PART_KINDS
# A question's points, as a bank may give them (and grade can add up and print exactly).
MAX_POINTS = 1000
#: the steps key.json's "carries" may name (the vocabulary of families.base.Carry, which the
#: grader applies)
CARRY_STEPS = ("matmul", "matmul_t", "scale", "mask", "softmax", "times", "shape", "compare_top")


@dataclass(frozen=True)
class Slip:
    """One misconception's value for one cell (several slips can share a value)."""

    misconceptions: tuple[str, ...]
    descriptions: tuple[str, ...]
    value: float | None  # None: the slip leaves this cell masked
    printed: str


@dataclass(frozen=True)
class Cell:
    """One number a student writes: an entry of a matrix, a vector, a shape or a scalar."""

    key: str  # stable id inside the variant, e.g. "A_2_3"
    label: str  # for people: "query 2, key 3"
    value: float | None  # None for a masked (−∞) cell
    printed: str
    tolerance: float
    exact: str | None
    slips: tuple[Slip, ...] = ()

    @property
    def masked(self) -> bool:
        """True for a cell whose answer is −∞."""
        return self.value is None


@dataclass(frozen=True)
class KeyAnswer:
    """One answer of a question, as key.json states it."""

    name: str
    label: str  # LaTeX (math mode)
    kind: str
    value: Any
    rounded: Any
    tolerance: float | None
    options: tuple[str, ...]
    explanation: str
    rows: tuple[tuple[Cell, ...], ...]  # numeric kinds: cells by row (one row unless a matrix)

    @property
    def cells(self) -> tuple[Cell, ...]:
        """Every cell, row by row."""
        return tuple(c for row in self.rows for c in row)


@dataclass(frozen=True)
class Choice:
    """One option of a multiple-choice item, in display order."""

    label: str
    text: str  # math-mode LaTeX, as the sheet prints it
    correct: bool
    misconception: str | None
    description: str


@dataclass(frozen=True)
class KeyPart:
    """One thing a student answers: a sub-prompt and its answer (or the item's choices)."""

    prompt: str  # markup
    answer: KeyAnswer | None  # None: the multiple-choice part of an item without a named answer
    row_label: str = "query"
    col_label: str = "key"
    choices: tuple[Choice, ...] = ()

    @property
    def kind(self) -> str:
        """'choices' for a multiple-choice item's part, else the answer's kind."""
        if self.choices:
            return "choices"
        assert self.answer is not None
        return self.answer.kind


@dataclass(frozen=True)
class Shown:
    """A given value displayed with the question: LaTeX label and printed entries."""

    label: str
    kind: str
    value: Any


@dataclass(frozen=True)
class ShownStep:
    """A step of a worked solution printed with the question (spot the bug)."""

    title: str  # markup
    text: str  # markup
    math: str  # LaTeX, display math


@dataclass(frozen=True)
class Distractor:
    """One misconception's answers for one question (key.json's "distractors")."""

    misconception: str
    description: str
    answer: Mapping[str, Any]  # answer name -> value, as key.json states it
    rounded: Mapping[str, Any]  # answer name -> printed value


@dataclass(frozen=True)
class CarryStep:
    """One carried-forward step of a question (key.json's "carries"): answer ``answer``
    recomputed by ``steps`` (names from ``CARRY_STEPS``) from ``inputs`` (the student's earlier
    answers; given values where the question does not ask them), with the steps' arguments
    (see worksheetgen.families.base.Carry)."""

    answer: str
    inputs: tuple[str, ...]
    steps: tuple[str, ...]
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Variant:
    """One sheet's version of a question."""

    sheet_id: str
    sheet_label: str
    qid: str
    number: int
    family: str
    title: str
    points: float
    decimals: int
    prompt: str  # markup
    shown: tuple[Shown, ...]
    parts: tuple[KeyPart, ...]
    distractors: tuple[Distractor, ...]
    where: str  # "sheets[i].questions[j]" for messages
    shown_steps: tuple[ShownStep, ...] = ()
    given: Mapping[str, Any] = field(default_factory=dict)  # the drawn inputs, checked
    carries: tuple[CarryStep, ...] = ()
    format: str | None = None  # the item's format as the bank gave it ("choice", ...)
    choice_answer: str | None = None  # a multiple-choice item's correct label (or answer)
    stated_title: str | None = None  # the title key.json states (None: the family's)
    #: each graded answer's points when key.json gives them per part (None: split equally)
    part_points: Mapping[str, float] | None = None
    #: whether grading credits the ``carries`` (key.json's "carry"; absent: true)
    carry: bool = True
    slot: str = ""  # the slot it fills: the pool it was picked from, or its own id

    @property
    def choices(self) -> tuple[Choice, ...]:
        """A multiple-choice item's options (empty for other items)."""
        return next((p.choices for p in self.parts if p.choices), ())

    def answer_points(self) -> dict[str, Fraction]:
        """Each answer's points, exactly, in part order: as key.json gives them per part, or
        the question's points split equally (as a plain ``points: 6`` means)."""
        names = self.answer_names
        if self.part_points is not None:
            return {n: Fraction(str(self.part_points[n])) for n in names}
        share = Fraction(str(self.points)) / len(names) if names else Fraction(0)
        return {n: share for n in names}

    @property
    def answer_names(self) -> tuple[str, ...]:
        """The names of the answers the parts ask, in part order, each once."""
        names = (p.answer.name for p in self.parts if p.answer is not None)
        return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class KeyQuestion:
    """A slot of the key with its variants in sheet order: a question id with one variant
    per sheet, or a pool (``qid`` is the pool's id) with the variants of every alternative
    the sheets got, ``pick`` of them per sheet."""

    qid: str
    number: int
    title: str
    family: str
    variants: tuple[Variant, ...]
    pick: int = 1


@dataclass(frozen=True)
class Student:
    """The student a roster sheet is for."""

    name: str
    id: str


@dataclass(frozen=True)
class KeySheet:
    """One sheet of the key (a student's or an anonymous version) with its questions."""

    id: str
    label: str
    student: Student | None  # None for a version
    variants: tuple[Variant, ...]
    code: str = ""  # the sheet code the sheet printed ("" in keys from before codes)


@dataclass(frozen=True)
class KeyDoc:
    """The checked key: header, questions (grouped by id) and sheets (in key order)."""

    title: str
    course: str
    seed: int
    slug: str
    questions: tuple[KeyQuestion, ...]
    source: str
    sheets: tuple[KeySheet, ...] = ()
    secret: str | None = None  # the course secret's fingerprint, when built with one


# ---------------------------------------------------------------- numbers


def number_text(x: float) -> str:
    """A float as a plain decimal (never exponent notation), exact to the float's repr."""
    if x == 0:
        return "0"
    d = Decimal(repr(float(x)))
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def is_finite_number(x: Any) -> bool:
    """True for a JSON number a float holds (not a bool, NaN, an infinity or a huge int)."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return False
    return math.isfinite(x) if isinstance(x, float) else abs(x) < 2**1023


def is_masked_text(x: Any) -> bool:
    """True for the masked entry "-inf" (or SymPy's "-oo")."""
    return isinstance(x, str) and x.strip() in MASKED_TEXT


# ---------------------------------------------------------------- reading


def load_key(path: str | os.PathLike[str], error: type[WorksheetgenError] = ExportError) -> KeyDoc:
    """Read and check a key.json file; a bad one raises ``error`` naming file and field."""

    return parse_key(read_key_data(path, error), str(path), error)


#: the course secret's fingerprint every key read must carry (with where the secret came
#: from, for the message), while a command with a course secret runs (``expect_secret``)
_EXPECTED_SECRET: ContextVar[tuple[str, str] | None] = ContextVar("expected_secret", default=None)


@contextmanager
def expect_secret(fingerprint: str, source: str) -> Iterator[None]:
    """Within this block every key read (``load_key``, ``read_key_data``) must carry the
    course secret's ``fingerprint`` when it names one: a key built with another secret is
    refused (``ConfigError``) in the same one read, after the key's gate (kind, size, read
    limit, nesting) and before anything else is checked."""
    token = _EXPECTED_SECRET.set((fingerprint, source))
    try:
        yield
    finally:
        _EXPECTED_SECRET.reset(token)


_SECRET_LINE = re.compile(rb'^\s*"secret"\s*:', re.M)


def _check_secret(doc: Any, data: bytes, shown: str) -> None:
    """Refuse a key built with another course secret than the one expected (a key built
    without one, or that is not an object, is left to the contract's checks)."""
    expected = _EXPECTED_SECRET.get()
    found = doc.get("secret") if isinstance(doc, dict) else None
    if expected is None or found is None or found == expected[0]:
        return
    wanted, source = expected
    at = _SECRET_LINE.search(data)
    line = 1 if at is None else data.count(b"\n", 0, at.start()) + 1
    raise ConfigError(
        f"expected a key built with the configured course secret ({source}, {wanted}), "
        f"got one built with another ({shorten(str(found), 80)})",
        file=shown,
        line=line,
        field="secret",
    )


def _shape(shown: str, error: type[WorksheetgenError]) -> Any:
    """A check of a parsed key's size, before any walk over its values: no more sheets and
    questions than the largest class build writes (the contract's checks take time in
    proportion, about a millisecond a sheet; a key of 28,000 sheets is refused at once)."""

    def check(doc: Any) -> None:
        sheets = doc.get("sheets") if isinstance(doc, dict) else None
        if not isinstance(sheets, list):
            return  # the contract's checks say what is wrong
        if len(sheets) > MAX_KEY_SHEETS:
            raise error(
                f"expected at most {MAX_KEY_SHEETS} sheets (the largest class build), "
                f"got {len(sheets)}",
                file=shown,
                field="sheets",
            )
        count = sum(
            len(q) if isinstance(q, list) else 0
            for q in (s.get("questions") if isinstance(s, dict) else None for s in sheets)
        )
        if count > MAX_KEY_QUESTIONS:
            raise error(
                f"expected at most {MAX_KEY_QUESTIONS} questions in all sheets together "
                f"(the largest class build), got {count}",
                file=shown,
                field="sheets",
            )

    return check


def read_key_data(path: str | os.PathLike[str], error: type[WorksheetgenError]) -> Any:
    """The parsed JSON of a key.json file (not yet checked against the contract), read once
    through the one gate; a key of another course secret is refused here (``expect_secret``)."""
    data = read_limited(path, MAX_KEY_BYTES, what="a key.json file", error=error)
    doc = load_json(data, str(path), error, shape=_shape(str(path), error))
    _check_secret(doc, data, str(path))
    return doc


def _described(x: Any) -> str:
    """A value of the top of a document, as the format and version messages show it."""
    if x is None:
        return "nothing"
    if isinstance(x, str):
        return repr(shorten(x))
    if isinstance(x, bool | int | float):
        return repr(x)
    return "a list" if isinstance(x, list) else "an object"


def check_format(data: Any, source: str, error: type[WorksheetgenError]) -> None:
    """Refuse a document that is not a worksheetgen key of the version this release reads."""
    if not isinstance(data, dict):
        raise error(
            f"expected a worksheetgen key.json (a JSON object), got {_described(data)}",
            file=source,
        )
    fmt = data.get("format")
    if fmt != KEY_FORMAT:
        raise error(
            f"expected {KEY_FORMAT!r} (a key.json written by worksheetgen build), got "
            f"{_described(fmt)}",
            file=source,
            field="format",
        )
    version = data.get("version")
    if type(version) is not int or version != KEY_VERSION:  # not true, not 1.0
        raise error(
            f"expected {KEY_VERSION}, got {_described(version)}", file=source, field="version"
        )


class _Reader:
    """Field checks that raise one error of the caller's class naming the file and the JSON
    path."""

    def __init__(self, source: str, error: type[WorksheetgenError] = ExportError) -> None:
        self.source = source
        self.error = error

    def fail(self, where: str, message: str) -> WorksheetgenError:
        return self.error(message, file=self.source, field=where)

    def obj(self, x: Any, where: str) -> dict[str, Any]:
        if not isinstance(x, dict):
            raise self.fail(where, f"expected an object, got {_kind(x)}")
        return x

    def lst(self, x: Any, where: str) -> list[Any]:
        if not isinstance(x, list):
            raise self.fail(where, f"expected a list, got {_kind(x)}")
        return x

    def text(self, x: Any, where: str, *, empty: bool = True) -> str:
        if not isinstance(x, str) or (not empty and not x.strip()):
            raise self.fail(
                where, f"expected {'a' if empty else 'a non-empty'} string, got {_kind(x)}"
            )
        return x

    def ident(self, x: Any, where: str) -> str:
        """An id or a name matched against what a person types: one line, printable, no
        white space around it (``worksheetgen.textrules``)."""
        text = self.text(x, where, empty=False)
        bad = id_problem(text)
        if bad is not None:
            raise self.fail(
                where,
                f"expected an id of printable characters without white "
                f"space around it, got {_kind(text)} ({bad})",
            )
        return text

    def num(self, x: Any, where: str) -> float:
        if not is_finite_number(x):
            raise self.fail(where, f"expected a finite number, got {_kind(x)}")
        return float(x)

    def get(self, d: Mapping[str, Any], key: str, where: str) -> Any:
        if key not in d:
            raise self.fail(f"{where}.{key}", "expected a value, got nothing (missing)")
        return d[key]


def _kind(x: Any) -> str:
    if x is None:
        return "null"
    if isinstance(x, bool):
        return f"{str(x).lower()}"
    if isinstance(x, int) and abs(x) >= 10**40:
        return f"an integer of {len(str(abs(x)))} digits"
    if isinstance(x, int | float):
        return repr(x)
    if isinstance(x, str):
        return repr(shorten(x))
    if isinstance(x, list):
        return f"a list of {len(x)}"
    if isinstance(x, dict):
        return "an object"
    return type(x).__name__


def _family_title(family: str) -> str:
    """The family's own title, when the family is known to this installation."""
    cls = FAMILIES.get(family)
    return cls.title if cls is not None else family


def parse_key(
    data: Any, source: str = "key.json", error: type[WorksheetgenError] = ExportError
) -> KeyDoc:
    """Check a parsed key.json document and turn it into sheets and questions with their
    variants (``error`` for a document that does not fit the contract)."""

    check_format(data, source, error)
    r = _Reader(source, error)
    doc = r.obj(data, "(top)")
    seed = r.get(doc, "seed", "(top)")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise r.fail("seed", f"expected a non-negative integer, got {_kind(seed)}")
    title = r.text(doc.get("title") or "Worksheet", "title")
    course = r.text(doc.get("course") or "", "course")
    secret = doc.get("secret")
    if secret is not None:
        secret = r.text(secret, "secret", empty=False)
    sheets = r.lst(r.get(doc, "sheets", "(top)"), "sheets")
    if not sheets:
        raise r.fail("sheets", "expected at least one sheet, got an empty list")
    by_id: dict[str, list[Variant]] = {}
    sheets_out: list[KeySheet] = []
    seen_sheets: set[str] = set()
    slug = ""
    for si, raw_sheet in enumerate(sheets):
        sw = f"sheets[{si}]"
        sheet = r.obj(raw_sheet, sw)
        sid = r.ident(r.get(sheet, "id", sw), f"{sw}.id")
        if sid in seen_sheets:
            raise r.fail(f"{sw}.id", f"expected a unique sheet id, got {sid!r} twice")
        seen_sheets.add(sid)
        slug = slug or sid
        label = r.text(sheet.get("label") or sid, f"{sw}.label")
        student = _student(r, sheet.get("student"), f"{sw}.student")
        code = r.text(sheet.get("code") or "", f"{sw}.code")
        questions = r.lst(r.get(sheet, "questions", sw), f"{sw}.questions")
        seen_q: set[str] = set()
        on_sheet: list[Variant] = []
        for qi, raw_q in enumerate(questions):
            v = _variant(r, raw_q, f"{sw}.questions[{qi}]", sid, label, qi)
            if v.qid in seen_q:
                raise r.fail(
                    f"{sw}.questions[{qi}].id",
                    f"expected a unique question id, got {v.qid!r} twice",
                )
            seen_q.add(v.qid)
            by_id.setdefault(v.slot, []).append(v)
            on_sheet.append(v)
        sheets_out.append(KeySheet(sid, label, student, tuple(on_sheet), code))
    slots = _slots(r, doc, by_id)
    questions_out = []
    for position, (qid, variants) in enumerate(by_id.items(), 1):
        first = variants[0]
        titles = list(dict.fromkeys(v.title for v in variants))
        questions_out.append(
            KeyQuestion(
                qid=qid,
                # a sheet's own number; the place among the slots where sheets differ
                number=first.number if slots is None else position,
                title=_titles(titles),
                family=first.family,
                variants=tuple(variants),
                pick=1 if slots is None else slots[qid],
            )
        )
    return KeyDoc(
        title=title,
        course=course,
        seed=seed,
        slug=slug,
        questions=tuple(questions_out),
        source=source,
        sheets=tuple(sheets_out),
        secret=secret,
    )


def _titles(titles: Sequence[str]) -> str:
    """A slot's title: its question's, or a pool's alternatives' ("A, B or C")."""
    if len(titles) > 3:
        return f"{titles[0]}, {titles[1]} or {len(titles) - 2} other(s)"
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " or " + titles[-1]


def _slots(
    r: _Reader, doc: Mapping[str, Any], by_slot: dict[str, list[Variant]]
) -> dict[str, int] | None:
    """A key's slots (a build with pools or shuffled order states them), each with how many
    questions a sheet gets from it; ``by_slot`` is put in their order. None: the key has no
    slots (each question id is one)."""
    if "shuffle" in doc and not isinstance(doc["shuffle"], bool):
        raise r.fail("shuffle", f"expected true or false, got {_kind(doc['shuffle'])}")
    if "slots" not in doc:
        return None
    picks: dict[str, int] = {}
    for i, raw in enumerate(r.lst(doc["slots"], "slots")):
        w = f"slots[{i}]"
        slot = r.obj(raw, w)
        sid = r.ident(r.get(slot, "id", w), f"{w}.id")
        if sid in picks:
            raise r.fail(f"{w}.id", f"expected a unique slot id, got {sid!r} twice")
        names = r.lst(r.get(slot, "questions", w), f"{w}.questions")
        if not names:
            raise r.fail(f"{w}.questions", "expected at least one question id, got none")
        for j, name in enumerate(names):
            r.ident(name, f"{w}.questions[{j}]")
        pick = slot.get("pick", 1)
        if isinstance(pick, bool) or not isinstance(pick, int) or not 1 <= pick <= len(names):
            raise r.fail(
                f"{w}.pick", f"expected an integer from 1 to {len(names)}, got {_kind(pick)}"
            )
        picks[sid] = pick
    for sid, variants in by_slot.items():
        if sid not in picks:
            raise r.fail(
                f"{variants[0].where}.slot",
                f"expected one of the key's slots ({', '.join(picks)}), got {sid!r}",
            )
    ordered = {sid: by_slot.pop(sid) for sid in picks if sid in by_slot}
    by_slot.update(ordered)
    return picks


def _variant(r: _Reader, raw: Any, w: str, sheet_id: str, sheet_label: str, index: int) -> Variant:
    q = r.obj(raw, w)
    qid = r.ident(r.get(q, "id", w), f"{w}.id")
    slot = qid if q.get("slot") is None else r.ident(q["slot"], f"{w}.slot")
    family = r.text(r.get(q, "family", w), f"{w}.family", empty=False)
    number = q.get("number", index + 1)
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise r.fail(f"{w}.number", f"expected a positive integer, got {_kind(number)}")
    stated = q.get("title")  # a build writes null for a question titled by its family
    stated = None if stated is None else r.text(stated, f"{w}.title")
    title = _family_title(family) if stated is None else stated
    points = r.num(q.get("points", 1), f"{w}.points")
    if not 0 <= points <= MAX_POINTS:
        raise r.fail(f"{w}.points", f"expected a number from 0 to {MAX_POINTS}, got {points:g}")
    decimals = q.get("decimals", 2)
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= 12:
        raise r.fail(f"{w}.decimals", f"expected an integer from 0 to 12, got {_kind(decimals)}")
    prompt = r.text(q.get("prompt", ""), f"{w}.prompt")
    shown = tuple(
        _shown(r, s, f"{w}.shown[{i}]")
        for i, s in enumerate(r.lst(q.get("shown", []), f"{w}.shown"))
    )
    given = r.obj(q.get("given", {}), f"{w}.given")  # grade works from it: always checked
    _check_given(r, given, f"{w}.given")
    if "shown" not in q:
        shown = _shown_from_given(given)
    steps = []
    for i, raw_step in enumerate(r.lst(q.get("shown_steps", []), f"{w}.shown_steps")):
        sw = f"{w}.shown_steps[{i}]"
        st = r.obj(raw_step, sw)
        steps.append(
            ShownStep(
                title=r.text(st.get("title", ""), f"{sw}.title"),
                text=r.text(st.get("text", ""), f"{sw}.text"),
                math=r.text(st.get("math", ""), f"{sw}.math"),
            )
        )

    answers = r.obj(r.get(q, "answer", w), f"{w}.answer")
    rounded = r.obj(r.get(q, "rounded", w), f"{w}.rounded")
    kinds = r.obj(r.get(q, "kinds", w), f"{w}.kinds")
    tolerances = r.obj(q.get("tolerance", {}), f"{w}.tolerance")
    exacts = r.obj(q.get("exact", {}), f"{w}.exact")
    options = r.obj(q.get("options", {}), f"{w}.options")
    labels = r.obj(q.get("labels", {}), f"{w}.labels")
    explanations = r.obj(q.get("explanations", {}), f"{w}.explanations")
    distractors = tuple(
        _distractor(r, d, f"{w}.distractors[{i}]")
        for i, d in enumerate(r.lst(q.get("distractors", []), f"{w}.distractors"))
    )
    descriptions = {d.misconception: d.description for d in distractors}

    raw_parts = r.lst(q.get("parts", []), f"{w}.parts")
    if not raw_parts:  # a key without parts: every answer, in key order
        raw_parts = [{"prompt": "", "answer": name} for name in answers]
    parts: list[KeyPart] = []
    built: dict[str, KeyAnswer] = {}
    for pi, raw_part in enumerate(raw_parts):
        pw = f"{w}.parts[{pi}]"
        part = r.obj(raw_part, pw)
        name = r.ident(r.get(part, "answer", pw), f"{pw}.answer")
        if name not in answers:
            raise r.fail(
                f"{pw}.answer", f"expected one of the answers ({', '.join(answers)}), got {name!r}"
            )
        row_label = r.text(part.get("row_label") or "", f"{pw}.row_label")
        col_label = r.text(part.get("col_label") or "", f"{pw}.col_label")
        if name not in built:
            built[name] = _answer(
                r,
                w,
                name,
                answers,
                rounded,
                kinds,
                tolerances,
                exacts,
                options,
                labels,
                explanations,
                distractors,
                row_label,
                col_label,
            )
        parts.append(
            KeyPart(
                prompt=r.text(part.get("prompt", ""), f"{pw}.prompt"),
                answer=built[name],
                row_label=row_label,
                col_label=col_label,
            )
        )

    if "choices" in q:
        parts = _attach_choices(r, w, q, parts, descriptions)
    fmt = q.get("format")
    if fmt is not None:
        fmt = r.text(fmt, f"{w}.format")
    target = q.get("choice_answer")
    carry = q.get("carry", True)
    if not isinstance(carry, bool):
        raise r.fail(f"{w}.carry", f"expected true or false, got {_kind(carry)}")
    part_points = None
    if "part_points" in q:
        part_points = _part_points(r, q["part_points"], f"{w}.part_points", points, parts)
    return Variant(
        sheet_id=sheet_id,
        sheet_label=sheet_label,
        qid=qid,
        number=number,
        family=family,
        title=title,
        points=points,
        decimals=decimals,
        prompt=prompt,
        shown=shown,
        parts=tuple(parts),
        distractors=distractors,
        where=w,
        shown_steps=tuple(steps),
        given=given,
        carries=_carries(r, q.get("carries"), f"{w}.carries", family, given, parts),
        format=fmt,
        choice_answer=target if isinstance(target, str) else None,
        stated_title=stated,
        part_points=part_points,
        slot=slot,
        carry=carry,
    )


def _part_points(
    r: _Reader, raw: Any, w: str, points: float, parts: Sequence[KeyPart]
) -> dict[str, float]:
    """key.json's per-part points: one number above 0 (at most ``MAX_POINTS``) for every
    answer the parts ask (and no other), adding up to the question's points."""
    given = r.obj(raw, w)
    names = list(dict.fromkeys(p.answer.name for p in parts if p.answer is not None))
    out: dict[str, float] = {}
    for name in names:
        if name not in given:
            raise r.fail(w, f"expected points for every part's answer, got none for {name!r}")
        value = r.num(given[name], f"{w}.{name}")
        if not 0 < value <= MAX_POINTS:
            raise r.fail(
                f"{w}.{name}", f"expected a number above 0 and at most {MAX_POINTS}, got {value:g}"
            )
        out[name] = value
    extra = [k for k in given if k not in out]
    if extra:
        raise r.fail(
            f"{w}.{extra[0]}",
            f"expected one of the parts' answers ({', '.join(names)}), "
            f"got {shorten(repr(extra[0]))}",
        )
    total = sum((Fraction(str(v)) for v in out.values()), Fraction(0))
    if total != Fraction(str(points)):
        raise r.fail(
            w, f"expected part points adding up to the question's {points:g}, got {float(total):g}"
        )
    return out


def _carries(
    r: _Reader, raw: Any, w: str, family: str, given: Mapping[str, Any], parts: Sequence[KeyPart]
) -> tuple[CarryStep, ...]:
    """A question's carried-forward steps as key.json states them. A key written before
    key.json had them gets its family's steps for the variant, as a build would write them."""
    if raw is None:
        names = list(dict.fromkeys(p.answer.name for p in parts if p.answer is not None))
        raw = get_family(family).carries_for(given, names) if family in FAMILIES else []
    out = []
    for i, c in enumerate(r.lst(raw, w)):
        if _carry_fits(c):  # the usual case, checked at once (a build reads its own key)
            out.append(CarryStep(c["answer"], tuple(c["from"]), tuple(c["steps"]), c["args"]))
        else:
            out.append(_carry(r, c, f"{w}[{i}]"))
    return tuple(out)


def _is_name(x: Any) -> bool:
    return isinstance(x, str) and bool(x.strip())


def _carry_fits(c: Any) -> bool:
    """True for a carried step that every check of ``_carry`` passes, with its arguments."""
    return (
        isinstance(c, dict)
        and _is_name(c.get("answer"))
        and isinstance(c.get("from"), list)
        and all(_is_name(x) for x in c["from"])
        and isinstance(c.get("steps"), list)
        and all(isinstance(x, str) and x in CARRY_STEPS for x in c["steps"])
        and isinstance(c.get("args"), dict)
    )


def _carry(r: _Reader, raw: Any, cw: str) -> CarryStep:
    """One carried step, field by field: the first field that does not fit is refused."""
    c = r.obj(raw, cw)
    answer = r.text(r.get(c, "answer", cw), f"{cw}.answer", empty=False)
    lists = []
    for name in ("from", "steps"):
        items = r.lst(r.get(c, name, cw), f"{cw}.{name}")
        lists.append(
            tuple(r.text(x, f"{cw}.{name}[{j}]", empty=False) for j, x in enumerate(items))
        )
    inputs, steps = lists
    for j, step in enumerate(steps):
        if step not in CARRY_STEPS:
            raise r.fail(
                f"{cw}.steps[{j}]",
                f"expected one of {', '.join(CARRY_STEPS)}, got {_kind(step)}",
            )
    args = r.obj(c.get("args", {}), f"{cw}.args")
    return CarryStep(answer, inputs, steps, args)


def _attach_choices(
    r: _Reader, w: str, q: Mapping[str, Any], parts: list[KeyPart], descriptions: Mapping[str, str]
) -> list[KeyPart]:
    """Give a multiple-choice item's options to the part they answer.

    ``choice_answer`` is the correct option's label (what the build writes) or the name of the
    answer the options are for. Labelled, the options answer the item's one part, or its last
    part (the target answer) when there are several; with no part they are a part of their own.
    """
    choices = _choices(r, q["choices"], f"{w}.choices", descriptions)
    target = q.get("choice_answer")
    right = next(c for c in choices if c.correct)
    names = [p.answer.name if p.answer is not None else "" for p in parts]
    if isinstance(target, str) and target in names:
        i = names.index(target)
    elif target is None or target == right.label:
        i = len(parts) - 1
    else:
        raise r.fail(
            f"{w}.choice_answer",
            f"expected the correct choice's label "
            f"({right.label!r}) or an answer name, got {_kind(target)}",
        )
    if i < 0:
        return [KeyPart(prompt="Which of these is right?", answer=None, choices=choices)]
    old = parts[i]
    parts[i] = KeyPart(
        prompt=old.prompt,
        answer=old.answer,
        row_label=old.row_label,
        col_label=old.col_label,
        choices=choices,
    )
    return parts


#: the inputs grade recomputes carried-forward answers from, and what each must be
GIVEN_MATRICES = ("Q", "K", "V")
GIVEN_SIZES = ("d_k", "d", "h", "T")
GIVEN_FLAGS = ("causal", "d_v_given")


def _check_given(r: _Reader, given: Mapping[str, Any], w: str) -> None:
    """The given inputs grade computes with: tables of finite numbers, sizes above 0, flags
    true or false (a hand-edited key with d_k: "x" would fail in the middle of grading)."""
    for name in GIVEN_MATRICES:
        if name in given:
            rows = _grid(r, given[name], "matrix", f"{w}.{name}")
            for i, row in enumerate(rows):
                for j, x in enumerate(row):
                    r.num(x, f"{w}.{name}[{i}][{j}]")
    if "row" in given:
        for j, x in enumerate(r.lst(given["row"], f"{w}.row")):
            r.num(x, f"{w}.row[{j}]")
    for name in GIVEN_SIZES:
        if name in given and r.num(given[name], f"{w}.{name}") <= 0:
            raise r.fail(f"{w}.{name}", f"expected a number above 0, got {_kind(given[name])}")
    for name in GIVEN_FLAGS:
        if name in given and not isinstance(given[name], bool):
            raise r.fail(f"{w}.{name}", f"expected true or false, got {_kind(given[name])}")


def _student(r: _Reader, raw: Any, w: str) -> Student | None:
    """A roster sheet's student (null for a version): a printable name and id."""
    if raw is None:
        return None
    student = r.obj(raw, w)
    found = {"name": "", "id": ""}
    for name in found:
        value = student.get(name)
        if value is None:
            continue
        text = r.text(value, f"{w}.{name}")
        bad = char_problem(text)
        if bad is not None:
            raise r.fail(
                f"{w}.{name}", f"expected printable characters only, got {_kind(text)} ({bad})"
            )
        found[name] = text
    return Student(name=found["name"], id=found["id"])


def _shown(r: _Reader, raw: Any, w: str) -> Shown:
    s = r.obj(raw, w)
    return Shown(
        label=r.text(r.get(s, "label", w), f"{w}.label"),
        kind=r.text(s.get("kind", "scalar"), f"{w}.kind"),
        value=s.get("value"),
    )


def _shown_from_given(given: Mapping[str, Any]) -> tuple[Shown, ...]:
    """Shown values for a key without "shown": the given matrices and numbers by name."""
    out = []
    for name, value in given.items():
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, list) and value and all(isinstance(r, list) for r in value):
            out.append(Shown(name, "matrix", [[str(x) for x in row] for row in value]))
        elif isinstance(value, list):
            out.append(Shown(name, "vector", [str(x) for x in value]))
        elif isinstance(value, int | float | str):
            out.append(Shown(name, "scalar", str(value)))
    return tuple(out)


def _distractor(r: _Reader, raw: Any, w: str) -> Distractor:
    d = r.obj(raw, w)
    return Distractor(
        misconception=r.text(r.get(d, "misconception", w), f"{w}.misconception", empty=False),
        description=r.text(d.get("description") or "", f"{w}.description"),
        answer=r.obj(d.get("answer", {}), f"{w}.answer"),
        rounded=r.obj(d.get("rounded", {}), f"{w}.rounded"),
    )


def _choices(r: _Reader, raw: Any, w: str, descriptions: Mapping[str, str]) -> tuple[Choice, ...]:
    items = r.lst(raw, w)
    if len(items) < 2:
        raise r.fail(w, f"expected at least 2 choices, got {len(items)}")
    out = []
    for i, raw_c in enumerate(items):
        cw = f"{w}[{i}]"
        c = r.obj(raw_c, cw)
        correct = r.get(c, "correct", cw)
        if not isinstance(correct, bool):
            raise r.fail(f"{cw}.correct", f"expected true or false, got {_kind(correct)}")
        slip = c.get("misconception")
        if slip is not None:
            slip = r.text(slip, f"{cw}.misconception", empty=False)
        if correct and slip is not None:
            raise r.fail(
                f"{cw}.misconception", f"expected null for the correct choice, got {slip!r}"
            )
        out.append(
            Choice(
                label=r.text(c.get("label") or chr(ord("A") + i), f"{cw}.label"),
                text=r.text(r.get(c, "text", cw), f"{cw}.text", empty=False),
                correct=correct,
                misconception=slip,
                description=descriptions.get(slip or "", ""),
            )
        )
    n_correct = sum(c.correct for c in out)
    if n_correct != 1:
        raise r.fail(w, f"expected exactly one correct choice, got {n_correct}")
    return tuple(out)


def _answer(
    r: _Reader,
    w: str,
    name: str,
    answers: Mapping[str, Any],
    rounded: Mapping[str, Any],
    kinds: Mapping[str, Any],
    tolerances: Mapping[str, Any],
    exacts: Mapping[str, Any],
    options: Mapping[str, Any],
    labels: Mapping[str, Any],
    explanations: Mapping[str, Any],
    distractors: Sequence[Distractor],
    row_label: str,
    col_label: str,
) -> KeyAnswer:
    kind = kinds.get(name)
    if kind not in KINDS:
        raise r.fail(f"{w}.kinds.{name}", f"expected one of {', '.join(KINDS)}, got {_kind(kind)}")
    if name not in rounded:
        raise r.fail(f"{w}.rounded.{name}", "expected the printed answer, got nothing (missing)")
    value, printed = answers[name], rounded[name]
    label = r.text(labels.get(name) or name, f"{w}.labels.{name}")
    explanation = r.text(explanations.get(name) or "", f"{w}.explanations.{name}")
    opts: tuple[str, ...] = ()
    tol: float | None = None
    rows: tuple[tuple[Cell, ...], ...] = ()
    if kind in NUMERIC_KINDS:
        if name not in tolerances:
            raise r.fail(
                f"{w}.tolerance.{name}",
                "expected the tolerance of a numeric answer "
                "(half a unit of its last printed digit, or wider), got nothing",
            )
        tol = r.num(tolerances[name], f"{w}.tolerance.{name}")
        if tol < 0:
            raise r.fail(f"{w}.tolerance.{name}", f"expected a number >= 0, got {tol:g}")
        rows = _cells(
            r,
            w,
            name,
            kind,
            value,
            printed,
            exacts.get(name),
            tol,
            distractors,
            row_label,
            col_label,
        )
    elif kind == "choice":
        opts = tuple(
            r.text(o, f"{w}.options.{name}[{i}]", empty=False)
            for i, o in enumerate(r.lst(options.get(name, []), f"{w}.options.{name}"))
        )
        if len(opts) < 2:
            raise r.fail(f"{w}.options.{name}", f"expected at least 2 options, got {len(opts)}")
        if value not in opts:
            raise r.fail(f"{w}.answer.{name}", f"expected one of the options, got {_kind(value)}")
    else:
        r.text(value, f"{w}.answer.{name}", empty=False)
    return KeyAnswer(
        name=name,
        label=label,
        kind=kind,
        value=value,
        rounded=printed,
        tolerance=tol,
        options=opts,
        explanation=explanation,
        rows=rows,
    )


def _grid(r: _Reader, x: Any, kind: str, where: str) -> list[list[Any]]:
    """A numeric answer's entries as rows (a vector or shape is one row, a scalar 1x1)."""
    if kind == "scalar":
        return [[x]]
    if kind in ("vector", "shape"):
        return [r.lst(x, where)]
    rows = r.lst(x, where)
    if not rows:
        raise r.fail(where, "expected at least one row, got an empty list")
    out = [r.lst(row, f"{where}[{i}]") for i, row in enumerate(rows)]
    width = len(out[0])
    for i, row in enumerate(out):
        if len(row) != width or not row:
            raise r.fail(f"{where}[{i}]", f"expected {width} entries like row 0, got {len(row)}")
    return out


def _entry(r: _Reader, x: Any, where: str, kind: str) -> float | None:
    if is_masked_text(x):
        if kind not in ("matrix", "vector"):
            raise r.fail(
                where,
                f"expected a number (only matrix and vector entries can be masked), got {_kind(x)}",
            )
        return None
    return r.num(x, where)


def _cells(
    r: _Reader,
    w: str,
    name: str,
    kind: str,
    value: Any,
    printed: Any,
    exact: Any,
    tol: float,
    distractors: Sequence[Distractor],
    row_label: str,
    col_label: str,
) -> tuple[tuple[Cell, ...], ...]:
    vals = _grid(r, value, kind, f"{w}.answer.{name}")
    prints = _grid(r, printed, kind, f"{w}.rounded.{name}")
    if [len(x) for x in prints] != [len(x) for x in vals]:
        raise r.fail(
            f"{w}.rounded.{name}",
            "expected the same shape as the answer "
            f"({len(vals)}x{len(vals[0])}), got {len(prints)}x{len(prints[0])}",
        )
    exact_grid: list[list[Any]] | None = None
    if exact is not None:
        try:
            exact_grid = _grid(r, exact, kind, f"{w}.exact.{name}")
        except WorksheetgenError:
            exact_grid = None
        if exact_grid is not None and [len(x) for x in exact_grid] != [len(x) for x in vals]:
            exact_grid = None
    slip_grids = []
    for d in distractors:
        if name not in d.answer:
            continue
        try:
            g = _grid(r, d.answer[name], kind, "")
            pg = _grid(r, d.rounded.get(name, d.answer[name]), kind, "")
        except WorksheetgenError:
            continue  # a slip of another shape (e.g. no-transpose) gives no per-cell value
        if [len(x) for x in g] == [len(x) for x in vals] and [len(x) for x in pg] == [
            len(x) for x in vals
        ]:
            slip_grids.append((d, g, pg))
    rows = []
    for i, row in enumerate(vals):
        cells = []
        for j, x in enumerate(row):
            at = "" if kind == "scalar" else f"[{i}][{j}]" if kind == "matrix" else f"[{j}]"
            v = _entry(r, x, f"{w}.answer.{name}{at}", kind)
            p = prints[i][j]
            if not isinstance(p, str | int | float) or isinstance(p, bool):
                raise r.fail(
                    f"{w}.rounded.{name}{at}", f"expected a printed number, got {_kind(p)}"
                )
            p = str(p)
            _check_printed(r, f"{w}.rounded.{name}{at}", f"{w}.tolerance.{name}", v, p, tol)
            cells.append(
                Cell(
                    key=_cell_key(name, kind, i, j),
                    label=_cell_label(kind, i, j, row_label, col_label),
                    value=v,
                    printed=p,
                    tolerance=tol,
                    exact=None if exact_grid is None else str(exact_grid[i][j]),
                    slips=_cell_slips(v, tol, [(d, g[i][j], pg[i][j]) for d, g, pg in slip_grids]),
                )
            )
        rows.append(tuple(cells))
    return tuple(rows)


def _check_printed(
    r: _Reader, rfield: str, tfield: str, v: float | None, p: str, tol: float
) -> None:
    """The printed key value must be an answer the export accepts."""
    if v is None:
        if not is_masked_text(p):
            raise r.fail(rfield, f'expected "-inf" for a masked cell, got {p!r}')
        return
    try:
        pv = float(p)
    except ValueError:
        raise r.fail(rfield, f"expected a printed number, got {p!r}") from None
    if abs(pv - v) > tol + SLACK * max(1.0, abs(v)):
        raise r.fail(
            tfield,
            f"expected a tolerance that accepts the printed {p} for the value "
            f"{number_text(v)}, got {number_text(tol)}",
        )


def _cell_key(name: str, kind: str, i: int, j: int) -> str:
    safe = "".join(ch if ch.isalnum() else "_" for ch in name)
    if kind == "scalar":
        return safe
    if kind == "matrix":
        return f"{safe}_{i + 1}_{j + 1}"
    return f"{safe}_{j + 1}"


def _cell_label(kind: str, i: int, j: int, row_label: str, col_label: str) -> str:
    if kind == "scalar":
        return ""
    if kind == "shape":
        return ("rows", "columns")[j] if j < 2 else f"dimension {j + 1}"
    col = f"{col_label} {j + 1}" if col_label else f"column {j + 1}"
    if kind == "vector":
        return col
    row = f"{row_label} {i + 1}" if row_label else f"row {i + 1}"
    return f"{row}, {col}"


def _cell_slips(
    v: float | None, tol: float, found: Sequence[tuple[Distractor, Any, Any]]
) -> tuple[Slip, ...]:
    """Slips whose value for this cell differs from the answer, merged where they agree."""
    groups: list[tuple[float | None, str, list[str], list[str]]] = []
    for d, x, p in found:
        if is_masked_text(x):
            sv: float | None = None
        elif is_finite_number(x):
            sv = float(x)
        else:
            continue
        if sv is None and v is None:
            continue
        if sv is not None and v is not None and abs(sv - v) <= tol and _printed_within(p, v, tol):
            continue  # the slip does not show in this cell (nor in what a student writes)
        for g in groups:
            if (g[0] is None and sv is None) or (
                g[0] is not None and sv is not None and abs(g[0] - sv) <= tol / 2
            ):
                g[2].append(d.misconception)
                g[3].append(d.description)
                break
        else:
            groups.append((sv, str(p), [d.misconception], [d.description]))
    return tuple(Slip(tuple(m), tuple(ds), sv, p) for sv, p, m, ds in groups)


def _printed_within(printed: Any, v: float, tol: float) -> bool:
    """True when a slip's printed value (what a student writes) lies within ``tol`` of ``v``;
    a printed value that is not a number counts as within (nothing to tell apart)."""
    try:
        x = float(str(printed).replace("\u2212", "-"))
    except ValueError:
        return True
    return not math.isfinite(x) or abs(x - v) <= tol + SLACK * max(1.0, abs(v))


# ---------------------------------------------------------------- shared wording


def slip_sentence(misconceptions: Sequence[str], descriptions: Sequence[str]) -> str:
    """Feedback naming the slip(s) that give a wrong answer, as LMS text (a description's
    math as MathJax's ``\\( … \\)``)."""
    named = []
    for m, d in zip(misconceptions, descriptions, strict=True):
        named.append(f"{m} ({markup_lms(d)})" if d else m)
    if len(named) == 1:
        return f"This is what the slip {named[0]} gives."
    return "This is what these slips give: " + "; ".join(named) + "."


def choice_feedback(choice: Choice) -> str:
    """Feedback for one multiple-choice option."""
    if choice.correct:
        return "Correct."
    if choice.misconception:
        return slip_sentence([choice.misconception], [choice.description])
    return "Not this one."


def variant_name(v: Variant) -> str:
    """The LMS name of a variant: question id and sheet (never a student's name)."""
    return f"{v.number}. {v.qid} [{v.sheet_id}]"


def gradable_parts(v: Variant) -> tuple[KeyPart, ...]:
    """Parts an LMS can grade by itself: numbers, shapes, choices."""
    return tuple(p for p in v.parts if p.kind != "text")


def written_parts(v: Variant) -> tuple[KeyPart, ...]:
    """Parts answered in words, graded by a person against the model answer."""
    return tuple(p for p in v.parts if p.kind == "text")


def parts_points(v: Variant, parts: Sequence[KeyPart]) -> Fraction:
    """The points ``parts`` of ``v`` are worth together (each answer counted once)."""
    points = v.answer_points()
    names = dict.fromkeys(p.answer.name for p in parts if p.answer is not None)
    return sum((points.get(n, Fraction(0)) for n in names), Fraction(0))


#: decimal places of an LMS mark: Moodle stores a question's mark and a quiz slot's with 7
LMS_MARK_PLACES = 7


def graded_points(v: Variant) -> float:
    """What an LMS gives the parts it grades itself: their share of the question's points,
    by the rule the sheet and ``grade`` use (key.json's per-part points, or a plain
    ``points: N`` split equally among the question's answers, a written one included), to
    the 7 decimal places Moodle keeps (8 points over 9 answers, 8 graded: 7.1111111)."""
    return round(float(parts_points(v, gradable_parts(v))), LMS_MARK_PLACES)


def written_points(v: Variant, has_graded: bool = True) -> float:
    """What an LMS gives the written parts, graded by hand: the rest of the question's
    points after ``graded_points`` (their share by the same rule, 0.8888889 beside
    7.1111111), so the two marks add up to the sheet's points; all of them when the question
    has no graded parts."""
    if not gradable_parts(v):
        return v.points if not has_graded else float(parts_points(v, written_parts(v)))
    if not written_parts(v):
        return 0.0
    return round(v.points - graded_points(v), LMS_MARK_PLACES)


def category_name(doc: KeyDoc, q: KeyQuestion, written: bool = False) -> list[str]:
    """The category path of a question's variants: sheet title, then the question (their
    math as MathJax's ``\\( … \\)``)."""
    leaf = f"{q.number:02d} {q.qid} - {markup_lms(q.title)}"
    if written:
        leaf += " (written part)"
    return [markup_lms(doc.title), leaf]
