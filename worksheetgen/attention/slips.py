"""The note's "where students get stuck" list as code: one registry of named slips.

A slip is the correct attention calculation with one switch of ``attention.Recipe`` flipped.
Its result for a variant is ``family.evaluate(given, slip.recipe)``: the same drawn inputs as
the right answer, computed the wrong way. The library is used three ways: distractors of
multiple-choice items, the TA fingerprint table of the key, and the distinguishability rule
that keeps only variants where every slip shows.

Protocol a family follows to take part (nothing else is needed):

- ``slips``: the names of the slips its questions can suffer from;
- ``fingerprint``: the names of the answers a slip changes, in order; the question's *target*
  (the one answer a multiple-choice item asks for) is ``family.target_for(given)``, by
  default ``family.target`` if the family sets it, else the last fingerprint name;
- ``evaluate(given, recipe)``: the exact values of the fingerprint answers under ``recipe``;
- ``slips_for(given)``: the declared slips that apply to this variant (default: all);
- ``operands(given)``: the given values with the Q, K and V the slips act on,
  where the sheet asks for them instead of giving them (projections: Q = XW_Q, ...);
- ``shows_in(given)``: the answers in which a slip may show, when the target
  alone cannot tell them all apart (multihead with d_v given: ``dk-equals-d`` changes d_k
  and the weights, not W_O). Distinguishability then asks a difference in one of them.

A slip applies to a variant when the family lists it (``slips_for``) *and* it makes sense for
the drawn values (``Misconception.applies``): ``no-transpose`` only where Q·K is defined
(K square, as wide as Q), ``mixed-keys`` only where K is as wide as V, ``mask-with-zero``
only under a causal mask, ``scale-by-dk``/``no-scale`` only where there is a d_k scale
other than d_k = 1 (dividing by √1 changes nothing, so neither can be made), and
``wo-transposed`` only where W_O is not square (else its transpose has the same shape).

Distinguishability: two results are *distinguishable* at ``decimals`` when their target
answers differ in at least one cell whose printed (half-up rounded) strings differ **and**
whose exact values lie more than half a unit of the last printed digit apart; whole numbers
and shapes must simply differ; ``-inf`` differs from every finite number; answers of a
different shape differ. Requiring both conditions means a student who writes the printed
value of one result can never be read as having written another, even near a rounding tie.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from worksheetgen.attention.compute import CORRECT, Recipe, flipped
from worksheetgen.exact import number as ex
from worksheetgen.exact.answers import is_whole, table
from worksheetgen.exact.kinds import TOLERANT_KINDS
from worksheetgen.exact.masked import MASKED
from worksheetgen.exact.memo import IdentityMemo
from worksheetgen.exact.number import Ex
from worksheetgen.exact.rounding import SLACK, half_unit, half_unit_exact
from worksheetgen.language import N_

Applies = Callable[[dict[str, Any], dict[str, Any]], bool]


@dataclass(frozen=True)
class Misconception:
    """One named slip: what it is, how it computes, and where it makes sense."""

    name: str
    #: what the key calls it on paper (markup: text with ``$…$`` math); ``name`` is its id
    title: str
    #: what it does, one sentence of markup (a multiple-choice option, a key's step)
    description: str
    recipe: Recipe
    applies: Applies
    #: how to avoid it, one sentence of markup (a student's feedback page after the slip)
    avoid: str = ""

    def evaluate(self, family: Any, given: dict[str, Any]) -> dict[str, Any]:
        """The fingerprint answers of ``given`` when computed with this slip."""
        return family.evaluate(given, self.recipe)


def _always(given: dict[str, Any], correct: dict[str, Any]) -> bool:
    return True


def _has_scale(given: dict[str, Any], correct: dict[str, Any]) -> bool:
    # d_k = 1 divides by sqrt(1) = 1 = d_k: the scale step changes nothing, so neither
    # scale slip can be made (they would only ever give the right answer)
    return given.get("d_k") not in (None, 1)


def _is_causal(given: dict[str, Any], correct: dict[str, Any]) -> bool:
    return bool(given.get("causal"))


def _width(m: Any) -> int | None:
    if isinstance(m, list | tuple) and m and isinstance(m[0], list | tuple):
        return len(m[0])
    return None


def _qk_defined(given: dict[str, Any], correct: dict[str, Any]) -> bool:
    k = given.get("K", ())
    q_width, k_width = _width(given.get("Q")), _width(k)
    if q_width is None or k_width is None:
        return False
    return len(k) == k_width == q_width


def _keys_as_wide_as_values(given: dict[str, Any], correct: dict[str, Any]) -> bool:
    kw, vw = _width(given.get("K")), _width(given.get("V"))
    return kw is not None and kw == vw


def _wo_not_square(given: dict[str, Any], correct: dict[str, Any]) -> bool:
    shapes = [
        v
        for v in correct.values()
        if isinstance(v, tuple) and len(v) == 2 and all(isinstance(d, int) for d in v)
    ]
    return any(a != b for a, b in shapes)


MISCONCEPTIONS: dict[str, Misconception] = {
    m.name: m
    for m in (
        Misconception(
            "scale-by-dk",
            N_("scaling by $d_k$"),
            N_(r"Divides the scores by $d_k$ instead of by $\sqrt{d_k}$."),
            flipped(scale="dk"),
            _has_scale,
            N_(
                r"Divide the scores by the square root of the key width, $\sqrt{d_k}$: check "
                r"the scaled table's entries are $QK^\top$'s over $\sqrt{d_k}$, not over $d_k$."
            ),
        ),
        Misconception(
            "no-scale",
            N_("no scaling"),
            N_(r"Skips the scale: takes the softmax of the raw scores $QK^\top$."),
            flipped(scale="none"),
            _has_scale,
            N_(
                r"Scale before the softmax: divide every score of $QK^\top$ by $\sqrt{d_k}$ "
                "first, then take the softmax of the scaled table."
            ),
        ),
        Misconception(
            "mask-with-zero",
            N_("masking with $0$"),
            N_(r"Masks future keys with $0$ instead of $-\infty$, so they still get weight."),
            flipped(mask_fill="zero"),
            _is_causal,
            N_(
                r"Fill the masked (future) entries with $-\infty$, not $0$: only $-\infty$ "
                r"gives them weight $0$ after the softmax ($e^0 = 1$ still counts)."
            ),
        ),
        Misconception(
            "softmax-over-columns",
            N_("softmax over the columns"),
            N_("Normalizes each column (over queries) instead of each row (over keys)."),
            flipped(axis="queries"),
            _always,
            N_(
                "Take the softmax along each row (over the keys, the last dimension): every "
                "row of the weights must add up to 1."
            ),
        ),
        Misconception(
            "mixed-keys",
            N_("mixing the keys"),
            N_("Mixes the keys instead of the values: computes $AK$ instead of $AV$."),
            flipped(mix="K"),
            _keys_as_wide_as_values,
            N_(
                "Multiply the weights by the values, $AV$: the keys only score the "
                r"queries, through $QK^\top$."
            ),
        ),
        Misconception(
            "no-transpose",
            N_("no transpose"),
            N_(r"Forgets to transpose the keys: computes $QK$ instead of $QK^\top$."),
            flipped(transpose_k=False),
            _qk_defined,
            N_(
                r"Transpose the keys before multiplying, $QK^\top$: entry $(i, j)$ is query "
                r"$i$ dotted with key $j$."
            ),
        ),
        Misconception(
            "dk-equals-d",
            N_("the full width per head"),
            N_("Forgets that each head gets $d_k = d/h$ and gives every head the full width $d$."),
            flipped(head_width="d"),
            _always,
            N_(
                r"Split the model width among the heads: each head's $d_k$ is $d/h$, and the "
                r"concatenated heads are $d$ wide again."
            ),
        ),
        Misconception(
            "reads-column",
            N_("reading a column"),
            N_(
                "Reads the token's column of the weights (what every query gives it) "
                "instead of its row (what it gives every key)."
            ),
            flipped(read="column"),
            _always,
            N_(
                "Read the token's row of the weights (its query against every key); a "
                "column mixes what different queries give it."
            ),
        ),
        Misconception(
            "wo-transposed",
            N_("$W_O$ transposed"),
            N_(
                r"Writes the shape of $W_O$ the wrong way round ($d \times \mathrm{concat}$ "
                r"instead of $\mathrm{concat} \times d$)."
            ),
            flipped(wo_transposed=True),
            _wo_not_square,
            N_(
                r"Write $W_O$ as (concatenated width) $\times$ (model width $d$): it maps "
                r"the concatenated heads back to $d$."
            ),
        ),
    )
}

NAMES: tuple[str, ...] = tuple(MISCONCEPTIONS)


def get(name: str) -> Misconception:
    """The misconception called ``name`` (KeyError if there is none)."""
    return MISCONCEPTIONS[name]


class SlipFamily(Protocol):
    """What this module reads of a question family (``families.base.Family`` declares
    each of these with its default; the layers keep this module from importing it)."""

    @property
    def name(self) -> str: ...

    @property
    def slips(self) -> tuple[str, ...]: ...

    @property
    def fingerprint(self) -> tuple[str, ...]: ...

    def target_for(self, given: dict[str, Any]) -> str | None: ...

    def slips_for(self, given: dict[str, Any]) -> tuple[str, ...]: ...

    def operands(self, given: dict[str, Any]) -> dict[str, Any]: ...

    def shows_in(self, given: dict[str, Any]) -> tuple[str, ...]: ...

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]: ...


def target_of(family: SlipFamily, given: dict[str, Any]) -> str | None:
    """The answer a multiple-choice item of this variant asks for (its main answer)."""
    return family.target_for(given)


def declared(family: SlipFamily, given: dict[str, Any]) -> tuple[str, ...]:
    """The slips a family declares for this variant (its ``slips_for`` hook)."""
    names = tuple(family.slips_for(given))
    unknown = [n for n in names if n not in MISCONCEPTIONS]
    if unknown:
        raise ValueError(f"family {family.name!r} declares unknown slips " + ", ".join(unknown))
    return names


def takes_part(family: SlipFamily) -> bool:
    """True when the family declares slips and a fingerprint (so it has distractors)."""
    return bool(family.slips) and bool(family.fingerprint)


@dataclass(frozen=True)
class SlipResult:
    """What one slip computes for one variant (exact fingerprint values)."""

    misconception: Misconception
    values: dict[str, Any]

    @property
    def name(self) -> str:
        return self.misconception.name


@dataclass(frozen=True)
class Fingerprints:
    """The correct values and every applicable slip's values for one variant.

    ``shown`` are the answers a slip must differ in (one of them): the target, and any the
    family's ``shows_in`` adds.
    """

    target: str
    correct: dict[str, Any]
    slips: tuple[SlipResult, ...]
    shown: tuple[str, ...] = ()

    @property
    def compared(self) -> tuple[str, ...]:
        """The answers distinguishability compares (the target first)."""
        return self.shown or (self.target,)

    def result(self, name: str) -> SlipResult:
        """The result of the slip called ``name``."""
        for s in self.slips:
            if s.name == name:
                return s
        raise KeyError(name)


def fingerprints(family: SlipFamily, given: dict[str, Any]) -> Fingerprints | None:
    """Evaluate the correct recipe and every applicable slip; None if the family has none."""
    if not takes_part(family):
        return None
    target = target_of(family, given)
    assert target is not None
    correct = family.evaluate(given, CORRECT)
    operands = family.operands(given)
    results = []
    for name in declared(family, given):
        m = MISCONCEPTIONS[name]
        if m.applies(operands, correct):
            results.append(SlipResult(m, m.evaluate(family, given)))
    shown = tuple(family.shows_in(given))
    if shown and shown[0] != target:
        shown = (target,) + tuple(n for n in shown if n != target)
    return Fingerprints(target, correct, tuple(results), shown)


# ---------------------------------------------------------------- comparing results


def cells(value: Any) -> list[Any]:
    """The entries of an answer value in reading order (matrix rows, vector, scalar, shape)."""
    if (
        isinstance(value, list)
        and value
        and isinstance(value[0], list)
        and not any(isinstance(x, list | tuple) for row in value for x in row)
    ):
        return [x for row in value for x in row]
    if isinstance(value, list | tuple):
        out: list[Any] = []
        for v in value:
            out.extend(cells(v) if isinstance(v, list | tuple) else [v])
        return out
    return [value]


def _shape(value: Any) -> tuple[int, ...]:
    if isinstance(value, tuple):  # a shape answer is one value, not a row
        return (len(value),)
    if isinstance(value, list):
        if value and isinstance(value[0], list):
            return (len(value), len(value[0]))
        return (len(value),)
    return ()


@lru_cache(maxsize=64)
def _half_unit(decimals: int) -> Any:
    return ex.number(half_unit_exact(decimals)).val


def cell_differs(a: Any, b: Any, decimals: int) -> bool:
    """True when two entries are told apart at ``decimals`` (see the module docstring)."""
    if isinstance(a, Ex) and isinstance(b, Ex):
        if a.is_neg_inf or b.is_neg_inf:
            return a.is_neg_inf != b.is_neg_inf
        if ex.rounded(a, decimals) == ex.rounded(b, decimals):
            return False
        # decided on the doubles when they are clearly on one side of half a unit (each is
        # within 2**-53 of its value, relatively), else on the 50-digit values
        fa, fb = float(a), float(b)
        gap, half = abs(fa - fb), half_unit(decimals)
        slack = 1e-15 * (abs(fa) + abs(fb) + half)
        if math.isfinite(gap) and abs(gap - half) > slack:
            return gap > half
        return abs(a.val - b.val) > _half_unit(decimals)
    if isinstance(a, Ex) or isinstance(b, Ex):
        x, y = (float(v) for v in (a, b))
        return abs(x - y) > half_unit(decimals)
    return bool(a != b)


def distinguishable(a: Any, b: Any, decimals: int) -> bool:
    """True when answer values ``a`` and ``b`` cannot be mistaken for each other when printed."""
    if _shape(a) != _shape(b):
        return True
    ca, cb = cells(a), cells(b)
    if len(ca) != len(cb):
        return True
    return any(cell_differs(x, y, decimals) for x, y in zip(ca, cb, strict=True))


@dataclass(frozen=True)
class Collision:
    """A slip whose target answer cannot be told apart from the correct one or another slip's."""

    slip: str
    same_as: str  # "correct" or another slip's name
    margin: float | None = None  # set when it is only within the key's margin of it

    def text(self) -> str:
        """How the collision is reported."""
        if self.margin is not None:
            return (
                f"{self.slip} gives an answer within the key's margin (±{self.margin:g}) "
                f"of the correct one"
            )
        if self.same_as == "correct":
            return f"{self.slip} gives the correct answer"
        return f"{self.slip} gives the same answer as {self.same_as}"


