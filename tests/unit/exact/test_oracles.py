"""The shared oracles agree with hand-worked values, and the package's one rounding, half
unit and float softmax agree with them.

A behaviour across modules, not one module's tests (attention.compute, exact)."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tests.oracles import half_unit, half_up, half_up_float, softmax, softmax_rows
from worksheetgen.attention.compute import softmax_float
from worksheetgen.exact import rounding


def test_softmax_of_one_and_zero_is_e_over_one_plus_e_and_a_masked_entry_gets_nothing():
    assert softmax([1.0, 0.0]) == [math.e / (1 + math.e), 1 / (1 + math.e)]
    assert softmax([-math.inf, 1.0]) == [0.0, 1.0]
    assert softmax_rows([[0.0, 0.0], [2.0, 2.0]]) == [[0.5, 0.5], [0.5, 0.5]]


def test_half_up_rounds_a_tie_away_from_zero_as_the_digits_read():
    assert half_up(0.125, 2) == Decimal("0.13")
    assert half_up(-0.125, 2) == Decimal("-0.13")
    assert half_up(2.675, 2) == Decimal("2.68")  # the double is below 2.675; a person is not
    assert half_up("12345678901234567890.5", 0) == Decimal("12345678901234567891")
    assert half_up_float(-math.inf, 2) == -math.inf
    assert half_unit(2) == Fraction(1, 200)


@given(st.fractions(min_value=-1000, max_value=1000, max_denominator=10**6), st.integers(0, 6))
def test_the_package_rounds_a_fraction_half_up_as_the_oracle_does(value, decimals):
    # 28 digits of the quotient: far nearer the value than any of these is to a tie
    approx = Decimal(value.numerator) / Decimal(value.denominator)
    got = Decimal(rounding.scaled_half_up(value, decimals)).scaleb(-decimals)
    assert got == half_up(approx, decimals)


@given(st.fractions(min_value=-1000, max_value=1000), st.integers(0, 6))
def test_an_exact_tie_rounds_away_from_zero_in_the_package_as_in_the_oracle(whole, decimals):
    tie = Fraction(int(whole * 10**decimals), 10**decimals) + half_unit(decimals)
    want = half_up(Decimal(tie.numerator) / Decimal(tie.denominator), decimals)
    assert Decimal(rounding.scaled_half_up(tie, decimals)).scaleb(-decimals) == want


def test_the_half_unit_is_the_oracles_half_unit():
    for decimals in range(8):
        assert rounding.half_unit_exact(decimals) == half_unit(decimals)
        assert rounding.half_unit(decimals) == float(half_unit(decimals))


@given(st.lists(st.lists(st.floats(-30, 30), min_size=3, max_size=3), min_size=1, max_size=4))
def test_the_float_softmax_is_the_oracles_softmax(rows):
    got = softmax_float(np.array(rows))
    assert np.allclose(got, softmax_rows(rows), rtol=1e-12, atol=1e-15)
