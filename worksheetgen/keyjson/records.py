"""The records of a checked key.json: what ``keyjson.read`` makes of a key, frozen.

A ``KeyDoc`` holds its ``KeySheet``s in key order (each with its ``Variant``s, one per
question) and the same variants grouped by question id as ``KeyQuestion``s. Each numeric
answer is split into ``Cell``s (the numbers a student types) carrying the value at full
precision, the printed string and the tolerance.

May import: exact and the shared modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from worksheetgen.exact.kinds import PART_KINDS

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
    #: a mark-all-that-apply choice scored whole or not at all (key.json's ``all_or_nothing``)
    all_or_nothing: bool = False

    @property
    def multi(self) -> bool:
        """True for a choice with a set of right options (mark all that apply): key.json
        gives its answer as the list of them, a pick-one's as the one."""
        return self.kind == "choice" and isinstance(self.value, list | tuple)

    @property
    def right(self) -> tuple[str, ...]:
        """A choice's right options (one for a pick-one), in the order printed."""
        if self.kind != "choice":
            return ()
        return tuple(self.value) if self.multi else (str(self.value),)

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
    rounded: Any = None  # the option's value as the key prints it (key.json states any value)


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
    large_print: bool = False  # their sheet (and feedback page) in large print


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
    #: the language the key's sheets were written in (worksheetgen.language.LANGUAGES):
    #: grade, scan and export write their words and read numbers as it does
    language: str = "en"
    #: the decimal separator the sheets printed numbers with ("." or ","): grade and scan
    #: read a student's "0,25" with a ",", the exports tell the LMS
    decimal: str = "."
