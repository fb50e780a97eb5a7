"""Display kinds are template partials: each shown value is drawn by its kind's partial,
which a template folder of one's own can replace.

A behaviour across modules, not one module's tests (bank.load, model)."""

from __future__ import annotations

from tests.conftest import ROOT
from tests.solved import make_build
from worksheetgen.bank.load import load_banks
from worksheetgen.model import BLOCK_KINDS

TEMPLATES = ROOT / "templates"


def _kinds_shown() -> set[str]:
    kinds: set[str] = set()
    for bank in sorted((ROOT / "banks").glob("*.yaml")):
        build = make_build(load_banks([bank]), 1)
        kinds |= {g.kind for s in build.sheets for i in s.items for g in i.solution.shown}
    return kinds


def test_every_kind_the_bundled_banks_show_has_a_partial_in_each_format() -> None:
    kinds = _kinds_shown() | set(BLOCK_KINDS)
    assert {"matrix", "vector", "scalar", "heatmap"} <= kinds
    for kind in kinds:
        assert (TEMPLATES / "latex" / "shown" / f"{kind}.tex.j2").is_file(), kind
        assert (TEMPLATES / "markdown" / "shown" / f"{kind}.md.j2").is_file(), kind
