"""Multiple choice: the options are the correct value and the slips' results, shuffled by the
item's own generator, rendered with circles on the sheet and named in the key.

A behaviour across modules, not one module's tests (bank.load, errors, families, keyjson.write,
model, pipeline.sheet, solve.draw, solve.item, solve.rng)."""

from __future__ import annotations

import json
import math

import pytest

from tests.oracles import half_up, softmax
from tests.solved import make_build, render_all
from worksheetgen.bank.load import load_banks
from worksheetgen.errors import DrawError
from worksheetgen.families import get_family
from worksheetgen.keyjson.write import key_json
from worksheetgen.model import SheetIdentity
from worksheetgen.solve.draw import draw_given_values, draw_variant
from worksheetgen.solve.item import make_item
from worksheetgen.solve.rng import generator

CHOICE_BANK = """
sheet: {id: mc, title: Choice}
questions:
  - id: lab
    family: lab3
    format: choice
  - id: table
    family: softmax
    format: choice
    params: {T: 2, d_k: {choices: [2, 4]}}
  - id: open
    family: causal
    params: {T: 3}
"""


def lab3_output(g: dict) -> list[list[float]]:
    """Lab 3 by hand: scores, scale, mask, softmax over keys, mix values."""
    q, k, v, d_k = g["Q"], g["K"], g["V"], g["d_k"]
    out = []
    for i, qi in enumerate(q):
        row = [sum(a * b for a, b in zip(qi, kj, strict=True)) / math.sqrt(d_k) for kj in k]
        if g["causal"]:
            row = [x if j <= i else -math.inf for j, x in enumerate(row)]
        w = softmax(row)
        out.append([sum(w[j] * v[j][c] for j in range(len(v))) for c in range(len(v[0]))])
    return out


@pytest.fixture
def bank(write_bank):
    return load_banks([write_bank(CHOICE_BANK)])


def test_choices_are_the_correct_value_and_each_slip_result(bank):
    build = make_build(bank, 5)
    q = key_json(build)["sheets"][0]["questions"][0]
    assert [p["answer"] for p in q["parts"]] == ["output"]
    labels = [c["label"] for c in q["choices"]]
    assert labels == list("ABCDEFG"[: len(labels)])
    assert len(q["choices"]) == 1 + len(q["distractors"]) >= 3
    right = [c for c in q["choices"] if c["correct"]]
    assert len(right) == 1 and right[0]["label"] == q["choice_answer"]
    assert right[0]["misconception"] is None
    hand = [[str(half_up(x, 2)) for x in row] for row in lab3_output(q["given"])]
    assert right[0]["rounded"] == hand == q["rounded"]["output"]
    by_slip = {d["misconception"]: d["rounded"]["output"] for d in q["distractors"]}
    for c in q["choices"]:
        if not c["correct"]:
            assert c["rounded"] == by_slip[c["misconception"]]
        assert c["text"].startswith(r"\begin{bmatrix}")
    assert set(by_slip) == {c["misconception"] for c in q["choices"] if not c["correct"]}
    assert len({json.dumps(c["rounded"]) for c in q["choices"]}) == len(q["choices"])


def test_options_are_shuffled_by_the_item_generator_after_the_draw(bank):
    spec = bank.questions[1]
    family = get_family(spec.family)
    for seed in range(6):
        item = make_item(spec, SheetIdentity(seed, "mc"), 1)
        v = draw_variant(spec, SheetIdentity(seed, "mc"))
        rng = generator(SheetIdentity(seed, "mc"), spec.id)
        for _ in range(v.redraws + 1):
            given = draw_given_values(family, spec.params, rng)
        assert given == item.given
        order = rng.permutation(len(item.solution.choices))
        options = [None] + [d.misconception for d in item.solution.distractors]
        assert [c.misconception for c in item.solution.choices] == [options[i] for i in order]


def test_the_correct_option_is_not_always_in_the_same_place(bank):
    spec = bank.questions[1]
    places = {
        make_item(spec, SheetIdentity(seed, "mc"), 1).solution.choice_answer for seed in range(30)
    }
    assert len(places) >= 3


def test_open_items_keep_their_parts_and_still_list_distractors(bank):
    q = key_json(make_build(bank, 5))["sheets"][0]["questions"][2]
    assert "choices" not in q
    assert [p["answer"] for p in q["parts"]] == ["scaled", "masked", "A"]
    assert {d["misconception"] for d in q["distractors"]} == {
        "mask-with-zero",
        "scale-by-dk",
        "no-scale",
        "softmax-over-columns",
    }
    # mask-with-zero puts weight on the future: row 1 of its A is softmax([s11, 0, 0])
    d = next(d for d in q["distractors"] if d["misconception"] == "mask-with-zero")
    s11 = q["given"]["S"][0][0] / math.sqrt(q["given"]["d_k"])
    assert d["answer"]["A"][0] == pytest.approx(softmax([s11, 0.0, 0.0]), abs=1e-14)


