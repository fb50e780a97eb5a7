"""The key as the grader sees it: keyjson's checked records with each answer as a grid.

``load_key`` reads key.json with the one reader (``worksheetgen.keyjson.read``, errors as
``KeyFileError``) and builds, per sheet and question, what grading compares with: each graded
answer's value as a float grid (−∞ for a masked cell), its tolerance and part label, and each
distractor's values as grids of the same shape. Nothing here reads the JSON again.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from worksheetgen.exact.kinds import NUMERIC_KINDS
from worksheetgen.keyjson.read import ExpectedSecret
from worksheetgen.keyjson.read import load_key as read_key
from worksheetgen.keyjson.read import parse_key as check_key
from worksheetgen.keyjson.records import CarryStep, Distractor, KeyAnswer, KeyDoc, Variant


@dataclass(frozen=True)
class GradedAnswer:
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
    #: the part's prompt as the sheet prints it (markup), to name the part in reports
    prompt: str = ""
    #: why the right answer is right (markup; key.json's ``explanations``), for feedback
    explanation: str = ""
    #: a mark-all-that-apply part: its right options, normalized (``norm_text``), in the
    #: order printed (empty for every other part)
    right: tuple[str, ...] = ()
    #: a mark-all part scored whole for exactly the right set, else 0 (key.json's
    #: ``all_or_nothing``); else each option earns or costs its share (``grading.score``)
    all_or_nothing: bool = False

    @property
    def multi(self) -> bool:
        """True for a mark-all-that-apply part (a set of right options)."""
        return bool(self.right)

    @property
    def dims(self) -> tuple[int, int]:
        """Rows and columns of the answer grid (1 x 1 for a single value)."""
        return (1, 1) if self.grid is None else (int(self.grid.shape[0]), int(self.grid.shape[1]))

    @property
    def n_entries(self) -> int:
        """How many entries the student fills in."""
        return self.dims[0] * self.dims[1]


@dataclass(frozen=True)
class SlipAnswers:
    """One misconception's answers for one question (from key.json's "distractors"), with
    its numeric answers as grids where they have the shape of the key's."""

    misconception: str
    description: str
    answers: Mapping[str, Any]
    grids: dict[str, np.ndarray] = field(default_factory=dict)  # numeric answers, parsed


@dataclass(frozen=True)
class QuestionKey:
    """One question of one sheet, as the grader needs it."""

    id: str
    number: int
    title: str
    family: str
    points: Fraction
    given: Mapping[str, Any]
    answers: tuple[GradedAnswer, ...]
    slips: tuple[SlipAnswers, ...]
    #: how later answers follow from earlier ones (key.json's "carries"), in the key's order
    carries: tuple[CarryStep, ...] = ()
    #: the version a student drew, when the responses come from an LMS quiz that drew it
    #: (a Moodle download: "B"); empty when the sheet itself is the student's
    version: str = ""
    #: each graded answer's points (key.json's per-part points, else equal shares)
    answer_points: Mapping[str, Fraction] = field(default_factory=dict)
    #: whether the ``carries`` are credited (key.json's "carry"): false marks each answer
    #: against the key alone, as an LMS does
    carry: bool = True

    def points_of(self, name: str) -> Fraction:
        """The points of the answer called ``name`` (an equal share when the key does not
        say)."""
        if name in self.answer_points:
            return self.answer_points[name]
        return self.points / len(self.answers) if self.answers else Fraction(0)

    def answer(self, name: str) -> GradedAnswer | None:
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
    large_print: bool = False  # the student's sheet was in large print (key.json says so)

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
    #: the decimal separator the sheets printed ("." or ","): with "," a student's 0,25 is
    #: read as a quarter (and 0.25 still is)
    decimal: str = "."

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


def as_grid(kind: str, value: Any) -> np.ndarray:
    """A key (or distractor) value of a numeric kind as a 2-D float array."""
    if kind == "matrix":
        rows = [[_cell_float(x) for x in row] for row in value]
        if not rows or any(len(r) != len(rows[0]) for r in rows):
            raise TypeError("ragged matrix")
        return np.array(rows, dtype=float)
    if kind in ("vector", "shape"):
        return np.array([[_cell_float(x) for x in value]], dtype=float)
    return np.array([[_cell_float(value)]], dtype=float)


def norm_text(text: Any) -> str:
    """Choice text compared case- and space-insensitively."""
    return " ".join(str(text).casefold().split())


