"""scan.json read through a contract, as key.json is: one gate (``inputs.read_limited``,
``inputs.load_json``: size, nesting, UTF-8, the text rule), then every field checked for
its type and range before ``scan`` uses it, so a file damaged by hand (``paper: "a5"``,
``box_mm: "x"``, ``sheets: null``, a box at ``x: "left"``) is one line naming the field:
``scan.json: sheets[0].pages[1].boxes[3].x: expected a number of mm on the page, got 'left'``.
The result is frozen records (``Positions``, its ``PositionSheet``s, their ``PositionPage``s
and ``Box``es); this is the one place scan.json is read.

Standard library only."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worksheetgen.errors import ScanError
from worksheetgen.inputs import load_json, read_limited
from worksheetgen.scan.layout import MAX_PAGES, MAX_SHEETS, PAPER_MM
from worksheetgen.textrules import excerpt

#: the largest scan.json read (a class of 2,000 five-page sheets writes about 60 MB)
MAX_POSITIONS_BYTES = 200_000_000
#: the most boxes a page may hold (a page of 4 mm boxes, edge to edge, holds under 4,000)
MAX_BOXES = 5_000
#: a box's size in mm: as printed (4 mm), give or take a template of one's own
BOX_MM_RANGE = (1.0, 20.0)
#: a box id: question number, part letter, option label or score box (``3.b.s4``)
BOX_ID = re.compile(r"[0-9]{1,4}\.[a-z]\.(?:s[0-9]{1,4}|[A-Za-z0-9]{1,8})", re.ASCII)
#: a student-number box: column C (from 1) of the grid, digit D (``n.3.7``)
NUMBER_BOX_ID = re.compile(r"n\.([1-9][0-9]?)\.([0-9])", re.ASCII)
#: the most columns a student-number grid has (build --student-number)
MAX_DIGITS = 12


@dataclass(frozen=True)
class Box:
    """One box: its id (``3.b.s4``, ``2.a.B``) and top left corner in mm from the page's."""

    id: str
    x: float
    y: float


@dataclass(frozen=True)
class PositionPage:
    """One page of a sheet (1 first) and its boxes, as TeX set them."""

    page: int
    boxes: tuple[Box, ...]
    #: the student-number grid's boxes on this page (``n.C.D``), none on most pages
    number_boxes: tuple[Box, ...] = ()


@dataclass(frozen=True)
class PositionSheet:
    """The pages of the key's sheet ``index`` (its place in key.json)."""

    index: int
    pages: tuple[PositionPage, ...]


@dataclass(frozen=True)
class Positions:
    """scan.json, checked: its version, the class's code (``build``), the paper, the boxes'
    size, the document the boxes are on (``"answers"``: the separate answer sheets, else
    None) and every scannable sheet; ``student_number``: the columns of the student-number
    grid each sheet carries (a sheet photocopied for a class), 0 when none."""

    version: int
    build: int
    paper: str
    box_mm: float
    document: str | None
    sheets: tuple[PositionSheet, ...]
    student_number: int = 0


