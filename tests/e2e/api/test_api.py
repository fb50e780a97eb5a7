"""The Python API: the commands' work as calls that return records, print nothing, refuse
in the commands' words, and write what the command writes."""

from __future__ import annotations

from pathlib import Path

from tests.unit.api.test_api import QUIZ
from worksheetgen import api
from worksheetgen.cli import main


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_build_writes_what_the_command_writes_and_prints_nothing(
    tmp_path, runner, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    built = api.build(11, banks=QUIZ, versions=3, pdf=False, out=tmp_path / "api")
    assert capsys.readouterr() == ("", "")
    assert built.sheet_count == 3 and (built.folder / "key.json").is_file()
    result = runner.invoke(
        main,
        ["build", "--seed", "11", "--bank", str(QUIZ), "--versions", "3", "--no-pdf", "-q"]
        + ["--out", str(tmp_path / "cli")],
    )
    assert result.exit_code == 0, result.output
    (cli_folder,) = (tmp_path / "cli").iterdir()
    assert _tree(built.folder) == _tree(cli_folder)
