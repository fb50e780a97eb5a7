"""Whole-class builds: one sheet per student of a roster (or per anonymous version), streamed.

Each sheet is drawn, solved and rendered once, then written straight to disk: appended to the
combined documents (``sheets.tex/.md`` for printing, ``keys.tex/.md`` for the TAs) and to
``key.json`` (one sheet per line); nothing of it is kept once it is written, so memory stays
flat and the cost grows linearly with the class. The combined documents are compiled in ONE
TeX run each (both runs in parallel), and each run already reads its document through a pipe
while the later sheets are drawn. TeX records the first and last page of every sheet, and the
per-student PDFs (``students/<id>-sheet.pdf`` and ``-key.pdf``, or ``versions/A-sheet.pdf``
...) are cut out of the combined ones.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worksheetgen import errors
from worksheetgen.bank.roster import file_stems, safe_stem, version_ids
from worksheetgen.errors import CompileError, UsageError, WorksheetgenError
from worksheetgen.files import failures_as_errors, remove_temp
from worksheetgen.keyjson import write as keyfile
from worksheetgen.model import Bank, Build, Pool, Student
from worksheetgen.pipeline.options import (
    BuildResult,
    check_paper_engine,
    check_seed,
    engine_refusal,
)
from worksheetgen.pipeline.output import check_out, staging_folder, swap_into_place, sweep_leftovers
from worksheetgen.pipeline.sheet import (
    document_context,
    grid_context,
    item_title,
    load_bank,
    sheet_grid_row,
)
from worksheetgen.render.documents import render_document
from worksheetgen.render.grid import GridRow
from worksheetgen.render.worked import WorkedKeys, WorkedPiece
from worksheetgen.scan.positions import sheet_build_code
from worksheetgen.solve.item import build_sheet
from worksheetgen.speed.workers import ForkMap

if TYPE_CHECKING:
    from worksheetgen.tex.run import TexFeed

#: progress(stage, done, total): stages "sheets", "pdf" (compiling and cutting), "write"
Progress = Callable[[str, int, int], None]

MAX_VERSIONS = 702  # A .. ZZ
MAX_CLASS_ITEMS = 40_000  # sheets x questions in one class build (about 3 minutes of drawing)
MD_SEPARATOR = "\n---\n\n"


@dataclass(frozen=True)
class Entry:
    """One sheet of a class: its seed id, printed label, student (None for a version), and
    the stem of its file names."""

    id: str
    label: str
    student: Student | None
    stem: str


@dataclass(frozen=True)
class ClassPlan:
    """What a class build makes: the entries in order and where their files go."""

    entries: tuple[Entry, ...]
    folder_suffix: str
    subfolder: str
    #: for sheets a scanner reads (build --scannable): the build's code and the paper
    scan: tuple[int, str] | None = None

    @property
    def scannable(self) -> bool:
        return self.scan is not None


def plan_roster(students: Sequence[Student], roster_path: str) -> ClassPlan:
    """One sheet per student, seeded by the student's id."""

    stems = file_stems([s.id for s in students])
    entries = tuple(Entry(s.id, s.name, s, stem) for s, stem in zip(students, stems, strict=True))
    return ClassPlan(entries, safe_stem(Path(roster_path).stem), "students")


def plan_versions(count: int) -> ClassPlan:
    """Anonymous versions A, B, C, ... seeded by their letter."""

    if not 1 <= count <= MAX_VERSIONS:
        raise UsageError(f"--versions: expected a number from 1 to {MAX_VERSIONS}, got {count}")
    ids = version_ids(count)
    return ClassPlan(
        tuple(Entry(v, f"Version {v}", None, v) for v in ids), f"versions{count}", "versions"
    )


@dataclass
class ClassStats:
    """Counts and timings of a class build (for --verbose and the benchmark)."""

    sheets: int = 0
    items: int = 0
    engines: dict[str, str] = field(default_factory=dict)  # combined document -> TeX engine
    forced_engine: str | None = None  # the engine the options name (None: by the text)
    seconds: dict[str, float] = field(default_factory=dict)


def _texts_of_bank(bank: Bank) -> list[str]:
    info = bank.info
    texts = [info.title, info.course, info.instructions]
    for q in bank.questions:
        texts += [q.title or "", q.prompt or ""]
    return texts


