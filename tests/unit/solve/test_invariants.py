"""Key invariants: each one holds on real items and each one fails on a broken solution.

A behaviour across modules, not one module's tests (attention.compute, bank.load, errors, exact,
families.base, model, pipeline.build, solve, solve.item)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import sympy as sp

from tests.paths import ROOT
from worksheetgen.attention.compute import sums_to_one
from worksheetgen.bank.load import load_banks
from worksheetgen.errors import InvariantError, SolveError
from worksheetgen.exact import number as ex
from worksheetgen.model import Item, SheetIdentity, Solution
from worksheetgen.solve.item import check_invariants, correct_values, make_item

BANK = """
sheet: {id: inv}
questions:
  - id: lab
    family: lab3
  - id: heads
    family: heads
    params: {d: 12, h: 3}
  - id: mc
    family: causal
    format: choice
    params: {T: 3}
"""


@pytest.fixture
def items(write_bank) -> dict[str, Item]:
    bank = load_banks([write_bank(BANK)])
    return {
        s.id: make_item(s, SheetIdentity(11, "inv"), n + 1) for n, s in enumerate(bank.questions)
    }


def with_answer(item: Item, name: str, **changes) -> Item:
    answers = tuple(replace(a, **changes) if a.name == name else a for a in item.solution.answers)
    return replace(item, solution=replace(item.solution, answers=answers))


def fails(item: Item, prop: str, exact: dict | None = None) -> str:
    with pytest.raises(InvariantError) as err:
        check_invariants(item, "bank.yaml:3: questions[x]", exact)
    text = str(err.value)
    assert prop in text and "questions[x]" in text
    return text


def test_real_items_pass_every_invariant(items):
    for item in items.values():
        check_invariants(item, "ok", None)


def test_rows_of_a_sum_to_one_is_checked_exactly_on_the_structure(items):
    item = items["lab"]
    exact = correct_values(item)
    broken = [list(r) for r in exact["A"]]
    third = ex.number("0.333")
    broken[0] = [third, third, third, ex.ZERO]  # 0.999, and 3 different denominators
    fails(item, "each row of A sums to 1", dict(exact, A=broken))
    # a weight taken from another row has the wrong denominator, though it is a softmax weight
    swapped = [list(r) for r in exact["A"]]
    swapped[3][0] = exact["A"][2][0]
    assert not sums_to_one(swapped[3])
    fails(item, "row 4 of A does not sum to exactly 1", dict(exact, A=swapped))


def test_sums_to_one_never_calls_simplify_and_accepts_every_softmax_row():
    from worksheetgen.attention.compute import attend

    for s, causal in (([[2, 0], [0, 2]], False), ([[1, 3, 0], [2, 2, 2], [0, -1, 5]], True)):
        assert all(sums_to_one(r) for r in attend(S=s, d_k=2, causal=causal).A)
    e = sp.exp(sp.Integer(1))
    close = [
        ex.Ex(e / (e + 1), ex._MP.e / (ex._MP.e + 1)),
        ex.Ex(sp.Integer(1) / (e + 2), 1 / (ex._MP.e + 2)),
    ]
    assert not sums_to_one(close)


def test_float_rows_of_a_must_sum_to_one_too(items):
    item = items["lab"]
    value = [list(r) for r in item.solution.answer("A").value]
    value[1] = [0.5, 0.6, 0.0, 0.0]
    fails(with_answer(item, "A", value=value), "each row of A sums to 1", correct_values(item))


def test_causal_weights_above_the_diagonal_must_be_exactly_zero(items):
    item = items["lab"]
    assert item.given["causal"]
    exact = correct_values(item)
    leaky = [list(r) for r in exact["A"]]
    leaky[0] = [ex.number("0.5"), ex.number("0.5"), ex.ZERO, ex.ZERO]
    fails(item, "no weight on a future key", dict(exact, A=leaky))


def test_each_output_row_lies_within_the_column_range_of_v(items):
    item = items["lab"]
    exact = correct_values(item)
    top = max(r[0] for r in item.given["V"])
    out = [list(r) for r in exact["output"]]
    out[3][0] = ex.number(top + 1)
    text = fails(item, "within the column-wise range of V", dict(exact, output=out))
    assert "output[4][1]" in text


def test_h_times_d_k_must_equal_d(items):
    item = items["heads"]
    assert item.solution.answer("d_k").value == 4
    fails(with_answer(item, "d_k", value=5, rounded="5", exact="5"), "h * d_k = d", {"d_k": 5})


def test_printed_answers_must_be_the_exact_values_rounded(items):
    item = items["lab"]
    rounded = [list(r) for r in item.solution.answer("A").rounded]
    rounded[1][0] = "0.99"
    fails(with_answer(item, "A", rounded=rounded), "exact and rounded agree")
    # the printed key must also be the half-up rounding of the exact value it came from
    exact = correct_values(item)
    scaled = [list(r) for r in exact["scaled"]]
    printed = item.solution.answer("scaled").rounded[0][0]
    scaled[0][0] = ex.number(float(printed) + 0.01)
    fails(item, "exact and rounded agree", dict(exact, scaled=scaled))


def test_a_choice_item_must_mark_exactly_one_option_correct(items):
    item = items["mc"]
    choices = tuple(replace(c, correct=True) for c in item.solution.choices)
    broken = replace(item, solution=replace(item.solution, choices=choices))
    fails(broken, "one correct choice")


def test_a_part_asking_for_an_unknown_answer_is_a_solve_error(items):
    item = items["heads"]
    parts = (replace(item.solution.parts[0], answer="nope"),)
    broken = replace(item, solution=replace(item.solution, parts=parts))
    with pytest.raises(SolveError, match="unknown answer 'nope'"):
        check_invariants(broken, "x")


def test_invariants_run_before_anything_is_written(tmp_path, write_bank, monkeypatch):
    from worksheetgen.pipeline.build import BuildOptions, build
    from worksheetgen.solve import item as solve

    original = solve.with_misconceptions

    def break_a(spec, solution: Solution, variant, label):
        sol = original(spec, solution, variant, label)
        answers = tuple(
            replace(a, rounded=[["9.99"] * len(r) for r in a.rounded]) if a.name == "A" else a
            for a in sol.answers
        )
        return replace(sol, answers=answers)

    monkeypatch.setattr(solve, "with_misconceptions", break_a)
    out = tmp_path / "out"
    with pytest.raises(InvariantError):
        build(
            BuildOptions(
                seed=1, banks=(str(ROOT / "banks" / "default.yaml"),), out=str(out), pdf=False
            )
        )
    assert not out.exists() or not any(out.iterdir())


def test_an_output_equal_to_a_constant_column_of_v_is_within_its_range(write_bank):
    # every weight times 3 sums to 3 up to the last of 50 digits: the check must allow that
    path = write_bank("""
