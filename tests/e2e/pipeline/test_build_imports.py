"""What a build imports: grading's key (and key.json's reader and records) only for a build
with --practice, whose pages carry the grader's view of each key."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

PROBE = """
import shutil, sys, tempfile
from worksheetgen.cli.app import main
out = tempfile.mkdtemp()
try:
    main(["build", "--seed", "7", "--no-pdf", "--jobs", "1", "-q", "--out", out, *sys.argv[1:]])
except SystemExit as exc:
    assert not exc.code, exc.code
finally:
    shutil.rmtree(out)
print(" ".join(sorted(m for m in sys.modules if m.startswith("worksheetgen.grading"))))
"""


def _grading_modules(*args: str) -> str:
    run = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return run.stdout.strip()


def test_a_build_without_practice_does_not_import_grading() -> None:
    assert _grading_modules() == ""


def test_a_build_with_practice_imports_grading_key() -> None:
    assert "worksheetgen.grading.key" in _grading_modules("--practice").split()
