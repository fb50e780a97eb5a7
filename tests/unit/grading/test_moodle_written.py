"""grade and a real Moodle download of a quiz whose written parts are dealt with their graded
parts (issue 22 §2): a question with several versions, a pool of pick 1 and a pool of pick 2,
each with a written part, exported so that the graded question asks the written part and one
essay per slot answers it. tests/fixtures/moodle/real-4/ holds the download (its README says
how it was made; what Moodle drew and each student typed is in attempts.json).

A behaviour across modules, not one module's tests (grading.key, grading.moodle,
grading.responses, grading.score, grading.spreadsheet, keyjson.read)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import pytest

from tests.paths import MOODLE
from worksheetgen.grading.key import grade_key
from worksheetgen.grading.moodle import parse_moodle_rows
from worksheetgen.grading.responses import _records
from worksheetgen.grading.score import grade
from worksheetgen.grading.spreadsheet import read_rows
from worksheetgen.keyjson.read import load_key, written_parts

REAL = MOODLE / "real-4"


KEY = REAL / "key.json"


DOWNLOADS = [
    "responses-right.csv",
    "responses-right.xlsx",
    "responses-right.ods",
    "responses-qtext.csv",  # no Right answer: the versions told by the question text
]


def _rows(path: Path) -> list[tuple[int, list[str]]]:
    if path.suffix in (".xlsx", ".ods"):
        return read_rows(path, str(path))
    return list(_records(path.read_bytes().decode("utf-8-sig"), str(path)))


def _attempts() -> list[dict]:
    return json.loads((REAL / "attempts.json").read_text("utf-8"))["attempts"]


def _drawn_versions(key: dict, drawn: list[str]) -> dict[str, str]:
    """Question id -> sheet of every version an attempt drew (a pool's deal: the sheet's
    picks), from what Moodle recorded it drew per slot."""
    slots = {q["id"]: q.get("slot", q["id"]) for s in key["sheets"] for q in s["questions"]}
    out = {}
    for name in drawn:
        m = re.match(r"^\d+\. (\S+) \[(.+)\]$", name)
        if not m:
            continue
        head, sheet = m.groups()
        sheet_qs = next(s for s in key["sheets"] if s["id"] == sheet)["questions"]
        for q in sheet_qs:
            if q["id"] == head or slots[q["id"]] == head:
                out[q["id"]] = sheet
    return out


def _counted(name: str) -> dict:
    """The attempt of the student called ``name`` that counts (Moodle's Highest grade: the
    first of the best finished ones, by their graded slots' marks: an attempt whose essays
    await grading has no sum in Moodle yet)."""
    done = [a for a in _attempts() if a["name"] == name and a["state"] == "finished"]
    return max(done, key=lambda a: sum(m for m in a["marks"].values() if m is not None))


@pytest.mark.parametrize("name", DOWNLOADS)
def test_each_essay_is_read_as_the_written_part_of_the_version_its_slot_drew(name):
    doc = load_key(KEY)
    key = json.loads(KEY.read_text("utf-8"))
    responses, graded = parse_moodle_rows(_rows(REAL / name), doc, grade_key(doc), name)
    slot_of = {v.qid: q.qid for q in doc.questions for v in q.variants}
    variants = {(v.qid, v.sheet_id): v for q in doc.questions for v in q.variants}
    cells = {s.student: s.cells for s in responses.students}
    assert len(graded.sheets) == 7  # 8 students, one in progress
    checked = 0
    for sheet in graded.sheets:
        attempt = _counted(sheet.name)
        drawn = attempt["drawn"]
        # graded with the versions Moodle drew (a pool's deal: the sheet's picks)
        want = _drawn_versions(key, list(drawn.values()))
        assert {q.id: q.version for q in sheet.questions} == want, sheet.name
        essays = {  # slot -> what the student typed in its essay (None: left blank)
            drawn[n].split()[1]: t["values"][0]
            for n, t in attempt["typed"].items()
            if drawn[n].endswith("(written)")
        }
        for q in sheet.questions:
            for part in written_parts(variants[(q.id, q.version)]):
                assert part.answer is not None
                got = cells[sheet.id].get(q.id, {}).get(part.answer.name, {}).get((0, 0))
                typed = essays[slot_of[q.id]]
                if typed is None:
                    assert got is None
                else:  # the essay of this question's own slot, whole
                    assert got is not None and got.text == typed.strip(), (sheet.name, q.id)
                    # an answer typed as "[slot] ..." names its slot: never another's
                    assert not typed.startswith("[") or typed.startswith(f"[{slot_of[q.id]}] ")
                    checked += 1
    assert checked >= 12


def _slot_of_question(doc) -> dict[str, str]:
    return {v.qid: q.qid for q in doc.questions for v in q.variants}


@pytest.mark.parametrize("name", DOWNLOADS)
def test_moodle_marks_are_the_sheets_split_of_each_questions_points(name):
    """Issue 22 §3: each student's maximum in Moodle is their sheet's total (quiz grade 30,
    every sheet 30), and what the real Moodle gave each graded slot is what ``grade`` gives
    that slot's graded parts (the sheet's split of a plain ``points: 9`` over 9 answers, 8
    of them graded, and per-part points of 7 with 1 for the written part); the written
    parts' share is the essay's mark, graded by hand in both."""
    doc = load_key(KEY)
    key = json.loads(KEY.read_text("utf-8"))
    run = json.loads((REAL / "attempts.json").read_text("utf-8"))
    totals = {sum(q["points"] for q in s["questions"]) for s in key["sheets"]}
    assert totals == {30} and float(run["grade"]) == float(run["sumgrades"]) == 30
    if name.endswith(".csv"):
        header = (REAL / name).read_text("utf-8-sig").splitlines()[0]
        assert "Grade/30.00" in header
    responses, graded_key = parse_moodle_rows(_rows(REAL / name), doc, grade_key(doc), name)
    result = grade(graded_key, responses)
    slot_of = _slot_of_question(doc)
    checked = 0
    for sheet in result.students:
        attempt = _counted(sheet.name)
        for n, drawn in attempt["drawn"].items():
            if drawn.endswith("(written)"):
                continue
            head = drawn.split()[1]  # a pool of pick 1 names the alternative drawn
            slot = slot_of.get(head, head)
            qs = [q for q in sheet.questions if slot_of[q.id] == slot]
            written = [p for q in qs for p in q.parts if p.kind == "text"]
            earned = sum(
                (q.without_carry if q.without_carry is not None else q.earned for q in qs),
                Fraction(0),
            )
            # the written parts await a person in both: nothing earned there yet
            assert all(p.earned == 0 for p in written)
            assert float(earned) == pytest.approx(attempt["marks"][n], abs=1e-6), (
                sheet.name,
                drawn,
            )
            checked += 1
    assert checked == 7 * 3


def test_each_essays_mark_is_the_written_parts_share_and_the_graded_questions_the_rest():
    """The export's marks (what the real Moodle took) follow the sheet's split: an essay's
    mark is the written parts' points of every deal of its slot, the graded question's the
    graded parts' (its category description gives it), adding up to the sheet's points."""
    doc = load_key(KEY)
    root = ET.fromstring((REAL / "moodle.xml").read_bytes())
    marks = {
        q.findtext("idnumber"): float(q.findtext("defaultgrade") or "nan")
        for q in root.iter("question")
        if q.get("type") == "essay"
    }
    asks = [
        re.search(r"with the mark (\d+(?:\.\d+)?)", q.findtext("info/text") or "")
        for q in root.iter("question")
        if q.get("type") == "category"
    ]
    described = [float(m.group(1)) for m in asks if m]
    assert marks == {"q-scale:written": 1.0, "why:written": 1.0, "two:written": 2.0}
    assert described == [8, 1, 6, 1, 12, 2] and sum(described) == 30
    for q in doc.questions:
        for v in q.variants:
            share = sum(
                (v.answer_points()[p.answer.name] for p in written_parts(v) if p.answer),
                Fraction(0),
            )
            assert share == Fraction(1), (v.qid, v.sheet_id)
