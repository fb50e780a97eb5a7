"""Compute ``fn(i)`` for a range of indices in forked worker processes, results in order.

A class's sheets take about the same time each, so no task queue is needed: worker ``k`` of
``n`` computes indices ``k, k + n, k + 2n, ...`` and writes each result, pickled, to a pipe
of its own, and the parent reads the pipes in turn, which gives the results in index order.
A worker is at most a pipe's buffer ahead of the parent, so memory stays flat in the class.
Against ``multiprocessing.Pool`` this saves the pool's start and stop (its import, three
helper threads, a task queue; about 10 ms of a 30-student build here) and a hop per result.

Linux (and other systems where ``os.fork`` is safe) only; the caller decides whether to fork
(``pipeline.stream.workers_for``). A worker never returns into the caller's code:
it leaves through ``os._exit``, so nothing the parent had buffered is written twice.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import traceback
from collections.abc import Callable
from typing import Any

from worksheetgen.speed.process import tune_worker

_LENGTH = struct.Struct("<Q")
PIPE_BYTES = 1 << 20  # asked for each pipe (Linux's default most a user may set)


class WorkerFailed(RuntimeError):
    """A worker process stopped without sending its result (it crashed or was killed)."""


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker, attached as its cause."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return "\n" + self.text


def worker_signals() -> None:
    """Signals in a worker: Ctrl-C is the parent's to handle, and SIGTERM kills at once,
    whatever handler the parent had when it forked (a handler that raises would send the
    worker back into the parent's code)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _send(fd: int, data: bytes) -> None:
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int) -> bytes | None:
    """One message from a worker's pipe, or None when the worker closed it early."""
    head = _read(fd, _LENGTH.size)
    if head is None:
        return None
    return _read(fd, _LENGTH.unpack(head)[0])


def _read(fd: int, size: int) -> bytes | None:
    parts = []
    while size:
        chunk = os.read(fd, min(size, PIPE_BYTES))
        if not chunk:
            return None
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def _work(fn: Callable[[int], Any], indices: range, fd: int) -> None:
    """A worker's life: compute its share, send each result or the first exception."""
    for i in indices:
        try:
            message = (True, fn(i))
        except BaseException as exc:  # sent to the parent, raised there
            message = (False, (exc, traceback.format_exc()))
        try:
            data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # what cannot be pickled is said in words
            failure = RuntimeError(f"a worker could not send result {i}: {exc!r}")
            message = (False, (failure, traceback.format_exc()))
            data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
        _send(fd, data)
        if not message[0]:
            return


class ForkMap:
    """``fn(i)`` for ``i`` in ``range(start, stop)``, in order, computed by ``workers``
    processes forked right here (so before the caller starts any thread). An exception
    ``fn`` raises in a worker is raised when its result is due (with the worker's traceback
    as its cause); :meth:`close` (or the end of the results) stops and reaps the workers."""

    def __init__(self, fn: Callable[[int], Any], start: int, stop: int, workers: int) -> None:
        self._pids: list[int] = []
        self._fds: list[int] = []
        self._indices = iter(range(start, stop))
        self._count = 0
        try:
            for k in range(workers):
                self._fork(fn, range(start + k, stop, workers))
        except BaseException:
            self.close()
            raise

    def _fork(self, fn: Callable[[int], Any], share: range) -> None:
        read_fd, write_fd = os.pipe()
        try:
            # POSIX only: forked workers exist only where fork does
            import fcntl

            fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except (ImportError, AttributeError, OSError):
            pass  # the system's default buffer: a worker waits for the parent sooner
        pid = os.fork()
        if pid == 0:  # the worker: never returns into the caller's code
            code = 1
            try:
                worker_signals()
                tune_worker()
                os.close(read_fd)
                for fd in self._fds:
                    os.close(fd)
                _work(fn, share, write_fd)
                code = 0
            finally:
                os._exit(code)
        self._pids.append(pid)
        self._fds.append(read_fd)
        os.close(write_fd)

    def __iter__(self) -> ForkMap:
        return self

    def __next__(self) -> Any:
        try:
            i = next(self._indices)
        except StopIteration:
            self.close()
            raise
        try:
            data = _receive(self._fds[self._count % len(self._fds)])
            self._count += 1
            if data is None:
                raise WorkerFailed(f"a worker process stopped before sending result {i}")
            ok, value = pickle.loads(data)
        except BaseException:
            self.close()
            raise
        if not ok:
            self.close()
            exc, text = value
            raise exc from RemoteTraceback(text)
        return value

    def close(self) -> None:
        """Stop the workers that are still running and reap them all."""
        self._indices = iter(())  # nothing more comes once closed
        fds, self._fds = self._fds, []
        pids, self._pids = self._pids, []
        for fd in fds:
            os.close(fd)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)  # a worker that finished is already gone
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
