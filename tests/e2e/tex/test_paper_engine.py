"""Paper size and TeX engine as course settings: worksheetgen.toml's paper and engine, the
--paper and --engine options (which win), and what each does to the PDFs."""

from __future__ import annotations

import pytest

from tests.unit.tex.test_paper_engine import needs_tex
from worksheetgen.cli import main

NO_SECRET = {"WORKSHEETGEN_SECRET": ""}


def test_config_shows_paper_and_engine(runner, tmp_path):
    path = tmp_path / "worksheetgen.toml"
    path.write_text('engine = "pdflatex"\n', encoding="utf-8")
    result = runner.invoke(main, ["config", "--config", str(path)], env=NO_SECRET)
    assert result.exit_code == 0, result.output
    assert "paper = a4  (default)" in result.output
    assert f"engine = pdflatex  ({path}:1)" in result.output


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ('paper = "a5"\n', "paper: expected one of a4, letter, got 'a5'"),
        ('engine = "xelatex"\n', "engine: expected one of auto, pdflatex, lualatex, got 'xelatex'"),
    ],
)
def test_a_paper_or_engine_the_tool_does_not_know_is_one_line(runner, tmp_path, text, what):
    path = tmp_path / "worksheetgen.toml"
    path.write_text(text, encoding="utf-8")
    args = ["build", "--seed", "1", "--no-pdf", "--out", str(tmp_path), "--config", str(path)]
    result = runner.invoke(main, args, env=NO_SECRET)
    assert result.exit_code == 1
    assert result.output == f"worksheetgen: error: {path}:1: {what}\n"


@needs_tex
def test_pdflatex_asked_for_names_it_cannot_print_is_one_line_and_writes_nothing(runner, tmp_path):
    roster = tmp_path / "class.csv"
    roster.write_text("name,id\nΕλένη Παπαδοπούλου,e1\nAda,a2\n", encoding="utf-8")
    out = tmp_path / "out"
    args = ["build", "--seed", "1", "--roster", str(roster), "--out", str(out)]
    result = runner.invoke(main, [*args, "--engine", "pdflatex"], env=NO_SECRET)
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert result.output.startswith("worksheetgen: error: engine: expected text pdflatex can")
    assert "Ε" in result.output and "--engine lualatex" in result.output
    assert not out.exists() or not any(out.iterdir())
