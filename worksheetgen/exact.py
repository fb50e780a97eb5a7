"""Exact numbers for attention arithmetic, built structurally.

An ``Ex`` pairs a SymPy expression with a 50-digit mpmath value computed along the same
structure, so nothing here ever calls ``simplify`` or ``evalf``: the value used for rounding
is accurate to far more digits than any sheet prints. Display rounding is half-up (away from
zero on ties) from that value, or from the exact rational when the expression is rational.
"""

from __future__ import annotations

import itertools
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
    """An exact number: its 50-digit value, its exact ``Fraction`` when it is rational, and its
    SymPy expression, built only when something reads ``expr``.

    Slips, rounding and the distinguishability checks need only the value and the fraction,
    so they never touch SymPy; the key's exact strings and the structural invariants read
    ``expr``, which is built from the operands' expressions (the very expression SymPy would
    have given if it had been built eagerly) and cached on the object.
    """

    __slots__ = ("_expr", "_op", "_args", "val", "frac", "key", "_float", "_rounded",
                 "_neg_inf")

    def __init__(self, expr: sp.Expr, val: mpmath.mpf) -> None:
        self._expr: sp.Expr | None = expr
        self._op = ""
        self._args: tuple = ()
        self.val = val
        self.frac = Fraction(int(expr.p), int(expr.q)) if expr.is_Rational else None
        self.key: object = _frac_key(self.frac) if self.frac is not None else ("expr", expr)
        self._float: float | None = None  # caches: the memo hands out the same objects
        self._rounded: dict[int, str] | None = None
        self._neg_inf = expr is sp.S.NegativeInfinity

    @classmethod
    def _lazy(cls, op: str, args: tuple, val: mpmath.mpf, frac: Fraction | None) -> Ex:
        """A value whose expression is ``op`` applied to ``args`` (built on first use)."""
        self = cls.__new__(cls)
        self._expr = None
        self._op = op
        self._args = args
        self.val = val
        self.frac = frac
        self.key = _frac_key(frac) if frac is not None else f"#{next(_serial)}"
        self._float = None
        self._rounded = None
        self._neg_inf = False
        return self

    @property
    def expr(self) -> sp.Expr:
        """The exact SymPy expression (built on first access, then kept)."""
        e = self._expr
        if e is None:
            e = self._expr = self._build()
            self._args = ()  # the operands are no longer needed
        return e

    def _build(self) -> sp.Expr:
        frac, op, args = self.frac, self._op, self._args
        if frac is not None:
            if frac.denominator == 1:
                return sp.Integer(frac.numerator)
            return sp.Rational(frac.numerator, frac.denominator)
        if op == "+":
            return sp.Add(*[t.expr for t in args])
        if op == "*":
            return args[0].expr * args[1].expr
        if op == "/":
            return args[0].expr / args[1].expr
        if op == "exp":
            return sp.exp(args[0].expr)
        if op == "sqrt":
            return sp.sqrt(sp.Integer(args[0]))
        raise AssertionError(f"unknown operation {op!r}")

    @property
    def built(self) -> bool:
        """True once the SymPy expression exists (for tests of laziness)."""
        return self._expr is not None

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


_serial = itertools.count()


def _frac_key(frac: Fraction) -> tuple[int, int]:
    return (frac.numerator, frac.denominator)


Matrix = list[list[Ex]]

NEG_INF = Ex(sp.S.NegativeInfinity, _MP.mpf("-inf"))
NEG_INF.key = "-inf"
ZERO = Ex(sp.S.Zero, _MP.mpf(0))
ONE = Ex(sp.S.One, _MP.mpf(1))


def _rational(frac: Fraction, val: mpmath.mpf) -> Ex:
    return Ex._lazy("", (), val, frac)


@lru_cache(maxsize=4096)
def integer(n: int) -> Ex:
    """An integer."""
    n = int(n)
    return _rational(Fraction(n), _MP.mpf(n))


def number(x: int | float | Fraction | str) -> Ex:
    """An exact number from an int, a Fraction, or a decimal literal like 0.5 (read exactly)."""
    if isinstance(x, bool):
        raise TypeError("bool is not a number")
    if isinstance(x, int):
        return integer(x)
    frac = Fraction(str(x)) if isinstance(x, float | str) else Fraction(x)
    if frac.denominator == 1:
        return integer(frac.numerator)
    return _rational(frac, _MP.mpf(frac.numerator) / frac.denominator)


@lru_cache(maxsize=256)
def sqrt_int(n: int) -> Ex:
    """The square root of a positive integer (rational when ``n`` is a perfect square)."""
    root = math.isqrt(n)
    if root * root == n:
        return integer(root)
    return Ex._lazy("sqrt", (n,), _MP.sqrt(n), None)


# Memo of exact operations, keyed by the operation and its operands' keys (a rational's key
# is its numerator and denominator, any other value's a serial number), so equal operations
# give the very same object: a class of students (and every slip of every variant) repeats
# the same sums, quotients and exponentials, and each object builds its SymPy expression,
# its floats and its roundings at most once. The memo is bounded (cleared when full) so that
# memory stays flat on any class size.
_MEMO_LIMIT = 1 << 17
_memo: dict[tuple, Ex] = {}


def _remember(key: tuple, value: Ex) -> Ex:
    if len(_memo) >= _MEMO_LIMIT:
        _memo.clear()
    _memo[key] = value
    return value


