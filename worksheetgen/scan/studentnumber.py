"""``scan --roster``: a class photocopied from one printed sheet (a lone sheet or a version of
``build --scannable --student-number DIGITS``), told apart by the student-number grid each
copy's first page carries, and matched to the roster.

Every copy of a page carries the same page code, so the copies are told apart by the pile's
order: a copy is the page of its sheet that holds the grid (its first page) and the pages
of its sheet that follow it in the pile (the scans in the order given, each scan's pages in
order), up to the next copy's first page of that sheet; a page with no copy to join (none
of its sheet's first pages before it, or its copy has that page already) is a
``stray-page``, not read. Blank backs and pages of other sheets between them do not matter.

The grid's boxes are read by the boxes' own rules (``boxes.box_state``). A column is a
digit when one box of it is marked (a box filled in completely besides it is a mark taken
back); the number is its columns' digits from the left, the columns after it empty. An
unclear box, two marks in a column, a box only taken back, an empty column before a digit
or no digit at all is an ``unclear-number``; a number not on the roster an
``unknown-number``; two copies of one number both a ``duplicate-number``: never a guess.
A number matches a roster id made of the same digits (``00123`` and ``123`` when no other
id is those digits too). A corrections row ``copy:<page>,<roster id>`` names the copy's
student by hand (``ignore``: the copy is not graded); a copy still unmatched keeps its
issue's id as its student's, so its answers are read and graded under that id until it is
settled. Each copy's answers are then the key's sheet's, under its student's id, with its
missing pages as ``missing-page``; students of the roster none of whose copies was matched
are ``absent``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from worksheetgen.errors import ScanError
from worksheetgen.language import gettext
from worksheetgen.model import Student
from worksheetgen.scan.boxes import BoxAnswers, box_state, read_boxes
from worksheetgen.scan.identify import FoundPage, Identified, ScanPages
from worksheetgen.scan.issues import Issue
from worksheetgen.scan.setup import ScanSetup

#: what a corrections file names a copy by: ``copy:`` and where its first page is
COPY = "copy:"
#: a correction that takes a copy out of the grading
IGNORE = "ignore"


@dataclass
class Copy:
    """One photocopy: the key's sheet it is of, its pages by number (in the pile's order),
    where its first page is, the number read on it (or None) and its student's id."""

    sheet: int
    where: str
    pages: dict[int, FoundPage] = field(default_factory=dict)
    number: str | None = None
    student: str | None = None

    @property
    def id(self) -> str:
        return f"{COPY}{self.where}"


@dataclass(frozen=True)
class Copies:
    """A photocopied class as read: every copy's answers under its student's id, the issues
    (the pages', the copies' and the boxes'), each answer's student's sheet of the key and
    the names grade shows."""

    found: Identified
    answers: BoxAnswers
    sheet_of: dict[str, str]
    names: dict[str, str]


def number_fixes(
    fixes: Sequence[tuple[int, str, str]],
) -> tuple[list[tuple[int, str, str]], list[tuple[int, str, str]]]:
    """The corrections rows that name a copy's student (``copy:`` ids), and the others."""
    mine = [f for f in fixes if f[1].startswith(COPY)]
    return mine, [f for f in fixes if not f[1].startswith(COPY)]


def read_class(
    setup: ScanSetup,
    pages: ScanPages,
    found: Identified,
    roster: Sequence[Student],
    fixes: Sequence[tuple[int, str, str]],
    corrections: str | None,
) -> Copies:
    """Group the pages into copies, read each copy's number, match it to ``roster``, settle
    the ``copy:`` corrections (``fixes``), and read each copy's answers."""
    order = {task: i for i, task in enumerate(pages.tasks)}
    issues = list(found.issues)
    crops = dict(found.crops)
    copies = _group(setup, sorted(found.found, key=lambda f: order[f.page.task]), issues)
    for copy in copies:
        _read_number(setup, copy, issues, crops)
    _match(copies, roster, issues)
    names = {s.id: s.name for s in roster}
    _settle_numbers(copies, roster, issues, fixes, corrections)
    key_sheets = setup.key.sheets
    answers = []
    sheet_of: dict[str, str] = {}
    for copy in copies:
        if copy.student == IGNORE:
            continue
        label = copy.student or copy.id
        sheet_of[label] = key_sheets[copy.sheet].id
        names.setdefault(label, label)
        seen = {(copy.sheet, p): f.where for p, f in copy.pages.items()}
        one = Identified(tuple(copy.pages.values()), (), crops, seen, 0, 0)
        read = read_boxes(setup, one)
        crops.update(read.crops)
        answers += [_relabel(a, label) for a in read.answers]
        for p in sorted(setup.sheets[copy.sheet]):
            if p not in copy.pages:
                issues.append(
                    Issue(
                        "missing-page",
                        f"page:{label}/{p}",
                        f"copy {copy.where}",
                        gettext("page {page} of this copy was not scanned", page=p),
                    )
                )
    matched = {c.student for c in copies}
    for s in roster:
        if s.id not in matched:
            issues.append(
                Issue(
                    "absent",
                    f"absent:{s.id}",
                    f"student {s.id}",
                    gettext(
                        "no copy's student number is this student's: absent, or their copy is "
                        "still to scan or to name (no responses, not zeros)"
                    ),
                )
            )
    boxes = {k: v for k, v in crops.items() if k not in found.crops}
    out = replace(found, issues=tuple(issues), crops={k: crops[k] for k in found.crops})
    return Copies(out, BoxAnswers(tuple(answers), boxes), sheet_of, names)


