"""The attention calculation, exactly and in floats, with switches for the note's slips.

``Recipe`` says how each step is done. The correct recipe follows the note: scale by √d_k,
mask the future with −∞, softmax over keys (each row), mix values. A misconception is the
same calculation with one switch flipped, so a slip's result is computed from the very same
drawn inputs as the right answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Literal, TypedDict

import numpy as np

from worksheetgen.exact import canon
from worksheetgen.exact import number as ex
from worksheetgen.exact.memo import IdentityMemo
from worksheetgen.exact.number import Ex, Matrix

if TYPE_CHECKING:  # typing.Unpack is Python 3.11's; annotations are never evaluated here
    from typing_extensions import Unpack

Scale = Literal["sqrt", "dk", "none"]
MaskFill = Literal["-inf", "zero"]
Axis = Literal["keys", "queries"]
Mix = Literal["V", "K"]
HeadWidth = Literal["d/h", "d"]
Read = Literal["row", "column"]


@dataclass(frozen=True)
class Recipe:
    """How each step of the attention calculation is done."""

    scale: Scale = "sqrt"
    mask_fill: MaskFill = "-inf"
    axis: Axis = "keys"
    mix: Mix = "V"
    transpose_k: bool = True
    head_width: HeadWidth = "d/h"
    wo_transposed: bool = False
    #: how a table of weights is read for one token: across its row (a query's weights over
    #: the keys) or down its column (what every query gives that key)
    read: Read = "row"


class Switches(TypedDict, total=False):
    """The switches of a :class:`Recipe` that :func:`flipped` may change (its fields)."""

    scale: Scale
    mask_fill: MaskFill
    axis: Axis
    mix: Mix
    transpose_k: bool
    head_width: HeadWidth
    wo_transposed: bool
    read: Read


CORRECT = Recipe()


def flipped(**changes: Unpack[Switches]) -> Recipe:
    """The correct recipe with some switches changed."""
    return replace(CORRECT, **changes)


@dataclass(frozen=True)
class Trace:
    """Every intermediate table of one attention calculation (exact)."""

    scores: Matrix | None
    scaled: Matrix
    masked: Matrix | None
    exps: Matrix
    sums: list[Ex]
    A: Matrix
    output: Matrix | None


def causal_mask(m: Matrix, fill: Ex) -> Matrix:
    """Set every entry above the diagonal (a future key) to ``fill``."""
    return [[fill if j > i else x for j, x in enumerate(row)] for i, row in enumerate(m)]


def scale_matrix(s: Matrix, d_k: int, how: str) -> Matrix:
    """Divide scores by √d_k (correct), by d_k, or not at all."""
    if how == "none":
        return [list(r) for r in s]
    divisor = ex.sqrt_int(d_k) if how == "sqrt" else ex.integer(d_k)
    return [[ex.div(x, divisor) for x in row] for row in s]


def softmax_rows(s: Matrix) -> tuple[Matrix, list[Ex], Matrix]:
    """Row-wise softmax: the exponentials, the row sums and the weights.

    Each weight is built as ``exp / row sum`` with the row sum the SymPy ``Add`` of the row's
    exponentials, so ``weight_parts`` can read numerator and denominator back structurally
    and ``sums_to_one`` can prove a row sums to 1 without ``simplify``.
    """
    exps = [[ex.exp(x) for x in row] for row in s]
    sums = [ex.add(row) for row in exps]
    weights = [[ex.div(e, total) for e in row] for row, total in zip(exps, sums, strict=True)]
    return exps, sums, weights


def sums_to_one(row: Sequence[Ex]) -> bool:
    """True when a row of softmax weights sums to exactly 1, checked on its structure.

    Every live weight must be a term over the same row sum, and the numerators must add up
    to that very row sum, term by term (or the weights are rationals adding to 1). This is a
    structural comparison of canonical forms, not a simplification; a weight whose shape has
    no canonical form is checked on its SymPy expression instead.
    """
    forms = [w.form for w in row]
    if any(f is None for f in forms):
        # SymPy, only for a value whose shape canon cannot print
        from worksheetgen.exact.sympy_form import sums_to_one as sympy_sums_to_one

        return sympy_sums_to_one([w.expr for w in row])
    live = [f for f in forms if f is not None and f != 0]
    fracs = [f for f in live if isinstance(f, Fraction)]
    if len(fracs) == len(live):
        return sum(fracs, Fraction(0)) == 1
    if not all(isinstance(f, canon.Sum) and f.den is not None for f in live) or not canon.same_den(
        live
    ):
        return False
    total = canon.add(live)  # the numerators add up to the row sum: the number 1
    return total == 1


# The stages of recent calculations, by their inputs: the slips of one variant share most
# stages with the correct calculation (each flips one switch), so each is computed once.
_stages = IdentityMemo(512)


def _exact(m: Sequence[Sequence[int | float]]) -> Matrix:
    return _stages.get((m,), ("exact",), lambda: ex.from_ints(m))


def attend(
    *,
    d_k: int | None,
    causal: bool,
    S: Sequence[Sequence[int | float]] | None = None,
    Q: Sequence[Sequence[int | float]] | None = None,
    K: Sequence[Sequence[int | float]] | None = None,
    V: Sequence[Sequence[int | float]] | None = None,
    recipe: Recipe = CORRECT,
) -> Trace:
    """Run attention exactly. Give raw scores ``S`` or ``Q`` and ``K``; ``d_k=None`` means the
    scores are already scaled. With ``V`` (or ``K`` under the mixed-keys slip) the output is A·V.

    The given matrices are read, never changed, and neither are the tables of the trace:
    calculations that share a stage (the same inputs and switches) share its tables.
    """
    scores: Matrix | None = None
    if S is None:
        if Q is None or K is None:
            raise ValueError("attend needs S, or Q and K")
        q, k = _exact(Q), _exact(K)
        scores = _stages.get(
            (q, k),
            ("scores", recipe.transpose_k),
            lambda: ex.matmul(q, ex.transpose(k) if recipe.transpose_k else k),
        )
        raw = scores
    else:
        raw = _exact(S)
    scaled = (
        raw
        if d_k is None
        else _stages.get(
            (raw,), ("scaled", d_k, recipe.scale), lambda: scale_matrix(raw, d_k, recipe.scale)
        )
    )
    masked = None
    pre = scaled
    if causal:
        fill = ex.NEG_INF if recipe.mask_fill == "-inf" else ex.ZERO
        masked = _stages.get(
            (scaled,), ("masked", recipe.mask_fill), lambda: causal_mask(scaled, fill)
        )
        pre = masked

    def softmax() -> tuple[Matrix, list[Ex], Matrix]:
        if recipe.axis == "keys":
            return softmax_rows(pre)
        e_t, s_t, w_t = softmax_rows(ex.transpose(pre))
        return ex.transpose(e_t), s_t, ex.transpose(w_t)

    exps, sums, weights = _stages.get((pre,), ("softmax", recipe.axis), softmax)
    output = None
    mixer = K if recipe.mix == "K" else V
    if mixer is not None:
        m = _exact(mixer)
        output = _stages.get((weights, m), ("output",), lambda: ex.matmul(weights, m))
    return Trace(scores, scaled, masked, exps, sums, weights, output)


def attend_float(
    *,
    d_k: int | None,
    causal: bool,
    S: Sequence[Sequence[int | float]] | None = None,
    Q: Sequence[Sequence[int | float]] | None = None,
    K: Sequence[Sequence[int | float]] | None = None,
    V: Sequence[Sequence[int | float]] | None = None,
    recipe: Recipe = CORRECT,
) -> dict[str, np.ndarray]:
    """The same calculation in NumPy floats, written independently, for the cross-check."""
    if S is None:
        q = np.asarray(Q, dtype=float)
        k = np.asarray(K, dtype=float)
        raw = q @ (k.T if recipe.transpose_k else k)
    else:
        raw = np.asarray(S, dtype=float)
    out: dict[str, np.ndarray] = {"scores": raw}
    if d_k is None or recipe.scale == "none":
        scaled = raw.copy()
    elif recipe.scale == "sqrt":
        scaled = raw / np.sqrt(d_k)
    else:
        scaled = raw / d_k
    out["scaled"] = scaled
    pre = scaled
    if causal:
        upper = np.triu(np.ones(scaled.shape, dtype=bool), k=1)
        pre = np.where(upper, -np.inf if recipe.mask_fill == "-inf" else 0.0, scaled)
        out["masked"] = pre
    weights = softmax_float(pre, axis=1 if recipe.axis == "keys" else 0)
    out["A"] = weights
    mixer = K if recipe.mix == "K" else V
    if mixer is not None:
        out["output"] = weights @ np.asarray(mixer, dtype=float)
    return out


def softmax_float(m: np.ndarray, axis: int = -1) -> np.ndarray:
    """The float softmax along ``axis`` (NumPy): each slice less its largest entry (a masked
    −∞ gives weight 0), exponentiated and divided by its sum. The one float softmax, which
    the cross-checks of the exact calculation compare with."""
    e = np.exp(m - np.max(m, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def round_half_up(m: np.ndarray, decimals: int) -> np.ndarray:
    """A float table rounded half-up to ``decimals``, as a student writes it (−∞ stays)."""
    scale = 10.0**decimals
    return np.floor(m * scale + 0.5) / scale


def attend_rounded(
    *,
    d_k: int | None,
    causal: bool,
    decimals: int,
    S: Sequence[Sequence[int | float]] | None = None,
    Q: Sequence[Sequence[int | float]] | None = None,
    K: Sequence[Sequence[int | float]] | None = None,
    V: Sequence[Sequence[int | float]] | None = None,
    recipe: Recipe = CORRECT,
    round_scaled: bool = True,
) -> dict[str, np.ndarray]:
    """The calculation as a student does it by hand: every table rounded to ``decimals``
    before the next step uses it (floats; the distinguishability rule's rounding chain).

    The scaled table is rounded (unless ``round_scaled`` is false: the student keeps it
    exact and rounds only A), A is the softmax of the (masked) rounded table, rounded, and
    the output is that rounded A times the mixed matrix (exact at ``decimals`` already).
    Whole-number tables (scores, unscaled scores) are unchanged by the rounding.
    """
    if S is None:
        q = np.asarray(Q, dtype=float)
        k = np.asarray(K, dtype=float)
        raw = q @ (k.T if recipe.transpose_k else k)
    else:
        raw = np.asarray(S, dtype=float)
    out: dict[str, np.ndarray] = {"scores": raw}
    if d_k is None or recipe.scale == "none":
        scaled = raw
    else:
        scaled = raw / (np.sqrt(d_k) if recipe.scale == "sqrt" else d_k)
        if round_scaled:
            scaled = round_half_up(scaled, decimals)
    out["scaled"] = scaled
    pre = scaled
    if causal:
        upper = np.triu(np.ones(scaled.shape, dtype=bool), k=1)
        pre = np.where(upper, -np.inf if recipe.mask_fill == "-inf" else 0.0, scaled)
        out["masked"] = pre
    weights = round_half_up(softmax_float(pre, axis=1 if recipe.axis == "keys" else 0), decimals)
    out["A"] = weights
    mixer = K if recipe.mix == "K" else V
    if mixer is not None:
        out["output"] = round_half_up(weights @ np.asarray(mixer, dtype=float), decimals)
    return out


def rounding_chains(decimals: int, **args: object) -> tuple[dict[str, np.ndarray], ...]:
    """The two hand calculations a student who rounds may write: rounding every table
    (the scaled one too), and keeping the scaled table exact but rounding A."""
    chains = [attend_rounded(decimals=decimals, **args)]  # type: ignore[arg-type]
    if args.get("d_k") is not None and getattr(args.get("recipe"), "scale", "sqrt") != "none":
        chains.append(attend_rounded(decimals=decimals, round_scaled=False, **args))  # type: ignore[arg-type]
    return tuple(chains)