def collisions(fp: Fingerprints, decimals: int) -> list[Collision]:
    """Every slip that collides with the correct answer or with an earlier slip."""
    out: list[Collision] = []
    names = fp.compared

    def apart(a: dict[str, Any], b: dict[str, Any]) -> bool:
        return any(distinguishable(a.get(n), b.get(n), decimals) for n in names)

    for i, s in enumerate(fp.slips):
        if not apart(s.values, fp.correct):
            out.append(Collision(s.name, "correct"))
            continue
        for other in fp.slips[:i]:
            if not apart(s.values, other.values):
                out.append(Collision(s.name, other.name))
                break
    return out


Chains = Callable[["SlipResult"], Sequence[dict[str, Any]]]


def within_margin(
    fp: Fingerprints,
    answer: Any,
    decimals: int,
    only: Sequence[str] | None = None,
    chains: Chains | None = None,
    reach: float = math.inf,
) -> list[Collision]:
    """Every slip whose answer, however the student rounds, the key would accept as right.

    ``answer`` is the solved target (an ``Answer``), or another answer the slip must not
    pass for right in. A student who makes the slip may write its printed value, its value
    to more digits than asked (the unrounded value), or the value worked from earlier steps
    rounded as the key allows the right answer's to be (``chains(slip)``: the family's
    ``rounded`` tables). Where any of these is within the answer's tolerance in every entry
    (as ``grade`` and the LMS exports accept it: a margin wider than half a unit, because
    rounded earlier answers carry into this one), the slip cannot be told from a right
    answer. With ``only`` (names), just those slips are checked, and only where they print
    differently from the right answer (a slip that leaves this answer alone shows
    elsewhere). ``reach`` bounds how far a chain's entries lie from the slip's exact ones
    (the family's ``chain_reach``): a slip farther than that from the margin is not worked
    through.
    """
    if answer.kind not in TOLERANT_KINDS or not answer.tolerance:
        return []  # exact answers: printed equality (``collisions``) already decides
    right = cells(answer.value)
    tol = answer.tolerance
    out: list[Collision] = []
    for s in fp.slips:
        if only is not None and s.name not in only:
            continue
        mine = s.values.get(answer.name)
        if mine is None or _shape(mine) != _shape(answer.value):
            continue
        exact = cells(mine)
        if only is not None and [
            float(x) if x != MASKED else x for x in cells(value_rounded(mine, decimals))
        ] == [float(x) if x != MASKED else x for x in cells(answer.rounded)]:
            continue
        if _passes(s, exact, right, tol, decimals, chains, answer.name, reach):
            out.append(Collision(s.name, "correct", margin=tol))
    return out


