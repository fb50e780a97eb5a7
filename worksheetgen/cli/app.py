"""The command group: how every command reports its errors in one line, the options the
commands share, and the installed entry point (``run``)."""

from __future__ import annotations

import errno
import os
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from functools import wraps
from typing import TYPE_CHECKING, Any, TypeVar

import click

from worksheetgen import __version__, plugins
from worksheetgen.cliparams import PathArg
from worksheetgen.speed.process import tune_process
from worksheetgen.textrules import excerpt, shown

if TYPE_CHECKING:
    from pathlib import Path


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
