"""``worksheetgen export``: a built key into an LMS's import file."""

from __future__ import annotations

import click

from worksheetgen import plugins
from worksheetgen.cli.app import (
    _binary_stdout,
    _config_option,
    _using,
    main,
    reports_errors,
)
from worksheetgen.cliparams import PathArg, PluginChoice
from worksheetgen.textrules import shown


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
