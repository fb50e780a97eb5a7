"""The command line's value types that are not Click's own: a seed, a choice among installed
plugins' names, ``--stress``. Imports only Click and plugins: nothing here loads NumPy, SymPy
or Jinja2.
"""

from __future__ import annotations

from typing import Any

import click

from worksheetgen import plugins


class SeedType(click.ParamType):
    """A non-negative integer seed."""

    name = "SEED"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            seed = value
        else:
            text = str(value).strip()
            if not text.isdigit():
                self.fail(f"expected a non-negative integer, got {value!r}", param, ctx)
            seed = int(text)
        if not 0 <= seed < 2**63:
            self.fail(f"expected a non-negative integer below 2**63, got {value!r}", param, ctx)
        return seed


class PluginChoice(click.Choice[str]):
    """A choice among the names of an entry point group (``--to``, ``--export``), read from the
    installed packages' metadata when first needed: nothing is imported for ``--help``."""

    def __init__(self, group: str) -> None:
        self.group = group
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:
        try:
            return tuple(plugins.names(self.group))
        except plugins.PluginError as exc:
            raise click.ClickException(str(exc)) from None

    @choices.setter
    def choices(self, value: tuple[str, ...]) -> None:
        raise AttributeError("the choices are the entry points' names")


class Stress(click.ParamType):
    """``--stress N`` (seeds per question) or a bare ``--stress`` (the sweep)."""

    name = "stress"
    SWEEP = "sweep"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | str:
        if isinstance(value, int) or value == self.SWEEP:
            return value if isinstance(value, int) else self.SWEEP
        counts: click.ParamType = click.IntRange(1, 100_000)
        count: int = counts.convert(value, param, ctx)
        return count
