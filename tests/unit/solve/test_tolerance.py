"""Tolerances cover a student who follows the sheet: "round every answer to two decimals".

Such a student rounds the scaled (or masked) table, takes the softmax of the rounded table,
rounds A, multiplies the rounded A by V and rounds the output. Each step below is done by hand
with NumPy and Decimal, not with worksheetgen's arithmetic.

A behaviour across modules, not one module's tests (bank.load, model, solve.item).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.oracles import half_unit, half_up_float, softmax_rows
from worksheetgen.bank.load import load_banks
from worksheetgen.model import SheetIdentity
from worksheetgen.solve.item import make_item

VARIANTS = 80


def half_up(m: np.ndarray, decimals: int) -> np.ndarray:
    return np.vectorize(lambda x: half_up_float(float(x), decimals))(m)


def grid(printed) -> np.ndarray:
    return np.array([[float(x) for x in row] for row in printed], dtype=float)


def output_items(bank: str):
    """(item, answers by name) for every variant of every question with an output AV."""
    questions = load_banks([ROOT / "banks" / bank]).questions
    for spec in questions:
        for n in range(VARIANTS):
            item = make_item(spec, SheetIdentity(3, f"student-{n}"), 1)
            answers = {a.name: a for a in item.solution.answers}
            if "output" in answers and "A" in answers:
                yield item, answers


@pytest.mark.parametrize("bank", ["default.yaml", "note.yaml", "slips.yaml"])
def test_an_output_worked_from_rounded_steps_is_within_the_keys_tolerance(bank):
    seen = wider = 0
    for item, answers in output_items(bank):
        decimals = item.spec.decimals
        # V is given, or (projections) an answer the student computed exactly: V = XW_V
        V = np.array(item.given["V"] if "V" in item.given else answers["V"].value, dtype=float)
        exact = np.array(answers["output"].value, dtype=float)
        tol = answers["output"].tolerance
        a_tables = [grid(answers["A"].rounded)]  # A as the key prints it
        before = answers.get("masked") or answers.get("scaled")
        if before is not None:  # A from the rounded table before the softmax, then rounded
            a_tables.append(
                half_up(np.array(softmax_rows(grid(before.rounded).tolist())), decimals)
            )
        for a in a_tables:
            mine = half_up(a @ V, decimals)
            assert np.abs(mine - exact).max() <= tol + 1e-12, (item.spec.id, a, V, tol)
            wider += bool(np.abs(mine - exact).max() > float(3 * half_unit(decimals)))
        seen += 1
    assert seen >= VARIANTS
    if bank != "slips.yaml":  # V holds 3s and 4s: three half-units alone would not do
        assert wider > 0


def test_output_tolerance_is_at_least_three_half_units_in_tenths_of_a_unit():
    tolerances = {answers["output"].tolerance for _, answers in output_items("default.yaml")}
    assert min(tolerances) == 0.015
    assert max(tolerances) > 0.015
    assert all(abs(t * 1000 - round(t * 1000)) < 1e-9 for t in tolerances)
