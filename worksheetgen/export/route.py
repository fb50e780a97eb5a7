"""Which option the user named the export with, for a refusal that tells them to export to
another format: ``export --to FORMAT`` (the default, and the library's ``export_bytes``) or
``build --export FORMAT`` (``export_files`` and ``export_into`` set it while they write).

A context variable, so the exporters' one ``write(doc, stream)`` shape (plugins implement
it) needs no argument for it, and builds in threads each say their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_OPTION: ContextVar[str] = ContextVar("worksheetgen_export_option", default="--to")


def option_for(fmt: str) -> str:
    """The option and format to write in a refusal: ``--to moodle`` or ``--export moodle``."""
    return f"{_OPTION.get()} {fmt}"


@contextmanager
def named_by(option: str) -> Iterator[None]:
    """Within: the exports were asked for with ``option`` (``--export`` for a build)."""
    token = _OPTION.set(option)
    try:
        yield
    finally:
        _OPTION.reset(token)
