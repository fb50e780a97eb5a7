"""Where outputs go: what may be replaced, temporary names, write failures, stale leftovers.

Every command that writes goes through this module:

- :func:`check_replaceable` says whether an output path may be replaced: only a regular file
  (or, for a build, a folder), a symlink to one, or nothing at all. A device, a FIFO, a socket
  or a symlink to nothing is refused before anything is written.
- :func:`write_file` writes one file whole or not at all (a temporary sibling renamed into
  place, which replaces a symlink rather than writing through it).
- :func:`write_failure` turns the OSError of a full disk (or a read-only one, a quota, a
  permission) into one line naming the path.
- Temporary folders and files carry the pid of their process in their name and are locked
  (``flock``) while in use: :func:`sweep_stale` removes those a killed process left (its pid
  is gone and nobody holds the lock), and only those.

``tempfile.mkstemp`` and ``mkdtemp`` create their file or folder readable by its owner only;
a build, a grade or an export renamed into place from one would stay so, and a TA sharing
the machine could not open it: :func:`as_new` gives them the mode of any new file.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from worksheetgen.errors import OutputError, file_kind

#: an output path that means standard output (export --out, grade --template)
STDOUT = "-"

#: errors of the place being written to (not of the program): one line, never a traceback
WRITE_ERRNOS = frozenset(
    getattr(errno, name)
    for name in (
        "ENOSPC",
        "EDQUOT",
        "EROFS",
        "EFBIG",
        "EACCES",
        "EPERM",
        "EIO",
        "ENAMETOOLONG",
        "EMLINK",
        "ENOTDIR",
        "EISDIR",
        "EEXIST",
        "ELOOP",
    )
    if hasattr(errno, name)
)

#: what a write into a folder that was moved or removed meanwhile fails with
_GONE_ERRNOS = frozenset(getattr(errno, n) for n in ("ENOENT", "ESTALE") if hasattr(errno, n))

# .<name>.tmp-<pid>-<8 random> (mkdtemp/mkstemp's suffix) and the TeX folders in TMPDIR
_STALE_IN_OUT = re.compile(r"^\.(?P<name>.+)\.(?P<kind>tmp|old)-(\d+)-[A-Za-z0-9_]{8}$")
_STALE_IN_TMP = re.compile(r"^worksheetgen-(?P<kind>tex|fmt)-(\d+)-[A-Za-z0-9_]{8}$")

_locks: dict[str, int] = {}  # temporary path -> the fd holding its lock


def umask() -> int:
    """The process's umask (reading it means setting it: it is put straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def as_new(path: str | Path) -> None:
    """Give ``path`` (a file or folder made by ``tempfile``) the mode a new one would have."""
    full = 0o777 if Path(path).is_dir() else 0o666
    os.chmod(path, full & ~umask())


# ------------------------------------------------------------------ may this be replaced?


def check_replaceable(
    path: str | Path, *, folder: bool = False, field: str | None = "--out", what: str | None = None
) -> None:
    """Refuse (OutputError) an output ``path`` that is not ours to replace: anything but a
    regular file (``folder``: a folder), a symlink to one, or nothing; also a path whose
    parent is a symlink to nothing or a file. Nothing has been written when it says so."""
    p = Path(path)
    want = what or ("a build folder it may replace" if folder else "a regular file it may replace")
    for parent in p.parents:  # the nearest parent that is there must be a folder
        try:
            info = os.lstat(parent)
        except (FileNotFoundError, NotADirectoryError):  # a file further up is said there
            continue
        except OSError as exc:
            raise OutputError(
                f"expected a folder to write into, got {parent} ({exc.strerror or exc})",
                file=str(p),
                field=field,
            ) from None
        if stat.S_ISLNK(info.st_mode):
            try:
                info = os.stat(parent)
            except OSError:
                raise OutputError(
                    f"expected a folder to write into, got {parent}, a symbolic "
                    f"link to nothing ({os.readlink(parent)}); nothing written",
                    file=str(p),
                    field=field,
                ) from None
        if not stat.S_ISDIR(info.st_mode):
            raise OutputError(
                f"expected a folder to write into, got {parent}, "
                f"{file_kind(info.st_mode)}; nothing written",
                file=str(p),
                field=field,
            )
        break
    try:
        info = os.lstat(p)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(
            f"expected {want}, got {exc.strerror or exc}", file=str(p), field=field
        ) from None
    link = ""
    if stat.S_ISLNK(info.st_mode):
        link = f"a symbolic link to {os.readlink(p)}, "
        try:
            info = os.stat(p)
        except OSError:
            raise OutputError(
                f"expected {want}, got a symbolic link to nothing "
                f"({os.readlink(p)}); nothing written",
                file=str(p),
                field=field,
            ) from None
    ok = stat.S_ISDIR(info.st_mode) if folder else stat.S_ISREG(info.st_mode)
    if not ok:
        raise OutputError(
            f"expected {want}, got {link}{file_kind(info.st_mode)}; nothing written",
            file=str(p),
            field=field,
        )