def questions_per_sheet(bank: Bank) -> int:
    """How many questions each sheet gets: a pool counts its ``pick``, not its alternatives."""
    if not bank.layout:
        return len(bank.questions)
    return sum(e.pick if isinstance(e, Pool) else 1 for e in bank.layout)


def build_class(options: Any, plan: ClassPlan, progress: Progress | None = None) -> Any:
    """Build every sheet of ``plan`` into one folder (see the module docstring)."""
    # TeX machinery only when PDFs are built
    from worksheetgen.tex import engines as texchars

    check_seed(options.seed)
    check_paper_engine(options)
    check_out(options.out)
    report = progress or (lambda stage, done, total: None)
    bank = load_bank(options)
    per_sheet = questions_per_sheet(bank)
    items = len(plan.entries) * per_sheet
    if items > MAX_CLASS_ITEMS:  # minutes of work at most, never hours
        raise UsageError(
            f"expected at most {MAX_CLASS_ITEMS} questions in one class build "
            f"(sheets x questions), got {len(plan.entries)} x "
            f"{per_sheet} = {items}; split the roster or the bank"
        )
    texts = [t for e in plan.entries for t in (e.label, e.id)] + _texts_of_bank(bank)
    engine = texchars.choose_engine(texts)
    forced = None if options.engine == "auto" else options.engine
    if forced == texchars.PDFLATEX and engine != forced and options.pdf:
        names = [t for e in plan.entries for t in (e.label, e.id)]
        where = "the roster" if texchars.choose_engine(names) != forced else "the banks"
        raise engine_refusal(texchars.unprintable_sample("".join(texts)), where)
    engine = forced or engine
    if options.pdf:  # say so before doing any work
        # TeX machinery only when PDFs are built
        from worksheetgen.tex.run import require_engine

        if forced is not None:
            require_engine(engine, f" (engine = {engine})")
        elif engine == texchars.LUALATEX:
            sample = texchars.unprintable_sample("".join(texts))
            require_engine(engine, f" (needed to print letters such as {sample})")
        else:
            require_engine()
    build = Build(
        info=bank.info,
        seed=options.seed,
        bank=bank,
        sheets=(),
        secret=options.secret,
        paper=options.paper,
    )
    if getattr(options, "scannable", False):
        plan = replace(plan, scan=(sheet_build_code(build), options.paper))
    target = Path(options.out) / f"{bank.info.slug}-seed{options.seed}-{plan.folder_suffix}"
    tmp = staging_folder(target)  # refuses a target that is not ours, before any work
    swept = sweep_leftovers(options.out, options.pdf)
    stats = ClassStats(forced_engine=forced)
    clock = time.perf_counter()
    jobs = getattr(options, "jobs", None)
    streaming = options.pdf and hasattr(os, "mkfifo")
    # by default a build that streams to TeX draws in this process (TeX takes the other
    # cores); one without PDFs draws on every core
    workers = 1 if streaming and jobs is None else workers_for(len(plan.entries), jobs)
    keep = Path(options.out) / f".failed-{target.name}"
    try:
        with failures_as_errors(target, rename=(tmp, target)):  # a full disk: one line
            # worker processes (if any) are forked first, before TeX's threads start
            with _rendered(build, plan, options.template_dir, workers) as sheets:
                if streaming:  # TeX reads while the sheets are drawn
                    files = _build_streaming(
                        build, plan, tmp, options.template_dir, keep, report, stats, sheets, engine
                    )
                else:
                    files = _write_sheets(
                        build, plan, tmp, options.template_dir, report, stats, sheets
                    )
                    stats.seconds["sheets"] = time.perf_counter() - clock
            if options.pdf and not streaming:
                clock = time.perf_counter()
                files += _compile_and_split(
                    plan, tmp, keep, report, stats, options.template_dir is None
                )
                stats.seconds["pdf"] = time.perf_counter() - clock
            if options.exports:
                # the exporters only when --export asks for them
                from worksheetgen.export import export_into

                files += export_into((tmp / "key.json").read_bytes(), options.exports, tmp)
            files.append("manifest.json")
            _write_manifest(build, options, tmp, files)
            report("write", 1, 1)
            swap_into_place(tmp, target)
    finally:
        remove_temp(tmp)  # also where it went, if --out was moved away meanwhile
    return BuildResult(
        target,
        tuple(sorted(files)),
        build,
        sheet_count=stats.sheets,
        item_count=stats.items,
        details=stats,
        swept=swept,
    )


