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
from tests.paths import ROOT
from tests.unit.grading.test_moodle_pooled import DOWNLOADS, KEY, REAL, _attempts, _picks
from worksheetgen.cli import main


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
