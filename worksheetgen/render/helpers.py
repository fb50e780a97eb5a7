"""The functions a document's templates call, and what they print of a solved sheet: points
in words, the key's carried-forward line, a question's heading, the room to work under it, how
many lines its opening takes (kept together on a page), large print, a sheet's row of the TA's
answer grid and the grid's context.

Each is a function of the solved records (a question's title and carried steps were attached
when it was solved: no family is asked here) and of the language being rendered. It imports
the records, exact/'s answer kinds, the languages and this package's grid; it prints nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from worksheetgen.exact.kinds import NUMERIC_KINDS
from worksheetgen.language import N_, decimal, gettext, ngettext
from worksheetgen.model import QUIZ_SPACE, Build, Item, Part, Sheet, Space
from worksheetgen.render.grid import GridRow, grid_layout, grid_questions, grid_row, with_versions


def points_text(points: float) -> str:
    """'1 point', '6 points', '2.5 points' (in the language being rendered: '2,5 Punkte')."""
    p = int(points) if float(points).is_integer() else points
    return ngettext("{n} point", "{n} points", p, n=decimal(str(p)))


def sheet_points(sheet: Sheet) -> str:
    """The total points of a sheet, as printed (a number: "30", "7.5"; German "7,5")."""
    total = sum(i.spec.points for i in sheet.items)
    return decimal(str(int(total)) if float(total).is_integer() else f"{total:g}")


def sheet_points_text(sheet: Sheet) -> str:
    """The total points of a sheet in words: "30 points", "1 point"."""
    return points_text(sum(i.spec.points for i in sheet.items))


def part_points_text(item: Item, part: Part) -> str:
    """A part's points in words ("2 points") when its question gives points per part, else
    "" (a question's points split equally print only with the question)."""
    for name, points in item.spec.part_points:
        if name == part.answer:
            return points_text(points)
    return ""


def carry_text(item: Item) -> str:
    """The key's line on error carried forward for a question: which parts ``grade`` credits
    when they follow from the student's own earlier answers ("Carried forward: (b) from (a)."),
    that none is credited where the bank turns it off, or "" for a question with no such step."""
    asked = [p.answer for p in item.solution.parts]
    letter = {name: "abcdefghijklmnopqrstuvwxyz"[i] for i, name in enumerate(asked) if i < 26}
    steps: dict[str, list[str]] = {}
    for c in item.carries:  # the family's steps, attached when the question was solved
        sources = [letter[n] for n in c["from"] if n in letter]
        if c["answer"] in letter and sources and c["answer"] not in steps:
            steps[c["answer"]] = sources
    if not steps:
        return ""
    if item.spec.carry is False:
        return gettext("No credit carried forward: each part is marked against the key alone.")
    said = gettext("; ").join(
        gettext(
            "({part}) from {sources}",
            part=letter[a],
            sources=_listed([f"({s})" for s in sources]),
        )
        for a, sources in sorted(steps.items(), key=lambda kv: letter[kv[0]])
    )
    return gettext("Carried forward: {steps}.", steps=said)


def _listed(items: Sequence[str]) -> str:
    """Items in a sentence: "(a)", "(a) and (b)", "(a) and (b) and (c)" (as the key has
    always said it)."""
    if len(items) == 1:
        return items[0]
    return gettext("{first} and {last}", first=_listed(items[:-1]), last=items[-1])


def work_space(build: Build, item: Item) -> Space | None:
    """The room to work a sheet leaves under a question, or None: the question's own or its
    bank file's ``space``, else the course's (worksheetgen.toml), else, on a quiz, room for a
    computation question (one whose parts ask for numbers) to show its steps."""
    space = item.spec.space
    if space is None:
        space = build.info.space
    if space is None and build.info.kind == "quiz" and is_computation(item):
        space = QUIZ_SPACE
    return space if space is not None and space.height else None


def space_text(space: Space) -> str:
    """Room to work in words, as a Markdown sheet notes it: "6 cm, ruled lines"."""
    number, unit = space.height[:-2], space.height[-2:]
    styles = {"blank": N_("blank"), "lines": N_("ruled lines"), "grid": N_("squared grid")}
    return gettext(
        "{height}, {style}", height=f"{decimal(number)} {unit}", style=gettext(styles[space.style])
    )


def is_computation(item: Item) -> bool:
    """True for an open question whose parts ask for numbers (tables, rows, widths), not
    for a multiple-choice item or one answered only in words or choices."""
    if item.spec.format != "open":
        return False
    kinds = {a.name: a.kind for a in item.solution.answers}
    return any(kinds.get(p.answer) in NUMERIC_KINDS for p in item.solution.parts)


def uses_space(build: Build) -> bool:
    """True when some sheet of the build may leave room to work (its LaTeX then defines the
    macros that draw it; otherwise the preamble stays as it was)."""
    if build.info.kind == "quiz" or (build.info.space is not None and build.info.space.height):
        return True
    return any(q.space is not None and q.space.height for q in build.bank.questions)


def item_title(item: Item) -> str:
    """The heading of a question: the bank's title (its author's words, as written) or the
    family's (attached when the question was solved), in the language being rendered (a
    plugin family's title no catalog knows, as it is)."""
    return item.spec.title or gettext(item.title)


def opening_lines(item: Item, kind: str = "sheet") -> int:
    """About how many lines a question's opening takes on a sheet or key (``kind``): its
    heading, prompt, the given values, a worked solution shown with it, and its first part
    with the table to fill in (or the answer shown), at least the room a part asks for
    (``\\wspart`` keeps 6 lines). The LaTeX templates keep that much together on a page, so
    a question never starts at the foot of one page and asks its first part on the next."""
    lines = 3 + len(item.prompt) // 95  # heading, space, the prompt's lines
    if kind == "key" and item.slot is not None:
        lines += 1  # the line that says which of its pool's questions the sheet got
    heights = [g.lines for g in item.solution.shown if g.inline]
    if heights:
        lines += max(heights) + 1
    lines += sum(g.lines for g in item.solution.shown if not g.inline)
    for step in item.solution.shown_steps or ():  # title, display, space
        lines += 2 + max(1, step.math.count(r"\\") + 1 if step.math else 0)
    first = 0
    parts = item.solution.parts
    if parts:
        try:
            answer = item.solution.answer(parts[0].answer)
        except KeyError:
            answer = None
        first = 2  # the part's prompt and space
        if answer is not None and answer.kind == "matrix" and isinstance(answer.rounded, list):
            # a table to fill in (rows of blanks), or the key's matrix
            first += (2 if kind == "sheet" else 1) * len(answer.rounded) + 1
        elif answer is not None and answer.kind == "vector":
            first += 3
    return min(lines + max(first, 6), 40)


def large_print(build: Build, sheets: Sequence[Sheet]) -> bool:
    """Whether a document is in large print: the build asks it, or its one sheet's student
    does (a class's combined documents follow the build)."""
    if build.large_print:
        return True
    return len(sheets) == 1 and sheets[0].student is not None and sheets[0].student.large_print


def large_sheet(build: Build, sheet: Sheet | None) -> bool:
    """Whether a sheet's LaTeX pages (its sheet's and its key's) are in large print: the
    build asks it, or its student does (``None``: the TA's grid, never)."""
    if sheet is None:
        return False
    return build.large_print or (sheet.student is not None and sheet.student.large_print)


def large_print_tex(build: Build, sheets: Sequence[Sheet]) -> bool:
    """Whether a LaTeX document's preamble defines large print: some sheet of the build,
    or of ``sheets``, is in it (else the preamble is as it always was)."""
    return (
        build.large_print
        or build.large_print_some
        or any(large_sheet(build, sheet) for sheet in sheets)
    )


def sheet_grid_row(sheet: Sheet) -> GridRow:
    """A solved sheet's line of the TA's answer grid."""
    return grid_row(sheet, [item_title(item) for item in sheet.items])


def grid_context(
    build: Build, rows: Sequence[GridRow], versions: Sequence[dict[str, str]] = ()
) -> dict[str, Any]:
    """What the answer grid's template sees besides a document's context: the questions'
    tables (of ``rows``, one per sheet) and how many sheets there are; ``versions``: per
    sheet, the worked-key version of each question the TA key prints several of."""
    if versions:
        rows = [with_versions(row, v) for row, v in zip(rows, versions, strict=True)]
    layout = grid_layout(rows)
    return {"grid": grid_questions(rows, layout), "grid_layout": layout, "grid_count": len(rows)}
