"""Reference calculations the tests check the package against, written once.

Each is written independently of ``worksheetgen`` (plain Python floats, ``Decimal`` and
``Fraction``; no NumPy), so that a test comparing the package with one of these compares two
separate workings of the same arithmetic, not the package with itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction


def softmax(row: Sequence[float]) -> list[float]:
    """The softmax of one row of floats; a masked entry (−∞) gets weight 0."""
    top = max(x for x in row if x != -math.inf)
    e = [0.0 if x == -math.inf else math.exp(x - top) for x in row]
    total = sum(e)
    return [x / total for x in e]


def softmax_rows(rows: Sequence[Sequence[float]]) -> list[list[float]]:
    """The softmax of each row of a table (each query's weights over the keys)."""
    return [softmax(row) for row in rows]


def half_up(value: Decimal | float | int | str, decimals: int) -> Decimal:
    """``value`` rounded half-up (a tie away from zero) to ``decimals`` digits, decided in
    ``Decimal`` on its decimal text (a float by its shortest repr, as a person reads it)."""
    if isinstance(value, Decimal):
        d = value
    else:
        d = Decimal(repr(value) if isinstance(value, float) else str(value))
    with localcontext() as ctx:  # every digit of the rounded result, however long
        ctx.prec = max(ctx.prec, d.adjusted() + decimals + 5)
        return d.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def half_up_float(x: float, decimals: int) -> float:
    """:func:`half_up` as a float; ±∞ (a masked cell) stays as it is."""
    return x if not math.isfinite(x) else float(half_up(x, decimals))


def half_unit(decimals: int) -> Fraction:
    """Half a unit of the last of ``decimals`` printed digits, exactly."""
    return Fraction(1, 2 * 10**decimals)