@dataclass(frozen=True)
class RenderedSheet:
    """Everything a class build writes for one sheet (texts only: cheap to pass between
    processes)."""

    tex: dict[str, str]  # kind (sheet/key) -> LaTeX fragment
    md: dict[str, str]  # kind -> Markdown fragment
    key_line: str  # the sheet in key.json, one line
    draws_line: str  # its drawn parameters in manifest.json, one line
    items: int
    grid: GridRow  # its line of the answer grid
    worked: tuple[WorkedPiece, ...] = ()  # its questions as the key prints them (TA key)


def render_sheet(
    build: Build, entry: Entry, template_dir: str | None, scan_index: int | None = None
) -> RenderedSheet:
    """Draw, solve and render one sheet of a class (a pure function of its inputs;
    ``scan_index``: its place in the class, for a scannable sheet's page code)."""

    sheet = build_sheet(
        build.bank.questions,
        build.seed,
        entry.id,
        entry.label,
        entry.student,
        build.secret,
        layout=build.bank.layout,
        shuffle=build.info.shuffle,
    )
    ctx = {**_context(build, [sheet]), **_FRAGMENT}
    # each question's body as the key prints it, rendered once: for the key and for the
    # TA key's worked versions (a NUL after each)
    one = {**ctx, "sheet": sheet}
    bodies = {
        fmt: render_document(fmt, "worked", one, template_dir).split("\x00")[: len(sheet.items)]
        for fmt in ("latex", "markdown")
    }
    # a scannable class's printed sheet carries its marks and page codes (LaTeX only)
    scan_ctx = (
        ctx
        if scan_index is None
        else {**document_context(build, [sheet], True, scan_index), **_FRAGMENT}
    )
    tex, md = {}, {}
    for kind in _KINDS:
        latex_ctx = scan_ctx if kind == "sheet" else ctx
        tex[kind] = render_document(
            "latex", kind, {**latex_ctx, "worked_bodies": bodies["latex"]}, template_dir
        )
        with_bodies = {**ctx, "worked_bodies": bodies["markdown"]}
        md[kind] = render_document("markdown", kind, with_bodies, template_dir)
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
        keyfile.json_element(keyfile.sheet_json(sheet)),
        keyfile.json_element(draws),
        len(sheet.items),
        sheet_grid_row(sheet),
        worked,
    )


_KINDS = {"sheet": "sheets", "key": "keys"}  # kind -> combined document
GRID = "keys-grid"  # the TA's answer grid of the whole class (not cut per sheet)
_FRAGMENT = {"doc_head": False, "doc_tail": False, "class_build": True}
MIN_SHEETS_PER_WORKER = 4


def _render_for_worker(
    build: Build, plan: ClassPlan, template_dir: str | None
) -> Callable[[int], Any]:
    """What a worker computes for sheet ``index``: the rendered sheet, or a user error as
    plain fields (pickling an exception keeps only its message, not file, line and field)."""

    def render(index: int) -> RenderedSheet | tuple[str, str, str | None, int | None, str | None]:
        try:
            return render_sheet(build, plan.entries[index], template_dir, _scan_index(plan, index))
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
def _rendered(
    build: Build, plan: ClassPlan, template_dir: str | None, workers: int
) -> Iterator[Iterator[RenderedSheet]]:
    """Every sheet rendered, in roster order; ``workers`` > 1 renders in processes forked
    on entry, so before the caller starts any thread (such as the TeX runs)."""
    if workers <= 1:
        yield (
            render_sheet(build, entry, template_dir, _scan_index(plan, i))
            for i, entry in enumerate(plan.entries)
        )
        return

    # every sheet is rendered in a worker: the parent only writes. (Rendering the first
    # sheet here before forking, so that the workers start warm, left a core idle meanwhile
    # and saved the workers no measurable CPU.)
    sheets = ForkMap(_render_for_worker(build, plan, template_dir), 0, len(plan.entries), workers)
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


