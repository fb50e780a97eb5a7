"""The lean speed patches of the bundled preamble are one template block a template of
one's own can leave out; without them the documents still compile."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tests.conftest import ROOT, needs_tex
from tests.unit.tex.test_lean_block import LATEX, PATCHES, _lean_text
from worksheetgen.cli import main


def _without_lean(folder: Path) -> Path:
    """A --templates folder whose sheet and key are the bundled ones with an empty lean block."""
    latex = folder / "latex"
    latex.mkdir(parents=True)
    for kind in ("sheet", "key"):
        bundled = (LATEX / f"{kind}.tex.j2").read_text(encoding="utf-8")
        (latex / f"{kind}.tex.j2").write_text(
            bundled + "((* block lean *))((* endblock *))\n", encoding="utf-8"
        )
    return folder


def _build(out: Path, *extra: str) -> Path:
    result = CliRunner().invoke(
        main,
        ["build", "--seed", "42", "--bank", str(ROOT / "banks" / "note.yaml"), "--out", str(out)]
        + ["--quiet", *extra],
    )
    assert result.exit_code == 0, result.output
    (folder,) = out.iterdir()
    return folder


def test_an_empty_lean_block_leaves_out_only_the_patches(tmp_path: Path) -> None:
    bundled = _build(tmp_path / "bundled", "--no-pdf")
    own = _without_lean(tmp_path / "t")
    lean_less = _build(tmp_path / "own", "--no-pdf", "--templates", str(own))
    lean = _lean_text()
    for name in ("sheet.tex", "key.tex"):
        ours = (bundled / name).read_text(encoding="utf-8")
        theirs = (lean_less / name).read_text(encoding="utf-8")
        assert ours.count(lean) == 1
        assert not any(p in theirs for p in PATCHES)
        assert ours.replace(lean, "") == theirs
    assert (bundled / "key.md").read_bytes() == (lean_less / "key.md").read_bytes()


@needs_tex
def test_documents_without_the_lean_patches_still_compile(tmp_path: Path) -> None:
    folder = _build(tmp_path / "out", "--templates", str(_without_lean(tmp_path / "t")))
    for name in ("sheet.pdf", "key.pdf"):
        assert (folder / name).read_bytes().startswith(b"%PDF")
