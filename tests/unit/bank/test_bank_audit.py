"""The bank-language findings of the audit (issue #17, item 8), one behaviour per test.

A behaviour across modules, not one module's tests (bank.load, errors, families,
families.common, families.concept, model, solve.draw)."""

from __future__ import annotations

import pytest

from worksheetgen.bank.load import load_banks
from worksheetgen.errors import WorksheetgenError
from worksheetgen.families import FAMILIES
from worksheetgen.families.common import range_pairs
from worksheetgen.families.concept import BY_ID
from worksheetgen.model import SheetIdentity


def bank_error(write_bank, family: str, params: str) -> str:
    path = write_bank(
        f"sheet: {{id: t}}\nquestions:\n  - id: q\n    family: {family}\n    params:\n{params}"
    )
    with pytest.raises(WorksheetgenError) as err:
        load_banks([path])
    return str(err.value).replace(str(path), "bank.yaml")


@pytest.mark.parametrize(
    ("family", "params", "where"),
    [
        ("lab3", "      low: 3\n      high: 1\n", "bank.yaml:7: questions[0].params.high"),
        ("lab3", "      v_low: 5\n      v_high: 1\n", "bank.yaml:7: questions[0].params.v_high"),
        ("spot-the-bug", "      v_low: 5\n      v_high: 1\n", "bank.yaml:7: questions[0]"),
        ("spot-the-bug", "      low: 3\n      high: 1\n", "bank.yaml:7: questions[0]"),
        ("softmax", "      low: 3\n      high: 1\n", "bank.yaml:7: questions[0].params.high"),
        ("causal", "      low: 3\n      high: 1\n", "bank.yaml:7: questions[0].params.high"),
        ("scaling", "      low: 3\n      high: 1\n", "bank.yaml:7: questions[0].params.high"),
        ("cross", "      v_low: 5\n      v_high: 1\n", "bank.yaml:7: questions[0].params.v_high"),
        ("identical-keys", "      low: 3\n      high: 1\n", "bank.yaml:7: questions[0].params"),
        ("projections", "      x_low: 2\n      x_high: 0\n", "bank.yaml:7: questions[0].params"),
        ("projections", "      w_low: 1\n      w_high: -1\n", "bank.yaml:7: questions[0].params"),
    ],
)
def test_a_reversed_range_is_refused_at_load_naming_file_line_and_field(
    write_bank, family, params, where
):
    text = bank_error(write_bank, family, params)
    assert text.startswith(where), text
    assert "\n" not in text
    low, high = (line.split(":")[0].strip() for line in params.strip().splitlines())
    assert f"expected {high} >= {low}" in text


def test_a_reversed_range_against_a_default_blames_the_field_the_bank_wrote(write_bank):
    text = bank_error(write_bank, "lab3", "      low: 3\n")
    assert text == "bank.yaml:6: questions[0].params.low: expected low <= high (2), got 3"


def test_choices_of_which_some_low_lies_above_some_high_are_refused(write_bank):
    text = bank_error(write_bank, "softmax", "      low: {choices: [0, 2]}\n      high: 1\n")
    assert text == "bank.yaml:7: questions[0].params.high: expected high >= low (2), got 1"


def test_every_range_of_every_bundled_family_is_covered_by_the_shared_rule():
    pairs = {name: range_pairs(p.name for p in cls.params) for name, cls in FAMILIES.items()}
    assert pairs["lab3"] == [("low", "high"), ("v_low", "v_high")]
    assert pairs["spot-the-bug"] == [("low", "high"), ("v_low", "v_high")]
    assert pairs["projections"] == [("x_low", "x_high"), ("w_low", "w_high")]
    for name, found in pairs.items():
        lows = {p.name for p in FAMILIES[name].params if p.name.endswith("low")}
        assert {lo for lo, _ in found} == lows, name


