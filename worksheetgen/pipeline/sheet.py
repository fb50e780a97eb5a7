"""The orchestrator: banks -> sheets -> documents -> files, written atomically at the end.

A build writes everything into a temporary folder beside its target and moves it into place
only when every step, PDFs included, has succeeded; a failed build leaves earlier output as
it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from worksheetgen.bank.load import default_bank_path, load_banks, with_decimals
from worksheetgen.errors import BankError, UsageError
from worksheetgen.exact.kinds import NUMERIC_KINDS
from worksheetgen.families import get_family
from worksheetgen.language import N_, decimal, gettext, language, ngettext
from worksheetgen.model import (
    QUIZ_SPACE,
    TEXT_HEIGHT_MM,
    TEXT_HEIGHTS_MM,
    Bank,
    Build,
    Item,
    Part,
    QuestionSpec,
    Sheet,
    SheetIdentity,
    Space,
    Student,
)
from worksheetgen.pipeline.options import BuildOptions
from worksheetgen.render.documents import render_document
from worksheetgen.render.grid import (
    GridRow,
    grid_layout,
    grid_questions,
    grid_row,
    with_versions,
)
from worksheetgen.render.prompts import markup_math_problem
from worksheetgen.scan.layout import MAX_SHEETS, code_parts
from worksheetgen.scan.positions import score_rows, sheet_build_field
from worksheetgen.solve.item import build_sheet
from worksheetgen.textrules import problem as text_problem


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
    for c in get_family(item.spec.family).carries_for(item.given, asked):
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
    family's, in the language being rendered (a plugin family's title no catalog knows, as
    it is)."""
    return item.spec.title or gettext(get_family(item.spec.family).title)


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


def load_bank(options: BuildOptions) -> Bank:
    """The banks named in the options (or the bundled default), with CLI overrides applied."""
    bank = load_banks(options.banks or [default_bank_path()])
    info = bank.info
    if options.title:
        bad = text_problem(options.title)
        if bad:
            raise UsageError(f"--title: {bad}")
        if len(options.title) > 4000:  # as a bank's title
            raise UsageError(f"--title: expected at most 4000 characters, got {len(options.title)}")
        bad = markup_math_problem(options.title)  # its $math$ prints as a bank title's
        if bad:
            raise UsageError(f"--title: {bad}")
        info = replace(info, title=options.title)
    if options.course:
        bad = text_problem(options.course)
        if bad:
            raise UsageError(f"--course: {bad}")
        bad = markup_math_problem(options.course)
        if bad:
            raise UsageError(f"--course: {bad}")
        info = replace(info, course=options.course)
    if options.kind and not info.kind:  # a bank's sheet: kind wins over the course's
        info = replace(info, kind=options.kind)
    if options.space is not None:  # a question's or its bank's space wins over the course's
        info = replace(info, space=options.space)
    if options.shuffle is not None:
        info = replace(info, shuffle=options.shuffle)
    questions = bank.questions
    if options.carry is not None:  # a question's or its bank's carry wins over the course's
        questions = tuple(
            replace(q, carry=options.carry) if q.carry is None else q for q in questions
        )
    if options.decimals is not None:
        questions = tuple(replace(q, decimals=options.decimals) for q in questions)
        info = with_decimals(info, options.decimals)
    _check_space_fits(info.space, questions, options.paper)
    return replace(bank, info=info, questions=questions)


def _check_space_fits(default: Space | None, questions: Sequence[QuestionSpec], paper: str) -> None:
    """Room to work must fit on the paper the build prints on (the bank was checked
    against the tallest paper when it was loaded)."""
    limit = TEXT_HEIGHTS_MM.get(paper, TEXT_HEIGHT_MM)
    if default is not None and default.mm > limit:
        raise UsageError(_too_tall(default, paper, limit), field="space")
    for q in questions:
        if q.space is not None and q.space.mm > limit:
            raise BankError(
                _too_tall(q.space, paper, limit),
                file=q.location.file,
                line=q.location.line,
                field="space",
            )


def _too_tall(space: Space, paper: str, limit: float) -> str:
    return (
        f"expected a height that fits on a {paper} page (at most {limit:g}mm, the text "
        f"height), got {space.height!r}"
    )


def make_build(
    bank: Bank,
    seed: int,
    sheets: Sequence[tuple[str, str, Student | None]] | None = None,
    secret: bytes | None = None,
    paper: str = "a4",
) -> Build:
    """Draw and solve every sheet: (sheet id, label, student) for each, default one sheet;
    with the course secret, when there is one (``paper``: what the documents lay out on)."""

    wanted = sheets or [(bank.info.slug, gettext("Worksheet"), None)]
    return Build(
        info=bank.info,
        seed=seed,
        bank=bank,
        sheets=tuple(
            build_sheet(
                bank.questions,
                SheetIdentity(seed, sid, secret),
                label,
                student,
                layout=bank.layout,
                shuffle=bank.info.shuffle,
            )
            for sid, label, student in wanted
        ),
        secret=secret,
        paper=paper,
    )


