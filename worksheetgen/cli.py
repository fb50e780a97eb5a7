"""The command line: parse options, call the library, print. Nothing else lives here.

Heavy modules (NumPy, SymPy) are imported inside the commands, so ``--help`` stays fast.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import wraps
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import click

from worksheetgen import __version__, plugins
from worksheetgen.cliparams import Choice, IntRange, PathArg, PluginChoice, Seed, Share, Stress
from worksheetgen.language import LANGUAGES, SEPARATORS
from worksheetgen.speed.process import tune_process
from worksheetgen.textrules import excerpt, shown

if TYPE_CHECKING:
    from pathlib import Path

    from worksheetgen.keyjson.read import ExpectedSecret

F = TypeVar("F", bound=Callable[..., Any])


def reports_errors(fn: F) -> F:
    """Turn a WorksheetgenError into one line on stderr and its exit code."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # imported when the command runs, so that --help loads neither NumPy, SymPy nor Jinja2
        from worksheetgen.errors import WorksheetgenError

        try:
            return fn(*args, **kwargs)
        except WorksheetgenError as exc:
            _plugin_warnings()
            for line in str(exc).splitlines():  # several only where each is its own error
                click.echo(f"worksheetgen: error: {line}", err=True)
            sys.exit(exc.exit_code)
        finally:
            _plugin_warnings()

    return wrapper  # type: ignore[return-value]


_WARNED = [0]


def _plugin_warnings() -> None:
    """Show on stderr what went wrong with plugins without stopping the command."""
    for line in plugins.warnings_since(_WARNED[0]):
        click.echo(f"worksheetgen: warning: {line}", err=True)
    _WARNED[0] = len(plugins.WARNINGS)


def _binary_stdout() -> Any:
    """Standard output as bytes (for an output path given as ``-``)."""
    sys.stdout.flush()
    return sys.stdout.buffer


def _using(config: Any, quiet: bool = False) -> Any:
    """Say on stderr which configuration file a command follows (never on stdout: it may
    be the file asked for), unless --quiet; returns ``config``."""
    if config.path is not None and not quiet:
        click.echo(f"worksheetgen: configuration: {shown(str(config.path))}", err=True)
    return config


def _stdout_failure(exc: OSError) -> str | None:
    """What went wrong when printing to standard output failed (a full disk, a closed pipe),
    or None when ``exc`` came from anywhere else (a bug: it keeps its traceback)."""

    frames = traceback.extract_tb(exc.__traceback__)
    if not frames or frames[-1].name not in ("echo", "flush") or exc.filename is not None:
        return None
    if exc.errno == errno.EPIPE:
        return "closed before everything was written (broken pipe)"
    # imported when the command runs, so that --help loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.files import write_failure

    error = write_failure(exc)
    return None if error is None else error.message.split(";")[0]


#: the signals (SIGINT, SIGTERM) that interrupted this run: an interrupt always ends it with
#: exit 130 and one line, even one raised where Python could only report it as "Exception
#: ignored in ..." (a finalizer, a generator being closed) and carry on
_INTERRUPTS: list[int] = []


def _terminated(signum: int, frame: Any) -> None:
    _INTERRUPTS.append(signum)
    raise KeyboardInterrupt