questions:
  - id: flat
    family: lab3
    params: {Q: [[2, 2], [0, 1], [1, 1]], K: [[1, 2], [1, 0], [2, 1]], V: [[3, 3], [3, 1], [3, 1]]}
""")
    item = make_item(load_banks([path]).questions[0], SheetIdentity(0, "s"), 1)
    assert [r[0] for r in item.solution.answer("output").rounded] == ["3.00"] * 3
    assert float(correct_values(item)["output"][2][0].val - 3) != 0.0  # 3 - 5e-51: not exact


def test_the_numpy_cross_check_names_the_entry_where_exact_and_float_disagree():
    from fractions import Fraction

    from worksheetgen.families.base import cross_check

    third = ex.number(Fraction(1, 3))
    cross_check("q", "A", [[third, "-inf"]], [[1 / 3, float("-inf")]])  # agrees: no error
    with pytest.raises(SolveError, match=r"exact and float A\[1, 0\] disagree: Ex\(1/3\) vs 0\.5"):
        cross_check("q", "A", [[third, third], [third, third]], [[1 / 3, 1 / 3], [0.5, 1 / 3]])
    with pytest.raises(SolveError, match=r"exact and float A\[0, 1\] disagree: -inf vs 0\.0"):
        cross_check("q", "A", [[third, "-inf"]], [[1 / 3, 0.0]])
    with pytest.raises(SolveError, match=r"differ in shape \(1, 2\) != \(2, 1\)"):
        cross_check("q", "A", [[third, third]], [[1 / 3], [1 / 3]])
