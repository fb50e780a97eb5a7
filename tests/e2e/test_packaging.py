"""The wheel ships the templates and banks, so an installed worksheetgen works from any folder."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import ROOT


def test_wheel_contains_templates_and_banks(tmp_path: Path):
    # built from a copy of the sources alone: setuptools adds what an earlier build left in
    # build/lib, which hid a package pyproject.toml did not list
    source = tmp_path / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "*.egg-info", "output", "__pycache__", ".*cache*", ".hyp*"
        ),
    )
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(wheels)],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("worksheetgen-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in ("base", "sheet", "key", "macros"):
        assert f"worksheetgen/templates/latex/{template}.tex.j2" in names
        assert f"worksheetgen/templates/markdown/{template}.md.j2" in names
    for kind in ("matrix", "vector", "scalar", "heatmap"):  # the display kinds' partials
        assert f"worksheetgen/templates/latex/shown/{kind}.tex.j2" in names
        assert f"worksheetgen/templates/markdown/shown/{kind}.md.j2" in names
    assert "worksheetgen/templates/latex/shown/heatmap.preamble.tex.j2" in names
    # the HTML documents and the practice page's script
    for name in (
        "base.html.j2",
        "sheet.html.j2",
        "key.html.j2",
        "macros.html.j2",
        "style.css.j2",
        "practice.html.j2",
        "practice.js",
        "practice-ui.js",
    ):
        assert f"worksheetgen/templates/html/{name}" in names
    assert "worksheetgen/banks/default.yaml" in names
    assert "worksheetgen/banks/practice.yaml" in names
    assert any(n.endswith("entry_points.txt") for n in names)
    # the message catalogs: each language's compiled catalog, what a build reads
    assert "worksheetgen/locale/de/LC_MESSAGES/worksheetgen.mo" in names
    assert "worksheetgen/locale/de/LC_MESSAGES/worksheetgen.po" in names
    # every module of the source tree (a new package not listed in pyproject.toml was left
    # out of the wheel: the installed command could not import worksheetgen.cli)
    package = ROOT / "worksheetgen"
    modules = {f"worksheetgen/{p.relative_to(package)}" for p in package.rglob("*.py")}
    assert sorted(modules - names) == []
