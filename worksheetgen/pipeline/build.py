"""``worksheetgen build``: one worksheet, or a whole class, written into its folder.

The one entry point the command line calls, and one path for every build: a single sheet
is a class of one. As R/exams' ``xexams``: pre-flight once (the options, the banks, the
class's size, the TeX engine, the target folder), the plan (``plan``: every sheet by its
identity), one loop that renders each sheet (``renderer``; a class's in forked workers
when that is faster: ``stream``) and hands it to a sink, then the finish (exports,
manifest.json, the folder swapped into place). Every sheet is rendered alike, into its
fragments (``Renderer.sheet``), with the one engine choice (``engine``); the sinks put them
together: ``sink.SheetSink`` (a lone sheet's documents, its fragment between their heads and
tails, written at once), ``sink.FolderSink`` (a class's combined documents, written as the
sheets come) and ``stream.TexSink`` (the same, with TeX fed meanwhile and the per-sheet PDFs
cut out).

One finish for both (``_build_folder``): the exports from key.json, manifest.json with
the draws spliced in, the staging folder swapped into place. What differs is where the files
are while the sheets come: a class's stream into a staging folder made before the first sheet
(a class is too large to hold, and TeX may read it meanwhile); a lone sheet's are held whole
in memory and staged once they all are, so a build that fails before makes nothing, not even
``--out``.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from worksheetgen.bank.load import default_bank_path
from worksheetgen.bank.roster import read_roster
from worksheetgen.errors import UsageError
from worksheetgen.files import failures_as_errors, remove_temp
from worksheetgen.keyjson import write as keyfile
from worksheetgen.language import DEFAULT as DEFAULT_LANGUAGE
from worksheetgen.language import LANGUAGES, SEPARATORS, separator, using
from worksheetgen.model import Bank, Build
from worksheetgen.pipeline.engine import build_engine
from worksheetgen.pipeline.lmsrules import pool_refusals
from worksheetgen.pipeline.options import (
    BuildOptions,
    BuildResult,
    ClassStats,
    Progress,
    check_answer_sheet,
    check_large_print,
    check_paper_engine,
    check_seed,
    check_student_number,
)
from worksheetgen.pipeline.output import (
    check_out,
    check_target,
    folders_to_make,
    staging_folder,
    swap_into_place,
    sweep_leftovers,
    unmake_folders,
)
from worksheetgen.pipeline.plan import (
    MAX_CLASS_ITEMS,
    ClassPlan,
    plan_roster,
    plan_sheet,
    plan_versions,
    questions_per_sheet,
)
from worksheetgen.pipeline.practice import check_practice
from worksheetgen.pipeline.renderer import RenderedSheet, Renderer
from worksheetgen.pipeline.sheet import load_bank
from worksheetgen.pipeline.sink import DRAWS, FolderSink, SheetSink, Sink
from worksheetgen.pipeline.stream import TexSink, can_stream, rendered, workers_for
from worksheetgen.scan.positions import roster_digest, sheet_build_code

__all__ = ["BuildOptions", "BuildResult", "build"]

T = TypeVar("T")


def build(options: BuildOptions, progress: Progress | None = None) -> BuildResult:
    """Run the whole pipeline for one worksheet (or a whole class) and write its folder, its
    fixed words in the options' language (a language not shipped is refused by the
    pre-flight, in English)."""
    chosen = options.language if options.language in LANGUAGES else DEFAULT_LANGUAGE
    with using(chosen, _separator(options)):
        return _build(options, progress)


def _separator(options: BuildOptions) -> str:
    """The build's decimal separator: its ``--decimal``, else its language's (one not shipped
    is refused by the pre-flight: "." until then)."""
    if options.decimal in SEPARATORS:
        return SEPARATORS[options.decimal]
    return separator(options.language) if options.language in LANGUAGES else "."


def _build(options: BuildOptions, progress: Progress | None) -> BuildResult:
    lone = options.roster is None and options.versions is None
    plan = None if lone else class_plan(options)
    # pre-flight: everything that can be refused is, before any sheet is drawn
    check_seed(options.seed)
    check_paper_engine(options)
    check_answer_sheet(options)
    check_student_number(options)
    check_large_print(
        options,
        0 if plan is None else sum(1 for e in plan.entries if e.student and e.student.large_print),
    )
    check_practice(options)
    check_out(options.out)
    bank = load_bank(options)
    if options.exports:  # what an export would refuse, before any sheet is drawn or set
        refused = pool_refusals(bank, options.exports, option="--export")
        if refused:
            raise refused[0]
    if plan is None:
        plan = plan_sheet(bank.info.slug, options.seed, options.secret)
    else:
        _check_size(plan, bank)
    engine = build_engine(options, plan, bank)  # refused or found missing before any draw
    empty = Build(
        info=bank.info,
        seed=options.seed,
        bank=bank,
        sheets=(),
        secret=options.secret,
        paper=options.paper,
        language=options.language,
        decimal=_separator(options),
        large_print=options.large_print,
        student_number=options.student_number,
        large_print_some=any(e.student is not None and e.student.large_print for e in plan.entries),
    )
    if options.scannable and not lone:
        # every page code depends on the whole class: known before any sheet is drawn
        roster = [(e.id, e.label, e.student) for e in plan.entries]
        empty = replace(empty, scan_class=roster_digest(empty, roster))
        code = sheet_build_code(empty, options.answer_sheet)
        plan = replace(
            plan,
            scan=(code, options.paper),
            answer_sheet=options.answer_sheet,
            student_number=options.student_number,
        )
    target = Path(options.out) / plan.folder_name(empty)
    renderer = Renderer(options.template_dir, practice=options.practice)
    keep = Path(options.out) / f".failed-{target.name}"
    return _build_folder(options, plan, empty, target, renderer, engine, keep, progress, lone)


def run(sheets: Iterator[T], sink: Sink[T], report: Progress, total: int) -> list[str]:
    """The one loop of every build: each sheet, as it is rendered, into the sink; the files
    the sink wrote."""
    with sink:
        for n, sheet in enumerate(sheets):
            sink.add(sheet)
            report("sheets", n + 1, total)
            if sink.stopped:
                break  # TeX stopped on an error: it is reported, the rest is not needed
        return sink.finish()


def _quiet(stage: str, done: int, total: int) -> None:
    """No progress to report (a lone sheet's build says nothing until it is done)."""


def _check_size(plan: ClassPlan, bank: Bank) -> None:
    """A class build is minutes of work at most, never hours."""
    per_sheet = questions_per_sheet(bank)
    items = len(plan.entries) * per_sheet
    if items > MAX_CLASS_ITEMS:
        raise UsageError(
            f"expected at most {MAX_CLASS_ITEMS} questions in one class build "
            f"(sheets x questions), got {len(plan.entries)} x "
            f"{per_sheet} = {items}; split the roster or the bank"
        )


def class_plan(options: BuildOptions) -> ClassPlan:
    """A class's sheets: one per roster student, or per anonymous version."""
    if options.roster is not None and options.versions is not None:
        raise UsageError("--roster and --versions: expected one of them, got both")
    if options.roster is not None:
        students = read_roster(options.roster)
        return plan_roster(students, options.roster, options.seed, options.secret)
    return plan_versions(int(options.versions or 0), options.seed, options.secret)


def _build_folder(
    options: BuildOptions,
    plan: ClassPlan,
    build: Build,
    target: Path,
    renderer: Renderer,
    engine: str,
    keep: Path,
    progress: Progress | None,
    lone: bool,
) -> BuildResult:
    """A build into its folder, a lone sheet as a class of one: the sheets into their sink,
    then the one finish (the exports from key.json, manifest.json, the folder swapped into
    place). Where the files are until the finish is the one difference: a class's stream
    into a staging folder made before the first sheet (a class is too large to hold, and TeX
    may read it meanwhile); a lone sheet's are held whole (``SheetSink``) and staged only
    once they all are, so that a build that fails before makes nothing, not even ``--out``."""
    report = _quiet if lone else progress or _quiet  # a lone sheet says nothing until done
    stats = ClassStats(forced_engine=None if options.engine == "auto" else options.engine)
    tmp: Path | None = None
    made = folders_to_make(target)  # --out and above, if new: taken away again on failure
    done = False
    try:
        if lone:
            check_target(target)
            swept = sweep_leftovers(options.out, options.pdf)
            sink = SheetSink(build, plan, renderer, options, keep)
            index = 0 if options.scannable else None  # a scannable sheet's place: the first
            sheets = (
                renderer.sheet(build, entry, index, options.answer_sheet, alone=True)
                for entry in plan.entries
            )
            files = run(sheets, sink, report, len(plan.entries))
            build = sink.build
            tmp = staging_folder(target)
            with failures_as_errors(target, rename=(tmp, target)):  # a full disk: one line
                sink.write(tmp)
        else:
            tmp = staging_folder(target)  # refuses a target that is not ours, before any work
            swept = sweep_leftovers(options.out, options.pdf)
            with failures_as_errors(target, rename=(tmp, target)):  # a full disk: one line
                files = _stream_class(
                    options, plan, build, tmp, renderer, engine, keep, stats, report
                )
        with failures_as_errors(target, rename=(tmp, target)):
            if options.exports:
                # the exporters only when --export asks for them
                from worksheetgen.export import bank_source, export_into

                key_bytes = (tmp / "key.json").read_bytes()
                source = bank_source(options.banks or [default_bank_path()])
                files += export_into(key_bytes, options.exports, tmp, source)
            files.append("manifest.json")
            _write_manifest(build, options, tmp, files, lone)
            report("write", 1, 1)
            swap_into_place(tmp, target)
            done = True
    finally:
        if tmp is not None:
            remove_temp(tmp)  # also where it went, if --out was moved away meanwhile
        if not done:
            unmake_folders(made)
    if lone:
        return BuildResult(target, tuple(sorted(files)), build, swept=swept)
    return BuildResult(
        target,
        tuple(sorted(files)),
        build,
        sheet_count=stats.sheets,
        item_count=stats.items,
        details=stats,
        swept=swept,
    )


def _stream_class(
    options: BuildOptions,
    plan: ClassPlan,
    build: Build,
    tmp: Path,
    renderer: Renderer,
    engine: str,
    keep: Path,
    stats: ClassStats,
    report: Progress,
) -> list[str]:
    """A class's sheets streamed into its staging folder, rendered in forked workers and
    with TeX reading meanwhile where that is faster; the files written."""
    streaming = options.pdf and can_stream()
    # by default a build that streams to TeX draws in this process (TeX takes the other
    # cores); one without PDFs draws on every core
    jobs = options.jobs
    workers = 1 if streaming and jobs is None else workers_for(len(plan.entries), jobs)
    sink: Sink[RenderedSheet]
    if options.pdf:  # TeX reads while the sheets are drawn (streaming), or after
        sink = TexSink(build, plan, tmp, renderer, stats, keep, report, engine, streaming)
    else:
        sink = FolderSink(build, plan, tmp, renderer, stats)
    clock = time.perf_counter()
    # worker processes (if any) are forked first, before TeX's threads start
    with rendered(build, plan, renderer, workers) as sheets:
        files = run(sheets, sink, report, len(plan.entries))
    stats.seconds.setdefault("sheets", time.perf_counter() - clock)
    return files


def _write_manifest(
    build: Build, options: BuildOptions, tmp: Path, files: list[str], lone: bool
) -> None:
    """manifest.json, with the draws of every sheet streamed in from the temporary file (a
    lone sheet's options name no roster or versions)."""
    opts: dict[str, object] = {
        "pdf": options.pdf,
        "decimals": options.decimals,
        "title": options.title,
    }
    if not lone:
        opts.update(roster=options.roster, versions=options.versions)
    doc = keyfile.manifest_json(build, files, opts)
    before, after = keyfile.split_at(doc, "draws")
    draws = tmp / DRAWS
    with open(tmp / "manifest.json", "w", encoding="utf-8") as out:
        out.write(before)
        with open(draws, encoding="utf-8") as fh:
            shutil.copyfileobj(fh, out)
        out.write(after)
    os.remove(draws)
