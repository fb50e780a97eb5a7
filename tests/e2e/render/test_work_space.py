"""Room to work (issue 17, item 4): ``space`` on a question, a bank's sheet and the course
configuration, the quiz default for computation questions, what the LaTeX and Markdown
sheets print (and the key does not), and the heights refused when a bank is loaded."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, needs_tex
from worksheetgen.cli import main
from worksheetgen.model import QUIZ_SPACE

BANK = """
sheet:
  id: room
  kind: {kind}
questions:
  - id: lines
    family: softmax
    space: {{height: 5cm, style: lines}}
  - id: grid
    family: scaling
    space: {{height: 6cm, style: grid}}
  - id: blank
    family: heads
    space: 4cm
  - id: quiz-default
    family: causal
  - id: opted-out
    family: softmax
    space: none
  - id: words
    family: concept
"""


def _build(runner, bank: Path, out: Path, *extra: str) -> Path:
    args = ["build", "--bank", str(bank), "--seed", "3", "--no-pdf", "--out", str(out), *extra]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    (folder,) = out.iterdir()
    return folder


def _spaces(tex: str) -> list[tuple[str, str]]:
    return re.findall(r"^\\wsspace\{([^}]*)\}\{([a-z]+)\}$", tex, re.M)


def test_a_quiz_gives_computation_questions_room_and_concept_questions_none(
    runner, write_bank, tmp_path
):
    folder = _build(runner, write_bank(BANK.format(kind="quiz")), tmp_path / "out")
    tex = (folder / "sheet.tex").read_text(encoding="utf-8")
    # lines, grid, blank as asked; the quiz's default for causal; none where opted out and
    # for the concept question
    assert _spaces(tex) == [
        ("5cm", "lines"),
        ("6cm", "grid"),
        ("4cm", "blank"),
        (QUIZ_SPACE.height, QUIZ_SPACE.style),
    ]
    md = (folder / "sheet.md").read_text(encoding="utf-8")
    assert re.findall(r"^_Room to work: (.*)\._$", md, re.M) == [
        "5 cm, ruled lines",
        "6 cm, squared grid",
        "4 cm, blank",
        "5 cm, ruled lines",
    ]


def test_a_worksheet_gives_room_only_where_asked(runner, write_bank, tmp_path):
    folder = _build(runner, write_bank(BANK.format(kind="worksheet")), tmp_path / "out")
    tex = (folder / "sheet.tex").read_text(encoding="utf-8")
    assert _spaces(tex) == [("5cm", "lines"), ("6cm", "grid"), ("4cm", "blank")]


def test_the_key_prints_no_room_to_work(runner, write_bank, tmp_path):
    folder = _build(runner, write_bank(BANK.format(kind="quiz")), tmp_path / "out")
    assert _spaces((folder / "key.tex").read_text(encoding="utf-8")) == []
    assert "Room to work" not in (folder / "key.md").read_text(encoding="utf-8")


def test_a_banks_sheet_space_is_the_default_of_its_questions(runner, write_bank, tmp_path):
    bank = write_bank(
        """
        sheet:
          space: {height: 3cm, style: grid}
        questions:
          - id: soft
            family: softmax
          - id: heads
            family: heads
            space: 2cm
        """
    )
    tex = (_build(runner, bank, tmp_path / "out") / "sheet.tex").read_text(encoding="utf-8")
    assert _spaces(tex) == [("3cm", "grid"), ("2cm", "blank")]


def test_the_course_configuration_sets_kind_and_space_and_the_bank_wins(
    runner, write_bank, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "worksheetgen.toml").write_text(
        'kind = "quiz"\nspace = {height = "35mm", style = "lines"}\n', encoding="utf-8"
    )
    bank = write_bank(
        """
        questions:
          - id: soft
            family: softmax
          - id: heads
            family: heads
            space: none
        """
    )
    tex = (_build(runner, bank, tmp_path / "out") / "sheet.tex").read_text(encoding="utf-8")
    assert _spaces(tex) == [("35mm", "lines")]  # the course's space; heads says none
    (tmp_path / "worksheetgen.toml").write_text('kind = "quiz"\n', encoding="utf-8")
    tex = (_build(runner, bank, tmp_path / "out2") / "sheet.tex").read_text(encoding="utf-8")
    assert _spaces(tex) == [(QUIZ_SPACE.height, QUIZ_SPACE.style)]  # the quiz's own room
    worksheet = write_bank(
        """
        sheet:
          kind: worksheet
        questions:
          - id: soft
            family: softmax
        """,
        "worksheet.yaml",
    )
    tex = (_build(runner, worksheet, tmp_path / "out3") / "sheet.tex").read_text(encoding="utf-8")
    assert _spaces(tex) == []  # the bank's kind wins over the course's


def test_space_none_everywhere_gives_the_bytes_of_no_space_at_all(runner, write_bank, tmp_path):
    plain = write_bank("questions:\n  - id: soft\n    family: softmax\n", "plain.yaml")
    none = write_bank(
        "sheet:\n  kind: worksheet\nquestions:\n  - id: soft\n    family: softmax\n"
        "    space: none\n",
        "none.yaml",
    )
    a = _build(runner, plain, tmp_path / "a")
    b = _build(runner, none, tmp_path / "b")
    for name in ("sheet.tex", "sheet.md", "key.tex", "key.md", "key.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.parametrize(
    ("where", "line", "field"),
    [
        ("question", 4, "questions[0].space"),
        ("sheet", 2, "sheet.space"),
    ],
)
def test_a_space_taller_than_the_page_is_one_line_and_nothing_is_written(
    runner, write_bank, tmp_path, where, line, field
):
    if where == "question":
        text = "questions:\n  - id: soft\n    family: softmax\n    space: 30cm\n"
    else:
        text = (
            "sheet:\n  space: {height: 30cm, style: lines}\n"
            "questions:\n  - id: soft\n    family: softmax\n"
        )
    bank = write_bank(text)
    out = tmp_path / "out"
    result = runner.invoke(
        main, ["build", "--bank", str(bank), "--seed", "1", "--no-pdf", "--out", str(out)]
    )
    assert result.exit_code == 1
    assert result.stderr == (
        f"worksheetgen: error: {bank}:{line}: {field}: expected a height that fits on a page "
        "(at most 257mm, the text height), got '30cm'\n"
    )
    assert not out.exists()


def test_a_bad_kind_is_refused_with_its_line(runner, write_bank, tmp_path):
    bank = write_bank("sheet:\n  kind: exam\nquestions:\n  - id: soft\n    family: softmax\n")
    result = runner.invoke(main, ["build", "--bank", str(bank), "--seed", "1", "--no-pdf"])
    assert result.exit_code == 1
    assert result.stderr == (
        f"worksheetgen: error: {bank}:2: sheet.kind: expected worksheet or quiz, got 'exam'\n"
    )


@needs_tex
def test_lines_grid_and_blank_print_and_stay_with_their_question(runner, tmp_path):
    """The example bank compiles; each room is on the page of its question's last part."""
    out = tmp_path / "out"
    bank = ROOT / "examples" / "room-to-work.yaml"
    result = runner.invoke(main, ["build", "--bank", str(bank), "--seed", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    (folder,) = out.iterdir()
    pdftotext = shutil.which("pdftotext")
    if pdftotext is None:
        pytest.skip("pdftotext is not installed")
    text = subprocess.run(
        [pdftotext, "-layout", str(folder / "sheet.pdf"), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pages = text.split("\f")
    # question 1's room shrinks at the foot of page 1 (to a third at most) so that question 2
    # starts there; its last part (e) goes on to page 2 under its heading and data again,
    # with its 6 cm grid; question 3 and its last part (c), then question 4, follow there
    on = {q: next(i for i, p in enumerate(pages) if f"Question {q}." in p) for q in (2, 3, 4)}
    last_part = next(i for i, p in enumerate(pages) if "What is the shape of" in p)
    continued = next(i for i, p in enumerate(pages) if "Question 2, continued" in p)
    assert on[2] == 0 and continued == on[3] == last_part == on[4] == 1
    assert "(e)" in pages[1] and "(e)" not in pages[0]


def test_a_space_that_fits_a4_but_not_letter_is_refused_on_letter_paper_only(
    runner, write_bank, tmp_path
):
    bank = write_bank("questions:\n  - id: soft\n    family: softmax\n    space: 25cm\n")
    args = ["build", "--bank", str(bank), "--seed", "1", "--no-pdf"]
    a4 = runner.invoke(main, [*args, "--out", str(tmp_path / "a4")])
    assert a4.exit_code == 0, a4.output
    out = tmp_path / "letter"
    letter = runner.invoke(main, [*args, "--paper", "letter", "--out", str(out)])
    assert letter.exit_code == 1
    assert letter.stderr == (
        f"worksheetgen: error: {bank}:2: space: expected a height that fits on a letter page "
        "(at most 239.4mm, the text height), got '25cm'\n"
    )
    assert not out.exists()
