"""The tests' layout stays as docs/design/architecture.md draws it: a test under tests/unit/
never drives the command line (issue 35, section 5). One that runs ``worksheetgen``, through
Click's runner, an import of ``worksheetgen.cli`` or a process, belongs in tests/e2e/<package>/."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

UNIT = ROOT / "tests" / "unit"


def _is_the_command(value: object) -> bool:
    """A string naming the command: ``worksheetgen`` (a process's program or ``-m``'s module),
    a path ending in it, or Python source importing ``worksheetgen.cli``."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        return False
    return (
        value == "worksheetgen"
        or value.endswith("/worksheetgen")
        or "-m worksheetgen" in value
        or "worksheetgen.cli" in value
    )


def cli_uses(path: Path) -> list[str]:
    """Where the file drives the command line, one ``line: what`` each."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        what = None
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "worksheetgen.cli" or node.module.startswith("worksheetgen.cli."):
                what = f"imports {node.module}"
            elif node.module == "worksheetgen" and any(a.name == "cli" for a in node.names):
                what = "imports worksheetgen.cli"
            elif node.module == "click.testing":
                what = "imports click.testing"
        elif isinstance(node, ast.Import):
            if any(a.name.startswith("worksheetgen.cli") for a in node.names):
                what = "imports worksheetgen.cli"
        elif isinstance(node, ast.Name) and node.id == "CliRunner":
            what = "uses CliRunner"
        elif isinstance(node, ast.arg) and node.arg == "runner":
            what = "takes the runner fixture"
        elif isinstance(node, ast.Constant) and _is_the_command(node.value):
            what = f"runs the command ({node.value!r})"
        if what:
            found.append((node.lineno, what))
    return [f"{line}: {what}" for line, what in sorted(found)]


def test_no_unit_test_drives_the_command_line():
    offenders = []
    for path in sorted(UNIT.rglob("*.py")):
        uses = cli_uses(path)
        if uses:
            offenders.append(f"{path.relative_to(ROOT)}:{uses[0]}")
    assert not offenders, (
        "these files under tests/unit drive the command line; move those tests to "
        "tests/e2e/<package>/:\n" + "\n".join(offenders)
    )


def test_the_check_finds_each_way_of_driving_the_command_line(tmp_path):
    cases = {
        "runner": "def test_x(runner):\n    runner.invoke(main, ['build'])\n",
        "import": "from worksheetgen.cli import main\n",
        "click": "from click.testing import CliRunner\n",
        "process": "import subprocess, sys\nsubprocess.run([sys.executable, '-m', 'worksheetgen'])",
        "bytes": "import subprocess\nsubprocess.run([b'worksheetgen', b'build'])\n",
        "source": "CODE = 'from worksheetgen.cli import main; main([])'\n",
    }
    for name, text in cases.items():
        path = tmp_path / f"test_{name}.py"
        path.write_text(text, encoding="utf-8")
        assert cli_uses(path), name
    plain = tmp_path / "test_plain.py"
    plain.write_text("from worksheetgen.keyjson.read import read_key\n", encoding="utf-8")
    assert cli_uses(plain) == []