def document_ends(
    build: Build, template_dir: str | None, scannable: bool = False
) -> dict[str, tuple[str, str]]:
    """The head (preamble and all) and the tail of each combined LaTeX document, by kind
    (``scannable``: the sheets' preamble defines the scanner's marks)."""

    ends = {}
    for kind in _KINDS:
        ctx = {**document_context(build, [], scannable and kind == "sheet"), **_FRAGMENT}
        ends[kind] = (
            render_document("latex", kind, {**ctx, "doc_head": True}, template_dir),
            render_document("latex", kind, {**ctx, "doc_tail": True}, template_dir),
        )
    return ends


def grid_head(build: Build, template_dir: str | None) -> str:
    """The answer grid's LaTeX up to its first question (the preamble, as the key's: the
    same TeX format), rendered before any sheet is drawn."""
    ctx = {**_context(build, []), **grid_context(build, []), "doc_head": True, "doc_tail": False}
    return render_document("latex", "grid", ctx, template_dir)


def grid_body(
    build: Build, rows: Sequence[GridRow], worked: WorkedKeys, plan: ClassPlan
) -> dict[str, Any]:
    """What the TA key's templates see once every sheet is drawn (for the rest of the
    LaTeX document after ``grid_head``, and the whole Markdown one): the answer grid, each
    row naming its sheet's version of a question where several are printed, then the
    worked keys, one per version of each question (``worked``)."""
    # the grid is the one "sheet" the base template's loop shows (the head is already out)
    ctx = {**_context(build, []), **grid_context(build, rows, worked.labels()), "sheets": [None]}
    ctx["worked"] = worked.questions()
    ctx["worked_own"] = f"the class's keys.pdf and in {plan.subfolder}/<id>-key.pdf"
    return ctx


def _write_sheets(
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
        (kind, ext): open(tmp / f"{_KINDS[kind]}{ext}", "w", encoding="utf-8")
        for kind in _KINDS
        for ext in (".tex", ".md")
    }
    files += [f"{_KINDS[kind]}{ext}" for kind, ext in handles]
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
        for kind in _KINDS:
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
            for kind in _KINDS:
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
        for kind in _KINDS:
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
    for kind, name in _KINDS.items():
        stats.engines[name] = "lualatex" if unicode[kind] else "pdflatex"
        if stats.forced_engine is not None:
            if stats.forced_engine == "pdflatex" and unicode[kind]:
                text = (tmp / f"{name}.tex").read_text("utf-8")
                raise engine_refusal(unprintable_sample(text), f"{name}.tex")
            stats.engines[name] = stats.forced_engine
    return files


def _context(build: Build, sheets: list[Any]) -> dict[str, Any]:

    return document_context(build, sheets)


def _compile_and_split(
    plan: ClassPlan, tmp: Path, keep: Path, report: Progress, stats: ClassStats, bundled: bool
) -> list[str]:
    """One TeX run per combined document (in parallel), then the per-sheet PDFs cut out
    (``bundled``: the documents come from the bundled templates)."""
    # TeX machinery only when PDFs are built
    from worksheetgen.tex.run import TexJob, compile_jobs

    n = len(plan.entries)
    report("pdf", 0, 1)
    jobs = []
    for name in ("sheets", "keys", GRID):
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
    return _cut_files(cut)


