"""`worksheetgen check`'s line on how many pages each sheet will take (#32 §1): drawn as a
build would draw the sheets, on the configuration's paper and kind of sheet, else on both."""

from __future__ import annotations

import re

from tests.paths import ROOT
from worksheetgen.cli import main
from worksheetgen.pipeline.options import BuildOptions
from worksheetgen.pipeline.pages import draw_versions, page_counts

QUIZ = str(ROOT / "banks" / "quiz.yaml")
NO_SECRET = {"WORKSHEETGEN_SECRET": ""}


def _pages(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("pages: ")]


def test_check_says_the_pages_on_both_papers_plain_and_scannable(runner, tmp_path):
    result = runner.invoke(
        main, ["check", "--bank", QUIZ, "--stress", "2", "--sheets", "4"], env=NO_SECRET
    )
    assert result.exit_code == 0, result.output
    (line,) = _pages(result.output)
    assert re.fullmatch(
        r"pages: \d(-\d)? a sheet on A4, \d(-\d)? on Letter \(4 sheets drawn at seed 0; "
        r"scannable: \d(-\d)? on A4, \d(-\d)? on Letter\)",
        line,
    ), line
    # before the closing line, which stays last
    assert result.output.strip().splitlines()[-1].startswith("OK: ")


def test_the_line_counts_what_a_build_of_those_versions_would_print(runner):
    result = runner.invoke(
        main,
        ["check", "--bank", QUIZ, "--stress", "1", "--sheets", "5", "--seed", "7"]
        + ["--paper", "letter", "--scannable"],
        env=NO_SECRET,
    )
    assert result.exit_code == 0, result.output
    counts = page_counts(draw_versions(BuildOptions(seed=7, banks=(QUIZ,)), 5), "letter", True)
    spread = str(min(counts)) if min(counts) == max(counts) else f"{min(counts)}-{max(counts)}"
    assert _pages(result.output) == [
        f"pages: {spread} a scannable sheet on Letter (5 sheets drawn at seed 7)"
    ]


def test_the_configurations_paper_and_scannable_decide_what_is_counted(runner, tmp_path):
    config = tmp_path / "worksheetgen.toml"
    config.write_text(f'banks = ["{QUIZ}"]\npaper = "letter"\nscannable = false\n', "utf-8")
    result = runner.invoke(
        main, ["check", "--stress", "1", "--sheets", "2", "--config", str(config)], env=NO_SECRET
    )
    assert result.exit_code == 0, result.output
    (line,) = _pages(result.output)
    assert line.endswith(" a sheet on Letter (2 sheets drawn at seed 0)"), line
    # an option wins over the configuration
    result = runner.invoke(
        main,
        ["check", "--stress", "1", "--sheets", "2", "--config", str(config), "--paper", "a4"],
        env=NO_SECRET,
    )
    (line,) = _pages(result.output)
    assert " a sheet on A4 (" in line and "Letter" not in line


def test_no_page_line_when_asked_for_none_or_when_a_draw_fails(runner, write_bank):
    result = runner.invoke(
        main, ["check", "--bank", QUIZ, "--stress", "1", "--sheets", "0"], env=NO_SECRET
    )
    assert result.exit_code == 0 and not _pages(result.output)
    hopeless = write_bank(
        "sheet: {id: chk}\nquestions:\n  - id: q\n    family: softmax\n"
        "    params: {S: [[2, 0], [0, 2]], d_k: {choices: [2, 4]}}\n"
    )
    result = runner.invoke(main, ["check", "--bank", str(hopeless), "--stress", "3"])
    assert result.exit_code == 1 and not _pages(result.output)


def test_a_configuration_in_large_print_gets_its_own_count(runner, tmp_path):
    config = tmp_path / "worksheetgen.toml"
    config.write_text(f'banks = ["{QUIZ}"]\npaper = "a4"\nlarge_print = true\n', "utf-8")
    result = runner.invoke(
        main, ["check", "--stress", "1", "--sheets", "3", "--config", str(config)], env=NO_SECRET
    )
    assert result.exit_code == 0, result.output
    (line,) = _pages(result.output)
    drawn = draw_versions(BuildOptions(seed=0, banks=(QUIZ,)), 3)
    large = page_counts(drawn, "a4", large=True)
    spread = str(min(large)) if min(large) == max(large) else f"{min(large)}-{max(large)}"
    assert line.endswith(
        f"(3 sheets drawn at seed 0; large print: {spread} on A4; scannable: "
        + line.rsplit("scannable: ", 1)[1]
    ), line
    # the larger type takes more pages than the standard sheet's
    assert sum(large) > sum(page_counts(drawn, "a4"))
    # a scannable configuration: large print is refused by build, so not counted
    config.write_text(f'banks = ["{QUIZ}"]\nlarge_print = true\nscannable = true\n', "utf-8")
    result = runner.invoke(
        main, ["check", "--stress", "1", "--sheets", "2", "--config", str(config)], env=NO_SECRET
    )
    (line,) = _pages(result.output)
    assert "large print" not in line, line
