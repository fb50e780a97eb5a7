"""Solve: exact answers, printed answers and worked steps for drawn questions, then checks.

Every Item is checked before anything is written: the family already cross-checked exact
values against NumPy floats; here the key invariants are checked on the printed answers.
"""

from __future__ import annotations

from typing import Any

from worksheetgen.draw import draw_given
from worksheetgen.errors import SolveError
from worksheetgen.families import get_family
from worksheetgen.models import Item, QuestionSpec, Sheet, Student
from worksheetgen.render import render_prompt


def item_label(spec: QuestionSpec, sheet_id: str) -> str:
    """How a failing item is named in an error: sheet, question id and where it was written."""
    loc = spec.location
    where = loc.file if loc.line is None else f"{loc.file}:{loc.line}"
    return f"{where}: questions[{spec.id}] (sheet {sheet_id})"


def solve_item(spec: QuestionSpec, given: dict[str, Any], number: int, sheet_id: str) -> Item:
    """Solve one drawn question and render its prompt."""
    family = get_family(spec.family)
    label = item_label(spec, sheet_id)
    solution = family.solve(given, spec.decimals, label)
    context = dict(given)
    context.update(getattr(family, "prompt_context", lambda g: {})(given))
    prompt = render_prompt(family.prompt, context, file="<family " + family.name + ">")
    if spec.prompt is not None:
        custom = render_prompt(spec.prompt, context, file=spec.location.file,
                               line=spec.location.line, field=f"questions[{spec.id}].prompt")
        prompt = custom
    item = Item(number=number, spec=spec, given=given, prompt=prompt, solution=solution)
    check_invariants(item, label)
    return item


def check_invariants(item: Item, label: str) -> None:
    """Properties every key must have; a failure is a bug and stops the build."""
    sol = item.solution
    names = {a.name for a in sol.answers}
    for part in sol.parts:
        if part.answer not in names:
            raise SolveError(f"part asks for unknown answer {part.answer!r}", field=label)
    for a in sol.answers:
        if a.name == "A" and a.kind == "matrix":
            for i, row in enumerate(a.value):
                total = sum(float(x) for x in row)
                if abs(total - 1.0) > 1e-12:
                    raise SolveError(f"row {i + 1} of A sums to {total}, not 1", field=label)
            if item.given.get("causal"):
                for i, row in enumerate(a.value):
                    if any(float(x) != 0.0 for x in row[i + 1:]):
                        raise SolveError(f"row {i + 1} of A puts weight on a future key",
                                         field=label)


def build_sheet(specs: tuple[QuestionSpec, ...], seed: int, sheet_id: str, label: str,
                student: Student | None = None) -> Sheet:
    """Draw and solve every question of one sheet."""
    items = tuple(solve_item(spec, draw_given(spec, seed, sheet_id), i + 1, sheet_id)
                  for i, spec in enumerate(specs))
    return Sheet(id=sheet_id, label=label, student=student, items=items)
