"""Every slip of the misconception library on a case whose result is known by hand."""

from __future__ import annotations

import math
import re
from dataclasses import fields
from fractions import Fraction
from typing import Any, ClassVar

import pytest

from tests.oracles import softmax
from worksheetgen.attention import slips as mc
from worksheetgen.attention.compute import CORRECT, Recipe, Switches
from worksheetgen.exact import number as ex
from worksheetgen.families import get_family
from worksheetgen.families.base import Family
from worksheetgen.render.markup import split_markup
from worksheetgen.render.prompts import markup_math_problem

E = math.e


def floats(m: Any) -> list:
    return mc.value_json(m)


def slip(name: str, family: str, given: dict) -> dict:
    return mc.get(name).evaluate(get_family(family), given)


NOTE_EXAMPLE = {"S": [[2, 0], [0, 2]], "d_k": 2, "causal": False, "T": 2}
PRACTICE_CAUSAL = {"scaled": [[1, 3], [0, 1]], "causal": True, "T": 2}


def test_every_switch_of_a_recipe_can_be_flipped_and_nothing_else():
    assert set(Switches.__annotations__) == {f.name for f in fields(Recipe)}
    assert Switches.__optional_keys__ == frozenset(Switches.__annotations__)


def test_registry_has_exactly_the_issue_names_each_with_one_switch_flipped():
    expected = {
        "scale-by-dk": ("scale", "dk"),
        "no-scale": ("scale", "none"),
        "mask-with-zero": ("mask_fill", "zero"),
        "softmax-over-columns": ("axis", "queries"),
        "mixed-keys": ("mix", "K"),
        "no-transpose": ("transpose_k", False),
        "dk-equals-d": ("head_width", "d"),
        "reads-column": ("read", "column"),
        "wo-transposed": ("wo_transposed", True),
    }
    assert mc.NAMES == tuple(expected)
    for name, (switch, value) in expected.items():
        m = mc.get(name)
        changed = {
            f.name: getattr(m.recipe, f.name)
            for f in fields(Recipe)
            if getattr(m.recipe, f.name) != getattr(CORRECT, f.name)
        }
        assert changed == {switch: value}, name
        assert m.description.endswith(".") and len(m.description) > 20


ASCII_MATH = re.compile(r"d_k|W_O|\^T|-inf|sqrt|\b[A-Z]·[A-Z]\b| x ")


def test_every_slip_has_a_name_for_paper_and_says_its_math_as_math():
    """The key names a slip by its title (not its id) and both are markup: their math is
    $…$ that TeX can set, never typed as ASCII (d_k, QK^T, -inf) outside it."""
    for m in mc.MISCONCEPTIONS.values():
        # it follows "The slip: " in the key, so it starts in lower case (or with math)
        assert m.title != m.name and (m.title[0].islower() or m.title[0] == "$"), m.name
        for markup in (m.title, m.description):
            assert markup_math_problem(markup) is None, markup
            text = "".join(t for is_math, t in split_markup(markup) if not is_math)
            assert not ASCII_MATH.search(text), (m.name, text)


def test_scale_by_dk_on_the_note_example_gives_softmax_of_1_0():
    got = slip("scale-by-dk", "softmax", NOTE_EXAMPLE)
    # S/d_k = [[1, 0], [0, 1]]: row 1 is softmax([1, 0]) = [e/(e+1), 1/(e+1)]
    assert floats(got["scaled"]) == [[1.0, 0.0], [0.0, 1.0]]
    assert floats(got["A"])[0] == pytest.approx([E / (E + 1), 1 / (E + 1)], abs=1e-15)
    assert mc.value_rounded(got["A"], 2) == [["0.73", "0.27"], ["0.27", "0.73"]]


def test_no_scale_on_the_note_example_gives_softmax_of_2_0():
    got = slip("no-scale", "softmax", NOTE_EXAMPLE)
    assert floats(got["A"])[0] == pytest.approx([E**2 / (E**2 + 1), 1 / (E**2 + 1)], abs=1e-15)
    assert mc.value_rounded(got["A"], 2)[0] == ["0.88", "0.12"]


def test_mask_with_zero_on_the_practice_causal_item_leaks_weight_to_the_future():
    got = slip("mask-with-zero", "causal", PRACTICE_CAUSAL)
    # row 1 masked with 0 instead of -inf: softmax([1, 0]); row 2 has no future key
    assert mc.value_rounded(got["masked"], 2) == [["1", "0"], ["0", "1"]]
    assert floats(got["A"])[0] == pytest.approx([E / (E + 1), 1 / (E + 1)], abs=1e-15)
    assert mc.value_rounded(got["A"], 2) == [["0.73", "0.27"], ["0.27", "0.73"]]


