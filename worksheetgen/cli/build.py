"""Run ``worksheetgen build``: the options, the progress line and the build's one call."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from worksheetgen import plugins
from worksheetgen.cli.app import (
    _bank_option,
    _config_option,
    _quiet_or_verbose,
    _using,
    main,
    reports_errors,
)
from worksheetgen.cliparams import Choice, IntRange, PathArg, PluginChoice, Seed
from worksheetgen.language import LANGUAGES, SEPARATORS
from worksheetgen.textrules import shown


@main.command()
@click.option("--seed", type=Seed(), required=True, help="Seed for every random draw.")
@_bank_option
@click.option(
    "--out",
    default=None,
    type=PathArg(),
    help="Folder that receives one sub-folder per build. Default: the configuration's "
    "out, else output.",
)
@click.option("--no-pdf", is_flag=True, help="Skip the PDFs (no TeX needed).")
@click.option("--title", help="Title printed on the sheet and key.")
@click.option("--course", help="Course printed above the title.")
@click.option("--decimals", type=IntRange(0, 6), help="Decimals for every answer.")
@click.option(
    "--paper",
    type=Choice(["a4", "letter"]),
    help="Paper size of the PDFs. Default: the configuration's paper, else a4.",
)
@click.option(
    "--engine",
    type=Choice(["auto", "pdflatex", "lualatex"]),
    help="TeX engine. auto: pdfLaTeX, or LuaLaTeX when the text has letters pdfLaTeX "
    "cannot print. Default: the configuration's engine, else auto.",
)
@click.option(
    "--language",
    type=Choice(list(LANGUAGES)),
    help="Language of the fixed words of sheets, keys and grid (the bank's own words stay "
    "as written). Default: the configuration's language, else en.",
)
@click.option(
    "--decimal",
    type=Choice(list(SEPARATORS)),
    help="Decimal separator of the printed numbers (answers, tables, worked steps); grade, "
    "scan and the exports then read it. Default: the configuration's, else the language's "
    "(en: point, de: comma).",
)
@click.option(
    "--templates",
    "template_dir",
    type=PathArg(exists=True, file_okay=False),
    help="A folder with latex/ and markdown/ templates that override the bundled ones.",
)
@click.option(
    "--export",
    "exports",
    multiple=True,
    type=PluginChoice(plugins.EXPORTERS),
    help="Also write an LMS export of the key (repeatable): moodle.xml, gift.txt, canvas-qti.zip.",
)
@click.option(
    "--roster",
    type=PathArg(dir_okay=False),
    help="A class roster CSV (header; 'name' required, 'id' optional): one sheet per "
    "student, a combined PDF to print and per-student PDFs.",
)
@click.option(
    "--versions",
    type=IntRange(1, 702),
    metavar="N",
    help="N anonymous versions A, B, C, ... instead of a roster.",
)
@click.option(
    "--jobs",
    "-j",
    type=IntRange(0, 64),
    default=None,
    help="Processes that draw and render a class's sheets (0: one per core). "
    "Default: one per core on Linux without PDFs; with PDFs one, while TeX "
    "typesets on the other cores. The files are the same for any number.",
)
@click.option(
    "--shuffle/--no-shuffle",
    default=None,
    help="Print each sheet's questions in an order of its own (numbered as printed). "
    "Default: the configuration's shuffle, else the bank's sheet: shuffle, else no.",
)
@click.option(
    "--scannable/--no-scannable",
    default=None,
    help="Sheets a scanner reads: corner marks and a page code on every page, boxes to "
    "mark, their positions in scan.json (read back by worksheetgen scan). Default: the "
    "configuration's scannable, else no.",
)
@click.option(
    "--answer-sheet/--no-answer-sheet",
    default=None,
    help="With --scannable: every box goes on a short answer sheet per sheet (answers.pdf, "
    "students/<id>-answers.pdf), the one page or two scan reads; the sheets are booklets "
    "without boxes. Default: the configuration's answer_sheet, else no.",
)
@click.option(
    "--student-number",
    type=IntRange(0, 12),
    metavar="DIGITS",
    default=None,
    help="With --scannable, a lone sheet or --versions N photocopied for a class: a grid of "
    "DIGITS columns of boxes 0-9 on each sheet's first page, where students mark their "
    "number; scan --roster matches each copy to its student. 0: none. Default: the "
    "configuration's student_number, else none.",
)
@click.option(
    "--large-print/--no-large-print",
    default=None,
    help="Every sheet in large print: the PDF sheets in 14 pt (math, tables, answer cells and "
    "room to work 1.28 times as large), the HTML sheets and keys in 16 pt; the keys' PDFs and "
    "the TA's grid stay standard, and a scannable build refuses it. A roster's large_print "
    "column asks it per student. Default: the configuration's large_print, else no.",
)
@click.option(
    "--practice",
    is_flag=True,
    help="Also a practice page per sheet (practice.html; a class's in students/ or "
    "versions/): Check says right or wrong as grade would, names the slip behind a wrong "
    "value, shows the worked steps one at a time. The answers are inside the page.",
)
@click.option(
    "--practice-despite-secret",
    is_flag=True,
    help="With --practice and a course secret: write the practice pages anyway (they hold "
    "the answers the secret keeps from students; each page says so).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@click.option(
    "--verbose", "-v", is_flag=True, help="Print each stage with its time, and every file written."
)
@_config_option
@reports_errors
def build(
    seed: int,
    banks: tuple[str, ...],
    out: str | None,
    no_pdf: bool,
    title: str | None,
    course: str | None,
    decimals: int | None,
    paper: str | None,
    engine: str | None,
    language: str | None,
    decimal: str | None,
    template_dir: str | None,
    exports: tuple[str, ...],
    roster: str | None,
    versions: int | None,
    jobs: int | None,
    shuffle: bool | None,
    scannable: bool | None,
    answer_sheet: bool | None,
    student_number: int | None,
    large_print: bool | None,
    practice: bool,
    practice_despite_secret: bool,
    quiet: bool,
    verbose: bool,
    config_path: str | None,
) -> None:
    """Draw a worksheet and write the student sheet, the answer key and key.json.

    With --roster (or --versions) it builds a whole class into one folder. The course
    configuration (worksheetgen.toml) gives defaults; options given here win.
    """
    # imported when the command runs, so that --help loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.pipeline.build import build as run_build
    from worksheetgen.pipeline.config import load_config
    from worksheetgen.pipeline.options import BuildOptions

    _quiet_or_verbose(quiet, verbose)
    given = {"course": course, "title": title, "decimals": decimals, "banks": banks}
    config = load_config(
        config_path,
        {
            **given,
            **{"out": out, "jobs": jobs, "shuffle": shuffle, "paper": paper, "engine": engine},
            "scannable": scannable,
            "answer_sheet": answer_sheet,
            "student_number": student_number,
            "large_print": large_print,
            "language": language,
            "decimal": decimal,
        },
    )
    _using(config, quiet)
    if no_pdf and config.value("scannable"):  # said even with --quiet: an output is missing
        given_as = "--scannable" if scannable else "the configuration's scannable = true"
        click.echo(
            f"worksheetgen: warning: {given_as} with --no-pdf: the sheets' .tex carry the "
            "marks, but no scan.json is written (where TeX set each box: only a build with "
            "PDFs has it), so worksheetgen scan cannot read these sheets",
            err=True,
        )
    reporter = _BuildProgress(bar=not quiet and sys.stderr.isatty(), verbose=verbose)
    try:
        result = run_build(
            BuildOptions.from_config(
                config,
                seed,
                pdf=not no_pdf,
                template_dir=template_dir,
                exports=exports,
                roster=roster,
                versions=versions,
                practice=practice,
                practice_despite_secret=practice_despite_secret,
            ),
            reporter,
        )
    finally:
        reporter.close()
    if quiet:
        return
    if config.secret is None and (roster is not None or versions is not None):
        click.echo(
            "worksheetgen: note: no course secret is set, so anyone who knows the seed can "
            "rebuild these keys (worksheetgen init sets one)",
            err=True,
        )
    if result.swept:
        click.echo(
            f"worksheetgen: removed {len(result.swept)} temporary folder(s) an "
            f"interrupted build left: {', '.join(str(p) for p in result.swept)}",
            err=True,
        )
    n_items = (
        result.item_count
        if result.item_count is not None
        else sum(len(s.items) for s in result.build.sheets)
    )
    who = ""
    if roster is not None or versions is not None:
        noun = "student" if roster is not None else "version"
        who = f" for {result.sheet_count} {noun}{'' if result.sheet_count == 1 else 's'}"
    click.echo(
        f"Built {result.build.info.title!r}{who} (seed {seed}, {n_items} "
        f"question{'' if n_items == 1 else 's'}) "
        f"into {shown(str(result.folder))}/"
    )
    nested: dict[str, int] = {}
    for name in result.files:
        folder, sep, _ = name.partition("/")
        if sep and not verbose:
            nested[folder] = nested.get(folder, 0) + 1
        else:
            click.echo(f"  {shown(str(result.folder / name))}")
    for folder, count in nested.items():
        kinds = sorted({n.rsplit(".", 1)[-1] for n in result.files if n.startswith(folder + "/")})
        answers = any(n.endswith("-answers.pdf") for n in result.files)
        whose = "each sheet's, answer sheet's and key's" if answers else "each sheet's and key's"
        click.echo(
            f"  {shown(str(result.folder / folder))}/  ({count} files: {whose} "
            + ", ".join("." + k for k in kinds)
            + "; --verbose lists them)"
        )


class _BuildProgress:
    """Progress of a long build: a bar per stage on a terminal, stage times with --verbose."""

    LABELS = {
        "sheets": "Drawing and rendering sheets",
        "pdf": "Compiling PDFs (one TeX run per document) and cutting per-sheet PDFs",
        "write": "Writing",
    }

    def __init__(self, bar: bool, verbose: bool) -> None:

        self.clock = time.perf_counter
        self.bar_on, self.verbose = bar, verbose
        self.stage: str | None = None
        self.bar: Any = None
        self.done = 0
        self.started = self.clock()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage != self.stage:
            self.close()
            self.stage, self.done, self.started = stage, 0, self.clock()
            if self.bar_on and total > 1:
                self.bar = click.progressbar(
                    length=total,
                    label=self.LABELS.get(stage, stage),
                    file=sys.stderr,
                    show_pos=True,
                )
                self.bar.__enter__()
            elif self.bar_on and done < total:
                click.echo(f"{self.LABELS.get(stage, stage)} ...", err=True)
        if self.bar is not None:
            self.bar.update(done - self.done)
        self.done = done
        if done >= total:
            self.close()

    def close(self) -> None:
        """Finish the current stage's bar (and say how long the stage took)."""
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
        if self.stage is not None and self.verbose:
            click.echo(
                f"  {self.LABELS.get(self.stage, self.stage)}: {self.clock() - self.started:.2f} s",
                err=True,
            )
        self.stage = None
