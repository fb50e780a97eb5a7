"""Every named slip can reach a student: the bundled banks, together, draw each slip of the
library as a distractor the grader can name, and ask every family in its numeric form.

A behaviour across modules, not one module's tests (attention, bank.load, families,
families.common, model, pipeline.check, solve.draw)."""

from __future__ import annotations

from collections import defaultdict

from tests.paths import ROOT
from worksheetgen.attention import slips as mc
from worksheetgen.bank.load import load_banks
from worksheetgen.families import FAMILIES, get_family
from worksheetgen.families.common import param_values
from worksheetgen.model import SheetIdentity
from worksheetgen.pipeline.check import bundled_banks
from worksheetgen.solve.draw import draw_variant

SEEDS = range(12)


def bundled_questions():
    for path in bundled_banks():
        bank = load_banks([path])
        for spec in bank.questions:
            yield bank.info.slug, spec


def test_every_slip_of_the_library_is_drawn_by_some_bundled_question():
    where: dict[str, set[str]] = defaultdict(set)
    for slug, spec in bundled_questions():
        for seed in SEEDS:
            variant = draw_variant(spec, SheetIdentity(seed, slug))
            for s in variant.slips:  # kept: offered as a distractor, named by the grader
                where[s.name].add(f"{spec.location.file}:{spec.id}")
    missing = [name for name in mc.NAMES if not where[name]]
    assert not missing, f"no bundled bank can produce the slips {missing}"


def test_bundled_question_ids_are_unique_within_each_bank():
    for path in bundled_banks():
        ids = [q.id for q in load_banks([path]).questions]
        assert len(ids) == len(set(ids)), path


def test_every_family_is_asked_by_a_bundled_bank_in_its_numeric_form():
    asked: dict[str, list] = defaultdict(list)
    for _, spec in bundled_questions():
        asked[spec.family].append(spec.params)
    # a family whose every word the bank writes (mark-all: no drawn number, no slip) is asked
    # by the fixture bank that shows it, not by a bundled one
    written = {"mark-all": ROOT / "tests" / "fixtures" / "mark-all.yaml"}
    for name, path in written.items():
        assert name in {spec.family for spec in load_banks([path]).questions}, name
    assert set(FAMILIES) - set(written) <= set(asked), sorted(set(FAMILIES) - set(asked))
    for name in FAMILIES:
        needs = get_family(name).choice_needs  # the switches that turn the numbers on
        if needs:
            assert any(
                True in param_values(params[flag])
                for params in asked[name]
                for flag in needs
                if flag in params
            ), name
    # projections' deepest numeric form asks AV, where mixed-keys can show
    assert any(True in param_values(p["output"]) for p in asked["projections"])


def test_every_slip_a_family_declares_is_drawn_by_a_bundled_question_of_that_family():
    drawn: dict[str, set[str]] = defaultdict(set)
    for slug, spec in bundled_questions():
        for seed in SEEDS:
            drawn[spec.family].update(
                s.name for s in draw_variant(spec, SheetIdentity(seed, slug)).slips
            )
    missing = {
        name: [s for s in get_family(name).slips if s not in drawn[name]] for name in FAMILIES
    }
    assert not {k: v for k, v in missing.items() if v}
