"""Exact numbers for attention arithmetic, built structurally.

An ``Ex`` pairs a SymPy expression with a 50-digit mpmath value computed along the same
structure, so nothing here ever calls ``simplify`` or ``evalf``: the value used for rounding
is accurate to far more digits than any sheet prints. Display rounding is half-up (away from
zero on ties) from that value, or from the exact rational when the expression is rational.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from functools import lru_cache

import mpmath
import sympy as sp

_MP = mpmath.MPContext()
_MP.dps = 50


class Ex:
    """An exact SymPy expression with its high-precision value."""

    __slots__ = ("expr", "val")

    def __init__(self, expr: sp.Expr, val: mpmath.mpf) -> None:
        self.expr = expr
        self.val = val

    def __repr__(self) -> str:
        return f"Ex({self.expr})"

    @property
    def is_neg_inf(self) -> bool:
        """True for the masked score −∞."""
        return self.expr is sp.S.NegativeInfinity

    def __float__(self) -> float:
        return float(self.val)


Matrix = list[list[Ex]]

NEG_INF = Ex(sp.S.NegativeInfinity, _MP.mpf("-inf"))
ZERO = Ex(sp.S.Zero, _MP.mpf(0))
ONE = Ex(sp.S.One, _MP.mpf(1))


@lru_cache(maxsize=4096)
def integer(n: int) -> Ex:
    """An integer."""
    return Ex(sp.Integer(int(n)), _MP.mpf(int(n)))


def number(x: int | float | Fraction | str) -> Ex:
    """An exact number from an int, a Fraction, or a decimal literal like 0.5 (read exactly)."""
    if isinstance(x, bool):
        raise TypeError("bool is not a number")
    if isinstance(x, int):
        return integer(x)
    frac = Fraction(str(x)) if isinstance(x, float | str) else Fraction(x)
    if frac.denominator == 1:
        return integer(frac.numerator)
    return Ex(sp.Rational(frac.numerator, frac.denominator),
              _MP.mpf(frac.numerator) / frac.denominator)


@lru_cache(maxsize=256)
def sqrt_int(n: int) -> Ex:
    """The square root of a positive integer."""
    return Ex(sp.sqrt(sp.Integer(n)), _MP.sqrt(n))


# Memo of exact operations, keyed by the operands' SymPy expressions. A class of students
# (and every slip of every variant) repeats the same small sums, quotients and exponentials
# over and over; building and printing a SymPy expression is the costly part, so each is
# built once per process. Values are pure functions of the expressions, so a hit is exact.
# The memo is bounded (cleared when full) so that memory stays flat on any class size.
_MEMO_LIMIT = 1 << 17
_memo: dict[tuple, Ex] = {}
_rounded_memo: dict[tuple, str] = {}


def _remember(key: tuple, value: Ex) -> Ex:
    if len(_memo) >= _MEMO_LIMIT:
        _memo.clear()
    _memo[key] = value
    return value


def add(terms: Sequence[Ex]) -> Ex:
    """An exact sum."""
    if any(t.is_neg_inf for t in terms):
        return NEG_INF
    key = ("+", *[t.expr for t in terms])
    hit = _memo.get(key)
    if hit is not None:
        return hit
    return _remember(key, Ex(sp.Add(*key[1:]), _MP.fsum(t.val for t in terms)))


def mul(a: Ex, b: Ex) -> Ex:
    """An exact product (finite operands)."""
    key = ("*", a.expr, b.expr)
    hit = _memo.get(key)
    if hit is not None:
        return hit
    return _remember(key, Ex(a.expr * b.expr, a.val * b.val))


def div(a: Ex, b: Ex) -> Ex:
    """An exact quotient; −∞ divided by a positive number stays −∞."""
    if a.is_neg_inf:
        return NEG_INF
    key = ("/", a.expr, b.expr)
    hit = _memo.get(key)
    if hit is not None:
        return hit
    return _remember(key, Ex(a.expr / b.expr, a.val / b.val))


def exp(a: Ex) -> Ex:
    """e to the power a; e^(−∞) is exactly 0."""
    if a.is_neg_inf:
        return ZERO
    key = ("exp", a.expr)
    hit = _memo.get(key)
    if hit is not None:
        return hit
    return _remember(key, Ex(sp.exp(a.expr), _MP.exp(a.val)))


def matmul(a: Matrix, b: Matrix) -> Matrix:
    """The exact matrix product a·b."""
    cols = list(zip(*b, strict=True)) if b else []
    return [[add([mul(x, y) for x, y in zip(row, col, strict=True)]) for col in cols] for row in a]


def transpose(a: Matrix) -> Matrix:
    """The transpose of a list-of-rows matrix."""
    return [list(r) for r in zip(*a, strict=True)]


def from_ints(rows: Sequence[Sequence[int | float]]) -> Matrix:
    """An exact matrix from a list of rows of numbers."""
    return [[number(x) for x in row] for row in rows]


@lru_cache(maxsize=16384)
def exact_text(expr: sp.Expr) -> str:
    """SymPy's parsable string for an expression (cached: the same cells repeat)."""
    if expr is sp.S.NegativeInfinity:
        return "-oo"
    return sp.sstr(expr)


def _decimal_of(x: Ex) -> Decimal:
    """The 45-digit decimal of an irrational value (rationals are rounded exactly instead)."""
    return Decimal(mpmath.libmp.to_str(x.val._mpf_, 45))


def rounded(x: Ex, decimals: int) -> str:
    """``x`` rounded half-up to ``decimals`` places, as printed ("-inf" for a masked cell)."""
    key = (x.expr, decimals)
    hit = _rounded_memo.get(key)
    if hit is None:
        if len(_rounded_memo) >= _MEMO_LIMIT:
            _rounded_memo.clear()
        hit = _rounded_memo[key] = _rounded(x, decimals)
    return hit


def _rounded(x: Ex, decimals: int) -> str:
    if x.is_neg_inf:
        return "-inf"
    if x.expr.is_Rational:
        fr = Fraction(int(x.expr.p), int(x.expr.q))
        scaled = fr * 10**decimals
        sign = -1 if scaled < 0 else 1
        whole = (abs(scaled) + Fraction(1, 2)).__floor__() * sign
        d = Decimal(whole).scaleb(-decimals)
    else:
        d = _decimal_of(x).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    text = f"{d:.{decimals}f}"
    if text.startswith("-") and set(text[1:]) <= {"0", "."}:
        text = text[1:]
    return text


def to_float(x: Ex) -> float | str:
    """The JSON value of a cell: a float, or the string "-inf" for a masked score."""
    return "-inf" if x.is_neg_inf else float(x.val)


def matrix_floats(m: Matrix) -> list[list[float | str]]:
    """A matrix as JSON floats."""
    return [[to_float(x) for x in row] for row in m]


def matrix_rounded(m: Matrix, decimals: int) -> list[list[str]]:
    """A matrix as printed strings."""
    return [[rounded(x, decimals) for x in row] for row in m]


def matrix_exact(m: Matrix) -> list[list[str]]:
    """A matrix as SymPy-parsable strings."""
    return [[exact_text(x.expr) for x in row] for row in m]
