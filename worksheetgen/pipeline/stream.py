"""The speed machinery of a class build: sheets rendered in forked workers, fed to TeX through
pipes while they are drawn (``TexSink``), and the per-sheet PDFs cut out of the combined
ones. None of it changes a byte of the output: the same sheets, written by the same
``FolderSink``, compiled the ordinary way where pipes or fork are not available.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worksheetgen import errors
from worksheetgen.errors import CompileError, WorksheetgenError
from worksheetgen.model import Build
from worksheetgen.pipeline.answers import ANSWERS
from worksheetgen.pipeline.options import ClassStats, Progress
from worksheetgen.pipeline.plan import ClassPlan
from worksheetgen.pipeline.renderer import GRID, RenderedSheet, Renderer, tex_kinds
from worksheetgen.pipeline.sink import FolderSink
from worksheetgen.speed.workers import ForkMap

if TYPE_CHECKING:
    from worksheetgen.tex.feed import TexFeed

MIN_SHEETS_PER_WORKER = 4


def _render_for_worker(build: Build, plan: ClassPlan, renderer: Renderer) -> Callable[[int], Any]:
    """What a worker computes for sheet ``index``: the rendered sheet, or a user error as
    plain fields (pickling an exception keeps only its message, not file, line and field)."""

    def render(index: int) -> RenderedSheet | tuple[str, str, str | None, int | None, str | None]:
        try:
            entry = plan.entries[index]
            return renderer.sheet(build, entry, _scan_index(plan, index), plan.answer_sheet)
        except WorksheetgenError as exc:
            return (type(exc).__name__, exc.message, exc.file, exc.line, exc.field)

    return render


def workers_for(count: int, jobs: int | None = 1) -> int:
    """How many processes render a class: ``jobs`` (0: one per core; None: one per core
    where processes are forked by default, i.e. Linux), at most one per few sheets, and one
    where fork is not available. The sheets are the same either way."""

    if jobs is None:
        # macOS offers fork but defaults to spawn (forking there can break system libraries)
        if not sys.platform.startswith("linux"):
            return 1
        jobs = 0
    # fork copies only the calling thread: a lock another thread holds at that moment stays
    # locked forever in the child, so fork only from a single-threaded process
    if jobs == 1 or not hasattr(os, "fork") or threading.active_count() > 1:
        return 1
    wanted = jobs if jobs > 1 else (os.cpu_count() or 1)
    return max(1, min(wanted, count // MIN_SHEETS_PER_WORKER))


@contextmanager
def rendered(
    build: Build, plan: ClassPlan, renderer: Renderer, workers: int
) -> Iterator[Iterator[RenderedSheet]]:
    """Every sheet rendered, in roster order; ``workers`` > 1 renders in processes forked
    on entry, so before the caller starts any thread (such as the TeX runs)."""
    if workers <= 1:
        yield (
            renderer.sheet(build, entry, _scan_index(plan, i), plan.answer_sheet)
            for i, entry in enumerate(plan.entries)
        )
        return

    # every sheet is rendered in a worker: the parent only writes. (Rendering the first
    # sheet here before forking, so that the workers start warm, left a core idle meanwhile
    # and saved the workers no measurable CPU.)
    sheets = ForkMap(_render_for_worker(build, plan, renderer), 0, len(plan.entries), workers)
    try:
        yield _unpacked(sheets)
    finally:
        sheets.close()


def _scan_index(plan: ClassPlan, index: int) -> int | None:
    """A sheet's place in the class when its page code needs it (scannable), else None."""
    return index if plan.scannable else None


def _unpacked(results: Iterator[Any]) -> Iterator[RenderedSheet]:
    """Worker results in order, a worker's user error raised again here."""

    for out in results:
        if isinstance(out, tuple):
            name, message, file, line, field_ = out
            raise getattr(errors, name)(message, file=file, line=line, field=field_)
        yield out


def can_stream() -> bool:
    """True where TeX can read its documents through named pipes while they are written."""
    return hasattr(os, "mkfifo")


