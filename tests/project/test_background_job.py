"""The interrupt tests pass however the suite is launched (issue 33, section 7): a shell
starts a background job (``cmd &`` in a script) with SIGINT ignored, and every process it
starts inherits that; the tests set the disposition they rely on themselves
(``tests/signals.py``). Here they run in a pytest started so."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tests.conftest import ROOT, needs_tex

INTERRUPT_TESTS = [
    "tests/unit/pipeline/test_nothing_lost.py::test_interrupt_during_tex_kills_it_and_removes_temporary_folders",
    "tests/e2e/pipeline/test_nothing_lost.py::test_ctrl_c_in_a_real_build_leaves_nothing_behind",
    "tests/unit/pipeline/test_nothing_lost.py::test_ctrl_c_is_held_until_the_swap_is_done",
    "tests/e2e/speed/test_forked.py::test_ctrl_c_during_a_class_build_stops_its_workers",
]


def _as_a_background_job() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what `cmd &` in a script gives


@needs_tex
@pytest.mark.slow
def test_the_interrupt_tests_pass_in_a_background_job():
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-o",
            "addopts=",
            "-q",
            "-p",
            "no:cacheprovider",
            *INTERRUPT_TESTS,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        preexec_fn=_as_a_background_job,
    )
    assert res.returncode == 0, res.stdout[-3000:]
    assert "5 passed" in res.stdout, res.stdout[-3000:]
