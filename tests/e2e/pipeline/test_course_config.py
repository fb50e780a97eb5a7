"""worksheetgen.toml, `init`, `config`, the secret file and keys from another secret."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.pipeline.test_config import NO_ENV
from worksheetgen.cli import main
from worksheetgen.pipeline.config import load_config


def _init(runner, folder: Path) -> Path:
    result = runner.invoke(main, ["init", str(folder), "--course", "Intro ML"])
    assert result.exit_code == 0, result.output
    return folder / "worksheetgen.toml"


def test_init_writes_a_secret_only_its_owner_can_read(runner, tmp_path):
    _init(runner, tmp_path)
    mode = stat.S_IMODE(os.stat(tmp_path / ".worksheetgen-secret").st_mode)
    assert mode == 0o600
    config = load_config(start=tmp_path, environ=NO_ENV)
    assert config.secret is not None and len(config.secret) == 64
    assert config.value("course") == "Intro ML"


def test_init_refuses_to_replace_a_configuration(runner, tmp_path):
    _init(runner, tmp_path)
    before = (tmp_path / ".worksheetgen-secret").read_bytes()
    result = runner.invoke(main, ["init", str(tmp_path)])
    assert result.exit_code == 1 and "expected no such file" in result.output
    assert (tmp_path / ".worksheetgen-secret").read_bytes() == before


@pytest.mark.parametrize(
    "text, line, what",
    [
        ('title = "ok"\ndecimals = 9\n', 2, "decimals: expected an integer from 0 to 6, got 9"),
        ('title = "ok"\nmargins = "2cm"\n', 2, "margins: expected one of course, title"),
        ('title = "ok"\nbanks = [\n', 2, "expected TOML"),
        ("jobs = true\n", 1, "jobs: expected an integer from 0 to 64, got True"),
        ('title = "ok"\nlarge_print = "yes"\n', 2, "large_print: expected true or false"),
        ('title = "ok"\n\nlanguage = "fr"\n', 3, "language: expected one of en, de, got 'fr'"),
        ("language = 1\n", 1, "language: expected one of en, de, got 1"),
    ],
)
def test_a_bad_file_is_one_line_with_its_file_and_line(runner, tmp_path, text, line, what):
    path = tmp_path / "worksheetgen.toml"
    path.write_text(text)
    result = runner.invoke(main, ["config", "--config", str(path)])
    assert result.exit_code == 1
    assert result.output.startswith(f"worksheetgen: error: {path}:{line}: ")
    assert what in result.output and result.output.count("\n") == 1


def test_config_prints_each_setting_and_where_it_came_from(runner, tmp_path):
    path = _init(runner, tmp_path)
    result = runner.invoke(main, ["config", "--config", str(path)], env={"WORKSHEETGEN_SECRET": ""})
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert f"course = Intro ML  ({path}:2)" in lines
    assert "decimals = (unset: the bank's, else 2)  (default)" in lines
    secret = (tmp_path / ".worksheetgen-secret").read_text().strip()
    assert secret not in result.output
    assert any(line.startswith("secret = fingerprint blake2b:") for line in lines)


def _every_byte(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_a_build_with_a_secret_writes_its_fingerprint_and_never_the_secret(runner, tmp_path):
    path = _init(runner, tmp_path)
    secret = (tmp_path / ".worksheetgen-secret").read_bytes().strip()
    out = tmp_path / "out"
    args = ["build", "--seed", "42", "--no-pdf", "--versions", "3", "--out", str(out)]
    result = runner.invoke(main, [*args, "--config", str(path), "--export", "gift"])
    assert result.exit_code == 0, result.output
    assert "anyone who knows the seed" not in result.output
    written = _every_byte(out)
    assert secret not in written and secret.decode() not in written.decode("utf-8", "replace")
    key = json.loads(next(out.rglob("key.json")).read_text())
    assert key["secret"].startswith("blake2b:") and key["secret"].encode() in written


def test_a_roster_build_without_a_secret_says_once_that_anyone_can_rebuild_it(runner, tmp_path):
    result = runner.invoke(
        main,
        ["build", "--seed", "1", "--no-pdf", "--versions", "2", "--out", str(tmp_path)],
        env={"WORKSHEETGEN_SECRET": ""},
    )
    assert result.exit_code == 0
    assert result.output.count("anyone who knows the seed can rebuild these keys") == 1


def test_grade_and_export_refuse_a_key_built_with_another_secret(runner, tmp_path):
    out = tmp_path / "out"
    env = {"WORKSHEETGEN_SECRET": "the first course secret"}
    args = ["build", "--seed", "5", "--no-pdf", "--out", str(out)]
    assert runner.invoke(main, args, env=env).exit_code == 0
    key = str(next(out.rglob("key.json")))
    other = {"WORKSHEETGEN_SECRET": "the second course secret"}
    target = tmp_path / "gift.txt"
    for command in (
        ["export", "--to", "gift", "--key", key, "--out", str(target)],
        ["grade", "--key", key, "--template", str(tmp_path / "responses.csv")],
    ):
        refused = runner.invoke(main, command, env=other)
        assert refused.exit_code == 1
        assert "built with another" in refused.output and refused.output.count("\n") == 1
    assert not target.exists() and not (tmp_path / "responses.csv").exists()
    assert (
        runner.invoke(
            main, ["export", "--to", "gift", "--key", key, "--out", str(target)], env=env
        ).exit_code
        == 0
    )


@pytest.mark.slow
@pytest.mark.tex
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="TeX is not installed")
def test_no_byte_of_a_class_build_with_pdfs_holds_the_secret(runner, tmp_path):
    path = _init(runner, tmp_path)
    secret = (tmp_path / ".worksheetgen-secret").read_bytes().strip()
    out = tmp_path / "out"
    args = ["build", "--seed", "3", "--versions", "2", "--out", str(out), "--config", str(path)]
    result = runner.invoke(main, [*args, "--export", "qti"], env={"WORKSHEETGEN_SECRET": ""})
    assert result.exit_code == 0, result.output
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.suffix == ".pdf" for p in files)
    for file in files:
        assert secret not in file.read_bytes(), file


def test_help_stays_fast_without_reading_toml_numpy_or_sympy():
    code = (
        "import sys; from worksheetgen.cli import main\n"
        "for args in (['--help'], ['init', '--help'], ['config', '--help']):\n"
        "    try:\n        main(args)\n    except SystemExit:\n        pass\n"
        "print(sorted(m for m in ('numpy', 'sympy', 'jinja2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith("[]")