@pytest.mark.parametrize("family", ["softmax", "causal", "lab3", "cross", "projections"])
def test_d_k_of_one_builds_for_every_family_that_lists_it(write_bank, family):
    from tests.solved import make_build

    extra = "      numeric: true\n" if family == "cross" else ""
    path = write_bank(
        f"sheet: {{id: t}}\nquestions:\n  - id: q\n    family: {family}\n    params:\n"
        f"      d_k: 1\n{extra}"
    )
    bank = load_banks([path])
    for seed in range(5):
        item = make_build(bank, seed).sheets[0].items[0]
        names = {d.misconception for d in item.solution.distractors}
        assert not names & {"scale-by-dk", "no-scale"}


def test_a_choice_item_with_too_few_slips_at_d_k_one_says_so_not_print_more_decimals(write_bank):
    from worksheetgen.errors import DrawError
    from worksheetgen.solve.draw import draw_variant

    path = write_bank(
        "sheet: {id: t}\nquestions:\n  - id: q\n    family: softmax\n    format: choice\n"
        "    params:\n      d_k: 1\n"
    )
    spec = load_banks([path]).questions[0]
    with pytest.raises(DrawError) as err:
        draw_variant(spec, SheetIdentity(1, "t"))
    text = str(err.value)
    assert "expected at least 2 slips that apply" in text and text.endswith("use format: open")
    assert "print more decimals" not in text


CONCEPT = "sheet: {id: t}\nquestions:\n  - id: c\n    family: concept\n"


def test_format_choice_on_concept_asks_the_pick_one_form(write_bank):
    from tests.solved import make_build

    bank = load_banks([write_bank(CONCEPT + "    format: choice\n    params: {ask: mask-inf}\n")])
    item = make_build(bank, 3).sheets[0].items[0]
    (answer,) = item.solution.answers
    assert answer.kind == "choice"
    assert set(answer.options) == set(BY_ID["mask-inf"].options)
    old = load_banks([write_bank(CONCEPT + "    params: {ask: mask-inf, multiple_choice: true}\n")])
    # the older spelling asks the same question the same way
    assert make_build(old, 3).sheets[0].items[0].solution.answers == (answer,)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "    format: choice\n    params: {multiple_choice: false}\n",
            "bank.yaml:6: questions[0].params.multiple_choice: expected no multiple_choice "
            "with format: choice",
        ),
        (
            "    format: open\n    params: {multiple_choice: true}\n",
            "bank.yaml:5: questions[0].format: expected format: choice for multiple_choice: "
            "true (write format: choice alone), got format: open",
        ),
    ],
)
def test_format_and_multiple_choice_that_disagree_are_refused(write_bank, body, message):
    path = write_bank(CONCEPT + body)
    with pytest.raises(WorksheetgenError) as err:
        load_banks([path])
    assert str(err.value).replace(str(path), "bank.yaml").startswith(message)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('"Use $x^$ here."', "expected math TeX can set, got a ^ with nothing after it"),
        (
            '"Round to {{ places }}: $\\\\input{x}$"',
            "expected math with safe commands only, got \\input",
        ),
    ],
)
def test_instructions_whose_math_cannot_print_are_refused_at_load(write_bank, text, message):
    path = write_bank(
        f"sheet:\n  id: s\n  instructions: {text}\nquestions:\n  - id: h\n    family: heads\n"
    )
    with pytest.raises(WorksheetgenError) as err:
        load_banks([path])
    line = str(err.value).replace(str(path), "bank.yaml")
    assert line.startswith(f"bank.yaml:3: sheet.instructions: {message}"), line


def test_two_user_banks_with_one_id_are_one_line_naming_both_places(write_bank):
    first = write_bank("questions:\n  - id: q\n    family: heads\n", "a.yaml")
    second = write_bank(
        "questions:\n  - {id: r, family: heads}\n  - {id: q, family: heads}\n", "b.yaml"
    )
    with pytest.raises(WorksheetgenError) as err:
        load_banks([first, second])
    text = str(err.value)
    assert text.startswith(f"{second}:3: questions[1].id: expected a unique id, got 'q' again")
    assert f"(first at {first}:2)" in text and "\n" not in text
