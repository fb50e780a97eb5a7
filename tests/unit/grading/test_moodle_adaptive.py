"""Issue 34 §2: ``grade`` gives an adaptive Moodle quiz's marks as Moodle does: each
question's best try less the penalty for the wrong tries before it (Moodle's
``qbehaviour_adaptive``), and the attempt (or the mean of the attempts) the quiz's grading
method counts. tests/fixtures/moodle/adaptive-pooled/ holds a real Moodle 4.5 "All tries"
download of a pooled quiz of banks/quiz.yaml in adaptive mode and Moodle's own marks
(attempts.json); its README says how it was made.

A behaviour across modules, not one module's tests (grading.key, grading.moodle,
grading.responses, grading.score, grading.spreadsheet, keyjson.lms, keyjson.read,
report.classreport)."""

from __future__ import annotations

import csv
import io
import json
import re
from fractions import Fraction

import pytest

from tests.paths import MOODLE
from worksheetgen.grading.key import grade_key
from worksheetgen.grading.moodle import parse_moodle, parse_moodle_rows
from worksheetgen.grading.responses import _records
from worksheetgen.grading.score import StudentResult, grade
from worksheetgen.grading.spreadsheet import read_rows
from worksheetgen.keyjson.lms import MOODLE_PENALTY
from worksheetgen.keyjson.read import load_key

REAL = MOODLE / "adaptive-pooled"


KEY = REAL / "key.json"


METHODS = ["highest", "average", "first", "last"]


#: Moodle stores marks as floats (0.6666667 × 5 = 3.3333335): equal to that
CLOSE = 1e-6


def _state() -> dict:
    return json.loads((REAL / "attempts.json").read_text("utf-8"))


def _rows(name: str) -> list[tuple[int, list[str]]]:
    path = REAL / name
    if path.suffix == ".xlsx":
        return read_rows(path, str(path))
    return list(_records(path.read_bytes().decode("utf-8-sig"), str(path)))


def _graded(
    rows: list[tuple[int, list[str]]],
    method: str = "highest",
    penalty: Fraction | None = None,
    carry: bool | None = False,
) -> dict[str, StudentResult]:
    doc = load_key(KEY)
    key = grade_key(doc)
    responses, key = parse_moodle_rows(rows, doc, key, "r.csv", "last", method, carry, penalty)
    return {s.name: s for s in grade(key, responses, carry=carry).students}


def _by_slot(s: StudentResult) -> dict[int, Fraction]:
    """A student's points per quiz slot (the pooled slot's picks together, as Moodle marks
    that slot)."""
    out: dict[int, Fraction] = {}
    for q in s.questions:
        out[q.number] = out.get(q.number, Fraction(0)) + q.earned
    return out


def _moodle(method: str) -> dict[str, tuple[float, dict[int, float]]]:
    """Moodle's final grade per student under ``method`` (its own grade calculator) and the
    marks per slot of the attempt it counts (average: the mean of the attempts' marks)."""
    state = _state()
    finished: dict[str, list[dict]] = {}
    for a in state["attempts"]:
        if a["state"] == "finished":
            finished.setdefault(a["name"], []).append(a)
    out = {}
    for name, every in finished.items():
        user = every[0]["user"]
        final = state["final"][method][user]
        if method == "average":
            slots = {
                int(k): sum(float(a["marks"][k]) for a in every) / len(every)
                for k in every[0]["marks"]
            }
        else:
            sums = [float(a["sumgrades"]) for a in every]
            pick = {"first": 0, "last": -1, "highest": sums.index(max(sums))}[method]
            slots = {int(k): float(m) for k, m in every[pick]["marks"].items()}
        out[name] = (final, slots)
    return out


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", ["responses-alltries.csv", "responses-alltries.xlsx"])
def test_grade_gives_moodles_marks_per_slot_and_total_under_each_grading_method(name, method):
    """Every finished student: each slot's points and the total equal Moodle's (carried
    credit off: Moodle cannot carry), under each of Moodle's grading methods (Gia has three
    attempts: first 11.57, highest 35, last 23.33, average 23.3)."""
    graded = _graded(_rows(name), method)
    moodle = _moodle(method)
    assert sorted(graded) == sorted(moodle)
    for student, (final, slots) in moodle.items():
        got = _by_slot(graded[student])
        assert got.keys() == slots.keys(), student
        for slot, mark in slots.items():
            assert abs(float(got[slot]) - mark) < CLOSE, (student, slot, got[slot], mark)
        assert abs(float(graded[student].earned) - final) < 1e-4, (student, final)
    # with carried credit as the key says (the grade of record), "without carried credit"
    # is still Moodle's grade: each slot's best try without it, which may be another try
    for student, s in _graded(_rows(name), method, carry=None).items():
        plain = s.earned if s.without_carry is None else s.without_carry
        assert abs(float(plain) - moodle[student][0]) < 1e-4, (student, moodle[student][0])


