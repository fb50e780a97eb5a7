"""#22: a written part is dealt with its graded part in every LMS export.

A question with several versions (a class's sheets, a pool's alternatives, a pool's picks)
that has a written part used to get one essay per version in a category of its own, drawn
apart from the graded question: a student could write about another version's table. Now
each graded question asks its own written part, and the slot has one essay every student
gets; a pool whose alternatives have written parts in some and none in others is refused.
"""

from __future__ import annotations

from click.testing import CliRunner

from tests.conftest import ROOT
from worksheetgen.cli import main


def test_a_pool_with_written_parts_in_some_alternatives_only_is_refused_in_one_line(
    tmp_path, write_bank
):
    bank = write_bank(
        "questions:\n  - pool: why\n    from:\n"
        "      - id: w-soft\n        family: softmax\n        points: 6\n"
        "      - id: w-keys\n        family: identical-keys\n        points: 6\n"
        "        params: {T: 3, d_k: 2}\n"
    )
    runner = CliRunner()
    out = tmp_path / "b"
    args = ["build", "--seed", "42", "--versions", "4", "--no-pdf", "--bank", str(bank)]
    assert runner.invoke(main, [*args, "--out", str(out)]).exit_code == 0
    (key,) = out.glob("*/key.json")
    for to, lms, name in (("moodle", "Moodle", "moodle.xml"), ("qti", "Canvas", "canvas-qti.zip")):
        result = runner.invoke(main, ["export", "--to", to, "--key", str(key)])
        assert result.exit_code == 1
        assert result.output == (
            f"worksheetgen: error: {key}: pool why: expected a written part in every sheet's "
            f"pool or in none ({lms} gives the slot one written question, and a sheet without "
            "one would get it too), got w-soft without: give the written questions a slot of "
            "their own\n"
        )
        assert not (key.parent / name).exists()


def test_a_pool_whose_written_shares_differ_is_refused_naming_what_to_change(tmp_path, write_bank):
    # both alternatives plain points: 6, but scale-effect asks 8 graded answers and a written
    # one (6/9 for the essay), identical-keys 3 and one (6/4): one shared essay cannot carry
    # both shares, so the export refuses the pool rather than mark a student out of another
    # total than their sheet's
    bank = write_bank(
        "questions:\n  - pool: why\n    from:\n"
        "      - id: w-scale\n        family: scale-effect\n        points: 6\n"
        "        params: {n: 2, d_k: {choices: [4, 9, 16]}}\n"
        "      - id: w-keys\n        family: identical-keys\n        points: 6\n"
        "        params: {T: 3, d_k: 2}\n"
    )
    runner = CliRunner()
    out = tmp_path / "b"
    args = ["build", "--seed", "42", "--versions", "4", "--no-pdf", "--bank", str(bank)]
    assert runner.invoke(main, [*args, "--out", str(out)]).exit_code == 0
    (key,) = out.glob("*/key.json")
    formats = (("moodle", "Moodle", "mark"), ("qti", "Canvas", "score"), ("gift", "Moodle", "mark"))
    for to, lms, what in formats:
        result = runner.invoke(main, ["export", "--to", to, "--key", str(key)])
        assert result.exit_code == 1, to
        assert result.output == (
            f"worksheetgen: error: {key}: pool why: expected every sheet's graded points for "
            f"it to be equal ({lms} gives one {what} to all it draws there), got 4.5, 5.33: "
            "give its alternatives points per part whose graded parts total the same (and "
            "written parts the same)\n"
        ), to
    assert (
        sorted(p.name for p in key.parent.iterdir() if p.suffix in (".xml", ".zip", ".txt")) == []
    )


def test_one_version_keeps_its_essay_asking_the_written_part_itself(tmp_path):
    """A single worksheet has nothing to deal apart: its essay asks the written part as
    before, and its graded question does not."""
    runner = CliRunner()
    args = ["build", "--seed", "42", "--no-pdf", "--bank", str(ROOT / "banks" / "note.yaml")]
    assert runner.invoke(main, [*args, "--out", str(tmp_path), "--export", "moodle"]).exit_code == 0
    (xml,) = tmp_path.glob("*/moodle.xml")
    text = xml.read_text(encoding="utf-8")
    assert "in the written question that follows this one" not in text
    assert "(written)</text>" in text and ":written</idnumber>" in text


def test_gift_asks_the_written_part_in_the_graded_question_and_shares_one_essay(tmp_path):
    runner = CliRunner()
    args = ["build", "--seed", "42", "--versions", "3", "--no-pdf"]
    args += ["--bank", str(ROOT / "banks" / "note.yaml"), "--export", "gift"]
    assert runner.invoke(main, [*args, "--out", str(tmp_path)]).exit_code == 0
    (gift,) = tmp_path.glob("*/gift.txt")
    text = gift.read_text(encoding="utf-8")
    for qid, n in (("note-scale-effect", 4), ("identical-keys", 7)):
        names = [line for line in text.splitlines() if line.startswith(f"::{n}. {qid}")]
        assert [x for x in names if "(written)" in x.split("::")[1]] == [
            x for x in names if x.startswith(f"::{n}. {qid} (written)::")
        ]
        assert len([x for x in names if "(written)" in x.split("::")[1]]) == 1
        # each version's last graded question asks its written part
        asking = [x for x in names if "in the written question that follows" in x]
        assert len(asking) == 3, qid