# ------------------------------------------------------------------ writing


def write_failure(
    exc: OSError, path: str | Path | None = None, rename: tuple[Path, Path] | None = None
) -> OutputError | None:
    """The one-line error for an OSError of the place written to (full disk, quota, read-only,
    permission, ...), naming the file (``exc.filename`` or ``path``; a name inside the
    temporary folder ``rename[0]`` is shown inside its target ``rename[1]``); None for any
    other OSError (a bug: it keeps its traceback)."""
    if exc.errno in _GONE_ERRNOS and rename is not None and not rename[0].is_dir():
        # the folder written into was renamed or removed under the build (its parent, --out,
        # moved away): what was written there is a temporary folder the next build sweeps
        return OutputError(
            "cannot write here: the folder was moved or removed while the build wrote into "
            "it; nothing was written",
            file=os.fsdecode(rename[1]),
        )
    if exc.errno not in WRITE_ERRNOS:
        return None
    name = exc.filename if exc.filename is not None else path
    if name is not None and rename is not None:
        try:
            name = rename[1] / Path(os.fsdecode(name)).relative_to(rename[0])
        except ValueError:
            pass
    reason = exc.strerror or os.strerror(exc.errno or 0)
    code = errno.errorcode.get(exc.errno or 0, "")
    return OutputError(
        f"cannot write here: {reason}"
        + (f" ({code})" if code else "")
        + "; nothing was written and the temporary files were removed",
        file=os.fsdecode(name) if name is not None else None,
    )


@contextmanager
def failures_as_errors(
    path: str | Path | None = None, rename: tuple[Path, Path] | None = None
) -> Iterator[None]:
    """Turn a write failure inside the block into its one-line OutputError (see
    :func:`write_failure`); other exceptions pass unchanged."""
    try:
        yield
    except OSError as exc:
        error = write_failure(exc, path, rename)
        if error is None:
            raise
        raise error from None


def _flock(fd: int) -> bool:
    """Take an exclusive lock on ``fd`` without waiting; False when another holds it (True
    where there are no locks: the pid in the name still protects a temporary path)."""
    try:
        # POSIX only: elsewhere the temporary folder is simply not locked
        import fcntl
    except ImportError:  # Windows
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return True  # a file system without locks
    return True


def _lock(path: Path, fd: int | None = None) -> None:
    """Hold an exclusive ``flock`` on ``path`` while this process uses it."""
    own = fd is None
    if fd is None:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:  # a folder cannot be opened (Windows): the pid in its name protects it
            return
    _flock(fd)
    _locks[str(path)] = fd if own else os.dup(fd)


def release(path: str | Path) -> None:
    """Drop the lock of a temporary path (it was renamed into place or removed)."""
    fd = _locks.pop(str(path), None)
    if fd is not None:
        os.close(fd)


def remove_temp(path: Path) -> None:
    """Remove the temporary folder ``path`` (a build's staging folder that was not swapped
    into place) and drop its lock. When it is not there because a folder above it was
    renamed during the build, it is removed where it went: the lock held on it says where
    (Linux), and only a folder of its own unique name is removed."""
    if path.exists():
        shutil.rmtree(path, ignore_errors=True)
    elif str(path) in _locks:
        try:
            moved = Path(os.readlink(f"/proc/self/fd/{_locks[str(path)]}"))
        except OSError:  # no /proc: the next build in that folder sweeps it
            moved = None
        if moved is not None and moved.name == path.name and moved.is_dir():
            shutil.rmtree(moved, ignore_errors=True)
    release(path)


