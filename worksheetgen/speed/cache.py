"""Where worksheetgen keeps what it compiles once and reuses: templates, prompts, TeX formats.

Everything cached here is code that is executed later (compiled Jinja2 templates and
prompts, dumped TeX formats), so only a folder of the user's own that nobody else may write
is ever used; without one, nothing is cached and everything still works.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from worksheetgen.errors import OutputError
from worksheetgen.files import write_file


def cache_root() -> Path | None:
    """Where compiled code is kept between runs: ``$WORKSHEETGEN_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/worksheetgen`` or ``~/.cache/worksheetgen``; None when
    ``WORKSHEETGEN_CACHE_DIR`` is set to the empty string (no cache)."""
    root = os.environ.get("WORKSHEETGEN_CACHE_DIR")
    if root is not None:
        return Path(root) if root else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "worksheetgen"


def private_cache_folder(kind: str, depends_on: str) -> Path | None:
    """A folder of the cache for compiled code of one ``kind``, named by a hash of what
    that code depends on, or None when there is no cache or the folder is not safe: only
    a folder of our own that nobody else may write is used, as its code is executed."""
    root = cache_root()
    if root is None:
        return None
    tag = hashlib.blake2b(depends_on.encode("utf-8", "surrogatepass"), digest_size=8)
    path = root / f"{kind}-{tag.hexdigest()}"
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return None
    if (
        not stat.S_ISDIR(info.st_mode)
        or info.st_mode & 0o022
        or (hasattr(os, "getuid") and info.st_uid != os.getuid())
    ):
        return None
    return path


def store(path: Path, data: bytes) -> bool:
    """Write a cache entry whole or not at all (outfiles.write_file: a temporary file renamed
    into place, removed on any failure, Ctrl-C included; an entry that is not a regular file,
    a FIFO say, is never written through); False when it could not be written."""

    try:
        write_file(path, data)
    except (OSError, OutputError):
        return False
    return True
