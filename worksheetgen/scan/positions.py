"""scan.json: where TeX set every box of a scannable build, per sheet and page, with what
each box means (a question's answer and the option or points it gives). Written by the
build from the lines ``templates/latex/scan.tex.j2`` has TeX record; read by ``scan``.
Standard library only."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from worksheetgen.errors import UsageError
from worksheetgen.model import Build, Item, Sheet
from worksheetgen.scan.layout import (
    ANSWERS,
    BOX_MM,
    MAX_PAGES,
    PAPER_MM,
    SP_PER_MM,
    score_values,
    value_text,
)

SCAN_FORMAT = "worksheetgen-scan"
#: 2: score boxes in the steps of ``layout.score_values``; 1 (still read): the rule before
SCAN_VERSION = 2
SCAN_VERSIONS = (1, 2)
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


#: the fields of key.json's head that say what the build is (its sheets say the rest)
KEY_HEAD = ("format", "version", "seed", "title", "course", "secret", "shuffle", "slots")


def _canonical(value: Any) -> bytes:
    """``value`` as JSON in one spelling, whatever its key order or indent: the bytes the
    build and the reader both hash (from key.json's document as a reader parses it)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return text.encode("ascii")


def _as_read(value: Any) -> Any:
    """``value`` as a reader of key.json gets it back (tuples as lists, keys as text)."""
    return json.loads(json.dumps(value, allow_nan=False))


def class_digest(head: dict[str, Any], sheets: Iterable[dict[str, Any]]) -> bytes:
    """The class's digest: what key.json says of the build (``head``: seed, title, course,
    the secret's fingerprint, pools and order) and of every sheet's place, id, label and
    student (the roster, in order). Two sections of one seed and title differ in it."""
    roster = [[s.get("id"), s.get("label"), s.get("student")] for s in sheets]
    text = _canonical({"head": {k: head.get(k) for k in KEY_HEAD}, "roster": roster})
    return hashlib.sha256(text).digest()


def code_of(digest: bytes) -> int:
    """16 bits of a digest: what a page code's build field holds."""
    return int.from_bytes(digest[:2], "big")


def sheet_code(digest: bytes, sheet: dict[str, Any]) -> int:
    """The build field of the page codes of one sheet: from the class's digest and what
    key.json says the sheet holds (its questions, their order, parts, options and answers),
    so a page of another class, or of another sheet of its place, does not read as this."""
    return code_of(hashlib.sha256(digest + b"\n" + _canonical(sheet)).digest())


def document_digest(digest: bytes, answers: bool) -> bytes:
    """The digest the page codes of one of the build's documents come from: the class's, or
    (``answers``) another for its separate answer sheets, so that a page of the full sheets
    of the same class is never read as an answer sheet's page."""
    return hashlib.sha256(digest + b"\n" + ANSWERS.encode("ascii")).digest() if answers else digest


def key_codes(doc: dict[str, Any], answers: bool = False) -> tuple[int, list[int]]:
    """From key.json's document: the class's code (scan.json's ``build``) and each sheet's
    build field, as the build printed them (``answers``: on its separate answer sheets)."""
    sheets = doc.get("sheets") or []
    digest = document_digest(class_digest(doc, sheets), answers)
    return code_of(digest), [sheet_code(digest, s) for s in sheets]


def legacy_codes(doc: dict[str, Any]) -> tuple[int, list[int]]:
    """As ``key_codes`` for a class printed with scan.json version 1: one code for the build
    (seed, title, course, the secret's fingerprint) on every sheet's pages."""
    text = "\n".join(
        [
            str(doc.get("seed")),
            str(doc.get("title")),
            doc.get("course") or "",
            doc.get("secret") or "",
        ]
    )
    code = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:2], "big")
    return code, [code] * len(doc.get("sheets") or [])


def build_digest(build: Build) -> bytes:
    """The class's digest of a build (its own, for a class streamed sheet by sheet)."""
    if build.scan_class:
        return build.scan_class
    # key.json's own writer (a build has loaded it already)
    from worksheetgen.keyjson.write import key_json

    doc = _as_read(key_json(build))
    return class_digest(doc, doc["sheets"])


