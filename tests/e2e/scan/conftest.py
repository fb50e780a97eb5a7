"""What the scan tests share: the bundled quiz built as one scannable sheet."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.paths import ROOT

QUIZ = str(ROOT / "banks" / "quiz.yaml")


@pytest.fixture(scope="module")
def quiz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from worksheetgen.cli import main

    out = tmp_path_factory.mktemp("quiz")
    try:
        main(["build", "--seed", "3", "--bank", QUIZ, "--out", str(out), "-q", "--scannable"])
    except SystemExit as exc:
        assert exc.code in (0, None)
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return folder
