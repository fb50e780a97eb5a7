"""Building a sheet never calls SymPy's generic simplify (about 250 ms a call).

A behaviour across modules, not one module's tests (bank.load)."""

from __future__ import annotations

import importlib

import pytest
import sympy

from tests.conftest import ROOT
from tests.solved import make_build
from worksheetgen.bank.load import load_banks


@pytest.mark.parametrize("bank", ["default.yaml", "practice.yaml", "note.yaml", "slips.yaml"])
def test_building_every_bundled_bank_never_calls_simplify(bank: str, monkeypatch):
    calls: list[str] = []

    def forbidden(*args, **kwargs):
        calls.append("simplify")
        raise AssertionError("simplify called while building a sheet")

    simplify_module = importlib.import_module("sympy.simplify.simplify")
    monkeypatch.setattr(sympy, "simplify", forbidden)
    monkeypatch.setattr(simplify_module, "simplify", forbidden)
    monkeypatch.setattr(sympy.Basic, "simplify", forbidden)
    build = make_build(load_banks([ROOT / "banks" / bank]), 42)
    assert build.sheets[0].items
    assert calls == []
