"""tests/tools/pooled_probes: the Canvas check's probes for a pool's per-sheet item, made from
its picks' probes (the shared probes.py makes one entry per variant only)."""

from __future__ import annotations

import json

from tests.paths import MOODLE
from tests.tools.pooled_probes import _items, pooled_probes
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions

BANK = MOODLE / "real-4" / "bank.yaml"


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
    folder = build(
        BuildOptions(
            seed=42, banks=(str(BANK),), out=str(tmp_path), pdf=False, versions=4, exports=("qti",)
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
            size = {"t-keys": 19, "t-wide": 14, "t-scale": 11}[q["id"]]  # their blanks
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
