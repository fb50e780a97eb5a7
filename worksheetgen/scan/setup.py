"""``scan``'s first stage: the key and scan.json, read once each through their readers
(``keyjson.read``, ``scan.contract``) and checked to be of one build; every box with what it
means in the key; the output folder checked before any work (``ScanSetup``, what every
later stage reads)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worksheetgen.errors import ScanError
from worksheetgen.grading.key import grade_key
from worksheetgen.keyjson.read import ExpectedSecret, load_key_document
from worksheetgen.keyjson.records import KeyDoc, KeySheet
from worksheetgen.report.classreport import DATA_DIR, FEEDBACK_DIR, HTML_FILE, PDF_FILE
from worksheetgen.report.grade import REPORT_FILE, SCORES_FILE
from worksheetgen.scan.contract import Positions, read_positions
from worksheetgen.scan.layout import ANSWERS, score_values
from worksheetgen.scan.outset import check_out
from worksheetgen.scan.positions import (
    LETTERS,
    SCAN_FILE,
    SCAN_FORMAT,
    SCAN_VERSIONS,
    key_codes,
    legacy_codes,
)

RESPONSES_FILE = "responses.csv"


ISSUES_FILE = "issues.csv"


CROPS = "crops"


#: the verification views of the pages read (``overlay``)
VIEWS = "verify"


#: every entry a run writes into its output folder (grade's among them): replaced as one set
OUTPUT_FOLDERS = (CROPS, VIEWS, DATA_DIR, FEEDBACK_DIR)


OUTPUT_SET = (
    RESPONSES_FILE,
    ISSUES_FILE,
    SCORES_FILE,
    REPORT_FILE,
    HTML_FILE,
    PDF_FILE,
    *OUTPUT_FOLDERS,
)


@dataclass(frozen=True)
class ScanSetup:
    """What every stage reads: the key's records, scan.json's boxes with their meaning
    (``sheets``: by sheet index and page), each sheet's page code build field (``fields``)
    and the output folder (``default_out``: the one beside the key)."""

    key: KeyDoc
    positions: Positions
    sheets: dict[int, dict[int, list[dict[str, Any]]]]
    fields: list[int]
    out: Path
    default_out: bool
    paper: str
    box_mm: float


def open_key(
    key_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str] | None,
    secret: ExpectedSecret | None = None,
) -> ScanSetup:
    """Read key.json (once, through its reader) and scan.json beside it, check they are of
    one build and that the output folder may be replaced."""
    key = Path(key_path)
    # key.json read once and checked: its records, and (for the page codes, digests of the
    # document as written) the document they were checked from
    doc, document = load_key_document(key, secret)
    positions = _positions(key, len(doc.sheets))
    # a build with separate answer sheets (scan.json's document) codes their pages apart; a
    # class printed before page codes told classes apart (scan.json version 1) carries the
    # build's code on every page; later ones a code of the class and of each sheet
    on_answer_sheets = positions.document == ANSWERS
    if positions.version == 1:
        class_code, fields = legacy_codes(document)
    else:
        class_code, fields = key_codes(document, on_answer_sheets)
    if positions.build != class_code:
        raise ScanError(
            f"expected the {SCAN_FILE} of this key's build, got one of another build",
            file=str(key.parent / SCAN_FILE),
        )
    out = Path(out_dir) if out_dir is not None else key.parent / "scan"
    check_out(out, OUTPUT_SET, OUTPUT_FOLDERS, out_dir is None)  # before any work
    sheets = _meanings(positions, doc.sheets, grade_key(doc), str(key.parent / SCAN_FILE))
    return ScanSetup(
        key=doc,
        positions=positions,
        sheets=sheets,
        fields=fields,
        out=out,
        default_out=out_dir is None,
        paper=positions.paper,
        box_mm=positions.box_mm,
    )


def _positions(key_path: Path, key_sheets: int) -> Positions:
    path = key_path.parent / SCAN_FILE
    if not path.exists():
        raise ScanError(
            f"expected {SCAN_FILE} beside the key (a build with --scannable writes it), got none",
            file=str(key_path),
        )
    # every field checked before it is used (scan.contract)
    return read_positions(path, key_sheets, SCAN_FORMAT, SCAN_VERSIONS)


def _meanings(
    positions: Positions, key_sheets: Sequence[KeySheet], grading: Any, name: str
) -> dict[int, dict[int, list[dict[str, Any]]]]:
    """Every box of scan.json with what it means in the key: its question and answer, and
    the option it picks or the points it gives; by sheet index and page."""
    out: dict[int, dict[int, list[dict[str, Any]]]] = {}
    for sheet in positions.sheets:
        index = sheet.index
        if not isinstance(index, int) or not 0 <= index < len(key_sheets):
            raise ScanError(f"sheets: expected sheets of the key, got sheet {index!r}", file=name)
        ks = key_sheets[index]
        gs = grading.sheet(ks.id)
        by_number = {str(v.number): v for v in ks.variants}
        pages = out.setdefault(index, {})
        for page in sheet.pages:
            boxes = pages.setdefault(page.page, [])
            for box in page.boxes:
                try:
                    number, letter, value = box.id.split(".")
                    q = by_number[number]
                    part = q.parts[LETTERS.index(letter)].answer
                    if part is None:  # the options of an item without a named answer
                        raise KeyError(letter)
                    answer = part.name
                except (ValueError, KeyError, IndexError):
                    raise ScanError(
                        f"boxes: expected boxes of the key's questions, got {box.id!r}",
                        file=name,
                    ) from None
                meaning: dict[str, Any] = {"question": q.qid, "answer": answer}
                if value.startswith("s") and value[1:].isdigit():
                    points = gs.question(q.qid).points_of(answer)
                    # a build before the score boxes' rule printed them by the old one
                    values = score_values(points, legacy=positions.version == 1)
                    if int(value[1:]) >= len(values):
                        raise ScanError(
                            f"boxes: expected score boxes up to {points}, got {box.id!r}",
                            file=name,
                        )
                    meaning["mark"] = str(values[int(value[1:])])
                else:
                    meaning["option"] = value
                    if part.multi:  # mark all that apply: every marked box is the answer
                        meaning["multi"] = True
                boxes.append({**meaning, "id": box.id, "x": box.x, "y": box.y})
    return out
