"""pipeline/engine.py: one engine choice for a lone sheet and a class (a class of one).

The build's engine is chosen, refused or found missing before any sheet is drawn, by the
banks' and the roster's texts, for a lone sheet as for a class; each rendered document is then
compiled with the forced engine, else the one its own text needs (``document_engine``).
None of these tests runs TeX: the engines are found (or not) by a stand-in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from worksheetgen.bank.load import default_bank_path
from worksheetgen.errors import CompileError, ConfigError
from worksheetgen.pipeline import renderer as renderer_module
from worksheetgen.pipeline.build import BuildOptions, build
from worksheetgen.pipeline.engine import document_engine

GREEK_TITLE = "Αυτοπροσοχή"
REFUSED = (
    "engine: expected text pdflatex can print, got letters such as Α υ τ ο π in the banks; "
    'use --engine lualatex (or engine = "lualatex" or "auto" in worksheetgen.toml)'
)
LUA_MISSING = (
    "no TeX engine (lualatex) found on PATH (needed to print letters such as Α υ τ ο π); "
    "install LuaLaTeX"
)


def _greek_bank(tmp_path: Path) -> str:
    """The default bank with a Greek title (letters pdfLaTeX's fonts lack)."""
    text = default_bank_path().read_text(encoding="utf-8")
    text = text.replace("title: Self-Attention Worksheet", f'title: "{GREEK_TITLE}"', 1)
    assert GREEK_TITLE in text
    path = tmp_path / "greek.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.fixture
def no_drawing(monkeypatch):
    """A sheet drawn fails the test: every refusal here comes before any draw."""

    def drawn(*args, **kwargs):
        raise AssertionError("a sheet was drawn before the refusal")

    monkeypatch.setattr(renderer_module, "build_sheet", drawn)


def _installed(monkeypatch, *engines: str) -> None:
    """Only ``engines`` are on PATH (none of them is run here)."""
    import worksheetgen.tex.run as texrun

    monkeypatch.setattr(
        texrun, "find_engine", lambda e="pdflatex": "/bin/false" if e in engines else None
    )


@pytest.mark.parametrize("versions", [None, 2], ids=["lone", "class"])
def test_pdflatex_asked_for_a_bank_it_cannot_print_is_one_refusal_before_any_draw(
    tmp_path, monkeypatch, no_drawing, versions
):
    # a lone sheet used to draw and render first and name its sheet.tex; now it is refused as
    # a class is, before any work, naming where the letters are
    _installed(monkeypatch, "pdflatex", "lualatex")
    options = BuildOptions(
        seed=1,
        banks=[_greek_bank(tmp_path)],
        out=str(tmp_path / "out"),
        engine="pdflatex",
        versions=versions,
    )
    with pytest.raises(ConfigError) as caught:
        build(options)
    assert str(caught.value) == REFUSED
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("installed", [("pdflatex",), ()], ids=["no-lualatex", "no-tex"])
@pytest.mark.parametrize("versions", [None, 2], ids=["lone", "class"])
def test_a_bank_that_needs_lualatex_without_it_names_the_letters_before_any_draw(
    tmp_path, monkeypatch, no_drawing, versions, installed
):
    # a lone sheet used to say "(needed for sheet)" once drawn and rendered, or, with no TeX
    # at all, that pdflatex was missing; now the one line a class gives
    _installed(monkeypatch, *installed)
    options = BuildOptions(
        seed=1, banks=[_greek_bank(tmp_path)], out=str(tmp_path / "out"), versions=versions
    )
    with pytest.raises(CompileError) as caught:
        build(options)
    assert str(caught.value).startswith(LUA_MISSING)
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_without_pdfs_no_engine_is_required_or_refused(tmp_path, monkeypatch):
    # a lone sheet's --no-pdf build with pdflatex forced and Greek in the bank is written, as
    # before: the .tex files are there for the user's own TeX
    _installed(monkeypatch)
    options = BuildOptions(
        seed=1, banks=[_greek_bank(tmp_path)], out=str(tmp_path), engine="pdflatex", pdf=False
    )
    folder = build(options).folder
    assert GREEK_TITLE in (folder / "sheet.tex").read_text(encoding="utf-8")


def test_each_document_is_compiled_with_the_forced_engine_else_by_its_own_text(tmp_path):
    assert document_engine("sheet.tex", False, None, "plain") == "pdflatex"
    assert document_engine("sheet.tex", True, None, "Ω") == "lualatex"
    assert document_engine("sheet.tex", False, "lualatex", "plain") == "lualatex"
    assert document_engine("sheet.tex", True, "lualatex", "Ω") == "lualatex"
    assert document_engine("key.tex", False, "pdflatex", "plain") == "pdflatex"
    with pytest.raises(ConfigError, match=r"got letters such as Ω ж in key\.tex; use --engine"):
        document_engine("key.tex", True, "pdflatex", "a Ω b ж")
    held = tmp_path / "sheets.tex"
    held.write_text("Ελένη", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"got letters such as Ε λ έ ν η in sheets\.tex;"):
        document_engine("sheets.tex", True, "pdflatex", held)
