"""How many pages each sheet of a build will take, before any TeX runs (#32 §1): the solved
sheets handed to ``render.pagefit``'s model with what the sheet template prints of them
(headings, points, room to work, a scannable sheet's score boxes).

It imports render's model, scan's score rows and this package's sheet helpers; it prints
nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from worksheetgen.model import Build, Sheet
from worksheetgen.pipeline.sheet import item_title, part_points_text, points_text, work_space
from worksheetgen.render.pagefit import PAPERS, header_height, question_fit, sheet_pages
from worksheetgen.scan.positions import score_rows

__all__ = ["PageSpread", "page_counts", "page_spread"]


def _own_decimals(build: Build, sheet: Sheet, index: int) -> bool:
    item = sheet.items[index]
    return item.spec.decimals != build.info.decimals and any(
        a.tolerance for a in item.solution.answers
    )


def page_counts(build: Build, paper: str, scannable: bool = False) -> list[int]:
    """The pages each sheet of ``build`` takes on ``paper`` (a4 or letter), in order, as the
    exam layout would set them (``scannable``: with a scanner's boxes and score rows)."""
    size = PAPERS[paper]
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
    """The fewest and most pages a sheet of a build takes on a paper."""

    paper: str
    scannable: bool
    low: int
    high: int
    sheets: int

    @property
    def text(self) -> str:
        """"5" or "5-6"."""
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"


def page_spread(build: Build, paper: str, scannable: bool = False) -> PageSpread:
    """The spread of ``page_counts`` over the build's sheets."""
    counts: Sequence[int] = page_counts(build, paper, scannable)
    return PageSpread(paper, scannable, min(counts), max(counts), len(counts))
