"""docs/reference/key.schema.json describes what the one reader of key.json accepts.

Every key the bundled banks build (a sheet, a roster class and versions) fits the schema and
the reader; keys broken by hand are refused by both; the schema's enumerations are the
reader's own (kinds, carried-forward steps, format and version).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.golden.outputs import BANKS, Case
from tests.paths import ROOT
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


# The contract, field by field (issue 35, section 5): every field the schema names is written
# by a real build and read back by the reader into its records with the value the file holds.

#: builds that, beside the bundled banks' (``built_keys``), write the optional fields: pools,
#: shuffled order, a roster in large print, a course secret, German with its decimal comma,
#: no carried credit; points per part on scannable versions; mark all that apply; one decimal
CONTRACT_BUILDS: dict[str, dict[str, Any]] = {
    "pools": dict(
        banks=(str(ROOT / "tests" / "banks" / "pools.yaml"),),
        roster=str(ROOT / "tests" / "golden" / "roster.csv"),
        shuffle=True,
        secret=b"a course secret of the contract test",
        language="de",
        large_print=True,
        carry=False,
        course="Contract course",
    ),
    "part-points": dict(
        banks=(str(ROOT / "tests" / "banks" / "part_points.yaml"),), versions=3, scannable=True
    ),
    "mark-all": dict(banks=(str(ROOT / "tests" / "fixtures" / "mark-all.yaml"),)),
    # at one decimal a slip's printed answer can lie within the key's margin: coincident[].margin
    "one-decimal": dict(banks=(str(ROOT / "banks" / "practice.yaml"),), decimals=1),
}

#: fields the reader checks but keeps in no record, and why: the file's kind and version (the
#: reader refuses another), the order flag (each sheet's question numbers say it), a slot's
#: question ids (checked against the sheets' questions, which carry their slot), and the
#: slips left out of the distractors (for people reading the key; nothing grades with them)
CHECKED_NOT_KEPT = {
    "format",
    "version",
    "shuffle",
    "slots[].questions",
    "sheets[].questions[].coincident",
    "sheets[].questions[].coincident[].misconception",
    "sheets[].questions[].coincident[].description",
    "sheets[].questions[].coincident[].same_as",
    "sheets[].questions[].coincident[].margin",
}


#: objects the schema leaves open on purpose: a variant's drawn inputs (it types those the
#: grader computes with; a family may draw more)
OPEN = {"sheets[].questions[].given"}


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _schema_fields(node: Any, path: str, out: dict[str, set[str]], seen: tuple = ()) -> None:
    """Every field path the schema names (``sheets[].questions[].given.Q``), with what each
    object path names under it (for a map, ``{*}``: any key)."""
    if not isinstance(node, dict):
        return
    if "$ref" in node:
        if node["$ref"] in seen:
            return
        seen = (*seen, node["$ref"])
        node = _resolve(node)
    for key in ("oneOf", "anyOf", "allOf"):
        for branch in node.get(key, []):
            _schema_fields(branch, path, out, seen)
    if "then" in node:
        _schema_fields(node["then"], path, out, seen)
    for name, sub in node.get("properties", {}).items():
        child = f"{path}.{name}" if path else name
        out.setdefault(path, set()).add(name)
        out.setdefault(child, set())
        _schema_fields(sub, child, out, seen)
    if node.get("type") == "object" and not any(
        k in node for k in ("properties", "additionalProperties", "$ref", "oneOf", "anyOf")
    ):
        out.setdefault(path, set()).add("{*}")  # an object of any keys (a carried step's args)
    if isinstance(node.get("additionalProperties"), dict):
        out.setdefault(path, set()).add("{*}")
        _schema_fields(node["additionalProperties"], f"{path}{{*}}", out, seen)
    if isinstance(node.get("items"), dict):
        _schema_fields(node["items"], f"{path}[]", out, seen)


def schema_fields() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    _schema_fields(SCHEMA, "", found)
    return found


def written_fields(data: Any, named: dict[str, set[str]], path: str = "") -> set[str]:
    """The field paths a key.json holds, read as the schema reads it (a map's keys are one
    ``{*}``); a field the schema does not name is ``!`` and its path."""
    found: set[str] = set()
    if isinstance(data, list):
        for item in data:
            found |= written_fields(item, named, f"{path}[]")
    elif isinstance(data, dict):
        names = named.get(path, set())
        for key, value in data.items():
            if key in names:
                child = f"{path}.{key}" if path else key
                found.add(child)
            elif "{*}" in names or path in OPEN:
                child = f"{path}{{*}}"
            else:
                found.add(f"!{path}.{key}" if path else f"!{key}")
                continue
            found |= written_fields(value, named, child)
    return found


def _field_paths(fields: dict[str, set[str]]) -> set[str]:
    return {p for p in fields if p and not p.endswith(("{*}", "[]")) and "{*}." not in p}


@pytest.fixture(scope="module")
def contract_keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from worksheetgen.pipeline.build import build
    from worksheetgen.pipeline.options import BuildOptions

    keys = {}
    for name, options in CONTRACT_BUILDS.items():
        out = tmp_path_factory.mktemp(name)
        done = build(BuildOptions(seed=42, out=str(out), pdf=False, **options))
        keys[name] = json.loads((done.folder / "key.json").read_text(encoding="utf-8"))
    return keys


def test_every_field_the_schema_names_is_written_and_every_field_written_is_named(
    built_keys, contract_keys
):
    named = schema_fields()
    written: set[str] = set()
    for data in [*built_keys.values(), *contract_keys.values()]:
        written |= written_fields(data, named)
    unnamed = sorted(p[1:] for p in written if p.startswith("!"))
    assert unnamed == [], f"key.json fields the schema does not name: {unnamed}"
    never = sorted(_field_paths(named) - written)
    assert never == [], f"fields the schema names that no build writes: {never}"


def _plain(value: Any) -> Any:
    """Tuples as lists and mappings as dicts, to compare a record's value with the JSON's."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _answers(variant: Any) -> dict[str, Any]:
    return {p.answer.name: p.answer for p in variant.parts if p.answer is not None}