def test_what_moodle_did_is_what_the_rules_say():
    """The download holds every rule: a try right first time (Ada), a slip then the key
    (Ben: two thirds), three tries of which the first was the best (Eve's concept
    questions: full marks), partial tries (Hal's slot 1, Eve), a check with blanks that
    Moodle does not count as a try (Dan: graded once, at the end, no penalty), a saved
    answer graded as a further try when the attempt was submitted (Gia's third attempt)."""
    state = _state()
    by = {(a["user"], a["attempt"]): a for a in state["attempts"]}
    assert set(by[("s1", 1)]["tries"].values()) == {1}
    assert set(by[("s2", 1)]["tries"].values()) == {2}
    assert by[("s5", 1)]["tries"]["6"] == 3 and by[("s5", 1)]["marks"]["6"] == 2
    assert set(by[("s4", 1)]["tries"].values()) <= {0, 1}
    assert set(by[("s7", 3)]["tries"].values()) == {2}
    graded = _graded(_rows("responses-alltries.csv"))
    ben = graded["Ben Carter"]
    assert all(q.tries == (2, 2) for q in ben.questions)
    assert all(
        q.penalty == MOODLE_PENALTY * sum(p.possible for p in q.parts)
        for q in ben.questions
        if q.number != 5
    )
    eve = {q.number: q for q in graded["Eve Park"].questions}
    assert eve[6].tries == (1, 3) and eve[6].penalty == 0 and eve[6].earned == 2
    dan = graded["Dan Ortiz, Jr."]
    assert all(q.penalty == 0 and q.tries is None for q in dan.questions)


def _alltries_text() -> str:
    return (REAL / "responses-alltries.csv").read_text("utf-8-sig")


def _edit(text: str, who: str, row: int, slot: int, change) -> str:
    """The download with the Response ``slot`` of ``who``'s ``row``-th row (0-based) changed."""
    rows = list(csv.reader(io.StringIO(text)))
    col = rows[0].index(f"Response {slot}")
    mine = [r for r in rows[1:] if r[1] == who]
    mine[row][col] = change(mine[row][col])
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def _all_wrong(response: str) -> str:
    """Every gap of a cloze response typed wrong (999)."""
    return re.sub(r"(part \d+: )[^;]*", r"\g<1>999", response)


def _parse(text: str, **kw) -> dict[str, StudentResult]:
    doc = load_key(KEY)
    responses, key = parse_moodle(text, doc, grade_key(doc), "r.csv", carry=False, **kw)
    result = grade(key, responses, carry=False)
    return {s.name: s for s in result.students}


def _slot(s: StudentResult, n: int) -> tuple[Fraction, Fraction]:
    """(points, maximum) of slot ``n``."""
    qs = [q for q in s.questions if q.number == n]
    return sum((q.earned for q in qs), Fraction(0)), sum((q.points for q in qs), Fraction(0))


def test_the_penalty_floors_at_zero_and_follows_the_option():
    """Ben's first try of slot 1 all wrong, his second the key: the second try is worth
    the mark less a penalty per wrong try; with a penalty of 1 that is 0, never below."""
    text = _edit(_alltries_text(), "Ben", 0, 1, _all_wrong)
    for penalty, share in [(None, 1 - MOODLE_PENALTY), (Fraction(1, 2), Fraction(1, 2))]:
        got, most = _slot(_parse(text, penalty=penalty)["Ben Carter"], 1)
        assert got == most * share
    got, _ = _slot(_parse(text, penalty=Fraction(1))["Ben Carter"], 1)
    assert got == 0
    got, most = _slot(_parse(text, penalty=Fraction(0))["Ben Carter"], 1)
    assert got == most  # adaptive mode without penalties: the best try


def test_the_best_try_counts_not_the_last():
    """A try after a better one does not lower the mark (Moodle keeps the best adjusted
    fraction): Ben's second try of slot 1 all wrong after his partly right first one."""
    text = _alltries_text()
    first, most = _slot(_parse(text, penalty=Fraction(0), tries="first")["Ben Carter"], 1)
    assert 0 < first < most  # a partly right first try
    worse = _edit(text, "Ben", 1, 1, _all_wrong)
    ben = _parse(worse)["Ben Carter"]
    assert _slot(ben, 1)[0] == first
    (q,) = [q for q in ben.questions if q.number == 1]
    assert q.tries == (1, 2) and q.penalty == 0


