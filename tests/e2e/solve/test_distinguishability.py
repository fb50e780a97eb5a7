"""Drawn variants: every slip must show at the printed digits; else redraw, drop or fail."""

from __future__ import annotations


def test_the_cli_reports_an_undistinguishable_bank_in_one_line(runner, write_bank, tmp_path):
    from worksheetgen.cli import main

    path = write_bank("""
sheet: {id: t}
questions:
  - id: q
    family: softmax
    params: {S: [[2, 0], [0, 2]], d_k: {choices: [2, 4]}}
""")
    res = runner.invoke(
        main,
        ["build", "--seed", "1", "--bank", str(path), "--no-pdf", "--out", str(tmp_path / "o")],
    )
    assert res.exit_code == 1
    assert "softmax-over-columns gives the correct answer" in res.output
    assert "Traceback" not in res.output
