"""``worksheetgen init`` and ``worksheetgen config``: a course folder and its settings."""

from __future__ import annotations

import click

from worksheetgen.cli.app import (
    _config_option,
    main,
    reports_errors,
)
from worksheetgen.cliparams import PathArg
from worksheetgen.textrules import shown


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
