"""Fail early (issue 32 §6): what an LMS export refuses in a bank is found by ``check`` and
by ``build --export`` before a sheet is drawn or TeX runs, with the export's own message and
the bank's file and line (a pool whose alternatives differ in points passed ``check``, then
``build --export moodle`` stopped after all the drawing and TeX)."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT
from worksheetgen.bank.load import load_banks
from worksheetgen.pipeline.lmsrules import pool_refusals


@pytest.mark.parametrize("bank", ["default", "quiz", "note"])
def test_the_bundled_banks_pass_the_moodle_and_canvas_rules(bank):
    loaded = load_banks([str(ROOT / "banks" / f"{bank}.yaml")])
    assert pool_refusals(loaded, ("moodle", "qti")) == []
