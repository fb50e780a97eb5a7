"""The README and docs/ say what the code does: set-up commands CI runs, generated reference
pages that are current, links that lead somewhere, and examples that work as written."""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOCS = ROOT / "docs"


def _sh_blocks(path: Path) -> list[str]:
    """The fenced ```sh blocks of a Markdown file, in order."""
    return re.findall(r"^```sh\n(.*?)^```$", path.read_text(encoding="utf-8"), re.M | re.S)


def _apt_packages(command: str) -> set[str]:
    """The packages an ``apt-get install`` in ``command`` names (line continuations joined)."""
    words = shlex.split(command.replace("\\\n", " "))
    start = words.index("install") + 1
    packages = set()
    for word in words[start:]:
        if word in ("&&", ";") or word.startswith("run"):
            break
        if not word.startswith("-"):
            packages.add(word)
    return packages


def _generate_module():
    spec = importlib.util.spec_from_file_location("generate", DOCS / "reference" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150


def test_readme_first_command_installs_what_ci_installs_and_builds_seed_42():
    install = _sh_blocks(ROOT / "README.md")[0]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    ci_install = next(line for line in ci.split("\nrun ") if line.startswith("apt-get install"))
    assert _apt_packages(install) == _apt_packages(ci_install)
    assert install.rstrip().endswith(".venv/bin/worksheetgen build --seed 42")
    assert "run .venv/bin/worksheetgen build --seed 42\n" in ci


def test_readme_test_command_runs_the_script_ci_runs():
    tests = _sh_blocks(ROOT / "README.md")[1].strip()
    assert tests == '.venv/bin/pip install -e ".[test]" && .ci/test'
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.rstrip().endswith("run .ci/test")
    assert "README.md" not in ci  # CI runs its own steps, it no longer parses the README


def _fake_checkout(tmp_path: Path, failing: str = "", pytest_status: int = 0) -> Path:
    """A copy of .ci/test beside fake tools that log each call; ``failing`` exits 1."""
    (tmp_path / ".ci").mkdir()
    script = tmp_path / ".ci" / "test"
    shutil.copy(ROOT / ".ci" / "test", script)
    script.chmod(0o755)
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for tool in ("ruff", "mypy", "lint-imports", "python"):
        status = 1 if tool == failing else (pytest_status if tool == "python" else 0)
        fake = bin_dir / tool
        fake.write_text(f'#!/bin/sh\necho "{tool} $*" >> "$0.log"\nexit {status}\n')
        fake.chmod(0o755)
    return tmp_path


def test_ci_test_runs_ruff_format_mypy_lint_imports_pytest_in_order(tmp_path: Path):
    checkout = _fake_checkout(tmp_path)
    done = subprocess.run([checkout / ".ci" / "test", "-m", "not tex"], capture_output=True)
    assert done.returncode == 0, done.stderr
    # the script echoes each command before it runs it
    shown = [line[2:] for line in done.stderr.decode().splitlines() if line.startswith("+ ")]
    assert [line.split("/")[-1] for line in shown] == [
        "ruff check .",
        "ruff format --check .",
        "mypy",
        "lint-imports",
        "python -m pytest -m not tex",
    ]


def test_ci_test_stops_at_the_first_failing_check(tmp_path: Path):
    checkout = _fake_checkout(tmp_path, failing="mypy")
    done = subprocess.run([checkout / ".ci" / "test"], capture_output=True)
    assert done.returncode == 1
    bin_dir = checkout / ".venv" / "bin"
    assert (bin_dir / "mypy.log").exists()
    assert not (bin_dir / "lint-imports.log").exists()
    assert not (bin_dir / "python.log").exists()


def test_ci_test_fails_when_pytest_collects_no_tests(tmp_path: Path):
    checkout = _fake_checkout(tmp_path, pytest_status=5)
    done = subprocess.run([checkout / ".ci" / "test"], capture_output=True)
    assert done.returncode == 5
    assert b"collected no tests" in done.stderr


def test_ci_scripts_are_executable_in_git():
    listed = subprocess.run(
        ["git", "ls-files", "-s", ".ci/run", ".ci/test"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    modes = [line.split()[0] for line in listed if line]
    assert modes == ["100755", "100755"]


@pytest.mark.parametrize("name", ["families.md", "cli.md"])
def test_generated_reference_page_is_current(name: str):
    """Regenerate with ``python docs/reference/generate.py`` when this fails."""
    generate = _generate_module()
    committed = (DOCS / "reference" / name).read_text(encoding="utf-8")
    assert committed == generate.generated(name)


def test_families_page_lists_every_bundled_family_of_the_registry():
    """worksheetgen's own families, as the registry finds them (a plugin installed in the
    development environment adds its own without changing the page)."""
    from worksheetgen.families import FAMILIES

    bundled = _generate_module().bundled_families()
    text = (DOCS / "reference" / "families.md").read_text(encoding="utf-8")
    headings = re.findall(r"^### (\S+)$", text, re.M)
    assert headings == bundled
    assert set(bundled) <= set(FAMILIES)


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.rglob("*.md"))]


def test_every_relative_link_in_the_docs_leads_to_a_file():
    missing = []
    for path in _markdown_files():
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            resolved = (path.parent / target).resolve()
            if not resolved.exists():
                missing.append(f"{path.relative_to(ROOT)}: {target}")
    assert missing == []


def test_every_docs_page_is_linked_from_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {(ROOT / t).resolve() for t in re.findall(r"\]\((docs/[^)#\s]+)\)", readme)}
    pages = {p.resolve() for p in DOCS.rglob("*.md")}
    assert pages - linked == set()


def test_grading_guide_example_grades_against_the_practice_key(runner, tmp_path: Path):
    """The responses CSV printed in docs/guide/grading.md is accepted for the key it names."""
    from worksheetgen.cli import main

    guide = (DOCS / "guide" / "grading.md").read_text(encoding="utf-8")
    examples = re.findall(r"^```csv\n(.*?)^```$", guide, re.M | re.S)
    assert len(examples) == 2  # a responses file and a marks file
    build = runner.invoke(
        main,
        ["build", "--seed", "1", "--bank", str(ROOT / "banks" / "practice.yaml"), "--no-pdf"]
        + ["--out", str(tmp_path), "--quiet"],
    )
    assert build.exit_code == 0, build.output
    key = tmp_path / "note-3-2-practice-seed1" / "key.json"
    assert "--key output/note-3-2-practice-seed1/key.json" in guide
    for i, csv_text in enumerate(examples):
        responses = tmp_path / f"responses{i}.csv"
        responses.write_text(csv_text, encoding="utf-8")
        out = tmp_path / f"grades{i}"
        graded = runner.invoke(
            main, ["grade", "--key", str(key), str(responses), "--out", str(out)]
        )
        assert graded.exit_code == 0, graded.output
        scores = (out / "scores.csv").read_text(encoding="utf-8")
        assert scores.splitlines()[1].startswith("note-3-2-practice,")


def test_bank_guide_example_loads_as_a_bank(tmp_path: Path):
    """The annotated bank in docs/guide/banks.md is a bank worksheetgen accepts."""
    from worksheetgen.bank.load import load_banks

    guide = (DOCS / "guide" / "banks.md").read_text(encoding="utf-8")
    yaml_text, mark_all_text, pools_text = re.findall(r"^```yaml\n(.*?)^```$", guide, re.M | re.S)
    path = tmp_path / "example.yaml"
    path.write_text(yaml_text, encoding="utf-8")
    bank = load_banks([path])
    assert [spec.id for spec in bank.questions] == ["softmax-table"]
    assert bank.info.title == "Self-Attention Worksheet"
    # and the example of pools and shuffled order
    path = tmp_path / "pools.yaml"
    path.write_text(pools_text, encoding="utf-8")
    bank = load_banks([path])
    assert bank.info.shuffle is True
    (pool,) = [e for e in bank.layout if not isinstance(e, str)]
    assert [e if isinstance(e, str) else e.id for e in bank.layout] == [
        "heads-warmup",
        "attention-slot",
    ]
    assert pool.alternatives == ("causal-table", "softmax-table", "scale-row")
    # and the example of a question with several right options
    path = tmp_path / "mark-all.yaml"
    path.write_text(mark_all_text, encoding="utf-8")
    (spec,) = load_banks([path]).questions
    assert spec.family == "mark-all"


def test_architecture_page_names_every_package_and_the_enforced_layers():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11 and later

    text = (DOCS / "design" / "architecture.md").read_text(encoding="utf-8")
    packages = sorted(p.parent.name for p in (ROOT / "worksheetgen").glob("*/__init__.py"))
    assert [p for p in packages if f"`{p}/`" not in text] == []
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    layers = next(
        c["layers"] for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"
    )
    (block,) = re.findall(r"^## Layers\n.*?^```\n(.*?)^```$", text, re.M | re.S)
    assert block.splitlines() == layers


def test_readme_command_examples_run_in_order(runner, tmp_path: Path, monkeypatch):
    """Each of the five commands' examples, after the set-up command's own build (without
    PDFs, which the TeX tests cover; ``my.yaml`` is a copy of the default bank)."""
    from worksheetgen.cli import main

    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "banks", tmp_path / "banks")
    shutil.copy(ROOT / "banks" / "default.yaml", tmp_path / "my.yaml")
    examples = [
        line
        for block in _sh_blocks(ROOT / "README.md")[2:]
        for line in block.splitlines()
        if line.strip()
    ]
    assert sorted({shlex.split(line)[1] for line in examples}) == [
        "build",
        "check",
        "export",
        "families",
        "grade",
    ]
    setup = runner.invoke(main, ["build", "--seed", "42", "--no-pdf", "--quiet"])
    assert setup.exit_code == 0, setup.output
    for line in examples:
        words = shlex.split(line)
        assert words[0] == "worksheetgen"
        args = words[1:]
        if args[0] == "build":
            args.append("--no-pdf")
        if args[0] == "grade" and "--template" not in args:
            # a TA fills in the template first: one value is enough to grade
            responses = tmp_path / "responses.csv"
            rows = responses.read_text(encoding="utf-8").splitlines()
            rows[1] += "0.5"
            responses.write_text("\n".join(rows) + "\n", encoding="utf-8")
        result = runner.invoke(main, args)
        assert result.exit_code == 0, (line, result.output)
    assert (tmp_path / "grades" / "scores.csv").is_file()
    assert (tmp_path / "output" / "self-attention-seed42" / "canvas-qti.zip").is_file()


def test_the_cli_references_synopsis_names_every_build_option():
    """The synopsis at the top of docs/reference/cli.md lists every option of build's --help."""
    from click.testing import CliRunner

    from worksheetgen.cli import main

    text = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    synopsis = text.split("```")[1]
    build = synopsis.split("worksheetgen init")[0]
    helptext = CliRunner().invoke(main, ["build", "--help"]).output
    options = set(re.findall(r"^\s+(--[a-z-]+)", helptext, re.M)) - {"--help"}
    missing = sorted(o for o in options if o not in build)
    assert not missing, missing