def _passes(
    s: SlipResult,
    exact: list[Any],
    right: list[Any],
    tol: float,
    decimals: int,
    chains: Chains | None,
    name: str,
    reach: float = math.inf,
) -> bool:
    """Does any way of writing slip ``s``'s answer fall within ``tol`` of ``right``?"""
    if len(exact) != len(right):
        return False
    near = not _clearly_outside(exact, right, tol, decimals)
    if near:  # its printed value, and its value to every digit
        shown = cells(value_rounded(s.values[name], decimals))
        if all(_accepted(v, p, tol) for v, p in zip(right, shown, strict=True)):
            return True
        if all(_accepted(v, _written(x), tol) for v, x in zip(right, exact, strict=True)):
            return True
    if chains is None or _clearly_outside(exact, right, tol + reach, decimals):
        return False  # (decided on the doubles: no chain can come that near)
    for chain in chains(s):
        worked = chain.get(name)
        if worked is None:
            continue
        got = cells(worked)
        if len(got) == len(right) and all(
            _accepted(v, _written(x), tol) for v, x in zip(right, got, strict=True)
        ):
            return True
    return False


def _written(x: Any) -> float | str:
    """An exact or float entry as a student writes it to every digit (-inf: masked)."""
    if isinstance(x, Ex):
        return MASKED if x.is_neg_inf else ex.to_float(x)
    if isinstance(x, float) and x == float("-inf"):
        return MASKED
    return float(x)