def compile_and_split(
    plan: ClassPlan, tmp: Path, keep: Path, report: Progress, stats: ClassStats, bundled: bool
) -> list[str]:
    """One TeX run per combined document (in parallel), then the per-sheet PDFs cut out
    (``bundled``: the documents come from the bundled templates)."""
    # TeX machinery only when PDFs are built
    from worksheetgen.tex.run import TexJob, compile_jobs

    n = len(plan.entries)
    report("pdf", 0, 1)
    jobs = []
    for name in (*tex_kinds(plan).values(), GRID):
        jobs.append(
            TexJob(
                name,
                path=tmp / f"{name}.tex",
                engine=stats.engines.get(name if name != GRID else "keys"),
                pages=name != GRID,
                sheets=n,
                output=tmp / f"{name}.pdf",
                formats=bundled,
            )
        )
    cut: dict[str, list[str]] = {}
    compile_jobs(jobs, keep, then=_cutter(plan, tmp, cut))
    report("pdf", 1, 1)
    return _cut_files(plan, cut)


class TexSink:
    """The sink of a class build with PDFs: the sheets are written by a ``FolderSink``, and
    (``streaming``) TeX already typesets them meanwhile: it reads each combined document
    through a pipe as it is written, so drawing and typesetting share the cores. The engine
    is chosen up front from the roster and the banks; should the rendered text need the
    other one after all, the finished documents are compiled again the ordinary way, as
    they are without ``streaming``. Each compiled document is cut into per-sheet PDFs as
    soon as it is done, while the other may still be typesetting."""

    def __init__(
        self,
        build: Build,
        plan: ClassPlan,
        tmp: Path,
        renderer: Renderer,
        stats: ClassStats,
        keep: Path,
        report: Progress,
        engine: str,
        streaming: bool = True,
    ) -> None:
        self.build, self.plan, self.tmp = build, plan, tmp
        self.renderer, self.stats, self.keep, self.report = renderer, stats, keep, report
        self.engine, self.streaming = engine, streaming
        self.cut: dict[str, list[str]] = {}
        self.feeds: dict[str, TexFeed] = {}
        self._runner: ThreadPoolExecutor | None = None
        self._future: Future[Any] | None = None
        self._cancel = threading.Event()
        self.folder = FolderSink(build, plan, tmp, renderer, stats)

    def __enter__(self) -> TexSink:
        self._clock = time.perf_counter()
        try:
            if self.streaming:
                self._start_tex()
            self.folder.__enter__()
        except BaseException as exc:
            self.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def _start_tex(self) -> None:
        # TeX machinery only when PDFs are built
        from worksheetgen.tex.feed import TexFeed
        from worksheetgen.tex.run import TexJob, compile_jobs

        build, plan, tmp, renderer = self.build, self.plan, self.tmp, self.renderer
        n = len(plan.entries)
        # TeX's format: by the preamble
        ends = renderer.document_ends(build, plan.scannable, plan.answer_sheet)
        head_of_grid = renderer.grid_head(build)
        kinds = tex_kinds(plan)
        feeds = {kind: TexFeed(head=ends[kind][0]) for kind in kinds}
        # the answer grid's TeX starts now too (its format loaded, its head read) and gets
        # the rest once every sheet is drawn
        feeds[GRID] = TexFeed(head=head_of_grid)
        self.feeds = feeds
        jobs = [
            TexJob(
                name,
                path=tmp / f"{name}.tex",
                engine=self.engine,
                pages=True,
                sheets=n,
                output=tmp / f"{name}.pdf",
                feed=feeds[kind],
                formats=renderer.bundled,
            )
            for kind, name in kinds.items()
        ]
        jobs.append(
            TexJob(
                GRID,
                path=tmp / f"{GRID}.tex",
                engine=self.engine,
                sheets=n,
                output=tmp / f"{GRID}.pdf",
                feed=feeds[GRID],
                formats=renderer.bundled,
            )
        )
        self.folder = FolderSink(build, plan, tmp, renderer, self.stats, feeds, ends, head_of_grid)
        self._runner = ThreadPoolExecutor(max_workers=1)
        # a class stopped early (another document's TeX failed) is not cut: that failure is
        # the one to report, not this document's missing sheets
        cutter = _cutter(plan, tmp, self.cut, lambda: self.folder.stopped)
        self._future = self._runner.submit(compile_jobs, jobs, self.keep, self._cancel, cutter)

    @property
    def stopped(self) -> bool:
        """True once a TeX run stopped on an error (it is reported; the rest is not needed)."""
        return self.folder.stopped

    def add(self, sheet: RenderedSheet) -> None:
        """Write one sheet (TeX reads it meanwhile)."""
        self.folder.add(sheet)

    def finish(self) -> list[str]:
        """The documents finished, compiled and cut; every file written."""
        # TeX machinery only when PDFs are built
        from worksheetgen.tex.process import stop

        stats = self.stats
        files = self.folder.finish()
        stats.seconds["sheets"] = time.perf_counter() - self._clock
        clock = time.perf_counter()
        results = None
        if self._future is not None:
            try:
                names = tex_kinds(self.plan).values()
                if any(stats.engines[name] != self.engine for name in names):
                    stop(self._cancel)  # the text needs the other engine: compile it again
                else:
                    self.report("pdf", 0, 1)
                    results = self._future.result()
                    self.report("pdf", 1, 1)
            except BaseException:
                stop(self._cancel)  # our own failure or Ctrl-C: no TeX run outlives it
                raise
            finally:
                self._close()
        if results is None:
            bundled = self.renderer.bundled
            files += compile_and_split(self.plan, self.tmp, self.keep, self.report, stats, bundled)
        else:
            files += _cut_files(self.plan, self.cut)
        stats.seconds["pdf"] = time.perf_counter() - clock
        return files

    def _close(self) -> None:
        """Wait for the TeX runs (their failure is reported, or they are compiled again)."""
        future, self._future = self._future, None
        try:
            if future is not None:
                try:
                    future.result()
                except BaseException:  # noqa: S110 - reported, or compiled again
                    pass
        finally:
            if self._runner is not None:
                self._runner.shutdown(wait=True)
                self._runner = None
            for feed in self.feeds.values():
                feed.close()

    def __exit__(self, exc_type: type[BaseException] | None, *rest: Any) -> None:
        # TeX machinery only when PDFs are built
        from worksheetgen.tex.process import stop

        try:
            self.folder.__exit__(exc_type, *rest)
        finally:
            if self._future is not None:
                if exc_type is not None:
                    stop(self._cancel)  # our own failure or Ctrl-C: no TeX run outlives it
                self._close()


