"""The note-3.2 families against values worked out by hand (or with the math module), their
bank validation errors, and a build of banks/note.yaml.

Every expected number here is computed independently of the package: by hand for integer
products and counts, with ``math.exp`` for softmax entries.

A behaviour across modules, not one module's tests (attention, attention.compute, bank.load,
errors, families, pipeline.build, pipeline.sheet).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, needs_tex
from tests.solved import make_build
from worksheetgen.attention import slips as mc
from worksheetgen.attention.compute import CORRECT, flipped
from worksheetgen.bank.load import load_banks
from worksheetgen.errors import BankError
from worksheetgen.families import FAMILIES, get_family
from worksheetgen.pipeline.build import BuildOptions, build

R2 = math.sqrt(2)


def solve(family: str, given: dict, decimals: int = 2):
    return get_family(family).solve(given, decimals, "test")


def only_item(write_bank, body: str, seed: int = 1):
    """Load a one-question bank and return its drawn, solved item."""
    bank = load_banks([write_bank("questions:\n" + body)])
    return make_build(bank, seed).sheets[0].items[0]


def bank_error(write_bank, body: str) -> str:
    with pytest.raises(BankError) as info:
        load_banks([write_bank("questions:\n" + body)])
    return str(info.value)


PROJ = """\
  - id: p
    family: projections
    params:
      X: [[1, 0], [0, 1], [1, 1]]
      W_Q: [[1, 0], [0, 1]]
      W_K: [[0, 1], [1, 0]]
      W_V: [[1], [2]]
      output: true
