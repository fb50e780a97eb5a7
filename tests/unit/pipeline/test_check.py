"""`worksheetgen check`: stress-draws every item and reports failures, redraws and spread."""

from __future__ import annotations

import pytest

from tests.paths import ROOT
from worksheetgen.bank.load import load_banks
from worksheetgen.cli import main
from worksheetgen.errors import InvariantError
from worksheetgen.model import SheetIdentity
from worksheetgen.pipeline.check import check_banks

REDRAWN = """
sheet: {id: chk}
questions:
  - id: small-scores
    family: softmax
    params: {T: 2, low: 0, high: 1, d_k: 2}
  - id: note-example
    family: softmax
    params: {S: [[2, 0], [0, 2]], d_k: 2}
"""

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


def test_check_counts_redraws_and_pinned_coincidences(write_bank):
    report = check_banks([str(write_bank(REDRAWN))], stress=12)
    redrawn, pinned = report.items
    assert report.ok and report.draws == 24
    assert redrawn.redraws >= 1 and redrawn.redrawn_draws >= 1 and redrawn.max_redraws >= 1
    assert redrawn.distinct_variants >= 2  # S is drawn; symmetric ones are redrawn
    assert not redrawn.fixed
    assert pinned.fixed and pinned.redraws == 0
    assert pinned.coincident == ("softmax-over-columns gives the correct answer",)
    # the note's example: softmax([sqrt 2, 0]) = 0.8044 every time
    assert pinned.spread.low == pinned.spread.high == pytest.approx(0.80442, abs=1e-5)
    assert pinned.ms_per_draw > 0


def test_check_exits_non_zero_and_names_the_failing_item(runner, write_bank):
    res = runner.invoke(main, ["check", "--bank", str(write_bank(HOPELESS)), "--stress", "3"])
    assert res.exit_code == 1
    assert "always-symmetric  [softmax]" in res.output and "FAILED" in res.output
    assert "failures 3" in res.output
    assert "softmax-over-columns gives the correct answer" in res.output
    assert res.output.strip().splitlines()[-1].startswith("FAILED:")
    assert res.output.strip().endswith("failing: always-symmetric")
    assert "fine  [heads]" in res.output


def test_check_reports_invariant_violations_separately(write_bank, monkeypatch):
    from worksheetgen.solve import item as solve

    real = solve.check_invariants

    def flaky(item, label, exact=None):
        if item.given["h"] == 4:
            raise InvariantError("invariant 'h * d_k = d' failed: test", field=label)
        return real(item, label, exact)

    monkeypatch.setattr(solve, "check_invariants", flaky)
    path = write_bank(
        "questions:\n  - {id: q, family: heads, params: {d: 8, h: {choices: [2, 4]}}}\n"
    )
    (item,) = check_banks([str(path)], stress=20).items
    assert 0 < item.invariant_violations < 20 and item.failures == 0
    assert not item.ok
    assert "h * d_k = d" in item.invariant_messages[0]


def test_check_rejects_an_invalid_bank_in_one_line(runner, write_bank):
    path = write_bank("questions:\n  - {id: q, family: softmax, params: {T: 12}}\n")
    res = runner.invoke(main, ["check", "--bank", str(path)])
    assert res.exit_code != 0
    assert "params.T: expected an integer from 2 to 4, got 12" in res.output
    assert "Traceback" not in res.output


def test_check_stress_must_be_positive(runner):
    res = runner.invoke(main, ["check", "--stress", "0"])
    assert res.exit_code == 2


def test_the_bundled_slips_quiz_passes_the_check():

    bank = ROOT / "banks" / "slips.yaml"
    report = check_banks([str(bank)], stress=6)
    assert report.ok, [m for i in report.items for m in i.failure_messages]
    assert [i.format for i in report.items] == [
        "choice",
        "choice",
        "choice",
        "open",
        "choice",
        "choice",
        "open",
        "open",
        "open",
    ]


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


def test_check_counts_near_uniform_and_all_equal_softmax_rows(write_bank):
    from worksheetgen.pipeline.check import item_lines

    bank = write_bank("""
sheet: {id: chk}
questions:
  - id: flat
    family: softmax
    params: {S: [[1, 1], [2, 0]], d_k: 4}
  - id: peaked
    family: softmax
    params: {S: [[3, 0], [0, 3]], d_k: 4}
""")
    flat, peaked = check_banks([str(bank)], stress=3).items
    # [1, 1] is exactly uniform; softmax([1, 0]) peaks at 0.731
    assert (flat.rows.rows, flat.rows.near_uniform, flat.rows.all_equal) == (6, 3, 3)
    assert flat.equal_draws == 3
    assert flat.rows.median_peak == pytest.approx((0.5 + 0.7311) / 2, abs=1e-3)
    assert (peaked.rows.near_uniform, peaked.rows.all_equal, peaked.equal_draws) == (0, 0, 0)
    line = next(x for x in item_lines(flat) if "softmax rows" in x)
    assert "softmax rows 6: near-uniform (largest weight < 1/n + 0.05) 50.0%" in line
    assert "all-equal 50.0% (in 3 of 3 draws)" in line


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


FAMILY_DEFAULTS = """
sheet: {id: defaults}
questions:
  - {id: softmax, family: softmax}
  - {id: causal, family: causal}
  - {id: lab3, family: lab3}
  - {id: spot, family: spot-the-bug}
  - {id: cross, family: cross, params: {numeric: true}}
  - {id: ident, family: identical-keys}
  - {id: proj, family: projections, params: {softmax: true}}
  - {id: scaling, family: scaling}
  - {id: scale-effect, family: scale-effect}
"""


def _bundled(name: str) -> str:
    from tests.conftest import ROOT

    return str(ROOT / "banks" / name)


@pytest.mark.parametrize("bank", ["defaults", "default.yaml", "note.yaml", "slips.yaml"])
def test_bundled_defaults_keep_uniform_and_near_uniform_softmax_rows_rare(write_bank, bank):
    path = str(write_bank(FAMILY_DEFAULTS)) if bank == "defaults" else _bundled(bank)
    for item in check_banks([path], stress=40).items:
        if not item.rows.rows:
            continue
        assert item.rows.all_equal == 0, (item.id, item.rows)
        assert item.rows.share(item.rows.near_uniform) <= 0.05, (item.id, item.rows)


def test_lab3s_default_draws_informative_rows_for_seed_42(write_bank):
    from worksheetgen.families.common import equal_score_rows, int_scores
    from worksheetgen.solve.draw import draw_variant

    bank = load_banks([write_bank("sheet: {id: t}\nquestions:\n  - {id: lab3, family: lab3}\n")])
    for seed in (42, *range(20)):
        given = draw_variant(bank.questions[0], SheetIdentity(seed, "t")).given
        assert max(max(r) for r in given["Q"] + given["K"]) <= 2  # still easy by hand
        assert equal_score_rows(int_scores(given["Q"], given["K"]), causal=True) == []
