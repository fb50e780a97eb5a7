"""Pools and shuffled order (issue 17, item 3).

A bank entry ``pool:`` fills a slot with ``pick`` of its alternatives per sheet, drawn from
(seed, secret, sheet id, slot id) alone; ``shuffle`` prints each sheet's questions in an
order of its own. Numbers never depend on the slot or the place; key.json, grading and the
exports keep question ids and say which slot each question fills.

A behaviour across modules, not one module's tests (errors, keyjson.read, model, pipeline,
pipeline.build, pipeline.options, solve.rng).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import FIXTURES, ROOT
from worksheetgen.keyjson.read import parse_key
from worksheetgen.model import SheetIdentity
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions
from worksheetgen.solve.rng import generator, order_generator, pool_generator

POOLS = FIXTURES / "pools.yaml"


SCHEMA = json.loads((ROOT / "docs" / "reference" / "key.schema.json").read_text("utf-8"))


# the fixture's slots: what each pool may give, and how many
ATTENTION = {"p-causal", "p-softmax", "p-scaling"}


SHAPES = {"p-multihead", "p-cost", "p-cross-mc"}


def _roster(path: Path, ids: list[str]) -> Path:
    path.write_text("name,id\n" + "".join(f"S {i},{i}\n" for i in ids), encoding="utf-8")
    return path


def _build(tmp_path: Path, name: str, bank: Path = POOLS, **options) -> Path:
    result = build(
        BuildOptions(seed=11, banks=(str(bank),), out=str(tmp_path / name), pdf=False, **options)
    )
    return result.folder


def _key(folder: Path) -> dict:
    return json.loads((folder / "key.json").read_text("utf-8"))


def _drawn(folder: Path) -> dict[str, dict[str, object]]:
    """Per sheet: question id -> (its slot, its drawn values)."""
    return {
        s["id"]: {q["id"]: (q.get("slot"), q["given"]) for q in s["questions"]}
        for s in _key(folder)["sheets"]
    }


def _order(folder: Path) -> dict[str, list[str]]:
    return {s["id"]: [q["id"] for q in s["questions"]] for s in _key(folder)["sheets"]}


def test_each_sheet_gets_pick_questions_of_each_pool_and_every_question_on_its_own(tmp_path):
    folder = _build(tmp_path, "v", versions=12)
    seen_attention: set[str] = set()
    for drawn in _drawn(folder).values():
        slots = [slot for slot, _ in drawn.values()]
        assert sorted(slots) == ["attention-slot", "p-heads", "shapes", "shapes"]
        attention = {q for q, (slot, _) in drawn.items() if slot == "attention-slot"}
        shapes = {q for q, (slot, _) in drawn.items() if slot == "shapes"}
        assert len(attention) == 1 and attention <= ATTENTION
        assert len(shapes) == 2 and shapes <= SHAPES
        seen_attention |= attention
    # p-causal is written on its own in the bank, but placed only through its pool; and
    # twelve sheets draw more than one alternative
    assert len(seen_attention) > 1


def test_picks_and_numbers_stay_when_a_student_is_added_to_the_roster(tmp_path):
    ids = ["a1", "b2", "c3", "d4", "e5"]
    before = _drawn(_build(tmp_path, "r1", roster=str(_roster(tmp_path / "r1.csv", ids))))
    more = ["n0", *ids[:2], "x9", *ids[2:]]
    after = _drawn(_build(tmp_path, "r2", roster=str(_roster(tmp_path / "r2.csv", more))))
    assert {sid: after[sid] for sid in before} == before


def test_picks_and_numbers_stay_when_another_question_is_added(tmp_path, write_bank):
    text = POOLS.read_text("utf-8")
    extra = write_bank(
        text.replace("questions:\n", "questions:\n  - id: q-new\n    family: heads\n", 1)
    )
    before = _drawn(_build(tmp_path, "one", versions=6, shuffle=False))
    after = _drawn(_build(tmp_path, "two", bank=extra, versions=6, shuffle=False))
    for sid, drawn in before.items():
        assert {q: after[sid][q] for q in drawn} == drawn
        assert set(after[sid]) == set(drawn) | {"q-new"}


def test_a_questions_numbers_do_not_depend_on_its_pool_or_place(tmp_path, write_bank):
    # p-causal drawn on its own, in a plain bank, gets what the pool's draw of it gets
    plain = write_bank(
        "sheet: {id: pools}\nquestions:\n"
        "  - id: p-causal\n    family: causal\n    points: 2\n    params: {T: 3}\n"
    )
    pooled = _drawn(_build(tmp_path, "p", versions=12))
    alone = _drawn(_build(tmp_path, "a", bank=plain, versions=12))
    got = [(sid, q) for sid, d in pooled.items() for q in d if q == "p-causal"]
    assert got
    for sid, qid in got:
        assert pooled[sid][qid][1] == alone[sid][qid][1]


def test_the_secret_changes_the_picks_and_the_generators_are_streams_of_their_own():
    a = pool_generator(SheetIdentity(1, "A"), "slot").integers(0, 2**62, 4).tolist()
    assert a == pool_generator(SheetIdentity(1, "A"), "slot").integers(0, 2**62, 4).tolist()
    keyed = pool_generator(SheetIdentity(1, "A", b"k" * 32), "slot").integers(0, 2**62, 4).tolist()
    other_sheet = pool_generator(SheetIdentity(1, "B"), "slot").integers(0, 2**62, 4).tolist()
    question = generator(SheetIdentity(1, "A"), "slot").integers(0, 2**62, 4).tolist()
    order = order_generator(SheetIdentity(1, "A")).integers(0, 2**62, 4).tolist()
    assert len({tuple(x) for x in (a, keyed, other_sheet, question, order)}) == 5


def test_shuffle_changes_the_order_but_not_the_questions_or_their_numbers(tmp_path):
    plain = _build(tmp_path, "plain", versions=8, shuffle=False)
    mixed = _build(tmp_path, "mixed", versions=8, shuffle=True)
    assert _drawn(plain) == _drawn(mixed)  # the same questions, slots and numbers

    def options(folder: Path) -> dict[str, dict[str, object]]:
        sheets = _key(folder)["sheets"]
        return {s["id"]: {q["id"]: q.get("choices") for q in s["questions"]} for s in sheets}

    # multiple-choice options keep their per-sheet order
    assert options(plain) == options(mixed)
    assert any(c for d in options(plain).values() for c in d.values())
    plain_order, mixed_order = _order(plain), _order(mixed)
    assert plain_order != mixed_order
    for sid, order in plain_order.items():
        assert sorted(order) == sorted(mixed_order[sid])
    # without shuffle every sheet keeps the bank's slot order
    for s in _key(plain)["sheets"]:
        slots = [q["slot"] for q in s["questions"]]
        assert slots == sorted(slots, key=["p-heads", "attention-slot", "shapes"].index)


def test_the_option_wins_over_the_banks_shuffle(tmp_path):
    shuffled = _order(_build(tmp_path, "bank", versions=8))  # the bank says shuffle: true
    assert shuffled == _order(_build(tmp_path, "on", versions=8, shuffle=True))
    assert shuffled != _order(_build(tmp_path, "off", versions=8, shuffle=False))
    assert _key(_build(tmp_path, "off2", versions=2, shuffle=False))["shuffle"] is False


def test_shuffle_of_a_bank_without_pools_keeps_every_question_and_its_numbers(tmp_path):
    bank = ROOT / "banks" / "note.yaml"
    plain = _build(tmp_path, "plain", bank=bank, versions=4)
    mixed = _build(tmp_path, "mixed", bank=bank, versions=4, shuffle=True)
    strip = {sid: {q: g for q, (_, g) in d.items()} for sid, d in _drawn(plain).items()}
    assert strip == {sid: {q: g for q, (_, g) in d.items()} for sid, d in _drawn(mixed).items()}
    assert _order(plain) != _order(mixed)
    assert "slots" not in _key(plain) and "slot" not in json.dumps(_key(plain))
    assert [s["id"] for s in _key(mixed)["slots"]] == _order(plain)["A"]


def test_numbering_in_sheet_and_key_follows_the_printed_order(tmp_path):
    folder = _build(tmp_path, "v", versions=5)
    key = _key(folder)
    doc = parse_key(key, "key.json")
    sheets_md = (folder / "sheets.md").read_text("utf-8")
    keys_md = (folder / "keys.md").read_text("utf-8")
    for sheet, ksheet in zip(key["sheets"], doc.sheets, strict=True):
        numbers = [q["number"] for q in sheet["questions"]]
        assert numbers == list(range(1, len(numbers) + 1))
        titles = [v.title for v in ksheet.variants]
        want = [f"## Question {n}. {t} (" for n, t in zip(numbers, titles, strict=True)]
        for text in (sheets_md, keys_md):
            part = text.split(f"Version {sheet['id']}", 1)[1]
            found = re.findall(r"^## Question \d+\. .*? \(", part, re.M)[: len(want)]
            assert found == want
        # the key says which alternative the sheet got, at the question's printed number
        part = keys_md.split(f"Version {sheet['id']}", 1)[1]
        for q in sheet["questions"]:
            if q["slot"] != q["id"]:
                pattern = (
                    rf"## Question {q['number']}\. [^\n]*\n\n\*From pool "
                    rf"{re.escape(q['slot'])}: this sheet got {re.escape(q['id'])}\.\*"
                )
                assert re.search(pattern, part)


def test_the_latex_key_says_which_alternative_each_sheet_got(tmp_path):
    folder = _build(tmp_path, "one")
    (sheet,) = _key(folder)["sheets"]
    tex = (folder / "key.tex").read_text("utf-8")
    for q in sheet["questions"]:
        line = f"From pool {q['slot']}: this sheet got {q['id']}."
        assert (line in tex) == (q["slot"] != q["id"])
    assert "From pool" not in (folder / "sheet.tex").read_text("utf-8")
    assert "From pool" not in (folder / "sheet.md").read_text("utf-8")


def test_key_json_states_slots_fits_the_schema_and_maps_back(tmp_path):
    folder = _build(tmp_path, "v", versions=6)
    key = _key(folder)
    Draft202012Validator(SCHEMA).validate(key)
    assert key["shuffle"] is True
    assert key["slots"] == [
        {"id": "p-heads", "pick": 1, "questions": ["p-heads"]},
        {"id": "attention-slot", "pick": 1, "questions": ["p-causal", "p-softmax", "p-scaling"]},
        {"id": "shapes", "pick": 2, "questions": ["p-multihead", "p-cost", "p-cross-mc"]},
    ]
    doc = parse_key(key, "key.json")
    assert [(q.qid, q.number, q.pick) for q in doc.questions] == [
        ("p-heads", 1, 1),
        ("attention-slot", 2, 1),
        ("shapes", 3, 2),
    ]
    by_slot = {q.qid: q for q in doc.questions}
    for sheet in key["sheets"]:
        for q in sheet["questions"]:
            (v,) = [
                v
                for v in by_slot[q["slot"]].variants
                if (v.sheet_id, v.qid) == (sheet["id"], q["id"])
            ]
            assert v.number == q["number"] and v.slot == q["slot"]
    manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    assert manifest["slots"] == key["slots"] and manifest["shuffle"] is True
    for draws, sheet in zip(manifest["draws"], key["sheets"], strict=True):
        picked: dict[str, list[str]] = {}
        for q in sheet["questions"]:
            if q["slot"] != q["id"]:
                picked.setdefault(q["slot"], []).append(q["id"])
        assert {k: sorted(v) for k, v in draws["pools"].items()} == {
            k: sorted(v) for k, v in picked.items()
        }


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (lambda k: k["sheets"][0]["questions"][0].update(slot="nowhere"), ".slot", "slots"),
        (lambda k: k["slots"][2].update(pick=4), "slots[2].pick", "from 1 to 3"),
        (lambda k: k["slots"].append(dict(k["slots"][0])), "slots[3].id", "unique slot id"),
        (lambda k: k.update(shuffle="yes"), "shuffle", "true or false"),
    ],
)
def test_the_reader_refuses_broken_slots(tmp_path, change, field, message):
    from worksheetgen.errors import KeyFileError

    key = _key(_build(tmp_path, "v", versions=2))
    change(key)
    with pytest.raises(KeyFileError) as err:
        parse_key(key, "key.json")
    assert field in str(err.value) and message in str(err.value)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("exported")
    result = build(
        BuildOptions(
            seed=11,
            banks=(str(POOLS),),
            out=str(out),
            pdf=False,
            versions=8,
            exports=("moodle",),
        )
    )
    return result.folder


#: the pick-2 pool as Canvas can deal it: alternatives of one blank each (Canvas splits a
#: sheet's item's points among its blanks, so picks of 8 and 1 blanks are refused for it)
CANVAS_SHAPES = """    from:
      - id: p-cross-mc
        family: cross
        format: choice
        params: {numeric: true}
      - id: p-why
        family: concept
        format: choice
        params: {ask: why-sqrt-dk}
      - id: p-mask
        family: concept
        format: choice
        params: {ask: mask-inf}
