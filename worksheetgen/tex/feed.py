"""A document handed to TeX while it is still being produced, through a named pipe."""

from __future__ import annotations

import os
import select
import threading
from pathlib import Path

from worksheetgen.speed.workers import PIPE_BYTES  # the pipes to TeX: as big as the workers'
from worksheetgen.tex.formats import blank_preamble


class TexFeed:
    """The text of a document handed to TeX while it is still being produced.

    TeX reads a named pipe in its working folder, so it typesets the first sheets of a class
    while the later ones are still drawn: the two cores are busy at once. The pipe is held
    open for reading and writing here, so no write ever fails because TeX has not opened it
    yet, and writes never block for good: they give up once TeX has stopped. TeX needs no end
    of file: ``\\end{document}`` ends the run.

    Until the compile step has made the pipe (it first finds or dumps the preamble's
    format), what is written is kept here, up to ``PENDING_BYTES``, so the writer goes on
    drawing meanwhile instead of waiting for TeX to start.
    """

    #: text kept while TeX is not started yet; past it, a write waits for TeX
    PENDING_BYTES = 8 << 20

    def __init__(self, head: str | None = None) -> None:
        #: the document's first text (its preamble decides the TeX format), when known
        self.head = head
        #: set by the compile step when TeX starts from a format holding the preamble: the
        #: head is then handed over with its preamble blanked out (see :func:`blank_preamble`)
        self.strip_preamble = False
        self._fd: int | None = None
        self._pending: list[str] = []  # written before TeX started, in order
        self._pending_size = 0
        self._attached = threading.Event()
        self._finished = threading.Event()  # TeX has stopped (or never started)
        self.broken = False  # TeX stopped before it had read everything

    def attach(self, fifo: Path) -> None:
        """Called by the compile step once the pipe exists and just before TeX starts."""
        self._fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
        try:  # Linux: a pipe that holds a class's whole document, so the writer never
            # waits on one TeX run while the others have nothing to read
            import fcntl

            fcntl.fcntl(self._fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except (ImportError, AttributeError, OSError):
            pass  # the system's size: the writer waits its turn more often
        self._attached.set()

    def tex_stopped(self) -> None:
        """Called by the compile step when TeX has exited: writing stops."""
        self._finished.set()

    def write(self, text: str) -> None:
        """Hand ``text`` to TeX (waits while TeX is busy reading what came before); kept
        for later while TeX is not started yet (see ``PENDING_BYTES``). Writing nothing
        hands over what was kept, once TeX has started."""
        if text:
            self._pending.append(text)
            self._pending_size += len(text)
        started = self._attached.is_set() or self._finished.is_set()
        if started or self._pending_size > self.PENDING_BYTES:
            self.flush()

    def flush(self) -> None:
        """Hand TeX everything kept so far, waiting for it to start if it has not yet (the
        writer calls this after its last write)."""
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending, self._pending_size = [], 0
        while not self._attached.wait(0.05):
            if self._finished.is_set():
                self.broken = True
                return
        if self.strip_preamble:
            self.strip_preamble = False  # only the head has one
            text = blank_preamble(text)
        data = memoryview(text.encode("utf-8"))
        while data and not self.broken:
            if self._finished.is_set() or self._fd is None:
                self.broken = True
                return
            try:
                data = data[os.write(self._fd, data) :]
            except BlockingIOError:
                select.select([], [self._fd], [], 0.05)

    def close(self) -> None:
        """Free the pipe (the writer calls this once it is done, or gives up)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
