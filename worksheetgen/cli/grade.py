"""``worksheetgen grade``: responses and a key in, scores and reports out."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Literal

import click

from worksheetgen.cli.app import (
    _binary_stdout,
    _config_option,
    _echo_files,
    _quiet_or_verbose,
    _using,
    main,
    reports_errors,
)
from worksheetgen.cliparams import Choice, IntRange, PathArg, Share
from worksheetgen.textrules import shown

if TYPE_CHECKING:
    from worksheetgen.keyjson.read import ExpectedSecret


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
