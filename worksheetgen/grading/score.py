"""Score a class's responses against the key: partial and carried-forward credit, diagnoses.

``grade`` scores every student: equal shares per part, per-entry credit in tables, and credit
carried forward where a wrong earlier answer, put through the steps the key's ``carries``
states for the question (``CARRY_STEPS``), gives the student's later answer. Each wrong
answer is matched against the key's distractors to name the slip that reproduces it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cached_property
from typing import Any, Literal

import numpy as np

from worksheetgen.attention.compute import softmax_float
from worksheetgen.exact.kinds import NUMERIC_KINDS
from worksheetgen.exact.mathtex import decimals_in
from worksheetgen.exact.rounding import SLACK, half_unit
from worksheetgen.grading.key import (
    GradedAnswer,
    GradeKey,
    QuestionKey,
    SheetKey,
    SlipAnswers,
    as_grid,
    entry_label,
    norm_text,
)
from worksheetgen.grading.responses import (
    CHOSEN_SEPARATOR,
    SET_SEPARATOR,
    PartMark,
    ResponseCell,
    Responses,
    StudentAnswers,
    TryPenalty,
)

Status = Literal["right", "carried", "partial", "wrong", "blank", "ungraded", "marked"]


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
    slips: tuple[SlipAnswers, ...] = ()
    wrong: tuple[WrongEntry, ...] = ()
    response: str = ""
    model: str = ""
    #: the points were typed by a TA for the whole part (a mark row): no cells are graded
    marked: bool = False
    #: a mark still to give (``?``: a part whose scanned boxes a person has to look at)
    pending: bool = False
    #: a table's rows and columns, and its cells (0-based) not credited: wrong or blank
    dims: tuple[int, int] | None = None
    missed: tuple[tuple[int, int], ...] = ()
    #: what the student wrote, entry by entry (entry label, text), in the key's cell order
    written: tuple[tuple[str, str], ...] = ()

    @property
    def status(self) -> Status:
        """right, carried (all credit, some of it carried forward), partial, wrong, blank,
        ungraded (free text for a person to mark) or marked (by hand, a mark row)."""
        if self.pending or self.kind == "text" and not self.marked:
            return "ungraded"
        if self.marked:
            return "marked"
        if self.answered == 0:
            return "blank"
        if self.right == self.total:
            return "right"
        if self.right + self.carried == self.total:
            return "carried"
        if self.kind == "choice" and self.earned > 0:
            return "partial"  # a mark-all part, some options right
        if self.kind in ("scalar", "choice"):
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
    version: str = ""  # the version drawn, for a Moodle download (QuestionKey.version)
    #: the points without carried credit (what an LMS gives), when they differ from earned
    without_carry: Fraction | None = None
    #: points taken off for wrong tries (Moodle's adaptive penalty), and (the try that
    #: counts, the tries made) when the question was tried more than once
    penalty: Fraction = Fraction(0)
    tries: tuple[int, int] | None = None
    #: Moodle's "Average grade": the mean of the attempts' points for the question (its
    #: parts are those of the last attempt that drew it), and the mean of its maxima
    averaged: tuple[Fraction, Fraction] | None = None

    @cached_property
    def earned(self) -> Fraction:
        if self.averaged is not None:
            return self.averaged[0]
        return sum((p.earned for p in self.parts), Fraction(0)) - self.penalty

    @cached_property
    def possible(self) -> Fraction:
        """The question's maximum (an average of attempts: the mean of their maxima)."""
        return self.points if self.averaged is None else self.averaged[1]

    @cached_property
    def ungraded(self) -> Fraction:
        return sum((p.possible for p in self.parts if p.status == "ungraded"), Fraction(0))

    @cached_property
    def marked_points(self) -> Fraction:
        """The points of the parts marked so far (a part still to mark is no 0)."""
        return self.points - self.ungraded


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
    def without_carry(self) -> Fraction | None:
        """The total without carried credit (what an LMS gives), when it differs."""
        if all(q.without_carry is None for q in self.questions):
            return None
        return sum(
            (q.earned if q.without_carry is None else q.without_carry for q in self.questions),
            Fraction(0),
        )

    @cached_property
    def possible(self) -> Fraction:
        return sum((q.possible for q in self.questions), Fraction(0))

    @cached_property
    def ungraded(self) -> Fraction:
        """The points still to be marked by hand (none for a student who handed nothing in:
        there is nothing to mark)."""
        if not self.responded:
            return Fraction(0)
        return sum((q.ungraded for q in self.questions), Fraction(0))

    @cached_property
    def marked_possible(self) -> Fraction:
        """The points of the parts marked so far: the maximum less what is still to mark."""
        return self.possible - self.ungraded


