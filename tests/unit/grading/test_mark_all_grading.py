"""Grading a mark-all-that-apply part: Moodle's multi-answer rule (each right option marked
earns 1/(number right), each wrong one costs 1/(number wrong), at least 0) or all or
nothing; responses.csv spells a set "B;D" (letters or texts), Moodle's Responses report
"opt1; opt2".

A behaviour across modules, not one module's tests (bank.load, errors, grading.key,
grading.moodle, grading.responses, grading.score, keyjson.read, keyjson.write, render.markup)."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.solved import make_build
from worksheetgen.bank.load import load_banks
from worksheetgen.errors import GradeError
from worksheetgen.grading.key import grade_key
from worksheetgen.grading.moodle import parse_moodle
from worksheetgen.grading.responses import parse_responses
from worksheetgen.grading.score import grade, multi_share
from worksheetgen.keyjson.read import parse_key
from worksheetgen.keyjson.write import key_json
from worksheetgen.render.markup import markup_lms

FIXTURE = ROOT / "tests" / "fixtures" / "mark-all.yaml"


#: the fractions Moodle's question bank allows (question_bank::fraction_options_full), as
#: lib/questionlib.php lists them: 1/n to 7 decimals
MOODLE_FRACTIONS = {n: round(1 / n, 7) for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20)}


def moodle_mark(right: int, wrong: int, hits: int, misses: int) -> float:
    """What Moodle's qtype_multichoice_multi_question::grade_response gives: the sum of the
    marked answers' fractions, clamped to [0, 1]."""
    total = hits * MOODLE_FRACTIONS[right] - misses * MOODLE_FRACTIONS[wrong]
    return min(max(0.0, total), 1.0)


@pytest.fixture(scope="module")
def key() -> dict[str, Any]:
    return json.loads(json.dumps(key_json(make_build(load_banks([FIXTURE]), 7))))


def _answer(key: dict[str, Any], i: int) -> Any:
    (sheet,) = grade_key(parse_key(key)).sheets
    return sheet.questions[i].answers[0]


@pytest.mark.parametrize(("right", "wrong"), [(3, 2), (1, 3), (2, 2), (4, 1), (2, 5)])
def test_the_share_is_moodles_multi_answer_mark(key, right, wrong):
    from dataclasses import replace

    base = _answer(key, 0)
    options = tuple(f"option {i}" for i in range(right + wrong))
    ans = replace(base, options=options, right=options[:right], all_or_nothing=False)
    for hits, misses in itertools.product(range(right + 1), range(wrong + 1)):
        chosen = frozenset(options[:hits] + options[right : right + misses])
        share = multi_share(ans, chosen)
        assert 0 <= share <= 1
        assert float(share) == pytest.approx(moodle_mark(right, wrong, hits, misses), abs=1e-6)
    whole = replace(ans, all_or_nothing=True)
    assert multi_share(whole, frozenset(options[:right])) == 1
    assert multi_share(whole, frozenset(options[: right - 1])) == 0
    assert multi_share(whole, frozenset(options[: right + 1])) == 0


def _grade(key: dict[str, Any], rows: list[tuple[str, str]], tmp_path: Path) -> Any:
    csv = "student,question,answer,entry,value\n" + "".join(
        f"mark-all-quiz,{q},{a},,{v}\n" for q, a, v in ((q, _name(q), v) for q, v in rows)
    )
    gk = grade_key(parse_key(key))
    (student,) = grade(gk, parse_responses(csv, gk)).students
    return {q.id: q for q in student.questions}


def _name(qid: str) -> str:
    return {"ma-mask": "marked", "ma-shapes": "marked", "ma-why-sqrt": "why_sqrt_dk"}[qid]


def _letters(key: dict[str, Any], i: int, texts: list[str]) -> list[str]:
    options = key["sheets"][0]["questions"][i]["options"]["marked"]
    return [chr(ord("A") + options.index(t)) for t in texts]


