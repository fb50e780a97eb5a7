"""Complete the Canvas check's probes for today's pooled export (a tool, not a test).

``probes.py`` of the shared Canvas set-up (/work/shared/lms/canvas, outside this repo) reads
key.json and makes the answers to type per variant (``N. <id> [<sheet>]``). A pool of pick 2
or more is exported as one item per sheet, ``N. <pool> [<sheet>]``, whose blanks are the
sheet's picks' blanks in the sheet's order (a pick-one blank renamed ``choice_<pick>_<n>``),
and probes.py has no entry of that name, so evaluate.py reports "key.json has no variant of
this name (cannot probe)". This makes one for each such item from the picks' own probes: its
blanks are theirs in order, matched by position to the item's response ids in the zip; each
pick's cases are typed with the other picks' blanks as printed in the key. Used in place of
check.sh's probes.py line:

    python3 /work/shared/lms/canvas/probes.py key.json > probes.json
    python -m tests.tools.pooled_probes key.json canvas-qti.zip probes.json > probes-pooled.json

A pick may be a table (probes.py's blanks entry), one number (a numerical entry: one blank
here) or a multiple choice (an entry of option indexes: one letter blank here, answered by
the option's letter). Every entry is also renamed from the sheet id probes.py writes to the
name the export gives the sheet (a student's sheet: its code, never the student's id).
"""

from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

from worksheetgen.export.privacy import sheet_names
from worksheetgen.keyjson.read import parse_key

_DEAL = re.compile(r"^(\d+)\. (\S+) \[(.+)\]$")
_ITEM = re.compile(r'<item ident="[^"]*" title="([^"]*)">(.*?)</item>', re.S)
_RESPONSE = re.compile(r'<response_lid ident="response_([^"]+)"')


def _items(zip_path: Path) -> dict[str, list[str]]:
    """Each item's title -> its blanks' response ids in order."""
    with zipfile.ZipFile(zip_path) as zf:
        (name,) = [n for n in zf.namelist() if n.count("/") == 1 and "meta" not in n]
        text = zf.read(name).decode("utf-8")
    return {m.group(1): _RESPONSE.findall(m.group(2)) for m in _ITEM.finditer(text)}


def _baseline(probe: dict[str, Any]) -> dict[str, str]:
    """The probe's answers as printed in the key (its first "must" case with every blank)."""
    for case in probe["cases"]:
        if case.get("blank") is None and case["expect"]:
            return dict(case["responses"])
    raise ValueError("no case with every blank as printed")


def _letters(q: dict[str, Any]) -> list[str]:
    """The letters of a multiple-choice pick's options, in order (as its blank takes them)."""
    choices = q.get("choices")
    if choices:
        return [c.get("label") or chr(65 + n) for n, c in enumerate(choices)]
    options = next(iter((q.get("options") or {}).values()), [])
    return [chr(65 + n) for n in range(len(options))]


def _as_blanks(q: dict[str, Any], probe: dict[str, Any]) -> dict[str, Any]:
    """A pick's probe as a blanks entry: a table's as it is; one number's or a multiple
    choice's as one blank (the pooled item asks a choice by its letter)."""
    if "blanks" in probe:
        return probe
    blank = f"{q['id']}_1"
    if probe["type"] == "mc":
        letters = _letters(q)
        cases = []
        for case in probe["cases"]:
            letter = letters[case["choice_index"]]
            typed = [letter, letter.lower()] if case["expect"] else [letter]
            cases += [{**case, "responses": {blank: t}, "blank": blank} for t in typed]
        right = next(c for c in cases if c["expect"])
        base = {**right, "blank": None, "why": "the right letter"}
    else:  # one number: each typed response in the one blank
        cases = [
            {**case, "responses": {blank: case["response"]}, "blank": blank}
            for case in probe["cases"]
        ]
        first = next(c for c in cases if c["expect"] and c["cls"] == "must")
        base = {**first, "blank": None}
    return {**probe, "type": "fimb", "blanks": [blank], "cases": [base, *cases]}


def _renamed(key: dict[str, Any], probes: dict[str, Any]) -> dict[str, Any]:
    """Probes named as the export names the sheets (probes.py uses key.json's sheet ids)."""
    names = sheet_names(parse_key(key, "key.json"))
    out = {}
    for name, probe in probes.items():
        m = re.match(r"^(.*) \[(.+)\]( \(written\))?$", name)
        if m and m.group(2) in names:
            name = f"{m.group(1)} [{names[m.group(2)]}]{m.group(3) or ''}"
        out[name] = probe
    return out


def pooled_probes(
    key: dict[str, Any], items: dict[str, list[str]], probes: dict[str, Any]
) -> dict[str, Any]:
    """``probes`` with an entry for every pooled item of ``items`` that has none, every entry
    named as the export names its sheet."""
    names = sheet_names(parse_key(key, "key.json"))
    probes = _renamed(key, probes)
    out = dict(probes)
    sheets = {names[s["id"]]: s for s in key["sheets"]}
    for title, blanks in items.items():
        m = _DEAL.match(title)
        if title in probes or not m or m.group(3) not in sheets:
            continue
        _, slot, sheet = m.groups()
        picks = [q for q in sheets[sheet]["questions"] if q.get("slot") == slot]
        found = [probes.get(f"{q['number']}. {q['id']} [{sheet}]") for q in picks]
        if len(picks) < 2 or any(p is None for p in found):
            continue
        parts = [_as_blanks(q, p) for q, p in zip(picks, found, strict=True) if p is not None]
        own = [b for p in parts for b in p["blanks"]]
        if len(own) != len(blanks):
            raise ValueError(f"{title}: {len(blanks)} blanks exported, the picks have {len(own)}")
        rename: list[dict[str, str]] = []
        i = 0
        for p in parts:
            rename.append({b: blanks[i + k] for k, b in enumerate(p["blanks"])})
            i += len(p["blanks"])
        base = [_baseline(p) for p in parts]
        cases = []
        for n, p in enumerate(parts):
            for case in p["cases"]:
                responses: dict[str, str] = {}
                for j in range(len(parts)):
                    typed = case["responses"] if j == n else base[j]
                    responses.update({rename[j][b]: v for b, v in typed.items()})
                blank = case.get("blank")
                cases.append(
                    {
                        **case,
                        "responses": responses,
                        "blank": rename[n].get(blank, blank) if blank else blank,
                        "n_blanks": len(blanks),
                    }
                )
        out[title] = {
            "type": parts[0]["type"],
            "points": sum(p["points"] for p in parts),
            "blanks": blanks,
            "cases": cases,
        }
    # probes.py's quiz total adds each question id once, every alternative of a pool
    # included (44 for real-4); a student's maximum is their sheet's total
    totals = {sum(q.get("points", 1) for q in s["questions"]) for s in key["sheets"]}
    if "__key__" in out and len(totals) == 1:
        out["__key__"] = {**out["__key__"], "points": totals.pop()}
    return out


def main(argv: list[str]) -> int:
    key_path, zip_path, probes_path = (Path(a) for a in argv)
    key = json.loads(key_path.read_text("utf-8"))
    probes = json.loads(probes_path.read_text("utf-8"))
    json.dump(pooled_probes(key, _items(zip_path), probes), sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
