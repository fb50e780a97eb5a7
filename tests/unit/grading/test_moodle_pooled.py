"""grade and a real Moodle download of a quiz from today's pooled export (issue 22 §2): a pool
of pick 2 or more is one question per sheet holding that sheet's picks, so the download has
one Response column for it, its gaps numbered through the picks in the sheet's order.
tests/fixtures/moodle/real-3/ holds the download (its README says how it was made; what
Moodle drew and each student typed is in attempts.json)."""

from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import key_as_version_1
from tests.paths import MOODLE, ROOT
from worksheetgen.cli import main
from worksheetgen.errors import GradeError
from worksheetgen.grading.key import grade_key
from worksheetgen.grading.moodle import parse_moodle_rows
from worksheetgen.grading.responses import _records
from worksheetgen.grading.score import grade
from worksheetgen.grading.spreadsheet import read_rows
from worksheetgen.keyjson.read import load_key

REAL = MOODLE / "real-3"
KEY = REAL / "key.json"
DOWNLOADS = ["responses-right.csv", "responses-right.xlsx", "responses-right.ods"]


def _rows(path: Path) -> list[tuple[int, list[str]]]:
    if path.suffix in (".xlsx", ".ods"):
        return read_rows(path, str(path))
    return list(_records(path.read_bytes().decode("utf-8-sig"), str(path)))


def _attempts() -> list[dict]:
    return json.loads((REAL / "attempts.json").read_text("utf-8"))["attempts"]


def _picks(key: dict, sheet: str) -> list[str]:
    """The questions sheet ``sheet`` printed from pool ``shapes``, in its order."""
    got = next(s for s in key["sheets"] if s["id"] == sheet)
    return [q["id"] for q in got["questions"] if q.get("slot") == "shapes"]


def _questions(xml: bytes) -> list[tuple[str, str, int]]:
    """(name, ID number, number of gaps) of every question of a Moodle XML file."""
    out = []
    for q in ET.fromstring(xml).iter("question"):
        if q.get("type") == "category":
            continue
        text = q.findtext("questiontext/text") or ""
        gaps = len(re.findall(r"\{\d+:(?:NUMERICAL|SHORTANSWER|MULTICHOICE\w*):", text))
        out.append((q.findtext("name/text") or "", q.findtext("idnumber") or "", gaps))
    return out


def test_the_fixture_is_what_todays_export_of_the_quiz_bank_makes(runner, tmp_path):
    """Fails when the build or the Moodle export of banks/quiz.yaml no longer makes the
    questions the real download was taken on: then make the download again (README)."""
    argv = ["build", "--seed", "42", "--versions", "4", "--no-pdf", "--export", "moodle"]
    argv += ["--bank", str(ROOT / "banks" / "quiz.yaml"), "--out", str(tmp_path)]
    result = runner.invoke(main, argv)
    assert result.exit_code == 0, result.output
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    fresh = json.loads((folder / "key.json").read_text("utf-8"))
    kept = json.loads(KEY.read_text("utf-8"))
    if kept["version"] == 1:  # a fixture taken before key.json version 2
        fresh = key_as_version_1(fresh)
    assert fresh["sheets"] == kept["sheets"], "renew tests/fixtures/moodle/real-3"
    made = _questions((folder / "moodle.xml").read_bytes())
    assert made == _questions((REAL / "moodle.xml").read_bytes()), "renew real-3"
    # the pool is one cloze question per sheet, its gaps those of the sheet's picks
    pooled = [(n, i) for n, i, _ in made if i.startswith("shapes:")]
    assert pooled == [(f"5. shapes [{s}]", f"shapes:{s}") for s in "ABCD"]


