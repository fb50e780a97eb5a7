"""docs/reference/key.schema.json describes what the one reader of key.json accepts.

Every key the bundled banks build (a sheet, a roster class and versions) fits the schema and
the reader; keys broken by hand are refused by both; the schema's enumerations are the
reader's own (kinds, carried-forward steps, format and version).

A behaviour across modules, not one module's tests (keyjson.read, keyjson.write, language).
"""

from __future__ import annotations

import json

from jsonschema import Draft202012Validator

from tests.paths import ROOT
from worksheetgen.keyjson.read import CARRY_STEPS, KEY_VERSIONS, KINDS
from worksheetgen.keyjson.write import KEY_FORMAT, KEY_VERSION
from worksheetgen.language import LANGUAGES, SEPARATORS

SCHEMA = json.loads((ROOT / "docs" / "reference" / "key.schema.json").read_text("utf-8"))


def test_the_schema_is_a_draft_2020_12_schema():
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(SCHEMA)


def test_the_schemas_enumerations_are_the_readers():
    defs = SCHEMA["$defs"]
    assert tuple(defs["kind"]["enum"]) == KINDS
    carries = defs["question"]["properties"]["carries"]["items"]["properties"]
    assert tuple(carries["steps"]["items"]["enum"]) == CARRY_STEPS
    assert SCHEMA["properties"]["format"]["const"] == KEY_FORMAT
    assert SCHEMA["properties"]["version"]["enum"] == list(KEY_VERSIONS)
    assert SCHEMA["if"]["properties"]["version"]["const"] == KEY_VERSION == max(KEY_VERSIONS)
    assert SCHEMA["properties"]["language"]["enum"] == list(LANGUAGES)
    assert SCHEMA["properties"]["decimal"]["enum"] == list(SEPARATORS.values())