#: what a student with no responses gets: "blank" (no total: nothing was marked) or "zero"
Absent = Literal["blank", "zero"]


@dataclass(frozen=True)
class GradeResult:
    """The whole class's grades, ready to render."""

    key: GradeKey
    responses: str
    has_sheet_column: bool
    students: tuple[StudentResult, ...]
    #: students whose attempt is not finished: listed in the report, not graded
    in_progress: tuple[str, ...] = ()
    #: students with several finished attempts: which one counts, for the report
    attempts: tuple[str, ...] = ()
    #: what report.md says of a penalty for wrong tries that could not be applied
    tries_note: str = ""
    #: attempts dealt against the bank's pool rule: listed in the report, not graded
    against_pool: tuple[str, ...] = ()
    #: carried credit: "key" (each question as key.json says), "on" or "off" (grade's switch)
    carry: str = "key"
    #: values that could not be read and were graded as wrong (``--lenient``), as error lines
    unreadable: tuple[str, ...] = ()
    #: students with no responses: "blank" (no total, no feedback page) or "zero" (0 points,
    #: as the instructor asked with ``--absent zero``)
    absent: Absent = "blank"

    def has_total(self, s: StudentResult) -> bool:
        """Does ``s`` get a total: a student who handed something in, or any student when
        the instructor asked for zeros (a total nobody marked is never 0 by default)."""
        return s.responded or self.absent == "zero"

    def slip_counts(self) -> list[tuple[SlipAnswers, int, int]]:
        """Each diagnosed misconception with how many answers and students it reproduced."""
        answers: dict[str, int] = {}
        students: dict[str, set[str]] = {}
        first: dict[str, SlipAnswers] = {}
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
        return (np.abs(expected - got) <= tol + SLACK) | (expected == got)


def _mask(m: np.ndarray) -> np.ndarray:
    out = m.copy()
    out[np.triu(np.ones(out.shape, dtype=bool), k=1)] = -math.inf
    return out


