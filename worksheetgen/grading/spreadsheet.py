"""The rows of a Moodle download saved as .xlsx or .ods, read within bounds.

Moodle writes one sheet with every cell a string; ``read_rows`` gives the first sheet's rows
with their row numbers, each cell as text ("" for an empty cell), padded to the widest row,
so that errors name the spreadsheet row as they name a CSV line.

Both formats are zip files of XML. The file goes through the one gate every input does
(``inputs.read_limited``: a regular file, at most ``MAX_SPREADSHEET_BYTES``), then the zip's
own sizes are checked before any part is unpacked (at most ``MAX_XML_BYTES`` of XML in all, so
a zip bomb is refused from its directory), and the XML is read as a stream with defusedxml
(no entities, no DTD: no billion laughs, no external files), a row at a time, within
``MAX_ROWS`` rows of ``MAX_COLUMNS`` cells. A cut-off sheet, a missing part, an impossible
cell reference or a bad repeat count is one ``GradeError`` naming the part, never a
traceback.
"""

from __future__ import annotations

import io
import os
import re
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import ParseError, fromstring, iterparse

from worksheetgen.errors import GradeError
from worksheetgen.inputs import read_limited

SPREADSHEET_SUFFIXES = (".xlsx", ".ods")
#: the most rows and columns read (a class's download is far below both)
MAX_ROWS = 100_000
MAX_COLUMNS = 2_000
#: the largest .xlsx/.ods file read (a class's download is a few hundred kilobytes)
MAX_SPREADSHEET_BYTES = 50_000_000
#: the most XML unpacked from one, all parts together (as the zip's directory declares them;
#: never more is unpacked than declared)
MAX_XML_BYTES = 100_000_000

_X = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_REF = re.compile(r"([A-Z]{1,3})([0-9]{1,7})")


def is_spreadsheet(path: str | os.PathLike[str]) -> bool:
    """Is this a file ``read_rows`` reads (by its suffix)?"""
    return Path(path).suffix.casefold() in SPREADSHEET_SUFFIXES


class _Book:
    """A spreadsheet's zip, its sizes checked, its parts opened by name."""

    def __init__(self, data: bytes, name: str, what: str) -> None:
        self.name, self.what = name, what
        try:
            self.zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self.zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
            raise self.fail(f"got no zip file ({exc})") from None
        total = sum(i.file_size for i in infos)
        if total > MAX_XML_BYTES:
            raise self.fail(
                f"got {total} bytes of XML packed in it (at most {MAX_XML_BYTES} are unpacked)"
            )
        self.names = {i.filename for i in infos}

    def fail(self, problem: str, part: str | None = None) -> GradeError:
        where = f" ({part})" if part else ""
        return GradeError(f"expected {self.what}, {problem}{where}", file=self.name)

    def open(self, part: str) -> IO[bytes]:
        if part not in self.names:
            raise self.fail("got none of its part", part)
        return self.zip.open(part)

    def xml(self, part: str) -> Any:
        """A small part (the workbook, its relations) parsed whole."""
        with self.open(part) as fh:
            return fromstring(fh.read())

    def events(self, part: str, events: tuple[str, ...] = ("end",)) -> Iterator[tuple[str, Any]]:
        """The part's XML as a stream of (event, element)."""
        with self.open(part) as fh:
            yield from iterparse(fh, events=events)


def _guarded(book: _Book, rows: Iterator[list[str]]) -> Iterator[list[str]]:
    """The rows, with any way the file is damaged turned into one error naming it."""
    try:
        yield from rows
    except ParseError as exc:
        raise book.fail(f"got XML that is cut off or not well-formed ({exc})") from None
    except DefusedXmlException as exc:
        raise book.fail(f"got XML with entities or a DTD, which are refused ({exc})") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
        raise book.fail(f"got a damaged zip file ({exc})") from None


def _column(ref: str | None, book: _Book, part: str, at: int) -> int:
    """The 0-based column of an .xlsx cell reference such as 'B7' (``at``: the next column,
    for a cell without one)."""
    if ref is None:
        return at
    m = _REF.fullmatch(ref)
    col = 0
    for letter in m.group(1) if m else "":
        col = col * 26 + ord(letter) - 64
    if m is None or col > 16384 or int(m.group(2)) == 0:  # XFD: Excel's last column
        raise book.fail(f"got an impossible cell reference {ref[:20]!r}", part)
    return col - 1


