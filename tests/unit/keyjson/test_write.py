"""key.json and manifest.json have one serializer: keyjson/write.py's streamed list, with
``dumps``'s layout (a single sheet's file) or one element per line (a class's)."""

from __future__ import annotations

import io
import json

import pytest

from worksheetgen.keyjson.write import StreamedList, dumps, json_element, split_at, streamed_dumps

DOCS = [
    {"format": "k", "sheets": [], "after": "x"},
    {"a": 1, "sheets": [{"q": [1, {"b": []}, {}], "s": 'é\n"x"'}, {"x": []}], "z": {"y": [1, 2]}},
    {"sheets": [[1, [2, [3]]], "s", [], {}, None, 2.5]},
]


@pytest.mark.parametrize("doc", DOCS)
def test_a_streamed_document_is_the_bytes_dumps_gives(doc):
    assert streamed_dumps(doc, "sheets") == dumps(doc)


@pytest.mark.parametrize("doc", DOCS)
def test_one_element_per_line_is_the_same_json_and_a_line_each(doc):
    out = io.StringIO()
    stream = StreamedList(out, around=split_at(doc, "sheets"))
    for value in doc["sheets"]:
        stream.add_encoded(json_element(value))  # as a worker process encodes it
    stream.close()
    text = out.getvalue()
    assert json.loads(text) == doc
    lines = {line.rstrip(",") for line in text.splitlines()}
    for value in doc["sheets"]:
        assert "    " + json.dumps(value, ensure_ascii=False) in lines


def test_the_list_stays_where_the_document_puts_it():
    before, after = split_at({"a": 1, "sheets": [1], "z": 2}, "sheets")
    assert before == '{\n  "a": 1,\n  "sheets": '
    assert after == ',\n  "z": 2\n}\n'


def test_key_json_serializes_the_solved_items_without_asking_a_family(monkeypatch):
    """Solving attaches each question's title and carried steps to its item; key.json's
    writer only serializes them (issue 35, section 3): with every family's title and steps
    changed once the sheet is solved, the document is the same."""
    from tests.paths import ROOT
    from tests.solved import make_build
    from worksheetgen.bank.load import load_banks
    from worksheetgen.families import FAMILIES
    from worksheetgen.families.base import Family
    from worksheetgen.keyjson.write import key_json

    solved = make_build(load_banks([ROOT / "banks" / "quiz.yaml"]), seed=5)
    written = key_json(solved)
    questions = written["sheets"][0]["questions"]
    assert any(q["carries"] for q in questions)  # steps to carry, and family titles
    assert {q["title"] for q in questions} & {FAMILIES[q["family"]].title for q in questions}

    def asked(self, given, asked):
        raise AssertionError("the writer asked a family for its carried steps")

    monkeypatch.setattr(Family, "carries_for", asked)
    for name in {q["family"] for q in questions}:
        monkeypatch.setattr(FAMILIES[name], "title", "asked at write time")
    assert key_json(solved) == written
