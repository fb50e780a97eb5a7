"""`worksheetgen check`: stress-draws every item and reports failures, redraws and spread."""

from __future__ import annotations

from worksheetgen.cli import main

HOPELESS = """
sheet: {id: chk}
questions:
  - id: fine
    family: heads
    params: {d: 8, h: 2}
  - id: always-symmetric
    family: softmax
    params: {S: [[2, 0], [0, 2]], d_k: {choices: [2, 4]}}
"""


def test_check_default_bank_passes_and_reports_every_item(runner):
    res = runner.invoke(main, ["check", "--stress", "4"])
    assert res.exit_code == 0, res.output
    for qid in ("softmax-table", "scale-effect", "causal-mask", "head-widths", "lab3"):
        assert f"{qid}  [" in res.output
    assert "ms per draw" in res.output and "largest weight min" in res.output
    assert res.output.strip().splitlines()[-1].startswith("OK: 5 questions x 4 seeds = 20 draws")


def test_check_exits_non_zero_and_names_the_failing_item(runner, write_bank):
    res = runner.invoke(main, ["check", "--bank", str(write_bank(HOPELESS)), "--stress", "3"])
    assert res.exit_code == 1
    assert "always-symmetric  [softmax]" in res.output and "FAILED" in res.output
    assert "failures 3" in res.output
    assert "softmax-over-columns gives the correct answer" in res.output
    assert res.output.strip().splitlines()[-1].startswith("FAILED:")
    assert res.output.strip().endswith("failing: always-symmetric")
    assert "fine  [heads]" in res.output


def test_check_rejects_an_invalid_bank_in_one_line(runner, write_bank):
    path = write_bank("questions:\n  - {id: q, family: softmax, params: {T: 12}}\n")
    res = runner.invoke(main, ["check", "--bank", str(path)])
    assert res.exit_code != 0
    assert "params.T: expected an integer from 2 to 4, got 12" in res.output
    assert "Traceback" not in res.output


def test_check_stress_must_be_positive(runner):
    res = runner.invoke(main, ["check", "--stress", "0"])
    assert res.exit_code == 2


def test_check_at_the_decimals_a_build_would_print(runner):
    # build --decimals 0 refuses the default bank: check says so beforehand
    result = runner.invoke(main, ["check", "--stress", "3", "--decimals", "0"])
    assert result.exit_code == 1
    assert "told apart at 0 decimals" in result.output
    assert "failing: softmax-table" in result.output
    result = runner.invoke(main, ["check", "--stress", "3", "--decimals", "3"])
    assert result.exit_code == 0, result.output


def test_check_reports_drawn_variants_that_keep_a_slip_within_the_margin(runner, write_bank):
    # scores of 0..2 at one decimal: no redraw keeps every slip outside A's margin of 0.1
    path = write_bank(
        "questions:\n  - id: coarse\n    family: softmax\n    decimals: 1\n"
        "    params: {T: 2, low: 0, high: 2, d_k: 2}\n"
    )
    result = runner.invoke(main, ["check", "--bank", str(path), "--stress", "3"])
    assert result.exit_code == 0, result.output
    assert (
        "in 3 of 3 draws no redraw kept every slip apart; left out of the distractors: "
        in result.output
    )
    assert "within the key's margin (±0.1) of the correct one" in result.output


def test_check_stress_sweep_prints_the_softmax_rows_of_each_family(runner, write_bank):
    bank = write_bank("""
sheet: {id: chk}
questions:
  - id: flat
    family: softmax
    params: {S: [[1, 1], [2, 0]], d_k: 4}
  - id: widths
    family: heads
""")
    res = runner.invoke(main, ["check", "--stress", "--bank", str(bank), "--decimals", "2"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    at = lines.index("softmax rows per family (every bank and decimals above):")
    assert lines[at + 1].startswith("  softmax: softmax rows 100: near-uniform")
    assert "all-equal 50.0% (in 50 of 50 draws)" in lines[at + 1]
    assert lines[at + 2].startswith("OK:")  # heads has no softmax rows