@pytest.mark.parametrize("name", DOWNLOADS)
def test_a_download_of_the_pooled_quiz_is_read_with_the_sheet_each_student_drew(name):
    doc = load_key(KEY)
    key = json.loads(KEY.read_text("utf-8"))
    responses, graded_key = parse_moodle_rows(_rows(REAL / name), doc, grade_key(doc), name)
    assert responses.against_pool == ()
    assert responses.in_progress == ("finn.olsen@example.com (Finn Olsen)",)
    counted = {}  # the attempt that counts (Highest grade: Gia's second)
    for a in _attempts():
        if a["state"] == "finished":
            best = counted.get(a["name"])
            if best is None or float(a["sumgrades"]) > float(best["sumgrades"]):
                counted[a["name"]] = a
    assert sorted(s.name for s in graded_key.sheets) == sorted(counted)
    for sheet in graded_key.sheets:
        drawn = counted[sheet.name]["drawn"]
        m = re.fullmatch(r"5\. shapes \[(\w)\]", drawn["5"])
        assert m, drawn
        picks = [(q.id, q.version) for q in sheet.questions if q.number == 5]
        # the two questions that sheet printed in the pool, in its order, its version
        assert picks == [(qid, m.group(1)) for qid in _picks(key, m.group(1))]
        # the other slots: the question drawn (a concept question's versions ask the same,
        # so its version is the first of those with the same right answer)
        others = {q.id for q in sheet.questions if q.number != 5}
        assert others == {
            re.sub(r"^\d+\. (\S+) \[\w\]$", r"\1", q) for s, q in drawn.items() if s != "5"
        }


def _scores(runner, download: Path, out: Path, *flags: str) -> dict[str, dict]:
    argv = ["grade", "--key", str(KEY), str(download), "--out", str(out), *flags]
    result = runner.invoke(main, argv)
    assert result.exit_code == 0, result.output
    with open(out / "scores.csv", encoding="utf-8", newline="") as fh:
        return {r["name"]: r for r in csv.DictReader(fh)}


def test_the_pooled_download_is_graded_as_moodle_graded_it(runner, tmp_path):
    """Right answers get full marks, each total is out of the sheet's total (35), and without
    carried credit (which Moodle cannot give) every total is Moodle's own sum of marks."""
    moodle = {}
    for a in _attempts():
        if a["state"] == "finished":
            moodle[a["name"]] = max(moodle.get(a["name"], 0.0), float(a["sumgrades"]))
    key = json.loads(KEY.read_text("utf-8"))
    sheet_totals = {
        sum(float(q["points"]) for q in s["questions"]) for s in key["sheets"]
    }  # every sheet of the bank totals the same
    assert sheet_totals == {35.0}
    csvs = []
    for name in DOWNLOADS:
        scores = _scores(runner, REAL / name, tmp_path / name, "--no-carry")
        assert sorted(scores) == sorted(moodle)
        for who, row in scores.items():
            assert float(row["max"]) == 35.0
            assert float(row["total"]) == pytest.approx(moodle[who], abs=0.006), who
        for who in ("Ada Lovelace", "Zoë Ñúñez-Łukasz", "Gia Rossi"):  # typed the key
            assert scores[who]["total"] == "35", who
        csvs.append((tmp_path / name / "scores.csv").read_text("utf-8"))
    assert csvs[1] == csvs[0] and csvs[2] == csvs[0]  # the spreadsheets say what the CSV says


def test_a_slip_in_the_pooled_question_is_diagnosed(runner, tmp_path):
    """Ben typed a slip's values in the pooled question (attempts.json says which slip and
    which sheet's picks Moodle drew); the report names the slip under one of the two
    questions of that sheet, both headed as Moodle's Question 5."""
    ben = next(a for a in _attempts() if a["user"] == "s2")
    slip = ben["typed"]["5"]["planted"]
    assert slip
    drawn = re.fullmatch(r"5\. shapes \[(\w)\]", ben["drawn"]["5"])
    assert drawn
    _scores(runner, REAL / "responses-right.csv", tmp_path / "out")
    report = (tmp_path / "out" / "report.md").read_text("utf-8")
    section = report.split("(Ben Carter)", 1)[1].split("\n## ", 1)[0]
    pooled = [c for c in section.split("### ")[1:] if c.startswith("Question 5:")]
    key = json.loads(KEY.read_text("utf-8"))
    sheet = drawn.group(1)
    assert [f"(`{qid}`, version {sheet})" for qid in _picks(key, sheet)] == [
        re.search(r"\(`[^`]+`, version \w\)", c).group(0)  # type: ignore[union-attr]
        for c in pooled
    ]
    assert any(f"Reproduced by **{slip}**" in c for c in pooled), pooled


