"""Fuzz: mutated banks and rosters give a valid build or one clean error line, nothing else.

Mutations start from the bundled banks and a small roster: structural ones (delete a field,
give it a value of another type, misspell a key, duplicate or swap items) on the parsed
YAML, and textual ones (cut, repeat, insert YAML punctuation, tags, anchors, NUL bytes,
control characters) on the raw text. Every outcome must be a Build (with its documents and
key.json) or a WorksheetgenError whose message is one line naming the file; any other
exception, and any SolveError/InvariantError (a wrong key), fails the test.

A behaviour across modules, not one module's tests (bank, bank.load, bank.roster, bank.yamldoc,
errors, keyjson.write, pipeline, pipeline.sheet).
"""

from __future__ import annotations

import copy
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from tests.conftest import FIXTURES, ROOT
from tests.solved import make_build, render_all
from worksheetgen.bank import yamldoc as bank_module
from worksheetgen.bank.load import load_banks
from worksheetgen.bank.roster import read_roster
from worksheetgen.bank.yamldoc import parse_yaml
from worksheetgen.errors import InvariantError, SolveError, WorksheetgenError
from worksheetgen.keyjson.write import key_json
from worksheetgen.pipeline import build as pipeline

BANKS = [ROOT / "banks" / "default.yaml", ROOT / "banks" / "practice.yaml", FIXTURES / "small.yaml"]
# WORKSHEETGEN_FUZZ_EXAMPLES=5000 fuzzes longer, with fresh random examples on every run
LONG = os.environ.get("WORKSHEETGEN_FUZZ_EXAMPLES")
FUZZ = settings(
    max_examples=int(LONG or 150),
    deadline=None,
    derandomize=LONG is None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

ODD_VALUES = [
    None,
    True,
    False,
    0,
    -1,
    1,
    3,
    4096,
    10**12,
    -(10**30),
    2.5,
    float("nan"),
    float("inf"),
    "",
    "x",
    "softmax",
    "a" * 5000,
    [],
    {},
    [[1, 2], [3]],
    [[1, 2], [3, 4]],
    [1, [2, [3]]],
    {"min": 4, "max": 2},
    {"choices": []},
    {"choices": [2, 3]},
    {"min": 2},
    "{{ T }}",
    "{{ nope }}",
    "{% for i in range(99999) %}{% endfor %}",
    "$\\input{/etc/passwd}$",
    "{{ ''.__class__ }}",
    "\x00",
    "é\u202e",
    "1e400",
]
TEXT_PIECES = [
    ":",
    ": ",
    "-",
    "- ",
    "  ",
    "\t",
    "\n",
    "{",
    "}",
    "[",
    "]",
    ",",
    "&a ",
    "*a",
    "!!python/object/apply:os.system ['id'] ",
    "!x ",
    "<<: ",
    "\x00",
    "\x1b",
    "é",
    "'",
    '"',
    "#",
    "|\n",
    ">\n",
    "---\n",
    "...\n",
    "? ",
    "%YAML 1.1\n",
    "\ufeff",
    "{{",
    "}}",
    "{%",
    "$",
    "\\",
    "\r\n",
]


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a parsed YAML document."""
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += paths(v, prefix + (i,))
    return out


def get(node: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        node = node[p]
    return node


@st.composite
def mutated_data(draw: st.DrawFn, data: Any) -> Any:
    """``data`` after one to three structural mutations."""
    for _ in range(draw(st.integers(1, 3))):
        candidates = [p for p in paths(data) if p]
        if not candidates:
            break
        path = draw(st.sampled_from(candidates))
        parent, key = get(data, path[:-1]), path[-1]
        op = draw(st.sampled_from(["delete", "replace", "rename", "duplicate", "swap"]))
        if op == "delete":
            del parent[key]
        elif op == "replace":
            parent[key] = copy.deepcopy(draw(st.sampled_from(ODD_VALUES)))
        elif op == "rename" and isinstance(parent, dict):
            parent[str(key) + draw(st.sampled_from(["s", "_", "x", ""]))] = parent.pop(key)
        elif op == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif op == "swap" and isinstance(parent, list) and len(parent) > 1:
            other = draw(st.integers(0, len(parent) - 1))
            parent[key], parent[other] = parent[other], parent[key]
    return data


@st.composite
def mutated_text(
    draw: st.DrawFn, text: str, pieces: list[str] | None = None, span: int = 40
) -> str:
    """``text`` after one to four edits: cut, repeat, insert odd pieces, truncate."""
    pieces = TEXT_PIECES if pieces is None else pieces
    for _ in range(draw(st.integers(1, 4))):
        n = len(text)
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + span)))
        op = draw(st.sampled_from(["cut", "repeat", "insert", "truncate"]))
        if op == "cut":
            text = text[:i] + text[j:]
        elif op == "repeat":
            text = text[:j] + text[i:j] + text[j:]
        elif op == "insert":
            text = text[:i] + draw(st.sampled_from(pieces)) + text[i:]
        else:
            text = text[:i]
    return text


def outcome(run: Any, shown: str) -> str:
    """Run ``run()``: 'ok', or the clean error's class; anything else fails the test."""
    try:
        run()
    except (SolveError, InvariantError):
        raise  # a wrong key is a bug, never bad input
    except WorksheetgenError as exc:
        message = str(exc)
        assert "\n" not in message and "Traceback" not in message, message
        assert message.startswith(shown), message
        return type(exc).__name__
    return "ok"


def build_bank(path: Path, seed: int) -> None:
    built = make_build(load_banks([path]), seed)
    render_all(built)
    key_json(built)


@FUZZ
@given(source=st.sampled_from(BANKS), data=st.data(), seed=st.integers(0, 2**63 - 1))
def test_structurally_mutated_bank_builds_or_fails_cleanly(source, data, seed) -> None:
    parsed = yaml.safe_load(source.read_text("utf-8"))
    mutated = data.draw(mutated_data(parsed), label="bank")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bank.yaml"
        path.write_text(yaml.safe_dump(mutated, allow_unicode=True), encoding="utf-8")
        event(outcome(lambda: build_bank(path, seed), str(path)))


@FUZZ
@given(source=st.sampled_from(BANKS), data=st.data(), seed=st.integers(0, 2**63 - 1))
def test_textually_mutated_bank_builds_or_fails_cleanly(source, data, seed) -> None:
    text = data.draw(mutated_text(source.read_text("utf-8")), label="bank text")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bank.yaml"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        event(outcome(lambda: build_bank(path, seed), str(path)))


ROSTER = (
    'name,id,email\nAda Lovelace,s01,ada@example.org\n"O\'Brien, Zoë",s02,\n'
    "王小明,,wang@example.org\nŁukasz Ź,s04,\n"
)
ROSTER_PIECES = [
    ",",
    ";",
    "\t",
    '"',
    "\n",
    "\r\n",
    "\x00",
    "\x07",
    "\ufeff",
    "name",
    "id",
    "s01",
    ",,",
    " ",
    "é",
    "=cmd|' /C calc'!A0",
    "\\input{x}",
    "$x$",
    "{{ T }}",
]
ROSTER_BANK = "questions:\n  - id: w\n    family: heads\n    params: {d: 8, h: 2}\n"


@st.composite
def mutated_roster(draw: st.DrawFn) -> bytes:
    text = draw(mutated_text(ROSTER, ROSTER_PIECES, span=20))
    data = text.encode("utf-8")
    if draw(st.integers(0, 9)) == 0:
        data = text.encode("latin-1", "replace")
    return data


@FUZZ
@given(content=mutated_roster(), seed=st.integers(0, 2**63 - 1))
def test_mutated_roster_builds_a_class_or_fails_cleanly(content, seed) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        roster, bank = root / "roster.csv", root / "bank.yaml"
        roster.write_bytes(content)
        bank.write_text(ROSTER_BANK, encoding="utf-8")
        shown = str(roster)
        result = outcome(lambda: read_roster(roster), shown)
        event(f"read: {result}")
        if result != "ok":
            return
        options = pipeline.BuildOptions(
            seed=seed, banks=(str(bank),), out=str(root / "out"), pdf=False, roster=str(roster)
        )
        built = outcome(lambda: pipeline.build(options), shown)
        assert built == "ok"
        (folder,) = (root / "out").iterdir()
        assert {"sheets.tex", "keys.tex", "key.json", "manifest.json"} <= {
            p.name for p in folder.iterdir()
        }


def parsed_outcome(text: str) -> Any:
    """What parse_yaml makes of ``text``: the document (data and lines) or the error line."""
    try:
        doc = parse_yaml(text, "bank.yaml")
    except WorksheetgenError as exc:
        return str(exc)
    return (repr(doc.data), doc.lines, doc.starts)


@FUZZ
@given(source=st.sampled_from(BANKS), data=st.data())
def test_libyaml_and_pyyaml_read_mutated_banks_alike(source, data) -> None:
    text = data.draw(mutated_text(source.read_text("utf-8")), label="bank text")
    fast = parsed_outcome(text)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(bank_module, "_compose_fast", lambda text: None)
        slow = parsed_outcome(text)
    assert fast == slow
