"""The one way the scan tests build a class: ``worksheetgen build`` run in-process into a
folder, its one output folder returned (the bundled quiz at seed 3 unless told otherwise)."""

from __future__ import annotations

from pathlib import Path

from tests.paths import ROOT

QUIZ = str(ROOT / "banks" / "quiz.yaml")


def build_folder(out: Path, *args: str, bank: str = QUIZ, seed: int = 3) -> Path:
    """Build ``bank`` into ``out`` with ``args`` added, quietly; the build's folder."""
    from worksheetgen.cli import main

    try:
        main(["build", "--seed", str(seed), "--bank", bank, "--out", str(out), "-q", *args])
    except SystemExit as exc:
        assert exc.code in (0, None)
    folders = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert len(folders) == 1
    return folders[0]
