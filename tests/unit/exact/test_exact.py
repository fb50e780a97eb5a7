"""Exact values and half-up rounding."""

from __future__ import annotations

import math

import pytest
import sympy as sp

from worksheetgen.exact import number as ex


@pytest.mark.parametrize(
    ("value", "decimals", "printed"),
    [
        ("0.125", 2, "0.13"),
        ("-0.125", 2, "-0.13"),
        ("0.5", 0, "1"),
        ("2.5", 0, "3"),
        ("-0.001", 2, "0.00"),
        ("1", 2, "1.00"),
        ("0.3333", 3, "0.333"),
    ],
)
def test_rounded_is_half_up_from_the_exact_rational(value: str, decimals: int, printed: str):
    assert ex.rounded(ex.number(value), decimals) == printed


def test_rounded_irrational_uses_the_exact_value_not_a_float():
    # e^sqrt(2) / (1 + e^sqrt(2)) = 0.8044296825...
    e = ex.exp(ex.div(ex.integer(2), ex.sqrt_int(2)))
    a = ex.div(e, ex.add([e, ex.ONE]))
    assert ex.rounded(a, 2) == "0.80"
    assert ex.rounded(a, 6) == "0.804430"
    assert abs(float(a) - math.exp(math.sqrt(2)) / (1 + math.exp(math.sqrt(2)))) < 1e-15


def test_exact_text_is_sympy_parsable_and_matches_the_note_form():
    e = ex.exp(ex.div(ex.integer(2), ex.sqrt_int(2)))
    a = ex.div(e, ex.add([e, ex.ONE]))
    text = ex.exact_text(a.expr)
    assert text == "exp(sqrt(2))/(1 + exp(sqrt(2)))"
    assert sp.sympify(text) == a.expr


def test_masked_cell_is_minus_infinity_and_its_exponential_exactly_zero():
    assert ex.rounded(ex.NEG_INF, 2) == "-inf"
    assert ex.to_float(ex.NEG_INF) == "-inf"
    assert ex.exp(ex.NEG_INF).expr == 0


def test_matmul_multiplies_exactly():
    a = ex.from_ints([[1, 2], [3, 4]])
    b = ex.from_ints([[0, 1], [1, 0]])
    assert [[x.expr for x in r] for r in ex.matmul(a, b)] == [[2, 1], [4, 3]]


def test_given_decimals_print_without_exponents():
    from worksheetgen.exact.mathtex import ints

    assert ints([[1e-05, 2.0, 3, 0.1, -1.5e-07]]) == [["0.00001", "2", "3", "0.1", "-0.00000015"]]
