"""``worksheetgen build``: one worksheet, or a whole class, written into its folder.

The one entry point the command line calls; it picks the single-sheet path (below) or the
class path (``class_build``), which share the stages in ``sheet``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from worksheetgen.bank.roster import read_roster
from worksheetgen.errors import UsageError
from worksheetgen.files import failures_as_errors
from worksheetgen.keyjson import write as keyfile
from worksheetgen.pipeline import class_build as classbuild
from worksheetgen.pipeline.options import (
    BuildOptions,
    BuildResult,
    check_paper_engine,
    check_seed,
    engine_refusal,
)
from worksheetgen.pipeline.output import check_out, check_target, sweep_leftovers, write_atomically
from worksheetgen.pipeline.plan import plan_roster, plan_versions
from worksheetgen.pipeline.sheet import folder_name, load_bank, make_build, render_all

__all__ = ["BuildOptions", "BuildResult", "build", "build_class"]


def build_class(
    options: BuildOptions, progress: Callable[[str, int, int], None] | None = None
) -> BuildResult:
    """A whole class: one sheet per roster student or per version (``class_build``)."""
    if options.roster is not None and options.versions is not None:
        raise UsageError("--roster and --versions: expected one of them, got both")
    if options.roster is not None:
        plan = plan_roster(read_roster(options.roster), options.roster)
    else:
        plan = plan_versions(int(options.versions or 0))
    return classbuild.build_class(options, plan, progress)


def build(
    options: BuildOptions, progress: Callable[[str, int, int], None] | None = None
) -> BuildResult:
    """Run the whole pipeline for one worksheet (or a whole class) and write its folder."""
    if options.roster is not None or options.versions is not None:
        return build_class(options, progress)
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
                sheet_build_code,
            )

            recorded = outputs["sheet"].scanpos
            code = sheet_build_code(result)
            files[SCAN_FILE] = dumps(positions_json(code, result.paper, recorded))
    opts = {"pdf": options.pdf, "decimals": options.decimals, "title": options.title}
    manifest = keyfile.manifest_json(result, [*files, "manifest.json"], opts)
    files["manifest.json"] = keyfile.streamed_dumps(manifest, "draws").encode("utf-8")
    write_atomically(target, files)
    return BuildResult(target, tuple(sorted(files)), result, swept=swept)
