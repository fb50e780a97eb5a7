"""A key printed with a decimal comma (key.json's ``decimal``) exported for Canvas: Canvas
compares a blank's text, and scores a numerical question with Ruby's BigDecimal, which reads
no comma (0,25 scores 0); so every blank also accepts each comma spelling, and a single
number is asked as a blank. A point key's export is as before. (What Moodle reads depends on
the student's language pack: docs/guide/languages.md.)

A behaviour across modules, not one module's tests (export, export.qti, keyjson.read,
pipeline.build, pipeline.options)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from worksheetgen.export import export_bytes
from worksheetgen.export.qti import accepted_texts
from worksheetgen.keyjson.read import Cell
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions


def test_a_blank_of_a_comma_key_accepts_each_spelling_with_a_comma_first():
    cell = Cell(key="a", label="", value=0.5, printed="0.50", tolerance=0.01, exact=None)
    points = accepted_texts(cell)
    commas = accepted_texts(cell, comma=True)
    assert commas[0] == "0,50"  # the key as the sheet printed it first
    assert set(points) < set(commas)
    assert {"0,50", "0,5", ",50", "0,500", "+0,50", "0,49", "0,51"} <= set(commas)
    assert not any("," in t for t in points)
    whole = Cell(key="n", label="", value=2.0, printed="2", tolerance=0.0, exact=None)
    assert accepted_texts(whole, comma=True) == ["2,0", "+2,0", "2", "2.0", "+2", "+2.0"]


@pytest.fixture(scope="module")
def key_data(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("de")
    folder = build(BuildOptions(seed=42, out=str(out), pdf=False, language="de")).folder
    return json.loads((folder / "key.json").read_text("utf-8"))


def _assessment(data: dict) -> str:
    with zipfile.ZipFile(io.BytesIO(export_bytes(data, "qti"))) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".xml") and "/" in n and "meta" not in n]
        return z.read(name).decode("utf-8")


def test_a_comma_keys_canvas_export_asks_blanks_that_accept_commas(key_data):
    assert key_data["decimal"] == ","
    comma = _assessment(key_data)
    point = _assessment({k: v for k, v in key_data.items() if k != "decimal"})
    assert "numerical_question" not in comma
    assert '<mattext texttype="text/plain">0,' in comma
    assert '<mattext texttype="text/plain">0,' not in point
