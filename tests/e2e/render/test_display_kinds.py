"""Display kinds are template partials: each shown value is drawn by its kind's partial,
which a template folder of one's own can replace."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tests.conftest import ROOT
from tests.solved import make_build
from worksheetgen.bank.load import load_banks
from worksheetgen.cli import main


def test_a_kinds_partial_of_ones_own_draws_every_value_of_that_kind(tmp_path: Path) -> None:
    own = tmp_path / "templates" / "markdown" / "shown"
    own.mkdir(parents=True)
    (own / "scalar.md.j2").write_text(
        "{% macro show(g) %}\\boxed{ {{- g.value -}} }{% endmacro %}\n", encoding="utf-8"
    )
    bank = str(ROOT / "banks" / "note.yaml")
    args = ["build", "--seed", "1", "--bank", bank, "--no-pdf", "--quiet"]
    for out, extra in (("bundled", []), ("own", ["--templates", str(tmp_path / "templates")])):
        result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / out), *extra])
        assert result.exit_code == 0, result.output
    (bundled,) = (tmp_path / "bundled").iterdir()
    (own_build,) = (tmp_path / "own").iterdir()
    ours = (bundled / "sheet.md").read_text(encoding="utf-8")
    theirs = (own_build / "sheet.md").read_text(encoding="utf-8")
    build = make_build(load_banks([Path(bank)]), 1)
    scalars = [g for i in build.sheets[0].items for g in i.solution.shown if g.kind == "scalar"]
    assert scalars
    assert "\\boxed{" not in ours
    assert theirs.count("\\boxed{") == len(scalars)
    # matrices and the LaTeX are drawn by the bundled partials as before
    assert (bundled / "sheet.tex").read_bytes() == (own_build / "sheet.tex").read_bytes()
    assert ours.count("\\begin{bmatrix}") == theirs.count("\\begin{bmatrix}")
