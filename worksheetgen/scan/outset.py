"""``scan``'s outputs as one set: responses, issues and crops, grade's scores, report, class
report and feedback pages replace the previous run's together or not at all.

Everything is written into a staging folder inside the output folder first (a full disk, an
error or an interrupt there leaves the previous set as it was); then the previous set's
entries are renamed aside and the new ones renamed into place, with Ctrl-C and SIGTERM held
for those few renames (a rename that fails puts everything back). The staging folder is
named and locked as a build's are (``files.temp_folder``), so the next run sweeps what a
killed run left (and the ``.scan-XXXXXXXX`` folders of earlier versions).

Standard library only."""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from worksheetgen.errors import OutputError
from worksheetgen.files import (
    _unused,
    check_replaceable,
    release,
    sweep_stale,
    temp_folder,
    write_failure,
)
from worksheetgen.textrules import shown

#: the staging folders of earlier versions (``tempfile.mkdtemp(prefix=".scan-")``)
_LEGACY_STAGE = re.compile(r"^\.scan-[A-Za-z0-9_]{8}$")
_HELD = (signal.SIGINT, signal.SIGTERM)


def _where(out: Path, default: bool) -> str | None:
    return None if default else "--out"


def check_out(out: Path, names: Iterable[str], folders: Iterable[str], default: bool) -> None:
    """Before any work: ``out`` is a folder (or can be made one: the nearest folder above it
    is there and writable), and none of the set's entries in it is a symbolic link or of the
    wrong kind (``folders``: the names that are folders). One OutputError naming the path."""
    field = _where(out, default)
    hint = "" if not default else " (give another folder with --out)"
    check_replaceable(out, folder=True, field=field, what="a folder for scan's outputs")
    there = out
    while not os.path.lexists(there) and there != there.parent:
        there = there.parent
    if not os.access(there, os.W_OK | os.X_OK):
        raise OutputError(
            "cannot write here: the folder is read-only or not yours to write into; "
            f"nothing was written{hint}",
            file=str(there),
            field=field,
        )
    folder_names = set(folders)
    for name in names:
        path = out / name
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode):
            raise OutputError(
                f"expected scan's own {'folder' if name in folder_names else 'file'}, got a "
                f"symbolic link to {shown(os.readlink(path))}: scan replaces its outputs in "
                "the output folder itself, never through a link; nothing was written",
                file=str(path),
                field=field,
            )
        if name in folder_names and not stat.S_ISDIR(info.st_mode):
            raise OutputError(
                "expected scan's own folder, got something else of that name; nothing was written",
                file=str(path),
                field=field,
            )
        if name not in folder_names and not stat.S_ISREG(info.st_mode):
            raise OutputError(
                "expected scan's own file, got something else of that name; nothing was written",
                file=str(path),
                field=field,
            )


def sweep(out: Path) -> list[Path]:
    """Remove what killed runs left in ``out``: staging folders of dead processes nobody
    holds (``files.sweep_stale``), and earlier versions' ``.scan-XXXXXXXX`` ones."""
    swept = sweep_stale(out)
    try:
        names = os.listdir(out)
    except OSError:
        return swept
    uid = os.getuid() if hasattr(os, "getuid") else None
    for name in names:
        path = out / name
        if not _LEGACY_STAGE.match(name):
            continue
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or (uid is not None and info.st_uid != uid):
            continue
        if _unused(path):
            shutil.rmtree(path, ignore_errors=True)
            swept.append(path)
    return swept


@contextmanager
def staging(out: Path, default: bool) -> Iterator[Path]:
    """A new locked staging folder inside ``out`` (made, with its parents, when missing; a
    folder made here is removed again when nothing was put in place), removed afterwards."""
    field = _where(out, default)
    made: list[Path] = []
    try:
        there = out
        while not os.path.lexists(there):
            made.append(there)
            there = there.parent
        out.mkdir(parents=True, exist_ok=True)
        sweep(out)
        stage = temp_folder(out, "scan")
    except OSError as exc:
        _remove_made(made)
        error = write_failure(exc, out)
        if error is None:
            raise
        raise OutputError(error.message, file=error.file, field=field) from None
    try:
        yield stage
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        release(stage)
        _remove_made(made)  # only folders left empty: nothing was put in place


def _remove_made(made: list[Path]) -> None:
    for path in made:  # deepest first: only the empty folders this run made
        try:
            path.rmdir()
        except OSError:
            break


@contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM held (delivered when the block ends), on the main thread."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "pthread_sigmask"
    ):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def commit(out: Path, new: Path, names: Iterable[str], aside: Path) -> list[Path]:
    """Replace the previous set in ``out`` by the entries of ``new`` (a folder in ``out``):
    every entry of the set (``names``, and whatever ``new`` holds) there is renamed into
    ``aside`` (in ``out`` too), then each of ``new``'s renamed into place. Renames only: no
    byte is written, so a full disk cannot stop it halfway; a rename that fails puts every
    entry back. Returns the entries put in place."""
    entries = sorted(os.listdir(new))
    previous = sorted({*names, *entries})
    moved_aside: list[str] = []
    moved_in: list[str] = []
    with _signals_held():
        try:
            aside.mkdir()
            for name in previous:
                if os.path.lexists(out / name):
                    os.rename(out / name, aside / name)
                    moved_aside.append(name)
            for name in entries:
                os.rename(new / name, out / name)
                moved_in.append(name)
        except OSError as exc:
            for name in reversed(moved_in):
                os.rename(out / name, new / name)
            for name in reversed(moved_aside):
                os.rename(aside / name, out / name)
            error = write_failure(exc, out)
            if error is None:
                raise
            raise error from None
    return [out / name for name in entries]
