"""#22: a written part is dealt with its graded part in every LMS export.

A question with several versions (a class's sheets, a pool's alternatives, a pool's picks)
that has a written part used to get one essay per version in a category of its own, drawn
apart from the graded question: a student could write about another version's table. Now
each graded question asks its own written part, and the slot has one essay every student
gets; a pool whose alternatives have written parts in some and none in others is refused.
"""

from __future__ import annotations

import html as htmllib
import itertools
import re
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import ROOT
from worksheetgen.cli import main
from worksheetgen.keyjson.read import load_key, written_parts
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions

BANK = ROOT / "tests" / "fixtures" / "moodle" / "real-4" / "bank.yaml"
QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("written")
    result = build(
        BuildOptions(
            seed=42,
            banks=(str(BANK),),
            out=str(out / "b"),
            pdf=False,
            versions=4,
            exports=("moodle",),
        )
    )
    return result.folder


@pytest.fixture(scope="module")
def canvas_folder(tmp_path_factory) -> Path:
    """real-4's bank with its pick-2 pool made of alternatives of equal blanks (Canvas splits
    an item's points equally among its blanks, so real-4's own pool, 11, 19 and 14 blanks
    at equal points, is refused for Canvas), exported to Canvas."""
    out = tmp_path_factory.mktemp("written-canvas")
    text = BANK.read_text("utf-8")
    two = text.index("  - pool: two")
    bank = out / "bank.yaml"
    bank.write_text(
        text[:two]
        + """  - pool: two
    pick: 2
    from:
      - id: t-scale
        family: scale-effect
        points: {total: 7, why_scale: 1}
        params: {n: 2, d_k: {choices: [4, 9, 16]}}
      - id: t-other
        family: scale-effect
        points: {total: 7, why_scale: 1}
        params: {n: 2, d_k: {choices: [4, 16]}}
      - id: t-third
        family: scale-effect
        points: {total: 7, why_scale: 1}
        params: {n: 2, d_k: {choices: [9, 16]}}
""",
        "utf-8",
    )
    result = build(
        BuildOptions(
            seed=42, banks=(str(bank),), out=str(out / "b"), pdf=False, versions=4, exports=("qti",)
        )
    )
    return result.folder


def _plain(text: str) -> str:
    return " ".join(htmllib.unescape(text).split())


def _prompt(part) -> str:
    from worksheetgen.export import html

    return " ".join(html.markup_text(part.prompt).split())


def _moodle(folder: Path) -> list[tuple[str, ET.Element]]:
    """Every question of moodle.xml with its category."""
    root = ET.parse(folder / "moodle.xml").getroot()
    out, current = [], ""
    for q in root.iter("question"):
        if q.get("type") == "category":
            current = q.findtext("category/text") or ""
        else:
            out.append((current, q))
    return out


def test_moodle_every_graded_question_asks_its_own_written_part_and_one_essay_answers_it(folder):
    doc = load_key(folder / "key.json")
    by_category: dict[str, list[ET.Element]] = {}
    for cat, q in _moodle(folder):
        by_category.setdefault(cat, []).append(q)
    sheets = {s.id: s for s in doc.sheets}
    for q in doc.questions:
        written = [c for c in by_category if c.endswith(f"{q.qid} - {q.title} (written part)")]
        assert len(written) == 1, q.qid
        (essay,) = by_category[written[0]]  # one essay for every version
        assert essay.get("type") == "essay"
        assert essay.findtext("name/text") == f"{q.number}. {q.qid} (written)"
        assert essay.findtext("idnumber") == f"{q.qid}:written"
        info = _plain(essay.find("graderinfo/text").text)
        graded = by_category[f"$course$/top/{doc.title}/{q.number:02d} {q.qid} - {q.title}"]
        for g in graded:
            sheet_id = g.findtext("name/text").rsplit("[", 1)[1].rstrip("]")
            text = _plain(g.find("questiontext/text").text)
            assert "in the written question that follows this one" in text
            dealt = [v for v in sheets[sheet_id].variants if v.slot == q.qid or v.qid == q.qid]
            for v in dealt:
                for part in written_parts(v):
                    assert _prompt(part) in text  # the drawn version's own prompt
                assert f"Sheet {sheet_id}: {v.qid}" in info  # and its model answer for the TA
        # the essay itself states no version's prompt: it cannot be of another version
        essay_text = _plain(essay.find("questiontext/text").text)
        assert re.search("the parts? the question above asks in words", essay_text)


def test_every_moodle_draw_gives_an_essay_of_the_drawn_version(folder):
    """Every combination of one random question per category (what the documented quiz
    draws): every written prompt the student reads is one of the version (or the sheet's
    picks) whose graded part they drew, and each has the slot's essay drawn to answer it."""
    doc = load_key(folder / "key.json")
    categories: dict[str, list[ET.Element]] = {}
    for cat, q in _moodle(folder):
        categories.setdefault(cat, []).append(q)
    every = {p for q in doc.questions for v in q.variants for p in map(_prompt, written_parts(v))}
    slot_ids = {q.qid: {v.qid for v in q.variants} for q in doc.questions}
    draws = 0
    for combo in itertools.product(*categories.values()):
        essays = {q.findtext("idnumber") for q in combo if q.get("type") == "essay"}
        for g in (q for q in combo if q.get("type") != "essay"):
            qid, sheet_id = g.findtext("idnumber").split(":")[:2]
            # the key's slot: the question, or the pool its alternative (or deal) belongs to
            slot = next(k for k, ids in slot_ids.items() if qid in {k, *ids})
            sheet = next(s for s in doc.sheets if s.id == sheet_id)
            dealt = [v for v in sheet.variants if slot in (v.slot, v.qid)]
            own = {_prompt(p) for v in dealt for p in written_parts(v)}
            text = _plain(g.find("questiontext/text").text)
            assert {p for p in every if p in text} == own  # this version's, no other's
            assert f"{slot}:written" in essays
        draws += 1
    assert draws == 4 * 4 * 4  # q-scale: 4 versions; why: 4 variants; two: 4 sheets' picks


def _qti_items(folder: Path) -> ET.Element:
    with zipfile.ZipFile(folder / "canvas-qti.zip") as z:
        (name,) = [
            n
            for n in z.namelist()
            if n.endswith(".xml") and "meta" not in n and "manifest" not in n
        ]
        return ET.fromstring(z.read(name))


def test_canvas_written_group_holds_one_essay_and_the_items_ask_the_written_part(canvas_folder):
    root = _qti_items(canvas_folder)
    groups = [s for s in root.iter(f"{QTI}section") if s.get("ident") != "root_section"]
    written = [g for g in groups if g.get("title").endswith("(written part)")]
    assert len(written) == 3
    for g in written:
        (item,) = g.findall(f"{QTI}item")
        assert item.get("title").endswith("(written)")
        assert g.findtext(f"{QTI}selection_ordering/{QTI}selection/{QTI}selection_number") == "1"
    for g in groups:
        if g in written:
            continue
        for item in g.findall(f"{QTI}item"):
            text = _plain(item.findtext(f".//{QTI}mattext"))
            assert "in the written question that follows this one" in text, item.get("title")


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
