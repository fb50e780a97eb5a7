"""Pick-one options must not give the answer away by their length (issue #17, item 7).

A behaviour across modules, not one module's tests (families, families.concept, pipeline.check)."""

from __future__ import annotations

import pytest

from worksheetgen.families.concept import CONCEPTS
from worksheetgen.pipeline.check import LONG_RATIO, check_banks, choice_bias, item_lines


def test_the_length_bias_of_a_choice_set_says_when_the_right_option_is_longest():
    b = choice_bias("q", "a much longer right answer", ("a much longer right answer", "no", "nope"))
    assert b.right_longest and b.biased and b.options == 3
    assert b.ratio == pytest.approx(26 / ((26 + 2 + 4) / 3))
    even = choice_bias("q", "right", ("right", "wrong", "worse"))
    assert not even.right_longest and not even.biased and even.ratio == 1.0


@pytest.mark.parametrize("concept", CONCEPTS, ids=lambda c: c.id)
def test_no_bundled_concept_gives_its_answer_away_by_length(concept):
    b = choice_bias(concept.id, concept.options[0], concept.options)
    assert not b.right_longest, [len(o) for o in concept.options]
    assert b.ratio < LONG_RATIO, [len(o) for o in concept.options]


def test_check_reports_the_length_bias_of_every_choice_set_it_drew(write_bank):
    ids = ", ".join(c.id for c in CONCEPTS)
    bank = write_bank(
        "sheet: {id: c}\nquestions:\n  - id: all\n    family: concept\n    format: choice\n"
        f"    params: {{ask: [{ids}]}}\n"
    )
    (item,) = check_banks([str(bank)], stress=2).items
    assert len(item.choice_sets) == len(CONCEPTS)  # one set per concept, whatever the order
    lines = [x.strip() for x in item_lines(item)]
    assert (
        f"pick-one choice sets {len(CONCEPTS)}: the right option is the longest in 0 (0.0%)"
        in "\n".join(lines)
    )
    assert not any(x.startswith("length-biased") for x in lines)


def test_check_names_a_biased_choice_set(write_bank, monkeypatch):
    from worksheetgen.families import concept

    biased = concept.Concept(
        "mask-inf",
        "Why -inf?",
        "model",
        "idea",
        "section 3",
        ("the long and specific one", "no", "x"),
    )
    monkeypatch.setitem(concept.BY_ID, "mask-inf", biased)
    bank = write_bank(
        "sheet: {id: c}\nquestions:\n  - id: q\n    family: concept\n    format: choice\n"
        "    params: {ask: mask-inf}\n"
    )
    (item,) = check_banks([str(bank)], stress=1).items
    lines = [x.strip() for x in item_lines(item)]
    assert (
        "length-biased (the longest, or 1.2x the mean or more): mask_inf (2.68x, the longest)"
        in lines
    )