def _got(value: Any) -> str:
    """A found value as a message quotes it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(excerpt(value, 80))
    if isinstance(value, int | float):
        return repr(value)
    return "a list" if isinstance(value, list) else "an object"


class _Reader:
    def __init__(self, name: str) -> None:
        self.name = name

    def fail(self, field: str, expected: str, value: Any) -> ScanError:
        return ScanError(f"expected {expected}, got {_got(value)}", file=self.name, field=field)

    def obj(self, value: Any, field: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(field, "an object", value)
        return value

    def lst(self, value: Any, field: str, most: int, what: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(field, f"a list of {what}", value)
        if len(value) > most:
            raise ScanError(
                f"expected at most {most:,} {what}, got {len(value):,}",
                file=self.name,
                field=field,
            )
        return value

    def integer(self, value: Any, field: str, lo: int, hi: int) -> int:
        if type(value) is not int or not lo <= value <= hi:
            raise self.fail(field, f"an integer from {lo} to {hi}", value)
        return value

    def number(self, value: Any, field: str, lo: float, hi: float, expected: str) -> float:
        if (
            type(value) not in (int, float)
            or not math.isfinite(value)
            or not lo <= float(value) <= hi
        ):
            raise self.fail(field, expected, value)
        return float(value)

    def key(self, doc: dict[str, Any], key: str, field: str) -> Any:
        if key not in doc:
            where = f"{field}.{key}" if field else key
            raise ScanError(
                "expected a value, got none (the field is missing)", file=self.name, field=where
            )
        return doc[key]


def read_positions(
    path: Path, key_sheets: int, scan_format: str, versions: tuple[int, ...]
) -> Positions:
    """scan.json read through the one gate, every field checked (``key_sheets``: how many
    sheets the key has, which ``index`` must name; ``versions``: the versions this release
    reads)."""
    name = str(path)
    data = read_limited(path, MAX_POSITIONS_BYTES, what="a scan.json file", error=ScanError)
    return parse_positions(
        load_json(data, name, ScanError), name, key_sheets, scan_format, versions
    )


def parse_positions(
    doc: Any, name: str, key_sheets: int, scan_format: str, versions: tuple[int, ...]
) -> Positions:
    """A parsed scan.json document checked field by field into its records (``name``: the
    file, as messages say it)."""
    r = _Reader(name)
    top = r.obj(doc, "")
    if top.get("format") != scan_format:
        raise r.fail("format", repr(scan_format), top.get("format"))
    version = top.get("version")
    if type(version) is not int or version not in versions:
        raise r.fail("version", " or ".join(map(str, versions)), version)
    build = r.integer(r.key(top, "build", ""), "build", 0, 2**16 - 1)
    if "document" in top and top["document"] != "answers":  # build --answer-sheet's pages
        raise r.fail("document", "'answers' or none", top["document"])
    paper = r.key(top, "paper", "")
    if not isinstance(paper, str) or paper not in PAPER_MM:
        raise r.fail("paper", " or ".join(PAPER_MM), paper)
    lo, hi = BOX_MM_RANGE
    box_mm = r.number(
        r.key(top, "box_mm", ""), "box_mm", lo, hi, f"a size in mm from {lo:g} to {hi:g}"
    )
    width, height = PAPER_MM[paper]
    digits = 0
    if "student_number" in top:  # build --student-number's grid
        digits = r.integer(top["student_number"], "student_number", 1, MAX_DIGITS)
    sheets = r.lst(r.key(top, "sheets", ""), "sheets", MAX_SHEETS, "sheets")
    seen: dict[int, int] = {}
    sheets_out: list[PositionSheet] = []
    for i, raw in enumerate(sheets):
        at = f"sheets[{i}]"
        sheet = r.obj(raw, at)
        index = r.key(sheet, "index", at)
        if type(index) is not int or not 0 <= index < key_sheets:
            raise r.fail(f"{at}.index", f"a sheet of the key (0 to {key_sheets - 1})", index)
        if index in seen:
            raise r.fail(f"{at}.index", f"each sheet once (sheets[{seen[index]}] has it)", index)
        seen[index] = i
        pages = r.lst(r.key(sheet, "pages", at), f"{at}.pages", MAX_PAGES, "pages")
        numbers: dict[int, int] = {}
        where: dict[str, str] = {}  # each box id of the sheet, and where it first is
        pages_out: list[PositionPage] = []
        for j, raw_page in enumerate(pages):
            pat = f"{at}.pages[{j}]"
            page = r.obj(raw_page, pat)
            number = r.integer(r.key(page, "page", pat), f"{pat}.page", 1, MAX_PAGES)
            if number in numbers:
                raise r.fail(
                    f"{pat}.page", f"each page once (pages[{numbers[number]}] has it)", number
                )
            numbers[number] = j
            boxes = r.lst(r.key(page, "boxes", pat), f"{pat}.boxes", MAX_BOXES, "boxes")
            boxes_out: list[Box] = []
            for k, raw_box in enumerate(boxes):
                bat = f"{pat}.boxes[{k}]"
                box = r.obj(raw_box, bat)
                box_id = r.key(box, "id", bat)
                if not isinstance(box_id, str) or not BOX_ID.fullmatch(box_id):
                    raise r.fail(
                        f"{bat}.id",
                        "a box id (question.part.option, or question.part.sN for a score box)",
                        box_id,
                    )
                if box_id in where:  # one box, one meaning: never read twice
                    raise r.fail(f"{bat}.id", f"each box once ({where[box_id]} has it)", box_id)
                where[box_id] = f"pages[{j}].boxes[{k}]"
                x = r.number(
                    r.key(box, "x", bat), f"{bat}.x", 0, width, "a number of mm on the page"
                )
                y = r.number(
                    r.key(box, "y", bat), f"{bat}.y", 0, height, "a number of mm on the page"
                )
                boxes_out.append(Box(box_id, x, y))
            grid = _number_boxes(r, page, pat, digits, where, width, height)
            pages_out.append(PositionPage(number, tuple(boxes_out), grid))
        if digits and sum(len(p.number_boxes) for p in pages_out) != 10 * digits:
            raise r.fail(
                f"{at}.pages",
                f"the student-number grid's {10 * digits} boxes (n.1.0 to n.{digits}.9)",
                sum(len(p.number_boxes) for p in pages_out),
            )
        sheets_out.append(PositionSheet(index, tuple(pages_out)))
    missing = next((i for i in range(key_sheets) if i not in seen), None)
    if missing is not None:  # a build records every sheet's pages: its pages would be unread
        raise ScanError(
            f"expected every sheet of the key (0 to {key_sheets - 1}), got none with index "
            f"{missing}",
            file=name,
            field="sheets",
        )
    return Positions(version, build, paper, box_mm, top.get("document"), tuple(sheets_out), digits)


def _number_boxes(
    r: _Reader,
    page: dict[str, Any],
    pat: str,
    digits: int,
    where: dict[str, str],
    width: float,
    height: float,
) -> tuple[Box, ...]:
    """A page's student-number boxes (``number_boxes``), each id once in the sheet and of a
    column of the grid scan.json's ``student_number`` says it has."""
    if "number_boxes" not in page:
        return ()
    field = f"{pat}.number_boxes"
    if not digits:
        raise r.fail(field, "none (scan.json has no student_number)", page["number_boxes"])
    out: list[Box] = []
    for k, raw in enumerate(r.lst(page["number_boxes"], field, 10 * digits, "boxes")):
        bat = f"{field}[{k}]"
        box = r.obj(raw, bat)
        box_id = r.key(box, "id", bat)
        match = NUMBER_BOX_ID.fullmatch(box_id) if isinstance(box_id, str) else None
        if match is None or int(match.group(1)) > digits:
            raise r.fail(f"{bat}.id", f"a student-number box (n.1.0 to n.{digits}.9)", box_id)
        if box_id in where:
            raise r.fail(f"{bat}.id", f"each box once ({where[box_id]} has it)", box_id)
        where[box_id] = bat
        x = r.number(r.key(box, "x", bat), f"{bat}.x", 0, width, "a number of mm on the page")
        y = r.number(r.key(box, "y", bat), f"{bat}.y", 0, height, "a number of mm on the page")
        out.append(Box(box_id, x, y))
    return tuple(out)