def temp_folder(parent: Path, name: str, kind: str = "tmp") -> Path:
    """A new empty folder ``parent/.<name>.<kind>-<pid>-XXXXXXXX`` (locked until
    :func:`release`), readable as any new folder is."""
    path = Path(tempfile.mkdtemp(prefix=f".{name}.{kind}-{os.getpid()}-", dir=parent))
    as_new(path)
    _lock(path)
    return path


@contextmanager
def tex_folder(kind: str) -> Iterator[Path]:
    """A private working folder in TMPDIR (``worksheetgen-<kind>-<pid>-XXXXXXXX``), locked
    while in use and removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix=f"worksheetgen-{kind}-{os.getpid()}-"))
    try:
        _lock(path)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        release(path)


def write_file(
    path: str | Path, data: bytes | Callable[[BinaryIO], None], mode: int | None = None
) -> Path:
    """Write ``path`` whole or not at all: into a temporary sibling (locked, removed on any
    failure, Ctrl-C included) renamed into place; ``data`` is the bytes or a function that
    writes them. Refuses a path that is not ours to replace (:func:`check_replaceable`);
    removes the temporary files a killed run writing the same path left.
    OSError on failure (see :func:`failures_as_errors`)."""
    target = Path(path)
    check_replaceable(target, field=None)
    target.parent.mkdir(parents=True, exist_ok=True)
    sweep_stale(target.parent, of=target.name)  # what a killed run writing it left
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.tmp-{os.getpid()}-", dir=target.parent)
    try:
        _lock(Path(tmp), fd)
        with os.fdopen(fd, "wb") as fh:
            if callable(data):
                data(fh)
            else:
                fh.write(data)
        if mode is None:
            as_new(tmp)  # mkstemp makes 0600; an output is a file to share
        else:
            os.chmod(tmp, mode)
        check_replaceable(target, field=None)  # still so just before the rename
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        release(tmp)
    return target


def write_stream(stream: BinaryIO, data: bytes, name: str = "standard output") -> None:
    """Write ``data`` (made whole beforehand) to an output stream such as standard output
    (an output path ``-``); a full disk or a closed pipe is one OutputError."""
    try:
        stream.write(data)
        stream.flush()
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            raise OutputError(
                "closed before everything was written (broken pipe)", file=name
            ) from None
        error = write_failure(exc, name)
        if error is None:
            raise
        raise OutputError(error.message.split(";")[0], file=name) from None


# ------------------------------------------------------------------ what a killed run left


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    return True


def _unused(path: Path) -> bool:
    """True when nobody holds the lock of ``path`` (taken and dropped at once)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        return _flock(fd)
    finally:
        os.close(fd)


def sweep_stale(folder: str | Path, tmpdir: bool = False, of: str | None = None) -> list[Path]:
    """Remove what killed worksheetgen runs left in ``folder``: temporary build folders and
    files (``.<name>.tmp-<pid>-…``, ``.<name>.old-<pid>-…``), or with ``tmpdir`` the TeX
    working folders (``worksheetgen-tex-<pid>-…``). Only our own kind of name, only ours
    (same owner), only when the pid that made it is gone and nobody holds its lock; ``of``:
    only the leftovers of the output named so. Returns what was removed; never fails (a
    leftover that cannot go stays)."""
    pattern = _STALE_IN_TMP if tmpdir else _STALE_IN_OUT
    removed: list[Path] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    uid = os.getuid() if hasattr(os, "getuid") else None
    for name in names:
        m = pattern.match(name)
        if (
            m is None
            or (of is not None and not name.startswith(f".{of}.tmp-"))
            or _alive(int(m.group(3 if m.re is _STALE_IN_OUT else 2)))
        ):
            continue
        path = Path(folder) / name
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if uid is not None and info.st_uid != uid:
            continue
        if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)) or not _unused(path):
            continue
        try:
            if m.group("kind") == "old":
                # killed between the two renames of a build swapped into place: the earlier
                # build is put back where it was, never removed
                previous, home = path / "previous", path.parent / m.group("name")
                if os.path.lexists(previous) and not os.path.lexists(home):
                    os.replace(previous, home)
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed
