"""LMS round trip, round two (issue 22, the export side), checked by parsing back the exports.

- a pooled quiz deals only what the bank's pool allows: every question set the exported
  structure (categories and how many random questions each says to add; Canvas groups and
  their picks) permits is a set some sheet printed, distinct alternatives, one version each;
- each student's maximum in the LMS is their printed sheet's total, or the export refuses the
  slot with one line naming it;
- gap weights (and Canvas blank shares) follow the sheet's part points for every question,
  a plain ``points: N`` split equally among the answers as the sheet and ``grade`` split it;
- GIFT questions carry the key as general feedback, and marks a person can type;
- a Canvas blank whose value is 0 accepts the leading ``+`` every item promises.

A behaviour across modules, not one module's tests (export.moodle, export.qti, keyjson.read,
pipeline.build, pipeline.options).
"""

from __future__ import annotations

import itertools
import json
import re
import xml.etree.ElementTree as ET
import zipfile
from fractions import Fraction
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT
from worksheetgen.export.moodle import numeric_answers
from worksheetgen.export.qti import accepted_texts
from worksheetgen.keyjson.read import KeyDoc, Variant, gradable_parts, graded_points, parse_key
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions

QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"


BANKS = ["default", "note", "practice", "slips"]


# the real run's quiz (../shared/samples/moodle/real-2/pool/quiz.yaml): pools whose
# alternatives are worth 6, 4 and 5 points, and 1, 1 and 2 with pick 2
REAL_POOL_QUIZ = """\
sheet:
  id: attn-quiz
  title: Attention Quiz 3
  shuffle: true
  decimals: 2
questions:
  - id: q-softmax
    family: softmax
    points: {a: 2, A: 4}
    params: {T: 2, d_k: {choices: [2, 4, 9]}, low: 0, high: 3}
  - pool: attention-slot
    pick: 1
    from:
      - q-causal
      - id: q-scaling
        family: scaling
        points: SCALING
        params: {n: {min: 2, max: 3}, d_k: {choices: [2, 4]}}
      - id: q-heads
        family: heads
        points: {total: 5, c: 3}
        params: {d: {choices: [8, 12, 16]}, h: {choices: [2, 4]}}
  - pool: shapes
    pick: 2
    from:
      - id: q-multihead
        family: multihead
      - id: q-cost
        family: cost
      - id: q-cross-mc
        family: cross
        format: choice
        points: CROSS
        params: {numeric: true}
  - id: q-causal
    family: causal
    points: {total: CAUSAL, A: 3}
    params: {T: 3, d_k: {choices: [2, 4]}, low: 0, high: 3}
"""


def _quiz(path: Path, scaling: int = 4, cross: int = 2, causal: int = 6) -> Path:
    text = REAL_POOL_QUIZ.replace("SCALING", str(scaling)).replace("CROSS", str(cross))
    path.write_text(text.replace("CAUSAL", str(causal)), encoding="utf-8")
    return path


def _build(out: Path, bank: Path, versions: int, exports: tuple[str, ...] = ()) -> Path:
    return build(
        BuildOptions(
            seed=42,
            banks=(str(bank),),
            out=str(out),
            pdf=False,
            versions=versions,
            exports=exports,
        )
    ).folder


@pytest.fixture(scope="module")
def pooled(tmp_path_factory) -> Path:
    """The real run's quiz with equal points in each pool (5, 5, 5; 1, 1, 1), 6 versions."""
    out = tmp_path_factory.mktemp("pooled")
    bank = _quiz(out / "quiz.yaml", scaling=5, cross=1, causal=5)
    return _build(out / "o", bank, 6, ("moodle",))


#: the shapes pool as Canvas can deal it: picks of one blank each and equal points (Canvas
#: splits an item's points equally among its blanks, so a multiple-choice pick beside a
#: table would not keep its points; that pool is refused for Canvas)
CANVAS_SHAPES = """  - pool: shapes
    pick: 2
    from:
      - {id: q-why, family: concept, format: choice, params: {ask: why-sqrt-dk}}
      - {id: q-mask, family: concept, format: choice, params: {ask: mask-inf}}
      - {id: q-cross-mc, family: cross, format: choice, params: {numeric: true}}
"""


