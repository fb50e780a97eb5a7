"""Large print's gates and its LaTeX (issue 37 §2): a scannable build refuses it in one line,
nothing written; the class's combined LaTeX defines large print only when a sheet asks for
it, and then only that sheet calls it. How the pages look is tests/e2e/test_large_print_paper.py's
question."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.paths import ROOT
from worksheetgen.cli import main

BANK = str(ROOT / "banks" / "quiz.yaml")
NO_SECRET = {"WORKSHEETGEN_SECRET": ""}


def _run(runner, tmp_path: Path, *args: str):
    return runner.invoke(
        main,
        ["build", "--seed", "1", "--no-pdf", "--bank", BANK, "--out", str(tmp_path / "o"), *args],
        env=NO_SECRET,
    )


def _refused(result, tmp_path: Path, words: str) -> None:
    assert result.exit_code != 0
    lines = [ln for ln in result.output.splitlines() if "error" in ln]
    assert len(lines) == 1 and words in lines[0], result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_large_print_and_scannable_are_refused_together(runner, tmp_path):
    result = _run(runner, tmp_path, "--scannable", "--large-print")
    _refused(result, tmp_path, "--large-print: expected a build that is not --scannable")


def test_a_roster_asking_large_print_is_refused_for_a_scannable_class(runner, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("name,id,large_print\nAda,a1,yes\nBob,b1,\nCy,c1,yes\n", "utf-8")
    result = _run(runner, tmp_path, "--scannable", "--roster", str(roster))
    _refused(result, tmp_path, "--scannable: expected no student in large print")
    assert "got 2 with large_print yes in the roster" in result.output


@pytest.mark.parametrize("column", [False, True])
def test_the_class_latex_names_large_print_only_where_a_sheet_asks_it(runner, tmp_path, column):
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "name,id,large_print\nAda,a1,yes\nBob,b1,no\n" if column else "name,id\nAda,a1\nBob,b1\n",
        "utf-8",
    )
    result = _run(runner, tmp_path, "--roster", str(roster))
    assert result.exit_code == 0, result.output
    (folder,) = (tmp_path / "o").iterdir()
    sheets = (folder / "sheets.tex").read_text("utf-8")
    keys = (folder / "keys.tex").read_text("utf-8")
    if not column:
        assert "wslargeprint" not in sheets and "wslargeprint" not in keys
        return
    assert "\\newcommand{\\wslargeprint}" in sheets
    # called once, in Ada's sheet (before Bob's begins), never in a key
    assert sheets.count("\n\\wslargeprint\n") == 1
    assert sheets.index("\n\\wslargeprint\n") < sheets.index("{Bob}")
    assert "\n\\wslargeprint\n" not in keys