"""


def test_projections_compute_q_k_v_and_scores_by_hand(write_bank):
    item = only_item(write_bank, PROJ)
    sol = item.solution
    # Q = X I = X; W_K swaps the two columns; W_V = [1, 2]^T gives x1 + 2 x2
    assert sol.answer("Q").value == [[1, 0], [0, 1], [1, 1]]
    assert sol.answer("K").value == [[0, 1], [1, 0], [1, 1]]
    assert sol.answer("V").value == [[1], [2], [3]]
    assert sol.answer("scores").value == [[0, 1, 1], [1, 0, 1], [1, 1, 2]]
    assert sol.answer("scores").rounded[2] == ["1", "1", "2"]
    e = math.exp(1 / R2)
    assert sol.answer("A").value[0] == pytest.approx(
        [1 / (1 + 2 * e), e / (1 + 2 * e), e / (1 + 2 * e)], abs=1e-12
    )
    assert sol.answer("A").rounded[0] == ["0.20", "0.40", "0.40"]
    out = (1 + 2 * e + 3 * e) / (1 + 2 * e)
    assert sol.answer("output").value[0][0] == pytest.approx(out, abs=1e-12)
    assert sol.answer("output").rounded[0] == ["2.20"]
    assert [p.answer for p in sol.parts] == ["Q", "K", "V", "scores", "scaled", "A", "output"]
    assert item.given["d_k"] == 2 and item.given["d_v"] == 1


def test_projections_without_scale_ask_only_q_k_v_and_scores():
    given = {
        "X": [[2, 1]],
        "W_Q": [[1], [1]],
        "W_K": [[1], [-1]],
        "W_V": [[0], [1]],
        "T": 1,
        "d": 2,
        "d_k": 1,
        "d_v": 1,
        "scale": False,
        "softmax": False,
        "output": False,
    }
    sol = solve("projections", given)
    assert [a.name for a in sol.answers] == ["Q", "K", "V", "scores"]
    assert sol.answer("scores").value == [[3]]  # (2 + 1) * (2 - 1)
    fam = get_family("projections")
    assert fam.target_for(given) == "scores"
    assert fam.slips_for(given) == ("no-transpose",)  # the only slip of the scores


def test_projections_scale_slip_changes_the_scaled_scores():
    given = {
        "X": [[1, 0], [0, 1]],
        "W_Q": [[2, 0], [0, 2]],
        "W_K": [[1, 0], [0, 1]],
        "W_V": [[1, 0], [0, 1]],
        "T": 2,
        "d": 2,
        "d_k": 2,
        "d_v": 2,
        "scale": True,
        "softmax": False,
        "output": False,
    }
    fam = get_family("projections")
    right = fam.evaluate(given, CORRECT)["scaled"]
    by_dk = fam.evaluate(given, flipped(scale="dk"))["scaled"]
    assert float(right[0][0]) == pytest.approx(2 / R2)  # Q K^T = 2I, over sqrt 2
    assert float(by_dk[0][0]) == pytest.approx(1.0)
    assert fam.slips_for(given) == ("no-transpose", "scale-by-dk", "no-scale")


@pytest.mark.parametrize(
    "params, expected",
    [
        (
            "X: [[1, 0], [0, 1]]\n      W_Q: [[1], [0], [0]]",
            "questions[0].params.W_Q: expected W_Q with 2 rows (d = 2 from X), got 3",
        ),
        (
            "X: [[1, 0], [0, 1]]\n      d: 3",
            "questions[0].params.d: expected d = 2 (the shape of the pinned X) or no d, got 3",
        ),
        (
            "x_low: 2\n      x_high: 0",
            "questions[0].params.x_high: expected x_high >= x_low (2), got 0",
        ),
        ("X: [[1, 2, 3]]", "questions[0].params.X: expected X with 2 to 4 rows (tokens), got 1"),
        ("T: 5", "questions[0].params.T: expected an integer from 2 to 4, got 5"),
        (
            "X: [[3, 3], [3, 3]]\n      W_Q: [[3, 3], [3, 3]]\n      W_K: [[3, 3], [3, 3]]\n"
            "      W_V: [[1], [1]]\n      softmax: true",
            "questions[0].params.X: expected scores QK^T of at most 24 in size when the scale, "
            "softmax or output is asked (e^x by hand), got 648",
        ),  # q = k = [18, 18]: 2 * 18 * 18
        (
            "X: [[3, 3], [3, 3]]\n      W_Q: [[3, 3], [3, 3]]\n      W_K: [[3, 3], [3, 3]]\n"
            "      W_V: [[1], [1]]\n      scale: true",
            "questions[0].params.X: expected scores QK^T of at most 24 in size when the scale, "
            "softmax or output is asked (e^x by hand), got 648",
        ),
    ],
)
def test_projections_reject_bad_parameters(write_bank, params, expected):
    msg = bank_error(
        write_bank, f"  - id: p\n    family: projections\n    params:\n      {params}\n"
    )
    assert expected in msg


PINNED_QKV = "Q: [[1, 0], [0, 1]]\n      K: [[1, 0], [0, 1]]\n      V: [[1, 0], [0, 1]]"


@pytest.mark.parametrize(
    "family, params, expected",
    [
        # these built silently with the pinned matrix's size (a key dividing by sqrt 2, not 3)
        (
            "lab3",
            f"{PINNED_QKV}\n      d_k: 3",
            "params.d_k: expected d_k = 2 (the shape of the pinned Q) or no d_k, got 3",
        ),
        (
            "lab3",
            f"{PINNED_QKV}\n      T: 4",
            "params.T: expected T = 2 (the shape of the pinned Q) or no T, got 4",
        ),
        (
            "softmax",
            "S: [[1, 0], [0, 1]]\n      T: 3",
            "params.T: expected T = 2 (the shape of the pinned S) or no T, got 3",
        ),
        (
            "causal",
            "S: [[1, 0], [0, 1]]\n      T: {min: 3, max: 4}",
            "params.T: expected T = 2 (the shape of the pinned S) or no T, got 3, 4",
        ),
        (
            "scaling",
            "row: [[2, 0]]\n      n: 3",
            "params.n: expected n = 2 (the shape of the pinned row) or no n, got 3",
        ),
        (
            "cross",
            "Q: [[1, 0], [0, 1]]\n      K: [[1, 0], [0, 1], [1, 1]]\n"
            "      V: [[1, 0, 1], [0, 1, 0], [1, 1, 1]]\n      T_q: 3",
            "params.T_q: expected T_q = 2 (the shape of the pinned Q) or no T_q, got 3",
        ),
        (
            "cross",
            "Q: [[1, 0], [0, 1]]\n      K: [[1, 0], [0, 1], [1, 1]]\n"
            "      V: [[1, 0, 1], [0, 1, 0], [1, 1, 1]]\n      d_v: 2",
            "params.d_v: expected d_v = 3 (the shape of the pinned V) or no d_v, got 2",
        ),
        (
            "identical-keys",
            "Q: [[1, 0], [0, 1], [1, 1]]\n      K: [[1, 0], [0, 1], [1, 0]]\n      T: 4",
            "params.T: expected T = 3 (the shape of the pinned Q) or no T, got 4",
        ),
    ],
)
def test_a_dimension_that_disagrees_with_a_pinned_matrix_is_refused(
    write_bank, family, params, expected
):
    msg = bank_error(write_bank, f"  - id: p\n    family: {family}\n    params:\n      {params}\n")
    assert expected in msg


def test_a_dimension_that_agrees_with_a_pinned_matrix_is_accepted(write_bank):
    item = only_item(
        write_bank,
        f"  - id: p\n    family: lab3\n    params:\n      {PINNED_QKV}"
        "\n      T: 2\n      d_k: 2\n      d_v: 2\n",
    )
    assert item.given["d_k"] == 2


def test_projections_that_can_only_draw_zero_tokens_fail_with_a_clear_error(write_bank):
    from worksheetgen.errors import DrawError

    with pytest.raises(DrawError) as info:
        only_item(
            write_bank,
            "  - id: p\n    family: projections\n    params:\n      x_low: 0\n      x_high: 0\n",
        )
    assert "could not draw X (no all-zero token)" in str(info.value)
    assert "change x_low..x_high" in str(info.value)


CROSS = """\
  - id: c
    family: cross
    params:
      Q: [[1, 0]]
      K: [[1, 0], [0, 1]]
      V: [[1, 0, 0], [0, 1, 0]]