def _relabel(answer: Any, label: str) -> Any:
    """A copy's answer under its student's id (and its issue's id with it)."""
    out = replace(answer, sheet=label)
    if answer.issue is not None:
        out = replace(out, issue=replace(answer.issue, id=out.id))
    return out


def _group(setup: ScanSetup, found: Sequence[FoundPage], issues: list[Issue]) -> list[Copy]:
    """The copies, in the pile's order: each begins at a page holding its sheet's grid and
    takes the pages of its sheet after it that it does not have yet."""
    first = {s: _grid_page(setup, s) for s in setup.sheets}
    copies: list[Copy] = []
    open_copy: dict[int, Copy] = {}
    for page in found:
        s, p = page.page.sheet, page.page.page
        if p == first[s]:
            opened = Copy(s, page.where, {p: page})
            copies.append(opened)
            open_copy[s] = opened
            continue
        copy = open_copy.get(s)
        if copy is None or p in copy.pages:
            sid = setup.key.sheets[s].id
            stray = (
                gettext(
                    "sheet {sheet} page {page}, but no copy's page {grid} (the student-number "
                    "grid) before it in the pile: not read (scan each copy's pages together, "
                    "its first page first)",
                    sheet=sid,
                    page=p,
                    grid=first[s],
                )
                if copy is None
                else gettext(
                    "sheet {sheet} page {page}, but its copy ({copy}) has page {page} already: "
                    "not read (scan each copy's pages together, its first page first)",
                    sheet=sid,
                    page=p,
                    copy=copy.where,
                )
            )
            issues.append(Issue("stray-page", f"page:{page.where}", page.where, stray))
            continue
        copy.pages[p] = page
    return copies


def _grid_page(setup: ScanSetup, sheet: int) -> int:
    """The page of ``sheet`` whose boxes hold the student-number grid."""
    for sheet_pos in setup.positions.sheets:
        if sheet_pos.index == sheet:
            for page in sheet_pos.pages:
                if page.number_boxes:
                    return page.page
    return 1


def _read_number(
    setup: ScanSetup, copy: Copy, issues: list[Issue], crops: dict[str, bytes]
) -> None:
    """The number marked on a copy's grid, or an ``unclear-number`` issue with its picture."""
    # the image machinery only when scanning
    import numpy as np

    from worksheetgen.scan.images import crop_png
    from worksheetgen.scan.pages import BOX_INSET_MM, box_measures

    page = copy.pages[min(copy.pages)]
    boxes = next(
        p.number_boxes
        for s in setup.positions.sheets
        if s.index == copy.sheet
        for p in s.pages
        if p.page == page.page.page
    )
    aligned = page.page.aligned()
    corners = np.array([[b.x, b.y] for b in boxes]).reshape(-1, 2)
    measures = box_measures(aligned, corners, setup.box_mm, BOX_INSET_MM)
    columns: dict[int, list[tuple[int, str]]] = {}
    for box, (ratio, faint, spread, depth) in zip(boxes, measures, strict=True):
        _, col, digit = box.id.split(".")
        state = box_state(float(ratio), float(faint), float(spread), float(depth))
        columns.setdefault(int(col), []).append((int(digit), state))
    digits: list[str | None] = []
    problems: list[str] = []
    for column in sorted(columns):
        states = columns[column]
        marked = [d for d, st in states if st == "marked"]
        unclear = [d for d, st in states if st == "unclear"]
        taken = [d for d, st in states if st == "taken-back"]
        if unclear:
            problems.append(
                gettext("column {column}: box {box} unclear", column=column, box=unclear[0])
            )
        elif len(marked) > 1:
            problems.append(
                gettext(
                    "column {column}: {digits} marked",
                    column=column,
                    digits=", ".join(map(str, marked)),
                )
            )
        elif marked:
            digits.append(str(marked[0]))
            continue
        elif taken:
            problems.append(
                gettext(
                    "column {column}: only box {box} filled in (taken back)",
                    column=column,
                    box=taken[0],
                )
            )
        digits.append(None)
    if not problems:
        written = [d for d in digits if d is not None]
        last = max((i for i, d in enumerate(digits) if d is not None), default=-1)
        if not written:
            problems.append(gettext("no digit marked"))
        elif any(d is None for d in digits[:last]):
            gap = next(i for i, d in enumerate(digits) if d is None) + 1
            problems.append(gettext("column {column} empty before a digit", column=gap))
        else:
            copy.number = "".join(written)
            return
    name = f"box-{len(crops) + 1:04d}.png"
    xs, ys = [b.x for b in boxes], [b.y for b in boxes]
    rect = aligned.pixel_box(
        min(xs), min(ys) - 10, max(xs) + setup.box_mm, max(ys) + setup.box_mm, 3.0
    )
    crops[name] = crop_png(aligned.image, rect)
    issues.append(
        Issue(
            "unclear-number",
            copy.id,
            copy.where,
            gettext("student number: {problems}", problems="; ".join(problems)),
            name,
        )
    )


