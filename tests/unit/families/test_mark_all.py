"""Mark all that apply (family mark-all): the bank's syntax and its one-line errors, the order
of options from the sheet's seed, key.json's set of right options as the one reader reads it."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.solved import make_build
from worksheetgen.bank.load import load_banks
from worksheetgen.errors import BankError, KeyFileError
from worksheetgen.keyjson.read import parse_key
from worksheetgen.keyjson.write import key_json

FIXTURE = ROOT / "tests" / "fixtures" / "mark-all.yaml"

BANK = """
sheet: {id: ma}
questions:
  - id: facts
    family: mark-all
    params:
      question: "Which of these are true?"
      options: [one, two, three]
      right: [a, c]
"""


def _bank_error(write_bank, text: str) -> str:
    with pytest.raises(BankError) as info:
        load_banks([write_bank(text)])
    return str(info.value)


@pytest.mark.parametrize(
    ("change", "line", "message"),
    [
        ("right: [a, d]", 8, "right[1]: expected a letter from a to c (one per option), got 'd'"),
        ("right: [a, b, c]", 8, "right: expected at least one wrong option"),
        ("right: []", 8, "right: expected a non-empty list of texts, got an empty list"),
        ("right: [a, a]", 8, "right[1]: expected each text once"),
        ("options: [one]", 7, "options: expected at least 2 options, got 1"),
        ("options: [one, one, two]", 7, "options[1]: expected each text once"),
        ("options: [one, One, two]", 7, "options[1]: expected options that differ in more"),
        ("question: ''", 6, "question: expected a non-empty text"),
        ("question: 'Is $\\input{x}$ right?'", 6, "question: expected safe math"),
    ],
)
def test_a_bad_mark_all_question_is_one_line_naming_its_field(write_bank, change, line, message):
    field = change.split(":")[0]
    text = re.sub(rf"(?m)^      {field}: .*$", lambda _: "      " + change, BANK)
    got = _bank_error(write_bank, text)
    assert "\n" not in got
    assert f"bank.yaml:{line}:" in got
    assert message in got


def test_a_mark_all_question_without_its_options_says_which_field_is_missing(write_bank):
    got = _bank_error(write_bank, BANK.replace("      options: [one, two, three]\n", ""))
    assert "expected params.options for family 'mark-all', got nothing (missing)" in got


def test_the_order_of_the_options_comes_from_the_sheets_seed(write_bank):
    bank = load_banks([FIXTURE])
    sheets = [(f"s{i}", f"Sheet {i}", None) for i in range(12)]
    first = make_build(bank, 5, sheets)
    again = make_build(bank, 5, sheets)
    orders = [s.items[0].given["order"] for s in first.sheets]
    assert orders == [s.items[0].given["order"] for s in again.sheets]
    assert len({tuple(o) for o in orders}) > 1  # sheets of one class differ
    for sheet in first.sheets:
        answer = sheet.items[0].solution.answers[0]
        given = sheet.items[0].given
        assert answer.options == tuple(given["options"][i] for i in given["order"])
        assert set(answer.right) == {given["options"][i] for i in (0, 1, 3)}
        assert list(answer.right) == [o for o in answer.options if o in answer.right]
    kept = load_banks(
        [write_bank(BANK.replace("right: [a, c]", "right: [a, c]\n      shuffle: false"))]
    )
    answer = make_build(kept, 5).sheets[0].items[0].solution.answers[0]
    assert answer.options == ("one", "two", "three")
    assert answer.right == ("one", "three")


@pytest.fixture(scope="module")
def built() -> tuple[Any, dict[str, Any]]:
    build = make_build(load_banks([FIXTURE]), 7)
    return build, json.loads(json.dumps(key_json(build)))


def test_key_json_carries_the_set_of_right_options_and_reads_it_back(built):
    build, data = built
    q = data["sheets"][0]["questions"]
    answer = build.sheets[0].items[0].solution.answers[0]
    assert q[0]["answer"]["marked"] == list(answer.right)
    assert "all_or_nothing" not in q[0]
    assert q[1]["all_or_nothing"] == ["marked"]
    key = parse_key(data)
    parts = [v.parts[0].answer for k in key.questions for v in k.variants]
    assert parts[0].multi and parts[0].right == answer.right and not parts[0].all_or_nothing
    assert parts[1].multi and parts[1].all_or_nothing
    assert not parts[2].multi and len(parts[2].right) == 1  # the pick-one concept question


def test_the_mark_all_key_fits_the_schema(built):
    from jsonschema import Draft202012Validator

    schema = json.loads((ROOT / "docs/reference/key.schema.json").read_text(encoding="utf-8"))
    errors = list(Draft202012Validator(schema).iter_errors(built[1]))
    assert errors == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda q: q["answer"].update(marked=[]), "expected at least one right option"),
        (lambda q: q["answer"].update(marked=["nope"]), "answer.marked[0]: expected one of"),
        (
            lambda q: q["answer"].update(marked=list(q["options"]["marked"])),
            "expected at least one wrong option",
        ),
        (
            lambda q: q["answer"].update(marked=q["answer"]["marked"][::-1]),
            "expected the right options in the order printed",
        ),
        (lambda q: q.update(all_or_nothing=["nope"]), "all_or_nothing: expected names of answers"),
    ],
)
def test_a_broken_set_of_right_options_is_refused_in_one_line(built, change, message):
    data = copy.deepcopy(built[1])
    change(data["sheets"][0]["questions"][0])
    with pytest.raises(KeyFileError) as info:
        parse_key(data)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_all_or_nothing_on_a_pick_one_answer_is_refused(built):
    data = copy.deepcopy(built[1])
    data["sheets"][0]["questions"][2]["all_or_nothing"] = ["why_sqrt_dk"]
    with pytest.raises(KeyFileError, match="expected only answers with several right options"):
        parse_key(data)
