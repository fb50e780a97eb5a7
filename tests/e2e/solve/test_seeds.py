"""Seed properties: each question's numbers depend only on (seed, sheet id, question id)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _build_bytes(out: Path, hashseed: str) -> dict[str, bytes]:
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "worksheetgen",
            "build",
            "--seed",
            "42",
            "--no-pdf",
            "--out",
            str(out),
        ],
        check=True,
        env=env,
        capture_output=True,
    )
    (folder,) = out.iterdir()
    return {
        p.name: p.read_bytes() for p in folder.iterdir() if p.suffix in (".tex", ".md", ".json")
    }


def test_same_seed_gives_byte_identical_files_under_any_hash_seed(tmp_path: Path):
    first = _build_bytes(tmp_path / "one", "1")
    second = _build_bytes(tmp_path / "two", "987654")
    assert first.keys() == second.keys()
    assert {"sheet.tex", "key.tex", "sheet.md", "key.md", "key.json"} <= set(first)
    assert first == second