def test_a_right_first_try_gets_full_marks_whatever_the_penalty():
    graded = _parse(_alltries_text(), penalty=Fraction(1))
    assert graded["Ada Lovelace"].earned == graded["Ada Lovelace"].possible == 35
    # Eve's concept questions: right at the first of three tries
    eve = graded["Eve Park"]
    assert [_slot(eve, n)[0] for n in (6, 7, 8)] == [2, 2, 2]


def test_the_written_part_is_never_penalised():
    """real-4's quiz (graded parts, then an essay per slot), as an "All tries" download:
    Ben's slot 1 wrong at the first try, the key at the second; the essays and the other
    slots tried once (``-`` in the second row, as Moodle writes it). The penalty is a third
    of the graded parts' 8 points, not of the question's 9 (its written part is the essay's
    mark, which Moodle's essays never penalise), and the essay is still read."""
    real4 = MOODLE / "real-4"
    rows = list(csv.reader(io.StringIO((real4 / "responses-right.csv").read_text("utf-8-sig"))))
    head = rows[0]
    col = {c: i for i, c in enumerate(head)}
    ben = next(r for r in rows if r[1] == "Ben")
    first, second = list(ben), list(ben)
    first[col["Response 1"]] = _all_wrong(ben[col["Response 1"]])
    first[col["Status"]] = first[col["Grade/30.00"]] = ""
    second[col["Email address"]] = ""
    for c in head:
        if c.startswith("Response "):
            second[col[c]] = "-"
    second[col["Response 1"]] = ben[col["Right answer 1"]]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(head)
    writer.writerows([r for r in rows[1:] if r[1] != "Ben"] + [first, second])
    doc = load_key(real4 / "key.json")
    responses, key = parse_moodle(out.getvalue(), doc, grade_key(doc), "r.csv", carry=False)
    (student,) = [s for s in grade(key, responses, carry=False).students if s.name == "Ben Carter"]
    (q,) = [q for q in student.questions if q.number == 1]
    written = [p for p in q.parts if p.kind == "text"]
    graded = [p for p in q.parts if p.kind != "text"]
    assert q.points == 9 and sum(p.possible for p in graded) == 8
    assert q.tries == (2, 2) and q.penalty == MOODLE_PENALTY * 8
    assert all(p.earned == p.possible for p in graded)
    assert q.earned == 8 - MOODLE_PENALTY * 8
    assert [p.response[:10] for p in written] == ["[q-scale] "]


def test_the_feedback_page_says_which_try_counted_and_what_the_penalty_took():
    from worksheetgen.report.classreport import _feedback_lines

    doc = load_key(KEY)
    text = _alltries_text()
    responses, key = parse_moodle(text, doc, grade_key(doc), "r.csv", carry=False)
    result = grade(key, responses, carry=False)
    ben = next(s for s in result.students if s.name == "Ben Carter")
    said = [t for _, t in _feedback_lines(result, ben, {}) if t.startswith("Your try")]
    assert said[0] == "Your try 2 of 2 counts, less 1.67 for the 1 wrong try before it."
    assert len(said) == len(ben.questions)  # every question, each of slot 5's two picks too
    ada = next(s for s in result.students if s.name == "Ada Lovelace")
    assert not [t for _, t in _feedback_lines(result, ada, {}) if t.startswith("Your try")]


def test_the_recorded_marks_are_those_of_moodles_grades_report():
    """attempts.json's marks (the question engine's) are what the quiz's Grades report
    shows of each finished attempt, in its order, to 2 decimals."""
    rows = list(csv.reader(io.StringIO((REAL / "grades.csv").read_text("utf-8-sig"))))
    head = rows[0]
    slots = [i for i, c in enumerate(head) if c.startswith("Q. ")]
    shown = [
        (f"{r[1]} {r[0]}", [r[i] for i in slots], r[head.index("Grade/35.00")])
        for r in rows[1:]
        if r[head.index("Status")] == "Finished"
    ]
    recorded = [
        (
            a["name"],
            [f"{float(a['marks'][str(k)]):.2f}" for k in range(1, len(slots) + 1)],
            f"{float(a['sumgrades']):.2f}",
        )
        for a in _state()["attempts"]
        if a["state"] == "finished"
    ]
    assert sorted(shown) == sorted(recorded)
