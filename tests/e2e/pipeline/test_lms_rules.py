"""Fail early (issue 32 §6): what an LMS export refuses in a bank is found by ``check`` and
by ``build --export`` before a sheet is drawn or TeX runs, with the export's own message and
the bank's file and line (a pool whose alternatives differ in points passed ``check``, then
``build --export moodle`` stopped after all the drawing and TeX)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.conftest import ROOT
from worksheetgen.cli import main

UNEQUAL = """
sheet: {id: pool-points, title: Pool points}
questions:
  - id: q-softmax
    family: softmax
    points: 4
  - pool: mixed
    pick: 1
    from:
      - id: q-causal
        family: causal
        points: 5
      - id: q-scaling
        family: scaling
        points: 3
"""


#: equal totals, but one alternative has a written part and the other none
WRITTEN_IN_ONE = """
questions:
  - pool: why
    from:
      - id: w-soft
        family: softmax
        points: 6
      - id: w-keys
        family: identical-keys
        points: 6
        params: {T: 3, d_k: 2}
"""


#: equal totals shared out differently between graded and written parts
WRITTEN_SHARES = """
questions:
  - pool: why
    from:
      - id: w-scale
        family: scale-effect
        points: 6
        params: {n: 2, d_k: {choices: [4, 9, 16]}}
      - id: w-keys
        family: identical-keys
        points: 6
        params: {T: 3, d_k: 2}
"""


BANKS = {"unequal": UNEQUAL, "written-in-one": WRITTEN_IN_ONE, "written-shares": WRITTEN_SHARES}


def _export_message(tmp_path, bank, fmt: str) -> str:
    """What ``export --to fmt`` says of the bank's key (built without the export)."""
    runner = CliRunner()
    out = tmp_path / "built"
    args = ["build", "--seed", "42", "--versions", "12", "--no-pdf", "--bank", str(bank)]
    assert runner.invoke(main, [*args, "--out", str(out), "-q"]).exit_code == 0
    (key,) = out.glob("*/key.json")
    result = runner.invoke(main, ["export", "--to", fmt, "--key", str(key), "--out", "-"])
    assert result.exit_code == 1
    prefix = f"worksheetgen: error: {key}: "
    assert result.output.startswith(prefix), result.output
    return result.output[len(prefix) :].strip()


@pytest.mark.parametrize("name", sorted(BANKS))
@pytest.mark.parametrize("fmt", ["moodle", "qti"])
def test_build_export_refuses_before_drawing_with_the_exports_own_words(
    name, fmt, tmp_path, write_bank, monkeypatch
):
    bank = write_bank(BANKS[name])
    said = _export_message(tmp_path, bank, fmt)
    from worksheetgen.pipeline import build as build_module

    def no_rendering(*args, **kwargs):
        raise AssertionError("sheets were drawn and set before the refusal")

    monkeypatch.setattr(build_module, "Renderer", no_rendering)
    out = tmp_path / "o"
    result = CliRunner().invoke(
        main,
        ["build", "--seed", "1", "--versions", "3", "--bank", str(bank), "--export", fmt]
        + ["--out", str(out)],
    )
    assert result.exit_code == 1, result.output
    line = result.output.strip()
    assert "\n" not in line and "Traceback" not in line
    assert line.startswith(f"worksheetgen: error: {bank}:"), line  # the bank, with its line
    assert line.endswith(said), (line, said)
    assert not out.exists()


@pytest.mark.parametrize("name", sorted(BANKS))
def test_check_reports_what_an_export_would_refuse(name, tmp_path, write_bank):
    bank = write_bank(BANKS[name])
    said = _export_message(tmp_path, bank, "moodle")
    runner = CliRunner()
    noted = runner.invoke(main, ["check", "--bank", str(bank), "--stress", "2"])
    assert noted.exit_code == 0, noted.output  # a paper build takes it: a note
    assert "note: an LMS export" in noted.output and said in noted.output
    failed = runner.invoke(
        main, ["check", "--bank", str(bank), "--stress", "2", "--export", "moodle"]
    )
    assert failed.exit_code == 1
    assert said in failed.output and "failing: --export moodle" in failed.output


def test_gift_refuses_a_pool_of_pick_two_before_drawing(tmp_path):
    result = CliRunner().invoke(
        main,
        ["build", "--seed", "1", "--bank", str(ROOT / "banks" / "quiz.yaml"), "--no-pdf"]
        + ["--export", "gift", "--out", str(tmp_path / "o")],
    )
    assert result.exit_code == 1
    assert "pool shapes: expected a pool GIFT can deal as the sheets did, got pick 2" in (
        result.output
    )
    assert not (tmp_path / "o").exists()
