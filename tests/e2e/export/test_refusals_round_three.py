"""Issue 34, sections 3 and 4: a refused pooled export names every failing pool and the bank
it came from; a pool of pick 2 or more whose picks Canvas would weigh by their blanks, not
their points, is refused for Canvas with what to change."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.unit.export.test_refusals_round_three import TWO_POOLS, _key
from worksheetgen.cli import main
from worksheetgen.errors import ExportError
from worksheetgen.export import export_bytes


def test_a_build_that_refuses_its_export_names_the_bank_not_a_key_json(tmp_path):
    bank = tmp_path / "two.yaml"
    bank.write_text(TWO_POOLS, "utf-8")
    out = tmp_path / "out"
    argv = ["build", "--seed", "1", "--versions", "4", "--no-pdf", "--bank", str(bank)]
    result = CliRunner().invoke(main, [*argv, "--out", str(out), "--export", "moodle"])
    assert result.exit_code != 0
    (line,) = [x for x in result.output.splitlines() if x.strip()]
    assert line.startswith(f"worksheetgen: error: {bank}:5: pool one: ")  # its line too
    assert "key.json" not in line and "Traceback" not in result.output
    assert not out.exists() or not any(out.rglob("key.json"))  # nothing written


def test_the_refusal_names_the_option_the_user_ran(tmp_path):
    """The Canvas refusal (and GIFT's of a pick-2 pool) says "export it with" the user's own
    option: ``export --to moodle`` after ``export --to qti``, ``--export moodle`` after
    ``build --export qti`` (it said --to in both)."""
    text = TWO_POOLS.replace("points: 5}", "points: 4}")
    key = tmp_path / "key.json"
    (tmp_path / "k").mkdir()
    key.write_text(json.dumps(_key(tmp_path / "k", text)), "utf-8")
    runner = CliRunner()
    for fmt, said in [
        ("qti", "export it with --to moodle"),
        ("gift", "export it with --to moodle"),
    ]:
        out = tmp_path / f"x.{fmt}"
        argv = ["export", "--to", fmt, "--key", str(key), "--out", str(out)]
        result = runner.invoke(main, argv)
        assert result.exit_code != 0 and not out.exists()
        (line,) = [x for x in result.output.splitlines() if x.strip()]
        assert said in line and "--export" not in line, line
    bank = tmp_path / "two.yaml"
    bank.write_text(text, "utf-8")
    argv = ["build", "--seed", "1", "--versions", "4", "--no-pdf", "--bank", str(bank)]
    result = runner.invoke(main, [*argv, "--out", str(tmp_path / "b"), "--export", "qti"])
    assert result.exit_code != 0
    (line,) = [x for x in result.output.splitlines() if x.strip()]
    assert "export it with --export moodle" in line and "--to" not in line, line
    # GIFT's refusal of a pick-2 pool, made before any sheet is drawn (pipeline/lmsrules)
    result = runner.invoke(main, [*argv, "--out", str(tmp_path / "g"), "--export", "gift"])
    assert result.exit_code != 0
    (line,) = [x for x in result.output.splitlines() if x.strip()]
    assert "export it with --export moodle" in line and "--to" not in line, line
    # the library's export_bytes is the export command's route
    with pytest.raises(ExportError, match="export it with --to moodle"):
        export_bytes(json.loads(key.read_text("utf-8")), "qti")