def test_softmax_over_columns_normalizes_each_column_over_queries():
    given = {"scaled": [[1, 0], [3, 1]], "causal": False, "T": 2}
    got = floats(slip("softmax-over-columns", "softmax", given)["A"])
    col0, col1 = softmax([1, 3]), softmax([0, 1])
    assert got == [
        pytest.approx([col0[0], col1[0]], abs=1e-15),
        pytest.approx([col0[1], col1[1]], abs=1e-15),
    ]
    assert [sum(c) for c in zip(*got, strict=True)] == pytest.approx([1.0, 1.0], abs=1e-15)


def test_softmax_over_columns_under_a_causal_mask_uses_the_masked_table():
    got = slip("softmax-over-columns", "causal", PRACTICE_CAUSAL)
    # columns of [[1, -inf], [0, 1]]: softmax([1, 0]) and softmax([-inf, 1]) = [0, 1]
    assert mc.value_rounded(got["A"], 2) == [["0.73", "0.00"], ["0.27", "1.00"]]


LAB = {
    "Q": [[1, 0], [0, 1]],
    "K": [[1, 0], [1, 1]],
    "V": [[2, 0], [0, 4]],
    "T": 2,
    "d_k": 2,
    "causal": False,
}


def _weights(scores: list[list[float]], d_k: int) -> list[list[float]]:
    return [softmax([x / math.sqrt(d_k) for x in row]) for row in scores]


def _matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    return [
        [sum(x * y for x, y in zip(row, col, strict=True)) for col in zip(*b, strict=True)]
        for row in a
    ]


def test_mixed_keys_multiplies_the_weights_by_k_instead_of_v():
    got = slip("mixed-keys", "lab3", LAB)
    # scores QK^T = [[1, 1], [0, 1]], so row 1 is uniform and row 2 is softmax([0, 1/sqrt 2])
    a = _weights([[1, 1], [0, 1]], 2)
    assert floats(got["A"]) == [pytest.approx(r, abs=1e-15) for r in a]
    want = _matmul(a, LAB["K"])
    assert floats(got["output"]) == [pytest.approx(r, abs=1e-14) for r in want]
    assert floats(got["output"])[0] == pytest.approx([1.0, 0.5], abs=1e-15)


def test_no_transpose_multiplies_q_by_k_as_it_stands():
    given = dict(LAB, Q=[[1, 2], [0, 1]])
    got = slip("no-transpose", "lab3", given)
    # Q·K = [[1+2, 0+2], [0+1, 0+1]] = [[3, 2], [1, 1]] (Q·K^T would be [[1, 3], [0, 1]])
    assert mc.value_rounded(got["scores"], 2) == [["3", "2"], ["1", "1"]]
    want = _matmul(_weights([[3, 2], [1, 1]], 2), LAB["V"])
    assert floats(got["output"]) == [pytest.approx(r, abs=1e-14) for r in want]


def test_dk_equals_d_gives_every_head_the_full_width():
    got = slip("dk-equals-d", "heads", {"d": 12, "h": 3})
    assert got == {"d_k": 12, "concat_width": 36, "W_O_shape": (36, 12)}


def test_wo_transposed_swaps_the_shape_and_applies_only_where_w_o_is_not_square():
    heads = get_family("heads")
    # with d_k = d/h the concatenation is d wide, so W_O is d x d: transposing changes nothing
    assert slip("wo-transposed", "heads", {"d": 8, "h": 2})["W_O_shape"] == (8, 8)
    fp = mc.fingerprints(heads, {"d": 8, "h": 2})
    assert [s.name for s in fp.slips] == ["dk-equals-d"]

    class WideValues(Family):
        """Two heads emitting 3-wide values into a model of width 4: W_O is 6 x 4."""

        name = "wide-values"
        answers: ClassVar[tuple[str, ...]] = ("W_O_shape",)
        slips: ClassVar[tuple[str, ...]] = ("wo-transposed",)
        fingerprint: ClassVar[tuple[str, ...]] = ("W_O_shape",)

        def evaluate(self, given: dict, recipe: Recipe) -> dict:
            rows, cols = 2 * 3, 4
            return {"W_O_shape": (cols, rows) if recipe.wo_transposed else (rows, cols)}

    fp = mc.fingerprints(WideValues(), {})
    assert [(s.name, s.values["W_O_shape"]) for s in fp.slips] == [("wo-transposed", (4, 6))]
    assert mc.collisions(fp, 2) == []


