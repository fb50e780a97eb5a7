"""scan.json: where TeX set every box of a scannable build, per sheet and page, with what
each box means (a question's answer and the option or points it gives). Written by the
build from the lines ``templates/latex/scan.tex.j2`` has TeX record; read by ``scan``.
Standard library only."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

from worksheetgen.errors import UsageError
from worksheetgen.model import Build, Item
from worksheetgen.scan.layout import (
    ANSWERS,
    BOX_MM,
    MAX_PAGES,
    PAPER_MM,
    SP_PER_MM,
    build_code,
    score_values,
    value_text,
)

SCAN_FORMAT = "worksheetgen-scan"
SCAN_VERSION = 1
SCAN_FILE = "scan.json"
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def part_points(item: Item) -> list[Fraction]:
    """Each part's points, as grading shares them (the bank's per-part points, else equal
    shares of the question's)."""
    given = {name: Fraction(str(p)) for name, p in item.spec.part_points}
    parts = item.solution.parts
    share = Fraction(str(item.spec.points)) / len(parts) if parts else Fraction(0)
    return [given.get(p.answer, share) for p in parts]


def is_choice(item: Item, index: int) -> bool:
    """True when part ``index`` of ``item`` is answered by picking a lettered option."""
    if item.solution.choices:
        return True
    part = item.solution.parts[index]
    try:
        return item.solution.answer(part.answer).kind == "choice"
    except KeyError:
        return False


def score_rows(item: Item) -> list[tuple[str, list[tuple[int, str]]]]:
    """The TA's score boxes of a question: (part letter, [(index, printed points)]) for
    every part that is not a choice."""
    rows = []
    for i, points in enumerate(part_points(item)):
        if i < len(LETTERS) and not is_choice(item, i):
            values = score_values(points)
            rows.append((LETTERS[i], [(k, value_text(v)) for k, v in enumerate(values)]))
    return rows


def sheet_build_code(build: Build, answers: bool = False) -> int:
    """The build's code, from what key.json says of it (``answers``: its answer sheets')."""
    # the secret's fingerprint as key.json writes it
    from worksheetgen.solve.rng import secret_fingerprint

    secret = secret_fingerprint(build.secret) if build.secret else None
    return build_code(build.seed, build.info.title, build.info.course, secret, answers)


def positions_json(build: int, paper: str, recorded: str, answers: bool = False) -> dict[str, Any]:
    """scan.json's document from what TeX recorded: for each sheet (its place in key.json)
    and page, each box's id (``N.l.v``: question N's part l, option v or score box ``sK``)
    and top left corner in mm from the page's top left (``answers``: the boxes are on the
    build's separate answer sheets, said by ``"document": "answers"``)."""
    _, h = PAPER_MM[paper]
    pages: dict[int, dict[int, list[dict[str, Any]]]] = {}
    current: list[dict[str, Any]] | None = None
    for line in recorded.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == "p":
            if int(words[2]) > MAX_PAGES:
                raise UsageError(
                    f"--scannable: expected sheets of at most {MAX_PAGES} pages (what the page "
                    f"code holds), got one of {words[2]}"
                )
            current = pages.setdefault(int(words[1]), {}).setdefault(int(words[2]), [])
        elif len(words) == 4 and words[0] == "b" and current is not None:
            x = int(words[2]) / SP_PER_MM
            y = h - int(words[3]) / SP_PER_MM - BOX_MM  # its top, from the page's top
            current.append({"id": words[1], "x": round(x, 3), "y": round(y, 3)})
    return {
        "format": SCAN_FORMAT,
        "version": SCAN_VERSION,
        "build": build,
        "paper": paper,
        "box_mm": BOX_MM,
        **({"document": ANSWERS} if answers else {}),
        "sheets": [
            {
                "index": i,
                "pages": [{"page": p, "boxes": boxes} for p, boxes in sorted(pages[i].items())],
            }
            for i in sorted(pages)
        ],
    }


def dumps(doc: dict[str, Any]) -> bytes:
    """scan.json's bytes."""
    return (json.dumps(doc, indent=1, ensure_ascii=True) + "\n").encode("ascii")
