"""Plugins: families and exporters come from entry points, the bundled ones and an installed
package's alike; a broken plugin is one line naming it, never a traceback."""

from __future__ import annotations

import ast
import csv
import io
import json
import shutil
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.unit.plugins.test_plugins import EXAMPLE
from worksheetgen import plugins
from worksheetgen.cli import main
from worksheetgen.families import FAMILIES


def _one_line_error(result: Any, start: str) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(start), result.stderr
    return lines[0]


def _family_classes_in_the_package() -> dict[str, str]:
    """Every concrete family class defined in worksheetgen/families/*.py (name = "..."),
    as entry point values, read from the source."""
    found = {}
    for path in sorted((ROOT / "worksheetgen" / "families").glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.ClassDef):
                continue
            for stmt in node.body:
                if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Constant):
                    continue
                target = stmt.targets[0]
                if isinstance(target, ast.Name) and target.id == "name":
                    found[str(stmt.value.value)] = f"worksheetgen.families.{path.stem}:{node.name}"
    return found


def test_every_bundled_family_is_registered_by_its_entry_point():
    declared = {e.name: e.value for e in metadata.entry_points(group=plugins.FAMILIES)}
    assert _family_classes_in_the_package().items() <= declared.items()
    for name, cls in FAMILIES.items():
        assert cls.name == name


def test_a_plugin_exporter_is_a_choice_of_export_and_writes_its_file(installed, runner, tmp_path):
    installed(plugins.EXPORTERS, "csv", "tests.unit.plugins.test_plugins:CsvExporter", "csv-export")
    result = runner.invoke(main, ["build", "--seed", "3", "--no-pdf", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    (key,) = tmp_path.glob("*/key.json")
    result = runner.invoke(main, ["export", "--to", "csv", "--key", str(key)])
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO((key.parent / "questions.csv").read_text())))
    families = [q["family"] for q in json.loads(key.read_text())["sheets"][0]["questions"]]
    assert [r[1] for r in rows] == families


def test_a_family_plugin_that_fails_to_import_is_one_line_naming_it(installed, runner):
    installed(plugins.FAMILIES, "broken", "no_such_module_for_worksheetgen:Family")
    line = _one_line_error(
        runner.invoke(main, ["families"]),
        "worksheetgen: error: plugin 'broken' (worksheetgen.families, from package "
        "broken-pkg): cannot import no_such_module_for_worksheetgen:Family: "
        "ModuleNotFoundError",
    )
    assert "no_such_module_for_worksheetgen" in line


def test_a_family_plugin_whose_module_raises_is_one_line_naming_it(
    installed, runner, tmp_path, monkeypatch
):
    (tmp_path / "raising_family.py").write_text("raise RuntimeError('boom\\nsecond line')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    installed(plugins.FAMILIES, "raising", "raising_family:Thing")
    line = _one_line_error(
        runner.invoke(main, ["build", "--seed", "1", "--no-pdf", "--out", str(tmp_path)]),
        "worksheetgen: error: plugin 'raising' (worksheetgen.families, from package broken-pkg)",
    )
    assert line.endswith("cannot import raising_family:Thing: RuntimeError: boom second line")
    assert not list(tmp_path.glob("*/key.json"))


def test_a_family_plugin_that_is_not_a_family_is_one_line_naming_it(installed, runner):
    installed(plugins.FAMILIES, "getcwd", "os:getcwd")
    line = _one_line_error(
        runner.invoke(main, ["families"]),
        "worksheetgen: error: plugin 'getcwd' (worksheetgen.families, from package broken-pkg): "
        "os:getcwd: expected a subclass of worksheetgen.families.Family, got",
    )
    assert "getcwd" in line


def test_a_family_plugin_named_unlike_its_class_is_one_line_naming_it(installed, runner):
    installed(plugins.FAMILIES, "my-softmax", "worksheetgen.families.attention_tables:Softmax")
    _one_line_error(
        runner.invoke(main, ["families"]),
        "worksheetgen: error: plugin 'my-softmax' (worksheetgen.families, from package "
        "broken-pkg): worksheetgen.families.attention_tables:Softmax: expected the class's "
        "name to be 'my-softmax' (its entry point), got 'softmax'",
    )


def test_a_family_plugin_taking_a_bundled_name_is_one_line_naming_the_plugin(installed, runner):
    installed(plugins.FAMILIES, "softmax", "their_pkg:Softmax", "their-pkg")
    _one_line_error(
        runner.invoke(main, ["families"]),
        "worksheetgen: error: plugin 'softmax' (worksheetgen.families, from package "
        "their-pkg): name clash: the name is taken by a bundled one "
        "(worksheetgen.families.attention_tables:Softmax)",
    )


def test_two_plugins_taking_one_name_is_one_line_naming_both(installed, runner):
    installed(plugins.FAMILIES, "dots", "first_pkg:Dots", "first-pkg")
    installed(plugins.FAMILIES, "dots", "second_pkg:Dots", "second-pkg")
    _one_line_error(
        runner.invoke(main, ["families"]),
        "worksheetgen: error: plugin 'dots' (worksheetgen.families, from package second-pkg): "
        "name clash: the name is taken by package first-pkg's (first_pkg:Dots)",
    )


def test_an_exporter_plugin_that_fails_to_import_is_one_line_naming_it(installed, runner, tmp_path):
    installed(plugins.EXPORTERS, "lms", "no_such_exporter_module:Lms", "lms-pkg")
    _one_line_error(
        runner.invoke(main, ["export", "--to", "lms", "--key", str(tmp_path / "key.json")]),
        "worksheetgen: error: plugin 'lms' (worksheetgen.exporters, from package lms-pkg): "
        "cannot import no_such_exporter_module:Lms: ModuleNotFoundError",
    )


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("os:getcwd", "expected an Exporter (name, file_name, binary and write), got"),
        (
            "tests.unit.plugins.test_plugins:NamedWrong",
            "expected its name to be 'csv' (its entry point)",
        ),
        (
            "tests.unit.plugins.test_plugins:WritesElsewhere",
            "expected file_name to be a plain file name, got '../questions.csv'",
        ),
        (
            "tests.unit.plugins.test_plugins:CannotBeMade",
            "cannot make an exporter from it: OSError: no config file",
        ),
    ],
)
def test_an_exporter_plugin_of_the_wrong_shape_is_one_line_naming_it(
    installed, runner, tmp_path, value, problem
):
    installed(plugins.EXPORTERS, "csv", value, "csv-pkg")
    _one_line_error(
        runner.invoke(main, ["export", "--to", "gift", "--key", str(tmp_path / "key.json")]),
        f"worksheetgen: error: plugin 'csv' (worksheetgen.exporters, from package csv-pkg): "
        f"{value}: {problem}",
    )


