"""``worksheetgen build``: one worksheet, or a whole class, written into its folder.

The one entry point the command line calls. A class (a roster, or anonymous versions) is
built as R/exams' ``xexams`` builds: pre-flight checks once (options, banks, size, TeX
engine, the target folder), the plan (``plan``: every sheet by its identity), one loop that
renders each sheet (``renderer``; in forked workers when that is faster: ``stream``) and
hands it to a sink (``sink.FolderSink``, or ``stream.TexSink``, which feeds TeX meanwhile
and cuts the PDFs), then the finish: exports, manifest.json, the swap into place.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import replace
from pathlib import Path

from worksheetgen.bank.roster import read_roster
from worksheetgen.errors import UsageError
from worksheetgen.files import failures_as_errors, remove_temp
from worksheetgen.keyjson import write as keyfile
from worksheetgen.model import Bank, Build
from worksheetgen.pipeline.options import (
    BuildOptions,
    BuildResult,
    ClassStats,
    Progress,
    check_paper_engine,
    check_seed,
    engine_refusal,
)
from worksheetgen.pipeline.output import (
    check_out,
    check_target,
    staging_folder,
    swap_into_place,
    sweep_leftovers,
    write_atomically,
)
from worksheetgen.pipeline.plan import (
    MAX_CLASS_ITEMS,
    ClassPlan,
    plan_roster,
    plan_versions,
    questions_per_sheet,
    texts_of_bank,
)
from worksheetgen.pipeline.renderer import Renderer
from worksheetgen.pipeline.sheet import folder_name, load_bank, make_build, render_all
from worksheetgen.pipeline.sink import DRAWS, FolderSink, Sink
from worksheetgen.pipeline.stream import TexSink, can_stream, rendered, workers_for
from worksheetgen.scan.positions import sheet_build_code

__all__ = ["BuildOptions", "BuildResult", "build"]


def build(options: BuildOptions, progress: Progress | None = None) -> BuildResult:
    """Run the whole pipeline for one worksheet (or a whole class) and write its folder."""
    if options.roster is not None or options.versions is not None:
        return _build_class(options, progress)
    check_seed(options.seed)
    check_paper_engine(options)
    check_out(options.out)
    forced = None if options.engine == "auto" else options.engine
    if options.pdf:
        # TeX machinery only when PDFs are built
        from worksheetgen.tex.run import require_engine

        # say so before doing any work
        require_engine(forced or "pdflatex", f" (engine = {forced})" if forced else "")
    bank = load_bank(options)
    target = Path(options.out) / f"{bank.info.slug}-seed{options.seed}"  # = folder_name
    check_target(target)
    swept = sweep_leftovers(options.out, options.pdf)
    result = make_build(bank, options.seed, secret=options.secret, paper=options.paper)
    docs = render_all(result, options.template_dir, options.scannable)
    assert target.name == folder_name(result)
    files: dict[str, bytes] = {name: text.encode("utf-8") for name, text in docs.items()}
    key_text = keyfile.streamed_dumps(keyfile.key_json(result), "sheets")
    files["key.json"] = key_text.encode("utf-8")
    if options.exports:
        # the exporters only when --export asks for them
        from worksheetgen.export import export_files

        files.update(export_files(files["key.json"], options.exports))
    if options.pdf:
        # TeX machinery only when PDFs are built
        from worksheetgen.tex.engines import PDFLATEX, needs_unicode_engine, unprintable_sample
        from worksheetgen.tex.run import TexJob, compile_jobs

        names = ("sheet.tex", "key.tex", "key-grid.tex")
        if forced == PDFLATEX:
            for n in names:
                if needs_unicode_engine(docs[n]):
                    raise engine_refusal(unprintable_sample(docs[n]), n)
        keep = Path(options.out) / f".failed-{folder_name(result)}"
        bundled = options.template_dir is None  # a preamble of our own: dumped once
        with failures_as_errors():
            outputs = compile_jobs(
                [TexJob(n[:-4], docs[n], engine=forced, formats=bundled) for n in names],
                keep,
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
            )

            recorded = outputs["sheet"].scanpos
            code = sheet_build_code(result)
            files[SCAN_FILE] = dumps(positions_json(code, result.paper, recorded))
    opts = {"pdf": options.pdf, "decimals": options.decimals, "title": options.title}
    manifest = keyfile.manifest_json(result, [*files, "manifest.json"], opts)
    files["manifest.json"] = keyfile.streamed_dumps(manifest, "draws").encode("utf-8")
    write_atomically(target, files)
    return BuildResult(target, tuple(sorted(files)), result, swept=swept)


def class_plan(options: BuildOptions) -> ClassPlan:
    """A class's sheets: one per roster student, or per anonymous version."""
    if options.roster is not None and options.versions is not None:
        raise UsageError("--roster and --versions: expected one of them, got both")
    if options.roster is not None:
        students = read_roster(options.roster)
        return plan_roster(students, options.roster, options.seed, options.secret)
    return plan_versions(int(options.versions or 0), options.seed, options.secret)