def add(terms: Sequence[Ex]) -> Ex:
    """An exact sum (zero terms add nothing: a sum of one live term is that term)."""
    live = []
    for t in terms:
        if t._neg_inf:
            return NEG_INF
        if t.frac is None or t.frac:
            live.append(t)
    if not live:
        return ZERO
    if len(live) == 1:
        return live[0]
    key = ("+", *[t.key for t in live])
    hit = _memo.get(key)
    if hit is not None:
        return hit
    fracs = [t.frac for t in live]
    frac = None if None in fracs else sum(fracs, Fraction(0))
    return _remember(key, Ex._lazy("+", tuple(live), _MP.fsum(t.val for t in live), frac))


def mul(a: Ex, b: Ex) -> Ex:
    """An exact product (finite operands)."""
    key = ("*", a.key, b.key)
    hit = _memo.get(key)
    if hit is not None:
        return hit
    fa, fb = a.frac, b.frac
    if fa is not None and fb is not None:
        frac: Fraction | None = fa * fb
    elif fa == 0 or fb == 0:
        frac = Fraction(0)
    else:
        frac = None
    return _remember(key, Ex._lazy("*", (a, b), a.val * b.val, frac))


def div(a: Ex, b: Ex) -> Ex:
    """An exact quotient; −∞ divided by a positive number stays −∞."""
    if a._neg_inf:
        return NEG_INF
    if a is b and a.frac is None:
        return ONE
    key = ("/", a.key, b.key)
    hit = _memo.get(key)
    if hit is not None:
        return hit
    fa, fb = a.frac, b.frac
    if fa is not None and fb is not None:
        frac: Fraction | None = fa / fb
    elif fa == 0:
        frac = Fraction(0)
    else:
        frac = None
    return _remember(key, Ex._lazy("/", (a, b), a.val / b.val, frac))


def exp(a: Ex) -> Ex:
    """e to the power a; e^(−∞) is exactly 0 and e^0 exactly 1."""
    if a._neg_inf:
        return ZERO
    if a.frac == 0:
        return ONE
    key = ("exp", a.key)
    hit = _memo.get(key)
    if hit is not None:
        return hit
    return _remember(key, Ex._lazy("exp", (a,), _MP.exp(a.val), None))


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
    """The 45-digit decimal of a value (rationals are rounded exactly instead)."""
    return Decimal(mpmath.libmp.to_str(x.val._mpf_, 45))


_HAIR = Decimal("1e-25")
_HALF = Decimal("0.5")


def _near_grid(value: Decimal, decimals: int, offset: Decimal) -> bool:
    """True when ``value``·10^decimals is within a hair of a whole number plus ``offset``.

    The 45-digit decimal is far more accurate than the hair, so a value that is not near the
    grid is certainly not on it; one that is near it is decided by the exact expression.
    """
    with localcontext() as ctx:
        ctx.prec = 120
        t = value.scaleb(decimals) - offset
        gap = abs(t - t.to_integral_value())
        return gap <= _HAIR * max(Decimal(1), abs(t))


def _cached(x: Ex, key: int | str, make: Callable[[], str]) -> str:
    own = x._rounded
    if own is None:
        own = x._rounded = {}
    hit = own.get(key)
    if hit is None:
        hit = own[key] = make()
    return hit


def is_integer(x: Ex) -> bool:
    """True when ``x`` is a whole number: what ``x.expr.is_Integer`` says, read from the
    exact fraction or, for an irrational-looking value, from the value unless it is within a
    hair of a whole number (then from the expression itself)."""
    if x.frac is not None:
        return x.frac.denominator == 1
    if x._neg_inf:
        return False
    return _cached(x, "int", lambda: "1" if _near_grid(_decimal_of(x), 0, Decimal(0))
                   and x.expr.is_Integer else "") == "1"


def is_zero(x: Ex) -> bool:
    """True when ``x`` is exactly 0 (``x.expr == 0``), without SymPy unless it is nearly 0."""
    if x.frac is not None:
        return x.frac == 0
    if x._neg_inf or abs(x.val) > _TINY:
        return False
    return bool(x.expr == 0)


_TINY = _MP.mpf("1e-30")


def as_int(x: Ex) -> int:
    """A whole-number value as a Python int (ValueError if it is not whole)."""
    if not is_integer(x):
        raise ValueError(f"{x} is not a whole number")
    return x.frac.numerator if x.frac is not None else int(x.expr)


def rounded(x: Ex, decimals: int) -> str:
    """``x`` rounded half-up to ``decimals`` places, as printed ("-inf" for a masked cell)."""
    return _cached(x, decimals, lambda: _rounded(x, decimals))


def _rounded(x: Ex, decimals: int) -> str:
    if x.is_neg_inf:
        return "-inf"
    fr = x.frac
    value = None
    if fr is None:
        value = _decimal_of(x)
        if _near_grid(value, decimals, _HALF):  # (nearly) a tie: is it exactly one?
            e = x.expr
            if e.is_Rational:
                fr = Fraction(int(e.p), int(e.q))
    if fr is not None:
        scaled = fr * 10**decimals
        sign = -1 if scaled < 0 else 1
        whole = (abs(scaled) + Fraction(1, 2)).__floor__() * sign
        with localcontext() as ctx:  # every digit of a long number (28 by default)
            ctx.prec = max(ctx.prec, len(str(abs(whole))) + 2)
            d = Decimal(whole).scaleb(-decimals)
    else:
        assert value is not None
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
