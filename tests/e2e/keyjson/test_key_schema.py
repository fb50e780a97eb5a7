"""docs/reference/key.schema.json describes what the one reader of key.json accepts.

Every key the bundled banks build (a sheet, a roster class and versions) fits the schema and
the reader; keys broken by hand are refused by both; the schema's enumerations are the
reader's own (kinds, carried-forward steps, format and version).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.golden.outputs import BANKS, Case
from tests.unit.keyjson.test_key_schema import SCHEMA
from worksheetgen.cli import main
from worksheetgen.errors import KeyFileError
from worksheetgen.grading.key import parse_key as grade_parse_key
from worksheetgen.keyjson.read import parse_key

VALIDATOR = Draft202012Validator(SCHEMA)


@pytest.fixture(scope="module")
def built_keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """key.json of every bundled bank at seed 42: one sheet, the roster class, 12 versions."""
    from click.testing import CliRunner

    runner = CliRunner()
    keys = {}
    for bank in BANKS:
        for kind in ("sheet", "roster", "versions"):
            case = Case(bank, 42, kind)
            out = tmp_path_factory.mktemp(case.name)
            result = runner.invoke(
                main, ["build", *case.arguments(), "--no-pdf", "--out", str(out), "-q"]
            )
            assert result.exit_code == 0, result.output
            (key,) = out.glob("*/key.json")
            keys[case.name] = json.loads(key.read_text(encoding="utf-8"))
    return keys


def test_every_key_the_bundled_banks_build_fits_the_schema(built_keys):
    assert len(built_keys) == 3 * len(BANKS)
    for name, data in built_keys.items():
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in VALIDATOR.iter_errors(data)]
        assert errors == [], name
        parse_key(data, name)  # and the reader, which the schema documents, takes it


def _first_question(data: dict[str, Any]) -> dict[str, Any]:
    return data["sheets"][0]["questions"][0]


def _first_numeric(data: dict[str, Any]) -> str:
    q = _first_question(data)
    return next(n for n, k in q["kinds"].items() if k in ("matrix", "vector", "scalar"))


BROKEN: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    (
        "another version",
        lambda d: d.update(version=7),
        "version: expected 2 (or 1, a key of an older build), got 7",
    ),
    ("a foreign file", lambda d: d.update(format="moodle"), "format: expected 'worksheetgen-key'"),
    ("no sheets", lambda d: d.pop("sheets"), "(top).sheets: expected a value"),
    ("no sheet", lambda d: d.update(sheets=[]), "sheets: expected at least one sheet"),
    ("a negative seed", lambda d: d.update(seed=-1), "seed: expected a non-negative integer"),
    (
        "an unknown kind",
        lambda d: _first_question(d)["kinds"].update({_first_numeric(d): "table"}),
        "expected one of matrix, vector, scalar, shape, choice, text, got 'table'",
    ),
    (
        "an unknown carried step",
        lambda d: _first_question(d).update(
            carries=[{"answer": "A", "from": ["S"], "steps": ["guess"], "args": {}}]
        ),
        "carries[0].steps[0]: expected one of matmul",
    ),
    (
        "a negative tolerance",
        lambda d: _first_question(d)["tolerance"].update({_first_numeric(d): -0.5}),
        "expected a number >= 0, got -0.5",
    ),
    (
        "too many points",
        lambda d: _first_question(d).update(points=5000),
        "points: expected a number from 0 to 1000",
    ),
    (
        "a question without its title",
        lambda d: _first_question(d).pop("title"),
        "sheets[0].questions[0].title: expected a value, got nothing (missing)",
    ),
    (
        "a question titled null",
        lambda d: _first_question(d).update(title=None),
        "sheets[0].questions[0].title: expected a string, got null",
    ),
    (
        "a question without its carried steps",
        lambda d: _first_question(d).pop("carries"),
        "sheets[0].questions[0].carries: expected a value, got nothing (missing)",
    ),
    (
        "a decimal separator other than a point or a comma",
        lambda d: d.update(decimal=";"),
        "decimal: expected '.' or ',', got ';'",
    ),
    (
        "a language not shipped",
        lambda d: d.update(language="xx"),
        "language: expected one of en, de, got 'xx'",
    ),
    (
        "a sheet id with spaces around it",
        lambda d: d["sheets"][0].update(id=" A "),
        "sheets[0].id: expected an id",
    ),
]


@pytest.mark.parametrize("what,change,message", BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_key_is_refused_by_the_schema_and_by_the_reader(built_keys, what, change, message):
    data = copy.deepcopy(built_keys["practice-seed42-sheet"])
    change(data)
    assert not VALIDATOR.is_valid(data), what
    with pytest.raises(KeyFileError) as export_refusal:
        parse_key(data, "key.json")
    assert message in str(export_refusal.value)
    with pytest.raises(KeyFileError) as grade_refusal:  # the same reader, the same error
        grade_parse_key(data, "key.json")
    assert str(grade_refusal.value) == str(export_refusal.value)


def _without_the_families(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the family registry unavailable: any question put to it fails the test."""
    from worksheetgen import families
    from worksheetgen.families.registry import Registry

    def asked(self: Registry) -> Any:
        raise AssertionError("the reader asked the installed families")

    monkeypatch.setattr(Registry, "_loaded", asked)
    monkeypatch.setattr(families, "_INSTANCES", {})


