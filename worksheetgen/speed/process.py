"""Settings of worksheetgen's own processes: the command line's, and the workers it forks.

Library callers keep their process as it is; only ``cli.main`` and the forked workers of a
class build apply these.
"""

from __future__ import annotations

import gc
import os

#: A build allocates millions of short-lived objects and few cycles: Python's default first
#: threshold (700) ran a collection every few hundred allocations, about a tenth of a
#: build's CPU; the peak memory of a 400-sheet build moved by 1 MB.
GC_THRESHOLD = (10_000, 20, 20)


def tune_process() -> None:
    """The command line's process: fewer garbage collections, and OpenBLAS kept to the
    calling thread unless the user chose (the matrices are tiny, but the helper threads
    OpenBLAS starts when NumPy is imported spin for about 70 ms of CPU before they sleep, on
    the cores TeX and the worker processes need). Called before NumPy is imported."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    gc.set_threshold(*GC_THRESHOLD)


def tune_worker() -> None:
    """A forked worker: what it inherited is never scanned again (nor its pages copied by
    the collector's bookkeeping), and collections are as rare as in the command line."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)