def display_kinds(build: Build, sheets: Sequence[Sheet]) -> list[str]:
    """The display kinds a document may show (sorted): those the bank's families declare,
    so a class build's preamble, rendered before any sheet is drawn, loads what they need,
    and those the given sheets show."""
    kinds = {k for q in build.bank.questions for k in get_family(q.family).display_kinds}
    kinds.update(g.kind for sheet in sheets for item in sheet.items for g in item.solution.shown)
    return sorted(kinds)


def document_context(
    build: Build,
    sheets: Sequence[Sheet] | None = None,
    scannable: bool = False,
    first: int = 0,
) -> dict[str, Any]:
    """What every document template sees (``scannable``: the sheets carry marks, a page
    code and boxes for a scanner; ``first``: the first sheet's place in key.json)."""

    def kinds(shown: Sequence[Sheet]) -> list[str]:
        return display_kinds(build, shown)

    return {
        "build": build,
        "paper": build.paper,
        # the fixed words' language: render_document renders in it; HTML's lang and dir,
        # LaTeX's babel language are its properties
        "language": build.language,
        "decimal": build.decimal,  # the numbers' separator: render_document prints with it
        "lang": language(build.language).code,
        "dir": language(build.language).direction,
        "tex_language": language(build.language).babel,
        "display_kinds": kinds,
        "sheets": list(sheets if sheets is not None else build.sheets),
        "points_text": points_text,
        "part_points_text": part_points_text,
        "carry_text": carry_text,
        "work_space": lambda item: work_space(build, item),
        "uses_space": uses_space(build),
        "space_text": space_text,
        "sheet_points": sheet_points,
        "sheet_points_text": sheet_points_text,
        "item_title": item_title,
        "opening_lines": opening_lines,
        "large_print": large_print(build, sheets if sheets is not None else build.sheets),
        **(scan_context(build, sheets or build.sheets, first) if scannable else {}),
    }


def large_print(build: Build, sheets: Sequence[Sheet]) -> bool:
    """Whether a document is in large print: the build asks it, or its one sheet's student
    does (a class's combined documents follow the build)."""
    if build.large_print:
        return True
    return len(sheets) == 1 and sheets[0].student is not None and sheets[0].student.large_print


def scan_context(
    build: Build, sheets: Sequence[Sheet], first: int, answers: bool = False
) -> dict[str, Any]:
    """What a scannable sheet's template sees: its code's cells (``sheets`` numbered from
    ``first`` in key.json), the TA's score boxes (``answers``: the codes are those of the
    build's answer sheets)."""

    def scan_code(sheet: Sheet) -> tuple[int, str, str]:
        index = first + next(i for i, s in enumerate(sheets) if s is sheet)
        if index >= MAX_SHEETS:
            raise UsageError(f"--scannable: expected at most {MAX_SHEETS} sheets, got more")
        # the build field: from the class and what this sheet holds (scan.positions)
        return (index, *code_parts(sheet_build_field(build, sheet, answers), index))

    return {"scannable": True, "scan_code": scan_code, "scan_scores": score_rows}


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


def render_all(
    build: Build,
    template_dir: str | None = None,
    scannable: bool = False,
    answer_sheet: bool = False,
) -> dict[str, str]:
    """Sheet, key and the key's answer grid, as LaTeX and Markdown (sheet and key as HTML
    too), from the one Build
    (``scannable``: the sheet's LaTeX for a scanner; ``answer_sheet``: a booklet whose
    answers go on a separate answer sheet, rendered by the caller)."""
    ctx = document_context(build)
    docs = {
        f"{kind}{ext}": render_document(fmt, kind, ctx, template_dir)
        for kind in ("sheet", "key")
        for fmt, ext in (("latex", ".tex"), ("markdown", ".md"))
    }
    if scannable:
        scan_ctx = document_context(build, scannable=True)
        docs["sheet.tex"] = render_document("latex", "sheet", scan_ctx, template_dir)
    elif answer_sheet:
        booklet = {**ctx, "answer_sheet": True}
        docs["sheet.tex"] = render_document("latex", "sheet", booklet, template_dir)
    for kind in ("sheet", "key"):
        docs[f"{kind}.html"] = render_document("html", kind, ctx, template_dir)
    grid = {**ctx, **grid_context(build, [sheet_grid_row(s) for s in build.sheets])}
    for fmt, ext in (("latex", ".tex"), ("markdown", ".md")):
        docs[f"key-grid{ext}"] = render_document(fmt, "grid", grid, template_dir)
    return docs


def folder_name(build: Build) -> str:
    """The output folder of a build: the sheet's slug and the seed."""
    return f"{build.info.slug}-seed{build.seed}"