def _clearly_outside(mine: list[Any], right: list[Any], tolerance: float, decimals: int) -> bool:
    """True when some entry is so far from the right one that even printed (at most half a
    unit nearer) it lies outside the tolerance; False when that needs the printed value."""
    reach = tolerance + half_unit(decimals) + SLACK
    for x, v in zip(mine, right, strict=True):
        if (
            isinstance(x, Ex)
            and not x.is_neg_inf
            and v != MASKED
            and abs(ex.to_float(x) - v) > reach * (1 + SLACK)
        ):
            return True
    return False


def _accepted(value: float | str, printed: str | float, tolerance: float) -> bool:
    """Would an entry written as ``printed`` be accepted for ``value`` (-inf: masked)?"""
    if printed == MASKED or value == MASKED:
        return printed == value
    return abs(float(printed) - float(value)) <= tolerance + SLACK


def kept_after(fp: Fingerprints, found: Sequence[Collision]) -> tuple[SlipResult, ...]:
    """The slips left once every colliding one is dropped (the first of a tie stays)."""
    dropped = {c.slip for c in found}
    return tuple(s for s in fp.slips if s.name not in dropped)


# ---------------------------------------------------------------- JSON and printed values


# Printed and JSON forms of recent tables: the slips of a variant share most of their tables
# with each other (the same list objects), and each is converted once.
_converted = IdentityMemo(2048)


