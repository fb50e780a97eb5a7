"""Exact numbers for attention arithmetic, built structurally.

An ``Ex`` carries a 50-digit mpmath value computed along the structure of its calculation,
its exact ``Fraction`` when it is rational, and the calculation itself (operation and
operands). From those it gives, only when asked, its canonical form (``worksheetgen.exact.canon``:
the shape SymPy would give it, printed as ``sympy.sstr`` prints it, without SymPy) or, for a
shape ``canon`` does not know, its SymPy expression. Nothing here ever calls ``simplify`` or
``evalf``, and SymPy is imported only for such an unknown shape. Display rounding is half-up
(away from zero on ties) from the exact rational when the value is rational, else from the
50-digit value.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from decimal import Decimal, localcontext
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import mpmath

from worksheetgen.exact import canon
from worksheetgen.exact.masked import MASKED
from worksheetgen.exact.rounding import quantize_half_up, scaled_half_up

if TYPE_CHECKING:
    import sympy as sp

_MP = mpmath.MPContext()
_MP.dps = 50

_UNSET: Any = object()


class Ex:
    """An exact number: its 50-digit value, its exact ``Fraction`` when it is rational, and
    the operation that made it, from which its canonical form and (only when something asks)
    its SymPy expression are built.

    Slips, rounding and the distinguishability checks need only the value and the fraction;
    the key's exact strings and the structural invariants read ``form``. ``expr`` is the
    SymPy expression SymPy would have given if it had been built eagerly, cached on the object.
    """

    __slots__ = (
        "_expr",
        "_op",
        "_args",
        "val",
        "frac",
        "key",
        "_float",
        "_rounded",
        "_neg_inf",
        "_form",
    )

    def __init__(self, expr: sp.Expr, val: mpmath.mpf) -> None:
        """A value from a SymPy expression (its form is known only when it is rational)."""
        # SymPy itself, only when a caller asks for a SymPy expression
        import sympy as sp

        self._expr: sp.Expr | None = expr
        self._op = ""
        self._args: tuple = ()
        self.val = val
        self.frac = Fraction(int(expr.p), int(expr.q)) if expr.is_Rational else None
        self.key: object = _frac_key(self.frac) if self.frac is not None else ("expr", expr)
        self._float: float | None = None  # caches: the memo hands out the same objects
        self._rounded: dict[int | str, str] | None = None
        self._neg_inf = expr is sp.S.NegativeInfinity
        self._form: canon.Form | None = self.frac

    @classmethod
    def _lazy(cls, op: str, args: tuple, val: mpmath.mpf, frac: Fraction | None) -> Ex:
        """A value made by ``op`` from ``args`` (form and expression built on first use)."""
        self = cls.__new__(cls)
        self._expr = None
        self._op = op
        self._args = args
        self.val = val
        self.frac = frac
        self.key = _frac_key(frac) if frac is not None else f"#{next(_serial)}"
        self._float = None
        self._rounded = None
        self._neg_inf = op == "-inf"
        self._form = frac if frac is not None else _UNSET
        return self

    @property
    def form(self) -> canon.Form | None:
        """The canonical form (None for −∞ and for shapes ``canon`` does not know)."""
        f = self._form
        if f is _UNSET:
            f = self._form = self._make_form()
        return f

    def _make_form(self) -> canon.Form | None:
        op, args = self._op, self._args
        if op == "+":
            return canon.add([t.form for t in args])
        if op == "*":
            return canon.mul(args[0].form, args[1].form)
        if op == "/":
            return canon.div(args[0].form, args[1].form)
        if op == "exp":
            return canon.exp(args[0].form)
        if op == "sqrt":
            return canon.sqrt_int(args[0])
        return None

    @property
    def expr(self) -> sp.Expr:
        """The exact SymPy expression (built on first access, then kept)."""
        e = self._expr
        if e is None:
            e = self._expr = self._build()
        return e

    def _build(self) -> sp.Expr:
        # SymPy itself, only when a caller asks for a SymPy expression
        import sympy as sp

        frac, op, args = self.frac, self._op, self._args
        if frac is not None:
            if frac.denominator == 1:
                return sp.Integer(frac.numerator)
            return sp.Rational(frac.numerator, frac.denominator)
        if op == "-inf":
            return sp.S.NegativeInfinity
        if op == "+":
            reduced = self.form  # a sum the canonical form reduces to a number (see canon.add)
            if isinstance(reduced, Fraction):
                return sp.Rational(reduced.numerator, reduced.denominator)
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
        return f"Ex({text(self)})"

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

NEG_INF = Ex._lazy("-inf", (), _MP.mpf("-inf"), None)
NEG_INF.key = "-inf"
ZERO = Ex._lazy("", (), _MP.mpf(0), Fraction(0))
ONE = Ex._lazy("", (), _MP.mpf(1), Fraction(1))


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
    fracs = [t.frac for t in live if t.frac is not None]
    rational = len(fracs) == len(live)
    if rational and all(f.denominator == 1 for f in fracs):  # whole numbers
        return integer(sum(f.numerator for f in fracs))
    key = ("+", *[t.key for t in live])
    hit = _memo.get(key)
    if hit is not None:
        return hit
    frac = sum(fracs, Fraction(0)) if rational else None
    return _remember(key, Ex._lazy("+", tuple(live), _MP.fsum(t.val for t in live), frac))


def mul(a: Ex, b: Ex) -> Ex:
    """An exact product (finite operands)."""
    fa, fb = a.frac, b.frac
    if fa is not None and fb is not None and fa.denominator == 1 == fb.denominator:
        return integer(fa.numerator * fb.numerator)
    key = ("*", a.key, b.key)
    hit = _memo.get(key)
    if hit is not None:
        return hit
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
    """The exact matrix product a·b (of whole numbers: in plain integers)."""
    cols = list(zip(*b, strict=True)) if b else []
    whole_a, whole_b = _whole_rows(a), _whole_rows(cols)
    if whole_a is not None and whole_b is not None:
        return [
            [_whole(sum(x * y for x, y in zip(row, col, strict=True))) for col in whole_b]
            for row in whole_a
        ]
    return [[add([mul(x, y) for x, y in zip(row, col, strict=True)]) for col in cols] for row in a]


def _whole(n: int) -> Ex:
    """A whole number as ``add`` gives it (an empty sum is ZERO itself)."""
    return ZERO if n == 0 else integer(n)


def _whole_rows(rows: Sequence[Sequence[Ex]]) -> list[list[int]] | None:
    """The entries as ints when every one is a whole number, else None (stops at the first
    entry that is not)."""
    out = []
    for row in rows:
        ints = []
        for x in row:
            f = x.frac
            if f is None or f.denominator != 1:
                return None
            ints.append(f.numerator)
        out.append(ints)
    return out


def transpose(a: Matrix) -> Matrix:
    """The transpose of a list-of-rows matrix."""
    return [list(r) for r in zip(*a, strict=True)]


def from_ints(rows: Sequence[Sequence[int | float]]) -> Matrix:
    """An exact matrix from a list of rows of numbers."""
    return [[number(x) for x in row] for row in rows]


def text(x: Ex) -> str:
    """The exact value as SymPy's parsable string, exactly as ``sympy.sstr`` prints it: from
    the canonical form, or (for a shape it does not know) from the SymPy expression."""
    own = x._rounded
    if own is not None:
        hit = own.get("text")
        if hit is not None:
            return hit
    if x._neg_inf:
        return "-oo"
    f = x.form
    out = canon.text(f) if f is not None else exact_text(x.expr)
    if own is None:
        own = x._rounded = {}
    own["text"] = out
    return out


def exact_text(expr: sp.Expr) -> str:
    """``sympy.sstr`` of a SymPy expression, printed faster (imports SymPy)."""
    # SymPy, only for a value whose shape canon cannot print
    from worksheetgen.exact import sympy_form as sympytext

    return sympytext.exact_text(expr)


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


def _form_fraction(x: Ex) -> Fraction | None:
    """The value as a Fraction when its canonical form is a plain rational (SymPy's
    expression is then a Rational too)."""
    f = x.form
    return f if isinstance(f, Fraction) else None


def is_integer(x: Ex) -> bool:
    """True when ``x`` is a whole number: what ``x.expr.is_Integer`` says, read from the
    exact fraction or the canonical form; for a shape without one, from the value unless it
    is within a hair of a whole number (then from the expression itself)."""
    if x.frac is not None:
        return x.frac.denominator == 1
    if x._neg_inf:
        return False
    f = float(x)  # the 50-digit value's double: a whole number's double is within a hair
    if abs(f - round(f)) > 1e-9 * max(1.0, abs(f)):
        return False
    if x.form is not None:
        fr = _form_fraction(x)
        return fr is not None and fr.denominator == 1
    return (
        _cached(
            x,
            "int",
            lambda: "1" if _near_grid(_decimal_of(x), 0, Decimal(0)) and x.expr.is_Integer else "",
        )
        == "1"
    )


def is_zero(x: Ex) -> bool:
    """True when ``x`` is exactly 0 (``x.expr == 0``), without SymPy unless it is nearly 0
    and of a shape the canonical forms do not know."""
    if x.frac is not None:
        return x.frac == 0
    if x._neg_inf or abs(x.val) > _TINY:
        return False
    if x.form is not None:
        return _form_fraction(x) == 0
    return bool(x.expr == 0)


_TINY = _MP.mpf("1e-30")


def as_int(x: Ex) -> int:
    """A whole-number value as a Python int (ValueError if it is not whole)."""
    if not is_integer(x):
        raise ValueError(f"{x} is not a whole number")
    fr = x.frac if x.frac is not None else _form_fraction(x)
    return fr.numerator if fr is not None else int(x.expr)


def _exact_rational(x: Ex) -> Fraction | None:
    """The value as a Fraction when it is rational (from the canonical form, which also
    sees a quotient whose numerator is a multiple of its denominator), else None."""
    f = x.form
    if f is not None:
        return canon.is_rational(f)
    e = x.expr
    return Fraction(int(e.p), int(e.q)) if e.is_Rational else None


def rounded(x: Ex, decimals: int) -> str:
    """``x`` rounded half-up to ``decimals`` places, as printed ("-inf" for a masked cell)."""
    own = x._rounded
    if own is None:
        own = x._rounded = {}
    hit = own.get(decimals)
    if hit is None:
        hit = own[decimals] = _rounded(x, decimals)
    return hit


_FAST_LIMIT = float(2**50)


def _rounded_fast(x: Ex, decimals: int) -> str | None:
    """``x`` rounded from the double of its 50-digit value, when that is certainly right.

    The double is within half a unit of its last bit of the value, and scaling it by
    10**decimals adds as little again, so unless the scaled value lies within a billionth
    (relative) of a tie ``k + 1/2`` it rounds as the exact value does. Near a tie, or for
    very large numbers, None: the caller decides exactly.
    """
    if decimals > 15:
        return None
    f = float(x)
    t = abs(f) * 10.0**decimals
    if not t < _FAST_LIMIT:
        return None
    whole = math.floor(t)
    rest = t - whole  # exact: t and whole are doubles below 2**52
    if abs(rest - 0.5) <= 1e-9 * max(1.0, t):
        return None
    digits = str(whole + 1 if rest > 0.5 else whole)
    if decimals:
        digits = digits.rjust(decimals + 1, "0")
        digits = digits[:-decimals] + "." + digits[-decimals:]
    return "-" + digits if f < 0 and set(digits) - {"0", "."} else digits


def _rounded(x: Ex, decimals: int) -> str:
    if x.is_neg_inf:
        return MASKED
    fast = _rounded_fast(x, decimals)
    return fast if fast is not None else _rounded_exactly(x, decimals)


def _rounded_exactly(x: Ex, decimals: int) -> str:
    """Half-up rounding decided on the exact rational or the 45-digit decimal of the value
    (an exact tie is recognised from the canonical form)."""
    fr = x.frac
    value = None
    if fr is None:
        value = _decimal_of(x)
        if _near_grid(value, decimals, _HALF):  # (nearly) a tie: is it exactly one?
            fr = _exact_rational(x)
    if fr is not None:
        whole = scaled_half_up(fr, decimals)
        with localcontext() as ctx:  # every digit of a long number (28 by default)
            ctx.prec = max(ctx.prec, len(str(abs(whole))) + 2)
            d = Decimal(whole).scaleb(-decimals)
    else:
        assert value is not None
        with localcontext() as ctx:  # e.g. exp(92) has 40 digits before the point
            ctx.prec = max(ctx.prec, value.adjusted() + decimals + 2)
            d = quantize_half_up(value, decimals)
    text = f"{d:.{decimals}f}"
    if text.startswith("-") and set(text[1:]) <= {"0", "."}:
        text = text[1:]
    return text


def to_float(x: Ex) -> float | str:
    """The JSON value of a cell: a float, or the string "-inf" for a masked score."""
    if x._neg_inf:
        return MASKED
    f = x._float
    if f is None:
        f = x._float = float(x.val)
    return f


def matrix_floats(m: Matrix) -> list[list[float | str]]:
    """A matrix as JSON floats."""
    return [[to_float(x) for x in row] for row in m]


def matrix_exact(m: Matrix) -> list[list[str]]:
    """A matrix as SymPy-parsable strings."""
    return [[text(x) for x in row] for row in m]