def _cutter(
    plan: ClassPlan,
    tmp: Path,
    cut: dict[str, list[str]],
    stopped: Callable[[], bool] = lambda: False,
) -> Callable[[str, Any], None]:
    """What to do with each compiled combined document: cut out the per-sheet PDFs by the
    page ranges TeX recorded, noting the files written in ``cut`` under its name."""
    # TeX machinery only when PDFs are built
    from worksheetgen.tex.pdfsplit import iter_split_pages

    n = len(plan.entries)
    kinds = {name: kind for kind, name in tex_kinds(plan).items()}
    # the document whose boxes scan reads: the sheets, or the separate answer sheets
    scanned = ANSWERS if plan.answer_sheet else "sheet"

    def cut_one(name: str, result: Any) -> None:
        if name not in kinds or stopped():  # the answer grid (one document), or a class
            return  # whose build already failed: nothing is cut
        if plan.scannable and kinds[name] == scanned:
            # the scanner's positions, only for a scannable build
            from worksheetgen.scan.positions import SCAN_FILE, dumps, positions_json

            assert plan.scan is not None
            code, paper = plan.scan
            recorded = positions_json(
                code, paper, result.scanpos, plan.answer_sheet, plan.student_number
            )
            (tmp / SCAN_FILE).write_bytes(dumps(recorded))
            cut.setdefault("scan", []).append(SCAN_FILE)
        ranges = result.ranges
        if len(ranges) != n:
            raise CompileError(
                f"expected the page ranges of {n} sheets, got {len(ranges)}", file=f"{name}.tex"
            )
        parts = iter_split_pages((tmp / f"{name}.pdf").read_bytes(), ranges)
        (tmp / plan.subfolder).mkdir(exist_ok=True)
        files = []
        for entry, data in zip(plan.entries, parts, strict=True):
            rel = f"{plan.subfolder}/{entry.stem}-{kinds[name]}.pdf"
            (tmp / rel).write_bytes(data)
            files.append(rel)
        cut[name] = files

    return cut_one


def _cut_files(plan: ClassPlan, cut: dict[str, list[str]]) -> list[str]:
    """The combined PDFs and the per-sheet PDFs cut from them, sheets first."""
    names = tex_kinds(plan).values()
    files = [f"{name}.pdf" for name in names] + [f"{GRID}.pdf"]
    for name in names:
        files += cut[name]
    return files + cut.get("scan", [])
