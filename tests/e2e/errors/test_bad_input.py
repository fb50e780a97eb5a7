"""Bad input gets one clear line (file, line, field, expected/got), a non-zero exit, no output.

Every case of issue 5 section 1 is a row of one table: the files it writes, the command-line
arguments, and the exact error line it must print. Each row runs through Click's CliRunner;
a sample also runs as a real subprocess, where a traceback would show.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.errors.test_bad_input import CASES, Case
from worksheetgen.cli import main


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def command(case: Case) -> list[str]:
    seed = [] if "--seed" in case.args else ["--seed", "1"]
    return ["build", *seed, "--no-pdf", "--out", "out", *case.args]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_prints_one_clear_line_and_writes_nothing(
    case, runner, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_files(tmp_path, case.files)
    result = runner.invoke(main, command(case))
    assert result.exit_code == case.exit_code, result.output + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stdout == ""
    assert result.stderr == f"worksheetgen: error: {case.expected}\n"
    assert not (tmp_path / "out").exists()


SUBPROCESS_CASES = [
    "yaml-syntax-error",
    "binary-file",
    "unknown-family",
    "prompt-syntax-error",
    "duplicate-id-across-banks",
    "python-tag",
    "roster-duplicate-id",
    "seed-negative",
    "out-is-a-file",
]


@pytest.mark.parametrize("name", SUBPROCESS_CASES)
def test_bad_input_in_a_real_process_has_no_traceback(name, tmp_path) -> None:
    case = next(c for c in CASES if c.name == name)
    write_files(tmp_path, case.files)
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(
        [sys.executable, "-m", "worksheetgen", *command(case)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == case.exit_code
    assert proc.stdout == ""
    assert proc.stderr == f"worksheetgen: error: {case.expected}\n"
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()