def value_json(value: Any) -> Any:
    """An exact fingerprint value as JSON: floats (``"-inf"`` for masked cells), ints, lists."""
    if isinstance(value, Ex):
        return ex.to_float(value)
    if (
        isinstance(value, list)
        and value
        and isinstance(value[0], list)
        and all(isinstance(x, Ex) for row in value for x in row)
    ):
        return _converted.get((value,), ("json",), lambda: ex.matrix_floats(value))
    if isinstance(value, tuple | list):
        return [value_json(v) for v in value]
    return value


def prints_whole(value: Any) -> bool | None:
    """Whether an answer's table (or row) prints as whole numbers: every entry whole or
    −∞. It is the style of every value of that answer (the correct one decides, so a slip's
    table of a decimal answer prints ``3.00`` like the right one); None for other values."""

    if isinstance(value, list) and value and isinstance(value[0], list):
        return all(is_whole(x) for row in value for x in row)
    if isinstance(value, list) and value and all(isinstance(x, Ex) for x in value):
        return all(is_whole(x) for x in value)
    return None


def value_rounded(value: Any, decimals: int, whole: bool | None = None) -> Any:
    """An exact fingerprint value as the strings the key prints (as the answer would be).

    A table or row prints without decimals when it is all whole numbers, unless ``whole``
    is False (the answer's own style, ``prints_whole`` of its correct value: decimals).
    """

    if isinstance(value, list) and value and isinstance(value[0], list):
        return _converted.get(
            (value,), (decimals, whole), lambda: table(value, decimals, whole=whole is not False)
        )
    if isinstance(value, list) and value and all(isinstance(x, Ex) for x in value):
        return table([value], decimals, whole=whole is not False)[0]
    if isinstance(value, Ex):
        return ex.rounded(value, decimals)
    if isinstance(value, tuple | list):
        return [value_rounded(v, decimals) for v in value]
    return str(value)
