"""Drawn variants: every slip must show at the printed digits; else redraw, drop or fail.

A behaviour across modules, not one module's tests (attention, bank.load, errors, exact,
families, keyjson.write, model, solve.draw, solve.item)."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.oracles import half_unit, softmax
from tests.paths import ROOT
from tests.solved import make_build
from worksheetgen.attention import slips as mc
from worksheetgen.bank.load import load_banks
from worksheetgen.errors import DrawError
from worksheetgen.exact import number as ex
from worksheetgen.model import SheetIdentity
from worksheetgen.solve.draw import MAX_REDRAWS, draw_variant
from worksheetgen.solve.item import make_item


def one_spec(write_bank, body: str):
    path = write_bank("sheet: {id: t, title: T}\nquestions:\n" + body.lstrip("\n"))
    return load_banks([path]).questions[0]


def test_pinned_d_k_of_one_keeps_the_item_without_the_scale_slips(write_bank):
    spec = one_spec(
        write_bank,
        """
  - id: q
    family: softmax
    params: {S: [[2, 0], [1, 3]], d_k: 1}
""",
    )
    item = make_item(spec, SheetIdentity(7, "t"), 1)
    names = [d.misconception for d in item.solution.distractors]
    assert names == ["softmax-over-columns"]
    # dividing by sqrt(1) changes nothing: the scale slips cannot be made, so they are not
    # coincidences to report but slips that do not apply
    assert item.solution.coincident == ()


def test_drawn_d_k_of_one_is_kept_and_only_its_variants_drop_the_scale_slips(write_bank):
    spec = one_spec(
        write_bank,
        """
  - id: q
    family: softmax
    params: {S: [[2, 0], [1, 3]], d_k: {choices: [1, 2]}}
""",
    )
    seen = set()
    for seed in range(30):
        v = draw_variant(spec, SheetIdentity(seed, "t"))
        slips = {s.name for s in v.slips}
        if v.given["d_k"] == 1:
            assert slips == {"softmax-over-columns"}
        else:
            assert {"scale-by-dk", "no-scale"} <= slips
        seen.add(v.given["d_k"])
        assert draw_variant(spec, SheetIdentity(seed, "t")).given == v.given  # reproducible
    assert seen == {1, 2}


def test_the_note_symmetric_example_drops_softmax_over_columns_and_says_so(tmp_path):
    bank = load_banks([ROOT / "banks" / "practice.yaml"])
    build = make_build(bank, 42)
    item = next(i for i in build.sheets[0].items if i.spec.id == "worked-example")
    assert [d.misconception for d in item.solution.distractors] == ["scale-by-dk", "no-scale"]
    assert [(c.misconception, c.same_as) for c in item.solution.coincident] == [
        ("softmax-over-columns", "correct")
    ]
    from worksheetgen.keyjson.write import key_json

    q = next(q for q in key_json(build)["sheets"][0]["questions"] if q["id"] == "worked-example")
    assert q["coincident"][0]["misconception"] == "softmax-over-columns"
    assert q["coincident"][0]["same_as"] == "correct"
    # the distractors are what the note says the slips give: softmax([1, 0]) and softmax([2, 0])
    rounded = {d["misconception"]: d["rounded"]["A"][0] for d in q["distractors"]}
    assert rounded == {"scale-by-dk": ["0.73", "0.27"], "no-scale": ["0.88", "0.12"]}


def test_a_pinned_choice_item_left_with_too_few_distractors_fails_naming_it(write_bank):
    spec = one_spec(
        write_bank,
        """
  - id: sym
    family: softmax
    format: choice
    params: {S: [[2, 0], [0, 2]], d_k: 1}
""",
    )
    with pytest.raises(DrawError) as err:
        make_item(spec, SheetIdentity(1, "t"), 1)
    text = str(err.value)
    assert "bank.yaml:3" in text and "questions[sym]" in text
    assert "softmax-over-columns gives the correct answer" in text
    assert "expected at least 2 distinguishable distractors" in text


def test_a_pinned_symmetric_choice_item_with_a_real_scale_still_has_two_options(write_bank):
    spec = one_spec(
        write_bank,
        """
  - id: sym
    family: softmax
    format: choice
    params: {S: [[2, 0], [0, 2]], d_k: 2}
""",
    )
    item = make_item(spec, SheetIdentity(1, "t"), 1)
    assert sorted(c.misconception or "" for c in item.solution.choices) == [
        "",
        "no-scale",
        "scale-by-dk",
    ]


def test_drawn_variants_that_always_collide_fail_after_bounded_redraws(write_bank):
    spec = one_spec(
        write_bank,
        """
  - id: always-symmetric
    family: softmax
    params: {S: [[2, 0], [0, 2]], d_k: {choices: [2, 4]}}