"""


def test_cross_attention_sources_shapes_and_weights(write_bank):
    sol = only_item(write_bank, CROSS).solution
    assert sol.answer("Q_source").value == "the decoder's target tokens"
    assert sol.answer("K_source").value == "the encoder's source tokens"
    assert sol.answer("V_source").value == "the encoder's source tokens"
    assert sol.answer("self_source").value.startswith("all three from the decoder")
    assert sol.answer("A_shape").value == [1, 2]  # T_q x T_k
    assert sol.answer("output_shape").value == [1, 3]  # T_q x d_v
    e = math.exp(1 / R2)
    assert sol.answer("A").value[0] == pytest.approx([e / (e + 1), 1 / (e + 1)], abs=1e-12)
    assert sol.answer("A").rounded == [["0.67", "0.33"]]
    assert sol.answer("output").rounded == [["0.67", "0.33", "0.00"]]


def test_cross_attention_shapes_for_large_sequences():
    given = {"T_q": 7, "T_k": 12, "d_k": 64, "d_v": 32, "numeric": False}
    sol = solve("cross", given)
    assert sol.answer("A_shape").value == [7, 12]
    assert sol.answer("output_shape").value == [7, 32]
    assert get_family("cross").slips_for(given) == ()


@pytest.mark.parametrize(
    "params, expected",
    [
        ("T_q: 3\n      T_k: 3", "questions[0].params.T_k: expected T_k different from T_q = 3"),
        (
            "numeric: true\n      T_k: 8",
            "questions[0].params.T_k: expected T_k from 2 to 4 when numeric is true (hand work), "
            "got up to 8",
        ),
        (
            "numeric: true\n      T_k: 1\n      T_q: 2",
            "questions[0].params.T_k: expected T_k from 2 to 4 when numeric is true "
            "(with one source "
            "token every weight is 1), got 1",
        ),
        (
            "numeric: true\n      T_k: {min: 1, max: 3}",
            "questions[0].params.T_k: expected T_k from 2 to 4 when numeric is true",
        ),
        ("Q: [[1, 0]]", "questions[0].params: expected Q, K and V pinned together, got only Q"),
        (
            "Q: [[1, 0], [0, 1]]\n      K: [[1, 0], [0, 1]]\n      V: [[1], [2]]",
            "expected K with a number of rows (T_k) different from Q's (T_q = 2)",
        ),
    ],
)
def test_cross_rejects_bad_parameters(write_bank, params, expected):
    msg = bank_error(write_bank, f"  - id: c\n    family: cross\n    params:\n      {params}\n")
    assert expected in msg


IDENT = """\
  - id: i
    family: identical-keys
    params:
      Q: [[1, 0], [0, 2], [1, 1]]
      K: [[1, 0], [0, 1], [1, 0]]