def _record_fields(data: dict[str, Any], doc: Any) -> dict[str, list[tuple[Any, Any]]]:
    """Each field path of key.json ``data`` with (the file's value, the record's) for every
    place it is written; the record's value is what the reader made of it."""
    got: dict[str, list[tuple[Any, Any]]] = {}

    def pair(path: str, file_value: Any, record_value: Any) -> None:
        got.setdefault(path, []).append((_plain(file_value), _plain(record_value)))

    for name in ("seed", "language", "decimal", "secret"):
        if name in data:
            pair(name, data[name], getattr(doc, name))
    if "title" in data:
        pair("title", data["title"] or "Worksheet", doc.title)
    if "course" in data:
        pair("course", data["course"] or "", doc.course)
    by_qid = {q.qid: q for q in doc.questions}
    if "slots" in data:
        pair("slots", [slot["id"] for slot in data["slots"]], [q.qid for q in doc.questions])
    for slot in data.get("slots", []):
        pair("slots[].id", slot["id"], by_qid[slot["id"]].qid)
        if "pick" in slot:
            pair("slots[].pick", slot["pick"], by_qid[slot["id"]].pick)
    pair("sheets", len(data["sheets"]), len(doc.sheets))
    for raw, sheet in zip(data["sheets"], doc.sheets, strict=True):
        s = "sheets[]"
        pair(f"{s}.id", raw["id"], sheet.id)
        if "code" in raw:
            pair(f"{s}.code", raw["code"], sheet.code)
        if "label" in raw:
            pair(f"{s}.label", raw["label"] or raw["id"], sheet.label)
        if "student" in raw:
            student = raw["student"]
            pair(f"{s}.student", student is None, sheet.student is None)
            for field in ("name", "id", "large_print"):
                if student is not None and field in student:
                    pair(f"{s}.student.{field}", student[field], getattr(sheet.student, field))
        pair(f"{s}.questions", len(raw["questions"]), len(sheet.variants))
        for q, v in zip(raw["questions"], sheet.variants, strict=True):
            w = f"{s}.questions[]"
            answers = _answers(v)
            simple = {
                "id": v.qid,
                "number": v.number,
                "slot": v.slot,
                "family": v.family,
                "title": v.title,
                "points": v.points,
                "part_points": v.part_points,
                "decimals": v.decimals,
                "carry": v.carry,
                "format": v.format,
                "prompt": v.prompt,
                "given": v.given,
                "choice_answer": v.choice_answer,
            }
            for name, record in simple.items():
                if name in q:
                    pair(f"{w}.{name}", q[name], record)
            for name, value in q.get("given", {}).items():
                pair(f"{w}.given.{name}", value, v.given[name])
            per_answer = {
                "labels": lambda a: a.label,
                "answer": lambda a: a.value,
                "rounded": lambda a: a.rounded,
                "kinds": lambda a: a.kind,
                "tolerance": lambda a: a.tolerance,
                "options": lambda a: a.options,
                "explanations": lambda a: a.explanation,
                "exact": lambda a: a.cells[0].exact if a.rows else None,
            }
            for name, of in per_answer.items():
                for answer, value in q.get(name, {}).items():
                    if answer not in answers:
                        continue  # an answer no part asks (the choice item's own)
                    if name == "exact" and isinstance(value, list):
                        value = next(iter(_flat(value)), None)
                    if name == "labels":
                        value = value or ""
                    pair(f"{w}.{name}", value, of(answers[answer]))
            if "all_or_nothing" in q:
                pair(
                    f"{w}.all_or_nothing",
                    sorted(q["all_or_nothing"]),
                    sorted(n for n, a in answers.items() if a.all_or_nothing),
                )
            lists = {
                "shown": (v.shown, ("label", "kind", "value")),
                "shown_steps": (v.shown_steps, ("title", "text", "math")),
                "distractors": (
                    v.distractors,
                    ("misconception", "description", "answer", "rounded"),
                ),
                "choices": (v.choices, ("label", "text", "correct", "misconception", "rounded")),
            }
            for name, (records, fields) in lists.items():
                if name not in q:
                    continue
                pair(f"{w}.{name}", len(q[name]), len(records))
                for item, record in zip(q[name], records, strict=True):
                    for field in fields:
                        if field in item:
                            value = item[field]
                            if field == "description" and value is None:
                                value = ""
                            pair(f"{w}.{name}[].{field}", value, getattr(record, field))
            if "parts" in q:
                pair(f"{w}.parts", len(q["parts"]), len(v.parts))
                for item, part in zip(q["parts"], v.parts, strict=True):
                    pair(f"{w}.parts[].prompt", item["prompt"], part.prompt)
                    if "answer" in item:
                        pair(
                            f"{w}.parts[].answer", item["answer"], part.answer and part.answer.name
                        )
                    for field in ("row_label", "col_label"):
                        if item.get(field) is not None:
                            pair(f"{w}.parts[].{field}", item[field], getattr(part, field))
            if "carries" in q:
                pair(f"{w}.carries", len(q["carries"]), len(v.carries))
                for item, carry in zip(q["carries"], v.carries, strict=True):
                    pair(f"{w}.carries[].answer", item["answer"], carry.answer)
                    pair(f"{w}.carries[].from", item["from"], carry.inputs)
                    pair(f"{w}.carries[].steps", item["steps"], carry.steps)
                    pair(f"{w}.carries[].args", item["args"], carry.args)
    return got