@pytest.mark.parametrize(
    ("family", "given", "expected"),
    [
        (
            "lab3",
            dict(LAB),
            ["no-transpose", "scale-by-dk", "no-scale", "softmax-over-columns", "mixed-keys"],
        ),
        # K is 4 x 2: Q·K is undefined; V is 3 wide: A·K has another width than A·V
        (
            "lab3",
            {
                "Q": [[1, 0]] * 4,
                "K": [[0, 1]] * 4,
                "V": [[1, 2, 3]] * 4,
                "T": 4,
                "d_k": 2,
                "causal": True,
            },
            ["scale-by-dk", "no-scale", "mask-with-zero", "softmax-over-columns"],
        ),
        (
            "softmax",
            {"scaled": [[1, 0], [0, 1]], "causal": False, "T": 2},
            ["softmax-over-columns"],
        ),
        ("causal", dict(PRACTICE_CAUSAL), ["mask-with-zero", "softmax-over-columns"]),
    ],
)
def test_a_slip_applies_only_where_it_makes_sense_for_the_drawn_values(family, given, expected):
    fp = mc.fingerprints(get_family(family), given)
    assert [s.name for s in fp.slips] == expected


def test_d_k_of_one_has_no_scale_to_get_wrong_so_the_scale_slips_do_not_apply():
    given = {"S": [[2, 0], [1, 3]], "d_k": 1, "causal": False, "T": 2}
    fp = mc.fingerprints(get_family("softmax"), given)
    assert [s.name for s in fp.slips] == ["softmax-over-columns"]
    assert mc.collisions(fp, 2) == []


def test_a_symmetric_score_table_hides_softmax_over_columns():
    fp = mc.fingerprints(get_family("softmax"), NOTE_EXAMPLE)
    assert [(c.slip, c.same_as) for c in mc.collisions(fp, 2)] == [
        ("softmax-over-columns", "correct")
    ]


def _ex(text: str) -> ex.Ex:
    return ex.number(Fraction(text))


@pytest.mark.parametrize(
    ("a", "b", "told_apart"),
    [
        ("0.26", "0.27", True),
        ("0.2649", "0.2651", False),  # printed 0.26 and 0.27, but only 0.0002 apart
        ("0.261", "0.2649", False),  # both print 0.26
        ("0.2649", "0.2701", True),  # printed differently and 0.0052 apart
    ],
)
def test_distinguishable_needs_different_prints_and_half_a_unit_of_distance(a, b, told_apart):
    assert mc.distinguishable([_ex(a)], [_ex(b)], 2) is told_apart
    assert mc.distinguishable([_ex(a)], [_ex(b)], 4) is True


def test_minus_infinity_differs_from_every_number_and_shapes_must_match():
    assert mc.distinguishable([[ex.NEG_INF]], [[ex.ZERO]], 2)
    assert not mc.distinguishable([[ex.NEG_INF]], [[ex.NEG_INF]], 2)
    assert mc.distinguishable([[ex.ONE, ex.ONE]], [[ex.ONE], [ex.ONE]], 2)
    assert not mc.distinguishable((4, 4), (4, 4), 2)
    assert mc.distinguishable((4, 8), (8, 4), 2)


def test_a_slip_that_matches_an_earlier_slip_collides_with_it_and_the_first_stays():
    def result(name: str, value: str) -> mc.SlipResult:
        return mc.SlipResult(mc.get(name), {"A": [_ex(value)]})

    fp = mc.Fingerprints(
        "A",
        {"A": [_ex("0.5")]},
        (
            result("no-scale", "0.7"),
            result("scale-by-dk", "0.3"),
            result("softmax-over-columns", "0.7001"),
        ),
    )
    found = mc.collisions(fp, 2)
    assert [(c.slip, c.same_as) for c in found] == [("softmax-over-columns", "no-scale")]
    assert [s.name for s in mc.kept_after(fp, found)] == ["no-scale", "scale-by-dk"]


def test_every_family_declares_only_known_slips():
    from worksheetgen.families import FAMILIES

    for name in FAMILIES:
        fam = get_family(name)
        assert set(fam.slips) <= set(mc.NAMES), name
