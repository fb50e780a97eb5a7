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
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worksheetgen.errors import UsageError
from worksheetgen.files import failures_as_errors, remove_temp
from worksheetgen.keyjson import write as keyfile
from worksheetgen.model import Build
from worksheetgen.pipeline.options import (
    BuildResult,
    ClassStats,
    Progress,
    check_paper_engine,
    check_seed,
    engine_refusal,
)
from worksheetgen.pipeline.output import check_out, staging_folder, swap_into_place, sweep_leftovers
from worksheetgen.pipeline.plan import (
    MAX_CLASS_ITEMS,
    ClassPlan,
    questions_per_sheet,
    texts_of_bank,
)
from worksheetgen.pipeline.sheet import (
    load_bank,
)
from worksheetgen.pipeline.sink import write_sheets
from worksheetgen.pipeline.stream import build_streaming, compile_and_split, rendered, workers_for
from worksheetgen.scan.positions import sheet_build_code

if TYPE_CHECKING:
    pass


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
    texts = [t for e in plan.entries for t in (e.label, e.id)] + texts_of_bank(bank)
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
            with rendered(build, plan, options.template_dir, workers) as sheets:
                if streaming:  # TeX reads while the sheets are drawn
                    files = build_streaming(
                        build, plan, tmp, options.template_dir, keep, report, stats, sheets, engine
                    )
                else:
                    files = write_sheets(
                        build, plan, tmp, options.template_dir, report, stats, sheets
                    )
                    stats.seconds["sheets"] = time.perf_counter() - clock
            if options.pdf and not streaming:
                clock = time.perf_counter()
                files += compile_and_split(
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