"""


def test_identical_keys_get_equal_columns_of_a(write_bank):
    item = only_item(write_bank, IDENT)
    sol = item.solution
    assert item.given["pair"] == [1, 3]
    assert sol.answer("scores").value == [[1, 0, 1], [0, 2, 0], [1, 1, 1]]
    e1, e2 = math.exp(1 / R2), math.exp(R2)
    a = sol.answer("A").value
    assert a[0] == pytest.approx([e1 / (2 * e1 + 1), 1 / (2 * e1 + 1), e1 / (2 * e1 + 1)])
    assert a[1] == pytest.approx([1 / (2 + e2), e2 / (2 + e2), 1 / (2 + e2)])
    assert a[2] == pytest.approx([1 / 3] * 3)
    assert sol.answer("A").rounded == [
        ["0.40", "0.20", "0.40"],
        ["0.16", "0.67", "0.16"],
        ["0.33", "0.33", "0.33"],
    ]
    exact = sol.answer("A").exact
    assert all(row[0] == row[2] for row in exact)  # the same exact expression, not just close
    assert sol.answer("equal_pair").value == "keys 1 and 3"
    assert "not a tie-break bug" in sol.answer("explain").value
    # the explain part follows "which two keys?": it must not name them
    explain = next(p for p in sol.parts if p.answer == "explain")
    assert "keys 1 and 3" not in explain.prompt and "those two keys" in explain.prompt


def test_identical_keys_explain_only_has_a_model_answer():
    sol = solve(
        "identical-keys", {"T": 4, "d_k": 2, "pair": [2, 4], "numeric": False, "explain": True}
    )
    assert [a.name for a in sol.answers] == ["equal_weights", "explain"]
    assert sol.answer("equal_weights").value == "equal for every query"
    assert "$q \\cdot k_2 = q \\cdot k_4$" in sol.answer("explain").value


@pytest.mark.parametrize(
    "params, expected",
    [
        (
            "Q: [[1, 0], [0, 1], [1, 1]]\n      K: [[1, 0], [0, 1], [2, 2]]",
            "expected exactly two equal rows in K (the identical keys), got no equal rows",
        ),
        (
            "Q: [[1, 0], [0, 1], [1, 1]]\n      K: [[1, 0], [1, 0], [1, 0]]",
            "got rows 1 and 2; rows 1 and 3; rows 2 and 3",
        ),
        (
            "numeric: false\n      explain: false",
            "questions[0].params.explain: expected numeric or explain (or both) to be true",
        ),
    ],
)
def test_identical_keys_reject_bad_parameters(write_bank, params, expected):
    msg = bank_error(
        write_bank, f"  - id: i\n    family: identical-keys\n    params:\n      {params}\n"
    )
    assert expected in msg


def test_scale_effect_reproduces_the_note_practice_row():
    sol = solve(
        "scale-effect", {"row": [0, 2], "d_k": 2, "n": 2, "softmax": True, "variance": True}
    )
    assert sol.answer("A_unscaled").rounded == ["0.12", "0.88"]
    assert sol.answer("A").value[1] == pytest.approx(math.exp(R2) / (1 + math.exp(R2)))
    assert sol.answer("A").rounded == ["0.20", "0.80"]
    assert sol.answer("largest_change").value == "it lost probability"
    assert sol.answer("var_qk").value == 2
    assert sol.answer("var_scaled").value == 1
    assert "variance 1" in sol.answer("why_scale").value


def test_scale_effect_variance_under_the_slips():
    given = {"d_k": 16, "softmax": False, "variance": True}
    fam = get_family("scale-effect")
    assert fam.evaluate(given, CORRECT)["var_scaled"] == 1
    assert float(fam.evaluate(given, flipped(scale="dk"))["var_scaled"]) == 1 / 16
    assert fam.evaluate(given, flipped(scale="none"))["var_scaled"] == 16
    sol = solve("scale-effect", given)
    assert [a.name for a in sol.answers] == ["var_qk", "var_scaled", "large_dk", "why_scale"]
    assert fam.target_for(given) == "var_scaled"


def test_scale_effect_needs_one_part(write_bank):
    msg = bank_error(
        write_bank,
        "  - id: s\n    family: scale-effect\n    params:\n"
        "      softmax: false\n      variance: false\n",
    )
    assert "expected softmax or variance (or both) to be true, got both false" in msg


def test_a_multiple_choice_scale_effect_prompt_says_only_what_it_asks(write_bank):
    """A choice item asks the target alone (the row's softmax): its prompt kept "For the
    variance parts, suppose ..." for parts it does not ask. Without the row, the variance
    item keeps the sentence it needs; an open question keeps both."""
    path = write_bank(
        "sheet: {id: se, title: Scale effect}\nquestions:\n"
        "  - id: open\n    family: scale-effect\n    params: {n: 2, d_k: 4}\n"
        "  - id: row\n    family: scale-effect\n    format: choice\n"
        "    params: {n: 2, d_k: 4}\n"
        "  - id: var\n    family: scale-effect\n    format: choice\n"
        "    params: {n: 2, d_k: 4, softmax: false}\n"
    )
    items = {i.spec.id: i for i in make_build(load_banks([path]), 1).sheets[0].items}
    assert "For the variance parts, suppose" in items["open"].prompt
    assert "variance" not in items["row"].prompt and "raw scores" in items["row"].prompt
    assert [p.answer for p in items["row"].solution.parts] == ["A"]
    assert items["var"].prompt.startswith("Suppose the $d_k = 4$ coordinates")


def test_scaling_family_still_builds_the_practice_bank():
    bank = load_banks([ROOT / "banks" / "practice.yaml"])
    build_ = make_build(bank, 1)
    rows = {i.spec.id: i for i in build_.sheets[0].items}
    assert rows["practice-scale-row"].solution.answer("A_unscaled").rounded == ["0.12", "0.88"]


def mh(d, h, d_v=0, biases=True, head_shape=True):
    return {
        "d": d,
        "h": h,
        "d_v": d_v or d // h,
        "d_v_given": bool(d_v),
        "biases": biases,
        "head_shape": head_shape,
    }


def test_multihead_512_by_8():
    sol = solve("multihead", mh(512, 8))
    assert sol.answer("d_k").value == 64
    assert sol.answer("concat_width").value == 512
    assert sol.answer("W_Q_head_shape").value == [512, 64]
    assert sol.answer("W_O_shape").value == [512, 512]
    assert sol.answer("params").value == 1048576  # 4 * 512^2
    assert sol.answer("params_bias").value == 1050624  # + 4 * 512


def test_multihead_note_example_two_heads_of_width_two():
    sol = solve("multihead", mh(4, 2))
    assert sol.answer("d_k").value == 2
    assert sol.answer("W_O_shape").value == [4, 4]
    assert sol.answer("params").value == 64  # 4 * 4^2
    assert sol.answer("params_bias").value == 80  # + 4 * 4


def test_multihead_with_a_separate_value_width():
    # d = 8, h = 2: W_Q, W_K per head 8 x 4 (32 each), W_V 8 x 2 (16); two heads: 160;
    # W_O is (2 * 2) x 8 = 32 weights: 192. Biases: 2 * (4 + 4 + 2) + 8 = 28.
    given = mh(8, 2, d_v=2)
    sol = solve("multihead", given)
    assert sol.answer("concat_width").value == 4
    assert sol.answer("W_O_shape").value == [4, 8]
    assert sol.answer("params").value == 192
    assert sol.answer("params_bias").value == 220
    fam = get_family("multihead")
    assert fam.slips_for(given) == ("dk-equals-d", "wo-transposed")
    assert fam.evaluate(given, flipped(wo_transposed=True))["W_O_shape"] == (8, 4)
    # with d_v given, dk-equals-d leaves W_O alone and shows in d_k: it is kept, not dropped
    full = fam.evaluate(given, flipped(head_width="d"))
    assert full["W_O_shape"] == (4, 8) and full["d_k"] == 8
    fp = mc.fingerprints(fam, given)
    assert fp is not None and fp.compared == ("W_O_shape", "d_k")
    assert mc.collisions(fp, 2) == []
    assert [s.name for s in fp.slips] == ["dk-equals-d", "wo-transposed"]


def test_multihead_dk_equals_d_slip_gives_every_head_the_full_width():
    fam = get_family("multihead")
    got = fam.evaluate(mh(16, 4), flipped(head_width="d"))
    assert got["d_k"] == 16 and got["W_O_shape"] == (64, 16)
    assert got["params"] == 3 * 4 * 16 * 16 + 64 * 16
    assert fam.slips_for(mh(16, 4)) == ("dk-equals-d",)
    assert fam.slips_for(mh(16, 1)) == ()


@pytest.mark.parametrize(
    "params, expected",
    [
        (
            "d: 8\n      h: 3",
            "questions[0].params.h: expected h to divide d = 8 (d_k = d/h must be a whole number), "
            "got h = 3",
        ),
        (
            "d: {choices: [8, 12, 18]}\n      h: 4",
            "questions[0].params.d: expected every d to be a multiple of h = 4, got 18",
        ),
        (
            "d: 12\n      h: {choices: [2, 5]}",
            "questions[0].params.h: expected every h to divide d = 12, got 5",
        ),
    ],
)
def test_multihead_rejects_heads_that_do_not_divide_d(write_bank, params, expected):
    msg = bank_error(write_bank, f"  - id: m\n    family: multihead\n    params:\n      {params}\n")
    assert expected in msg


def test_cost_counts_scores_per_head_and_in_total():
    sol = solve("cost", {"T": 4, "h": 2, "L": 3, "doubling": True, "causal_count": True})
    assert sol.answer("per_head").value == 16
    assert sol.answer("total").value == 96  # 2 heads * 3 layers * 16
    assert sol.answer("total_doubled").value == 384  # 4 times as many at T = 8
    assert sol.answer("unmasked").value == 10  # 1 + 2 + 3 + 4


def test_cost_for_a_long_sequence():
    sol = solve("cost", {"T": 1024, "h": 12, "L": 12, "doubling": False, "causal_count": False})
    assert sol.answer("per_head").value == 1048576
    assert sol.answer("total").value == 150994944
    assert "1\\,048\\,576" in sol.steps[0].math


HEAT = """\
  - id: h
    family: heatmap
    params:
      A: [[1, 0, 0], [0.3, 0.7, 0], [0.2, 0.5, 0.3]]
      token: 3
"""


def test_heatmap_reads_the_strongest_key_and_sees_a_causal_matrix(write_bank):
    item = only_item(write_bank, HEAT)
    sol = item.solution
    assert sol.answer("top_key").value == 2
    assert sol.answer("is_causal").value.startswith("causal")
    (shown,) = sol.shown
    assert shown.kind == "heatmap"
    assert shown.value["rows"][1] == ["0.30", "0.70", "0.00"]
    fam = get_family("heatmap")
    # reading down column 3 instead of across row 3: the largest entry is query 3's 0.3
    assert fam.evaluate(item.given, flipped(read="column")) == {"top_key": 3}


def test_heatmap_sees_weight_on_a_later_key():
    sol = solve("heatmap", {"T": 2, "A": [[0.5, 0.5], [0.1, 0.9]], "token": 2})
    assert sol.answer("top_key").value == 2
    assert sol.answer("is_causal").value.startswith("not causal")
    assert "query 1 puts weight 0.50 on the later key 2" in sol.answer("is_causal").explanation


def test_heatmap_draws_rows_that_sum_to_one(write_bank):
    for seed in range(5):
        item = only_item(
            write_bank,
            "  - id: h\n    family: heatmap\n    params:\n      T: 5\n      causal: true\n",
            seed=seed,
        )
        a = item.given["A"]
        assert all(sum(row) == pytest.approx(1.0) for row in a)
        assert all(x == 0 for i, row in enumerate(a) for x in row[i + 1 :])
        assert item.given["token"] >= 2


@pytest.mark.parametrize(
    "params, expected",
    [
        (
            "A: [[0.5, 0.4], [0, 1]]",
            "questions[0].params.A: expected every row to sum to 1 (a softmax row), got row 1 "
            "summing to 0.9",
        ),
        ("T: 4\n      token: 5", "questions[0].params.token: expected token from 1 to T = 4"),
        (
            "A: [[0.5, 0.5], [0, 1]]\n      token: 1",
            "expected a token whose row has one largest weight, got token 1, whose row ties",
        ),
        (
            "A: [[1, 0], [0, 1]]\n      causal: true",
            "questions[0].params.causal: expected no causal with a pinned A (A itself gives it), "
            "got true",
        ),
    ],
)
def test_heatmap_rejects_bad_parameters(write_bank, params, expected):
    msg = bank_error(write_bank, f"  - id: h\n    family: heatmap\n    params:\n      {params}\n")
    assert expected in msg


def test_concept_asks_the_named_questions_with_model_answers(write_bank):
    item = only_item(
        write_bank,
        "  - id: k\n    family: concept\n    params:\n      ask: [mask-inf, mix-values]\n",
    )
    sol = item.solution
    assert [a.name for a in sol.answers] == ["mask_inf", "mix_values"]
    assert all(a.kind == "text" for a in sol.answers)
    assert "e^{-\\infty} = 0" in sol.answer("mask_inf").value
    assert "$AV$" in sol.answer("mix_values").value


def test_concept_multiple_choice_keeps_the_right_option(write_bank):
    item = only_item(
        write_bank,
        "  - id: k\n    family: concept\n    params:\n"
        "      ask: {choices: [softmax-axis, positions, why-heads]}\n"
        "      count: 2\n      multiple_choice: true\n",
        seed=3,
    )
    sol = item.solution
    assert len(sol.answers) == 2 and len({a.name for a in sol.answers}) == 2
    for a in sol.answers:
        assert a.kind == "choice" and a.value in a.options
    right = {
        "softmax_axis": "Over the keys: each row of $A$ sums to 1",
        "positions": "No: permuting the tokens just permutes the outputs; order must be added",
        "why_heads": "So that different heads can attend to different things at the same time",
    }
    for a in sol.answers:
        assert a.value == right[a.name]


@pytest.mark.parametrize(
    "params, expected",
    [
        ("ask: mask-infinity", "got 'mask-infinity' (did you mean \"mask-inf\"?)"),
        (
            "ask: {choices: [mask-inf, positions]}\n      count: 3",
            "questions[0].params.count: expected count of at most 2 (the number of choices), got 3",
        ),
        (
            "ask: [mask-inf]\n      count: 1",
            "questions[0].params.count: expected no count when ask names the questions",
        ),
        ("ask: [mask-inf, mask-inf]", "expected each word once, got 'mask-inf' twice"),
    ],
)
def test_concept_rejects_bad_parameters(write_bank, params, expected):
    msg = bank_error(write_bank, f"  - id: k\n    family: concept\n    params:\n      {params}\n")
    assert expected in msg


NOTE_FAMILIES = {
    "softmax",
    "causal",
    "lab3",
    "scaling",
    "heads",
    "projections",
    "cross",
    "identical-keys",
    "scale-effect",
    "multihead",
    "cost",
    "heatmap",
    "concept",
    "spot-the-bug",
}


def test_note_bank_covers_every_note_family():
    data = yaml.safe_load((ROOT / "banks" / "note.yaml").read_text(encoding="utf-8"))
    used = {q["family"] for q in data["questions"]}
    assert (NOTE_FAMILIES - {"scaling", "heads"}) <= used  # scale-effect and multihead
    assert used <= set(FAMILIES)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_note_bank_draws_and_solves_for_several_seeds(seed):
    bank = load_banks([ROOT / "banks" / "note.yaml"])
    items = make_build(bank, seed).sheets[0].items
    assert len(items) == len(bank.questions)


def test_heatmap_renders_as_tikz_in_latex_and_a_shaded_table_in_markdown(write_bank, tmp_path):
    path = write_bank("questions:\n" + HEAT)
    res = build(BuildOptions(seed=1, banks=(str(path),), out=str(tmp_path / "o"), pdf=False))
    tex = (res.folder / "sheet.tex").read_text(encoding="utf-8")
    assert "\\usepackage{tikz}" in tex
    # weight 1, shaded only (a reading question): any weight above 0 is 12% grey or darker
    assert "\\filldraw[fill=black!90,draw=gray!60] (0,0) rectangle ++(1,1);" in tex
    md = (res.folder / "sheet.md").read_text(encoding="utf-8")
    # each shade a code span (one width in a monospaced font), the blank a no-break space
    assert "| query 2 | `░` 0.30 | `▓` 0.70 | `\u00a0` 0.00 |" in md
    plain = write_bank("questions:\n" + CROSS, name="plain.yaml")
    res2 = build(BuildOptions(seed=1, banks=(str(plain),), out=str(tmp_path / "p"), pdf=False))
    assert "tikz" not in (res2.folder / "sheet.tex").read_text(encoding="utf-8")


@needs_tex
def test_note_bank_builds_with_pdfs(tmp_path: Path):
    res = build(BuildOptions(seed=7, banks=(str(ROOT / "banks" / "note.yaml"),), out=str(tmp_path)))
    for name in ("sheet.pdf", "key.pdf", "key.json"):
        assert (res.folder / name).stat().st_size > 1000
    key = json.loads((res.folder / "key.json").read_text(encoding="utf-8"))
    families = {q["family"] for q in key["sheets"][0]["questions"]}
    assert NOTE_FAMILIES - {"scaling", "heads"} <= families


@pytest.mark.parametrize("name", ["default.yaml", "note.yaml", "slips.yaml", "practice.yaml"])
def test_worked_steps_read_as_sentences_and_each_starts_its_own_line_in_markdown(name):
    from tests.solved import render_all

    bank = load_banks([ROOT / "banks" / name])
    for seed in (1, 7):
        built = make_build(bank, seed)
        for item in built.sheets[0].items:
            for step in (*item.solution.steps, *(item.solution.shown_steps or ())):
                # "The slip is no-scale Skips the scale" ran together; a text that opens
                # with a dash continues its title on purpose ("Exponentiate each entry — of
                # the exact scaled scores, ...")
                if step.text and not step.text.startswith("—"):
                    assert step.title.rstrip()[-1] in ".:?", step.title
        md = render_all(built)["key.md"]
        # a step without a display ran into the next one: "...the scale's job.6. Each ..."
        assert not re.search(r"[.?!)]\d+\. [A-Z$]", md)
        lines = md.split("\n")
        for i, line in enumerate(lines):
            if re.match(r"\*\*\([a-z]\)\*\*", line):  # every part is its own paragraph
                assert lines[i - 1] == "", lines[i - 2 : i + 1]
