"""Sinks: where a build's rendered sheets go, one at a time, in order.

A sink is entered before the first sheet (its documents' heads are written), given each
rendered sheet (``add``) and finished after the last (the tails, the answer grid; the list
of files it wrote). ``FolderSink`` is the plain one: every sheet written straight into the
staging folder (the combined documents, key.json, the draws, the answer grid), nothing of
it kept; ``SheetSink`` takes a class of one (a lone sheet), puts its one rendered sheet
between the heads and tails of its own documents and keeps them in memory for the finish to
write at once. The speed machinery's sink, which also feeds TeX
meanwhile and cuts the PDFs, is in ``stream``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol, TypeVar

from worksheetgen.files import failures_as_errors
from worksheetgen.keyjson import write as keyfile
from worksheetgen.model import Build
from worksheetgen.pipeline.answers import ANSWERS
from worksheetgen.pipeline.engine import document_engine
from worksheetgen.pipeline.options import BuildOptions, ClassStats
from worksheetgen.pipeline.plan import ClassPlan
from worksheetgen.pipeline.renderer import (
    GRID,
    KINDS,
    RenderedSheet,
    Renderer,
    grid_body,
    tex_kinds,
)
from worksheetgen.render.grid import GridRow
from worksheetgen.render.worked import WorkedKeys

if TYPE_CHECKING:
    from worksheetgen.tex.feed import TexFeed


MD_SEPARATOR = "\n---\n\n"
ARTICLE, ARTICLE_END = '<article class="sheet">', "</article>"  # a sheet in an HTML document
DRAWS = ".draws.json"  # the draws of every sheet, spliced into manifest.json at the end


T_contra = TypeVar("T_contra", contravariant=True)


class Sink(Protocol[T_contra]):
    """Where a build's rendered sheets go (a context manager: entered before the first)."""

    def __enter__(self) -> Sink[T_contra]: ...

    def __exit__(self, exc_type: type[BaseException] | None, *rest: Any) -> None: ...

    @property
    def stopped(self) -> bool:
        """True when the rest of the sheets is not needed (TeX stopped on an error)."""
        ...

    def add(self, sheet: T_contra) -> None: ...

    def finish(self) -> list[str]: ...


