"""Where a build goes and how it gets there: the --out folder checked before any work, a
staging folder beside the target, and the swap into place with interrupts held, so the target
is always the old build or the new one; what a killed build left is swept.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from worksheetgen.errors import UsageError
from worksheetgen.files import (
    check_replaceable,
    release,
    sweep_stale,
    temp_folder,
)
from worksheetgen.textrules import PATH_LIMITS, path_problem


def check_out(out: str | Path) -> None:
    """Refuse an ``--out`` that cannot hold build folders, before any work is done: a file,
    a path through a file, or a folder (or its nearest existing parent) we cannot write."""
    problem = path_problem(str(out))
    if problem is not None:
        raise UsageError(f"expected a path of {PATH_LIMITS}, got {problem}", field="--out")
    path = Path(out)
    existing = path
    try:
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
    except OSError as exc:  # a name the file system refuses, a loop of links, ...
        raise UsageError(
            f"expected a folder to write builds into, got {path} ({exc.strerror or exc})",
            field="--out",
        ) from None
    if not existing.is_dir():
        what = (
            f"the file {path}"
            if existing == path
            else f"{path}, a path through the file {existing}"
        )
        raise UsageError(f"expected a folder to write builds into, got {what}", field="--out")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(
            f"expected a folder we can write to, got {existing} (permission denied)", field="--out"
        )
    # a symlink to nothing on the way (the folder itself or a parent) is refused now, not
    # after all the work
    check_replaceable(path, folder=True, what="a folder to write builds into")


def check_target(target: Path) -> None:
    """Refuse a build folder that is not ours to replace (a file, a device, a symlink to
    nothing, ...) before any drawing or TeX work is done."""
    check_replaceable(target, folder=True)


def sweep_leftovers(out: str | Path, pdf: bool) -> tuple[Path, ...]:
    """Remove what builds killed with ``kill -9`` left: their temporary folders in ``out``
    and (``pdf``) their TeX working folders in TMPDIR (see outfiles.sweep_stale)."""
    swept = sweep_stale(out)
    if pdf:
        swept += sweep_stale(tempfile.gettempdir(), tmpdir=True)
    return tuple(swept)


def staging_folder(target: Path) -> Path:
    """A new empty temporary sibling of ``target`` to write a build into, readable as any
    new folder is, named by our pid and locked while the build runs (so that the next build
    can tell it from a killed build's leftover: outfiles.sweep_stale)."""
    check_target(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        return temp_folder(target.parent, target.name)
    except OSError as exc:
        raise UsageError(
            f"expected a folder to write builds into, got {target.parent} ({exc.strerror or exc})",
            field="--out",
        ) from None


def folders_to_make(target: Path) -> tuple[Path, ...]:
    """The folders above ``target`` that do not exist yet (the deepest first): what
    ``staging_folder`` will make, and a build that fails takes away again."""
    missing = []
    for folder in target.parents:
        if folder.exists() or folder.is_symlink():
            break
        missing.append(folder)
    return tuple(missing)


def unmake_folders(folders: Sequence[Path]) -> None:
    """Remove the folders a failed build made (``folders_to_make``, the deepest first), each
    only while it is empty: a failed build leaves nothing, not even ``--out``."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:  # something else was put there meanwhile: it stays, and its parents
            return


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C until the block is done (main thread only), then raise it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(
            signal.SIGINT, previous if previous is not None else signal.default_int_handler
        )
    if held:
        raise KeyboardInterrupt


def swap_into_place(tmp: Path, target: Path) -> None:
    """Move the finished folder ``tmp`` to ``target``, replacing an earlier build only now.

    Ctrl-C is held during the two renames, so the target is always the old build or the new
    one, never missing.
    """
    with interrupts_held():
        check_target(target)  # still so, after all the work
        old = None
        if target.exists():
            old = temp_folder(target.parent, target.name, "old")
            os.replace(target, old / "previous")
        try:
            os.replace(tmp, target)
        except BaseException:
            if old is not None:
                os.replace(old / "previous", target)
                old.rmdir()
                release(old)
            raise
        release(tmp)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
            release(old)
