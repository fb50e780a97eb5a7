"""Complete a Moodle check plan for today's pooled export (a tool, not a test).

``plan.py`` of the shared Moodle set-up (/work/shared/lms/moodle, outside this repo) reads
key.json and lists one plan entry per variant: its name, type and gaps. It knows neither the
question that holds one sheet's picks of a pool (``N. <pool> [<sheet>]``, a cloze whose gaps
are the sheet's picks' gaps in the sheet's order) nor the one written question a slot with
several versions shares (``N. <slot> (written)``, an essay). This makes an entry for each of
those, from key.json and the moodle.xml itself, so that ``responses_pool.php --plan`` can
make attempts of such a quiz:

    python3 /work/shared/lms/moodle/plan.py key.json xml > plan.json
    python -m tests.tools.pooled_plan key.json moodle.xml plan.json > plan-pooled.json

plan.py names a variant by its sheet id; the export names a student's sheet by its sheet
code (never the student's id), so every entry is renamed as the export names its sheet.
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from worksheetgen.export.privacy import sheet_names
from worksheetgen.keyjson.read import parse_key

_DEAL = re.compile(r"^(\d+)\. (\S+) \[(.+)\]$")
_SHARED = re.compile(r"^(\d+)\. (\S+) \(written\)$")


def pooled_plan(key: dict[str, Any], names: list[str], plan: dict[str, Any]) -> dict[str, Any]:
    """``plan`` with an entry for every question name of the export, in the export's order:
    the plan's own where it has one, else made from the sheet's picks or as a shared essay;
    the plan's entries for questions today's export no longer makes (a version's own essay
    where the slot shares one, a pool's picks one by one) are left out."""
    names_of = sheet_names(parse_key(key, "key.json"))
    plan = dict(plan, questions=[_renamed(q, names_of) for q in plan["questions"]])
    by_name = {q["name"]: q for q in plan["questions"]}
    graded = {(q["qid"], q["sheet"]): q for q in plan["questions"] if q["qtype"] != "essay"}
    essays = [q for q in plan["questions"] if q["qtype"] == "essay"]
    sheets = {names_of[s["id"]]: s for s in key["sheets"]}
    added = []
    for name in names:
        if name in by_name:
            added.append(by_name[name])
            continue
        deal, shared = _DEAL.match(name), _SHARED.match(name)
        if deal:
            sheet = sheets[deal.group(3)]
            picks = [q["id"] for q in sheet["questions"] if q.get("slot") == deal.group(2)]
            parts = [graded[(qid, deal.group(3))] for qid in picks]
            entry = dict(parts[0], name=name, qtype="multianswer", qid=deal.group(2))
            entry["gaps"] = [g for p in parts for g in p["gaps"]]
            entry["points"] = sum(p["points"] for p in parts)
            entry["idnumber"] = f"{deal.group(2)}:{deal.group(3)}"
        elif shared:
            # one text gap, as any essay's: what a student who answers types there is a
            # version's model answer, headed by the slot, so that each slot's essay can be
            # told apart in the download
            entry = dict(essays[0], name=name, qid=shared.group(2), sheet="")
            entry["idnumber"] = f"{shared.group(2)}:written"
            model = essays[0]["gaps"][0]
            entry["gaps"] = [dict(model, correct=f"[{shared.group(2)}] {model['correct']}")]
        else:
            raise SystemExit(f"no plan for {name!r} and no rule to make one")
        added.append(entry)
    return dict(plan, questions=added)


def _renamed(q: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """A plan entry named as the export names its sheet (``[<code>]`` for a student's)."""
    sheet = q.get("sheet")
    if not sheet or sheet not in names or names[sheet] == sheet:
        return q
    new = names[sheet]
    out = dict(q, sheet=new, name=q["name"].replace(f"[{sheet}]", f"[{new}]"))
    if "idnumber" in q:
        out["idnumber"] = re.sub(f":{re.escape(sheet)}(:written)?$", f":{new}\\1", q["idnumber"])
    return out


def _names(moodle_xml: Path) -> list[str]:
    """The question names of a Moodle XML file, or of a GIFT file (``::name::`` lines)."""
    text = moodle_xml.read_text(encoding="utf-8")
    if not text.lstrip().startswith("<"):
        return [
            re.sub(r"\\(.)", r"\1", m) for m in re.findall(r"^::((?:\\.|[^:\\])*)::", text, re.M)
        ]
    root = ET.fromstring(text)
    return [
        q.findtext("name/text") or "" for q in root.iter("question") if q.get("type") != "category"
    ]


def main(argv: list[str]) -> None:
    key_path, xml_path, plan_path = (Path(a) for a in argv)
    key = json.loads(key_path.read_text(encoding="utf-8"))
    plan = json.loads(plan_path.read_text(encoding="utf-8"))
    out = pooled_plan(key, _names(xml_path), plan)
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
