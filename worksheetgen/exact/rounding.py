"""Half-up rounding and half a unit of the last printed digit: the one home of both.

A value printed to ``decimals`` digits stands for every number within half a unit of its last
digit, so half a unit is the narrowest tolerance and the gap two printed values need to be
told apart. Rounding is half-up (away from zero on a tie), as a student rounds by hand.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

#: the floating-point slack allowed on top of a tolerance (absolute, or relative as
#: ``tolerance * (1 + SLACK)``): doubles a hair past the bound are still inside it
SLACK = 1e-9


def half_unit(decimals: int) -> float:
    """Half a unit of the last printed digit: the tolerance of a value printed to ``decimals``."""
    return 0.5 * 10.0 ** (-decimals)


def half_unit_exact(decimals: int) -> Fraction:
    """Half a unit of the last printed digit, exactly (1/2·10^-decimals)."""
    return Fraction(1, 2 * 10**decimals)


def scaled_half_up(value: Fraction, decimals: int) -> int:
    """``value``·10^decimals rounded half-up to a whole number (a tie goes away from zero)."""
    scaled = value * 10**decimals
    sign = -1 if scaled < 0 else 1
    return (abs(scaled) + Fraction(1, 2)).__floor__() * sign


def quantize_half_up(value: Decimal, decimals: int) -> Decimal:
    """``value`` rounded half-up to ``decimals`` digits (in the caller's decimal context)."""
    return value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def float_half_up(value: float, decimals: int) -> float:
    """A double rounded half-up to ``decimals`` digits, on doubles (good enough to bound a
    tolerance; never for a printed answer, which :mod:`worksheetgen.exact.number` rounds
    exactly)."""
    scale = 10.0**decimals
    if value < 0:
        return -(math.floor(-value * scale + 0.5) / scale)
    return math.floor(value * scale + 0.5) / scale
