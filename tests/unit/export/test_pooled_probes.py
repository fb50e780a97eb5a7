"""tests/tools/pooled_probes: the Canvas check's probes for a pool's per-sheet item, made from
its picks' probes (the shared probes.py makes one entry per variant only).

A behaviour across modules, not one module's tests (pipeline.build, pipeline.options)."""

from __future__ import annotations

import json

from tests.paths import MOODLE
from tests.tools.pooled_probes import _items, pooled_probes
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions

#: real-4's bank with its pick-2 pool made of alternatives of 11 blanks each (real-4's own,
#: 11, 19 and 14 blanks at equal points, is refused for Canvas, which weighs blanks alike)
BANK_TEXT = (MOODLE / "real-4" / "bank.yaml").read_text("utf-8").split("  - pool: two")[0] + (
    """  - pool: two
    pick: 2
    from:
"""
    + "".join(
        f"""      - id: {name}
        family: scale-effect
        points: {{total: 7, why_scale: 1}}
        params: {{n: 2, d_k: {{choices: [4, 9, 16]}}}}
"""
        for name in ("t-scale", "t-keys", "t-wide")
    )
)


def _probe(prefix: str, n: int, points: float) -> dict:
    blanks = [f"{prefix}{i}" for i in range(n)]
    key = {b: f"{prefix}-key-{i}" for i, b in enumerate(blanks)}
    slip = {**key, blanks[0]: "wrong"}
    cases = [
        {"responses": key, "expect": True, "cls": "must", "why": "key", "blank": None},
        {"responses": slip, "expect": False, "cls": "must", "why": "slip", "blank": blanks[0]},
    ]
    return {"type": "fimb", "points": points, "blanks": blanks, "cases": cases}


def test_a_pools_per_sheet_item_gets_its_picks_probes_in_order(tmp_path):
    bank = tmp_path / "bank.yaml"
    bank.write_text(BANK_TEXT, "utf-8")
    folder = build(
        BuildOptions(
            seed=42, banks=(str(bank),), out=str(tmp_path), pdf=False, versions=4, exports=("qti",)
        )
    ).folder
    key = json.loads((folder / "key.json").read_text("utf-8"))
    items = _items(folder / "canvas-qti.zip")
    probes: dict = {"__key__": {"type": "key", "points": 44, "questions": 6}}
    picks = {}
    for sheet in key["sheets"]:
        mine = [q for q in sheet["questions"] if q.get("slot") == "two"]
        sizes = []
        for n, q in enumerate(mine):
            size = 11  # their blanks
            probes[f"{q['number']}. {q['id']} [{sheet['id']}]"] = _probe(f"p{n}_", size, 7)
            sizes.append(size)
        picks[sheet["id"]] = sizes
    out = pooled_probes(key, items, probes)
    assert out["__key__"]["points"] == 30  # the sheet's total, not every id once (44)
    for sheet, sizes in picks.items():
        entry = out[f"3. two [{sheet}]"]
        blanks = items[f"3. two [{sheet}]"]
        assert entry["blanks"] == blanks and len(blanks) == sum(sizes)
        assert entry["points"] == 14
        # the second pick's slip typed with the first pick's blanks as in the key
        first, second = blanks[: sizes[0]], blanks[sizes[0] :]
        slip = [c for c in entry["cases"] if c["why"] == "slip"][1]
        assert slip["blank"] == second[0] and slip["responses"][second[0]] == "wrong"
        assert [slip["responses"][b] for b in first] == [f"p0_-key-{i}" for i in range(sizes[0])]
        assert len(entry["cases"]) == 4


#: a pick-2 pool of multiple-choice alternatives (one letter blank each, equal points)
CHOICES = """\
sheet:
  id: all-choice
  title: Choices
questions:
  - pool: concepts
    pick: 2
    from:
      - {id: c1, family: concept, format: choice, points: 2, params: {ask: why-sqrt-dk}}
      - {id: c2, family: concept, format: choice, points: 2, params: {ask: mask-inf}}
      - {id: c3, family: cross, format: choice, points: 2, params: {numeric: true}}
"""


def _mc_probe(n_options: int, right: int) -> dict:
    """What probes.py writes for a multiple-choice variant: one case per option index."""
    cases = [
        {"choice_index": k, "expect": k == right, "cls": "must", "why": f"option {k}"}
        for k in range(n_options)
    ]
    return {"type": "mc", "points": 2, "cases": cases}


def test_multiple_choice_picks_become_letter_blanks_and_sheets_are_named_by_code(tmp_path):
    """Issue 34 §5: a pooled pick that is multiple choice has no blanks in probes.py (it was
    a KeyError: 'blanks'); it is one letter blank of the pooled item. A roster's sheets are
    named as the export names them (their codes), not by the student ids probes.py uses."""
    (tmp_path / "bank.yaml").write_text(CHOICES, "utf-8")
    roster = tmp_path / "class.csv"
    roster.write_text("name,id\nAda Lovelace,ada@uni.example\nBen Carter,ben@uni.example\n")
    folder = build(
        BuildOptions(
            seed=42,
            banks=(str(tmp_path / "bank.yaml"),),
            roster=str(roster),
            out=str(tmp_path),
            pdf=False,
            exports=("qti",),
        )
    ).folder
    key = json.loads((folder / "key.json").read_text("utf-8"))
    items = _items(folder / "canvas-qti.zip")
    probes: dict = {}
    rights = {}
    for sheet in key["sheets"]:
        for q in sheet["questions"]:
            if q.get("choices"):  # a multiple-choice item
                right = next(k for k, c in enumerate(q["choices"]) if c["correct"])
                n, letter = len(q["choices"]), q["choices"][right]["label"]
            else:  # a pick-one answer: its options, lettered A, B, ...
                ((name, options),) = q["options"].items()
                right, n = options.index(q["answer"][name]), len(options)
                letter = chr(65 + right)
            rights[(sheet["id"], q["id"])] = letter
            probes[f"{q['number']}. {q['id']} [{sheet['id']}]"] = _mc_probe(n, right)
    out = pooled_probes(key, items, probes)
    for sheet in key["sheets"]:
        title = f"1. concepts [{sheet['code']}]"
        assert title in items and "@" not in "".join(out)
        entry = out[title]
        assert entry["type"] == "fimb" and entry["points"] == 4
        assert entry["blanks"] == items[title] and len(entry["blanks"]) == 2
        base = entry["cases"][0]
        picks = [q["id"] for q in sheet["questions"]]
        assert list(base["responses"].values()) == [rights[(sheet["id"], p)] for p in picks]
        wrong = [c for c in entry["cases"] if not c["expect"]]
        assert wrong and all(c["blank"] in entry["blanks"] for c in wrong)
        lower = [c for c in entry["cases"] if c["expect"] and c["blank"] == entry["blanks"][0]]
        assert rights[(sheet["id"], picks[0])].lower() in [
            c["responses"][c["blank"]] for c in lower
        ]