"""


@pytest.fixture(scope="module")
def exported_qti(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("exported-qti")
    text = POOLS.read_text("utf-8")
    start = text.index("    from:\n      - id: p-multihead")
    end = text.index("  - id: p-causal")
    bank = out / "pools-canvas.yaml"
    bank.write_text(text[:start] + CANVAS_SHAPES + text[end:], "utf-8")
    result = build(
        BuildOptions(
            seed=11, banks=(str(bank),), out=str(out), pdf=False, versions=8, exports=("qti",)
        )
    )
    return result.folder


def _slot_of(key: dict) -> dict[tuple[str, str], str]:
    return {(s["id"], q["id"]): q["slot"] for s in key["sheets"] for q in s["questions"]}


def _picks_of(key: dict, slot: str) -> dict[str, list[str]]:
    """Per sheet, the question ids it got from ``slot``, in sheet order."""
    return {s["id"]: [q["id"] for q in s["questions"] if q["slot"] == slot] for s in key["sheets"]}


def test_moodle_xml_keeps_one_category_per_slot_and_one_question_per_sheets_picks(exported):
    key = _key(exported)
    slot_of = _slot_of(key)
    root = ET.parse(exported / "moodle.xml").getroot()
    category = None
    members: dict[str, set[str]] = {}
    infos: dict[str, str] = {}
    combined: dict[str, str] = {}
    for q in root.findall("question"):
        if q.get("type") == "category":
            category = q.findtext("category/text")
            infos[category] = q.findtext("info/text") or ""
            continue
        name = q.findtext("name/text")
        number, qid, sheet = re.fullmatch(r"(\d+)\. (\S+) \[(\S+)\]", name).groups()
        slot = qid if qid == "shapes" else slot_of[(sheet, qid)]
        members.setdefault(category, set()).add(slot)
        if qid == "shapes":
            combined[sheet] = q.findtext("questiontext/text") or ""
    # every category holds the questions of one slot, and every slot has one category
    assert all(len(slots) == 1 for slots in members.values())
    assert sorted(s for slots in members.values() for s in slots) == sorted(
        s["id"] for s in key["slots"]
    )
    shapes = next(c for c, slots in members.items() if slots == {"shapes"})
    assert "/03 shapes - " in shapes
    assert "add one random question from this category" in infos[shapes]
    assert infos[shapes].startswith("8 question(s), each one sheet's 2 picks of pool 3 (shapes: ")
    # the pool of pick 2: one cloze question per sheet, holding exactly that sheet's picks
    assert sorted(combined) == sorted(s["id"] for s in key["sheets"])
    titles = {q["id"]: q.get("title") for s in key["sheets"] for q in s["questions"]}
    for sheet, picks in _picks_of(key, "shapes").items():
        assert len(picks) == 2
        for qid in picks:
            assert titles[qid] in combined[sheet]


def test_canvas_qti_keeps_one_group_per_slot_dealing_one_sheets_picks(exported_qti):
    key = _key(exported_qti)
    slot_of = _slot_of(key)
    with zipfile.ZipFile(exported_qti / "canvas-qti.zip") as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".xml") and "/" in n and "meta" not in n]
        root = ET.fromstring(zf.read(name))
        meta = ET.fromstring(zf.read(name.rsplit("/", 1)[0] + "/assessment_meta.xml"))
    ns = {"q": "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"}
    groups = root.findall(".//q:section[@title]", ns)
    groups = [g for g in groups if g.get("ident") != "root_section"]
    seen = []
    total = 0.0
    for g in groups:
        slots = set()
        for item in g.findall("q:item", ns):
            number, qid, sheet = re.fullmatch(
                r"(\d+)\. (\S+) \[(\S+)\]", item.get("title")
            ).groups()
            slots.add(qid if qid == "shapes" else slot_of[(sheet, qid)])
        assert len(slots) == 1
        (slot,) = slots
        seen.append(slot)
        # every group deals one question: a variant, or one sheet's picks of a pool
        number = g.find("q:selection_ordering/q:selection/q:selection_number", ns).text
        assert int(number) == 1
        points = g.find(".//q:points_per_item", ns).text
        total += float(points)
        idents = [item.get("ident") for item in g.findall("q:item", ns)]
        assert len(idents) == len(set(idents))
    assert sorted(seen) == sorted(s["id"] for s in key["slots"])
    ns_meta = {"c": meta.tag.split("}")[0][1:]}
    assert float(meta.findtext("c:points_possible", namespaces=ns_meta)) == total
    assert total == sum(q["points"] for q in key["sheets"][0]["questions"])


def test_a_class_builds_size_counts_what_each_pool_gives_a_sheet(monkeypatch, tmp_path, write_bank):
    from worksheetgen.errors import UsageError
    from worksheetgen.pipeline import build as pipeline

    many = "".join(f"      - id: alt{i}\n        family: heads\n" for i in range(6))
    bank = write_bank("questions:\n  - id: own\n    family: heads\n  - pool: p\n    from:\n" + many)
    monkeypatch.setattr(pipeline, "MAX_CLASS_ITEMS", 10)
    # 4 sheets of 2 questions each (not of all 7 the banks hold) fit in 10
    folder = _build(tmp_path, "fits", bank=bank, versions=4)
    assert [len(s["questions"]) for s in _key(folder)["sheets"]] == [2, 2, 2, 2]
    with pytest.raises(UsageError) as err:
        _build(tmp_path, "over", bank=bank, versions=6)
    assert "got 6 x 2 = 12" in str(err.value)
