"""The key reader raises one error type, ``KeyFileError``, whichever command reads the key
(issue 35, section 3): a damaged key.json is the same error, with the same line, to
``export``, ``grade``, ``scan`` and the responses template, and so is a key of another
course secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from worksheetgen import api
from worksheetgen.errors import KeyFileError
from worksheetgen.keyjson.read import ExpectedSecret, load_key

DAMAGED: list[tuple[str, Any]] = [
    ("no seed", lambda d: d.pop("seed")),
    ("a wrong version", lambda d: d.update(version=7)),
    ("sheets not a list", lambda d: d.update(sheets=None)),
]


@pytest.fixture(scope="module")
def good_key(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("built")
    api.build(seed=3, banks="banks/default.yaml", out=out, pdf=False)
    (key,) = out.glob("*/key.json")
    return json.loads(key.read_text("utf-8"))


def _every_reader(key: Path, tmp: Path) -> list[tuple[str, BaseException]]:
    """What each command raises for ``key``."""
    responses = tmp / "responses.csv"
    responses.write_text("sheet,question,part,answer\n", "utf-8")
    page = tmp / "page.png"
    page.write_bytes(b"")
    calls = {
        "export": lambda: api.export(key, "moodle", out=tmp / "moodle.xml"),
        "grade": lambda: api.grade(key, responses, out=tmp / "graded"),
        "scan": lambda: api.scan(page, key, out=tmp / "scanned"),
        "template": lambda: api.responses_template(key, tmp / "template.csv"),
    }
    raised = []
    for name, call in calls.items():
        with pytest.raises(KeyFileError) as refusal:
            call()
        raised.append((name, refusal.value))
    return raised


@pytest.mark.parametrize("what,change", DAMAGED, ids=[d[0] for d in DAMAGED])
def test_a_damaged_key_is_one_error_type_with_one_line_to_every_command(
    good_key, tmp_path, what, change
):
    data = json.loads(json.dumps(good_key))
    change(data)
    key = tmp_path / "key.json"
    key.write_text(json.dumps(data), "utf-8")
    raised = _every_reader(key, tmp_path)
    lines = {str(error) for _, error in raised}
    assert len(lines) == 1, (what, raised)
    (line,) = lines
    assert line.startswith(str(key)), line


def test_a_key_of_another_secret_is_the_same_error_type(good_key, tmp_path):
    data = dict(good_key, secret="sha256:" + "0" * 16)
    key = tmp_path / "key.json"
    key.write_text(json.dumps(data), "utf-8")
    with pytest.raises(KeyFileError, match="another"):
        load_key(key, ExpectedSecret("sha256:" + "1" * 16, "WORKSHEETGEN_SECRET"))


def test_a_missing_key_is_the_same_error_type(tmp_path):
    with pytest.raises(KeyFileError):
        load_key(tmp_path / "nothing.json")
