"""A family's declarations are checked when its class is defined: display kinds are typed and
listed, a part's answer name is one the family declares, and a typo fails at import on one
line naming the family (and the part), not in the middle of a build.

A behaviour across modules, not one module's tests (authoring, bank.load, errors, families,
families.base, model, solve.item)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import get_args

import pytest

from tests.conftest import ROOT
from worksheetgen import authoring
from worksheetgen.families import FAMILIES
from worksheetgen.families.base import definition_problems
from worksheetgen.model import BLOCK_KINDS, DISPLAY_KINDS, DisplayKind

#: a small family a plugin author could write, with ``{…}`` left to each test
FAMILY = """
from worksheetgen.authoring import (
    Carry, Family, IntParam, Part, Pinned, Shown, Solution, exact, integer_answer, pick,
)


class Doubled(Family):
    name = "doubled"
    title = "Twice a number"
    params = (IntParam("n", 1, 9, Pinned(3), "the number"),)
    answers = {answers}
    display_kinds = {kinds}
    target = {target}
    carries = {carries}

    def draw(self, params, rng):
        return {{"n": pick(params["n"], rng)}}

    def solve(self, given, decimals, item):
        n = given["n"]
        return Solution(
            shown=(Shown("n", "scalar", str(n)),),
            parts=(
                Part("Write $n$.", "{first}"),
                Part(f"Write twice {{n}}.", answer="{second}"),
            ),
            answers=(integer_answer("n", "n", n), integer_answer("twice", "2n", 2 * n)),
            steps=(),
        )
"""


def _define(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, **changes: str) -> type:
    """Import a plugin module defining ``Doubled`` with ``changes`` made to its declarations."""
    fields = {
        "answers": '("n", "twice")',
        "kinds": '("scalar",)',
        "target": '"twice"',
        "carries": '(Carry("twice", ("n",), ("times",), fixed=(("factor", 2),)),)',
        "first": "n",
        "second": "twice",
    } | changes
    (tmp_path / f"{module}.py").write_text(FAMILY.format(**fields), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module(module).Doubled  # type: ignore[no-any-return]


def _refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, **changes: str) -> str:
    with pytest.raises(TypeError) as caught:
        _define(tmp_path, monkeypatch, module, **changes)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("family 'doubled' (Doubled): ")
    return message


def test_a_well_declared_plugin_family_is_defined(tmp_path, monkeypatch):
    cls = _define(tmp_path, monkeypatch, "doubled_fine")
    assert definition_problems(cls, parts=True) == []


def test_a_typo_in_a_parts_answer_name_fails_when_the_family_is_defined(tmp_path, monkeypatch):
    message = _refused(tmp_path, monkeypatch, "doubled_part_typo", second="twcie")
    assert message.endswith(
        "part \"Write twice {n}.\" asks for answer 'twcie'; expected one the family "
        'declares (n, twice) (did you mean "twice"?)'
    )
    message = _refused(tmp_path, monkeypatch, "doubled_part_typo_first", first="m")
    assert "part \"Write $n$.\" asks for answer 'm'" in message


def test_a_typo_in_a_display_kind_fails_when_the_family_is_defined(tmp_path, monkeypatch):
    message = _refused(tmp_path, monkeypatch, "doubled_kind_typo", kinds='("scalar", "matrx")')
    assert message.endswith(
        "display_kinds: expected one of matrix, vector, scalar, heatmap, got 'matrx' "
        '(did you mean "matrix"?)'
    )


def test_target_and_carries_name_declared_answers(tmp_path, monkeypatch):
    message = _refused(tmp_path, monkeypatch, "doubled_target", target='"twise"')
    assert "target: expected an answer the family declares (n, twice), got 'twise'" in message
    message = _refused(
        tmp_path, monkeypatch, "doubled_carry", carries='(Carry("thrice", ("n",), ("times",)),)'
    )
    assert "carries: expected an answer the family declares (n, twice), got 'thrice'" in message


def test_a_family_must_declare_its_answers(tmp_path, monkeypatch):
    message = _refused(tmp_path, monkeypatch, "doubled_no_answers", answers="()")
    assert message.endswith("answers: expected the names of the answers its parts ask, got none")


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_registered_familys_declarations_and_literal_parts_hold(name):
    """The bundled families skip the source scan at import (a build's start-up); it runs here,
    for every family the registry holds."""
    assert definition_problems(FAMILIES[name], parts=True) == []


def test_the_display_kinds_are_one_typed_list_each_with_a_partial_per_format():
    assert DISPLAY_KINDS == get_args(DisplayKind) == authoring.DISPLAY_KINDS
    assert set(BLOCK_KINDS) <= set(DISPLAY_KINDS)
    for fmt, suffix in (("latex", ".tex.j2"), ("markdown", ".md.j2")):
        found = {
            p.name.removesuffix(suffix)
            for p in (ROOT / "templates" / fmt / "shown").glob(f"*{suffix}")
            if not p.name.endswith(".preamble.tex.j2")
        }
        assert found == set(DISPLAY_KINDS), fmt
    for cls in FAMILIES.values():
        assert set(cls.display_kinds) <= set(DISPLAY_KINDS), cls.name


def _heads_item():
    from tests.solved import make_build
    from worksheetgen.bank.load import load_banks

    build = make_build(load_banks([ROOT / "banks" / "default.yaml"]), 42)
    return next(i for i in build.sheets[0].items if i.spec.family == "heads")


def test_a_part_or_shown_kind_the_family_does_not_declare_stops_the_build_on_one_line():
    """Names made at build time (not literals) are checked against the declarations too."""
    from dataclasses import replace

    from worksheetgen.errors import SolveError
    from worksheetgen.model import Part, Shown
    from worksheetgen.solve.item import check_invariants

    item = _heads_item()
    check_invariants(item, "q4")
    sol = item.solution
    answer = replace(sol.answers[0], name="width")
    odd_part = replace(sol, parts=(Part("Write it.", "width"),), answers=(*sol.answers, answer))
    with pytest.raises(SolveError) as caught:
        check_invariants(replace(item, solution=odd_part), "q4")
    assert str(caught.value) == (
        "q4: family 'heads': part asks for answer 'width', which the family does not declare "
        "in answers (d_k, concat_width, W_O_shape)"
    )
    odd_kind = replace(sol, shown=(Shown("d", "heatmap", {}),))
    with pytest.raises(SolveError) as caught:
        check_invariants(replace(item, solution=odd_kind), "q4")
    assert str(caught.value) == (
        "q4: family 'heads': 'd' is shown as 'heatmap', which the family does not declare in "
        "display_kinds (matrix, vector, scalar)"
    )
