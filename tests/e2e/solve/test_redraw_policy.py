"""One redraw policy in the draw stage: a family states that a draw cannot make a question
(``Redraw``) and the draw stage draws again from the same generator."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT

FAMILY_MODULES = sorted(
    p.stem for p in (ROOT / "worksheetgen" / "families").glob("*.py") if p.stem != "base"
)


@pytest.mark.parametrize("module", FAMILY_MODULES)
def test_no_family_runs_a_redraw_loop_of_its_own(module: str) -> None:
    source = (ROOT / "worksheetgen" / "families" / f"{module}.py").read_text(encoding="utf-8")
    assert "for _ in range(" not in source
    assert "MAX_REDRAWS" not in source
