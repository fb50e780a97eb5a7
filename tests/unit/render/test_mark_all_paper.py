"""Mark all that apply on paper: the sheet says so, and the key and the TA's grid show every
right option (the fixture bank tests/fixtures/mark-all.yaml).

A behaviour across modules, not one module's tests (bank.load, pipeline.sheet)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import ROOT
from tests.solved import make_build, render_all
from worksheetgen.bank.load import load_banks

FIXTURE = ROOT / "tests" / "fixtures" / "mark-all.yaml"


@pytest.fixture(scope="module")
def built() -> tuple[Any, dict[str, str]]:
    build = make_build(load_banks([FIXTURE]), 7)
    return build, render_all(build)


def test_the_sheet_says_mark_all_and_the_key_and_grid_show_every_right_option(built):
    build, docs = built
    answer = build.sheets[0].items[0].solution.answers[0]
    letters = [chr(ord("A") + answer.options.index(o)) for o in answer.right]
    assert docs["sheet.tex"].count("Mark all that apply.") == 2
    assert docs["sheet.md"].count("Mark all that apply.") == 2
    assert r"\wspick{\wsfilled}" not in docs["sheet.tex"]
    key = docs["key.tex"]
    first = key.split(r"\begin{document}")[1].split(r"\wsquestion")[1]
    assert first.count(r"\wspick{\wsfilled}") == len(answer.right) == 3
    for letter in letters:
        assert rf"\wspick{{\wsfilled}}{{{letter}}}" in first
    md = docs["key.md"].split("## ")[1]
    assert md.count("- (x) ") == 3
    assert f"**{', '.join(letters)}**" in docs["key-grid.md"]