def _class_engine(options: BuildOptions, plan: ClassPlan, bank: Bank) -> str:
    """The TeX engine of a class's documents, chosen (or refused, or found missing) before
    any sheet is drawn: the forced one, else by the roster's and the banks' texts."""
    # TeX machinery only when PDFs are built
    from worksheetgen.tex import engines as texchars

    names = [t for e in plan.entries for t in (e.label, e.id)]
    texts = names + texts_of_bank(bank)
    engine = texchars.choose_engine(texts)
    forced = None if options.engine == "auto" else options.engine
    if forced == texchars.PDFLATEX and engine != forced and options.pdf:
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
    return engine


def _build_class(options: BuildOptions, progress: Progress | None = None) -> BuildResult:
    """A whole class: one sheet per roster student or per version, streamed (see the
    module docstring)."""
    plan = class_plan(options)
    # pre-flight: everything that can be refused is, before any sheet is drawn
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
    engine = _class_engine(options, plan, bank)
    build = Build(
        info=bank.info,
        seed=options.seed,
        bank=bank,
        sheets=(),
        secret=options.secret,
        paper=options.paper,
    )
    if options.scannable:
        plan = replace(plan, scan=(sheet_build_code(build), options.paper))
    target = Path(options.out) / f"{bank.info.slug}-seed{options.seed}-{plan.folder_suffix}"
    tmp = staging_folder(target)  # refuses a target that is not ours, before any work
    swept = sweep_leftovers(options.out, options.pdf)
    stats = ClassStats(forced_engine=None if options.engine == "auto" else options.engine)
    renderer = Renderer(options.template_dir)
    streaming = options.pdf and can_stream()
    # by default a build that streams to TeX draws in this process (TeX takes the other
    # cores); one without PDFs draws on every core
    jobs = options.jobs
    workers = 1 if streaming and jobs is None else workers_for(len(plan.entries), jobs)
    keep = Path(options.out) / f".failed-{target.name}"
    sink: Sink
    if options.pdf:  # TeX reads while the sheets are drawn (streaming), or after
        sink = TexSink(build, plan, tmp, renderer, stats, keep, report, engine, streaming)
    else:
        sink = FolderSink(build, plan, tmp, renderer, stats)
    clock = time.perf_counter()
    try:
        with failures_as_errors(target, rename=(tmp, target)):  # a full disk: one line
            # worker processes (if any) are forked first, before TeX's threads start
            with rendered(build, plan, renderer, workers) as sheets, sink:
                total = len(plan.entries)
                for n, sheet in enumerate(sheets):
                    sink.add(sheet)
                    report("sheets", n + 1, total)
                    if sink.stopped:
                        break  # TeX stopped on an error: it is reported, the rest not needed
                files = sink.finish()
            stats.seconds.setdefault("sheets", time.perf_counter() - clock)
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


def _write_manifest(build: Build, options: BuildOptions, tmp: Path, files: list[str]) -> None:
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
    draws = tmp / DRAWS
    with open(tmp / "manifest.json", "w", encoding="utf-8") as out:
        out.write(before)
        with open(draws, encoding="utf-8") as fh:
            shutil.copyfileobj(fh, out)
        out.write(after)
    os.remove(draws)
