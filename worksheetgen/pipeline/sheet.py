"""One sheet's inputs and documents: the banks with the build's options applied
(``load_bank``), what every document template sees (``document_context``: render's template
helpers bound to the build, with the display kinds its families declare and, for a scanner,
each sheet's page code); a build renders each sheet through ``renderer.Renderer`` (a solved
build's whole documents in one call, for tests, is ``tests.solved.render_all``).

The helpers the templates call live in ``render.helpers``; this module binds what lies above
render (the families, the scanner's codes) into their context.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from worksheetgen.bank.load import default_bank_path, load_banks, with_decimals
from worksheetgen.errors import BankError, UsageError
from worksheetgen.families import get_family
from worksheetgen.language import language
from worksheetgen.model import (
    TEXT_HEIGHT_MM,
    TEXT_HEIGHTS_MM,
    Bank,
    Build,
    QuestionSpec,
    Sheet,
    Space,
)
from worksheetgen.pipeline.options import BuildOptions
from worksheetgen.render.helpers import (
    carry_text,
    item_title,
    large_print,
    large_print_tex,
    large_sheet,
    opening_lines,
    part_points_text,
    points_text,
    sheet_points,
    sheet_points_text,
    space_text,
    uses_space,
    work_space,
)
from worksheetgen.render.pagefit import LARGE_SCALE, large_geometry, large_half_cm
from worksheetgen.render.prompts import markup_math_problem
from worksheetgen.scan.layout import MAX_SHEETS, code_parts
from worksheetgen.scan.positions import score_rows, sheet_build_field
from worksheetgen.textrules import problem as text_problem


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
        # the LaTeX documents: which sheets are set in large print, and how
        "large_print_tex": large_print_tex(build, sheets if sheets is not None else build.sheets),
        "large_sheet": lambda sheet: large_sheet(build, sheet),
        "large_geometry": large_geometry(build.paper),
        "large_scale": f"{LARGE_SCALE:g}",
        "large_half": large_half_cm(build.paper),
        **(scan_context(build, sheets or build.sheets, first) if scannable else {}),
    }


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

    return {
        "scannable": True,
        "scan_code": scan_code,
        "scan_scores": score_rows,
        "student_number": build.student_number,
    }


def folder_name(build: Build) -> str:
    """The output folder of a build: the sheet's slug and the seed."""
    return f"{build.info.slug}-seed{build.seed}"
