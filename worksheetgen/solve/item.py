"""Solve: exact answers, printed answers and worked steps for drawn questions, then checks.

Each item is drawn (``draw.draw_variant``: redrawn until every slip shows), solved by its
family, given its misconception results (distractors, the key's fingerprint table, and the
options of a multiple-choice item), and checked against the invariants every key must have
before anything is written. An invariant failure is a bug and stops the build.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from worksheetgen.attention import slips as mc
from worksheetgen.attention.compute import CORRECT, sums_to_one
from worksheetgen.errors import BankError, InvariantError, SolveError
from worksheetgen.exact.kinds import NUMERIC_KINDS
from worksheetgen.exact.mathtex import decimals_of, value_math
from worksheetgen.exact.number import Ex, is_zero
from worksheetgen.exact.number import rounded as round_ex
from worksheetgen.exact.rounding import half_unit
from worksheetgen.families import get_family
from worksheetgen.language import gettext, said
from worksheetgen.model import (
    Choice,
    Coincidence,
    Distractor,
    Item,
    Part,
    Pool,
    QuestionSpec,
    Sheet,
    SheetIdentity,
    Solution,
    Student,
)
from worksheetgen.render.prompts import render_prompt
from worksheetgen.solve.draw import Variant, draw_variant, item_label, settle
from worksheetgen.solve.rng import order_generator, pool_generator, sheet_code

LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def make_item(spec: QuestionSpec, identity: SheetIdentity, number: int) -> Item:
    """Draw, solve and check one question of the sheet of ``identity``."""
    variant = draw_variant(spec, identity)
    return solve_item(spec, variant.given, number, identity.sheet, variant=variant)


def solve_item(
    spec: QuestionSpec,
    given: dict[str, Any],
    number: int,
    sheet_id: str,
    *,
    variant: Variant | None = None,
) -> Item:
    """Solve one drawn question, attach its misconception results and render its prompt.

    Without ``variant`` the given values are taken as fixed (colliding slips are dropped);
    a multiple-choice item needs the variant, whose generator orders the options.
    """
    family = get_family(spec.family)
    label = item_label(spec, sheet_id)
    if variant is None:
        if spec.format == "choice":
            raise ValueError("a multiple-choice item needs its drawn Variant (its generator)")
        variant = settle(spec, given, None, sheet_id)
    solution = variant.solution or family.solve(given, spec.decimals, label)
    solution = with_misconceptions(spec, solution, variant, label)
    context = dict(given)
    context.update(family.prompt_context(given))
    # a family's own prompt may say only what a multiple-choice item asks (its target)
    family_context = {**context, "format": spec.format}
    if spec.prompt is not None:
        prompt = render_prompt(
            spec.prompt,
            context,
            file=spec.location.file,
            line=spec.prompt_line or spec.location.line,
            field=f"questions[{spec.id}].prompt",
        )
    else:
        # the family's own words in the build's language (a plugin's no catalog knows, as
        # written): the same template, its variables the same
        prompt = render_prompt(
            said(family.prompt), family_context, file="<family " + family.name + ">"
        )
    if spec.part_points:
        _check_part_points(spec, solution)
    # what the key states of the question, so that its writer asks no family
    asked = [p.answer for p in solution.parts]
    item = Item(
        number=number,
        spec=spec,
        given=given,
        prompt=prompt,
        solution=solution,
        title=spec.title or said(family.title),  # as the sheet prints it
        carries=tuple(family.carries_for(given, asked)),
    )
    exact = variant.fingerprints.correct if variant.fingerprints is not None else None
    check_invariants(item, label, exact)
    return item


def _check_part_points(spec: QuestionSpec, solution: Solution) -> None:
    """A draw whose parts are not the ones the bank gave points to is the bank's error (its
    parts were checked on sample draws when it was loaded)."""
    names = tuple(dict.fromkeys(p.answer for p in solution.parts))
    if names != tuple(n for n, _ in spec.part_points):
        raise BankError(
            "expected a number of points: this draw asks "
            f"{', '.join(names)}, not the parts given points "
            f"({', '.join(n for n, _ in spec.part_points)})",
            file=spec.location.file,
            line=spec.location.line,
            field=f"questions[{spec.id}].points",
        )


# ---------------------------------------------------------------- misconceptions


def shown_in_table(fp: mc.Fingerprints, solution: Solution) -> tuple[str, ...]:
    """The answers the key's fingerprint table shows: A, the target, and every small answer.

    Whole tables other than A and the target (scores, scaled scores) stay in key.json only,
    so the table stays one line per slip.
    """
    answered = {a.name for a in solution.answers}
    out: list[str] = []
    for name, value in fp.correct.items():
        small = not isinstance(value, list)
        if name in answered and (name in ("A", fp.target) or small) and name not in out:
            out.append(name)
    return tuple(out)


def with_misconceptions(
    spec: QuestionSpec, solution: Solution, variant: Variant, label: str
) -> Solution:
    """The solution with its distractors, coinciding slips and (for choice) its options."""
    fp = variant.fingerprints
    if fp is None:
        if spec.format == "choice":
            raise SolveError(
                "multiple choice needs a family with misconceptions "
                f"(family '{spec.family}' declares none)",
                field=label,
            )
        return solution
    d = spec.decimals
    styles: dict[str, bool | None] = {}  # each answer's print style, read once

    def style(name: str) -> bool | None:
        if name not in styles:
            styles[name] = mc.prints_whole(fp.correct.get(name))
        return styles[name]

    distractors = tuple(
        Distractor(
            misconception=s.name,
            description=said(s.misconception.description),
            answer={n: mc.value_json(v) for n, v in s.values.items() if v is not None},
            rounded={
                n: mc.value_rounded(v, d, style(n)) for n, v in s.values.items() if v is not None
            },
        )
        for s in variant.slips
    )
    coincident = tuple(
        Coincidence(c.slip, said(mc.get(c.slip).description), c.same_as, c.margin)
        for c in variant.coincident
    )
    solution = replace(
        solution,
        distractors=distractors,
        coincident=coincident,
        fingerprint_shown=shown_in_table(fp, solution),
    )
    if spec.format == "choice":
        solution = as_choice(solution, fp, variant, d, label)
    return solution


def as_choice(
    solution: Solution, fp: mc.Fingerprints, variant: Variant, decimals: int, label: str
) -> Solution:
    """Ask only the target answer, with the correct value and every slip's as options.

    The options are shuffled by the item's own generator, continuing after the draw.
    """
    try:
        target = solution.answer(fp.target)
    except KeyError:
        raise SolveError(
            f"multiple choice asks for '{fp.target}', which the family does not answer", field=label
        ) from None
    if variant.rng is None:
        raise ValueError("a multiple-choice item needs its generator to order the options")
    options: list[tuple[str | None, Any]] = [(None, fp.correct[fp.target])]
    options += [(s.name, s.values[fp.target]) for s in variant.slips]
    if len(options) > len(LABELS):
        raise SolveError(f"expected at most {len(LABELS)} options, got {len(options)}", field=label)
    order = [int(i) for i in variant.rng.permutation(len(options))]
    choices = []
    style = mc.prints_whole(fp.correct[fp.target])  # every option in the answer's style
    for pos, idx in enumerate(order):
        slip, value = options[idx]
        printed = mc.value_rounded(value, decimals, style)
        choices.append(
            Choice(
                label=LABELS[pos],
                text=value_math(printed, target.kind),
                correct=slip is None,
                misconception=slip,
                rounded=printed,
            )
        )
    old = next((p for p in solution.parts if p.answer == target.name), None)
    part = Part(
        gettext("Which of these is ${label}$? Mark one option.", label=target.label),
        target.name,
        row_label=old.row_label if old else "query",
        col_label=old.col_label if old else "key",
    )
    answer_label = next(c.label for c in choices if c.correct)
    return replace(solution, parts=(part,), choices=tuple(choices), choice_answer=answer_label)


# ---------------------------------------------------------------- invariants


def _fail(label: str, prop: str, detail: str) -> InvariantError:
    return InvariantError(f"invariant '{prop}' failed: {detail}", field=label)


def correct_values(item: Item) -> dict[str, Any]:
    """The exact correct fingerprint values of an item (empty for families without them)."""
    family = get_family(item.spec.family)
    if not family.fingerprint:
        return {}
    try:
        return dict(family.evaluate(item.given, CORRECT))
    except NotImplementedError:
        return {}


def _rows(value: Any) -> list[list[Any]]:
    if isinstance(value, list) and value and isinstance(value[0], list):
        return value
    return [value] if isinstance(value, list) else []


def _check_rows_sum_to_one(item: Item, exact: dict[str, Any], label: str) -> None:
    prop = "each row of A sums to 1"
    for i, row in enumerate(_rows(exact.get("A"))):
        if not all(isinstance(w, Ex) for w in row) or not sums_to_one(row):
            raise _fail(label, prop, f"row {i + 1} of A does not sum to exactly 1")
    for a in item.solution.answers:
        if a.name == "A" and a.kind in ("matrix", "vector"):
            for i, row in enumerate(_rows(a.value)):
                total = sum(float(x) for x in row)
                if abs(total - 1.0) > 1e-12:
                    raise _fail(label, prop, f"row {i + 1} of A sums to {total}, not 1")


def _check_causal(item: Item, exact: dict[str, Any], label: str) -> None:
    if not item.given.get("causal"):
        return
    prop = "no weight on a future key under a causal mask"
    for i, row in enumerate(_rows(exact.get("A"))):
        for j, w in enumerate(row[i + 1 :], start=i + 2):
            if not (isinstance(w, Ex) and is_zero(w)):
                raise _fail(label, prop, f"A[{i + 1}][{j}] is {w}, not exactly 0")
    for a in item.solution.answers:
        if a.name == "A" and a.kind == "matrix":
            for i, row in enumerate(a.value):
                if any(float(x) != 0.0 for x in row[i + 1 :]):
                    raise _fail(label, prop, f"row {i + 1} of A puts weight on a future key")


def _check_output_range(item: Item, exact: dict[str, Any], label: str) -> None:
    out, v = exact.get("output"), item.given.get("V")
    if not out or not v:
        return
    prop = "each output row lies within the column-wise range of V"
    causal = bool(item.given.get("causal")) and len(out) == len(v)
    slack = 1e-30
    for i, row in enumerate(out):
        rows = v[: i + 1] if causal else v
        for c, x in enumerate(row):
            col = [float(r[c]) for r in rows]
            if x.val - min(col) < -slack or x.val - max(col) > slack:  # mpf: keeps the slack
                raise _fail(
                    label,
                    prop,
                    f"output[{i + 1}][{c + 1}] = {float(x.val):.6g} "
                    f"is outside [{min(col):g}, {max(col):g}]",
                )


def _check_head_widths(item: Item, exact: dict[str, Any], label: str) -> None:
    d, h = item.given.get("d"), item.given.get("h")
    if not isinstance(d, int) or not isinstance(h, int):
        return
    widths = []
    if "d_k" in exact:
        widths.append(exact["d_k"])
    for a in item.solution.answers:
        if a.name == "d_k":
            widths.append(a.value)
    for d_k in widths:
        if h * d_k != d:
            raise _fail(label, "h * d_k = d", f"h * d_k = {h} * {d_k} = {h * d_k}, not d = {d}")


def _cell_pairs(value: Any, printed: Any) -> list[tuple[Any, Any]]:
    """Matching entries of a value and its printed form, in reading order; where the two
    differ in shape, the mismatching parts as one pair."""
    out: list[tuple[Any, Any]] = []
    _add_pairs(value, printed, out)
    return out


def _add_pairs(value: Any, printed: Any, out: list[tuple[Any, Any]]) -> None:
    if not (
        isinstance(value, list | tuple)
        and isinstance(printed, list | tuple)
        and len(value) == len(printed)
    ):
        out.append((value, printed))
        return
    for v, p in zip(value, printed, strict=True):
        if isinstance(v, list | tuple) and isinstance(p, list | tuple):
            _add_pairs(v, p, out)
        else:
            out.append((v, p))


def _check_printed(item: Item, exact: dict[str, Any], label: str) -> None:
    prop = "exact and rounded agree to the printed digits"
    for a in item.solution.answers:
        if a.kind not in NUMERIC_KINDS:
            continue
        for value, text in _cell_pairs(a.value, a.rounded):
            if isinstance(value, list | tuple) or isinstance(text, list | tuple):
                raise _fail(label, prop, f"{a.name}: value and printed answer differ in shape")
            t = str(text)
            if t == "-inf" or value == "-inf":
                if t != value:
                    raise _fail(label, prop, f"{a.name}: {value} printed as {t}")
                continue
            half = half_unit(decimals_of(t))
            if abs(float(value) - float(t)) > half * (1 + 1e-9) + 1e-12:
                raise _fail(label, prop, f"{a.name}: {value} is printed as {t}")
        if a.name in exact:
            for x, text in _cell_pairs(exact[a.name], a.rounded):
                t = str(text)
                if isinstance(x, Ex):
                    if round_ex(x, decimals_of(t)) != t:
                        raise _fail(
                            label,
                            prop,
                            f"{a.name}: the exact {x.expr} rounds to "
                            f"{round_ex(x, decimals_of(t))}, the key prints {t}",
                        )
                elif str(x) != t:
                    raise _fail(label, prop, f"{a.name}: the exact {x} is printed as {t}")


def _check_choices(item: Item, label: str) -> None:
    sol = item.solution
    if not sol.choices:
        return
    prop = "one correct choice, matching the key"
    right = [c for c in sol.choices if c.correct]
    if len(right) != 1 or right[0].label != sol.choice_answer:
        raise _fail(label, prop, f"{len(right)} choices are marked correct")
    target = sol.answer(sol.parts[0].answer)
    if right[0].rounded != target.rounded:
        raise _fail(
            label,
            prop,
            f"the correct choice prints {right[0].rounded}, the answer is {target.rounded}",
        )
    printed = [str(c.rounded) for c in sol.choices]
    if len(set(printed)) != len(printed):
        raise _fail(label, prop, "two choices print the same value")


def check_invariants(item: Item, label: str, exact: dict[str, Any] | None = None) -> None:
    """Properties every key must have; a failure is a bug and stops the build.

    ``exact`` holds the family's exact correct values (``evaluate`` under the correct
    recipe); they are computed here when not given. Checked: rows of A sum to exactly 1
    (structurally, no simplify), no weight above the diagonal under a causal mask, every
    output row within the column-wise range of V, h * d_k = d, every printed answer is its
    exact value rounded to the printed digits, and a choice item marks one correct option.
    """
    sol = item.solution
    names = {a.name for a in sol.answers}
    for part in sol.parts:
        if part.answer not in names:
            raise SolveError(f"part asks for unknown answer {part.answer!r}", field=label)
    family = get_family(item.spec.family)
    for part in sol.parts:
        if part.answer not in family.answers:
            raise SolveError(
                f"family {family.name!r}: part asks for answer {part.answer!r}, which the "
                f"family does not declare in answers ({', '.join(family.answers)})",
                field=label,
            )
    for shown in sol.shown:
        if shown.kind not in family.display_kinds:
            raise SolveError(
                f"family {family.name!r}: {shown.label!r} is shown as {shown.kind!r}, which "
                f"the family does not declare in display_kinds ({', '.join(family.display_kinds)})",
                field=label,
            )
    if exact is None:
        exact = correct_values(item)
    _check_rows_sum_to_one(item, exact, label)
    _check_causal(item, exact, label)
    _check_output_range(item, exact, label)
    _check_head_widths(item, exact, label)
    _check_printed(item, exact, label)
    _check_choices(item, label)


def placed_questions(
    specs: tuple[QuestionSpec, ...],
    layout: tuple[str | Pool, ...],
    identity: SheetIdentity,
) -> list[tuple[QuestionSpec, str | None]]:
    """The questions the sheet of ``identity`` gets, in the bank's order, each with the pool
    it was picked from (None: placed on its own). Without a layout, every question once. A
    pool's picks come from its own generator for (seed, secret, sheet id, pool id); the picked
    alternatives keep the order the pool names them in."""
    if not layout:
        return [(spec, None) for spec in specs]
    by_id = {spec.id: spec for spec in specs}
    out: list[tuple[QuestionSpec, str | None]] = []
    for entry in layout:
        if isinstance(entry, str):
            out.append((by_id[entry], None))
            continue
        rng = pool_generator(identity, entry.id)
        chosen = sorted(int(i) for i in rng.choice(len(entry.alternatives), entry.pick, False))
        out.extend((by_id[entry.alternatives[i]], entry.id) for i in chosen)
    return out


def build_sheet(
    specs: tuple[QuestionSpec, ...],
    identity: SheetIdentity,
    label: str,
    student: Student | None = None,
    *,
    layout: tuple[str | Pool, ...] = (),
    shuffle: bool = False,
) -> Sheet:
    """Draw and solve every question of the sheet of ``identity`` (its seed, id and the course
    secret, when there is one): with a layout, the questions its pools pick for this sheet;
    with ``shuffle``, in an order of the sheet's own, numbered as printed. A question's
    numbers never depend on its place."""
    placed = placed_questions(specs, layout, identity)
    if shuffle:
        order = order_generator(identity).permutation(len(placed))
        placed = [placed[int(i)] for i in order]
    items = []
    for number, (spec, slot) in enumerate(placed, 1):
        item = make_item(spec, identity, number)
        items.append(item if slot is None else replace(item, slot=slot))
    return Sheet(
        id=identity.sheet,
        label=label,
        student=student,
        items=tuple(items),
        code=sheet_code(identity),
    )
