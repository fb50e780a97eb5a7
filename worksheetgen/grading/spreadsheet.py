"""The rows of a Moodle download saved as .xlsx or .ods, read with the optional
``worksheetgen[spreadsheets]`` extra (openpyxl, odfpy), imported only for such a file.

Moodle writes one sheet with every cell a string; ``read_rows`` gives the first sheet's rows
with their row numbers, each cell as text ("" for an empty cell), padded to the widest row,
so that errors name the spreadsheet row as they name a CSV line.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from worksheetgen.errors import GradeError

SPREADSHEET_SUFFIXES = (".xlsx", ".ods")
#: the most rows and columns read (a class's download is far below both)
MAX_ROWS = 100_000
MAX_COLUMNS = 2_000


def is_spreadsheet(path: str | os.PathLike[str]) -> bool:
    """Is this a file ``read_rows`` reads (by its suffix)?"""
    return Path(path).suffix.casefold() in SPREADSHEET_SUFFIXES


def _missing(name: str, module: str) -> GradeError:
    return GradeError(
        f"expected the spreadsheet readers to read a {Path(name).suffix} file, got no "
        f"{module} installed (pip install 'worksheetgen[spreadsheets]', or download the CSV)",
        file=name,
    )


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _xlsx(path: str | os.PathLike[str], name: str) -> Iterator[list[str]]:
    try:  # the optional extra, imported only for an .xlsx file
        import openpyxl
    except ImportError:
        raise _missing(name, "openpyxl") from None
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise GradeError(f"expected an .xlsx workbook, got {exc}", file=name) from None
    try:
        sheet = book.worksheets[0]
        for row in sheet.iter_rows(values_only=True):
            cells = [_text(v) for v in row[:MAX_COLUMNS]]
            while cells and cells[-1] == "":  # a row's trailing blank cells
                cells.pop()
            yield cells
    finally:
        book.close()


def _ods(path: str | os.PathLike[str], name: str) -> Iterator[list[str]]:
    try:  # the optional extra, imported only for an .ods file
        from odf import teletype
        from odf.opendocument import load
        from odf.table import Table, TableCell, TableRow
        from odf.text import P
    except ImportError:
        raise _missing(name, "odfpy") from None
    try:
        doc = load(str(path))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise GradeError(f"expected an .ods spreadsheet, got {exc}", file=name) from None
    tables = doc.spreadsheet.getElementsByType(Table)
    if not tables:
        return
    for row in tables[0].getElementsByType(TableRow):
        cells: list[str] = []
        for cell in row.getElementsByType(TableCell):
            text = "\n".join(teletype.extractText(p) for p in cell.getElementsByType(P))
            repeat = int(cell.getAttribute("numbercolumnsrepeated") or 1)
            cells += [text] * min(repeat, MAX_COLUMNS - len(cells))
        while cells and cells[-1] == "":  # a row's trailing blank cells (often repeated)
            cells.pop()
        repeat = int(row.getAttribute("numberrowsrepeated") or 1)
        for _ in range(repeat if cells else 1):
            yield cells


def read_rows(path: str | os.PathLike[str], name: str) -> list[tuple[int, list[str]]]:
    """The first sheet's rows, numbered from 1, each padded to the widest row's cells."""
    reader = _xlsx if Path(path).suffix.casefold() == ".xlsx" else _ods
    rows: list[list[str]] = []
    for row in reader(path, name):
        rows.append(row)
        if len(rows) > MAX_ROWS:
            raise GradeError(f"expected at most {MAX_ROWS} rows, got more", file=name)
    while rows and not any(c.strip() for c in rows[-1]):
        rows.pop()
    width = max((len(r) for r in rows), default=0)
    return [(i, r + [""] * (width - len(r))) for i, r in enumerate(rows, start=1)]
