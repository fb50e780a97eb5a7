"""Plugins: families and exporters come from entry points, the bundled ones and an installed
package's alike; a broken plugin is one line naming it, never a traceback."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from dataclasses import dataclass
from importlib import metadata
from types import SimpleNamespace
from typing import Any

import pytest

import worksheetgen.families as families
from tests.conftest import ROOT
from worksheetgen import export, plugins
from worksheetgen.families import FAMILIES, get_family

EXAMPLE = ROOT / "examples" / "worksheetgen-dot-product"


BUNDLED_EXPORTERS = ["gift", "moodle", "qti"]


@dataclass
class FakeEntry:
    """An entry point as importlib.metadata gives it, declared by a package we name."""

    name: str
    value: str
    group: str
    package: str

    @property
    def dist(self) -> Any:
        return SimpleNamespace(metadata={"Name": self.package})

    def load(self) -> Any:
        return metadata.EntryPoint(self.name, self.value, self.group).load()


class CsvExporter:
    """A plugin exporter for the tests: one line per question, its id and family."""

    name = "csv"
    file_name = "questions.csv"
    binary = False

    def write(self, doc: Any, stream: Any) -> None:
        for q in doc.questions:
            stream.write(f"{q.qid},{q.family}\n")


class NamedWrong(CsvExporter):
    name = "other"


class WritesElsewhere(CsvExporter):
    file_name = "../questions.csv"


class CannotBeMade(CsvExporter):
    def __init__(self) -> None:
        raise OSError("no config file")


@pytest.fixture
def installed(monkeypatch):
    """Add fake entry points to the installed ones: ``installed(group, name, value, package)``.
    The registries are emptied so that they read the entry points again."""
    real = plugins._entry_points
    extra: list[FakeEntry] = []
    monkeypatch.setattr(
        plugins, "_entry_points", lambda g: real(g) + [e for e in extra if e.group == g]
    )
    monkeypatch.setattr(plugins, "_FOUND", {})
    monkeypatch.setattr(FAMILIES, "_classes", None)
    monkeypatch.setattr(export, "_EXPORTERS", None)
    monkeypatch.setattr(families, "_INSTANCES", {})

    def add(group: str, name: str, value: str, package: str = "broken-pkg") -> None:
        extra.append(FakeEntry(name, value, group, package))

    return add


def test_an_installed_family_plugin_changes_nothing_the_bundled_families_tests_read(
    installed, monkeypatch
):
    """Installing a plugin in the development environment (the example, here) adds a family
    to the registry; the reference page, generated for the bundled families, stays as it is."""
    from tests.project.test_docs import DOCS, _generate_module

    monkeypatch.syspath_prepend(str(EXAMPLE))
    installed(
        plugins.FAMILIES,
        "dot-product",
        "worksheetgen_dot_product.family:DotProduct",
        "worksheetgen-dot-product",
    )
    assert "dot-product" in FAMILIES
    generate = _generate_module()
    assert "dot-product" not in generate.bundled_families()
    committed = (DOCS / "reference" / "families.md").read_text(encoding="utf-8")
    assert generate.generated("families.md") == committed


def test_the_bundled_exporters_are_registered_and_have_the_exporter_shape():
    assert export.exporter_names() == BUNDLED_EXPORTERS
    found = export.exporters()
    assert {n: e.file_name for n, e in found.items()} == {
        "gift": "gift.txt",
        "moodle": "moodle.xml",
        "qti": "canvas-qti.zip",
    }
    assert all(isinstance(e, export.Exporter) for e in found.values())
    assert [n for n, e in found.items() if e.binary] == ["qti"]


def test_instances_are_made_once_per_family():
    assert get_family("softmax") is get_family("softmax") is families._INSTANCES["softmax"]


def test_a_wheel_declares_the_bundled_entry_points(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("worksheetgen-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt")]
        text = zf.read(name).decode("utf-8")
    declared = {e.value for e in metadata.entry_points(group=plugins.FAMILIES)} | {
        e.value for e in metadata.entry_points(group=plugins.EXPORTERS)
    }
    assert "[worksheetgen.families]" in text and "[worksheetgen.exporters]" in text
    assert all(v in text for v in declared if v.startswith("worksheetgen."))