@pytest.fixture(scope="module")
def pooled_canvas(tmp_path_factory) -> Path:
    """``pooled`` with a shapes pool Canvas can deal (CANVAS_SHAPES), exported to Canvas."""
    out = tmp_path_factory.mktemp("pooled-canvas")
    bank = _quiz(out / "quiz.yaml", scaling=5, cross=1, causal=5)
    text = bank.read_text("utf-8")
    start = text.index("  - pool: shapes")
    end = text.index("  - id: q-causal")
    bank.write_text(text[:start] + CANVAS_SHAPES + text[end:], "utf-8")
    return _build(out / "o", bank, 6, ("qti",))


@pytest.fixture(scope="module")
def bundled(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("bundled")
    return {
        b: _build(out / b, ROOT / "banks" / f"{b}.yaml", 3, ("moodle", "gift", "qti"))
        for b in BANKS
    }


def _doc(folder: Path) -> KeyDoc:
    return parse_key(json.loads((folder / "key.json").read_text("utf-8")))


_GAP = re.compile(r"\{(\d+):(NUMERICAL|SHORTANSWER|MULTICHOICE_V):=?([^~}]*)")


def _moodle_categories(folder: Path) -> list[tuple[str, int, list[ET.Element]]]:
    """Each category of moodle.xml: its path, how many random questions its description
    says to add, and its questions."""
    root = ET.parse(folder / "moodle.xml").getroot()
    out: list[tuple[str, int, list[ET.Element]]] = []
    for q in root.findall("question"):
        if q.get("type") == "category":
            info = q.findtext("info/text") or ""
            m = re.search(r"add (one|\d+) random question", info)
            draws = 1 if m is None or m.group(1) == "one" else int(m.group(1))
            out.append((q.findtext("category/text") or "", draws, []))
        else:
            out[-1][2].append(q)
    return out


def _printed_first_answers(variants: tuple[Variant, ...]) -> list[str]:
    """The first (printed) answer of every numeric gap the sheet's picks ask, in order."""
    out = []
    for v in variants:
        for part in gradable_parts(v):
            if part.choices or part.kind == "choice" or part.answer is None:
                continue
            out += [numeric_answers(c)[0].value for c in part.answer.cells if not c.masked]
    return out


def _moodle_deals(folder: Path) -> list[list[tuple[str, ...]]]:
    """Per category, every set of questions the random draws it says to add can give, each
    as the (sheet, question id) pairs of what it holds, after checking that each question
    holds exactly what its sheet printed."""
    doc = _doc(folder)
    sheets = {s.id: s for s in doc.sheets}
    out = []
    for _path, draws, questions in _moodle_categories(folder):
        held: list[tuple[str, ...]] = []
        for q in questions:
            slot, sheet = (q.findtext("idnumber") or "").split(":")[:2]
            variants = tuple(v for v in sheets[sheet].variants if slot in (v.slot, v.qid))
            text = q.findtext("questiontext/text") or ""
            if q.get("type") == "cloze":
                gaps = [g[2].split(":")[0] for g in _GAP.findall(text) if g[1] == "NUMERICAL"]
                assert gaps == _printed_first_answers(variants), q.findtext("name/text")
            held.append(tuple(f"{sheet}:{v.qid}" for v in variants))
        out.append([sum(combo, ()) for combo in itertools.combinations(held, draws)])
    return out


def _printable(doc: KeyDoc) -> dict[str, set[frozenset[str]]]:
    """Per slot, the question sets the pool rule allows: distinct alternatives, each in the
    version of one sheet (what a sheet printed, mixed across sheets as one random draw per
    alternative would)."""
    out: dict[str, set[frozenset[str]]] = {}
    for q in doc.questions:
        by_alt: dict[str, list[str]] = {}
        for v in q.variants:
            by_alt.setdefault(v.qid, []).append(f"{v.sheet_id}:{v.qid}")
        allowed = set()
        for alts in itertools.combinations(sorted(by_alt), q.pick):
            for pick in itertools.product(*(by_alt[a] for a in alts)):
                allowed.add(frozenset(pick))
        out[q.qid] = allowed
    return out


def _allowed(doc: KeyDoc, dealt: tuple[str, ...]) -> bool:
    sets = _printable(doc)
    qids = [d.split(":")[1] for d in dealt]
    return len(qids) == len(set(qids)) and any(frozenset(dealt) in s for s in sets.values())


def test_every_set_a_pooled_moodle_quiz_can_deal_is_one_the_pool_allows(pooled):
    doc = _doc(pooled)
    per_category = _moodle_deals(pooled)
    assert len(per_category) == len(doc.questions)
    for sets in per_category:
        assert sets
        for dealt in sets:
            assert _allowed(doc, dealt), dealt
    # the pool of pick 2 is dealt as one question per sheet: what that sheet printed
    shapes = per_category[-1]
    assert len(shapes) == len(doc.sheets) and all(len(d) == 2 for d in shapes)


def test_every_set_a_pooled_canvas_quiz_can_deal_is_one_the_pool_allows(pooled_canvas):
    doc = _doc(pooled_canvas)
    sheets = {s.id: s for s in doc.sheets}
    root = _assessment(pooled_canvas)
    groups = [g for g in root.iter(f"{QTI}section") if g.get("ident") != "root_section"]
    assert len(groups) == len(doc.questions)
    for g, q in zip(groups, doc.questions, strict=True):
        pick = int(g.findtext(f"{QTI}selection_ordering/{QTI}selection/{QTI}selection_number"))
        held = []
        for item in g.findall(f"{QTI}item"):
            number, name, sheet = re.fullmatch(
                r"(\d+)\. (\S+) \[(\S+)\]", item.get("title")
            ).groups()
            slot = q.qid
            held.append(
                tuple(f"{sheet}:{v.qid}" for v in sheets[sheet].variants if v.slot == slot)
                if name == slot and q.pick > 1
                else (f"{sheet}:{name}",)
            )
        for combo in itertools.combinations(held, pick):
            assert _allowed(doc, sum(combo, ())), combo


def test_the_old_structure_would_have_dealt_two_versions_of_one_question(pooled):
    # what the check above rejects: two random questions from a category of every
    # alternative's variants (the structure before, 3 of 8 real Moodle attempts)
    doc = _doc(pooled)
    shapes = doc.questions[-1]
    old = [f"{v.sheet_id}:{v.qid}" for v in shapes.variants]
    assert any(not _allowed(doc, combo) for combo in itertools.combinations(old, 2))


def _assessment(folder: Path) -> ET.Element:
    with zipfile.ZipFile(folder / "canvas-qti.zip") as zf:
        (name,) = [n for n in zf.namelist() if n.count("/") == 1 and "meta" not in n]
        return ET.fromstring(zf.read(name))


def _sheet_totals(doc: KeyDoc) -> set[Fraction]:
    return {sum((Fraction(str(v.points)) for v in s.variants), Fraction(0)) for s in doc.sheets}


def test_each_students_maximum_in_moodle_and_canvas_is_their_sheets_total(
    pooled, pooled_canvas, bundled
):
    # the real run's pooled quiz in Moodle; in Canvas, with a pick-2 pool Canvas can deal
    # (the real run's is refused for Canvas: test_refusals_round_three)
    for folder in [pooled, *bundled.values()]:
        (total,) = _sheet_totals(_doc(folder))
        # Moodle: the marks the categories say to give their random questions
        marks = Fraction(0)
        for _path, draws, questions in _moodle_categories(folder):
            assert questions
            info_marks = {
                Fraction(m)
                for q in questions
                for m in re.findall(r"with the mark (\d+(?:\.\d+)?)", _info_of(folder, _path))
            }
            if info_marks:
                (mark,) = info_marks
                marks += mark * draws
            else:  # a written part's category: its essays' own marks
                (mark,) = {Fraction(q.findtext("defaultgrade") or "0") for q in questions}
                marks += mark * draws
        assert marks == total, folder
    for folder in [pooled_canvas, *bundled.values()]:
        (total,) = _sheet_totals(_doc(folder))
        # Canvas: each group gives its points to each question it draws
        root = _assessment(folder)
        canvas = Fraction(0)
        for g in root.iter(f"{QTI}section"):
            if g.get("ident") == "root_section":
                continue
            pick = int(g.findtext(f"{QTI}selection_ordering/{QTI}selection/{QTI}selection_number"))
            points = g.findtext(f".//{QTI}points_per_item")
            canvas += Fraction(points) * pick
        assert canvas == total, folder


def _info_of(folder: Path, path: str) -> str:
    root = ET.parse(folder / "moodle.xml").getroot()
    for q in root.findall("question"):
        if q.get("type") == "category" and q.findtext("category/text") == path:
            return q.findtext("info/text") or ""
    return ""


def _gap_count(part) -> int:
    if part.choices or part.kind == "choice" or part.answer is None:
        return 1
    return len(part.answer.cells)


def _per_gap(v: Variant) -> list[Fraction]:
    """Each gap's points on the sheet: its answer's points (the bank's per-part points, or
    the question's split equally among its answers) over the answer's gaps."""
    points = v.answer_points()
    return [
        points[p.answer.name] / _gap_count(p)
        for p in gradable_parts(v)
        for _ in range(_gap_count(p))
    ]


@pytest.mark.parametrize("bank", ["default", "note", "practice", "slips", "part_points"])
def test_moodle_gap_weights_follow_the_sheets_part_points(bank, bundled, tmp_path):
    if bank == "part_points":
        folder = _build(tmp_path / "pp", FIXTURES / "part_points.yaml", 2, ("moodle",))
    else:
        folder = bundled[bank]
    doc = _doc(folder)
    variants = {f"{v.qid}:{v.sheet_id}": v for q in doc.questions for v in q.variants}
    root = ET.parse(folder / "moodle.xml").getroot()
    checked = 0
    for q in root.findall("question[@type='cloze']"):
        v = variants[q.findtext("idnumber") or ""]
        weights = [int(w) for w, _, _ in _GAP.findall(q.findtext("questiontext/text") or "")]
        per_gap = _per_gap(v)
        assert len(weights) == len(per_gap)
        total = sum(weights)
        # each gap's share of the question's mark is its entry's share of the sheet's points
        graded = Fraction(str(graded_points(v)))
        whole = sum(per_gap, Fraction(0))
        assert [Fraction(w, total) for w in weights] == [g / whole for g in per_gap]
        assert whole == graded or v.part_points is None
        checked += 1
    assert checked


def test_plain_points_are_split_by_answer_not_by_gap(tmp_path, write_bank):
    # softmax with 4 points: (a) scaled 2x2 and (b) A 2x2 each 2 points; heads: d_k (1 gap),
    # concat_width (1 gap), W_Q_head_shape (2 gaps), ... each answer an equal share
    bank = write_bank(
        "questions:\n  - id: h\n    family: heads\n    points: 6\n    params: {d: 8, h: 2}\n"
    )
    folder = _build(tmp_path / "o", bank, 1, ("moodle",))
    doc = _doc(folder)
    (v,) = doc.questions[0].variants
    root = ET.parse(folder / "moodle.xml").getroot()
    (q,) = root.findall("question[@type='cloze']")
    weights = [int(w) for w, _, _ in _GAP.findall(q.findtext("questiontext/text") or "")]
    counts = [_gap_count(p) for p in gradable_parts(v)]
    assert any(c > 1 for c in counts) and any(c == 1 for c in counts)
    # a part of 2 gaps weighs each gap half of what a part of 1 gap weighs
    flat = [c for c in counts for _ in range(c)]
    assert {w * c for w, c in zip(weights, flat, strict=True)} == {max(weights)}


def test_gift_numerical_and_choice_questions_carry_the_key_as_general_feedback(bundled):
    for bank, folder in bundled.items():
        text = (folder / "gift.txt").read_text("utf-8")
        questions = [b for b in text.split("\n\n") if b.startswith("::")]
        assert questions
        for block in questions:
            assert " ####" in block or "{####" in block, (bank, block[:80])
            general = block.rsplit("####", 1)[1]
            assert "worksheetgen-key" in general, (bank, block[:80])


def test_gift_marks_can_be_typed(bundled, tmp_path):
    folders = [
        *bundled.values(),
        _build(tmp_path / "pp", FIXTURES / "part_points.yaml", 2, ("gift",)),
    ]
    for folder in folders:
        text = (folder / "gift.txt").read_text("utf-8")
        (header,) = [ln for ln in text.splitlines() if ln.startswith("// Marks: ")]
        scale = re.search(r"points times (\d+)", header)
        factor = int(scale.group(1)) if scale else 1
        for line in text.splitlines():
            if not line.startswith("// ") or "mark" not in line or line.startswith("// Marks"):
                continue
            assert "/" not in line.split("mark", 1)[1], line
            for number in re.findall(r"(?:mark|\(a\)|; \(\w\)) ([\d.]+)", line):
                assert len(number.split(".")[1]) <= 7 if "." in number else True
        # the marks of one sheet add up to its points times the factor
        assert factor >= 1


def test_canvas_zero_blanks_accept_the_leading_plus(bundled):
    found = 0
    for folder in bundled.values():
        doc = _doc(folder)
        for q in doc.questions:
            for v in q.variants:
                for part in gradable_parts(v):
                    if part.answer is None or part.choices or part.kind == "choice":
                        continue
                    for cell in part.answer.cells:
                        if cell.masked:
                            continue
                        texts = accepted_texts(cell)
                        for t in texts:
                            if t.lstrip("0.") == "" and t:  # a zero: 0, 0.0, .00, ...
                                assert "+" + t in texts, (cell.printed, texts)
                                found += 1
    assert found