def entry_label(ans: GradedAnswer, cell: tuple[int, int]) -> str:
    """How the responses' entry column names ``cell`` of ``ans`` ("2,3", "2", or nothing)."""
    if ans.kind == "matrix":
        return f"{cell[0] + 1},{cell[1] + 1}"
    if ans.kind in ("vector", "shape"):
        return str(cell[1] + 1)
    return ""


def _part_label(index: int) -> str:
    return f"({chr(ord('a') + index)})" if index < 26 else f"({index + 1})"


def _multiple_choice(a: GradedAnswer, v: Variant) -> GradedAnswer:
    """A multiple-choice item's part: the student gives the label of the option they chose."""
    labels = tuple(c.label for c in v.choices)
    slips = tuple((norm_text(c.label), c.misconception) for c in v.choices if c.misconception)
    return GradedAnswer(
        name=a.name,
        part=a.part,
        kind="choice",
        grid=None,
        text=str(v.choice_answer),
        rounded=v.choice_answer,
        tolerance=0.0,
        options=labels,
        choice_slips=slips,
        prompt=a.prompt,
        explanation=a.explanation,
    )


def _slip(d: Distractor, answers: Sequence[GradedAnswer]) -> SlipAnswers:
    values = dict(d.answer)
    grids = {}
    for a in answers:
        if a.grid is not None and a.name in values:
            try:
                grid = as_grid(a.kind, values[a.name])
            except (TypeError, ValueError, OverflowError):
                continue  # a slip value of another form (or no float) is never matched
            if grid.shape == a.grid.shape:
                grids[a.name] = grid
    return SlipAnswers(d.misconception, d.description, values, grids)


def _answer_grid(a: KeyAnswer) -> np.ndarray:
    """A numeric answer's checked cells as a float grid (−∞ for a masked cell)."""
    return np.array(
        [[-math.inf if c.value is None else c.value for c in row] for row in a.rows], dtype=float
    )


def _question_key(v: Variant) -> QuestionKey:
    by_name = {p.answer.name: p.answer for p in v.parts if p.answer is not None}
    prompts: dict[str, str] = {}
    for p in v.parts:
        if p.answer is not None:
            prompts.setdefault(p.answer.name, p.prompt)
    answers = []
    for i, name in enumerate(v.answer_names):
        a = by_name[name]
        numeric = a.kind in NUMERIC_KINDS
        answers.append(
            GradedAnswer(
                name=name,
                part=_part_label(i),
                kind=a.kind,
                grid=_answer_grid(a) if numeric else None,
                text=None if numeric else ("; ".join(a.right) if a.multi else str(a.value)),
                rounded=a.rounded,
                tolerance=a.tolerance or 0.0,
                options=a.options,
                prompt=prompts[name],
                explanation=a.explanation,
                right=tuple(norm_text(o) for o in a.right) if a.multi else (),
                all_or_nothing=a.all_or_nothing,
            )
        )
    if v.format == "choice" and v.choices:
        answers = [_multiple_choice(a, v) for a in answers]
    return QuestionKey(
        id=v.qid,
        number=v.number,
        title=v.title,  # the sheet's heading: the stated title, else the family's
        family=v.family,
        points=Fraction(str(v.points)),
        given=v.given,
        answers=tuple(answers),
        slips=tuple(_slip(d, answers) for d in v.distractors),
        carries=v.carries,
        answer_points=v.answer_points(),
        carry=v.carry,
    )


def grade_key(doc: KeyDoc) -> GradeKey:
    """The grader's view of a checked key: each sheet's questions with grids."""
    sheets = tuple(
        SheetKey(
            id=s.id,
            name=s.student.name if s.student is not None else "",
            questions=tuple(_question_key(v) for v in s.variants),
            large_print=s.student is not None and s.student.large_print,
        )
        for s in doc.sheets
    )
    return GradeKey(
        path=doc.source, title=doc.title, seed=doc.seed, sheets=sheets, decimal=doc.decimal
    )


def parse_key(data: Any, path: str = "key.json") -> GradeKey:
    """Turn a loaded key.json document into a GradeKey (KeyFileError if it is not one)."""
    return grade_key(check_key(data, path))


def load_key(path: str | os.PathLike[str], secret: ExpectedSecret | None = None) -> GradeKey:
    """Read key.json from disk with the one reader (as ``export`` reads it; ``secret``: the
    course secret it must have been built with, if any)."""
    return grade_key(read_key(path, secret))
