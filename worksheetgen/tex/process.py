"""TeX processes: started in their own session with a paranoid environment, stopped as a
group (a timeout, Ctrl-C, another document's failure), never outliving the build."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path


def tex_env() -> dict[str, str]:
    env = dict(os.environ)
    # paranoid file access: no reading or writing outside the working folder
    env.update(
        openin_any="p", openout_any="p", shell_escape="f", TEXMFOUTPUT="", MKTEXFMT="0"
    )  # a missing format is an error, never made on the fly
    return env


class Cancelled(Exception):
    """TeX was stopped because the build was interrupted or another document failed."""


_RUNNING: dict[subprocess.Popen[bytes], threading.Event | None] = {}
_LOCK = threading.Lock()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # TeX and anything it started (its own session)
    except (ProcessLookupError, PermissionError):
        pass


class JobStop(threading.Event):
    """One document's stop within a call of :func:`compile_jobs`: set on its own, or with
    the call's (``parent``)."""

    def __init__(self, parent: threading.Event) -> None:
        super().__init__()
        self.parent = parent

    def is_set(self) -> bool:
        return super().is_set() or self.parent.is_set()


def stop(cancel: threading.Event) -> None:
    """Start no more TeX runs for ``cancel`` and kill those still running (a document's
    own stop within it too)."""
    with _LOCK:
        cancel.set()
        for proc, owner in _RUNNING.items():
            if owner is cancel or getattr(owner, "parent", None) is cancel:
                _kill_group(proc)


def run_tex(
    cmd: list[str], cwd: Path, timeout: float, cancel: threading.Event | None = None
) -> tuple[int | None, bytes]:
    """Run TeX in its own session; (exit code or None on timeout, its terminal output).

    On a timeout, an interrupt (Ctrl-C) or any other exception the whole process group is
    killed, so no TeX process outlives the build. A run stopped through ``cancel`` (see
    :func:`stop`) raises Cancelled.
    """
    with _LOCK:
        if cancel is not None and cancel.is_set():
            raise Cancelled("the build stopped before this TeX run started")
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=tex_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        _RUNNING[proc] = cancel
    try:
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            return None, b""
        if cancel is not None and cancel.is_set():
            raise Cancelled("the build stopped this TeX run")
        return proc.returncode, output
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    finally:
        with _LOCK:
            _RUNNING.pop(proc, None)
