"""The small math builders the templates print answers with."""

from __future__ import annotations

import pytest

from worksheetgen.exact.mathtex import bmatrix, value_math


def test_a_small_matrix_is_a_bracketed_smallmatrix_with_minus_infinity_typeset():
    rows = [["0.50", "-inf"], ["0.25", "0.75"]]
    assert value_math(rows, "matrix", small=True) == (
        r"\left[\begin{smallmatrix} 0.50 & -\infty \\ 0.25 & 0.75 \end{smallmatrix}\right]"
    )
    assert value_math(rows, "matrix") == bmatrix(rows)


@pytest.mark.parametrize(
    ("printed", "kind", "math"),
    [
        (["0.27", "0.73"], "vector", r"\left[0.27,\ 0.73\right]"),
        (["4", "8"], "shape", r"4 \times 8"),
        ("0.62", "scalar", "0.62"),
    ],
)
def test_vectors_shapes_and_numbers_print_as_their_own_math(printed, kind, math):
    assert value_math(printed, kind) == math


@pytest.mark.parametrize(
    ("printed", "value", "sign"),
    [
        ([["0.50", "-inf"], ["0.25", "0.75"]], [[0.5, "-inf"], [0.25, 0.75]], "="),
        ([["0.18", "0.82"], ["0.50", "0.50"]], [[0.1824, 0.8176], [0.5, 0.5]], r"\approx"),
        ([["3", "5"], ["2", "0"]], [[3.0, 5.0], [2.0, 0.0]], "="),
        ([["0.00", "-inf"]], [["-inf", "-inf"]], r"\approx"),  # a masked cell printed as 0
        ([["-inf", "1"]], [[0.0, 1.0]], r"\approx"),
        (["0.27", "0.73"], [0.2689, 0.7311], r"\approx"),
        ("1", 0.73, r"\approx"),  # 0.73 printed as 1 at no decimals is rounded
        ("0.5", 0.5, "="),
    ],
)
def test_the_key_says_equals_only_where_every_printed_entry_is_its_value(printed, value, sign):
    from worksheetgen.render.documents import relation

    assert relation(printed, value) == sign


def test_a_printed_answer_of_another_shape_than_its_value_is_a_bug():
    from worksheetgen.render.documents import relation

    with pytest.raises(ValueError):
        relation([["1", "2"]], [[1.0]])
