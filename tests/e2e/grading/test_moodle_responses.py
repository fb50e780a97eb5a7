"""grade reads Moodle's own Responses report (issue 18): real Moodle 4.5.5 downloads in
tests/fixtures/moodle/ (its README says what each student typed)."""

from __future__ import annotations

import csv
import io

import pytest

from tests.unit.grading.test_moodle_responses import (
    BANKS,
    EMAILS,
    FIXTURES,
    read,
    several_attempts_text,
    versions,
)
from worksheetgen.cli import main


def test_grade_command_grades_a_moodle_download_and_writes_nothing_on_a_bad_one(tmp_path):
    from click.testing import CliRunner

    runner = CliRunner()
    key = str(FIXTURES / "default" / "key.json")
    bad = runner.invoke(
        main,
        ["grade", "--key", key, str(FIXTURES / "default" / "grades.csv"), "--out", str(tmp_path)],
    )
    assert bad.exit_code == 1 and "Grades report" in bad.output
    assert list(tmp_path.iterdir()) == []
    ok = runner.invoke(
        main,
        [
            "grade",
            "--key",
            key,
            str(FIXTURES / "default" / "responses-resp-right.csv"),
            "--out",
            str(tmp_path),
        ],
    )
    assert ok.exit_code == 0, ok.output
    scores = (tmp_path / "scores.csv").read_text(encoding="utf-8").splitlines()
    assert scores[1].startswith("ada.lovelace@example.com,Ada Lovelace,")
    assert len(scores) == 6  # five finished attempts; the one in progress is not a zero
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "In progress, not graded" in report and "finn.olsen@example.com" in report


@pytest.mark.parametrize("bank", BANKS)
def test_grade_command_grades_an_xlsx_download_as_its_csv(bank, tmp_path):
    from click.testing import CliRunner

    key = str(FIXTURES / bank / "key.json")
    outs = []
    for suffix in ("csv", "xlsx"):
        out = tmp_path / suffix
        done = CliRunner().invoke(
            main,
            ["grade", "--key", key, str(FIXTURES / bank / f"responses-qtext-resp-right.{suffix}")]
            + ["--out", str(out)],
        )
        assert done.exit_code == 0, done.output
        outs.append((out / "scores.csv").read_bytes())
    assert outs[0] == outs[1]


@pytest.mark.parametrize("name", ["grades.xlsx", "grades.ods", "responses.ods"])
def test_grade_command_refuses_a_spreadsheet_that_is_no_responses_with_right_answers(
    name, tmp_path
):
    from click.testing import CliRunner

    key = str(FIXTURES / "default" / "key.json")
    path = str(FIXTURES / "default" / name)
    done = CliRunner().invoke(main, ["grade", "--key", key, path, "--out", str(tmp_path)])
    assert done.exit_code == 1
    assert f"{name}:1: header: expected" in done.output
    assert list(tmp_path.iterdir()) == []


def test_moodle_report_names_the_version_each_student_drew_per_question(tmp_path):
    from click.testing import CliRunner

    responses, graded_key, key = read("default", "responses-resp-right.csv")
    drawn = versions(graded_key, key)[EMAILS["s1"]]
    folder = FIXTURES / "default"
    args = ["grade", "--key", str(folder / "key.json"), str(folder / "responses-resp-right.csv")]
    run = CliRunner().invoke(main, [*args, "--out", str(tmp_path), "-q"])
    assert run.exit_code == 0, run.output
    report = (tmp_path / "report.md").read_text()
    ada = report.split("## ada.lovelace@example.com")[1].split("\n## ")[0]
    assert len(set(drawn.values())) > 1  # the fixture's Ada drew more than one version
    for qid, version in drawn.items():
        assert f"(`{qid}`, version {version})" in ada


def test_grade_command_reports_which_of_several_attempts_counts(tmp_path):
    from click.testing import CliRunner

    download = tmp_path / "responses.csv"
    download.write_text(several_attempts_text(), encoding="utf-8")
    key_file = str(FIXTURES / "default" / "key.json")
    run = CliRunner().invoke(main, ["grade", "--key", key_file, str(download), "-q"])
    assert run.exit_code == 0, run.output
    report = (tmp_path / "report.md").read_text()
    assert "Several attempts: ben.carter@example.com (Ben Carter), attempt 2 of 3 counts" in report
    scores = list(csv.DictReader(io.StringIO((tmp_path / "scores.csv").read_text())))
    assert [r["total"] for r in scores if r["student"] == EMAILS["s2"]] == ["30"]