def roster_digest(build: Build, roster: Iterable[tuple[str, str, Any]]) -> bytes:
    """The class's digest of a build whose sheets are not drawn yet: ``roster`` the
    (id, label, student) of each of its sheets, in order."""
    # key.json's own writer (a build has loaded it already)
    from worksheetgen.keyjson.write import key_json

    head = _as_read(key_json(build))
    sheets = [
        {
            "id": sid,
            "label": label,
            "student": None if student is None else {"name": student.name, "id": student.id},
        }
        for sid, label, student in roster
    ]
    return class_digest(head, _as_read(sheets))


def sheet_build_code(build: Build, answers: bool = False) -> int:
    """The class's code (scan.json's ``build``), from what key.json says of it (``answers``:
    the code of its separate answer sheets)."""
    return code_of(document_digest(build_digest(build), answers))


def sheet_build_field(build: Build, sheet: Sheet, answers: bool = False) -> int:
    """The build field of ``sheet``'s page codes (:func:`sheet_code`; ``answers``: on the
    build's separate answer sheets)."""
    # key.json's own writer (a build has loaded it already)
    from worksheetgen.keyjson.write import sheet_json

    digest = document_digest(build_digest(build), answers)
    return sheet_code(digest, _as_read(sheet_json(sheet)))


def positions_json(
    build: int, paper: str, recorded: str, answers: bool = False, digits: int = 0
) -> dict[str, Any]:
    """scan.json's document from what TeX recorded: for each sheet (its place in key.json)
    and page, each box's id (``N.l.v``: question N's part l, option v or score box ``sK``)
    and top left corner in mm from the page's top left (``answers``: the boxes are on the
    build's separate answer sheets, said by ``"document": "answers"``; ``digits``: the
    columns of the student-number grid, whose boxes ``n.C.D`` a page lists apart, under
    ``number_boxes``, and ``"student_number"`` says how many)."""
    _, h = PAPER_MM[paper]
    pages: dict[int, dict[int, list[dict[str, Any]]]] = {}
    numbers: dict[tuple[int, int], list[dict[str, Any]]] = {}
    at: tuple[int, int] = (0, 0)
    current: list[dict[str, Any]] | None = None
    for line in recorded.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == "p":
            if int(words[2]) > MAX_PAGES:
                raise UsageError(
                    f"--scannable: expected sheets of at most {MAX_PAGES} pages (what the page "
                    f"code holds), got one of {words[2]}"
                )
            at = (int(words[1]), int(words[2]))
            current = pages.setdefault(at[0], {}).setdefault(at[1], [])
        elif len(words) == 4 and words[0] == "b" and current is not None:
            x = int(words[2]) / SP_PER_MM
            y = h - int(words[3]) / SP_PER_MM - BOX_MM  # its top, from the page's top
            box = {"id": words[1], "x": round(x, 3), "y": round(y, 3)}
            # a student-number box (n.C.D) is listed apart from the answers' boxes
            (numbers.setdefault(at, []) if words[1].startswith("n.") else current).append(box)
    return {
        "format": SCAN_FORMAT,
        "version": SCAN_VERSION,
        "build": build,
        "paper": paper,
        "box_mm": BOX_MM,
        **({"document": ANSWERS} if answers else {}),
        **({"student_number": digits} if digits else {}),
        "sheets": [
            {
                "index": i,
                "pages": [
                    {
                        "page": p,
                        "boxes": boxes,
                        **({"number_boxes": numbers[(i, p)]} if (i, p) in numbers else {}),
                    }
                    for p, boxes in sorted(pages[i].items())
                ],
            }
            for i in sorted(pages)
        ],
    }


def dumps(doc: dict[str, Any]) -> bytes:
    """scan.json's bytes."""
    return (json.dumps(doc, indent=1, ensure_ascii=True) + "\n").encode("ascii")
