"""`worksheetgen check`: stress-draws every item and reports failures, redraws and spread."""

from __future__ import annotations

import pytest

from tests.paths import ROOT
from worksheetgen.bank.load import load_banks
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