def test_the_question_text_tells_the_sheet_of_a_pooled_slot_and_ties_that_change_no_score_pass():
    """Without the Right answer columns the pooled slot (5) is told by its text. The concept
    questions (6 to 8) read the same in every version (they state no numbers): which version
    Moodle drew changes no score there, so the download is graded (it was refused at line 2,
    issue 34 §2), every student as from the Right-answer download."""
    doc = load_key(KEY)
    by_text = grade(
        *_swap(parse_moodle_rows(_rows(REAL / "responses-qtext.csv"), doc, grade_key(doc), "q.csv"))
    )
    by_right = grade(
        *_swap(parse_moodle_rows(_rows(REAL / "responses-right.csv"), doc, grade_key(doc), "r.csv"))
    )
    assert len(by_text.students) == len(by_right.students) >= 7
    right = {s.student: s for s in by_right.students}
    for s in by_text.students:
        assert s.earned == right[s.student].earned, s.student
        assert [q.id for q in s.questions] == [q.id for q in right[s.student].questions]
        # the pooled slot's sheet is told by its numbers: the same as the Right answer says
        assert [q.version for q in s.questions if q.number == 5] == [
            q.version for q in right[s.student].questions if q.number == 5
        ]


def test_a_question_text_tie_that_changes_a_score_is_still_refused():
    """Two versions whose texts fit alike but whose keys differ cannot be graded from the
    text: refused with the line, as before."""
    doc = load_key(KEY)
    rows = _rows(REAL / "responses-qtext.csv")
    column = [c.strip() for c in rows[0][1]].index("Question 1")
    line, first = rows[1]
    first[column] = "Compute the scaled scores"  # no number: every version fits alike
    with pytest.raises(GradeError) as info:
        parse_moodle_rows(rows, doc, grade_key(doc), "q.csv")
    assert f"q.csv:{line}: Question 1: expected the question text of one version" in str(info.value)


def _swap(pair):
    responses, key = pair
    return key, responses


def test_a_pooled_right_answer_of_no_sheet_is_refused_with_its_line():
    rows = _rows(REAL / "responses-right.csv")
    column = [c.strip() for c in rows[0][1]].index("Right answer 5")
    line, first = rows[1]
    assert first[column].startswith("part 1: ") and "; part 2: " in first[column]
    first[column] += "0"  # the last gap's right answer of no sheet
    doc = load_key(KEY)
    with pytest.raises(GradeError) as info:
        parse_moodle_rows(rows, doc, grade_key(doc), "r.csv")
    message = str(info.value)
    assert f"r.csv:{line}: Right answer 5: expected the right answer of a version (A/B/C/D)" in (
        message
    )


def test_report_shows_a_chosen_option_as_text_without_tex_delimiters(runner, tmp_path):
    """Issue 34 §3: Moodle states a pick-one option as the export wrote it, its math in
    \\( \\); report.md showed "wrote To make every row of \\\\(A\\\\) sum to 1". It shows the
    option as text, its math plain ("… have width dₖ")."""
    argv = ["grade", "--key", str(KEY), str(REAL / "responses-right.csv")]
    result = runner.invoke(main, [*argv, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    report = (tmp_path / "report.md").read_text("utf-8")
    assert "\\(" not in report and "\\\\(" not in report
    # Ben chose a wrong option of each concept question: its text as the sheet prints it
    wrote = re.findall(r"`why_sqrt_dk`: wrong \(0/2\)\. Not credited: wrote ([^,]*),", report)
    assert wrote and all("\\" not in w and "$" not in w for w in wrote), wrote
    assert "wrote Because the values V have width dₖ" in report  # plain math: dₖ
