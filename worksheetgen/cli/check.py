"""``worksheetgen check`` and ``worksheetgen families``: what a bank would build, without
building it."""

from __future__ import annotations

import sys
from typing import Any

import click

from worksheetgen import plugins
from worksheetgen.cli.app import (
    _bank_option,
    _config_option,
    _using,
    main,
    reports_errors,
)
from worksheetgen.cliparams import Choice, IntRange, PluginChoice, Seed, Stress


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
