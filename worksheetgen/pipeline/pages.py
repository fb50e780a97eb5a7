"""How many pages each sheet of a build will take, before any TeX runs (#32 §1): the solved
sheets handed to ``render.pagefit``'s model with what the sheet template prints of them
(headings, points, room to work, a scannable sheet's score boxes).

It imports render's model and template helpers, scan's score rows and this package's bank
loading; it prints nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from worksheetgen.model import Build, Sheet
from worksheetgen.pipeline.options import BuildOptions
from worksheetgen.pipeline.plan import plan_versions
from worksheetgen.pipeline.renderer import Renderer
from worksheetgen.pipeline.sheet import load_bank
from worksheetgen.render.helpers import item_title, part_points_text, points_text, work_space
from worksheetgen.render.pagefit import (
    PAPERS,
    header_height,
    large_paper,
    question_fit,
    sheet_pages,
)
from worksheetgen.scan.positions import score_rows

__all__ = [
    "PageReport",
    "PageSpread",
    "draw_versions",
    "page_counts",
    "page_report",
    "page_spread",
    "pages_line",
]


def _own_decimals(build: Build, sheet: Sheet, index: int) -> bool:
    item = sheet.items[index]
    return item.spec.decimals != build.info.decimals and any(
        a.tolerance for a in item.solution.answers
    )


def page_counts(
    build: Build, paper: str, scannable: bool = False, large: bool = False
) -> list[int]:
    """The pages each sheet of ``build`` takes on ``paper`` (a4 or letter), in order, as the
    exam layout would set them (``scannable``: with a scanner's boxes and score rows;
    ``large``: in large print, on its smaller text block before the pages are scaled up)."""
    size = large_paper(paper) if large else PAPERS[paper]
    counts = []
    for sheet in build.sheets:
        fits = []
        for i, item in enumerate(sheet.items):
            space = work_space(build, item)
            fits.append(
                question_fit(
                    item,
                    size,
                    title=item_title(item),
                    points=points_text(item.spec.points),
                    part_points=[part_points_text(item, p) for p in item.solution.parts],
                    room_mm=space.mm if space else 0.0,
                    score_rows=[[t for _, t in v] for _, v in score_rows(item)]
                    if scannable
                    else (),
                    scannable=scannable,
                    own_decimals=_own_decimals(build, sheet, i),
                )
            )
        header = header_height(
            size,
            title=build.info.title,
            course=build.info.course,
            questions=len(sheet.items),
            instructions=build.info.instructions,
            scannable=scannable,
            student_name=sheet.student.name if sheet.student else "",
        )
        counts.append(sheet_pages(header, fits, size))
    return counts


@dataclass(frozen=True)
class PageSpread:
    """The fewest and most pages a sheet of a build takes on a paper, plain or scannable
    (``large``: in large print, never scannable)."""

    paper: str
    scannable: bool
    low: int
    high: int
    large: bool = False

    @property
    def text(self) -> str:
        """ "5" or "5-6"."""
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"


@dataclass(frozen=True)
class PageReport:
    """How many pages the sheets of a build will take: ``sheets`` versions drawn at
    ``seed``, the spread on each paper, plain and scannable as asked."""

    seed: int
    sheets: int
    spreads: tuple[PageSpread, ...]


PAPER_NAMES = {"a4": "A4", "letter": "Letter"}


def page_spread(
    build: Build, paper: str, scannable: bool = False, large: bool = False
) -> PageSpread:
    """The spread of ``page_counts`` over the build's sheets."""
    counts = page_counts(build, paper, scannable, large)
    return PageSpread(paper, scannable, min(counts), max(counts), large)


def draw_versions(options: BuildOptions, sheets: int) -> Build:
    """The sheets ``build --versions N`` would draw with ``options`` (banks, title, course,
    decimals, room to work, secret, seed), solved, nothing rendered."""
    bank = load_bank(options)
    plan = plan_versions(sheets, options.seed, options.secret)
    drawn = Build(info=bank.info, seed=options.seed, bank=bank, sheets=(), secret=options.secret)
    draw = Renderer().draw  # as a build draws each sheet, by its identity
    return replace(drawn, sheets=tuple(draw(drawn, entry) for entry in plan.entries))


def page_report(
    options: BuildOptions,
    sheets: int = 30,
    papers: Sequence[str] = ("a4", "letter"),
    scannable: Sequence[bool] = (False, True),
    large: bool = False,
) -> PageReport:
    """Draw ``sheets`` versions (A, B, ...) of the build ``options`` describe (its banks,
    title, course, decimals, room to work, secret, as a build reads them; its seed) and
    count their pages on each of ``papers``, plain and or scannable (``large``: and in
    large print): no TeX runs."""
    build = draw_versions(options, sheets)
    spreads = tuple(page_spread(build, p, s) for s in scannable for p in papers)
    if large:
        spreads += tuple(page_spread(build, p, large=True) for p in papers)
    return PageReport(options.seed, sheets, spreads)


def pages_line(report: PageReport) -> str:
    """``check``'s line: "pages: 4 a sheet on A4, 4-5 on Letter (30 sheets drawn at seed 0;
    scannable: 4 on A4, 4-5 on Letter)", a paper or kind of sheet left out when not asked."""

    def on(spreads: Sequence[PageSpread], what: str) -> str:
        said = [f"{s.text} on {PAPER_NAMES[s.paper]}" for s in spreads]
        if what:
            said[0] = f"{spreads[0].text} {what} on {PAPER_NAMES[spreads[0].paper]}"
        return ", ".join(said)

    plain = [s for s in report.spreads if not s.scannable and not s.large]
    scan = [s for s in report.spreads if s.scannable]
    large = [s for s in report.spreads if s.large]
    drawn = f"{report.sheets} sheet{'s' if report.sheets != 1 else ''} drawn at seed {report.seed}"
    if large:
        drawn += f"; large print: {on(large, '')}"
    if plain and scan:
        return f"pages: {on(plain, 'a sheet')} ({drawn}; scannable: {on(scan, '')})"
    if scan:
        return f"pages: {on(scan, 'a scannable sheet')} ({drawn})"
    return f"pages: {on(plain, 'a sheet')} ({drawn})"