def _build_streaming(
    build: Build,
    plan: ClassPlan,
    tmp: Path,
    template_dir: str | None,
    keep: Path,
    report: Progress,
    stats: ClassStats,
    sheets: Iterator[RenderedSheet],
    engine: str,
) -> list[str]:
    """Write the sheets while TeX already typesets them: TeX reads each combined document
    through a pipe as it is written, so drawing and typesetting share the cores. The engine
    is chosen up front from the roster and the banks; should the rendered text need the
    other one after all, the finished documents are compiled again the ordinary way."""

    # TeX machinery only when PDFs are built
    from worksheetgen.tex.run import TexFeed, TexJob, compile_jobs, stop

    n = len(plan.entries)
    ends = document_ends(build, template_dir, plan.scannable)  # TeX's format: by the preamble
    head_of_grid = grid_head(build, template_dir)
    feeds = {kind: TexFeed(head=ends[kind][0]) for kind in _KINDS}
    # the answer grid's TeX starts now too (its format loaded, its head read) and gets the
    # rest once every sheet is drawn
    feeds[GRID] = TexFeed(head=head_of_grid)
    jobs = [
        TexJob(
            name,
            path=tmp / f"{name}.tex",
            engine=engine,
            pages=True,
            sheets=n,
            output=tmp / f"{name}.pdf",
            feed=feeds[kind],
            formats=template_dir is None,
        )
        for kind, name in _KINDS.items()
    ]
    jobs.append(
        TexJob(
            GRID,
            path=tmp / f"{GRID}.tex",
            engine=engine,
            sheets=n,
            output=tmp / f"{GRID}.pdf",
            feed=feeds[GRID],
            formats=template_dir is None,
        )
    )
    cancel = threading.Event()
    runner = ThreadPoolExecutor(max_workers=1)
    clock = time.perf_counter()
    cut: dict[str, list[str]] = {}
    try:
        # each document is cut into per-student PDFs as soon as it is compiled, while the
        # other one may still be typesetting
        future = runner.submit(compile_jobs, jobs, keep, cancel, _cutter(plan, tmp, cut))
        try:
            files = _write_sheets(
                build, plan, tmp, template_dir, report, stats, sheets, feeds, ends, head_of_grid
            )
            stats.seconds["sheets"] = time.perf_counter() - clock
            clock = time.perf_counter()
            if any(stats.engines[name] != engine for name in _KINDS.values()):
                stop(cancel)  # the text needs the other engine: compile it again below
                results = None
            else:
                report("pdf", 0, 1)
                results = future.result()
                report("pdf", 1, 1)
        except BaseException:
            stop(cancel)  # our own failure or Ctrl-C: no TeX run outlives it
            raise
        finally:
            try:
                future.result()
            except BaseException:  # noqa: S110 - reported above, or compiled again below
                pass
    finally:
        runner.shutdown(wait=True)
        for feed in feeds.values():
            feed.close()
    if results is None:
        files += _compile_and_split(plan, tmp, keep, report, stats, template_dir is None)
    else:
        files += _cut_files(cut)
    stats.seconds["pdf"] = time.perf_counter() - clock
    return files


def _cutter(plan: ClassPlan, tmp: Path, cut: dict[str, list[str]]) -> Callable[[str, Any], None]:
    """What to do with each compiled combined document: cut out the per-sheet PDFs by the
    page ranges TeX recorded, noting the files written in ``cut`` under its name."""
    # TeX machinery only when PDFs are built
    from worksheetgen.tex.pdfsplit import iter_split_pages

    n = len(plan.entries)
    kinds = {name: kind for kind, name in _KINDS.items()}

    def cut_one(name: str, result: Any) -> None:
        if name not in kinds:  # the answer grid: one document for the TAs, never cut
            return
        if plan.scannable and kinds[name] == "sheet":
            # the scanner's positions, only for a scannable build
            from worksheetgen.scan.positions import SCAN_FILE, dumps, positions_json

            assert plan.scan is not None
            code, paper = plan.scan
            (tmp / SCAN_FILE).write_bytes(dumps(positions_json(code, paper, result.scanpos)))
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


def _cut_files(cut: dict[str, list[str]]) -> list[str]:
    """The combined PDFs and the per-sheet PDFs cut from them, sheets first."""
    files = [f"{name}.pdf" for name in _KINDS.values()] + [f"{GRID}.pdf"]
    for name in _KINDS.values():
        files += cut[name]
    return files + cut.get("scan", [])


def _write_manifest(build: Build, options: Any, tmp: Path, files: list[str]) -> None:
    """manifest.json, with the draws of every sheet streamed in from the temporary file."""
    opts = {
        "pdf": options.pdf,
        "decimals": options.decimals,
        "title": options.title,
        "roster": options.roster,
        "versions": options.versions,
    }
    doc = keyfile.manifest_json(build, files, opts)
    before, after = keyfile.split_at(doc, "draws")
    draws = tmp / ".draws.json"
    with open(tmp / "manifest.json", "w", encoding="utf-8") as out:
        out.write(before)
        with open(draws, encoding="utf-8") as fh:
            shutil.copyfileobj(fh, out)
        out.write(after)
    os.remove(draws)
