"""Compiled templates are cached between runs, safely, and never change what is rendered."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT
from worksheetgen.cli import main


def _build(out: Path, cache: str, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "WORKSHEETGEN_CACHE_DIR": cache}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "worksheetgen",
            "build",
            "--seed",
            "7",
            "--no-pdf",
            "--out",
            str(out),
            *extra,
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def _texts(folder: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes() for p in sorted(folder.glob("*/*")) if p.suffix in (".tex", ".md")
    }


def test_a_second_run_uses_the_cache_and_renders_the_same_bytes(tmp_path):
    cache = tmp_path / "cache"
    first = _build(tmp_path / "a", str(cache))
    assert first.returncode == 0, first.stderr
    entries = sorted(cache.glob("templates-*/*.cache"))
    assert entries, "the compiled templates were not cached"
    prompts = sorted(cache.glob("prompts-*/*.prompt"))
    assert prompts, "the compiled prompts were not cached"
    entries += prompts
    stamps = {p: p.stat().st_mtime_ns for p in entries}
    second = _build(tmp_path / "b", str(cache))
    assert second.returncode == 0, second.stderr
    assert {p: p.stat().st_mtime_ns for p in entries} == stamps  # read, not rewritten
    uncached = _build(tmp_path / "c", "")
    assert uncached.returncode == 0, uncached.stderr
    assert _texts(tmp_path / "a") == _texts(tmp_path / "b") == _texts(tmp_path / "c")


def test_an_empty_cache_setting_turns_the_cache_off(tmp_path):
    result = _build(tmp_path / "out", "", "--quiet")
    assert result.returncode == 0, result.stderr
    assert not list(tmp_path.glob("**/templates-*"))


def test_a_corrupt_cache_entry_is_compiled_again(tmp_path):
    cache = tmp_path / "cache"
    assert _build(tmp_path / "a", str(cache)).returncode == 0
    for entry in [*cache.glob("templates-*/*.cache"), *cache.glob("prompts-*/*.prompt")]:
        entry.write_bytes(b"not a compiled template")
    again = _build(tmp_path / "b", str(cache))
    assert again.returncode == 0, again.stderr
    assert _texts(tmp_path / "a") == _texts(tmp_path / "b")


def test_the_same_template_folder_name_in_two_working_directories_is_two_folders(
    runner, tmp_path, monkeypatch
):
    # one process, two projects, each with its own "tpl" folder: each gets its own template
    for project, word in (("one", "Alpha"), ("two", "Bravo")):
        root = tmp_path / project
        (root / "tpl" / "latex").mkdir(parents=True)
        (root / "tpl" / "latex" / "sheet.tex.j2").write_text(
            '((* extends "base.tex.j2" *))\n((* block sheet_body *))\n'
            + word
            + "\n((* endblock *))\n",
            encoding="utf-8",
        )
        monkeypatch.chdir(root)
        result = runner.invoke(
            main,
            ["build", "--seed", "1", "--no-pdf", "--out", "out", "--templates", "tpl", "--quiet"],
        )
        assert result.exit_code == 0, result.output
        (sheet,) = (root / "out").glob("*/sheet.tex")
        text = sheet.read_text(encoding="utf-8")
        assert word in text and ({"Alpha", "Bravo"} - {word}).pop() not in text
