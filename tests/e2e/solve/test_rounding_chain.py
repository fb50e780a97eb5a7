"""A slip must not pass for right however the student rounds: its printed value, its value to
every digit, and its value worked from rounded earlier steps all lie outside the key's margin."""

from __future__ import annotations

import json

from click.testing import CliRunner

from worksheetgen.cli import main


def test_check_stress_alone_sweeps_and_exits_zero(tmp_path):
    bank = tmp_path / "b.yaml"
    bank.write_text(
        json.dumps(
            {
                "sheet": {"id": "t", "title": "T"},
                "questions": [{"id": "lab", "family": "lab3", "params": {"T": 3}}],
            }
        )
    )
    res = CliRunner().invoke(main, ["check", "--stress", "--bank", str(bank), "--decimals", "2"])
    assert res.exit_code == 0, res.output
    assert "at 2 decimals: 1 questions x 50 seeds" in res.output
    assert res.output.splitlines()[-1].startswith("OK: 1 bank x decimals runs, 50 draws")