def test_an_exporter_name_clash_is_one_line_even_for_help(installed, runner):
    installed(plugins.EXPORTERS, "gift", "their_gift:Gift", "gift-pkg")
    _one_line_error(
        runner.invoke(main, ["build", "--help"]),
        "worksheetgen: error: plugin 'gift' (worksheetgen.exporters, from package gift-pkg): "
        "name clash: the name is taken by a bundled one (worksheetgen.export.gift:Gift)",
    )


def test_without_worksheetgen_metadata_the_error_says_to_install_it(monkeypatch, runner):
    monkeypatch.setattr(plugins, "_entry_points", lambda g: [])
    monkeypatch.setattr(plugins, "_FOUND", {})
    monkeypatch.setattr(FAMILIES, "_classes", None)
    _one_line_error(
        runner.invoke(main, ["families"]),
        "worksheetgen: error: worksheetgen.families: expected worksheetgen's own entry "
        "points, got none (is worksheetgen installed?",
    )


def _venv_with_worksheetgen(folder: Path) -> Path:
    """A venv (no pip of its own) that sees this interpreter's packages, worksheetgen among
    them, through a .pth file; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    Path(site, "_worksheetgen_here.pth").write_text(
        f"import site; site.addsitedir({ours!r})\n{ROOT}\n", encoding="utf-8"
    )
    return python


def test_the_example_plugin_installs_lists_builds_and_grades(tmp_path):
    python = _venv_with_worksheetgen(tmp_path / "venv")
    source = shutil.copytree(  # built where its egg-info and build/ do not land in the repo
        EXAMPLE, tmp_path / "src", ignore=shutil.ignore_patterns("*.egg-info", "build")
    )
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            str(source),
        ],
        check=True,
        capture_output=True,
    )

    def cli(*args: str) -> str:
        done = subprocess.run(
            [str(python), "-m", "worksheetgen", *args], capture_output=True, text=True, cwd=tmp_path
        )
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        return done.stdout

    assert "dot-product: The score q·k of one query and one key" in cli("families")
    cli(
        "build",
        "--seed",
        "1",
        "--bank",
        str(EXAMPLE / "dot-product.yaml"),
        "--no-pdf",
        "--out",
        "out",
        "--export",
        "gift",
    )
    folder = tmp_path / "out" / "dot-product-demo-seed1"
    assert {"sheet.md", "key.md", "key.json", "gift.txt"} <= {p.name for p in folder.iterdir()}
    key = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    (q1, q2) = key["sheets"][0]["questions"]
    assert q1["family"] == "dot-product"
    score = sum(a * b for a, b in zip(q1["given"]["q"], q1["given"]["k"], strict=True))
    assert q1["answer"]["score"] == score
    assert q1["answer"]["scaled"] == pytest.approx(score / q1["given"]["d_k"] ** 0.5)

    # question 1: the score right, the scale by d_k (a slip); question 2: a wrong score and
    # the scaled score carried forward from it
    d1, d2 = q1["given"]["d_k"], q2["given"]["d_k"]
    wrong = q2["answer"]["score"] + 1
    rows = [
        ("one-score", "score", score),
        ("one-score", "scaled", f"{score / d1:.2f}"),
        ("wider", "score", wrong),
        ("wider", "scaled", f"{wrong / d2**0.5:.2f}"),
    ]
    text = "student,question,answer,entry,value\n" + "".join(
        f"dot-product-demo,{q},{a},,{v}\n" for q, a, v in rows
    )
    (tmp_path / "responses.csv").write_text(text, encoding="utf-8")
    cli("grade", "--key", str(folder / "key.json"), "responses.csv", "--out", "graded")
    scores = list(csv.DictReader((tmp_path / "graded" / "scores.csv").open(encoding="utf-8")))
    assert [(r["one-score"], r["wider"], r["total"]) for r in scores] == [("1", "1", "2")]
    report = (tmp_path / "graded" / "report.md").read_text(encoding="utf-8")
    assert "Reproduced by **scale-by-dk**" in report
    assert "credit carried forward from your score" in report


def test_help_lists_export_choices_without_importing_an_exporter_or_a_family():
    code = (
        "import sys; from worksheetgen.cli import main\n"
        "try:\n    main(['build', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('worksheetgen.export', "
        "'worksheetgen.families', 'numpy', 'sympy', 'jinja2'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "--export [gift|moodle|qti]" in out.stdout
    assert out.stdout.strip().endswith("[]")