def _softmax_rows(m: np.ndarray) -> np.ndarray:
    """The student's own table's softmax, row by row (a row of −∞ gives NaN, never a warning)."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return softmax_float(m, axis=1)


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


def _half_unit_printed(ans: GradedAnswer | None) -> float:
    """Half a unit of the last digit the key prints for ``ans`` (0 for none)."""

    if ans is None or ans.rounded is None:
        return 0.0
    return half_unit(decimals_in(ans.rounded))


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


def _top_choice(before: np.ndarray, after: np.ndarray, args: Mapping[str, Any]) -> str | None:
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
    return norm_text(options[0] if u > v else options[1] if u < v else options[2])


def _step(
    q: QuestionKey, op: str, names: Sequence[str], xs: list[Any], args: Mapping[str, Any]
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


def _given_grid(value: Any) -> np.ndarray | None:
    """A given value (a number, a list or a list of rows) as a 2-D grid, if it is one."""
    try:
        if isinstance(value, list) and value and isinstance(value[0], list):
            return as_grid("matrix", value)
        if isinstance(value, list) and value:
            return as_grid("vector", value)
        return as_grid("scalar", value)
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


def _shown(ans: GradedAnswer, cell: tuple[int, int]) -> str:
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
    q: QuestionKey, ans: GradedAnswer, grid: np.ndarray, answered: np.ndarray, right: np.ndarray
) -> tuple[SlipAnswers, ...]:
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
    ans: GradedAnswer,
    got: dict[tuple[int, int], ResponseCell],
    share: Fraction,
    vals: dict[str, Any],
    full: dict[str, bool],
    carry: bool = True,
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
    if not right.all() and carry:
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
    # all or nothing; a shape earns a share per dimension, as the LMS exports grade it
    whole = ans.kind == "scalar"
    if whole:
        credit = Fraction(1) if n_right + n_carried == total else Fraction(0)
    else:
        credit = Fraction(n_right + n_carried, total)
    wrong = tuple(
        WrongEntry(entry_label(ans, cell), got[cell].text, _shown(ans, cell))
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
        dims=ans.dims,
        written=tuple((entry_label(ans, cell), got[cell].text) for cell in sorted(got)),
        missed=tuple(
            (int(r), int(c)) for r, c in zip(*np.nonzero(~(right | carried)), strict=True)
        ),
    )


def multi_share(ans: GradedAnswer, chosen: frozenset[str]) -> Fraction:
    """The share of a mark-all part that ``chosen`` (normalized option texts) earns, as
    Moodle scores a multi-answer question whose right options are worth 1/(number right)
    each and whose wrong ones cost 1/(number wrong) each (its default penalties): the sum
    of the marked options' worth, at least 0; all or nothing: 1 for exactly the right set,
    else 0."""
    right = frozenset(ans.right)
    if ans.all_or_nothing:
        return Fraction(1) if chosen == right else Fraction(0)
    n_wrong = len(ans.options) - len(right)
    hits = len(chosen & right)
    misses = len(chosen - right)
    earned = Fraction(hits, len(right)) - (Fraction(misses, n_wrong) if n_wrong else 0)
    return max(Fraction(0), min(Fraction(1), earned))


def _grade_multi(ans: GradedAnswer, cell: ResponseCell | None, share: Fraction) -> PartResult:
    """A mark-all part: the options marked, each earning or costing its share
    (``multi_share``)."""
    text = str(cell.value) if cell is not None else None
    chosen = frozenset(t for t in (text or "").split(CHOSEN_SEPARATOR) if t)
    earned = share * multi_share(ans, chosen) if text is not None else Fraction(0)
    ok = text is not None and chosen == frozenset(ans.right)
    order = [norm_text(o) for o in ans.options]
    key = SET_SEPARATOR.join(chr(ord("A") + order.index(o)) for o in ans.right)
    wrong = () if ok or cell is None else (WrongEntry("", cell.text, key),)
    return PartResult(
        answer=ans.name,
        part=ans.part,
        kind=ans.kind,
        earned=earned,
        possible=share,
        right=int(ok),
        carried=0,
        answered=int(text is not None),
        total=1,
        wrong=wrong,
        written=(("", cell.text),) if cell is not None else (),
    )


def _grade_choice(
    q: QuestionKey,
    ans: GradedAnswer,
    cell: ResponseCell | None,
    share: Fraction,
    vals: dict[str, Any],
    full: dict[str, bool],
    carry: bool = True,
) -> PartResult:
    text = str(cell.value) if cell is not None else None
    vals[ans.name] = text
    ok = text is not None and text == norm_text(ans.text)
    full[ans.name] = ok
    carried = False
    sources: tuple[str, ...] = ()
    if text is not None and not ok and carry:
        redo = _recompute(q, ans.name, vals)
        if (
            redo is not None
            and isinstance(redo.value, str)
            and not all(full.get(s, True) for s in redo.sources)
        ):
            carried = redo.value == text
            sources = redo.sources if carried else ()
    slips: tuple[SlipAnswers, ...] = ()
    if text is not None and not ok and ans.choice_slips:
        chosen = {m for label, m in ans.choice_slips if label == text}
        slips = tuple(s for s in q.slips if s.misconception in chosen)
        named = {s.misconception for s in slips}
        slips += tuple(SlipAnswers(m, "", {}) for m in sorted(chosen - named))
    elif text is not None and not ok:
        slips = tuple(
            s for s in q.slips if ans.name in s.answers and norm_text(s.answers[ans.name]) == text
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
        written=(("", cell.text),) if cell is not None else (),
    )


def grade_question(
    q: QuestionKey,
    got: dict[str, dict[tuple[int, int], ResponseCell]],
    carry: bool | None = None,
    marks: Mapping[str, PartMark] | None = None,
    penalty: TryPenalty | None = None,
) -> QuestionResult:
    """Score one question: each part's points (the key's, or equal shares), per-entry credit
    in tables, carried credit (as the key says for the question, unless ``carry`` says; with
    it on, the points without it too, where they differ). A part in ``marks`` (by answer
    name) gets the points a TA typed, whatever its cells say. ``penalty``: the points an
    adaptive quiz takes off for wrong tries (never below 0)."""
    on = q.carry if carry is None else carry
    marks = marks or {}
    result = _with_penalty(_grade_question(q, got, on, marks), penalty)
    if on:
        if penalty is not None and penalty.plain is not None and penalty.tries > 1:
            # an adaptive quiz's best try without carried credit, as Moodle marks it
            without = penalty.plain
        else:
            without = _with_penalty(_grade_question(q, got, False, marks), penalty).earned
        if without != result.earned:
            return replace(result, without_carry=without)
    return result


def _with_penalty(result: QuestionResult, penalty: TryPenalty | None) -> QuestionResult:
    """``result`` less an adaptive quiz's penalty for wrong tries, floored at 0."""
    if penalty is None or penalty.tries < 2:
        return result
    return replace(
        result,
        penalty=min(penalty.points, result.earned),
        tries=(penalty.counted, penalty.tries),
    )