class FolderSink:
    """Writes every rendered sheet straight to disk in roster order (and, with ``feeds``, to
    the TeX runs reading the combined documents meanwhile); ``ends``: the documents' heads
    and tails when already rendered, ``head_of_grid`` the answer grid's. The answer grid
    (``keys-grid.tex/.md``) is written once every sheet is: each of its tables has a row
    per sheet (a feed ``GRID`` gets its text after the head it already had)."""

    def __init__(
        self,
        build: Build,
        plan: ClassPlan,
        tmp: Path,
        renderer: Renderer,
        stats: ClassStats,
        feeds: dict[str, TexFeed] | None = None,
        ends: dict[str, tuple[str, str]] | None = None,
        head_of_grid: str | None = None,
    ) -> None:
        self.build, self.plan, self.tmp = build, plan, tmp
        self.renderer, self.stats = renderer, stats
        self.feeds, self.ends, self.head_of_grid = feeds, ends, head_of_grid
        self.files: list[str] = []
        self._handles: dict[tuple[str, str], IO[str]] = {}
        self._open: list[IO[str]] = []
        # the combined LaTeX documents (with answer sheets, one more) and whether each
        # needs the Unicode engine
        self.tex_kinds = tex_kinds(plan)
        self._unicode = dict.fromkeys(self.tex_kinds, False)
        self._grid_rows: list[GridRow] = []
        self._worked = WorkedKeys(versions_build=plan.subfolder == "versions")
        self._count = 0

    def _file(self, name: str) -> IO[str]:
        fh = open(self.tmp / name, "w", encoding="utf-8")
        self._open.append(fh)
        return fh

    def _tex_out(self, kind: str, text: str) -> None:
        fh = self._handles[(kind, ".tex")]
        fh.write(text)
        if self.feeds is not None:  # on disk first: a failed run keeps at least what TeX read
            fh.flush()
            self.feeds[kind].write(text)

    def _grid_out(self, text: str) -> None:
        self._grid_fh.write(text)
        if self.feeds is not None and GRID in self.feeds:
            self._grid_fh.flush()
            self.feeds[GRID].write(text)

    def __enter__(self) -> FolderSink:
        try:
            self.start()
        except BaseException:
            self._close()
            raise
        return self

    def start(self) -> None:
        """Open the files and write what comes before the first sheet."""
        # TeX machinery only when PDFs are built
        from worksheetgen.tex.engines import needs_unicode_engine

        for kind, name in self.tex_kinds.items():
            # the answer sheets are LaTeX only (what a scanner reads has no Markdown)
            for ext in (".tex", ".md", ".html") if kind in KINDS else (".tex",):
                self._handles[(kind, ext)] = self._file(f"{name}{ext}")
        self.files += [f"{self.tex_kinds[kind]}{ext}" for kind, ext in self._handles]
        self._html_ends = self.renderer.html_ends(self.build)
        for kind in KINDS:
            self._handles[(kind, ".html")].write(self._html_ends[kind][0])
        (self.tmp / self.plan.subfolder).mkdir(exist_ok=True)
        draws = self._file(DRAWS)
        key_fh = self._file("key.json")
        self.files.append("key.json")
        self._grid_fh = self._file(f"{GRID}.tex")
        self.files.append(f"{GRID}.tex")
        build = self.build
        plan = self.plan
        self.ends = self.ends or self.renderer.document_ends(
            build, plan.scannable, plan.answer_sheet
        )
        for kind in self.tex_kinds:
            head = self.ends[kind][0]
            self._tex_out(kind, head)
            self._unicode[kind] = needs_unicode_engine(head)
        grid = self.head_of_grid
        self._grid_out(grid if grid is not None else self.renderer.grid_head(build))
        key_around = keyfile.split_at(keyfile.key_json(build), "sheets")
        self._key_list = keyfile.StreamedList(key_fh, around=key_around)
        self._draw_list = keyfile.StreamedList(draws)  # spliced into manifest.json at the end

    @property
    def stopped(self) -> bool:
        """True once a TeX run fed meanwhile stopped on an error (it is reported; the rest
        is not needed)."""
        return self.feeds is not None and any(f.broken for f in self.feeds.values())

    def add(self, sheet: RenderedSheet) -> None:
        """Write one sheet (the next in roster order)."""
        # TeX machinery only when PDFs are built
        from worksheetgen.tex.engines import needs_unicode_engine

        for kind in self.tex_kinds:
            self._tex_out(kind, sheet.tex[kind])
            self._unicode[kind] = self._unicode[kind] or needs_unicode_engine(sheet.tex[kind])
        for kind in KINDS:
            md = sheet.md[kind]
            self._handles[(kind, ".md")].write(md if self._count == 0 else MD_SEPARATOR + md)
        self._html_out(sheet)
        if self.feeds is not None and GRID in self.feeds:
            self.feeds[GRID].write("")  # its head, kept until its TeX started
        self._key_list.add_encoded(sheet.key_line)
        self._draw_list.add_encoded(sheet.draws_line)
        self._grid_rows.append(sheet.grid)
        self._worked.add(sheet.grid.label, sheet.grid.code, sheet.worked)
        self._count += 1
        self.stats.sheets += 1
        self.stats.items += sheet.items

    def _html_out(self, sheet: RenderedSheet) -> None:
        """The sheet's own HTML documents, in the class's subfolder beside its PDFs, and
        its article in the class's combined ones."""
        stem = self.plan.entries[self._count].stem
        for kind, own in sheet.html.items():
            rel = f"{self.plan.subfolder}/{stem}-{kind}.html"
            (self.tmp / rel).write_text(own, encoding="utf-8")
            self.files.append(rel)
            if kind not in KINDS:  # a practice page is the student's own only
                continue
            start, end = own.index(ARTICLE), own.rindex(ARTICLE_END) + len(ARTICLE_END)
            self._handles[(kind, ".html")].write(own[start:end] + "\n")

    def finish(self) -> list[str]:
        """Write what comes after the last sheet; the files written."""
        assert self.ends is not None
        try:
            for kind in self.tex_kinds:
                self._tex_out(kind, self.ends[kind][1])
            for kind in KINDS:
                self._handles[(kind, ".html")].write(self._html_ends[kind][1])
            self._key_list.close()
            self._draw_list.close()
            grid = grid_body(self.build, self._grid_rows, self._worked, self.plan)
            self._grid_out(
                self.renderer.render("latex", "grid", {**grid, "doc_head": False, "doc_tail": True})
            )
            for feed in (self.feeds or {}).values():
                feed.flush()  # what TeX was not started yet to read
        finally:
            self._close()
        markdown = self.renderer.render("markdown", "grid", grid)
        (self.tmp / f"{GRID}.md").write_text(markdown, encoding="utf-8")
        self.files.append(f"{GRID}.md")
        stats = self.stats
        for kind, name in self.tex_kinds.items():
            path = self.tmp / f"{name}.tex"
            stats.engines[name] = document_engine(
                path.name, self._unicode[kind], stats.forced_engine, path
            )
        return self.files

    def _close(self) -> None:
        for fh in self._open:
            fh.close()

    def __exit__(self, exc_type: type[BaseException] | None, *rest: Any) -> None:
        self._close()


