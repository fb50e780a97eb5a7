"""The old failures of worksheetgen.toml, the secret and init, still open in round four
(issue 33, section 6): each is one line naming the file and line, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from worksheetgen.errors import ConfigError
from worksheetgen.pipeline.config import load_config


def test_a_secret_that_is_not_utf8_is_one_line_and_not_shown(tmp_path):
    env = {**os.environ, "WORKSHEETGEN_SECRET": "abc\udcff\udcfedefghijklmnopqrst"}
    with pytest.raises(ConfigError) as caught:
        load_config(None, start=tmp_path, environ=env)
    assert str(caught.value) == (
        "WORKSHEETGEN_SECRET: expected UTF-8 text, got other bytes (the secret is not shown)"
    )
    # as a user meets it: bytes in the environment
    environ = {k.encode(): v.encode() for k, v in os.environ.items()}
    environ[b"WORKSHEETGEN_SECRET"] = b"abc\xff\xfedefghijklmnopqrst"
    res = subprocess.run(
        [sys.executable, "-m", "worksheetgen", "config"],
        env=environ,
        capture_output=True,
        cwd=tmp_path,
    )
    assert res.returncode == 1 and b"Traceback" not in res.stderr, res.stderr
    assert res.stderr.count(b"\n") == 1 and b"abc" not in res.stderr


def test_a_configuration_init_wrote_under_umask_000_is_used(tmp_path):
    """Every later command refused it: written world-writable, it was not the user's own."""
    folder = tmp_path / "course"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    res = subprocess.run(
        ["sh", "-c", f'umask 000 && "{sys.executable}" -m worksheetgen init "{folder}"'],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    res = subprocess.run(
        [sys.executable, "-m", "worksheetgen", "config"], capture_output=True, text=True, cwd=folder
    )
    assert res.returncode == 0, res.stderr
    assert f"configuration: {folder / 'worksheetgen.toml'}" in res.stdout


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ('banks = ["nope.yaml"]', "banks: expected a YAML file or a folder of banks, got "),
        ('out = "/dev/null/x"', "out: expected a folder to write builds into, got /dev/null/x"),
        ('secret_file = "nope.txt"', "secret_file: expected a secret file, got no such file"),
        ('secret_file = "short.txt"', "secret_file: expected a secret of 16 to 4096 bytes, got 5"),
    ],
)
def test_a_path_in_the_configuration_that_cannot_be_one_names_its_line(
    runner, tmp_path, monkeypatch, setting, says
):
    # the paths a configuration names were refused in the option's words (--out: ...) or
    # the path's alone: the user could not tell where it came from
    from tests.conftest import ROOT
    from worksheetgen.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "short.txt").write_text("short\n", "utf-8")
    (tmp_path / "short.txt").chmod(0o600)
    path = tmp_path / "worksheetgen.toml"
    path.write_text(f'# course\ncourse = "C"\n{setting}\n', "utf-8")
    path.chmod(0o644)
    args = ["build", "--seed", "1", "--no-pdf", "-q"]
    if not setting.startswith("banks"):
        args += ["--bank", str(ROOT / "banks" / "quiz.yaml")]
    if not setting.startswith("out"):
        args += ["--out", str(tmp_path / "o")]
    res = runner.invoke(main, args)
    assert res.exit_code != 0
    assert res.output.startswith(f"worksheetgen: error: {path}:3: {says}"), res.output
    assert res.output.count("\n") == 1
    assert not (tmp_path / "o").exists() and not (tmp_path / "output").exists()
