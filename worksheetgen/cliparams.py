"""The command line's value types: every integer, range and choice an option takes is read by
the one rule for numbers (worksheetgen.textrules.integer: ASCII digits only) and refused in
the project's words, ``--jobs: expected an integer from 0 to 64, got -1``, never Click's.

The types extend Click's own (``IntRange``, ``Choice``), so ``--help`` and the generated
reference show them as before. Imports only Click, textrules, errors and plugins: nothing
here loads NumPy, SymPy or Jinja2.
"""

from __future__ import annotations

import os
from fractions import Fraction
from typing import Any

import click

from worksheetgen import plugins
from worksheetgen.errors import describe
from worksheetgen.textrules import PATH_LIMITS, integer, is_decimal, path_problem, shown


def _got(value: Any) -> str:
    """The found value as a message quotes it: an integer as written, text quoted (and cut),
    with a word on digits of another script, which the rule for numbers does not take."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    text = str(value)
    other = any(c.isdigit() and not c.isascii() for c in text)
    return describe(text) + (" (write the digits 0-9)" if other else "")


class IntRange(click.IntRange):
    """An integer from ``lo`` to ``hi`` (both included) in ASCII digits."""

    def __init__(self, lo: int, hi: int, *, expected: str | None = None) -> None:
        super().__init__(lo, hi)
        self.lo, self.hi = lo, hi
        self.expected = expected or f"an integer from {lo} to {hi}"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = value if isinstance(value, int) and not isinstance(value, bool) else None
        if number is None:
            number = integer(str(value))
            # ASCII digits only where no sign belongs: "+5" and "-0" are no seed or count
            if self.lo >= 0 and str(value).strip(" \t")[:1] in ("+", "-"):
                number = None
        if number is None or not self.lo <= number <= self.hi:
            self.fail(f"expected {self.problem(number, str(value))}, got {_got(value)}", param, ctx)
        return number

    def problem(self, number: int | None, text: str) -> str:
        """What was expected, for ``text``, which is no integer (``number`` None) or one out of
        range."""
        return self.expected


class Seed(IntRange):
    """A non-negative integer seed below 2**63."""

    name = "SEED"

    def __init__(self) -> None:
        super().__init__(0, 2**63 - 1, expected="a non-negative integer")

    def problem(self, number: int | None, text: str) -> str:
        too_big = (number or 0) > 0 or (text.isascii() and text.strip().isdigit())
        return "a non-negative integer below 2**63" if too_big else self.expected

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        return "SEED"

    def _describe_range(self) -> str:
        return ""


class Choice(click.Choice[str]):
    """One of a fixed list of words, written exactly."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        choices = tuple(self.choices)
        if value in choices:
            return value
        listed = " or ".join(choices) if len(choices) <= 2 else ", ".join(choices)
        self.fail(
            f"expected {'' if len(choices) <= 2 else 'one of '}{listed}, got {_got(value)}",
            param,
            ctx,
        )


class PluginChoice(Choice):
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
        if value == self.SWEEP:
            return self.SWEEP
        count: int = IntRange(1, 100_000).convert(value, param, ctx)
        return count


class Share(click.ParamType):
    """A share of something from 0 to 1, an unsigned decimal in ASCII digits (``0.3333333``,
    ``0.5``, ``1``), read exactly (a Fraction)."""

    name = "DECIMAL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, Fraction):
            return value
        text = str(value).strip(" \t")
        share = Fraction(text) if is_decimal(text) else None
        if share is None or share > 1:
            self.fail(f"expected a decimal from 0 to 1, got {_got(value)}", param, ctx)
        return share


class PathArg(click.Path):
    """A path the file system can take: not empty, no name longer than 255 bytes, no path
    longer than 4,095 (refused here, in one line, before any work; the OS would say "File
    name too long" halfway through). Any other name the OS takes is taken: messages show its
    control and format characters escaped."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            if value == "":
                self.fail("expected a path, got nothing", param, ctx)
            problem = path_problem(value)
            if problem is not None:
                self.fail(f"expected a path of {PATH_LIMITS}, got {problem}", param, ctx)
            # a file where a folder is meant, or the other way round, in the project's words
            # (Click's own: "File 'x' is a directory.")
            if not self.dir_okay and os.path.isdir(value):
                self.fail(f"{shown(value)}: expected a file, got a folder", param, ctx)
            if not self.file_okay and os.path.exists(value) and not os.path.isdir(value):
                self.fail(f"{shown(value)}: expected a folder, got a file", param, ctx)
        return super().convert(value, param, ctx)
