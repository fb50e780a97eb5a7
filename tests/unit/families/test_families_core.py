"""The core families against values computed independently, by hand or with the math module.

A behaviour across modules, not one module's tests (families)."""

from __future__ import annotations

import math

import pytest

from tests.oracles import softmax
from worksheetgen.families import get_family


def solve(family: str, given: dict, decimals: int = 2):
    return get_family(family).solve(given, decimals, "test")


def test_softmax_reproduces_the_note_worked_example():
    sol = solve("softmax", {"S": [[2, 0], [0, 2]], "d_k": 2, "causal": False, "T": 2})
    assert sol.answer("scaled").rounded == [["1.41", "0.00"], ["0.00", "1.41"]]
    assert sol.answer("A").rounded == [["0.80", "0.20"], ["0.20", "0.80"]]
    hand = math.exp(math.sqrt(2)) / (1 + math.exp(math.sqrt(2)))
    assert sol.answer("A").value[0][0] == pytest.approx(hand, abs=1e-15)
    assert sol.answer("A").exact[0][0] == "exp(sqrt(2))/(1 + exp(sqrt(2)))"


def test_softmax_three_tokens_matches_an_independent_softmax():
    s = [[1, 0, 3], [2, 2, 0], [0, 1, 1]]
    sol = solve("softmax", {"S": s, "d_k": 4, "causal": False, "T": 3}, decimals=4)
    for row, got in zip(s, sol.answer("A").value, strict=True):
        assert got == pytest.approx(softmax([x / 2 for x in row]), abs=1e-12)
    assert sol.answer("scaled").rounded[0] == ["0.5000", "0.0000", "1.5000"]


def test_causal_masks_the_future_with_minus_infinity_not_zero():
    sol = solve("causal", {"S": [[2, 0], [0, 2]], "d_k": 2, "causal": True, "T": 2})
    assert sol.answer("masked").rounded == [["1.41", "-inf"], ["0.00", "1.41"]]
    assert sol.answer("masked").value[0][1] == "-inf"
    assert sol.answer("A").rounded[0] == ["1.00", "0.00"]
    assert sol.answer("A").value[0] == [1.0, 0.0]


def test_causal_on_prescaled_scores_matches_the_note_practice_item():
    sol = solve("causal", {"scaled": [[1, 3], [0, 1]], "causal": True, "T": 2})
    assert sol.answer("masked").rounded == [["1", "-inf"], ["0", "1"]]  # whole numbers stay whole
    assert sol.answer("A").rounded == [["1.00", "0.00"], ["0.27", "0.73"]]
    assert sol.answer("A").value[1][0] == pytest.approx(1 / (1 + math.e), abs=1e-15)
    assert [a.name for a in sol.answers] == ["masked", "A"]


def test_scaling_without_the_scale_is_more_peaked_as_in_the_note():
    sol = solve("scaling", {"row": [2, 0], "d_k": 2, "n": 2})
    assert sol.answer("A_unscaled").rounded == ["0.88", "0.12"]
    assert sol.answer("A").rounded == ["0.80", "0.20"]
    assert sol.answer("peaked").value == "without the scale"
    assert sol.answer("largest_change").value == "it lost probability"


def test_scaling_practice_row_zero_two():
    sol = solve("scaling", {"row": [0, 2], "d_k": 2, "n": 2})
    assert sol.answer("A_unscaled").rounded == ["0.12", "0.88"]
    assert sol.answer("A").rounded == ["0.20", "0.80"]


@pytest.mark.parametrize(("d", "h", "d_k"), [(4, 2, 2), (512, 8, 64), (768, 12, 64)])
def test_heads_give_head_width_concat_width_and_wo_shape(d: int, h: int, d_k: int):
    sol = solve("heads", {"d": d, "h": h})
    assert sol.answer("d_k").value == d_k
    assert sol.answer("concat_width").value == d
    assert sol.answer("W_O_shape").value == [d, d]


def test_lab3_identity_practice_item():
    eye = [[1, 0], [0, 1]]
    sol = solve("lab3", {"Q": eye, "K": eye, "V": eye, "T": 2, "d_k": 2, "causal": False})
    w = softmax([1 / math.sqrt(2), 0.0])
    assert sol.answer("A").value[0] == pytest.approx(w, abs=1e-12)
    # V = I, so AV = A
    assert sol.answer("output").rounded == sol.answer("A").rounded
    assert sol.answer("A").rounded[0] == ["0.67", "0.33"]


def test_lab3_four_tokens_causal_against_hand_arithmetic():
    q = [[1, 0], [0, 1], [1, 1], [0, 0]]
    k = [[1, 0], [0, 1], [1, 1], [1, 0]]
    v = [[1, 0], [0, 2], [3, 1], [2, 2]]
    sol = solve("lab3", {"Q": q, "K": k, "V": v, "T": 4, "d_k": 2, "causal": True}, 3)
    scores = [[sum(a * b for a, b in zip(qi, kj, strict=True)) for kj in k] for qi in q]
    assert sol.answer("scores").value == scores
    for i, row in enumerate(scores):
        masked = [x / math.sqrt(2) if j <= i else -math.inf for j, x in enumerate(row)]
        w = softmax(masked)
        assert sol.answer("A").value[i] == pytest.approx(w, abs=1e-12)
        out = [sum(w[j] * v[j][c] for j in range(4)) for c in range(2)]
        assert sol.answer("output").value[i] == pytest.approx(out, abs=1e-12)
    assert sol.answer("masked").value[0][1:] == ["-inf", "-inf", "-inf"]


def test_key_steps_show_the_worked_example_tables():
    sol = solve("softmax", {"S": [[2, 0], [0, 2]], "d_k": 2, "causal": False, "T": 2})
    text = "\n".join(s.math for s in sol.steps)
    assert r"\frac{S}{\sqrt{2}}" in text
    assert "4.11" in text  # e^sqrt(2) = 4.113..., the exponential step
    assert "5.11" in text  # its row sum