def _marked_part(ans: GradedAnswer, mark: PartMark, share: Fraction) -> PartResult:
    """A part marked by hand: the points typed, nothing diagnosed (a pending mark: no
    points yet, the part to be marked by hand)."""
    if mark.pending:
        return PartResult(
            answer=ans.name,
            part=ans.part,
            kind=ans.kind,
            earned=Fraction(0),
            possible=share,
            right=0,
            carried=0,
            answered=0,
            total=1,
            response=mark.text,
            pending=True,
        )
    return PartResult(
        answer=ans.name,
        part=ans.part,
        kind=ans.kind,
        earned=mark.points,
        possible=share,
        right=int(mark.points == share),
        carried=0,
        answered=1,
        total=1,
        response=mark.text,
        marked=True,
    )


def _grade_question(
    q: QuestionKey,
    got: dict[str, dict[tuple[int, int], ResponseCell]],
    carry: bool,
    marks: Mapping[str, PartMark],
) -> QuestionResult:
    vals: dict[str, Any] = {}
    full: dict[str, bool] = {}
    parts = []
    for ans in q.answers:
        share = q.points_of(ans.name)
        cells = got.get(ans.name, {})
        mark = marks.get(ans.name)
        if mark is not None:
            # no value of the student's to carry forward from: a later part is marked
            # against the key alone (and is full when this part is)
            full[ans.name] = mark.points == share and not mark.pending
            parts.append(_marked_part(ans, mark, share))
        elif ans.kind in NUMERIC_KINDS:
            parts.append(_grade_numeric(q, ans, cells, share, vals, full, carry))
        elif ans.kind == "choice" and ans.multi:
            part = _grade_multi(ans, cells.get((0, 0)), share)
            full[ans.name] = part.earned == share
            parts.append(part)
        elif ans.kind == "choice":
            parts.append(_grade_choice(q, ans, cells.get((0, 0)), share, vals, full, carry))
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
        id=q.id,
        number=q.number,
        title=q.title,
        points=q.points,
        parts=tuple(parts),
        version=q.version,
    )