def test_responses_csv_spells_a_set_by_letters_or_texts(key, tmp_path):
    q = key["sheets"][0]["questions"]
    options = q[0]["options"]["marked"]
    right = q[0]["answer"]["marked"]
    wrong = [o for o in options if o not in right]
    letters = _letters(key, 0, right)
    # every right option by its letter, in any order and case, spaces around the ';'
    got = _grade(key, [("ma-mask", " ; ".join(x.lower() for x in letters[::-1]))], tmp_path)
    assert got["ma-mask"].earned == 3
    # two right and one wrong, by their texts: 2/3 - 1/2 of 3 points
    spelled = ";".join([right[0], right[1], wrong[0]])
    got = _grade(key, [("ma-mask", spelled)], tmp_path)
    assert got["ma-mask"].earned == Fraction(3) * (Fraction(2, 3) - Fraction(1, 2))
    assert got["ma-mask"].parts[0].status == "partial"
    # every wrong one: nothing, not less
    got = _grade(key, [("ma-mask", ";".join(_letters(key, 0, wrong)))], tmp_path)
    assert got["ma-mask"].earned == 0
    # all or nothing: one right option short is 0, the whole set the points
    shapes = q[1]["answer"]["marked"]
    got = _grade(key, [("ma-shapes", ";".join(_letters(key, 1, shapes[:-1])))], tmp_path)
    assert got["ma-shapes"].earned == 0
    got = _grade(key, [("ma-shapes", ";".join(_letters(key, 1, shapes)))], tmp_path)
    assert got["ma-shapes"].earned == 2


def test_a_set_naming_no_option_is_one_line(key, tmp_path):
    with pytest.raises(GradeError) as info:
        _grade(key, [("ma-mask", "A;Z")], tmp_path)
    message = str(info.value)
    assert "\n" not in message
    assert "responses.csv:2:" in message and "expected one of" in message


def test_moodles_response_report_of_a_multi_answer_question_is_graded(key, tmp_path):
    q = key["sheets"][0]["questions"]
    options = q[0]["options"]["marked"]
    right = q[0]["answer"]["marked"]
    wrong = [o for o in options if o not in right]
    shapes = q[1]["answer"]["marked"]
    why = q[2]["answer"]["why_sqrt_dk"]

    def moodle(texts: list[str]) -> str:  # as Moodle summarises a multi-answer response
        return "; ".join(markup_lms(t) for t in texts)

    header = (
        '"Last name","First name","Email address",Status,Started,Completed,Duration,'
        'Grade/7.00,"Response 1","Right answer 1","Response 2","Right answer 2",'
        '"Response 3","Right answer 3"\n'
    )

    def row(email: str, r1: list[str], r2: list[str]) -> str:
        cells = [moodle(r1), moodle(right), moodle(r2), moodle(shapes), markup_lms(why)]
        cells.insert(4, markup_lms(why))
        quoted = ",".join('"' + c.replace('"', '""') + '"' for c in cells[:6])
        return f'X,Y,{email},Finished,"1 May","1 May","5 mins",1.00,{quoted}\n'

    body = (
        header
        + row("a@example.com", [right[0], wrong[0]], shapes)
        + row("b@example.com", list(reversed(right)), shapes[:1])
    )
    doc = parse_key(key)
    gk = grade_key(doc)
    responses, graded = parse_moodle(body, doc, gk, "responses.csv", "last", "highest")
    by = {
        s.student: {x.id: x.earned for x in s.questions} for s in grade(graded, responses).students
    }
    a = Fraction(3) * max(Fraction(0), Fraction(1, 3) - Fraction(1, 2))
    assert by["a@example.com"] == {"ma-mask": a, "ma-shapes": 2, "ma-why-sqrt": 2}
    assert by["b@example.com"] == {"ma-mask": 3, "ma-shapes": 0, "ma-why-sqrt": 2}
