"""grade and a real Moodle download of a quiz whose written parts are dealt with their graded
parts (issue 22 §2): a question with several versions, a pool of pick 1 and a pool of pick 2,
each with a written part, exported so that the graded question asks the written part and one
essay per slot answers it. tests/fixtures/moodle/real-4/ holds the download (its README says
how it was made; what Moodle drew and each student typed is in attempts.json)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from worksheetgen.cli import main
from worksheetgen.grading.key import grade_key
from worksheetgen.grading.moodle import parse_moodle_rows
from worksheetgen.grading.responses import _records
from worksheetgen.grading.spreadsheet import read_rows
from worksheetgen.keyjson.read import load_key, written_parts

REAL = Path(__file__).parent / "fixtures" / "moodle" / "real-4"
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


def _questions(xml: bytes) -> list[tuple[str, str, int, str]]:
    """(name, ID number, number of gaps, the text of an essay) of every question."""
    out = []
    for q in ET.fromstring(xml).iter("question"):
        if q.get("type") == "category":
            continue
        text = q.findtext("questiontext/text") or ""
        gaps = len(re.findall(r"\{\d+:(?:NUMERICAL|SHORTANSWER|MULTICHOICE\w*):", text))
        essay = text if q.get("type") == "essay" else ""
        out.append((q.findtext("name/text") or "", q.findtext("idnumber") or "", gaps, essay))
    return out


def test_the_fixture_is_what_todays_export_of_its_bank_makes(runner, tmp_path):
    """Fails when the build or the Moodle export of real-4/bank.yaml no longer makes the
    questions the real download was taken on: then make the download again (README)."""
    argv = ["build", "--seed", "42", "--versions", "4", "--no-pdf", "--export", "moodle"]
    argv += ["--bank", str(REAL / "bank.yaml"), "--out", str(tmp_path)]
    result = runner.invoke(main, argv)
    assert result.exit_code == 0, result.output
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    fresh = json.loads((folder / "key.json").read_text("utf-8"))
    assert fresh["sheets"] == json.loads(KEY.read_text("utf-8"))["sheets"], "renew real-4"
    made = _questions((folder / "moodle.xml").read_bytes())
    assert made == _questions((REAL / "moodle.xml").read_bytes()), "renew real-4"
    essays = [(n, i) for n, i, _, e in made if e]
    assert essays == [
        ("1. q-scale (written)", "q-scale:written"),
        ("2. why (written)", "why:written"),
        ("3. two (written)", "two:written"),
    ]


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
    first of the best finished ones)."""
    done = [a for a in _attempts() if a["name"] == name and a["state"] == "finished"]
    return max(done, key=lambda a: float(a["sumgrades"]))


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
