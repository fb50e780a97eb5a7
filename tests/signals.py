"""The signal dispositions interrupt tests rely on, set where they are needed, so the suite
passes however it is launched: a shell starts a background job (``cmd &`` in a script) with
SIGINT ignored, Python keeps it ignored, and so does every process it starts.

- :func:`default_signals`: ``preexec_fn`` of a process a test interrupts, which then starts
  with SIGINT and SIGTERM at their defaults (Python turns SIGINT into KeyboardInterrupt);
- :func:`ctrl_c_raises`: within the block, SIGINT to this process raises KeyboardInterrupt
  (the handler before is put back afterwards).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


def default_signals() -> None:
    """In a child before it runs its program: SIGINT and SIGTERM at their defaults."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def ctrl_c_raises() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt in the main thread while the block runs."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