def _digits_match(number: str, student_id: str) -> bool:
    """A number read and a roster id made of the same digits (leading zeros aside)."""
    if not (student_id.isascii() and student_id.isdigit()):
        return False
    return student_id == number or student_id.lstrip("0") == number.lstrip("0")


def _match(copies: Sequence[Copy], roster: Sequence[Student], issues: list[Issue]) -> None:
    """Each copy whose number is read to the one roster student of that number; a number
    not on the roster, on two ids, or on two copies is an issue for a person."""
    by_number: dict[str, list[Copy]] = {}
    for copy in copies:
        if copy.number is None:
            continue
        exact = [s for s in roster if s.id == copy.number]
        near = exact or [s for s in roster if _digits_match(copy.number, s.id)]
        if len(near) != 1:
            detail = (
                gettext("student number {number}: not on the roster", number=copy.number)
                if not near
                else gettext(
                    "student number {number}: the roster's ids {ids}",
                    number=copy.number,
                    ids=", ".join(s.id for s in near),
                )
            )
            issues.append(Issue("unknown-number", copy.id, copy.where, detail))
            continue
        copy.student = near[0].id
        by_number.setdefault(near[0].id, []).append(copy)
    for student, same in by_number.items():
        if len(same) < 2:
            continue
        for copy in same:
            copy.student = None
            others = ", ".join(c.where for c in same if c is not copy)
            issues.append(
                Issue(
                    "duplicate-number",
                    copy.id,
                    copy.where,
                    gettext(
                        "student number {number} ({student}) is on another copy too: {others}",
                        number=copy.number,
                        student=student,
                        others=others,
                    ),
                )
            )


def _settle_numbers(
    copies: Sequence[Copy],
    roster: Sequence[Student],
    issues: list[Issue],
    fixes: Sequence[tuple[int, str, str]],
    corrections: str | None,
) -> None:
    """The ``copy:`` corrections: a roster id names the copy's student, ``ignore`` takes it
    out; an id no copy has, a student not on the roster, or one given two copies is one
    line."""
    by_id = {c.id: c for c in copies}
    ids = {s.id for s in roster}
    for line, cid, value in fixes:
        copy = by_id.get(cid)
        if copy is None:
            raise ScanError(
                f"id: expected a copy of the scans (copy:<its first page>, as issues.csv "
                f"names it), got {cid!r}",
                file=corrections,
                line=line,
            )
        if value.casefold() == IGNORE:
            copy.student = IGNORE
        elif value in ids:
            copy.student = value
        else:
            raise ScanError(
                f"value: expected a student id of the roster or {IGNORE}, got {value!r}",
                file=corrections,
                line=line,
            )
        for n, issue in enumerate(issues):
            if issue.id == cid:
                issues[n] = replace(issue, settled=value)
    given: dict[str, Copy] = {}
    for copy in copies:
        if copy.student is None or copy.student == IGNORE:
            continue
        if copy.student in given:
            line = next((f[0] for f in fixes if f[1] in (copy.id, given[copy.student].id)), 1)
            raise ScanError(
                f"value: expected each student once, got {copy.student!r} for "
                f"{given[copy.student].id} and {copy.id} (ignore one, or name another)",
                file=corrections,
                line=line,
            )
        given[copy.student] = copy


def read_roster_file(path: str | Path) -> tuple[Student, ...]:
    """The roster ``scan --roster`` matches the copies to (the build's roster reader)."""
    # the roster reader only for a photocopied class
    from worksheetgen.bank.roster import read_roster
    from worksheetgen.errors import RosterError

    try:
        return read_roster(path)
    except RosterError as exc:
        raise ScanError(str(exc)) from None
