"""Read a class roster (CSV) into Students, and make safe, unique file names for them.

The CSV has a header row; a name is required, an id is optional (a missing or empty id is
derived from the name: stable across runs and unique for distinct names), every other column
is ignored but ``large_print`` (``LARGE_PRINT_COLUMNS``: yes/no, true/false, 1/0 or empty:
that student's sheet and key in large print). Besides ``name`` and ``id``, the columns of
the common LMS exports are read (``NAME_COLUMNS``, ``FIRST_COLUMNS``/``LAST_COLUMNS``,
``ID_COLUMNS``: Moodle's "First name", "Last name"/"Surname", "ID number", "Email address";
Canvas's "Student", "ID", "SIS User ID", "SIS Login ID"); docs/guide/class-builds.md has
the table.

A student's id seeds their sheet, so adding, removing or reordering students
changes no other student's numbers. Names and ids are data: they are kept as written (trimmed,
Unicode NFC), and every renderer escapes them. Problems are RosterErrors of the form
``roster.csv:7: id: expected a unique id, got 's01' (also on line 3)``.
"""

from __future__ import annotations

import csv
import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from worksheetgen.errors import RosterError, shorten
from worksheetgen.inputs import read_limited
from worksheetgen.model import Student
from worksheetgen.textrules import char_problem

MAX_STUDENTS = 2000
MAX_ROSTER_BYTES = 5_000_000
MAX_NAME_CHARS = 200
MAX_ID_CHARS = 64
_SLUG_CHARS = 24
_STEM_CHARS = 48


def _short(text: str, limit: int = 40) -> str:
    return shorten(repr(text), limit, end="...'")


def _hash_hex(text: str, chars: int = 8) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()[:chars]


# Latin letters that have no decomposition into an ASCII letter and an accent
_LATIN = str.maketrans(
    {
        "Ł": "L",
        "ł": "l",
        "Ø": "O",
        "ø": "o",
        "Đ": "D",
        "đ": "d",
        "ß": "ss",
        "Æ": "AE",
        "æ": "ae",
        "Œ": "OE",
        "œ": "oe",
        "Þ": "Th",
        "þ": "th",
        "ı": "i",
        "Ħ": "H",
        "ħ": "h",
    }
)


def _fold(text: str) -> str:
    """Latin letters without their accents ('Łukasz Ñúñez' -> 'Lukasz Nunez')."""
    folded = unicodedata.normalize("NFKD", text.translate(_LATIN))
    return "".join(c for c in folded if not unicodedata.combining(c))


def ascii_slug(text: str, limit: int = _SLUG_CHARS) -> str:
    """Lower-case ASCII letters and digits joined by '-': 'Zoë O'Brien' -> 'zoe-obrien'."""
    folded = _fold(text).replace("'", "").replace("\u2019", "").lower()
    slug = re.sub(r"[^a-z0-9]+", "-", folded.encode("ascii", "ignore").decode()).strip("-")
    return slug[:limit].rstrip("-")


def derive_id(name: str) -> str:
    """The id of a student listed without one: a slug of the name and a hash of all of it.

    It depends on nothing but the (normalized) name, so it survives any edit of the roster,
    and two different names never share it.
    """
    return f"{ascii_slug(name) or 'student'}-{_hash_hex(name)}"


def _clean(text: str) -> str:
    return unicodedata.normalize("NFC", text.strip())


