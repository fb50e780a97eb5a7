"""Exact numbers for attention arithmetic, built structurally.

An ``Ex`` pairs a SymPy expression with a 50-digit mpmath value computed along the same
structure, so nothing here ever calls ``simplify`` or ``evalf``: the value used for rounding
is accurate to far more digits than any sheet prints. Display rounding is half-up (away from
zero on ties) from that value, or from the exact rational when the expression is rational.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction
from functools import lru_cache

import mpmath
import sympy as sp
from sympy.core.numbers import Number, NumberSymbol
from sympy.printing.str import StrPrinter

_MP = mpmath.MPContext()
_MP.dps = 50


class Ex:
    """An exact SymPy expression with its high-precision value."""

    __slots__ = ("expr", "val", "_float", "_rounded", "_neg_inf")

    def __init__(self, expr: sp.Expr, val: mpmath.mpf) -> None:
        self.expr = expr
        self.val = val
        self._float: float | None = None  # caches: the memo hands out the same objects
        self._rounded: dict[int, str] | None = None
        self._neg_inf = expr is sp.S.NegativeInfinity

    def __repr__(self) -> str:
        return f"Ex({self.expr})"

    @property
    def is_neg_inf(self) -> bool:
        """True for the masked score −∞."""
        return self._neg_inf

    def __float__(self) -> float:
        if self._float is None:
            self._float = float(self.val)
        return self._float


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
#
# Two levels: by the identity of the operand objects (cheap: no SymPy hashing; the entry
# keeps its operands alive, so an id is never reused while it is in the memo), then by the
# operands' expressions (equal values built separately).
_MEMO_LIMIT = 1 << 17
_memo: dict[tuple, Ex] = {}
_by_id: dict[tuple, tuple[Ex, tuple[Ex, ...]]] = {}
_rounded_memo: dict[tuple, str] = {}


def _operate(op: str, args: tuple[Ex, ...], build: Callable[[], Ex]) -> Ex:
    """The memoized result of ``op`` on ``args``; ``build`` makes it on a miss."""
    ids = (op, *map(id, args))
    hit = _by_id.get(ids)
    if hit is not None:
        return hit[0]
    key = (op, *[a.expr for a in args])
    value = _memo.get(key)
    if value is None:
        value = build()
        if len(_memo) >= _MEMO_LIMIT:
            _memo.clear()
        _memo[key] = value
    if len(_by_id) >= _MEMO_LIMIT:
        _by_id.clear()
    _by_id[ids] = (value, args)
    return value


def add(terms: Sequence[Ex]) -> Ex:
    """An exact sum."""
    if any(t.is_neg_inf for t in terms):
        return NEG_INF
    args = tuple(terms)
    return _operate("+", args, lambda: Ex(sp.Add(*[t.expr for t in args]),
                                          _MP.fsum(t.val for t in args)))


def mul(a: Ex, b: Ex) -> Ex:
    """An exact product (finite operands)."""
    return _operate("*", (a, b), lambda: Ex(a.expr * b.expr, a.val * b.val))


def div(a: Ex, b: Ex) -> Ex:
    """An exact quotient; −∞ divided by a positive number stays −∞."""
    if a.is_neg_inf:
        return NEG_INF
    return _operate("/", (a, b), lambda: Ex(a.expr / b.expr, a.val / b.val))


def exp(a: Ex) -> Ex:
    """e to the power a; e^(−∞) is exactly 0."""
    if a.is_neg_inf:
        return ZERO
    return _operate("exp", (a,), lambda: Ex(sp.exp(a.expr), _MP.exp(a.val)))


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


_term_values: dict[sp.Expr, float] = {}


def _term_value(e: sp.Expr) -> float:
    """A float of a numeric expression, along its structure (memoized, bounded)."""
    v = _term_values.get(e)
    if v is None:
        if e.is_Rational:
            v = e.p / e.q
        elif e is sp.S.Exp1:
            v = math.e
        elif isinstance(e, sp.exp):
            v = math.exp(_term_value(e.args[0]))
        elif e.is_Pow:
            v = _term_value(e.base) ** _term_value(e.exp)
        elif e.is_Mul:
            v = math.prod(_term_value(a) for a in e.args)
        elif e.is_Add:
            v = math.fsum(_term_value(a) for a in e.args)
        else:
            v = complex(e).real
        if len(_term_values) >= _MEMO_LIMIT:
            _term_values.clear()
        _term_values[e] = v
    return v


class _Printer(StrPrinter):
    """SymPy's str printer, with the order of a numeric sum's terms found from floats.

    ``sstr`` orders the terms of a numeric sum by value, which it gets by evaluating every term
    with ``evalf``: most of its time. This printer sorts by the same key (the value, ascending,
    ties kept in argument order, and SymPy's special case ``number - k*expr``) but from plain
    floats, so it prints the very same text several times faster.
    """

    def _as_ordered_terms(self, expr: sp.Expr, order: str | None = None) -> list[sp.Expr]:
        if order is None and self.order is None and expr.is_Add and expr.is_number:
            def numeric(x: sp.Expr) -> bool:
                return not isinstance(x, Number | NumberSymbol)

            args = sorted(expr.args, key=numeric)
            if len(args) == 2 and not numeric(args[0]) and isinstance(args[1], sp.Mul):
                factors = sorted(sp.Mul.make_args(args[1]), key=numeric)
                if (len(factors) == 2 and isinstance(factors[0], Number)
                        and args[0].is_positive and factors[0].is_negative):
                    return args
            try:
                return sorted(expr.args, key=_term_value)
            except (OverflowError, TypeError, ValueError):
                pass
        return super()._as_ordered_terms(expr, order=order)


_PRINTER = _Printer()


@lru_cache(maxsize=16384)
def exact_text(expr: sp.Expr) -> str:
    """SymPy's parsable string for an expression, as ``sympy.sstr`` prints it (cached: the
    same cells repeat)."""
    if expr is sp.S.NegativeInfinity:
        return "-oo"
    return _PRINTER.doprint(expr)


def _decimal_of(x: Ex) -> Decimal:
    """The 45-digit decimal of an irrational value (rationals are rounded exactly instead)."""
    return Decimal(mpmath.libmp.to_str(x.val._mpf_, 45))


def rounded(x: Ex, decimals: int) -> str:
    """``x`` rounded half-up to ``decimals`` places, as printed ("-inf" for a masked cell)."""
    own = x._rounded
    if own is None:
        own = x._rounded = {}
    hit = own.get(decimals)
    if hit is None:
        key = (x.expr, decimals)
        hit = _rounded_memo.get(key)
        if hit is None:
            if len(_rounded_memo) >= _MEMO_LIMIT:
                _rounded_memo.clear()
            hit = _rounded_memo[key] = _rounded(x, decimals)
        own[decimals] = hit
    return hit


def _rounded(x: Ex, decimals: int) -> str:
    if x.is_neg_inf:
        return "-inf"
    if x.expr.is_Rational:
        fr = Fraction(int(x.expr.p), int(x.expr.q))
        scaled = fr * 10**decimals
        sign = -1 if scaled < 0 else 1
        whole = (abs(scaled) + Fraction(1, 2)).__floor__() * sign
        with localcontext() as ctx:  # every digit of a long number (28 by default)
            ctx.prec = max(ctx.prec, len(str(abs(whole))) + 2)
            d = Decimal(whole).scaleb(-decimals)
    else:
        value = _decimal_of(x)
        with localcontext() as ctx:  # e.g. exp(92) has 40 digits before the point
            ctx.prec = max(ctx.prec, value.adjusted() + decimals + 2)
            d = value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    text = f"{d:.{decimals}f}"
    if text.startswith("-") and set(text[1:]) <= {"0", "."}:
        text = text[1:]
    return text


def to_float(x: Ex) -> float | str:
    """The JSON value of a cell: a float, or the string "-inf" for a masked score."""
    return "-inf" if x._neg_inf else float(x)


def matrix_floats(m: Matrix) -> list[list[float | str]]:
    """A matrix as JSON floats."""
    return [[to_float(x) for x in row] for row in m]


def matrix_rounded(m: Matrix, decimals: int) -> list[list[str]]:
    """A matrix as printed strings."""
    return [[rounded(x, decimals) for x in row] for row in m]


def matrix_exact(m: Matrix) -> list[list[str]]:
    """A matrix as SymPy-parsable strings."""
    return [[exact_text(x.expr) for x in row] for row in m]
