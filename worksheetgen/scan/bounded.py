"""Decoding a scan's page with bounded work: in a forked child with a memory and a CPU time
limit, its standard output and error closed, so that no file (a PDF whose content stream
inflates to gigabytes, an image that claims a billion pixels, a page tree that lists one
page thousands of times) can grow the process without bound, run for hours, abort it with no
message or print a library's warning: the child dies, the run says which page in one line.

Standard library only. Where fork or resource limits do not exist the work runs here,
unbounded (as before)."""

from __future__ import annotations

import mmap
import os
import pickle
import signal
import sys
import warnings
from collections.abc import Callable
from typing import Any

from worksheetgen.errors import ScanError

#: what decoding one page may take beyond what the process holds already: memory (address
#: space; a page at the pixel limit, 120,000,000 bytes of grey, with a scanner's colour image
#: behind it, takes far less) and CPU seconds (a page takes a fraction of one)
PAGE_MEMORY = 1_000_000_000
PAGE_SECONDS = 60


def _address_space() -> int | None:
    """This process's address space in bytes (Linux's VmSize), or None when not known."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


#: an image a child decodes comes back through shared memory of this size, not the pipe
#: (pickling a page of 4 MB through a pipe took longer than decoding it); the mapping is
#: only touched as far as the image reaches. Larger results go through the pipe.
SHARED_BYTES = 130_000_000


def _child(
    fn: Callable[..., Any], args: tuple[Any, ...], out: int, shared: mmap.mmap | None
) -> None:
    """In the forked child: the limits, then ``fn``'s result (or its ScanError) down ``out``
    (an array of bytes into ``shared``, its shape down ``out``)."""
    # the parent's handlers (SIGTERM -> KeyboardInterrupt) are not the child's: it just dies
    # (a signal the parent ignores, as a pool's worker ignores Ctrl-C, it ignores too)
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, signal.SIG_DFL)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # a library's warnings and chatter reach no one
    os.dup2(null, 2)
    warnings.simplefilter("ignore")
    import resource  # Unix only: the child exists only where fork does

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file left behind
    resource.setrlimit(resource.RLIMIT_CPU, (PAGE_SECONDS, PAGE_SECONDS + 1))
    held = _address_space()
    if held is not None:
        limit = held + PAGE_MEMORY
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        if hard != resource.RLIM_INFINITY:  # never above what this process may have
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        result = fn(*args)
        nbytes = getattr(result, "nbytes", None)
        if (
            shared is not None
            and nbytes is not None
            and nbytes <= len(shared)
            and getattr(result, "dtype", None) is not None
            and str(result.dtype) == "uint8"
        ):
            # NumPy's: the result is an array, so the child has it loaded
            import numpy as np

            target = np.frombuffer(shared, dtype=np.uint8, count=nbytes)
            target.reshape(result.shape)[...] = result
            payload = pickle.dumps(("shared", tuple(result.shape)))
        else:
            payload = pickle.dumps(("ok", result), protocol=pickle.HIGHEST_PROTOCOL)
    except ScanError as exc:
        payload = pickle.dumps(("error", exc.message, exc.file))
    except MemoryError:
        payload = pickle.dumps(("memory",))
    view = memoryview(payload)
    while view:
        view = view[os.write(out, view[: 1 << 20]) :]


def bounded(fn: Callable[..., Any], *args: Any, file: str, where: str | None = None) -> Any:
    """``fn(*args)`` run in a forked child within :data:`PAGE_MEMORY` and
    :data:`PAGE_SECONDS`; its ScanError is raised here. A child that runs out of either, or
    dies, is one ScanError naming ``file`` and ``where`` in it ("page 3"; None: the file
    as a whole)."""
    if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
        return fn(*args)
    shared = mmap.mmap(-1, SHARED_BYTES)  # anonymous and shared with the child
    try:
        return _run(fn, args, file, where, shared)
    finally:
        shared.close()


def _run(
    fn: Callable[..., Any], args: tuple[Any, ...], file: str, where: str | None, shared: mmap.mmap
) -> Any:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; it never returns
        code = 0
        try:
            os.close(read)
            _child(fn, args, write, shared)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    chunks: list[bytes] = []
    status = None
    try:
        while True:
            chunk = os.read(read, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(read)
        if status is None:  # interrupted: the child goes too, at once
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
    limits = (
        f"{'' if where is None else where + ': '}expected "
        f"{'a scan whose pages are counted' if where is None else 'a page that decodes'} "
        f"within {PAGE_MEMORY // 1_000_000:,} MB of memory and {PAGE_SECONDS} s"
    )
    data = b"".join(chunks)
    result: Any = None
    if data:
        try:
            result = pickle.loads(data)
        except Exception:  # cut short: the child died while writing
            result = None
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGINT, signal.SIGTERM):
        # Ctrl-C or SIGTERM to the process group: the run is interrupted, the page is fine
        raise KeyboardInterrupt
    if os.WIFSIGNALED(status) or result is None:
        cause = "it stopped"
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            try:
                cause = f"stopped by {signal.Signals(number).name}"
            except ValueError:
                cause = f"stopped by signal {number}"
        raise ScanError(f"{limits}, got one that does not ({cause})", file=file)
    if result[0] == "memory":
        raise ScanError(f"{limits}, got one that needs more memory", file=file)
    if result[0] == "error":
        raise ScanError(result[1], file=result[2])
    if result[0] == "shared":  # a grey image, in the shared memory
        # NumPy only when a child sent an array (the scan's image machinery has it loaded)
        import numpy as np

        shape = result[1]
        count = int(np.prod(shape)) if shape else 1
        return np.frombuffer(shared, dtype=np.uint8, count=count).reshape(shape).copy()
    return result[1]
