"""The exception hierarchy: every error a user can act on is a WorksheetgenError.

The CLI prints ``str(error)`` as one line (control and format characters from the input
shown escaped, long values cut to an excerpt, see worksheetgen.textrules.excerpt) and exits
non-zero; anything that is not a WorksheetgenError is a bug and keeps its traceback.
"""

from __future__ import annotations

import difflib
import stat
from collections.abc import Iterable
from typing import Any

from worksheetgen.textrules import excerpt


class WorksheetgenError(Exception):
    """Base of every error caused by input a person can fix."""

    exit_code = 1

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.field = field

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file if self.line is None else f"{self.file}:{self.line}"
        parts = [p for p in (where, self.field) if p]
        text = ": ".join([*parts, self.message])
        if "\n" in text or "\r" in text:
            text = " ".join(text.splitlines())
        text = redact(text)  # an excerpt of a file never shows a course secret
        # what the input holds is shown, never obeyed: ESC could retitle or clear a terminal;
        # and quoted in part, never whole: a field of a million characters is one short line
        return excerpt(text)


#: the least run of a secret's characters that is hidden (an excerpt cut short still is)
SECRET_RUN = 8
#: every run of SECRET_RUN characters of the course secret of the command that runs
#: (``course_secret``), and of the secret-like files it read (``keep_secret``)
_COURSE_RUNS: set[str] = set()
_SECRET_RUNS: set[str] = set()
#: what a message shows in place of a secret
HIDDEN = "(a secret, not shown)"


def _runs(secret: bytes | str) -> set[str]:
    text = secret.decode("utf-8", "replace") if isinstance(secret, bytes) else secret
    return {
        form[i : i + SECRET_RUN]
        for form in (text, repr(text)[1:-1])
        for i in range(len(form) - SECRET_RUN + 1)
    }


def course_secret(secret: bytes | str | None) -> None:
    """The course secret of the command that runs (None: none), so that no error message
    shows it, whole or any run of ``SECRET_RUN`` characters of it (an excerpt cut to 15
    characters, a repr in quotes). It replaces the one before (a process running several
    commands, as tests do, hides only the current one)."""
    _COURSE_RUNS.clear()
    if secret is not None:
        _COURSE_RUNS.update(_runs(secret))


def keep_secret(secret: bytes | str) -> None:
    """Hide a secret read from a file (one that looks like a secret file) in every later
    error message of this process, as the course secret is."""
    _SECRET_RUNS.update(_runs(secret))


def redact(text: str) -> str:
    """``text`` with every run of a kept secret's characters replaced by ``HIDDEN``."""
    if not (_COURSE_RUNS or _SECRET_RUNS) or len(text) < SECRET_RUN:
        return text
    hidden = bytearray(len(text))
    for i in range(len(text) - SECRET_RUN + 1):
        run = text[i : i + SECRET_RUN]
        if run in _COURSE_RUNS or run in _SECRET_RUNS:
            hidden[i : i + SECRET_RUN] = b"\x01" * SECRET_RUN
    if not any(hidden):
        return text
    out: list[str] = []
    for i, ch in enumerate(text):
        if not hidden[i]:
            out.append(ch)
        elif i == 0 or not hidden[i - 1]:
            out.append(HIDDEN)
    return "".join(out)


class BankError(WorksheetgenError):
    """A question bank could not be read or is not valid."""


class TemplateError(WorksheetgenError):
    """A prompt or document template could not be rendered."""


class RosterError(WorksheetgenError):
    """A roster CSV could not be read or is not valid."""


class DrawError(WorksheetgenError):
    """No valid variant could be drawn for a question (for example every redraw was ambiguous)."""


class SolveError(WorksheetgenError):
    """An answer failed a check (exact vs float, or a key invariant): a bug, named by item."""

    exit_code = 3


class InvariantError(SolveError):
    """A key failed a property every key must have (rows of A sum to 1, ...): a bug."""


class CompileError(WorksheetgenError):
    """TeX failed or is missing."""


class ExportError(WorksheetgenError):
    """A key could not be exported to an LMS format."""


class OutputError(WorksheetgenError):
    """An output could not be written: a path that is not ours to replace, a full disk."""


class GradeError(WorksheetgenError):
    """A response file or key could not be graded."""


class KeyFileError(WorksheetgenError):
    """A key.json that cannot be used: missing or too large, not a worksheetgen key, a field
    that does not fit the contract, or a key built with another course secret. The key
    reader raises this one type, whichever command reads the key."""


class ScanError(WorksheetgenError):
    """A scan could not be read: not an image or PDF, a damaged file, a page of another
    build, a corrections file naming what the scans do not have."""


class ConfigError(WorksheetgenError):
    """A course configuration or secret could not be used, or a key was built with another
    course secret."""


class UsageError(WorksheetgenError):
    """A command-line value is out of range."""

    exit_code = 2


def shorten(text: str, limit: int = 40, end: str = "...") -> str:
    """``text`` as a message shows it: whole up to ``limit`` characters, else cut to that
    many, ending in ``end``."""
    return text if len(text) <= limit else text[: limit - len(end)] + end


def describe(value: Any) -> str:
    """A short description of a found value for 'got …' messages."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping" if value else "an empty mapping"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)}" if value else "an empty list"
    if isinstance(value, bytes):
        return "binary data"
    return shorten(repr(value) if isinstance(value, str) else str(value))


def did_you_mean(word: str, options: Iterable[str]) -> str:
    """' (did you mean "x"?)' when a close option exists, else ''."""
    close = difflib.get_close_matches(str(word), [str(o) for o in options], n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def file_kind(mode: int) -> str:
    """What a file of ``mode`` (``os.stat``) is, in words, for messages about inputs and
    outputs that are not what they should be."""
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "a special file"
