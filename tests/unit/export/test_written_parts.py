"""#22: a written part is dealt with its graded part in every LMS export.

A question with several versions (a class's sheets, a pool's alternatives, a pool's picks)
that has a written part used to get one essay per version in a category of its own, drawn
apart from the graded question: a student could write about another version's table. Now
each graded question asks its own written part, and the slot has one essay every student
gets; a pool whose alternatives have written parts in some and none in others is refused.

A behaviour across modules, not one module's tests (export, keyjson.read, pipeline.build,
pipeline.options).
"""

from __future__ import annotations

import html as htmllib
import itertools
import re
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT
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