def _xlsx_rows(book: _Book) -> Iterator[list[str]]:
    sheet = "xl/worksheets/sheet1.xml"
    if "xl/workbook.xml" in book.names and "xl/_rels/workbook.xml.rels" in book.names:
        first = book.xml("xl/workbook.xml").find(f"{_X}sheets/{_X}sheet")
        rels = book.xml("xl/_rels/workbook.xml.rels")
        rid = None if first is None else first.get(f"{_R}id")
        for rel in rels.iter(f"{_PKG}Relationship"):
            if rel.get("Id") == rid and rel.get("Target"):
                target = rel.get("Target")
                sheet = target.lstrip("/") if target.startswith("/") else "xl/" + target
    shared: list[str] = []
    if "xl/sharedStrings.xml" in book.names:
        for _, el in book.events("xl/sharedStrings.xml"):
            if el.tag == f"{_X}si":
                shared.append("".join(t.text or "" for t in el.iter(f"{_X}t")))
                el.clear()
    number = 0
    for _, el in book.events(sheet):
        if el.tag != f"{_X}row":
            continue
        r = el.get("r")
        at = int(r) if r is not None and r.isdigit() and r.isascii() else number + 1
        if not number < at <= MAX_ROWS + 1:
            if at > MAX_ROWS:
                raise GradeError(f"expected at most {MAX_ROWS} rows, got more", file=book.name)
            raise book.fail(f"got rows out of order (row {r!r} after row {number})", sheet)
        while number + 1 < at:  # rows a sheet leaves out are empty
            number += 1
            yield []
        number = at
        cells: list[str] = []
        for c in el.iter(f"{_X}c"):
            col = _column(c.get("r"), book, sheet, len(cells))
            if col < len(cells):
                raise book.fail(f"got cells out of order ({c.get('r')!r})", sheet)
            if col >= MAX_COLUMNS:
                break
            kind, v = c.get("t"), c.find(f"{_X}v")
            if kind == "inlineStr":
                text = "".join(t.text or "" for t in c.iter(f"{_X}t"))
            elif kind == "s":
                index = v.text if v is not None and v.text else ""
                if not (index.isascii() and index.isdigit() and int(index) < len(shared)):
                    raise book.fail(f"got a shared string {index[:20]!r} it does not have", sheet)
                text = shared[int(index)]
            else:
                text = "" if v is None or v.text is None else v.text
            cells += [""] * (col - len(cells)) + [text]
        el.clear()
        while cells and cells[-1] == "":  # a row's trailing blank cells
            cells.pop()
        yield cells


def _repeat(el: Any, attribute: str, book: _Book) -> int:
    raw = el.get(f"{_TABLE}{attribute}")
    if raw is None:
        return 1
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
        raise book.fail(f"got a bad repeat count {raw[:20]!r}", "content.xml")
    return int(raw)


def _ods_text(el: Any) -> str:
    """A text:p's text as a spreadsheet shows it (text:s spaces, tabs, line breaks)."""
    out = [el.text or ""]
    for child in el:
        if child.tag == f"{_TEXT}s":
            c = child.get(f"{_TEXT}c") or "1"
            out.append(" " * min(int(c) if c.isascii() and c.isdigit() else 1, 1000))
        elif child.tag == f"{_TEXT}tab":
            out.append("\t")
        elif child.tag == f"{_TEXT}line-break":
            out.append("\n")
        else:
            out.append(_ods_text(child))
        out.append(child.tail or "")
    return "".join(out)


def _ods_rows(book: _Book) -> Iterator[list[str]]:
    depth = 0  # tables open (the first sheet's only; a table inside a cell is its text)
    count = 0
    for event, el in book.events("content.xml", ("start", "end")):
        if el.tag == f"{_TABLE}table":
            if event == "start":
                depth += 1
                continue
            return  # the first sheet ends
        if depth != 1 or event != "end" or el.tag != f"{_TABLE}table-row":
            continue
        cells: list[str] = []
        for cell in el:
            if cell.tag not in (f"{_TABLE}table-cell", f"{_TABLE}covered-table-cell"):
                continue
            text = "\n".join(_ods_text(p) for p in cell.iter(f"{_TEXT}p"))
            repeat = _repeat(cell, "number-columns-repeated", book)
            cells += [text] * min(repeat, MAX_COLUMNS - len(cells))
        rows_repeated = _repeat(el, "number-rows-repeated", book)
        el.clear()
        while cells and cells[-1] == "":  # a row's trailing blank cells (often repeated)
            cells.pop()
        repeat = rows_repeated if cells else 1
        if count + repeat > MAX_ROWS:
            if not cells:  # the blank rows to the sheet's end: there may be many
                return
            raise GradeError(f"expected at most {MAX_ROWS} rows, got more", file=book.name)
        count += repeat
        for _ in range(repeat):
            yield cells


def read_rows(path: str | os.PathLike[str], name: str) -> list[tuple[int, list[str]]]:
    """The first sheet's rows, numbered from 1, each padded to the widest row's cells."""
    xlsx = Path(path).suffix.casefold() == ".xlsx"
    what = "an .xlsx workbook" if xlsx else "an .ods spreadsheet"
    data = read_limited(path, MAX_SPREADSHEET_BYTES, what=what, error=GradeError, shown=name)
    book = _Book(data, name, what)
    rows: list[list[str]] = []
    blank = 0  # blank rows so far not followed by a row with cells
    for row in _guarded(book, _xlsx_rows(book) if xlsx else _ods_rows(book)):
        if not any(c.strip() for c in row):
            blank += 1
            continue
        rows += [[]] * blank + [row]
        blank = 0
        if len(rows) > MAX_ROWS:
            raise GradeError(f"expected at most {MAX_ROWS} rows, got more", file=name)
    width = max((len(r) for r in rows), default=0)
    return [(i, r + [""] * (width - len(r))) for i, r in enumerate(rows, start=1)]
