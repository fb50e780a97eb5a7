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

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


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