def _responses(doc: Any) -> str:
    """A responses CSV for every sheet: each number as the key prints it, but the first entry
    of each question wrong (so later answers are graded by their carried steps)."""
    lines = ["student,question,answer,entry,value"]
    for sheet in doc.sheets:
        for v in sheet.variants:
            first = True
            for p in v.parts:
                a = p.answer
                if a is None or a.kind not in ("matrix", "vector", "scalar"):
                    continue
                for i, row in enumerate(a.rows):
                    for j, cell in enumerate(row):
                        entry = {"matrix": f'"{i + 1},{j + 1}"', "vector": f"{j + 1}"}
                        value = cell.printed
                        if first and cell.value is not None:
                            value, first = f"{cell.value + 1.5:.2f}", False
                        lines.append(f"{sheet.id},{v.qid},{a.name},{entry.get(a.kind, '')},{value}")
    return "\n".join(lines) + "\n"


def _graded(data: Any, folder: Path, responses: str) -> dict[str, str]:
    """scores.csv and report.md of ``grade`` on key.json ``data`` and ``responses`` (the
    folder's name left out)."""
    from worksheetgen.report.grade import grade_files

    folder.mkdir()
    (folder / "key.json").write_text(json.dumps(data), encoding="utf-8")
    (folder / "r.csv").write_text(responses, encoding="utf-8")
    grade_files(folder / "key.json", folder / "r.csv", folder / "g", pictures=False)
    return {
        n: (folder / "g" / n).read_text("utf-8").replace(str(folder), "")
        for n in ("scores.csv", "report.md")
    }


def _exported(data: Any) -> dict[str, bytes]:
    from worksheetgen.export import export_bytes

    return {fmt: export_bytes(data, fmt) for fmt in ("moodle", "gift", "qti")}


def _as_version_1(data: dict[str, Any]) -> dict[str, Any]:
    """The key as a version 1 build wrote it: a family's title null, no carried steps."""
    from worksheetgen.families import FAMILIES

    old = copy.deepcopy(data)
    old["version"] = 1
    for sheet in old["sheets"]:
        for q in sheet["questions"]:
            if q["title"] == FAMILIES[q["family"]].title:
                q["title"] = None
            del q["carries"]
    return old


def test_a_current_key_grades_and_exports_the_same_without_the_families(
    built_keys, monkeypatch, tmp_path
):
    """Everything grade and export use is in a current key: with the family registry
    unavailable, the records, the LMS files and the grades are the same."""
    data = built_keys["default-seed42-roster"]
    doc = parse_key(data)
    assert any(v.carries for v in doc.questions[0].variants + doc.questions[-1].variants)
    responses = _responses(doc)
    graded, exported = _graded(data, tmp_path / "with", responses), _exported(data)
    assert "right" in graded["report.md"] and "Not credited" in graded["report.md"]

    _without_the_families(monkeypatch)
    assert parse_key(data) == doc
    assert _exported(data) == exported
    assert _graded(data, tmp_path / "without", responses) == graded
    with pytest.raises(AssertionError, match="asked the installed families"):
        parse_key(_as_version_1(data))  # a version 1 key still asks them


def test_a_version_1_key_grades_and_exports_as_the_current_key_does(built_keys, tmp_path):
    """A key of an older build (titles null, no carried steps) is read with the families'
    titles and steps: the same grades and LMS files as the key a build writes now."""
    data = built_keys["default-seed42-roster"]
    old = _as_version_1(data)
    assert any(q["title"] is None for s in old["sheets"] for q in s["questions"])
    responses = _responses(parse_key(data))
    assert _graded(old, tmp_path / "old", responses) == _graded(data, tmp_path / "new", responses)
    assert _exported(old) == _exported(data)


def test_a_key_says_its_language_and_an_english_key_says_nothing(tmp_path):
    """A German build's key.json carries ``language`` (grade, scan and export read it); an
    English key is written as before, without it, and reads as English."""
    from click.testing import CliRunner

    keys = {}
    for code in ("en", "de"):
        out = tmp_path / code
        args = ["build", "--seed", "3", "--no-pdf", "--language", code, "--out", str(out), "-q"]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        (key,) = out.glob("*/key.json")
        keys[code] = json.loads(key.read_text(encoding="utf-8"))
    assert "language" not in keys["en"]
    assert keys["de"]["language"] == "de"
    for code, data in keys.items():
        assert list(VALIDATOR.iter_errors(data)) == []
        assert parse_key(data, f"{code}.json").language == code


def test_a_key_says_its_decimal_comma_and_a_point_key_says_nothing(tmp_path):
    """A build printed with a decimal comma (German's, or ``--decimal comma``) carries
    ``decimal: ","`` (grade, scan and export read it); a point is written as before, without
    it, also for a German build asked for points, and a key without it reads as a point."""
    from click.testing import CliRunner

    keys = {}
    for name, extra in {
        "en": [],
        "de": ["--language", "de"],
        "de-point": ["--language", "de", "--decimal", "point"],
        "en-comma": ["--decimal", "comma"],
    }.items():
        out = tmp_path / name
        args = ["build", "--seed", "3", "--no-pdf", "--out", str(out), "-q", *extra]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        (key,) = out.glob("*/key.json")
        keys[name] = json.loads(key.read_text(encoding="utf-8"))
    assert "decimal" not in keys["en"] and "decimal" not in keys["de-point"]
    assert keys["de"]["decimal"] == keys["en-comma"]["decimal"] == ","
    for name, data in keys.items():
        assert list(VALIDATOR.iter_errors(data)) == []
        assert parse_key(data, f"{name}.json").decimal == ("," if "decimal" in data else ".")
    # the answers themselves keep the point: the field says how the sheets showed them
    assert keys["de"]["sheets"] == keys["de-point"]["sheets"]
