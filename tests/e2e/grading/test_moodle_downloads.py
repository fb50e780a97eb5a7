"""grade and Moodle's downloads of today's exports (issue 22, issue 26 §5): the real Moodle 4.5
downloads in tests/fixtures/moodle/real-2/ (its README says how each was made and what each
student typed; attempts.json what Moodle drew)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from tests.unit.grading.test_moodle_downloads import (
    CARRY_BANK,
    DOWNLOADS,
    KEYS,
    REAL,
    _attempts,
    _drawn,
    _parse,
)
from worksheetgen.cli import main
from worksheetgen.grading.score import grade
from worksheetgen.keyjson.read import load_key
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions


def test_a_real_download_is_graded_from_the_cli_in_every_format(runner, tmp_path):
    for folder, name in DOWNLOADS:
        out = tmp_path / folder / name
        argv = ["grade", "--key", str(KEYS[folder] / "key.json"), str(REAL / folder / name)]
        result = runner.invoke(main, [*argv, "--out", str(out)])
        assert result.exit_code == 0, (folder, name, result.output)
        with open(out / "scores.csv", encoding="utf-8", newline="") as fh:
            scores = {r["name"]: r for r in csv.DictReader(fh)}
        # Ada and Zoë typed every printed value: full marks wherever they were graded
        for who in ("Ada Lovelace", "Zoë Ñúñez-Łukasz"):
            if who in scores:
                assert scores[who]["total"] == scores[who]["max"], (folder, name, who)
        assert "Finn Olsen" not in scores  # in progress
    csvs = {
        f: (tmp_path / f / "responses-right.csv" / "scores.csv").read_text("utf-8")
        for f in ("pool", "pool-run2")
    }
    for folder in ("pool", "pool-run2"):  # the spreadsheets say what the CSV says
        for ext in ("xlsx", "ods"):
            assert (tmp_path / folder / f"responses-right.{ext}" / "scores.csv").read_text(
                "utf-8"
            ) == csvs[folder]


def test_an_older_downloads_exact_right_answer_is_still_read(runner, tmp_path):
    old = REAL.parent / "default"
    out = tmp_path / "old"
    argv = ["grade", "--key", str(old / "key.json"), str(old / "responses-resp-right.csv")]
    result = runner.invoke(main, [*argv, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "part 7: 0.62245933120185" in (old / "responses-resp-right.csv").read_text("utf-8")


def test_attempts_dealt_against_the_pool_rule_are_listed_and_the_rest_graded(runner, tmp_path):
    out = tmp_path / "g"
    argv = ["grade", "--key", str(REAL / "pool" / "key.json")]
    result = runner.invoke(
        main, [*argv, str(REAL / "pool" / "responses-right.csv"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "3 attempt(s) not graded: the LMS dealt them against the bank's pool rule" in (
        result.output
    )
    with open(out / "scores.csv", encoding="utf-8", newline="") as fh:
        names = [r["name"] for r in csv.DictReader(fh)]
    # Ada and Zoë drew two versions of one question in their only attempt; Gia in her second
    assert names == ["Ben Carter", "Dan Ortiz, Jr.", "Eve Park", "Gia Rossi", "Hal Stone"]
    report = (out / "report.md").read_text("utf-8")
    line = next(ln for ln in report.splitlines() if ln.startswith("Not graded, dealt against"))
    assert (
        "ada.lovelace@example.com (Ada Lovelace): question q-cost twice in pool shapes "
        "(versions C and D, line 2)" in line
    )
    assert (
        "zoe.nunez@example.com (Zoë Ñúñez-Łukasz): question q-cross-mc twice in pool shapes "
        "(versions B and D, line 4)" in line
    )
    assert "gia.rossi@example.com (Gia Rossi), attempt 2 of 2: question q-cost twice" in line
    # Gia's first attempt (the pool's rule kept) is the one graded
    responses, graded_key = _parse("pool", "responses-right.csv")
    gia = next(s for s in graded_key.sheets if s.id.startswith("gia"))
    assert sorted((q.id, q.version) for q in gia.questions) == sorted(
        [("q-softmax", "D"), ("q-causal", "C"), ("q-cross-mc", "A"), ("q-multihead", "A")]
    )


def test_a_download_report_numbers_questions_by_quiz_slot_and_shows_a_choice_by_letter(
    runner, tmp_path
):
    out = tmp_path / "g"
    argv = ["grade", "--key", str(REAL / "pool" / "key.json")]
    result = runner.invoke(
        main, [*argv, str(REAL / "pool-run2" / "responses-right.csv"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text("utf-8")
    for block in report.split("\n## ")[2:]:
        numbers = re.findall(r"^### Question (\d+):", block, re.M)
        assert numbers == [str(n) for n in range(1, len(numbers) + 1)], block[:200]
    assert "&amp;" not in report and "bmatrix" not in report
    assert re.search(r"`output`: wrong \(0/2\)\..*Not credited: wrote [A-D], key [A-D]\.", report)


def test_the_mean_counts_only_students_who_answered_and_headings_name_titles(runner, tmp_path):
    folder = build(BuildOptions(seed=3, versions=4, out=str(tmp_path / "b"), pdf=False)).folder
    template = tmp_path / "responses.csv"
    key = str(folder / "key.json")
    assert runner.invoke(main, ["grade", "--key", key, "--template", str(template)]).exit_code == 0
    rows = list(csv.DictReader(template.open(encoding="utf-8", newline="")))
    doc = json.loads((folder / "key.json").read_text("utf-8"))
    sheet_b = doc["sheets"][1]["id"]
    first = next(r for r in rows if r["student"] == sheet_b)
    first["value"] = "0"  # only sheet B answers: one entry of its first question
    with template.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out = tmp_path / "g"
    result = runner.invoke(main, ["grade", "--key", key, str(template), "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text("utf-8")
    assert "Mean score of the 1 student with responses:" in report
    assert (
        "No responses from: " + ", ".join(s["id"] for s in doc["sheets"] if s["id"] != sheet_b)
        in report
    )
    q = doc["sheets"][1]["questions"][0]
    title = load_key(folder / "key.json").sheets[1].variants[0].title
    assert q["title"] == title and title != q["id"]  # the family's title, stated in the key
    assert f"### Question 1: {title} (`{q['id']}`" in report.replace("\\", "")


def test_a_bad_carry_is_refused_with_its_line(runner, tmp_path, write_bank):
    bank = write_bank(CARRY_BANK.format(sheet="", q1="    carry: sometimes\n"))
    result = runner.invoke(main, ["build", "--seed", "1", "--bank", str(bank), "--no-pdf"])
    assert result.exit_code == 1
    assert result.output == (
        f"worksheetgen: error: {bank}:6: questions[0].carry: expected true or false, "
        "got 'sometimes'\n"
    )
    config = tmp_path / "worksheetgen.toml"
    config.write_text('carry = "no"\n', encoding="utf-8")
    result = runner.invoke(main, ["config", "--config", str(config)])
    assert result.exit_code == 1
    assert result.output.endswith(f"{config}:1: carry: expected true or false, got 'no'\n")


def _grade(runner, key: Path, download: Path, out: Path, *flags: str) -> dict[str, dict]:
    argv = ["grade", "--key", str(key), str(download), "--out", str(out), *flags]
    result = runner.invoke(main, argv)
    assert result.exit_code == 0, result.output
    with open(out / "scores.csv", encoding="utf-8", newline="") as fh:
        return {r["name"]: r for r in csv.DictReader(fh)}


def test_no_carry_gives_what_moodle_gave_and_the_report_shows_where_carry_differs(runner, tmp_path):
    key = REAL / "pool" / "key.json"
    download = REAL / "pool-run2" / "responses-right.csv"
    on = _grade(runner, key, download, tmp_path / "on")
    off = _grade(runner, key, download, tmp_path / "off", "--no-carry")
    # Ben's and Hal's slip in q-softmax: carried credit for (b) with carry, none without,
    # as Moodle (a mark of 0 for that slot)
    assert (on["Ben Carter"]["q-softmax"], off["Ben Carter"]["q-softmax"]) == ("4", "0")
    assert (on["Hal Stone"]["q-softmax"], off["Hal Stone"]["q-softmax"]) == ("4", "0")
    # every question that Moodle marked 0 or full is 0 or full without carry, and so on
    responses, graded_key = _parse("pool-run2", "responses-right.csv")
    result = grade(graded_key, responses, carry=False)
    by_name = {s.name: s for s in result.students}
    slot_max = {"1": 6, "2": 4, "3": 1, "4": 1}
    compared = 0
    for a in _attempts("pool-run2"):
        s = by_name.get(a["name"])
        if s is None or a["state"] != "finished":
            continue
        drawn = dict(zip(a["drawn"], _drawn(a), strict=True))
        if sorted(drawn.values()) != sorted((q.id, q.version) for q in s.questions):
            continue  # the attempt that did not count
        sheet = next(k for k in graded_key.sheets if k.name == a["name"])
        for slot, (qid, _) in drawn.items():
            q = next(q for q in s.questions if q.id == qid)
            if any(x.kind == "shape" for x in sheet.questions[q.number - 1].answers):
                continue  # a shape's points per dimension: the export's rule (#22 §3)
            mark = a["marks"][slot] or 0
            assert (mark == 0) == (q.earned == 0), (a["name"], qid)
            assert (abs(mark - slot_max[slot]) < 1e-6) == (q.earned == q.points), (a["name"], qid)
            compared += 1
    assert compared >= 20
    report = (tmp_path / "on" / "report.md").read_text("utf-8")
    assert "Carried credit changes the score of 2 students" in report
    # Ben's q-multihead shape part earns its share per right dimension (cb37931), so his totals
    # are 10.42 and 3.67 (they were 10.33 and 3.5 when a shape part was all or nothing)
    assert "S002 10.42 (without: 3.67), S008 13 (without: 9)" in report
    assert "Without carried credit (what an LMS gives): 3.67 / 14." in report
    assert "(`q-softmax`, version B), 4 / 6 (without carried credit: 0)" in report
    plain = (tmp_path / "off" / "report.md").read_text("utf-8")
    assert "Carried credit: off (grade --no-carry)" in plain and "Without carried" not in plain


def test_a_key_with_carry_off_is_graded_without_it_unless_grade_says_carry(runner, tmp_path):
    data = json.loads((REAL / "pool" / "key.json").read_text("utf-8"))
    for sheet in data["sheets"]:
        for q in sheet["questions"]:
            q["carry"] = False
    key = tmp_path / "key.json"
    key.write_text(json.dumps(data), encoding="utf-8")
    download = REAL / "pool-run2" / "responses-right.csv"
    from_key = _grade(runner, key, download, tmp_path / "k")
    assert from_key["Ben Carter"]["total"] == "3.67"  # a shape part: per dimension
    assert "Carried credit changes" not in (tmp_path / "k" / "report.md").read_text("utf-8")
    forced = _grade(runner, key, download, tmp_path / "c", "--carry")
    assert forced["Ben Carter"]["total"] == "10.42"
    data["sheets"][0]["questions"][0]["carry"] = "no"
    key.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(
        main, ["grade", "--key", str(key), str(download), "--out", str(tmp_path)]
    )
    assert result.exit_code == 1
    assert "sheets[0].questions[0].carry: expected true or false, got 'no'" in result.output