def test_sheet_shows_circled_options_and_key_marks_the_answer_and_names_slips(bank):
    build = make_build(bank, 5)
    docs = render_all(build)
    item = build.sheets[0].items[0]
    slips = [c.misconception for c in item.solution.choices if c.misconception]
    assert docs["sheet.tex"].count(r"\wsoption{\wscircle}") == sum(
        len(i.solution.choices) for i in build.sheets[0].items
    )
    for name in slips:
        assert name not in docs["sheet.tex"] and name not in docs["sheet.md"]
        assert rf"\texttt{{{name}}}" in docs["key.tex"]
        assert f"`{name}`" in docs["key.md"]
    assert rf"\wsoption{{\wsfilled}}{{{item.solution.choice_answer}}}" in docs["key.tex"]
    assert f"- (x) **{item.solution.choice_answer}** $" in docs["key.md"]
    assert "- ( ) **A** $\\begin{bmatrix}" in docs["sheet.md"]


def test_fingerprint_table_lists_every_slip_in_both_keys(bank):
    build = make_build(bank, 5)
    docs = render_all(build)
    sections = docs["key.md"].split("## Question ")[1:]
    for item, section in zip(build.sheets[0].items, sections, strict=True):
        lines = section.splitlines()
        for d in item.solution.distractors:
            cells = " \\\\ ".join(" & ".join(r) for r in d.rounded["A"])
            row = next(ln for ln in lines if ln.startswith(f"- `{d.misconception}`: $A"))
            assert cells in row, (row, cells)
    assert docs["key.tex"].count("Slip fingerprints.") == 3
    assert docs["key.md"].count("**Slip fingerprints**") == 3
    assert "Slip fingerprints" not in docs["sheet.tex"] + docs["sheet.md"]


def test_a_variant_without_two_slips_cannot_be_asked_as_multiple_choice(write_bank):
    # scores given already scaled: the scale's two slips cannot apply, one slip is left
    path = write_bank("""
questions:
  - id: sc
    family: softmax
    format: choice
    params: {prescaled: true}
""")
    spec = load_banks([path]).questions[0]
    with pytest.raises(DrawError, match=r"only 1 slip\(s\) apply \(softmax-over-columns\)"):
        make_item(spec, SheetIdentity(0, "s"), 1)


@pytest.mark.parametrize(
    "family, params, expected",
    [
        (
            "cross",
            "",
            "questions[0].format: expected numeric: true for multiple choice (only then "
            "do the slips that make its distractors show), got numeric: false (the default)",
        ),
        (
            "cross",
            "\n    params: {numeric: false}",
            "questions[0].params.numeric: expected numeric: true for multiple choice",
        ),
        # every draw with numeric false was thrown away, silently
        (
            "cross",
            "\n    params: {numeric: {choices: [true, false]}}",
            "questions[0].params.numeric: "
            "expected numeric: true for multiple choice (only then do the slips that make its "
            "distractors show), got numeric: true or false",
        ),
        (
            "identical-keys",
            "\n    params: {numeric: false}",
            "questions[0].params.numeric: expected numeric: true for multiple choice",
        ),
        (
            "projections",
            "",
            "questions[0].format: expected scale: true or softmax: true or output: "
            "true for multiple choice (only then do the slips that make its distractors show), got "
            "scale: false, softmax: false, output: false (the defaults)",
        ),
    ],
)
def test_choice_without_the_steps_its_slips_need_is_refused_at_load(
    write_bank, family, params, expected
):
    # these failed only after 101 draws: "got only 0 slip(s) apply (none)"
    from worksheetgen.bank.load import load_banks
    from worksheetgen.errors import BankError

    path = write_bank(f"questions:\n  - id: q\n    family: {family}\n    format: choice{params}\n")
    with pytest.raises(BankError) as err:
        load_banks([path])
    assert expected in str(err.value)


def test_choice_with_the_steps_its_slips_need_builds(write_bank):
    from tests.solved import make_build
    from worksheetgen.bank.load import load_banks

    path = write_bank(
        "questions:\n  - id: q\n    family: projections\n    format: choice\n"
        "    params: {softmax: true}\n"
    )
    item = make_build(load_banks([path]), 1).sheets[0].items[0]
    assert len(item.solution.choices) >= 3
