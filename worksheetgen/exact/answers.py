"""Turn exact values into Answers (floats, exact strings, printed strings, tolerance)."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from fractions import Fraction

from worksheetgen.exact import number as ex
from worksheetgen.exact.masked import MASKED
from worksheetgen.exact.number import Ex, Matrix
from worksheetgen.exact.rounding import float_half_up, half_unit
from worksheetgen.model import Answer


def is_whole(x: Ex) -> bool:
    """A whole number or −∞: an entry a whole-number table prints without decimals."""
    fr = x.frac
    if fr is not None:
        return fr.denominator == 1
    return x.is_neg_inf or ex.is_integer(x)


def printed(x: Ex, decimals: int, whole: bool) -> str:
    """A cell as printed: whole numbers without decimals when the whole table is whole."""
    if whole and not x.is_neg_inf:
        return str(ex.as_int(x))
    return ex.rounded(x, decimals)


def table(m: Matrix, decimals: int, whole: bool = True) -> list[list[str]]:
    """A matrix as printed: a table of whole numbers (and −∞) prints them without decimals,
    any other table every entry rounded to ``decimals`` (one style per table). With
    ``whole`` False it is rounded even when whole (a slip's value of a decimal answer)."""
    if whole and all(is_whole(x) for row in m for x in row):
        return [[MASKED if x.is_neg_inf else str(ex.as_int(x)) for x in row] for row in m]
    rounded = ex.rounded
    return [[rounded(x, decimals) for x in row] for row in m]


def relation(m: Matrix, shown: list[list[str]]) -> str:
    """'=' between a table and ``shown``, its printed form, when every entry prints exactly
    (whole numbers, −∞, halves at two decimals), else '\\approx'."""
    for row, printed in zip(m, shown, strict=True):
        for x, p in zip(row, printed, strict=True):
            if x.is_neg_inf:
                continue
            fr = x.frac
            if fr is None:
                return r"\approx"
            if fr.denominator == 1 and p == str(fr.numerator):
                continue
            if Fraction(p) != fr:
                return r"\approx"
    return "="


def matrix_answer(
    name: str,
    label: str,
    m: Matrix,
    decimals: int,
    *,
    widen: int = 1,
    tolerance: float | None = None,
) -> Answer:
    """A matrix answer; ``widen`` counts rounded steps the student's value passes through
    (``tolerance``, when given, replaces that count's half-units).

    A table of whole numbers (such as integer scores QKᵀ) is printed without decimals, and,
    being exact as printed, has tolerance 0 like every whole-number answer (unless
    ``tolerance`` says otherwise: an output worked from a rounded A).
    """
    shown = table(m, decimals)
    if tolerance is None:
        whole = all(is_whole(x) for row in m for x in row)  # exact as printed
        tolerance = 0.0 if whole else round(half_unit(decimals) * widen, 12)
    return Answer(
        name=name,
        label=label,
        kind="matrix",
        value=ex.matrix_floats(m),
        rounded=shown,
        exact=ex.matrix_exact(m),
        tolerance=tolerance,
    )


def _softmax_printed(table_: list[list[str]], decimals: int) -> list[list[float]]:
    """Row softmax of a printed table (``-inf`` masked), rounded half-up to ``decimals`` (on
    doubles: this only bounds a tolerance, and a softmax value is never a tie)."""
    out = []
    for row in table_:
        xs = [float(x) for x in row]
        top = max(xs)
        es = [math.exp(x - top) for x in xs]
        total = sum(es)
        out.append([float_half_up(e / total, decimals) for e in es])
    return out


def mixed_tolerance(
    A: Matrix, V: Sequence[Sequence[int]], decimals: int, before: Matrix | None = None
) -> float:
    """The tolerance of the output AV: it also accepts AV worked from a rounded A.

    Students round A to the printed digits and multiply that table by V, which carries the
    rounding into AV scaled by V's entries: |(Â − A)V| reaches several printed units when V
    holds 3s and 4s. ``before`` is the table A is the softmax of, when the sheet asks for it
    too: a student who rounds it first may then get an A one unit off the key's. The
    tolerance is half a unit (the rounding of AV itself) plus the largest error of either
    rounded A in this variant, at least three half-units (one per rounded step: the scaled
    scores, A and AV), rounded up to a tenth of a printed unit.
    """
    half = half_unit(decimals)
    exact_a = ex.matrix_floats(A)
    tables: list[Sequence[Sequence[str | float]]] = [table(A, decimals)]
    if before is not None:
        tables.append(_softmax_printed(table(before, decimals), decimals))
    columns = list(zip(*V, strict=True))
    carried = 0.0
    for rounded_a in tables:
        for shown, exact in zip(rounded_a, exact_a, strict=True):
            off = [float(s) - float(f) for s, f in zip(shown, exact, strict=True)]
            carried = max(carried, max(abs(sum(map(operator.mul, off, col))) for col in columns))
    tenth = 10.0 ** -(decimals + 1)
    return round(max(3 * half, math.ceil((half + carried) / tenth - 1e-6) * tenth), 12)


def output_answer(
    A: Matrix,
    V: Sequence[Sequence[int]],
    output: Matrix,
    decimals: int,
    before: Matrix | None = None,
) -> Answer:
    """The output AV, with a tolerance that accepts it worked from a rounded A (``before``: the
    table whose softmax is A, when the sheet asks for it)."""
    return matrix_answer(
        "output", "AV", output, decimals, tolerance=mixed_tolerance(A, V, decimals, before)
    )


def vector_answer(name: str, label: str, v: list[Ex], decimals: int, *, widen: int = 1) -> Answer:
    """A vector (one row) answer, printed as a one-row table (a row of whole numbers, exact
    as printed, without decimals and with tolerance 0)."""
    (shown,) = table([v], decimals)
    whole = all(is_whole(x) for x in v)
    return Answer(
        name=name,
        label=label,
        kind="vector",
        value=[ex.to_float(x) for x in v],
        rounded=shown,
        exact=[ex.text(x) for x in v],
        tolerance=0.0 if whole else round(half_unit(decimals) * widen, 12),
    )


def integer_answer(name: str, label: str, n: int) -> Answer:
    """A whole-number answer (exact, tolerance 0)."""
    return Answer(
        name=name, label=label, kind="scalar", value=n, rounded=str(n), exact=str(n), tolerance=0.0
    )


def scalar_answer(name: str, label: str, x: Ex, decimals: int, *, widen: int = 1) -> Answer:
    """A real-number answer."""
    return Answer(
        name=name,
        label=label,
        kind="scalar",
        value=ex.to_float(x),
        rounded=ex.rounded(x, decimals),
        exact=ex.text(x),
        tolerance=round(half_unit(decimals) * widen, 12),
    )


def shape_answer(name: str, label: str, dims: tuple[int, ...]) -> Answer:
    """A matrix shape such as (4, 4)."""
    return Answer(
        name=name,
        label=label,
        kind="shape",
        value=list(dims),
        rounded=[str(d) for d in dims],
        exact=[str(d) for d in dims],
        tolerance=0.0,
    )


def choice_answer(
    name: str, label: str, correct: str, options: tuple[str, ...], explanation: str = ""
) -> Answer:
    """A pick-one answer (the options are plain text)."""
    return Answer(
        name=name,
        label=label,
        kind="choice",
        value=correct,
        rounded=correct,
        options=options,
        explanation=explanation,
    )


def choices_answer(
    name: str,
    label: str,
    right: tuple[str, ...],
    options: tuple[str, ...],
    explanation: str = "",
    *,
    all_or_nothing: bool = False,
) -> Answer:
    """A mark-all-that-apply answer: the right options in the order printed."""
    value = [o for o in options if o in right]
    return Answer(
        name=name,
        label=label,
        kind="choice",
        value=value,
        rounded=value,
        options=options,
        explanation=explanation,
        all_or_nothing=all_or_nothing,
    )


def text_answer(name: str, label: str, model: str) -> Answer:
    """A free-text answer with a model answer for the key."""
    return Answer(name=name, label=label, kind="text", value=model, rounded=model)


def int_matrix_answer(name: str, label: str, m: Matrix) -> Answer:
    """A matrix of whole numbers (products of integer matrices): printed as integers, exact."""
    texts = ex.matrix_exact(m)
    for row in m:
        for x in row:
            if not ex.is_integer(x):
                raise ValueError(f"{name}: {x.expr} is not a whole number")
    return Answer(
        name=name,
        label=label,
        kind="matrix",
        value=[[ex.as_int(x) for x in row] for row in m],
        rounded=texts,
        exact=texts,
        tolerance=0.0,
    )
