"""Issue 34 §2: ``grade`` gives an adaptive Moodle quiz's marks as Moodle does: each
question's best try less the penalty for the wrong tries before it (Moodle's
``qbehaviour_adaptive``), and the attempt (or the mean of the attempts) the quiz's grading
method counts. tests/fixtures/moodle/adaptive-pooled/ holds a real Moodle 4.5 "All tries"
download of a pooled quiz of banks/quiz.yaml in adaptive mode and Moodle's own marks
(attempts.json); its README says how it was made."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from tests.paths import ROOT
from tests.unit.grading.test_moodle_adaptive import KEY, REAL, _state
from worksheetgen.cli import main
from worksheetgen.keyjson.lms import MOODLE_PENALTY


def test_the_fixture_is_what_todays_export_of_the_quiz_bank_makes(runner, tmp_path):
    """Fails when the build or the Moodle export of banks/quiz.yaml no longer writes, byte for
    byte, the moodle.xml the quiz was imported from (penalties, marks, gaps, names): then
    make the download again as the README says."""
    argv = ["build", "--seed", "42", "--versions", "4", "--no-pdf", "--export", "moodle"]
    argv += ["--bank", str(ROOT / "banks" / "quiz.yaml"), "--out", str(tmp_path)]
    result = runner.invoke(main, argv)
    assert result.exit_code == 0, result.output
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]

    def digest(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()

    assert digest(folder / "moodle.xml") == digest(REAL / "moodle.xml"), (
        "today's Moodle export of banks/quiz.yaml differs from the one the download was "
        "taken on: renew tests/fixtures/moodle/adaptive-pooled (README.md there)"
    )
    fresh = json.loads((folder / "key.json").read_text("utf-8"))
    assert fresh["sheets"] == json.loads(KEY.read_text("utf-8"))["sheets"], "renew adaptive-pooled"
    # the penalty grade applies by default is the one that export wrote
    penalties = set(re.findall(r"<penalty>([^<]*)</penalty>", (REAL / "moodle.xml").read_text()))
    assert penalties == {"0.3333333"} and Fraction("0.3333333") == MOODLE_PENALTY
    assert {p for a in _state()["attempts"] for p in a["penalty"].values()} == {0.3333333}


def test_a_last_try_download_says_once_that_the_tries_are_unknown(runner, tmp_path):
    """One row per attempt: no try to penalise. Asked for a penalty, report.md says so in
    one line; unasked, nothing (a deferred-feedback quiz's download reads the same)."""
    argv = ["grade", "--key", str(KEY), str(REAL / "responses-lasttry.csv"), "--no-report"]
    for flags, said in [([], 0), (["--penalty", "0.5"], 1)]:
        out = tmp_path / str(said)
        result = runner.invoke(main, [*argv, "--out", str(out), *flags])
        assert result.exit_code == 0, result.output
        report = (out / "report.md").read_text("utf-8")
        assert report.count("wrong tries are unknown") == said
    # the last try of each question, unpenalised: Ben's key answers
    scores = list(csv.DictReader(io.StringIO((out / "scores.csv").read_text("utf-8"))))
    assert {r["name"]: r["total"] for r in scores}["Ben Carter"] == "35"


def test_the_cli_grades_the_all_tries_download_as_moodle_did(runner, tmp_path):
    argv = ["grade", "--key", str(KEY), str(REAL / "responses-alltries.csv"), "--no-carry"]
    result = runner.invoke(main, [*argv, "--no-report", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    scores = list(csv.DictReader(io.StringIO((tmp_path / "scores.csv").read_text("utf-8"))))
    totals = {r["name"]: r["total"] for r in scores}
    assert totals["Ben Carter"] == "23.33" and totals["Eve Park"] == "25.04"
    assert totals["Hal Stone"] == "30.64" and totals["Gia Rossi"] == "35"
    report = (tmp_path / "report.md").read_text("utf-8")
    assert "try 2 of 2 tries counts, less 1.67 for 1 wrong try" in report
    result = runner.invoke(
        main, [*argv, "--no-report", "--out", str(tmp_path), "--grading-method", "average"]
    )
    assert result.exit_code == 0, result.output
    scores = list(csv.DictReader(io.StringIO((tmp_path / "scores.csv").read_text("utf-8"))))
    assert {r["name"]: r["total"] for r in scores}["Gia Rossi"] == "23.3"
    assert "the average of 3 attempts counts (average)" in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--penalty", "1.5"], "--penalty: expected a decimal from 0 to 1, got '1.5'"),
        (["--penalty", "-0.1"], "--penalty: expected a decimal from 0 to 1, got '-0.1'"),
        (["--penalty", "1/3"], "--penalty: expected a decimal from 0 to 1, got '1/3'"),
        (["--penalty", ""], "--penalty: expected a decimal from 0 to 1, got ''"),
        (
            ["--grading-method", "median"],
            "--grading-method/--attempt: expected one of highest, average, first, last, "
            "got 'median'",
        ),
    ],
)
def test_the_options_are_refused_in_one_line(runner, tmp_path, flags, message):
    argv = ["grade", "--key", str(KEY), str(REAL / "responses-alltries.csv")]
    result = runner.invoke(main, [*argv, "--out", str(tmp_path), *flags])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"worksheetgen: error: {message}"]
    assert not list(tmp_path.iterdir())


def test_a_german_keys_report_says_its_notes_on_the_download_in_german(runner, tmp_path):
    """The notes grade makes of a Moodle download (the tries it cannot know, the attempt
    that counts) are in the key's language, as the rest of report.md is."""
    doc = json.loads(KEY.read_text("utf-8"))
    doc["language"] = "de"
    key = tmp_path / "key.json"
    key.write_text(json.dumps(doc), "utf-8")
    argv = ["grade", "--key", str(key), "--no-report"]
    tries = [str(REAL / "responses-lasttry.csv"), "--penalty", "0.5"]
    result = runner.invoke(main, [*argv, *tries, "--out", str(tmp_path / "last")])
    assert result.exit_code == 0, result.output
    report = (tmp_path / "last" / "report.md").read_text("utf-8")
    assert "daher sind die falschen Antwortversuche unbekannt" in report
    assert "wrong tries are unknown" not in report
    average = [str(REAL / "responses-alltries.csv"), "--grading-method", "average"]
    result = runner.invoke(main, [*argv, *average, "--out", str(tmp_path / "all")])
    assert result.exit_code == 0, result.output
    report = (tmp_path / "all" / "report.md").read_text("utf-8")
    assert "es zählt der Durchschnitt von 3 Testversuchen (average)" in report
    assert "attempts counts" not in report
