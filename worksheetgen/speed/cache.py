"""Where worksheetgen keeps what it compiles once and reuses: templates, prompts, TeX formats.

Everything cached here is code that is executed later (compiled Jinja2 templates and
prompts, dumped TeX formats), so only a folder of the user's own that nobody else may write
is ever used, and in it only entries of the user's own that nobody else may write and that
are whole (a digest written with each entry is checked before it is used); anything else is
rebuilt. Without a cache folder nothing is cached and everything still works.
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
    ``WORKSHEETGEN_CACHE_DIR`` is set to the empty string (no cache), or when there is no
    home folder to put it in. A relative ``XDG_CACHE_HOME`` is invalid (the XDG base
    directory specification says to ignore it): it would leave a cache in the working
    folder."""
    root = os.environ.get("WORKSHEETGEN_CACHE_DIR")
    if root is not None:
        return Path(root) if root else None
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):  # no HOME and no passwd entry: "~" would be a folder here
            return None
        base = os.path.join(home, ".cache")
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
    except OSError:
        return None
    for folder in (path, root):  # the root too: who may write it may swap the folder
        try:
            info = os.lstat(folder)
        except OSError:
            return None
        if (
            not stat.S_ISDIR(info.st_mode)
            or info.st_mode & 0o022
            or (hasattr(os, "getuid") and info.st_uid != os.getuid())
        ):
            return None
    return path


#: the first bytes of every cache entry written by :func:`store`, then its digest
MAGIC = b"worksheetgen-cache-1\n"
_DIGEST = 32


def _digest(data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=_DIGEST).digest()


def trusted(info: os.stat_result) -> bool:
    """True for the status of a cache entry that may be used: a regular file of our own
    that nobody else may write (its code is executed)."""
    return (
        stat.S_ISREG(info.st_mode)
        and not info.st_mode & 0o022
        and (not hasattr(os, "getuid") or info.st_uid == os.getuid())
    )


def _read_trusted(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a trusted entry (:func:`trusted`; a link is not
    followed and a FIFO does not block), else None."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not trusted(os.fstat(fd)):
            return None
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read()
    except OSError:
        return None
    finally:
        os.close(fd)


def load(path: Path) -> bytes | None:
    """What :func:`store` wrote to ``path``, or None when there is nothing to trust there: no
    entry, one that is not ours or that others may write, or one that is not whole (cut
    short, a flipped bit: its digest differs). The caller then rebuilds the entry."""
    data = _read_trusted(path)
    head = len(MAGIC) + _DIGEST
    if data is None or len(data) < head or not data.startswith(MAGIC):
        return None
    body = memoryview(data)[head:]
    if _digest(body) != data[len(MAGIC) : head]:
        return None
    return bytes(body)


def store(path: Path, data: bytes) -> bool:
    """Write a cache entry whole or not at all, with a header that :func:`load` checks
    (outfiles.write_file: a temporary file renamed into place, removed on any failure,
    Ctrl-C included; an entry that is not a regular file, a FIFO say, is never written
    through); False when it could not be written."""
    return store_raw(path, MAGIC + _digest(data) + data)


def store_raw(path: Path, data: bytes) -> bool:
    """Write ``data`` as it is (a file another program reads, a TeX format) whole or not at
    all, readable and writable only by us; False when it could not be written."""
    try:
        write_file(path, data, mode=0o600)
    except (OSError, OutputError):
        return False
    return True


def seal(path: Path) -> bool:
    """Record the digest of the entry ``path`` that another program reads as it is (a TeX
    format: no header can go into it) beside it, in ``path.sum``; False on failure."""
    data = _read_trusted(path)
    return data is not None and store(Path(f"{path}.sum"), _digest(data))


#: entries found whole, by (path, device, inode, size): hashed once per process (a new entry
#: is a new inode, renamed into place; only we may write one in place)
_SEALED: set[tuple[str, int, int, int]] = set()


def sealed(path: Path) -> bool:
    """True when ``path`` is a trusted entry whose digest is the one :func:`seal` recorded."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not trusted(info):
        return False
    key = (str(path), info.st_dev, info.st_ino, info.st_size)
    if key in _SEALED:
        return True
    wanted = load(Path(f"{path}.sum"))
    data = _read_trusted(path)
    if wanted is None or data is None or _digest(data) != wanted:
        return False
    _SEALED.add(key)
    return True
