"""Draw: one generator per (sheet identity, question) gives each question's parameters.

A drawn variant is kept only if every slip of the misconception library that applies to it
can be told apart from the right answer and from every other slip at the printed digits
(see ``worksheetgen.attention.slips``), and, for an open question, if no slip's printed
answer falls within the margin the key accepts for the right one. Otherwise the *same*
generator draws again, up to ``MAX_REDRAWS`` times (where the printed answers all differ but
no draw keeps every slip outside the margin, as at one decimal, the draw with the fewest
such slips is kept and they are recorded as coinciding). A variant that cannot change (every
parameter that matters is pinned) is kept as it is: its colliding slips are left out of the
distractors and recorded as coinciding, and only a multiple-choice item left with too few
distractors is an error.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from worksheetgen.attention import slips as mc
from worksheetgen.errors import DrawError, WorksheetgenError
from worksheetgen.families import get_family
from worksheetgen.families.base import Family, redrawn
from worksheetgen.model import Choices, ParamValue, Pinned, QuestionSpec, SheetIdentity, Solution
from worksheetgen.solve.rng import generator

MAX_REDRAWS = 100
MIN_CHOICE_DISTRACTORS = 2

#: the fixed identity of the sample draws a bank's prompts are checked with (seed 0, no secret)
_PROMPT_CHECK = SheetIdentity(0, "<prompt-check>")


@dataclass(frozen=True)
class Variant:
    """The accepted draw of one question, with what the misconception library found.

    ``rng`` is the question's generator, left where the draw stopped: later random choices
    of the same item (the order of multiple-choice options) continue from it. ``redraws``
    counts the draws thrown away because a slip could not be told apart; ``fixed`` says the
    variant could not change at all, and ``coincident`` lists its slips that collide.
    ``solution`` is the family's solution when the draw needed it (an open question's
    margins), so the item is not solved twice.
    """

    given: dict[str, Any]
    rng: np.random.Generator | None
    redraws: int
    fingerprints: mc.Fingerprints | None
    slips: tuple[mc.SlipResult, ...]
    coincident: tuple[mc.Collision, ...] = ()
    fixed: bool = False
    solution: Solution | None = None


def _key(given: dict[str, Any]) -> str:
    return json.dumps(given, sort_keys=True, default=str)


def item_label(spec: QuestionSpec, sheet_id: str) -> str:
    """How a failing item is named in an error: sheet, question id and where it was written."""
    loc = spec.location
    where = loc.file if loc.line is None else f"{loc.file}:{loc.line}"
    return f"{where}: questions[{spec.id}] (sheet {sheet_id})"


def _margins(
    spec: QuestionSpec, family: Any, given: dict[str, Any], fp: mc.Fingerprints, sheet_id: str
) -> tuple[Solution | None, list[mc.Collision]]:
    """An open question's solution and the slips its key would accept as right in the
    target answer (or in a family's ``margin_also``: spot the bug asks to correct A, so a
    copied wrong A must not pass). A multiple-choice item is graded by the option chosen."""
    if spec.format == "choice":
        return None, []
    solution = family.solve(given, spec.decimals, item_label(spec, sheet_id))
    worked: dict[str, tuple[dict[str, Any], ...]] = {}

    def chains(slip: mc.SlipResult) -> tuple[dict[str, Any], ...]:
        # the slip worked from rounded earlier steps; computed once, only when needed
        if slip.name not in worked:
            worked[slip.name] = family.rounded(given, slip.misconception.recipe, spec.decimals)
        return worked[slip.name]

    try:
        found = mc.within_margin(
            fp,
            solution.answer(fp.target),
            spec.decimals,
            chains=chains,
            reach=family.chain_reach(given, fp.target, spec.decimals),
        )
    except KeyError:
        found = []
    names, slips = family.margin_also(given)  # spot the bug's A, for the slip it planted
    for name in names:
        named = {c.slip for c in found}
        found += [
            c
            for c in mc.within_margin(
                fp,
                solution.answer(name),
                spec.decimals,
                only=slips,
                chains=chains,
                reach=family.chain_reach(given, name, spec.decimals),
            )
            if c.slip not in named
        ]
    return solution, found


def margin_slips(spec: QuestionSpec, variant: Variant, sheet_id: str) -> list[mc.Collision]:
    """The slips a drawn variant kept (its distractors) whose answer the key would accept
    as right, however the student rounds: none, for a variant the draw accepted (what
    ``check`` verifies)."""
    fp = variant.fingerprints
    if fp is None or not variant.slips:
        return []
    family = get_family(spec.family)
    _, found = _margins(spec, family, variant.given, replace(fp, slips=variant.slips), sheet_id)
    return found


def _where(spec: QuestionSpec, sheet_id: str) -> dict[str, Any]:
    return {
        "file": spec.location.file,
        "line": spec.location.line,
        "field": f"questions[{spec.id}] (sheet {sheet_id})",
    }


def _too_few(spec: QuestionSpec, n: int) -> bool:
    return spec.format == "choice" and n < MIN_CHOICE_DISTRACTORS


def settle(
    spec: QuestionSpec, given: dict[str, Any], rng: np.random.Generator | None, sheet_id: str = ""
) -> Variant:
    """Accept ``given`` as it is (a variant that cannot be redrawn): drop colliding slips."""
    family = get_family(spec.family)
    fp = mc.fingerprints(family, given)
    if fp is None:
        return Variant(given, rng, 0, None, (), fixed=True)
    found = mc.collisions(fp, spec.decimals)
    solution, inside = _margins(spec, family, given, fp, sheet_id)
    named = {c.slip for c in found}
    found += [c for c in inside if c.slip not in named]
    kept = mc.kept_after(fp, found)
    if _too_few(spec, len(kept)):
        why = "; ".join(c.text() for c in found) or "too few slips apply to it"
        raise DrawError(
            f"expected at least {MIN_CHOICE_DISTRACTORS} distinguishable "
            f"distractors for multiple choice, got {len(kept)} on this fixed "
            f"variant ({why}); use format: open or unpin a parameter",
            **_where(spec, sheet_id),
        )
    return Variant(given, rng, 0, fp, kept, tuple(found), fixed=True, solution=solution)


def draw_given_values(
    family: Family, params: dict[str, ParamValue], rng: np.random.Generator
) -> dict[str, Any]:
    """One draw of a family's given values: a draw the family refuses (``Redraw``: h does
    not divide d) is drawn again from the same generator, up to ``family.redraws`` times
    (``families.base.redrawn``, the one redraw policy); then its message is a DrawError."""
    return redrawn(lambda: family.draw(params, rng), family.redraws)


def draw_variant(spec: QuestionSpec, identity: SheetIdentity) -> Variant:
    """Draw the question's variant on the sheet of ``identity`` (its seed, id and the course
    secret, when there is one), redrawing ambiguous ones."""
    family = get_family(spec.family)
    sheet_id = identity.sheet
    rng = generator(identity, spec.id)
    first: dict[str, Any] | None = None
    seen: set[str] = set()
    problems: Counter[str] = Counter()
    collided = False
    short = 0  # variants with too few slips for multiple choice (none collided)
    attempts = 0
    fallback: Variant | None = None
    for attempt in range(MAX_REDRAWS + 1):
        try:
            given = draw_given_values(family, spec.params, rng)
        except DrawError as exc:  # a family's own draw failure: say which question it was
            if exc.file is None:
                where = _where(spec, sheet_id)
                exc.file, exc.line, exc.field = where["file"], where["line"], where["field"]
            raise
        attempts += 1
        if first is None:
            first = given
        key = _key(given)
        if key in seen:
            continue
        seen.add(key)
        fp = mc.fingerprints(family, given)
        if fp is None:
            return Variant(given, rng, attempt, None, ())
        found = mc.collisions(fp, spec.decimals)
        solution = None
        if not found:
            solution, found = _margins(spec, family, given, fp, sheet_id)
            if found and (fallback is None or len(found) < len(fallback.coincident)):
                fallback = Variant(
                    given,
                    rng,
                    attempt,
                    fp,
                    mc.kept_after(fp, found),
                    tuple(found),
                    solution=solution,
                )
        if not found and not _too_few(spec, len(fp.slips)):
            return Variant(given, rng, attempt, fp, fp.slips, solution=solution)
        for c in found:
            problems[c.text()] += 1
        if not found:
            applying = ", ".join(s.name for s in fp.slips) or "none"
            problems[f"only {len(fp.slips)} slip(s) apply ({applying})"] += 1
            short += 1
        else:
            collided = True
    assert first is not None
    if fallback is not None:
        # every printed answer differs, but at these decimals no draw keeps every slip
        # outside the key's margin: the fewest such slips are left out and listed
        return fallback
    if len(seen) == 1:  # nothing that matters is drawn: keep it and say what coincides
        return settle(spec, first, rng, sheet_id)
    worst = ", ".join(
        f"{text} ({n} of {len(seen)} variants)" for text, n in problems.most_common(3)
    )
    if not collided or 2 * short >= len(seen):  # mostly too few slips: decimals cannot help
        raise DrawError(
            f"expected at least {MIN_CHOICE_DISTRACTORS} slips that apply, to "
            f"offer as multiple-choice distractors, got {worst}; use format: open",
            **_where(spec, sheet_id),
        )
    raise DrawError(
        f"expected a variant where every slip can be told apart at "
        f"{spec.decimals} decimals, got none in {attempts} draws: {worst}; print "
        f"more decimals or let the parameters vary more",
        **_where(spec, sheet_id),
    )


def _sample_givens(family: Family, params: dict[str, ParamValue], key: str) -> list[dict[str, Any]]:
    """The given values of a few fixed sample draws of ``family``: one per combination of
    drawn true/false parameters (they decide which variables and parts exist, e.g.
    ``prescaled`` drops ``d_k``). The generators are fixed, so the samples are the same on
    every run; a draw that fails is skipped (the build reports it)."""
    drawn = {n: v for n, v in params.items() if isinstance(v, Choices)}
    flags = [n for n, v in drawn.items() if all(isinstance(x, bool) for x in v.values)][:4]
    combos = list(itertools.product(*(sorted(set(drawn[n].values)) for n in flags)))
    out = []
    for i, combo in enumerate(combos):
        pinned = dict(params)
        pinned.update({n: Pinned(v) for n, v in zip(flags, combo, strict=True)})
        try:
            given = draw_given_values(family, pinned, generator(_PROMPT_CHECK, f"{key}/{i}"))
        except WorksheetgenError:
            continue
        out.append(given)
    return out


def sample_contexts(
    family: Family, params: dict[str, ParamValue], key: str
) -> list[dict[str, Any]]:
    """The prompt variables of a few fixed sample draws of ``family``, for checking a bank's
    prompt when the bank is loaded (the draws of ``_sample_givens``)."""
    out = []
    for given in _sample_givens(family, params, key):
        context = dict(given)
        context.update(family.prompt_context(given))
        out.append(context)
    return out


def sample_parts(
    family: Family, params: dict[str, ParamValue], key: str, decimals: int
) -> list[tuple[str, ...]]:
    """The answer names the parts ask, in part order, for each sample draw of ``family``
    (the draws of ``_sample_givens``): what a bank's per-part points are checked against."""
    out = []
    for given in _sample_givens(family, params, key):
        try:
            solution = family.solve(given, decimals, key)
        except WorksheetgenError:
            continue
        out.append(tuple(dict.fromkeys(p.answer for p in solution.parts)))
    return out
