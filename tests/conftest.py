"""Shared fixtures: fixture banks, a Click runner, and the TeX marker."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests import paths

# tests import these from here: the repository, and the tests' own banks (tests/banks)
ROOT = paths.ROOT
FIXTURES = paths.BANKS

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="TeX is not installed")


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def write_bank(tmp_path: Path):
    """Write a YAML bank (dedented) into tmp_path and return its path."""

    def write(text: str, name: str = "bank.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return write


@pytest.fixture
def tex_runs(monkeypatch) -> list[list[str]]:
    """The command line of every TeX run (format dumps included), in order."""
    from worksheetgen.tex import run as tex

    seen: list[list[str]] = []
    real = tex.process.run_tex

    def recording(cmd, *args, **kwargs):
        seen.append(cmd)
        return real(cmd, *args, **kwargs)

    monkeypatch.setattr(tex.process, "run_tex", recording)
    return seen


@pytest.fixture(autouse=True, scope="session")
def _private_template_cache(tmp_path_factory: pytest.TempPathFactory):
    """Compiled templates go to a folder of the test session, never the user's ~/.cache."""
    import os

    folder = tmp_path_factory.mktemp("template-cache")
    old = os.environ.get("WORKSHEETGEN_CACHE_DIR")
    os.environ["WORKSHEETGEN_CACHE_DIR"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("WORKSHEETGEN_CACHE_DIR", None)
    else:
        os.environ["WORKSHEETGEN_CACHE_DIR"] = old


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs TeX as ``tex``, so ``pytest -m "not tex"`` runs without it."""
    for item in items:
        for mark in item.iter_markers("skipif"):
            if "TeX" in str(mark.kwargs.get("reason", "")):
                item.add_marker(pytest.mark.tex)
                break


def key_as_version_1(doc: dict) -> dict:
    """A key.json document of today's build as a version 1 build wrote it (the real Moodle
    fixtures' keys): a question titled by its family has the title null (version 2 states
    the family's title). Every other field is written the same by both."""
    from worksheetgen.families import FAMILIES

    assert doc["version"] == 2
    for sheet in doc["sheets"]:
        for q in sheet["questions"]:
            if q["title"] == FAMILIES[q["family"]].title:
                q["title"] = None
    return doc


@pytest.fixture(autouse=True)
def _no_secret_from_another_test():
    """Each test starts with no secret to hide in messages: a process hides the secrets it
    has read until it ends, and one test's secret must not change another's messages."""
    from worksheetgen import errors

    errors._COURSE_RUNS.clear()
    errors._SECRET_RUNS.clear()
    yield
