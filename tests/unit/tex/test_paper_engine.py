"""Paper size and TeX engine as course settings: worksheetgen.toml's paper and engine, the
--paper and --engine options (which win), and what each does to the PDFs.

A behaviour across modules, not one module's tests (errors, pipeline.build, pipeline.config,
tex.run)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from worksheetgen.pipeline.build import BuildOptions, build
from worksheetgen.pipeline.config import load_config

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="TeX is not installed")


needs_lua = pytest.mark.skipif(shutil.which("lualatex") is None, reason="no LuaLaTeX")


needs_poppler = pytest.mark.skipif(shutil.which("pdfinfo") is None, reason="no pdfinfo")


def _size(pdf: Path) -> str:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True)
    return re.search(r"Page size:\s+(.*)", info.stdout).group(1)


def _fonts(pdf: Path) -> str:
    return subprocess.run(["pdffonts", str(pdf)], capture_output=True, text=True, check=True).stdout


def test_paper_and_engine_come_from_the_file_and_the_options_win(tmp_path):
    (tmp_path / "course").mkdir()
    path = tmp_path / "course" / "worksheetgen.toml"
    path.write_text('paper = "letter"\nengine = "lualatex"\n', encoding="utf-8")
    config = load_config(str(path), environ={})
    assert config.settings["paper"].value == "letter"
    assert config.settings["paper"].source == f"{path}:1"
    assert config.settings["engine"].source == f"{path}:2"
    config = load_config(str(path), {"paper": "a4", "engine": "auto"}, environ={})
    assert (config.value("paper"), config.settings["paper"].source) == ("a4", "--paper")
    assert (config.value("engine"), config.settings["engine"].source) == ("auto", "--engine")
    default = load_config(None, start=tmp_path / "nowhere", environ={})
    assert (default.value("paper"), default.value("engine")) == ("a4", "auto")


def test_the_default_paper_is_a4_in_the_very_bytes_of_today(tmp_path):
    a4 = build(BuildOptions(seed=3, out=str(tmp_path / "a"), pdf=False)).folder
    letter = build(BuildOptions(seed=3, out=str(tmp_path / "b"), pdf=False, paper="letter"))
    for name in ("sheet.tex", "key.tex", "key-grid.tex"):
        ours = (a4 / name).read_text("utf-8")
        assert "\\documentclass[11pt,a4paper]{article}" in ours
        theirs = (letter.folder / name).read_text("utf-8")
        assert theirs == ours.replace("a4paper", "letterpaper", 1)
    for name in ("sheet.md", "key.md", "key.json"):
        assert (a4 / name).read_bytes() == (letter.folder / name).read_bytes()


@needs_tex
@needs_poppler
def test_letter_lays_out_on_letter_paper_for_one_sheet_and_a_class(tmp_path):
    one = build(BuildOptions(seed=3, out=str(tmp_path / "one"), paper="letter")).folder
    for name in ("sheet.pdf", "key.pdf", "key-grid.pdf"):
        assert "612 x 792 pts (letter)" in _size(one / name)
    cls = build(BuildOptions(seed=3, out=str(tmp_path / "c"), paper="letter", versions=2)).folder
    for name in ("sheets.pdf", "keys.pdf", "keys-grid.pdf", "versions/A-sheet.pdf"):
        assert "612 x 792 pts (letter)" in _size(cls / name)
    a4 = build(BuildOptions(seed=3, out=str(tmp_path / "a4"))).folder
    assert "(A4)" in _size(a4 / "sheet.pdf")


@needs_tex
@needs_lua
@needs_poppler
def test_lualatex_asked_for_prints_plain_latin_text_with_lualatex(tmp_path):
    folder = build(BuildOptions(seed=3, out=str(tmp_path), engine="lualatex")).folder
    for name in ("sheet.pdf", "key-grid.pdf"):
        # LuaLaTeX's OpenType Pagella (pdfLaTeX sets the same typeface from Type 1 fonts)
        assert re.search(r"TeXGyrePagella-Regular +CID Type 0C", _fonts(folder / name))
    auto = build(BuildOptions(seed=3, out=str(tmp_path / "auto"))).folder
    assert "CID Type 0C" not in _fonts(auto / "sheet.pdf")


@needs_tex
@needs_lua
@needs_poppler
def test_a_class_with_lualatex_asked_for_typesets_every_document_with_it(tmp_path):
    result = build(BuildOptions(seed=3, out=str(tmp_path), engine="lualatex", versions=2))
    assert set(result.details.engines.values()) == {"lualatex"}
    for name in ("sheets.pdf", "keys.pdf", "keys-grid.pdf"):
        assert re.search(r"TeXGyrePagella-Regular +CID Type 0C", _fonts(result.folder / name))


@pytest.mark.parametrize("versions", [None, 2])
def test_an_engine_asked_for_and_not_installed_says_so_before_any_work(
    tmp_path, monkeypatch, versions
):
    import worksheetgen.tex.run as texrun
    from worksheetgen.errors import CompileError

    monkeypatch.setattr(texrun, "find_engine", lambda engine="pdflatex": None)
    with pytest.raises(CompileError, match=r"no TeX engine \(lualatex\) found on PATH \(engine"):
        build(BuildOptions(seed=1, out=str(tmp_path), engine="lualatex", versions=versions))
    assert not any(tmp_path.iterdir())