""",
    )
    with pytest.raises(DrawError) as err:
        draw_variant(spec, SheetIdentity(3, "t"))
    text = str(err.value)
    assert "bank.yaml:3: questions[always-symmetric]" in text
    assert f"got none in {MAX_REDRAWS + 1} draws" in text
    assert text.endswith("; print more decimals or let the parameters vary more")
    assert "softmax-over-columns gives the correct answer" in text


def test_default_bank_draws_no_uniform_table_and_every_slip_prints_differently():
    bank = load_banks([ROOT / "banks" / "default.yaml"])
    spec = next(q for q in bank.questions if q.id == "softmax-table")
    for seed in range(40):
        item = make_item(spec, SheetIdentity(seed, bank.info.slug), 1)
        s, d_k = item.given["S"], item.given["d_k"]
        a = [softmax([x / math.sqrt(d_k) for x in row]) for row in s]
        assert not all(abs(w - 0.5) < 1e-12 for row in a for w in row), s
        printed = [json.dumps(item.solution.answer("A").rounded)]
        printed += [json.dumps(d.rounded["A"]) for d in item.solution.distractors]
        assert len(set(printed)) == len(printed), (seed, printed)


def test_every_item_of_both_bundled_banks_builds_for_many_seeds():
    for name in ("default.yaml", "practice.yaml"):
        bank = load_banks([ROOT / "banks" / name])
        for seed in range(25):
            build = make_build(bank, seed)
            for item in build.sheets[0].items:
                slips = [d.misconception for d in item.solution.distractors]
                assert len(slips) == len(set(slips))


@settings(max_examples=300, deadline=None)
@given(
    num=st.integers(-(10**6), 10**6),
    den=st.integers(1, 10**4),
    nudge=st.integers(-50, 50),
    scale=st.sampled_from([1, 10**-6, 10**-12, 10**-30]),
    decimals=st.integers(0, 4),
)
def test_entries_near_half_a_unit_apart_are_told_apart_exactly(num, den, nudge, scale, decimals):
    # two entries whose distance is half a unit of the last printed digit, give or take a
    # little: the quick decision on doubles must agree with the one on 50-digit values
    a = Fraction(num, den)
    b = a + half_unit(decimals) + Fraction(nudge) * Fraction(scale)
    x, y = ex.number(a), ex.number(b)
    exact = ex.rounded(x, decimals) != ex.rounded(y, decimals) and abs(
        x.val - y.val
    ) > mc._half_unit(decimals)
    assert mc.cell_differs(x, y, decimals) == exact
    assert mc.cell_differs(y, x, decimals) == exact


def _accepted_as_right(item) -> list[str]:
    """The distractors whose printed target answer the key's margin accepts as right."""
    from worksheetgen.families import get_family

    target = mc.target_of(get_family(item.spec.family), item.given)
    answer = item.solution.answer(target)
    right = mc.cells(answer.value)
    out = []
    for d in item.solution.distractors:
        shown = mc.cells(d.rounded[target])
        if all(
            p == v if "-inf" in (p, v) else abs(float(p) - v) <= answer.tolerance + 1e-9
            for p, v in zip(shown, right, strict=True)
        ):
            out.append(d.misconception)
    return out


@pytest.mark.parametrize(
    ("bank", "seed", "qid", "sheet"),
    [
        ("default.yaml", 11, "lab3", "v22"),  # no-scale's AV was within ±0.038 of the key's
        ("default.yaml", 11, "lab3", "v115"),
        ("slips.yaml", 11, "find-the-slip", "v63"),  # scale-by-dk and no-scale, ±0.032
        ("note.yaml", 9, "spot-the-bug", "v6"),  # mask-with-zero within ±0.015
    ],
)
def test_no_slip_of_an_open_question_is_accepted_as_right_by_the_keys_margin(
    bank, seed, qid, sheet
):
    spec = next(q for q in load_banks([ROOT / "banks" / bank]).questions if q.id == qid)
    item = make_item(spec, SheetIdentity(seed, sheet), 1)
    assert item.solution.distractors
    assert _accepted_as_right(item) == []


def test_where_no_draw_keeps_a_slip_out_of_the_margin_it_is_listed_with_the_margin(write_bank):
    # scores of 0..2 for 2 tokens at one decimal: every draw leaves a slip within +-0.1
    spec = one_spec(
        write_bank,
        """
  - id: coarse
    family: softmax
    decimals: 1
    params: {T: 2, low: 0, high: 2, d_k: 2}
""",
    )
    for sheet in ("a", "b", "c"):
        item = make_item(spec, SheetIdentity(1, sheet), 1)
        assert _accepted_as_right(item) == []
        inside = [c for c in item.solution.coincident if c.margin is not None]
        assert inside, sheet  # no draw keeps them all apart at one decimal: listed instead
        assert all(
            c.same_as == "correct" and c.margin == item.solution.answer("A").tolerance
            for c in inside
        )


def test_spot_the_bug_never_accepts_the_printed_wrong_a_as_the_corrected_one():
    spec = next(
        q for q in load_banks([ROOT / "banks" / "note.yaml"]).questions if q.id == "spot-the-bug"
    )
    for sheet in ("FJ", *(f"v{i}" for i in range(40))):  # FJ: mask-with-zero's 0.99 passed
        item = make_item(spec, SheetIdentity(11, sheet), 1)
        answer = item.solution.answer("A")
        (planted,) = [d for d in item.solution.distractors if d.misconception == item.given["slip"]]
        copied = mc.cells(planted.rounded["A"])
        if copied == mc.cells(answer.rounded):
            continue  # the slip leaves A alone (mixed-keys): copying A is right
        assert not all(
            p == v
            if "-inf" in (p, v)  # as grade accepts an entry
            else abs(float(p) - v) <= answer.tolerance + 1e-9
            for p, v in zip(copied, mc.cells(answer.value), strict=True)
        ), sheet