def _unraisable(hook: Any) -> Any:
    """``sys.unraisablehook`` that keeps an interrupt raised inside a finalizer quiet (the run
    ends with exit 130 anyway) and passes anything else to ``hook``."""

    def quiet(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            return
        hook(unraisable)

    return quiet


class OneLineErrors(click.Group):
    """A command group whose usage errors and Ctrl-C are one line on stderr, like every error."""

    def invoke(self, ctx: click.Context) -> Any:
        # an interrupt becomes Abort here, before Click's own handler turns it into one after
        # writing a blank line on stderr: the interrupt is one line, however stderr is read
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise click.Abort from None

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        tune_process()  # our own process: see worksheetgen.speed.process
        # `kill` (SIGTERM) cleans up like Ctrl-C: no temporary folders, no TeX left running;
        # the handler before is put back afterwards (the CLI may run inside another program)
        previous = signal.signal(signal.SIGTERM, _terminated)
        # Ctrl-C too, unless it is ignored (a background job's): then it stays ignored
        previous_int = signal.getsignal(signal.SIGINT)
        if previous_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, _terminated)
        previous_hook = sys.unraisablehook
        sys.unraisablehook = _unraisable(previous_hook)
        del _INTERRUPTS[:]
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
            if _INTERRUPTS:  # an interrupt swallowed on its way (see _INTERRUPTS)
                raise click.Abort
        except click.BadParameter as exc:
            where = (
                "/".join(exc.param.opts)
                if exc.param is not None and exc.param.opts
                else (exc.param_hint or "value")
            )
            message = (
                "expected a value (required), got nothing"
                if isinstance(exc, click.MissingParameter)
                else exc.message
            )
            click.echo(f"worksheetgen: error: {where}: {excerpt(message)}", err=True)
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            command = exc.ctx.command_path if exc.ctx is not None else "worksheetgen"
            click.echo(
                f"worksheetgen: error: {excerpt(exc.format_message())} (see {command} --help)",
                err=True,
            )
            sys.exit(exc.exit_code)
        except click.Abort:  # Ctrl-C, SIGTERM (see invoke)
            if sys.stderr.isatty():  # past the terminal's ^C echo, as Click does
                click.echo(err=True)
            click.echo("worksheetgen: interrupted", err=True)
            sys.exit(130)
        except click.ClickException as exc:
            click.echo(f"worksheetgen: error: {excerpt(exc.format_message())}", err=True)
            sys.exit(exc.exit_code)
        except OSError as exc:
            line = _stdout_failure(exc)
            if line is None:
                raise
            try:
                click.echo(f"worksheetgen: error: standard output: {line}", err=True)
            except OSError:
                pass
            sys.exit(1)
        finally:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
            if previous_int is signal.default_int_handler:
                signal.signal(signal.SIGINT, previous_int)
            sys.unraisablehook = previous_hook
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="worksheetgen")
def main() -> None:
    """Randomized self-attention worksheets with exact answer keys.

    \b
    worksheetgen build --seed 42                the default worksheet: sheet and key as
                                                PDF, TeX, Markdown and JSON
    worksheetgen build --seed 42 --bank my.yaml  your own questions
    worksheetgen families                       the question families a bank can use
    """


def _bank_option(fn: F) -> F:
    """``--bank``: the bank files or folders a build or check reads."""
    option = click.option(
        "--bank",
        "banks",
        multiple=True,
        type=PathArg(),
        help="A bank file or folder (repeatable). Default: the bundled default bank.",
    )
    return option(fn)


def _config_option(fn: F) -> F:
    """``--config``: the course configuration to use instead of the nearest one."""
    option = click.option(
        "--config",
        "config_path",
        type=PathArg(dir_okay=False),
        help="The course configuration. Default: worksheetgen.toml in this folder or a parent.",
    )
    return option(fn)


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


