"""``scan``'s corrections: a corrections CSV read within its limits (``read_corrections``),
the pages it names (``named_pages``), and the answers and issues it settles (``settle``)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from worksheetgen.errors import ScanError
from worksheetgen.grading.responses import _RowError as MarkError
from worksheetgen.grading.responses import parse_mark
from worksheetgen.inputs import read_limited, utf8_text
from worksheetgen.keyjson.records import KeySheet
from worksheetgen.scan.boxes import SET_SEPARATOR, BoxAnswers, ScannedAnswer
from worksheetgen.scan.identify import Identified
from worksheetgen.scan.issues import Issue
from worksheetgen.textrules import problem as text_problem

MAX_CORRECTIONS_BYTES = 10_000_000


#: a corrections CSV's rows and cells (an id or a value is a few dozen characters)
MAX_CORRECTION_ROWS = 200_000


MAX_CORRECTION_CELL = 1_000


def read_corrections(path: str) -> list[tuple[int, str, str]]:
    """(line, id, value) of every row of a corrections CSV (header ``id,value``): at most
    MAX_CORRECTION_ROWS rows of cells of at most MAX_CORRECTION_CELL characters, printable
    text (``textrules``), each id once."""
    data = read_limited(path, MAX_CORRECTIONS_BYTES, what="a corrections CSV", error=ScanError)
    text = utf8_text(data, path, ScanError)
    reader = csv.reader(io.StringIO(text))
    out: list[tuple[int, str, str]] = []
    first: dict[str, int] = {}
    header = True
    line = 1
    try:
        for row in reader:
            n, line = line, reader.line_num + 1  # the row's first line; the next row's
            if header:
                if [c.strip().casefold() for c in row[:2]] != ["id", "value"]:
                    raise ScanError(
                        "header: expected id,value, got another header", file=path, line=1
                    )
                header = False
                continue
            if not any(c.strip() for c in row):
                continue
            if len(out) >= MAX_CORRECTION_ROWS:
                raise ScanError(
                    f"expected at most {MAX_CORRECTION_ROWS:,} rows, got more", file=path, line=n
                )
            if len(row) < 2:
                raise ScanError(
                    "value: expected an id and a value, got one cell", file=path, line=n
                )
            for field, cell in (("id", row[0]), ("value", row[1])):
                if len(cell) > MAX_CORRECTION_CELL:
                    raise ScanError(
                        f"expected at most {MAX_CORRECTION_CELL:,} characters, got {len(cell):,}",
                        file=path,
                        line=n,
                        field=field,
                    )
                bad = text_problem(cell)
                if bad is not None:
                    raise ScanError(bad, file=path, line=n, field=field)
            cid = row[0].strip()
            if cid in first:
                raise ScanError(
                    f"expected each id once, got {cid!r} again (also on line {first[cid]})",
                    file=path,
                    line=n,
                    field="id",
                )
            first[cid] = n
            out.append((n, cid, row[1].strip()))
    except csv.Error as exc:
        too_long = "field larger than field limit" in str(exc)
        raise ScanError(
            f"expected a cell of at most {MAX_CORRECTION_CELL:,} characters, got more"
            if too_long
            else f"expected CSV rows, got text that is not ({exc})",
            file=path,
            line=reader.line_num or 1,
        ) from None
    if header:
        raise ScanError("header: expected id,value, got another header", file=path, line=1)
    return out


def named_pages(
    fixes: Sequence[tuple[int, str, str]],
    key_sheets: Sequence[KeySheet],
    sheets: dict[int, dict[int, list[dict[str, Any]]]],
    name: str,
) -> dict[str, tuple[int, int, int]]:
    """The corrections that name the sheet and page an unidentified page is (a value
    ``SHEET/PAGE`` for a ``page:`` id): (line, sheet index, page) by page issue id. A sheet
    or page that does not exist is one line."""
    index = {ks.id: s for s, ks in enumerate(key_sheets)}
    out: dict[str, tuple[int, int, int]] = {}
    for line, cid, value in fixes:
        if not cid.startswith("page:") or "/" not in value:
            continue
        sid, _, number = value.rpartition("/")
        s = index.get(sid)
        if s is None or s not in sheets:
            raise ScanError(
                f"value: expected a sheet id of the key and its page (such as "
                f"{key_sheets[0].id}/1), got {value!r}",
                file=name,
                line=line,
            )
        pages = sorted(sheets[s])
        # ASCII digits only (str.isdigit takes "¹", which int() refuses)
        if not (number.isascii() and number.isdigit()) or int(number) not in sheets[s]:
            raise ScanError(
                f"value: expected a page of sheet {sid} ({pages[0]} to {pages[-1]}), "
                f"got {number!r}",
                file=name,
                line=line,
            )
        if cid in out:
            raise ScanError(
                f"id: expected each page once, got {cid!r} again (line {out[cid][0]})",
                file=name,
                line=line,
            )
        out[cid] = (line, s, int(number))
    return out


@dataclass(frozen=True)
class Settled:
    """The parts' answers and the issues once the corrections are applied: every issue a
    correction names says what settled it."""

    answers: tuple[ScannedAnswer, ...]
    issues: tuple[Issue, ...]


def settle(
    found: Identified,
    boxes: BoxAnswers,
    fixes: Sequence[tuple[int, str, str]],
    corrections: str | None,
    comma: bool = False,
) -> Settled:
    """Apply the corrections (``fixes``: line, id, value): an answer's value (an option
    letter, points, or ``blank``), or what settled a page's or a student's issue. The
    issues: the pages' first, then the boxes'. (``comma``: the key's sheets print a decimal
    comma, so points may be written 1,5, as grade reads them.)"""
    answers = list(boxes.answers)
    at = {a.id: i for i, a in enumerate(answers)}
    issues = list(found.issues) + [a.issue for a in answers if a.issue is not None]
    issue_at = {a.id: len(found.issues) + k for k, a in enumerate(a for a in answers if a.issue)}
    page_issues = {
        i.id: n for n, i in enumerate(found.issues) if i.id.startswith(("page:", "absent:"))
    }
    for line, cid, value in fixes:
        if cid in at:
            answer = answers[at[cid]]
            # settled: the row its part's boxes make (not pending)
            if value.casefold() != "blank":
                _check_value(
                    value,
                    answer.kind == "mark",
                    list(answer.allowed),
                    str(corrections),
                    line,
                    comma,
                    multi=answer.multi,
                )
            entry_value = value
            if value.casefold() == "blank":  # a score row said blank by a person: 0 points
                entry_value = "0" if answer.kind == "mark" else ""
            answers[at[cid]] = replace(answer, entry=answer.kind, value=entry_value)
            if cid in issue_at:
                issues[issue_at[cid]] = replace(issues[issue_at[cid]], settled=value)
        elif cid in page_issues:
            issues[page_issues[cid]] = replace(issues[page_issues[cid]], settled=value)
        else:
            raise ScanError(
                f"id: expected an id of issues.csv or an answer the scans read "
                f"(sheet/question/answer), got {cid!r}",
                file=corrections,
                line=line,
            )
    return Settled(tuple(answers), tuple(issues))


def _check_value(
    value: str,
    is_mark: bool,
    allowed: list[str],
    name: str,
    line: int,
    comma: bool = False,
    *,
    multi: bool = False,
) -> None:
    """A correction's value must be one the part can take: one of its option letters (a
    mark-all part: any of them, separated by ";", as "A;C"), or points from 0 to the
    part's (as grade reads a mark; ``comma``: a key printed with a decimal comma)."""
    if multi and not is_mark:
        for piece in value.split(SET_SEPARATOR):
            _check_value(piece.strip(), False, allowed, name, line, comma)
    elif is_mark:
        points = max(Fraction(v) for v in allowed)
        try:
            parse_mark(value, points, comma)
        except MarkError as exc:
            raise ScanError(f"value: {exc.message}", file=name, line=line) from None
    elif value.upper() not in {v.upper() for v in allowed}:
        raise ScanError(
            f"value: expected one of the options {', '.join(sorted(allowed))} or blank, "
            f"got {value!r}",
            file=name,
            line=line,
        )
