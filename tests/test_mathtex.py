"""The small math builders the templates print answers with."""

from __future__ import annotations

import pytest

from worksheetgen.mathtex import bmatrix, value_math


def test_a_small_matrix_is_a_bracketed_smallmatrix_with_minus_infinity_typeset():
    rows = [["0.50", "-inf"], ["0.25", "0.75"]]
    assert value_math(rows, "matrix", small=True) == (
        r"\left[\begin{smallmatrix} 0.50 & -\infty \\ 0.25 & 0.75 \end{smallmatrix}\right]")
    assert value_math(rows, "matrix") == bmatrix(rows)


@pytest.mark.parametrize(("printed", "kind", "math"), [
    (["0.27", "0.73"], "vector", r"\left[0.27,\ 0.73\right]"),
    (["4", "8"], "shape", r"4 \times 8"),
    ("0.62", "scalar", "0.62"),
])
def test_vectors_shapes_and_numbers_print_as_their_own_math(printed, kind, math):
    assert value_math(printed, kind) == math
