"""The lean speed patches of the bundled preamble are one template block a template of
one's own can leave out; without them the documents still compile.

A behaviour across modules, not one module's tests (the package as a whole)."""

from __future__ import annotations

from tests.conftest import ROOT

LATEX = ROOT / "templates" / "latex"


#: a line from each of the three patches (array's templates, \begin/\end, amsmath's matrices)
PATCHES = (r"\def\ws@cachedpream", r"\def\ws@quickbegin", r"\def\bmatrix")


def _lean_text() -> str:
    """The lean block of the bundled base template (plain TeX, nothing rendered in it)."""
    base = (LATEX / "base.tex.j2").read_text(encoding="utf-8")
    start = base.index("((* block lean *))\n") + len("((* block lean *))\n")
    return base[start : base.index("((* endblock *))", start)]


def test_the_bundled_preamble_has_the_lean_patches_in_their_block() -> None:
    lean = _lean_text()
    assert "(((" not in lean and "((*" not in lean
    assert all(p in lean for p in PATCHES)
