"""The bank-language findings of the audit (issue #17, item 8), one behaviour per test."""

from __future__ import annotations

from worksheetgen.bank.load import load_banks

INSTRUCTIONS = """
sheet:
  id: s
  instructions: >-
    Round to {{ places }}. Write a masked score as $-\\infty$, never as 0.
questions:
  - id: h
    family: heads
"""


def test_math_in_the_instructions_prints_as_math_like_a_prompts(runner, write_bank, tmp_path):
    from worksheetgen.cli import main

    path = write_bank(INSTRUCTIONS)
    out = tmp_path / "o"
    res = runner.invoke(
        main, ["build", "--seed", "1", "--bank", str(path), "--no-pdf", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    tex = (out / "s-seed1" / "sheet.tex").read_text(encoding="utf-8")
    md = (out / "s-seed1" / "sheet.md").read_text(encoding="utf-8")
    assert r"Write a masked score as $-\infty$, never as 0." in tex
    assert r"textbackslash" not in tex.split("Write a masked")[1].split("\n")[0]
    assert r"> Round to two decimals. Write a masked score as $-\infty$, never as 0." in md


def test_the_bundled_banks_build_together_with_every_question_id_unique(runner, tmp_path):
    from tests.conftest import ROOT
    from worksheetgen.cli import main

    bank = load_banks([ROOT / "banks"])
    ids = [q.id for q in bank.questions]
    # every bundled bank's questions, none lost or merged: default, note, practice and slips
    # (33, after the note bank's four shared ids were renamed) and the quiz (11)
    each = sum(
        len(load_banks([path]).questions) for path in sorted((ROOT / "banks").glob("*.yaml"))
    )
    assert len(ids) == len(set(ids)) == each == 44
    res = runner.invoke(
        main,
        ["build", "--seed", "5", "--bank", str(ROOT / "banks"), "--no-pdf", "--out", str(tmp_path)],
    )
    assert res.exit_code == 0, res.output
