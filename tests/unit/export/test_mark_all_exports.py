"""Mark all that apply in the LMS exports: Moodle XML multichoice with single=false and the
grades of Moodle's list (each right option 1/(number right), each wrong one -1/(number
wrong)), GIFT with the same weights, and a one-line refusal where a format cannot weigh the
rule (all or nothing, a 1/n Moodle refuses, one right option in GIFT, a cloze gap).

A behaviour across modules, not one module's tests (bank.load, errors, export, grading.key,
grading.score, keyjson.read, keyjson.write)."""

from __future__ import annotations

import copy
import itertools
import json
import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.solved import make_build
from worksheetgen.bank.load import load_banks
from worksheetgen.errors import ExportError
from worksheetgen.export import export_bytes
from worksheetgen.grading.key import grade_key, norm_text
from worksheetgen.grading.score import multi_share
from worksheetgen.keyjson.read import parse_key
from worksheetgen.keyjson.write import key_json

FIXTURE = ROOT / "tests" / "fixtures" / "mark-all.yaml"
#: question_bank::fraction_options_full (question/engine/bank.php): p/q for q <= 6, tenths,
#: 1/q for q <= 10 and 1/20, and their negatives, matched within 0.00001
ALLOWED = sorted(
    {Fraction(p, q) for q in range(1, 7) for p in range(q + 1)}
    | {Fraction(p, 10) for p in range(11)}
    | {Fraction(1, q) for q in (*range(1, 11), 20)}
)


def moodle_allowed(x: float) -> bool:
    return any(abs(abs(x) - float(a)) < 0.00001 for a in ALLOWED)


@pytest.fixture(scope="module")
def key() -> dict[str, Any]:
    """The fixture bank's key, three versions, with the all-or-nothing question scored per
    option (an LMS can weigh only that)."""
    sheets = [(f"v{i}", f"Version {i}", None) for i in range(3)]
    data = json.loads(json.dumps(key_json(make_build(load_banks([FIXTURE]), 7, sheets))))
    for sheet in data["sheets"]:
        for q in sheet["questions"]:
            q.pop("all_or_nothing", None)
    return data


def _multichoices(xml: bytes) -> list[ET.Element]:
    root = ET.fromstring(xml)
    return [q for q in root.iter("question") if q.get("type") == "multichoice"]


def test_moodle_xml_asks_several_answers_with_grades_moodle_accepts(key):
    questions = _multichoices(export_bytes(key, "moodle"))
    multi = [q for q in questions if q.findtext("single") == "false"]
    assert len(multi) == 6 and len(questions) == 9  # two mark-all questions, three versions
    gk = grade_key(parse_key(key))
    for q in multi:
        fractions = [float(a.get("fraction")) / 100 for a in q.iter("answer")]
        texts = [a.findtext("text") for a in q.iter("answer")]
        assert all(moodle_allowed(f) for f in fractions), fractions
        assert abs(sum(f for f in fractions if f > 0) - 1) < 0.0001  # right ones: 100%
        name = q.findtext("name/text")
        qid, sheet = re.fullmatch(r"\d+\. (\S+) \[(.+)\]", name).groups()
        ans = gk.sheet(sheet).question(qid).answers[0]
        assert len(texts) == len(ans.options)
        # Moodle's mark (the marked answers' fractions summed, in [0, 1]) is the grader's
        for marks in itertools.product((0, 1), repeat=len(fractions)):
            moodle = min(1.0, max(0.0, sum(f for f, m in zip(fractions, marks, strict=True) if m)))
            chosen = frozenset(norm_text(o) for o, m in zip(ans.options, marks, strict=True) if m)
            assert float(multi_share(ans, chosen)) == pytest.approx(moodle, abs=1e-6)


def test_gift_weighs_each_option_as_moodle_xml_does(key):
    gift = export_bytes(key, "gift").decode("utf-8")
    weights = re.findall(r"~%(-?[0-9.]+)%", gift)
    assert sorted(set(weights)) == ["-100", "-50", "33.33333"]
    assert all(moodle_allowed(float(w) / 100) for w in weights)


def _with(key: dict[str, Any], change) -> dict[str, Any]:
    data = copy.deepcopy(key)
    for sheet in data["sheets"]:
        change(sheet["questions"][0])
    return data


def test_all_or_nothing_is_refused_in_one_line(key):
    data = _with(key, lambda q: q.update(all_or_nothing=["marked"]))
    for fmt in ("moodle", "gift"):
        with pytest.raises(ExportError) as info:
            export_bytes(data, fmt)
        message = str(info.value)
        assert "\n" not in message
        assert "question ma-mask (sheet v0)" in message and "got all_or_nothing" in message


def test_a_grade_moodle_does_not_accept_is_refused_in_one_line(key):
    def eleven_wrong(q: dict[str, Any]) -> None:
        q["options"]["marked"] += [f"Another wrong option {i}" for i in range(9)]

    with pytest.raises(ExportError, match=r"expected 1 to 10 \(or 20\) wrong options, got 11"):
        export_bytes(_with(key, eleven_wrong), "moodle")


def test_gift_refuses_a_mark_all_question_with_one_right_option(key):
    def one_right(q: dict[str, Any]) -> None:
        q["answer"]["marked"] = q["rounded"]["marked"] = q["answer"]["marked"][:1]

    data = _with(key, one_right)
    with pytest.raises(ExportError, match="expected a mark-all question with at least 2 right"):
        export_bytes(data, "gift")
    assert b"<single>false</single>" in export_bytes(data, "moodle")


def _qti(data: dict[str, Any]) -> ET.Element:
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(export_bytes(data, "qti"))) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".xml") and "/" in n and "meta" not in n]
        return ET.fromstring(z.read(name))


def test_canvas_gets_multiple_answers_where_its_rule_is_the_graders(key):
    # Canvas docks each wrong mark 1/(number right): the grader's rule when as many options
    # are right as wrong (two of four)
    def two_of_four(q: dict[str, Any]) -> None:
        options = q["options"]["marked"][:4]
        q["options"]["marked"] = options
        q["answer"]["marked"] = q["rounded"]["marked"] = options[1:3]

    data = _with(key, two_of_four)
    for sheet in data["sheets"]:
        sheet["questions"] = sheet["questions"][:1]
    root = _qti(data)
    ns = {"q": "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"}
    items = root.findall(".//q:item", ns)
    assert len(items) == 3
    for item in items:
        fields = {
            f.findtext("q:fieldlabel", namespaces=ns): f.findtext("q:fieldentry", namespaces=ns)
            for f in item.findall(".//q:qtimetadatafield", ns)
        }
        assert fields["question_type"] == "multiple_answers_question"
        lid = item.find(".//q:response_lid", ns)
        assert lid is not None and lid.get("rcardinality") == "Multiple"
        both = item.find(".//q:respcondition/q:conditionvar/q:and", ns)
        assert both is not None
        assert len(both.findall("q:varequal", ns)) == 2  # the right ones marked
        assert len(both.findall("q:not/q:varequal", ns)) == 2  # and no wrong one


def test_canvas_refuses_a_mark_all_question_it_would_score_otherwise(key):
    with pytest.raises(ExportError) as info:
        export_bytes(key, "qti")
    message = str(info.value)
    assert "\n" not in message
    assert "got 3 right and 2 wrong: export it with --to moodle" in message
