"""``worksheetgen scan``: scanned pages and a key in, responses, scores and reports out."""

from __future__ import annotations

import click

from worksheetgen.cli.app import (
    _config_option,
    _echo_files,
    _quiet_or_verbose,
    _using,
    main,
    reports_errors,
)
from worksheetgen.cliparams import Choice, IntRange, PathArg
from worksheetgen.textrules import shown


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
