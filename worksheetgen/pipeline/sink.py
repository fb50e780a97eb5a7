"""The plain sink of a class build: every rendered sheet written straight into the staging
folder (the combined documents, key.json, the draws, the answer grid)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from worksheetgen.keyjson import write as keyfile
from worksheetgen.model import Build
from worksheetgen.pipeline.options import (
    ClassStats,
    Progress,
    engine_refusal,
)
from worksheetgen.pipeline.plan import ClassPlan
from worksheetgen.pipeline.renderer import (
    GRID,
    KINDS,
    RenderedSheet,
    document_ends,
    grid_body,
    grid_head,
)
from worksheetgen.render.documents import render_document
from worksheetgen.render.grid import GridRow
from worksheetgen.render.worked import WorkedKeys

if TYPE_CHECKING:
    from worksheetgen.tex.run import TexFeed


MD_SEPARATOR = "\n---\n\n"


def write_sheets(
    build: Build,
    plan: ClassPlan,
    tmp: Path,
    template_dir: str | None,
    report: Progress,
    stats: ClassStats,
    sheets: Iterator[RenderedSheet],
    feeds: dict[str, TexFeed] | None = None,
    ends: dict[str, tuple[str, str]] | None = None,
    head_of_grid: str | None = None,
) -> list[str]:
    """Write every rendered sheet straight to disk in roster order (and, with ``feeds``, to
    the TeX runs reading the combined documents meanwhile); ``ends``: the documents' heads
    and tails when already rendered, ``head_of_grid`` the answer grid's. The answer grid
    (``keys-grid.tex/.md``) is written once every sheet is: each of its tables has a row
    per sheet (a feed ``GRID`` gets its text after the head it already had)."""
    # TeX machinery only when PDFs are built
    from worksheetgen.tex.engines import needs_unicode_engine, unprintable_sample

    def tex_out(kind: str, text: str) -> None:
        handles[(kind, ".tex")].write(text)
        if feeds is not None:  # on disk first: a failed run keeps at least what TeX read
            handles[(kind, ".tex")].flush()
            feeds[kind].write(text)

    files: list[str] = []
    handles = {
        (kind, ext): open(tmp / f"{KINDS[kind]}{ext}", "w", encoding="utf-8")
        for kind in KINDS
        for ext in (".tex", ".md")
    }
    files += [f"{KINDS[kind]}{ext}" for kind, ext in handles]
    draws = open(tmp / ".draws.json", "w", encoding="utf-8")
    key_fh = open(tmp / "key.json", "w", encoding="utf-8")
    files.append("key.json")
    unicode = {"sheet": False, "key": False}
    grid_rows: list[GridRow] = []
    worked = WorkedKeys(versions_build=plan.subfolder == "versions")
    grid_fh = open(tmp / f"{GRID}.tex", "w", encoding="utf-8")
    files.append(f"{GRID}.tex")
    try:
        ends = ends or document_ends(build, template_dir, plan.scannable)
        for kind in KINDS:
            head = ends[kind][0]
            tex_out(kind, head)
            unicode[kind] = needs_unicode_engine(head)
        head = head_of_grid if head_of_grid is not None else grid_head(build, template_dir)
        grid_fh.write(head)
        if feeds is not None and GRID in feeds:
            grid_fh.flush()
            feeds[GRID].write(head)
        key_around = keyfile.split_at(keyfile.key_json(build), "sheets")
        key_list = keyfile.StreamedList(key_fh, around=key_around)
        draw_list = keyfile.StreamedList(draws)  # spliced into manifest.json at the end
        total = len(plan.entries)
        for n, out in enumerate(sheets):
            for kind in KINDS:
                tex_out(kind, out.tex[kind])
                handles[(kind, ".md")].write(
                    out.md[kind] if n == 0 else MD_SEPARATOR + out.md[kind]
                )
                unicode[kind] = unicode[kind] or needs_unicode_engine(out.tex[kind])
            key_list.add_encoded(out.key_line)
            draw_list.add_encoded(out.draws_line)
            grid_rows.append(out.grid)
            worked.add(out.grid.label, out.grid.code, out.worked)
            stats.sheets += 1
            stats.items += out.items
            report("sheets", n + 1, total)
            if feeds is not None and any(f.broken for f in feeds.values()):
                break  # TeX stopped on an error: it is reported, the rest is not needed
        for kind in KINDS:
            tex_out(kind, ends[kind][1])
        key_list.close()
        draw_list.close()
        grid = grid_body(build, grid_rows, worked, plan)
        tail = {**grid, "doc_head": False, "doc_tail": True}
        text = render_document("latex", "grid", tail, template_dir)
        grid_fh.write(text)
        if feeds is not None and GRID in feeds:  # TeX first, the Markdown meanwhile
            grid_fh.flush()
            feeds[GRID].write(text)
    finally:
        for fh in (*handles.values(), draws, key_fh, grid_fh):
            fh.close()
    markdown = render_document("markdown", "grid", grid, template_dir)
    (tmp / f"{GRID}.md").write_text(markdown, encoding="utf-8")
    files.append(f"{GRID}.md")
    for kind, name in KINDS.items():
        stats.engines[name] = "lualatex" if unicode[kind] else "pdflatex"
        if stats.forced_engine is not None:
            if stats.forced_engine == "pdflatex" and unicode[kind]:
                text = (tmp / f"{name}.tex").read_text("utf-8")
                raise engine_refusal(unprintable_sample(text), f"{name}.tex")
            stats.engines[name] = stats.forced_engine
    return files
