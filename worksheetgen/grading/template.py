"""``grade --template``: a blank responses CSV for a key, one row per entry to fill in."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import BinaryIO

from worksheetgen.errors import GradeError
from worksheetgen.files import STDOUT, check_replaceable, write_failure, write_file, write_stream
from worksheetgen.grading.csvcells import protect
from worksheetgen.grading.key import GradeKey, load_key
from worksheetgen.grading.responses import COLUMNS, points_cell
from worksheetgen.keyjson.read import ExpectedSecret


def template_csv(key: GradeKey, marks: bool = False, students: int = 0) -> str:
    """A blank responses CSV for ``key``: one row per student, question, answer and entry;
    with ``marks``, one row per student and part instead, with the part's points in ``max``
    and an empty ``mark`` for the TA (its other columns are the per-entry file's, so rows of
    both can be put in one file). ``students`` (a versions build, whose sheets are versions
    that many students share): that many students' rows, each with every version's rows in
    a ``sheet`` column, to fill in the version the student wrote (rows left blank are no
    answer and tie the student to no version)."""
    if students:
        return _per_student(key, marks, students)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    # a roster key names its students beside their ids (grading ignores the column: it
    # helps a TA find rows; a name like "=SUM(A1)" is kept from running as a formula)
    named = any(s.name for s in key.sheets)
    header = list(COLUMNS)
    if named:
        header.insert(1, "name")
    if marks:
        header += ["mark", "max", "part"]  # grading reads mark; max and part are for the TA
    w.writerow(header)
    for s in key.sheets:
        who = [protect(s.id), protect(s.name)] if named else [protect(s.id)]
        for q in s.questions:
            for a in q.answers:
                if marks:
                    points = points_cell(q.points_of(a.name))
                    w.writerow([*who, protect(q.id), protect(a.name), "", "", "", points, a.part])
                    continue
                rows, cols = a.dims
                if a.kind == "matrix":
                    entries = [f"{r},{c}" for r in range(1, rows + 1) for c in range(1, cols + 1)]
                elif a.kind == "vector":
                    entries = [str(c) for c in range(1, cols + 1)]
                else:
                    entries = [""]
                w.writerows([*who, protect(q.id), protect(a.name), e, ""] for e in entries)
    return buf.getvalue()


def _entries(kind: str, dims: tuple[int, int]) -> list[str]:
    rows, cols = dims
    if kind == "matrix":
        return [f"{r},{c}" for r in range(1, rows + 1) for c in range(1, cols + 1)]
    if kind == "vector":
        return [str(c) for c in range(1, cols + 1)]
    return [""]


#: the most student slots a versions template holds
MAX_STUDENTS = 2000


def _per_student(key: GradeKey, marks: bool, students: int) -> str:
    """Rows per student slot (student01, student02, ...: overwrite with the real ids) and
    version, with the sheet column filled in."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    header = ["student", "sheet", "question", "answer", "entry", "value"]
    if marks:
        header += ["mark", "max", "part"]
    w.writerow(header)
    width = max(2, len(str(students)))
    for n in range(1, students + 1):
        who = f"student{n:0{width}d}"
        for s in key.sheets:
            for q in s.questions:
                for a in q.answers:
                    ids = [who, protect(s.id), protect(q.id), protect(a.name)]
                    if marks:
                        w.writerow([*ids, "", "", "", points_cell(q.points_of(a.name)), a.part])
                    else:
                        w.writerows([*ids, e, ""] for e in _entries(a.kind, a.dims))
    return buf.getvalue()


def write_template(
    key_path: str | os.PathLike[str],
    target: str | os.PathLike[str],
    stdout: BinaryIO | None = None,
    marks: bool = False,
    students: int = 0,
    secret: ExpectedSecret | None = None,
) -> Path | None:
    """Write a blank responses CSV for a key (``marks``: one row per part, to type its
    points); never overwrites an existing file (nor
    anything else: a symlink, a FIFO, a device). ``target`` ``-`` writes it to ``stdout``
    and returns None. ``secret``: the course secret the key must have been built with."""
    if os.fspath(target) == STDOUT:
        if stdout is None:
            raise GradeError("expected a stream to write the template to, got none")
        template = template_csv(load_key(key_path, secret), marks, students)
        write_stream(stdout, template.encode("utf-8"))
        return None
    path = Path(target)
    if os.path.lexists(path):
        # a device, a FIFO, a symlink to nothing: said as what it is
        check_replaceable(path, field=None, what="a new file for the template")
        raise GradeError(
            "expected a new file for the template, got an existing file (it is never overwritten)",
            file=str(path),
        )
    # a parent that is a symlink to nothing, or a file
    check_replaceable(path, field=None, what="a new file for the template")
    key = load_key(key_path, secret)
    text = template_csv(key, marks, students)
    try:
        write_file(path, text.encode("utf-8"))
    except OSError as exc:
        error = write_failure(exc, path)
        if error is None:
            raise
        raise error from None
    return path