@main.command()
@_bank_option
@click.option(
    "--stress",
    type=Stress(),
    default=200,
    show_default=True,
    is_flag=False,
    flag_value=Stress.SWEEP,
    metavar="[N]",
    help="Seeds drawn per question. Alone: every bundled bank (or each --bank), "
    "50 seeds, at decimals 0 to 4 (or --decimals): no kept slip may pass for right.",
)
@click.option(
    "--decimals",
    type=IntRange(0, 6),
    default=None,
    help="Check at these decimals, as build --decimals would print them.",
)
@click.option(
    "--export",
    "exports",
    multiple=True,
    type=PluginChoice(plugins.EXPORTERS),
    help="Fail when this LMS export (repeatable) would refuse the banks, as build --export "
    "would before drawing; without it, what any export would refuse is a note.",
)
@click.option(
    "--paper",
    type=Choice(["a4", "letter"]),
    default=None,
    help="Count the sheets' pages on this paper. Default: the configuration's paper, else "
    "both A4 and Letter.",
)
@click.option(
    "--scannable/--no-scannable",
    default=None,
    help="Count the pages of sheets a scanner reads (or of plain ones). Default: the "
    "configuration's scannable, else both.",
)
@click.option(
    "--sheets",
    type=IntRange(0, 702),
    default=30,
    show_default=True,
    help="Sheets drawn (versions A, B, ... at --seed) to count pages; 0: no page count.",
)
@click.option(
    "--seed",
    type=Seed(),
    default=0,
    show_default=True,
    help="Seed of the sheets drawn to count pages.",
)
@_config_option
@reports_errors
def check(
    banks: tuple[str, ...],
    stress: int | str,
    decimals: int | None,
    exports: tuple[str, ...],
    paper: str | None,
    scannable: bool | None,
    sheets: int,
    seed: int,
    config_path: str | None,
) -> None:
    """Validate banks, draw every question N times and count each sheet's pages.

    Per question: failures, redraws, spread, timing; then how many pages each sheet will
    take on paper, counted before any TeX runs (docs/guide/checking.md).

    The course configuration (worksheetgen.toml) gives the banks, decimals, secret, paper,
    scannable and the rest of what a sheet prints, as for build; options given here win.
    """
    # imported when the command runs, so that --help loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.pipeline.check import (
        check_banks,
        item_lines,
        refusal_lines,
        summary_line,
    )
    from worksheetgen.pipeline.config import load_config

    config = _using(
        load_config(
            config_path,
            {"banks": banks, "decimals": decimals, "paper": paper, "scannable": scannable},
        )
    )
    banks, decimals, secret = config.value("banks"), config.value("decimals"), config.secret

    if stress == Stress.SWEEP:
        # imported when the command runs, so that --help loads neither NumPy, SymPy nor Jinja2
        from worksheetgen.pipeline.check import (
            SWEEP_DECIMALS,
            family_lines,
            sweep_banks,
            sweep_lines,
            sweep_summary,
        )

        def shown(d: int, report: object) -> None:
            for line in sweep_lines(d, report):  # type: ignore[arg-type]
                click.echo(line)

        swept = sweep_banks(
            banks,
            decimals=SWEEP_DECIMALS if decimals is None else (decimals,),
            progress=shown,
            secret=secret,
        )
        click.echo("softmax rows per family (every bank and decimals above):")
        for line in family_lines(swept):
            click.echo(line)
        click.echo(sweep_summary(swept))
        if not swept.ok:
            sys.exit(1)
        return
    assert isinstance(stress, int)

    def show(item: object) -> None:
        for line in item_lines(item):  # type: ignore[arg-type]
            click.echo(line)

    report = check_banks(
        banks, stress, progress=show, decimals=decimals, secret=secret, exports=exports
    )
    for line in refusal_lines(report):
        click.echo(line)
    if report.ok and sheets:
        click.echo(_pages_line(config, seed, sheets))
    click.echo(summary_line(report))
    if not report.ok:
        sys.exit(1)


def _pages_line(config: Any, seed: int, sheets: int) -> str:
    """check's line on how many pages each sheet will take: on the configuration's (or the
    option's) paper and kind of sheet, else on both papers, plain and scannable; and in large
    print where the configuration asks it."""
    # imported when the command runs, so that --help loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.pipeline.options import BuildOptions
    from worksheetgen.pipeline.pages import page_report, pages_line

    def given(name: str) -> bool:
        return bool(config.settings[name].source != "default")

    papers = (config.value("paper"),) if given("paper") else ("a4", "letter")
    scan = (bool(config.value("scannable")),) if given("scannable") else (False, True)
    options = BuildOptions.from_config(config, seed)
    # large print (worksheetgen.toml's large_print = true): its own count, never scannable
    large = bool(config.value("large_print")) and scan != (True,)
    return pages_line(page_report(options, sheets, papers, scan, large))


