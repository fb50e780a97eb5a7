"""Where bundled templates and banks live: inside the installed package, or the source tree."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """The folder of bundled ``templates`` or ``banks``.

    A wheel installs them as ``worksheetgen/templates`` and ``worksheetgen/banks``; in a
    source checkout (or an editable install) they are the top-level folders of the repository.
    """
    inside = _PACKAGE / name
    if inside.is_dir():
        return inside
    return _PACKAGE.parent / name
