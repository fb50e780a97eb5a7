"""Outputs written through a private temporary name get the permissions of any new file.

``tempfile.mkstemp`` and ``mkdtemp`` create their file or folder readable by its owner only;
a build, a grade or an export renamed into place from one would stay so, and a TA sharing
the machine could not open it.
"""

from __future__ import annotations

import os
from pathlib import Path


def umask() -> int:
    """The process's umask (reading it means setting it: it is put straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def as_new(path: str | Path) -> None:
    """Give ``path`` (a file or folder made by ``tempfile``) the mode a new one would have."""
    full = 0o777 if Path(path).is_dir() else 0o666
    os.chmod(path, full & ~umask())
