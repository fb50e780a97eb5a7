"""The one renderer of a build: it holds the templates (the bundled ones, or ``--templates``)
and turns each drawn sheet into its fragments (its part of the sheets' and keys' documents,
its line of key.json and of the manifest's draws, its row of the answer grid, its own HTML
pages) and renders those documents' heads and tails. A class's fragments go into its
combined documents; a lone sheet is a class of one whose documents are its one fragment
between their head and tail (``alone``: no odd-page starts or page ranges to cut by)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from worksheetgen.keyjson import write as keyfile
from worksheetgen.language import using
from worksheetgen.model import Build, Sheet
from worksheetgen.pipeline.answers import ANSWERS, answers_context
from worksheetgen.pipeline.plan import ClassPlan, Entry
from worksheetgen.pipeline.practice import PRACTICE, practice_context
from worksheetgen.pipeline.sheet import document_context
from worksheetgen.render.documents import render_document
from worksheetgen.render.grid import GridRow
from worksheetgen.render.helpers import grid_context, item_title, sheet_grid_row
from worksheetgen.render.worked import WorkedKeys, WorkedPiece
from worksheetgen.solve.item import build_sheet

KINDS = {"sheet": "sheets", "key": "keys"}  # kind -> combined document
GRID = "keys-grid"  # the TA's answer grid of the whole class (not cut per sheet)
FRAGMENT = {"doc_head": False, "doc_tail": False, "class_build": True}
ALONE = {**FRAGMENT, "class_build": False}  # a lone sheet's: its documents are its own


def tex_kinds(plan: ClassPlan) -> dict[str, str]:
    """The combined LaTeX documents of a class, by kind: the sheets and keys, and (with
    separate answer sheets) the answer sheets."""
    return {**KINDS, ANSWERS: ANSWERS} if plan.answer_sheet else KINDS


@dataclass(frozen=True)
class RenderedSheet:
    """Everything a class build writes for one sheet (texts only: cheap to pass between
    processes)."""

    tex: dict[str, str]  # kind (sheet/key, and answers) -> LaTeX fragment
    md: dict[str, str]  # kind -> Markdown fragment
    key_line: str  # the sheet in key.json, one line
    draws_line: str  # its drawn parameters in manifest.json, one line
    items: int
    grid: GridRow  # its line of the answer grid
    worked: tuple[WorkedPiece, ...] = ()  # its questions as the key prints them (TA key)
    #: kind -> the sheet's own whole HTML document (its <article> goes into the class's)
    html: dict[str, str] = field(default_factory=dict)
    #: the drawn sheet itself, for a lone sheet (a class's pass between processes without it)
    drawn: Sheet | None = None


@dataclass(frozen=True)
class Renderer:
    """Renders every document of a build from one set of templates: the bundled ones
    (``template_dir`` None) or a folder of the user's."""

    template_dir: str | None = None
    practice: bool = False  # each sheet's practice page too (--practice)

    @property
    def bundled(self) -> bool:
        """True for the bundled templates (their TeX preamble is ours: its format is dumped
        once and reused)."""
        return self.template_dir is None

    def render(self, fmt: str, kind: str, ctx: dict[str, Any]) -> str:
        """One document (or part of one): ``fmt`` latex or markdown, ``kind`` its template."""
        return render_document(fmt, kind, ctx, self.template_dir)

    def draw(self, build: Build, entry: Entry) -> Sheet:
        """Draw and solve one sheet of a build, by its identity."""
        return build_sheet(
            build.bank.questions,
            entry.identity,
            entry.label,
            entry.student,
            layout=build.bank.layout,
            shuffle=build.info.shuffle,
        )

    def sheet(
        self,
        build: Build,
        entry: Entry,
        scan_index: int | None = None,
        answer_sheet: bool = False,
        alone: bool = False,
    ) -> RenderedSheet:
        """Draw, solve and render one sheet of a class (a pure function of its inputs;
        ``scan_index``: its place in the class, for a scannable sheet's page code;
        ``answer_sheet``: the boxes go on an answer sheet of their own, the sheet is a
        booklet; ``alone``: a lone sheet, a class of one, its build the sheet's own and the
        drawn sheet kept). The words the code adds (a question's heading in the grid, say) are
        in the build's language wherever this runs: a forked worker or a thread too."""
        with using(build.language, build.decimal):
            return self._sheet(build, entry, scan_index, answer_sheet, alone)

    def _sheet(
        self, build: Build, entry: Entry, scan_index: int | None, answer_sheet: bool, alone: bool
    ) -> RenderedSheet:
        sheet = self.draw(build, entry)
        fragment = FRAGMENT
        if alone:  # its documents, page codes and key.json are the one sheet's
            build, fragment = replace(build, sheets=(sheet,)), ALONE
        ctx = {**document_context(build, [sheet]), **fragment}
        # each question's body as the key prints it, rendered once: for the key and for the
        # TA key's worked versions (a NUL after each)
        one = {**ctx, "sheet": sheet}
        bodies = {
            fmt: self.render(fmt, "worked", one).split("\x00")[: len(sheet.items)]
            for fmt in ("latex", "markdown")
        }
        # a scannable class's printed sheet carries its marks and page codes (LaTeX only),
        # or its answer sheet does, the sheet a booklet that says so
        tex, md = {}, {}
        if answer_sheet:
            assert scan_index is not None
            scan_ctx = {**ctx, "answer_sheet": True}
            answers = {**ctx, **answers_context(build, [sheet], scan_index)}
            tex[ANSWERS] = self.render("latex", ANSWERS, answers)
        elif scan_index is None:
            scan_ctx = ctx
        else:
            scan_ctx = {**document_context(build, [sheet], True, scan_index), **fragment}
        for kind in KINDS:
            latex_ctx = scan_ctx if kind == "sheet" else ctx
            tex[kind] = self.render("latex", kind, {**latex_ctx, "worked_bodies": bodies["latex"]})
            with_bodies = {**ctx, "worked_bodies": bodies["markdown"]}
            md[kind] = self.render("markdown", kind, with_bodies)
        own = {**ctx, "doc_head": True, "doc_tail": True}  # the sheet's own whole pages
        html = {kind: self.render("html", kind, own) for kind in KINDS}
        if self.practice:
            html[PRACTICE] = self.practice_page(build, sheet)
        draws = keyfile.sheet_draws(sheet)
        worked = tuple(
            WorkedPiece(item.spec.id, item_title(item), tex_body, md_body)
            for item, tex_body, md_body in zip(
                sheet.items, bodies["latex"], bodies["markdown"], strict=True
            )
        )
        return RenderedSheet(
            tex,
            md,
            keyfile.json_element(keyfile.sheet_json(sheet, build.large_print)),
            keyfile.json_element(draws),
            len(sheet.items),
            sheet_grid_row(sheet),
            worked,
            html,
            sheet if alone else None,
        )

    def document_ends(
        self, build: Build, scannable: bool = False, answer_sheet: bool = False, alone: bool = False
    ) -> dict[str, tuple[str, str]]:
        """The head (preamble and all) and the tail of each combined LaTeX document, by kind
        (``scannable``: the sheets' preamble defines the scanner's marks, or with
        ``answer_sheet`` the answer sheets' do; ``alone``: a lone sheet's documents)."""

        ends = {}
        marked = "sheet" if not answer_sheet else ANSWERS
        for kind in (*KINDS, ANSWERS) if answer_sheet else KINDS:
            ctx = {
                **document_context(build, [], scannable and kind == marked),
                **(ALONE if alone else FRAGMENT),
            }
            if kind == ANSWERS:
                ctx.update(answers_context(build, []))
            ends[kind] = (
                self.render("latex", kind, {**ctx, "doc_head": True}),
                self.render("latex", kind, {**ctx, "doc_tail": True}),
            )
        return ends

    def practice_page(self, build: Build, sheet: Sheet) -> str:
        """One sheet's practice page (the grader's view of its key inside)."""
        ctx = {**document_context(build, [sheet]), **practice_context(build, sheet)}
        return self.render("html", PRACTICE, ctx)

    def html_ends(self, build: Build) -> dict[str, tuple[str, str]]:
        """The head and tail of each combined HTML document of a class, by kind."""
        ends = {}
        for kind in KINDS:
            ctx = {**document_context(build, []), **FRAGMENT}
            ends[kind] = (
                self.render("html", kind, {**ctx, "doc_head": True}),
                self.render("html", kind, {**ctx, "doc_tail": True}),
            )
        return ends

    def grid_head(self, build: Build) -> str:
        """The answer grid's LaTeX up to its first question (the preamble, as the key's: the
        same TeX format), rendered before any sheet is drawn."""
        ctx = {
            **document_context(build, []),
            **grid_context(build, []),
            "doc_head": True,
            "doc_tail": False,
        }
        return self.render("latex", "grid", ctx)


def grid_body(
    build: Build, rows: Sequence[GridRow], worked: WorkedKeys | None, plan: ClassPlan
) -> dict[str, Any]:
    """What the TA key's templates see once every sheet is drawn (for the rest of the
    LaTeX document after ``grid_head``, and the whole Markdown one): the answer grid, each
    row naming its sheet's version of a question where several are printed, then the
    worked keys, one per version of each question (``worked``; None: a lone sheet's grid,
    its key beside it)."""
    # the grid is the one "sheet" the base template's loop shows (the head is already out)
    ctx = {
        **document_context(build, []),
        **grid_context(build, rows, worked.labels() if worked is not None else ()),
        "sheets": [None],
    }
    if worked is None:
        return ctx
    ctx["worked"] = worked.questions()
    ctx["worked_own"] = f"the class's keys.pdf and in {plan.subfolder}/<id>-key.pdf"
    return ctx