def _flat(value: Any) -> list[Any]:
    if isinstance(value, list):
        return [x for v in value for x in _flat(v)]
    return [value]


def test_every_field_written_is_read_into_the_records_with_its_value(built_keys, contract_keys):
    """Read each key back: each field's value in the records is the file's (a field the reader
    checks but keeps in no record is listed in CHECKED_NOT_KEPT, with the reason)."""
    named = schema_fields()
    compared: set[str] = set()
    wrong: list[str] = []
    for key_name, data in [*built_keys.items(), *contract_keys.items()]:
        doc = parse_key(data, key_name)
        for path, pairs in _record_fields(data, doc).items():
            compared.add(path)
            for file_value, record_value in pairs:
                if file_value != record_value:
                    wrong.append(f"{key_name}: {path}: file {file_value!r}, read {record_value!r}")
                    break
    assert wrong == [], "\n".join(wrong)
    unread = sorted(_field_paths(named) - compared - CHECKED_NOT_KEPT)
    assert unread == [], f"fields the schema names that the reader's records do not hold: {unread}"
    assert CHECKED_NOT_KEPT <= _field_paths(named) - compared


def test_the_contract_check_names_a_field_by_its_path():
    """What the two tests above see: a field the schema does not name, by its JSON path; a
    drawn input the schema leaves open is no such field; an answer's name is a map's key."""
    named = schema_fields()
    question = {"id": "q1", "colour": "red", "given": {"zeta": 1}, "answer": {"A": 1.0}}
    found = written_fields({"sheets": [{"id": "A", "questions": [question]}]}, named)
    assert "!sheets[].questions[].colour" in found
    assert {"sheets[].questions[].given", "sheets[].questions[].answer"} <= found
    assert not any("zeta" in p or p.endswith(".A") for p in found)
    assert "sheets[].questions[].coincident[].margin" in _field_paths(named)
