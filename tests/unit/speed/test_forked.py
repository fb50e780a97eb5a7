"""Forked workers: results in order, errors raised where they are due, no process left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.signals import default_signals
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


def test_ctrl_c_during_a_class_build_stops_its_workers(tmp_path: Path):
    roster = tmp_path / "r.csv"
    roster.write_text("name\n" + "".join(f"Student {i}\n" for i in range(2000)), encoding="utf-8")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "worksheetgen",
            "build",
            "--seed",
            "1",
            "--roster",
            str(roster),
            "--out",
            str(tmp_path / "out"),
            "--no-pdf",
            "--jobs",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=default_signals,  # Ctrl-C is not ignored there, however this was started
    )
    children: list[int] = []
    deadline = time.monotonic() + 60
    while len(children) < 2 and time.monotonic() < deadline:
        try:
            text = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text()
        except OSError:
            pytest.skip("no /proc children list to find the workers by")
        children = [int(p) for p in text.split()]
        time.sleep(0.05)
    assert len(children) == 2, "the workers never started"
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole group
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert stderr.strip() == "worksheetgen: interrupted"
    for pid in children:
        assert (
            not Path(f"/proc/{pid}").exists()
            or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]
        )
    assert not any((tmp_path / "out").iterdir()) if (tmp_path / "out").exists() else True
