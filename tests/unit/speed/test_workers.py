"""Forked workers: results in order, errors raised where they are due, no process left."""

from __future__ import annotations

import os
import time

import pytest

from worksheetgen.speed.workers import ForkMap, RemoteTraceback, WorkerFailed

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _gone(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True  # reaped: not our child any more
    return False


def test_results_come_in_index_order_whatever_the_workers():
    for workers in (1, 2, 3, 5):
        assert list(ForkMap(lambda i: (i, i * i), 2, 17, workers)) == [
            (i, i * i) for i in range(2, 17)
        ]


def test_workers_freeze_what_they_inherit_and_collect_rarely():
    import gc

    from worksheetgen.speed.process import GC_THRESHOLD

    seen = list(ForkMap(lambda i: (gc.get_freeze_count() > 0, gc.get_threshold()), 0, 2, 2))
    assert seen == [(True, GC_THRESHOLD)] * 2
    assert gc.get_freeze_count() == 0  # the parent is left as it was


def test_results_larger_than_a_pipe_arrive_whole():
    big = list(ForkMap(lambda i: str(i) * 300_000, 0, 6, 2))
    assert big == [str(i) * 300_000 for i in range(6)]


def test_an_exception_in_a_worker_is_raised_when_its_result_is_due():
    def fn(i):
        if i == 5:
            raise ValueError(f"bad index {i}")
        return i

    results = ForkMap(fn, 0, 10, 2)
    pids = list(results._pids)
    got = []
    with pytest.raises(ValueError, match="bad index 5") as info:
        for value in results:
            got.append(value)
    assert got == [0, 1, 2, 3, 4]
    assert isinstance(info.value.__cause__, RemoteTraceback)
    assert "in fn" in str(info.value.__cause__)  # the worker's own traceback
    assert all(_gone(pid) for pid in pids)


def test_a_worker_that_dies_is_an_error_not_a_hang():
    def fn(i):
        if i == 3:
            os._exit(9)
        return i

    with pytest.raises(WorkerFailed, match="result 3"):
        list(ForkMap(fn, 0, 8, 2))


def test_closing_early_stops_and_reaps_the_workers():
    results = ForkMap(lambda i: time.sleep(0.05) or i, 0, 1000, 2)
    assert next(results) == 0
    pids = list(results._pids)
    results.close()
    assert all(_gone(pid) for pid in pids)
    with pytest.raises(StopIteration):  # nothing more comes once closed
        next(results)