@main.command()
@reports_errors
def families() -> None:
    """List the question families and the parameters a bank can set."""
    # imported when the command runs, so that --help loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.families import FAMILIES, get_family
    from worksheetgen.families.base import param_kind, param_text

    for name in sorted(FAMILIES):
        fam = get_family(name)
        extra = (
            " (multiple choice: format: choice)" if fam.supports_choice or fam.choice_param else ""
        )
        click.echo(f"{name}: {fam.summary}{extra}")
        for p in fam.params:
            default = "" if p.default is None else f"; default {param_text(p.default)}"
            click.echo(f"    {p.name}: {param_kind(p)}{default}. {p.help}")


@main.command()
@click.option(
    "--key",
    "key_path",
    required=True,
    type=PathArg(dir_okay=False),
    help="The key.json of the build the students answered.",
)
@click.argument("responses", type=PathArg(dir_okay=False))
@click.option(
    "--out",
    type=PathArg(file_okay=False),
    help="Folder for scores.csv, report.md, the class report and the feedback pages. "
    "Default: the responses file's folder.",
)
@click.option(
    "--template",
    is_flag=True,
    help="Write a blank RESPONSES file for this key (one row per student, question, "
    "answer and entry) to fill in, instead of grading ('-': to standard "
    "output).",
)
@click.option(
    "--marks",
    is_flag=True,
    help="With --template: one row per student and part instead, to type the part's points "
    "(or right/wrong) in its mark column; grading reads both kinds of row, mixed in one file.",
)
@click.option(
    "--students",
    type=IntRange(1, 2000),
    default=None,
    help="With --template, for a --versions build: rows for this many students, each with "
    "every version's rows and a sheet column; fill in the version the student wrote.",
)
@click.option(
    "--tries",
    type=Choice(["last", "first"]),
    default="last",
    show_default=True,
    help='A Moodle download with a row per try (adaptive quizzes, "all tries"): last: '
    "each question's mark as Moodle's adaptive mode gives it (its best try, less --penalty "
    "for each try before it); first: the first try alone.",
)
@click.option(
    "--grading-method",
    "--attempt",
    "attempt",
    type=Choice(["highest", "average", "first", "last"]),
    default="highest",
    show_default=True,
    help="A Moodle download where a student has several finished attempts: the quiz's "
    "grading method (highest grade, average grade, first or last attempt; highest is "
    "Moodle's default).",
)
@click.option(
    "--penalty",
    type=Share(),
    default=None,
    help='An adaptive quiz\'s "All tries" download: the penalty for each wrong try, a '
    "share of the question's mark, as Moodle's adaptive mode takes it off. Default: "
    "0.3333333, the one the Moodle export sets.",
)
@click.option(
    "--carry/--no-carry",
    default=None,
    help="Credit error carried forward in every question, or in none (as an LMS marks). "
    "Default: as the key says for each question (the bank's or the course's carry).",
)
@click.option(
    "--report/--no-report",
    "class_report",
    default=True,
    show_default=True,
    help="Also write the class report (HTML, PDF, the CSVs behind its pictures) and each "
    "student's feedback page; --no-report: only scores.csv and report.md, several times "
    "faster.",
)
@click.option(
    "--lenient",
    is_flag=True,
    help="Grade even when values cannot be read: each counts as wrong and is listed "
    "(without it, every unreadable value is listed and nothing is graded).",
)
@click.option(
    "--paper",
    type=Choice(["a4", "letter"]),
    help="Paper size of the class report's and the feedback pages' PDFs (as the build "
    "printed). Default: the configuration's paper, else a4.",
)
@click.option(
    "--absent",
    type=Choice(["blank", "zero"]),
    default="blank",
    show_default=True,
    help="A student with no responses: blank gives no total in scores.csv and no "
    "feedback page (nothing was marked); zero records 0 points and a page saying so.",
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@click.option(
    "--verbose", "-v", is_flag=True, help="List every file written, each feedback page too."
)
@_config_option
@reports_errors
def grade(
    key_path: str,
    responses: str,
    out: str | None,
    template: bool,
    marks: bool,
    students: int | None,
    tries: Literal["last", "first"],
    attempt: Literal["highest", "average", "first", "last"],
    penalty: Fraction | None,
    carry: bool | None,
    class_report: bool,
    lenient: bool,
    paper: str | None,
    absent: Literal["blank", "zero"],
    quiet: bool,
    verbose: bool,
    config_path: str | None,
) -> None:
    """Grade RESPONSES (our CSV, or Moodle's Responses report downloaded as CSV, .xlsx or
    .ods with Right answer ticked) against a key: scores.csv and a report naming each slip."""
    _quiet_or_verbose(quiet, verbose)
    # imported when the command runs, so that --help loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.pipeline.config import key_secret, load_config

    config = load_config(config_path, {"paper": paper})
    _grade(
        key_path,
        responses,
        out,
        template,
        marks,
        students or 0,
        tries,
        attempt,
        carry,
        class_report,
        lenient,
        config.value("paper"),
        quiet,
        verbose,
        absent,
        key_secret(_using(config, quiet)),
        penalty,
    )


def _grade(
    key_path: str,
    responses: str,
    out: str | None,
    template: bool,
    marks: bool,
    students: int,
    tries: Literal["last", "first"],
    attempt: Literal["highest", "average", "first", "last"],
    carry: bool | None,
    class_report: bool,
    lenient: bool,
    paper: str,
    quiet: bool,
    verbose: bool = False,
    absent: Literal["blank", "zero"] = "blank",
    secret: ExpectedSecret | None = None,
    penalty: Fraction | None = None,
) -> None:
    """grade's work, with every key read checked against the course secret (``secret``)."""
    # imported when the command runs, so that --help loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.grading.template import write_template
    from worksheetgen.report.grade import grade_files

    if marks and not template:
        raise click.UsageError("--marks writes a template: use it with --template")
    if students and not template:
        raise click.UsageError("--students writes a template: use it with --template")
    if template:
        path = write_template(
            key_path,
            responses,
            stdout=_binary_stdout(),
            marks=marks,
            students=students,
            secret=secret,
        )
        if path is not None and not quiet:
            column = "mark column (points, or right/wrong)" if marks else "value column"
            click.echo(f"Wrote a blank responses file to {shown(str(path))}: fill in the {column}.")
        return
    run = grade_files(
        key_path,
        responses,
        out,
        tries,
        attempt,
        carry,
        lenient,
        class_report,
        paper,
        absent=absent,
        secret=secret,
        penalty=penalty,
    )
    if quiet:
        return
    graded = run.result.students
    click.echo(f"Graded {len(graded)} student(s) from {shown(responses)} against {shown(key_path)}")
    _echo_files(run.files, verbose)
    if run.result.unreadable:
        click.echo(
            f"  {len(run.result.unreadable)} unreadable value(s) graded as wrong "
            "(report.md lists them)"
        )
    if run.result.against_pool:
        click.echo(
            f"  {len(run.result.against_pool)} attempt(s) not graded: the LMS dealt them "
            "against the bank's pool rule (report.md lists them)"
        )


@main.command()
@click.argument("scans", nargs=-1, required=True, type=PathArg(dir_okay=False))
@click.option(
    "--key",
    "key_path",
    required=True,
    type=PathArg(dir_okay=False),
    help="The key.json of the --scannable build (its scan.json beside it).",
)
@click.option(
    "--out",
    type=PathArg(file_okay=False),
    help="Folder for responses.csv, issues.csv (with crops/), scores.csv and report.md. "
    "Default: scan/ beside the key.",
)
@click.option(
    "--corrections",
    type=PathArg(dir_okay=False),
    help="A CSV (id,value) settling what issues.csv lists: an answer's option letter, its "
    "points, or blank.",
)
@click.option(
    "--jobs",
    "-j",
    type=IntRange(0, 64),
    default=0,
    show_default=True,
    help="Processes that read the pages (0: one per core).",
)
@click.option(
    "--absent",
    type=Choice(["blank", "zero"]),
    default="blank",
    show_default=True,
    help="A student with no responses (no page scanned): blank gives no total in scores.csv and no "
    "feedback page (nothing was marked); zero records 0 points and a page saying so.",
)
@click.option(
    "--roster",
    type=PathArg(dir_okay=False),
    help="For sheets photocopied for a class (build --student-number): the class roster CSV "
    "whose ids the copies' student numbers are matched to.",
)
@click.option(
    "--verify-pages",
    type=Choice(["issues", "all", "none"]),
    default="issues",
    show_default=True,
    help="Pages drawn into verify/ with every box outlined by what was read (marked, taken "
    "back, for a person, empty) and each part labelled: each page with an issue (issues.csv "
    "names its picture), every page read, or none.",
)
@click.option(
    "--feedback-scans",
    is_flag=True,
    help="Each student's feedback page (HTML and PDF) shows their scanned pages, every box "
    "outlined by what was read.",
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@click.option(
    "--verbose", "-v", is_flag=True, help="List every file written, each feedback page too."
)
@_config_option
@reports_errors
def scan(
    scans: tuple[str, ...],
    key_path: str,
    out: str | None,
    corrections: str | None,
    jobs: int,
    absent: str,
    roster: str | None,
    verify_pages: str,
    feedback_scans: bool,
    quiet: bool,
    verbose: bool,
    config_path: str | None,
) -> None:
    """Read SCANS (PDFs from a copier, PNG, JPEG or TIFF pages, in any order) of a
    --scannable build's sheets, and grade them: the marked boxes become the responses grade
    reads; what needs a person is listed in issues.csv, never guessed."""
    _quiet_or_verbose(quiet, verbose)
    # imported when the command runs, so that --help loads neither NumPy, Pillow nor pypdfium2
    from worksheetgen.pipeline.config import key_secret, load_config
    from worksheetgen.scan.run import scan_files

    secret = key_secret(_using(load_config(config_path), quiet))
    result = scan_files(
        scans,
        key_path,
        out,
        corrections,
        jobs,
        absent,
        secret,
        roster,
        verify_pages,
        feedback_scans,
    )
    if quiet:
        return
    click.echo(
        f"Read {result.pages} page(s), {result.identified} identified, from "
        f"{len(scans)} scan(s) against {shown(key_path)}"
    )
    _echo_files([p for p in result.files if p.parent.name != "crops"], verbose)
    if result.absent:
        click.echo(f"  {len(result.absent)} student(s) with no page scanned (absent)")
    if result.open_issues:
        click.echo(
            f"  {len(result.open_issues)} item(s) need a person: see issues.csv (settle them "
            "with --corrections)"
        )


def _quiet_or_verbose(quiet: bool, verbose: bool) -> None:
    """--quiet and --verbose refused together (build, grade, scan)."""
    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose: expected one of them, got both")


def _echo_files(files: Sequence[Path], verbose: bool) -> None:
    """The files grade or scan wrote, a line each; a folder of many (the feedback pages, one
    or two per student), given as the folder or as its files, as one line unless
    ``verbose``."""
    listed: list[Path] = []
    for path in files:
        listed += sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    folders: dict[Path, list[Path]] = {}
    for path in listed:
        folders.setdefault(path.parent, []).append(path)
    top = min(folders, key=lambda f: len(f.parts)) if folders else None
    folded: dict[Path, list[Path]] = {}
    for path in listed:
        if not verbose and path.parent != top and len(folders[path.parent]) > FOLD_FILES:
            folded.setdefault(path.parent, []).append(path)
        else:
            click.echo(f"  {shown(str(path))}")
    for folder, paths in folded.items():
        kinds = ", ".join(sorted({p.suffix for p in paths}))
        click.echo(f"  {shown(str(folder))}/  ({len(paths)} files: {kinds}; --verbose lists them)")


#: a folder of more files than this is listed as one line (without --verbose)
FOLD_FILES = 6


@main.command(name="export")
@click.option(
    "--to",
    "fmt",
    required=True,
    type=PluginChoice(plugins.EXPORTERS),
    help="moodle: Moodle XML; gift: GIFT text; qti: a Canvas QTI 1.2 zip.",
)
@click.option(
    "--key",
    "key_path",
    required=True,
    type=PathArg(dir_okay=False),
    help="The key.json of a build (output/<sheet>-seed<N>/key.json).",
)
@click.option(
    "--out",
    type=PathArg(),
    help="File (or folder) to write; '-': standard output. Default: moodle.xml, "
    "gift.txt or canvas-qti.zip beside the key.",
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@_config_option
@reports_errors
def export_cmd(
    fmt: str, key_path: str, out: str | None, quiet: bool, config_path: str | None
) -> None:
    """Export a key's questions for an LMS: one question per variant, tolerances kept."""
    # imported when the command runs, so that --help loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.export import export_file
    from worksheetgen.pipeline.config import key_secret, load_config

    secret = key_secret(_using(load_config(config_path), quiet))
    path = export_file(key_path, fmt, out, stdout=_binary_stdout(), secret=secret)
    if path is not None and not quiet:
        click.echo(f"Exported {shown(key_path)} to {fmt}: {shown(str(path))}")


@main.command()
@click.argument("folder", required=False, type=PathArg(file_okay=False))
@click.option("--course", help="The course's name, written into the configuration.")
@reports_errors
def init(folder: str | None, course: str | None) -> None:
    """Start a course in FOLDER (default: here): worksheetgen.toml and a random secret."""
    # imported when the command runs, so that --help stays fast
    from pathlib import Path

    from worksheetgen.pipeline.config import init_course

    config, secret = init_course(Path(folder or "."), course)
    click.echo(
        f"Wrote {shown(str(config))} and the course secret {shown(str(secret))} "
        "(readable only by you)."
    )
    click.echo(
        "  Keep the secret private and out of version control: without it no key can be "
        "rebuilt, with it anyone can rebuild every key."
    )


@main.command(name="config")
@_config_option
@reports_errors
def config_cmd(config_path: str | None) -> None:
    """Print each effective setting and where it came from."""
    # imported when the command runs, so that --help stays fast
    from worksheetgen.pipeline.config import UNSET, fingerprint, load_config

    config = load_config(config_path)
    where = "none found" if config.path is None else shown(str(config.path))
    click.echo(f"configuration: {where}")
    for name, setting in config.settings.items():
        value = setting.value
        text = ", ".join(value) if isinstance(value, tuple) else value
        if isinstance(value, bool):
            text = "true" if value else "false"
        unset = text is None or text == ""
        # what the file holds is shown, never obeyed (an ESC, a bidi override)
        shown_value = f"(unset: {UNSET.get(name, 'none')})" if unset else shown(str(text))
        click.echo(f"{name} = {shown_value}  ({shown(setting.source)})")
    if config.secret is None:
        click.echo("secret = (none: anyone who knows the seed can rebuild a key)  (default)")
    else:
        source = shown(str(config.secret_source))
        click.echo(f"secret = fingerprint {fingerprint(config.secret)}  ({source})")


def run() -> None:
    """The installed command (and ``python -m worksheetgen``): the CLI in a process of its
    own, which ends without tearing down its heap.

    A class build leaves a few hundred thousand objects (the exact-value memo among them)
    that an ordinary interpreter exit frees one by one: about 40 ms after the work is done.
    Every file is closed by then, so once the output is flushed the process exits at once
    with the command's code. An exception that escapes (a bug) exits the ordinary way, with
    its traceback.
    """
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    if code is not None and not isinstance(code, int):  # sys.exit("text"), as Python does
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more to say
            pass
    os._exit(code or 0)