class SheetSink:
    """A class of one: its sheet's documents (each its one fragment between the head and
    tail the renderer gives a lone sheet: ``sheet.tex``, ``key.md``, ``key-grid.tex``, ...),
    key.json and (with PDFs) the compiled documents, held in memory (``files``) until they
    all are, then written into the staging folder at once (``write``), for the finish's
    exports and manifest.json."""

    stopped = False

    def __init__(
        self, build: Build, plan: ClassPlan, renderer: Renderer, options: BuildOptions, keep: Path
    ) -> None:
        self.build, self.plan, self.renderer = build, plan, renderer
        self.options, self.keep = options, keep
        self.files: dict[str, bytes] = {}
        self._sheets: list[RenderedSheet] = []

    def __enter__(self) -> SheetSink:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: Any) -> None:
        return None

    def add(self, sheet: RenderedSheet) -> None:
        """The sheet, rendered ``alone`` (its documents are put together at the finish)."""
        assert sheet.drawn is not None
        self._sheets.append(sheet)
        self.build = replace(self.build, sheets=(*self.build.sheets, sheet.drawn))

    def finish(self) -> list[str]:
        """Every file of the sheet's folder but the exports and manifest.json, held; their
        names."""
        options, result, files = self.options, self.build, self.files
        (sheet,) = self._sheets
        docs = self._documents(sheet)
        files.update({name: text.encode("utf-8") for name, text in docs.items()})
        key_text = keyfile.streamed_dumps(keyfile.key_json(result), "sheets")
        files["key.json"] = key_text.encode("utf-8")
        if options.pdf:
            self._compile(docs)
        return list(files)

    def _documents(self, sheet: RenderedSheet) -> dict[str, str]:
        """The sheet's documents, by file name: each LaTeX one its fragment between its head
        and tail, the Markdown and HTML ones (a practice page too) its own, the answer grid
        of its one row."""
        build, renderer = self.build, self.renderer
        ends = renderer.document_ends(
            build, self.options.scannable, self.options.answer_sheet, alone=True
        )
        docs = {f"{kind}.tex": head + sheet.tex[kind] + tail for kind, (head, tail) in ends.items()}
        docs.update({f"{kind}.md": sheet.md[kind] for kind in KINDS})
        docs.update({f"{kind}.html": page for kind, page in sheet.html.items()})
        grid = grid_body(build, [sheet.grid], None, self.plan)
        rest = renderer.render("latex", "grid", {**grid, "doc_head": False, "doc_tail": True})
        docs["key-grid.tex"] = renderer.grid_head(build) + rest
        docs["key-grid.md"] = renderer.render("markdown", "grid", grid)
        return docs

    def write(self, tmp: Path) -> None:
        """Write the files held into the staging folder ``tmp``, with the draws (indented, as
        a lone sheet's manifest.json has them) for the finish to splice into manifest.json."""
        for name, data in self.files.items():
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        with open(tmp / DRAWS, "w", encoding="utf-8") as fh:
            draws = keyfile.StreamedList(fh, one_line=False)
            for sheet in self.build.sheets:
                draws.add(keyfile.sheet_draws(sheet))
            draws.close()

    def _compile(self, docs: dict[str, str]) -> None:
        """The sheet's, the key's and the answer grid's PDFs (and the answer sheet's; for a
        scannable build, where TeX set the scanner's boxes)."""
        # TeX machinery only when PDFs are built
        from worksheetgen.tex.engines import needs_unicode_engine
        from worksheetgen.tex.run import TexJob, compile_jobs

        options, files = self.options, self.files
        forced = None if options.engine == "auto" else options.engine
        names: tuple[str, ...] = ("sheet.tex", "key.tex", "key-grid.tex")
        if options.answer_sheet:
            names += (f"{ANSWERS}.tex",)
        engines = {
            n: document_engine(n, needs_unicode_engine(docs[n]), forced, docs[n]) for n in names
        }
        bundled = self.renderer.bundled  # a preamble of our own: dumped once
        with failures_as_errors():
            outputs = compile_jobs(
                [TexJob(n[:-4], docs[n], engine=engines[n], formats=bundled) for n in names],
                self.keep,
            )
        for name, output in outputs.items():
            assert output.pdf is not None
            files[f"{name}.pdf"] = output.pdf
        if options.scannable:
            # the scanner's positions, only for a scannable build
            from worksheetgen.scan.positions import (
                SCAN_FILE,
                dumps,
                positions_json,
                sheet_build_code,
            )

            answers = options.answer_sheet  # the boxes are on the answer sheet
            recorded = outputs[ANSWERS if answers else "sheet"].scanpos
            code = sheet_build_code(self.build, answers)
            doc = positions_json(
                code, self.build.paper, recorded, answers, self.build.student_number
            )
            files[SCAN_FILE] = dumps(doc)