def grade_sheet(
    sheet: SheetKey, answers: StudentAnswers, carry: bool | None = None
) -> tuple[QuestionResult, ...]:
    """Score one student's answers to every question of their sheet (carried credit as the
    key says for each question, unless ``carry`` says for all)."""
    return tuple(
        grade_question(
            q,
            answers.cells.get(q.id, {}),
            carry,
            _marks_of(answers, q.id),
            answers.penalties.get(q.id),
        )
        for q in sheet.questions
    )


def _averaged(
    every: Sequence[tuple[SheetKey, StudentAnswers]], carry: bool | None
) -> tuple[QuestionResult, ...]:
    """Moodle's "Average grade" of several attempts: per question (of any attempt), the mean
    of its points over the attempts (0 where an attempt did not draw it) and of its maxima,
    so that the total is the mean of the attempts' totals; its parts are those of the last
    attempt that drew it."""
    graded = [grade_sheet(sheet, answers, carry) for sheet, answers in every]
    n = len(graded)
    last: dict[str, QuestionResult] = {}
    earned: dict[str, Fraction] = {}
    plain: dict[str, Fraction] = {}
    points: dict[str, Fraction] = {}
    for results in graded:
        for q in results:
            last[q.id] = q
            earned[q.id] = earned.get(q.id, Fraction(0)) + q.earned
            lms = q.earned if q.without_carry is None else q.without_carry
            plain[q.id] = plain.get(q.id, Fraction(0)) + lms
            points[q.id] = points.get(q.id, Fraction(0)) + q.points
    ordered = sorted(last.values(), key=lambda q: q.number)
    return tuple(
        replace(
            q,
            averaged=(earned[q.id] / n, points[q.id] / n),
            without_carry=None if plain[q.id] == earned[q.id] else plain[q.id] / n,
        )
        for q in ordered
    )


def _marks_of(answers: StudentAnswers, qid: str) -> dict[str, PartMark]:
    """The marks of question ``qid``: those typed, and a mark still to give for each part
    whose mark row was left blank and that has no cells to grade it (a person has not
    marked it yet: never a 0), for a student who handed something in."""
    marks = dict(answers.marks.get(qid, {}))
    if answers.responded:
        cells = answers.cells.get(qid, {})
        for name in sorted(answers.unmarked.get(qid, ())):
            if name not in marks and not cells.get(name):
                marks[name] = PartMark(answers.first_line, "", Fraction(0), pending=True)
    return marks


def grade(
    key: GradeKey, responses: Responses, carry: bool | None = None, absent: Absent = "blank"
) -> GradeResult:
    """Grade every student of ``responses`` against ``key`` (carried credit as the key says
    for each question; ``carry`` true or false: for every question). ``absent``: what a
    student with no responses gets, no total ("blank") or 0 ("zero")."""
    students = []
    for s in responses.students:
        sheet = key.sheet(s.sheet)
        assert sheet is not None  # read_responses only accepts the key's sheets
        questions = _averaged(s.averaged, carry) if s.averaged else grade_sheet(sheet, s, carry)
        students.append(
            StudentResult(
                student=s.student,
                sheet=sheet.id,
                name=sheet.name,
                responded=s.responded,
                questions=questions,
            )
        )
    return GradeResult(
        key=key,
        responses=responses.path,
        has_sheet_column=responses.has_sheet_column,
        students=tuple(students),
        in_progress=responses.in_progress,
        attempts=responses.attempts,
        tries_note=responses.tries_note,
        against_pool=responses.against_pool,
        carry="key" if carry is None else "on" if carry else "off",
        unreadable=responses.unreadable,
        absent=absent,
    )
