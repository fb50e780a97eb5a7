"""Issue 35, section 2: ``scan`` reads key.json through the one reader before anything else,
so a damaged key is the one line ``export`` gives for it (no traceback, exit 1, nothing
written), not a KeyError from indexing the raw document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.paths import ROOT
from worksheetgen.cli import main
from worksheetgen.errors import KeyFileError
from worksheetgen.keyjson.read import load_key
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions
from worksheetgen.scan.positions import SCAN_FORMAT, SCAN_VERSION, key_codes


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A key.json of a class of three versions (no TeX needed)."""
    out = tmp_path_factory.mktemp("key")
    bank = str(ROOT / "banks" / "quiz.yaml")
    folder = build(BuildOptions(seed=3, versions=3, banks=(bank,), out=str(out), pdf=False)).folder
    return json.loads((folder / "key.json").read_text("utf-8"))


def _drop(path: list):
    def change(doc: dict) -> None:
        target = doc
        for step in path[:-1]:
            target = target[step]
        del target[path[-1]]

    return change


def _put(path: list, value):
    def change(doc: dict) -> None:
        target = doc
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value

    return change


CASES = {
    "no seed": _drop(["seed"]),
    "no sheets": _drop(["sheets"]),
    "no version": _drop(["version"]),
    "sheets not a list": _put(["sheets"], {"a": 1}),
    "a sheet without an id": _drop(["sheets", 1, "id"]),
    "a question id a number": _put(["sheets", 0, "questions", 0, "id"], 7),
    "a sheet without questions": _drop(["sheets", 2, "questions"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_damaged_key_is_the_line_export_gives(key, tmp_path: Path, case: str):
    doc = json.loads(json.dumps(key))
    CASES[case](doc)
    path = tmp_path / "key.json"
    path.write_text(json.dumps(doc, indent=1), "utf-8")
    # the scan.json of the undamaged key's build: only the key's damage is left to refuse
    build_code, _ = key_codes(key)
    positions = {"format": SCAN_FORMAT, "version": SCAN_VERSION, "build": build_code}
    positions |= {"paper": "a4", "box_mm": 4.0, "sheets": []}
    (tmp_path / "scan.json").write_text(json.dumps(positions), "utf-8")
    page = tmp_path / "page.png"
    page.write_bytes(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(KeyFileError) as exported:  # what export says of this key
        load_key(path)
    out = tmp_path / "out"
    scanned = CliRunner().invoke(main, ["scan", str(page), "--key", str(path), "--out", str(out)])
    assert scanned.exit_code == 1, scanned.output
    line = scanned.output
    assert "Traceback" not in line and line.count("\n") == 1, line
    assert line.startswith(f"worksheetgen: error: {path}: "), line
    assert line == f"worksheetgen: error: {exported.value}\n"  # export's words for the key
    assert scanned.exception is None or isinstance(scanned.exception, SystemExit)
    assert not out.exists()


def test_every_command_that_reads_a_key_hands_the_course_secret_to_its_reader(tmp_path: Path):
    """The course secret travels to the key's reader as a parameter (issue 35, section 3):
    grade, grade --template, export and scan each refuse a key built with another secret in
    one line and write nothing, and read it with the secret it was built with."""
    runner = CliRunner()
    built = tmp_path / "built"
    first = {"WORKSHEETGEN_SECRET": "the first course secret"}
    args = ["build", "--seed", "5", "--no-pdf", "--out", str(built)]
    assert runner.invoke(main, [*args, "--bank", str(ROOT / "banks" / "quiz.yaml")], env=first)
    key = next(built.rglob("key.json"))
    (tmp_path / "r.csv").write_text("student,question,answer,entry,value\n", "utf-8")
    page = tmp_path / "page.png"
    page.write_bytes(b"\x89PNG\r\n\x1a\n")
    out = tmp_path / "out"
    commands = {
        "grade": ["grade", "--key", str(key), str(tmp_path / "r.csv"), "--out", str(out)],
        "template": ["grade", "--key", str(key), "--template", str(out / "t.csv")],
        "export": ["export", "--to", "gift", "--key", str(key), "--out", str(out / "x.txt")],
        "scan": ["scan", str(page), "--key", str(key), "--out", str(out)],
    }
    other = {"WORKSHEETGEN_SECRET": "the second course secret"}
    for name, command in commands.items():
        refused = runner.invoke(main, command, env=other)
        assert refused.exit_code == 1, (name, refused.output)
        line = refused.output
        assert line.count("\n") == 1 and "Traceback" not in line, (name, line)
        # (a long path is shortened in the middle: the start and the end of the line)
        assert line.startswith(f"worksheetgen: error: {str(key)[:30]}"), (name, line)
        assert "(WORKSHEETGEN_SECRET, " in line and "got one built with another" in line
        assert "the first course secret" not in line and "the second" not in line
        assert not out.exists(), name
    # with the secret it was built with, the key is read (and refused only for what follows)
    for name, command in commands.items():
        passed = runner.invoke(main, command, env=first)
        assert "secret" not in passed.output, (name, passed.output)