def _decode(data: bytes, shown: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        bad = data[exc.start : exc.start + 1].hex()
        raise RosterError(
            f"expected UTF-8 text (save the file as 'CSV UTF-8'), got byte 0x{bad}",
            file=shown,
            line=line,
            field="encoding",
        ) from None


def delimiter(header_line: str) -> str:
    """The separator a spreadsheet used, from the header line: ',' unless the header has
    none and has ';' (a comma-decimal locale's "CSV") or a tab."""
    if "," in header_line:
        return ","
    for d in (";", "\t"):
        if d in header_line:
            return d
    return ","


#: header cells that hold a student's whole name, in the order one is chosen (``name``
#: first; Canvas's gradebook calls it ``Student``, as "Last, First"); compared in lower case
#: with runs of spaces, ``_`` and ``-`` as one space
NAME_COLUMNS = ("name", "full name", "student name", "student")
#: header cells of the given name and of the family name (Moodle: "First name", "Last name"
#: or "Surname"); the name is the two joined by a space, "Ada Lovelace"
FIRST_COLUMNS = ("first name", "firstname", "given name", "given names", "forename", "first")
LAST_COLUMNS = ("last name", "lastname", "surname", "family name", "last")
#: header cells that identify a student, in the order they are tried for each row: the
#: first non-empty one is the id (Moodle: "ID number", then "Username", then "Email
#: address"; Canvas: "ID", its own user id, then "SIS User ID", "SIS Login ID")
ID_COLUMNS = (
    "id",
    "id number",
    "idnumber",
    "student id",
    "student number",
    "sis user id",
    "username",
    "sis login id",
    "email address",
    "email",
)
#: header cells of the column that asks a student's sheet in large print, and its values
LARGE_PRINT_COLUMNS = ("large print", "largeprint")
LARGE_PRINT_VALUES = {
    "yes": True,
    "true": True,
    "1": True,
    "no": False,
    "false": False,
    "0": False,
    "": False,
}
#: the row under a Canvas gradebook export's header that is no student
_CANVAS_POINTS_ROW = "points possible"


def _column_key(cell: str) -> str:
    return re.sub(r"[\s_\-]+", " ", _clean(cell).lower()).strip()


@dataclass(frozen=True)
class Columns:
    """Where a roster's names and ids are: the whole-name column, or the given- and
    family-name columns joined, and the id columns in the order they are tried."""

    name: int | None
    first: int | None
    last: int | None
    ids: tuple[int, ...]
    large_print: int | None = None

    def name_of(self, row: list[str]) -> str:
        """The student's name as it prints: the name cell, or "first last"."""
        if self.name is not None:
            return _clean(row[self.name])
        parts = (_clean(row[i]) for i in (self.first, self.last) if i is not None)
        return " ".join(p for p in parts if p)

    def id_of(self, row: list[str]) -> str:
        """The first non-empty id cell of the row ('' when there is none)."""
        return next((v for v in (_clean(row[i]) for i in self.ids) if v), "")


def _header(row: list[str], shown: str) -> Columns:
    columns: dict[str, int] = {}
    for i, cell in enumerate(row):
        key = _column_key(cell)
        if key in ("name", "id") and key in columns:
            raise RosterError(
                f"expected one '{key}' column, got two (columns {columns[key] + 1} and {i + 1})",
                file=shown,
                line=1,
                field="header",
            )
        columns.setdefault(key, i)

    def first_of(keys: Sequence[str]) -> int | None:
        return next((columns[k] for k in keys if k in columns), None)

    name = first_of(NAME_COLUMNS)
    first = last = None
    if name is None:
        first, last = first_of(FIRST_COLUMNS), first_of(LAST_COLUMNS)
    if name is None and first is None and last is None:
        got = ", ".join(_short(_clean(c), 20) for c in row) or "nothing"
        raise RosterError(
            f"expected a header row with a 'name' column (or first and last name columns), "
            f"got {got}",
            file=shown,
            line=1,
            field="header",
        )
    ids = tuple(columns[k] for k in ID_COLUMNS if k in columns)
    return Columns(name, first, last, ids, first_of(LARGE_PRINT_COLUMNS))


def _check_text(value: str, what: str, limit: int, shown: str, line: int) -> None:
    article = "an" if what[0] in "aeiou" else "a"
    bad = char_problem(value)
    if bad is not None:
        raise RosterError(
            f"expected {article} {what} of printable characters only, got {_short(value)} ({bad})",
            file=shown,
            line=line,
            field=what,
        )
    if len(value) > limit:
        raise RosterError(
            f"expected {article} {what} of at most {limit} characters, got {len(value)}",
            file=shown,
            line=line,
            field=what,
        )


def parse_roster(
    text: str, shown: str = "roster.csv", max_students: int = MAX_STUDENTS
) -> tuple[Student, ...]:
    """Students from CSV text, in roster order; ``shown`` names the file in errors."""
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise RosterError(
            "expected text, got a NUL byte (is this a spreadsheet file, not CSV?)",
            file=shown,
            line=line,
            field="encoding",
        )
    lines = text.splitlines(keepends=True)
    if not lines or not text.strip():
        raise RosterError(
            "expected a header row with a 'name' column, got an empty file",
            file=shown,
            line=1,
            field="header",
        )
    reader = csv.reader(lines, delimiter=delimiter(lines[0]), strict=True)
    students: list[Student] = []
    seen: dict[str, int] = {}
    columns: Columns | None = None
    start = 1
    try:
        for row in reader:
            line, start = start, reader.line_num + 1
            if columns is None:
                columns = _header(row, shown)
                width, header, header_line = len(row), row, line
                continue
            if not any(cell.strip() for cell in row):
                continue  # a blank line
            if _is_points_row(row, columns):
                continue  # Canvas's "Points Possible" row under the header
            if _is_header_again(row, header, columns):
                raise RosterError(
                    f"expected a student, got the header row of line {header_line} again "
                    "(two rosters pasted together?): remove it",
                    file=shown,
                    line=line,
                    field="row",
                )
            if len(row) != width:
                hint = (
                    "quote a name that contains the separator"
                    if len(row) > width
                    else "leave a column empty with an empty field, as in 'Ada Lovelace,,'"
                )
                raise RosterError(
                    f"expected {width} fields like the header, got {len(row)} ({hint})",
                    file=shown,
                    line=line,
                    field="row",
                )
            if len(students) >= max_students:
                raise RosterError(
                    f"expected at most {max_students} students, got more",
                    file=shown,
                    line=line,
                    field="row",
                )
            students.append(_student(row, columns, seen, shown, line))
    except csv.Error as exc:
        raise RosterError(
            f"expected well-formed CSV, got {exc}",
            file=shown,
            line=reader.line_num or start,
            field="row",
        ) from None
    if not students:
        raise RosterError(
            "expected at least one student below the header, got none",
            file=shown,
            line=1,
            field="row",
        )
    return tuple(students)


def _is_header_again(row: list[str], header: list[str], columns: Columns) -> bool:
    """A row whose name and id cells are the header's own (a header repeated mid-file, as
    when two rosters are pasted together): no student is called "name"."""
    used = [i for i in (columns.name, columns.first, columns.last, *columns.ids) if i is not None]
    return all(
        i < len(row) and i < len(header) and _column_key(row[i]) == _column_key(header[i])
        for i in used
    )


def _is_points_row(row: list[str], columns: Columns) -> bool:
    """Canvas's gradebook export has a row "    Points Possible" with no id under its
    header: the assignments' points, not a student."""
    if columns.name is None or len(row) <= columns.name:
        return False
    return _column_key(row[columns.name]) == _CANVAS_POINTS_ROW and not columns.id_of(row)


def _student(
    row: list[str], columns: Columns, seen: dict[str, int], shown: str, line: int
) -> Student:
    name = columns.name_of(row)
    if not name:
        raise RosterError("expected a name, got nothing", file=shown, line=line, field="name")
    _check_text(name, "name", MAX_NAME_CHARS, shown, line)
    raw_id = columns.id_of(row)
    if raw_id:
        _check_text(raw_id, "id", MAX_ID_CHARS, shown, line)
        sid = raw_id
    else:
        sid = derive_id(name)
    if sid in seen:
        if raw_id:
            raise RosterError(
                f"expected a unique id, got {_short(sid)} (also on line {seen[sid]})",
                file=shown,
                line=line,
                field="id",
            )
        raise RosterError(
            f"expected a unique name or an id column, got {_short(name)} again "
            f"(also on line {seen[sid]})",
            file=shown,
            line=line,
            field="name",
        )
    seen[sid] = line
    return Student(name=name, id=sid, large_print=_large_print(row, columns, shown, line))


def _large_print(row: list[str], columns: Columns, shown: str, line: int) -> bool:
    """The student's large_print cell: yes or no (an empty or missing cell: no)."""
    if columns.large_print is None or len(row) <= columns.large_print:
        return False
    cell = _clean(row[columns.large_print])
    value = LARGE_PRINT_VALUES.get(cell.lower())
    if value is None:
        raise RosterError(
            f"expected yes or no (or true/false, 1/0, empty), got {_short(cell)}",
            file=shown,
            line=line,
            field="large_print",
        )
    return value


def read_roster(path: str | Path, max_students: int = MAX_STUDENTS) -> tuple[Student, ...]:
    """The students of a roster file."""
    shown = str(path)
    data = read_limited(
        path, MAX_ROSTER_BYTES, what="a CSV file", error=RosterError, field="roster"
    )
    return parse_roster(_decode(data, shown), shown, max_students)


def version_ids(count: int) -> list[str]:
    """Anonymous version ids A, B, ..., Z, AA, AB, ... (spreadsheet-style)."""
    out = []
    for n in range(1, count + 1):
        label = ""
        while n:
            n, r = divmod(n - 1, 26)
            label = chr(ord("A") + r) + label
        out.append(label)
    return out


_STEM_BAD = re.compile(r"[^A-Za-z0-9._-]+")


#: names Windows keeps for devices, whatever follows the first dot ("COM1.txt", "nul.b")
_WINDOWS_DEVICES = re.compile(r"(?i)(?:CON|PRN|AUX|NUL|COM[0-9]|LPT[0-9])(?=\.|$)")


def safe_stem(text: str) -> str:
    """A file-name stem from an id: ASCII letters, digits, '.', '_' and '-', no leading or
    trailing dot, and never a Windows device name before its first dot (``COM1.txt`` gives
    ``COM1_.txt``: the file would open the serial port there)."""
    stem = _STEM_BAD.sub("-", _fold(text)).strip("-.")
    stem = re.sub(r"[-.]{2,}", "-", stem)[:_STEM_CHARS].rstrip("-.") or "sheet"
    m = _WINDOWS_DEVICES.match(stem)
    return stem if m is None else stem[: m.end()] + "_" + stem[m.end() :]


def file_stems(ids: Sequence[str]) -> list[str]:
    """A file-name stem for every id: safe, and unique even on a case-insensitive disk.

    An id that is already a safe name is used as it is; otherwise (or on a clash) a short hash
    of the whole id is appended, so the stem still depends only on the id.
    """
    stems = [safe_stem(i) for i in ids]
    stems = [s if s == i else f"{s}-{_hash_hex(i, 8)}" for s, i in zip(stems, ids, strict=True)]
    folded: dict[str, int] = {}
    for s in stems:
        folded[s.lower()] = folded.get(s.lower(), 0) + 1
    out = [
        s if folded[s.lower()] == 1 else f"{s}-{_hash_hex(i, 8)}"
        for s, i in zip(stems, ids, strict=True)
    ]
    if len({s.lower() for s in out}) != len(out):  # two ids whose hashes collide: never seen
        raise RosterError("expected ids that give distinct file names, got a clash", field="id")
    return out
