"""Drawn and solved builds for tests that need a sheet's records without a build's folder.

``make_build`` draws every sheet as ``worksheetgen build`` would (``solve.item.build_sheet``,
each by its ``SheetIdentity``), but returns the solved ``Build`` in memory: no plan, no
sink, nothing rendered or written. It lived in ``worksheetgen.pipeline.sheet`` as a third
route beside the build's own, used only by tests (issue 35 §1). ``render_all`` renders such a
build's whole documents in one call (sheet, key and grid in each format); it lived there too.
"""

from __future__ import annotations

from collections.abc import Sequence

from worksheetgen.language import gettext
from worksheetgen.model import Bank, Build, SheetIdentity, Student
from worksheetgen.pipeline.sheet import document_context
from worksheetgen.render.documents import render_document
from worksheetgen.render.helpers import grid_context, sheet_grid_row
from worksheetgen.solve.item import build_sheet


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
