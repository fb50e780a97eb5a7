"""``sympy.sstr`` for the rare exact value whose shape ``worksheetgen.exact.canon`` does not know.

Imported only when such a value is printed (it imports SymPy).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import sympy as sp
from sympy.core.numbers import Number, NumberSymbol
from sympy.printing.str import StrPrinter

_MEMO_LIMIT = 1 << 17

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
                if (
                    len(factors) == 2
                    and isinstance(factors[0], Number)
                    and args[0].is_positive
                    and factors[0].is_negative
                ):
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


def weight_parts(e: sp.Expr) -> tuple[sp.Expr, sp.Expr | None]:
    """(numerator, denominator) of one softmax weight, read from its structure.

    A weight is ``e * total**-1`` (SymPy's form of ``e / total``), ``total**-1`` when e = 1,
    a rational when every exponential of the row is 1, 1 when the row has one live key, or
    exactly 0 for a masked key (denominator None: it adds nothing to the row). Unlike
    ``sympy.fraction`` this never moves ``exp(-x)`` into the denominator.
    """
    if e == sp.S.Zero:
        return sp.S.Zero, None
    if e.is_Rational:
        return sp.Integer(e.p), sp.Integer(e.q)
    if e.is_Pow and e.exp == -1:
        return sp.S.One, e.base
    if e.is_Mul:
        dens = [f.base for f in e.args if f.is_Pow and f.exp == -1]
        nums = [f for f in e.args if not (f.is_Pow and f.exp == -1)]
        if len(dens) == 1:
            return sp.Mul(*nums), dens[0]
    return e, sp.S.One


def sums_to_one(row: Sequence[sp.Expr]) -> bool:
    """True when a row of softmax weights sums to exactly 1, checked on its structure.

    Every live weight must have the same denominator, and the ``Add`` of the numerators must
    be that very expression (SymPy keeps sums in canonical order, so this is a structural
    comparison, not a simplification).
    """
    parts = [weight_parts(w) for w in row]
    dens = {d for _, d in parts if d is not None}
    if len(dens) != 1:
        return False
    (den,) = dens
    return bool(sp.Add(*[n for n, d in parts if d is not None]) == den)
