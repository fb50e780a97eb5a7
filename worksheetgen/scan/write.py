"""``scan``'s last stage: responses.csv, issues.csv, the crops and the pages' views written,
graded by ``grade``'s own path (``grade_rows``: the rows responses.csv holds, as records,
against the key's records), report.md given the issues a person must settle (``issuesmd``),
the whole set replacing the previous one at once (``outset``)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from worksheetgen.errors import GradeError, ScanError
from worksheetgen.files import as_new, write_failure
from worksheetgen.grading.csvcells import protect
from worksheetgen.grading.responses import ROW_COLUMNS, SHEET_ROW_COLUMNS, ResponseRow
from worksheetgen.keyjson.records import KeyDoc
from worksheetgen.report.grade import REPORT_FILE, GradeRun, grade_rows
from worksheetgen.scan.boxes import BoxAnswers
from worksheetgen.scan.identify import Identified
from worksheetgen.scan.issues import Issue
from worksheetgen.scan.issuesmd import with_issues
from worksheetgen.scan.outset import commit, staging
from worksheetgen.scan.settle import Settled
from worksheetgen.scan.setup import (
    CROPS,
    ISSUES_FILE,
    OUTPUT_SET,
    RESPONSES_FILE,
    VIEWS,
    ScanSetup,
)


@dataclass
class ScanResult:
    """What ``scan_files`` did."""

    pages: int
    identified: int
    issues: list[Issue]
    grade: GradeRun | None
    files: list[Path] = field(default_factory=list)

    @property
    def open_issues(self) -> list[Issue]:
        return [i for i in self.issues if not i.settled]

    @property
    def absent(self) -> list[str]:
        """The sheet ids of the students none of whose pages was scanned."""
        return [i.id.split(":", 1)[1] for i in self.issues if i.kind == "absent"]


def write(
    setup: ScanSetup,
    found: Identified,
    boxes: BoxAnswers,
    settled: Settled,
    absent: str,
    views: dict[str, bytes] | None = None,
    scans: dict[str, list[tuple[bytes, int, int]]] | None = None,
    sheet_of: Mapping[str, str] | None = None,
    names: Mapping[str, str] | None = None,
) -> ScanResult:
    """Write responses.csv, issues.csv, the crops and the pages' ``views`` (file name ->
    JPEG, into ``verify/``), and grade them (``_write``; ``scans``: each sheet's pages for
    its feedback page). ``sheet_of``: a photocopied class's (``scan --roster``): each
    answer's student (its ``sheet`` field) and the key's sheet their copy is of, written in
    a ``sheet`` column; ``names``: the students' names, as grade shows them."""
    rows = [
        ResponseRow(
            a.sheet,
            a.question,
            a.answer,
            value="" if a.entry == "mark" else a.value,
            mark=a.value if a.entry == "mark" else "",
            sheet="" if sheet_of is None else sheet_of[a.sheet],
        )
        for a in settled.answers
    ]
    return _write(
        setup.out,
        setup.key,
        rows,
        list(settled.issues),
        {**found.crops, **boxes.crops},
        found.pages,
        found.identified,
        setup.paper,
        setup.default_out,
        absent,
        views or {},
        scans,
        names,
    )


def _responses_csv(rows: Iterable[ResponseRow], by_sheet: bool = False) -> str:
    """responses.csv: the rows in ``ROW_COLUMNS``; ``by_sheet``: with a ``sheet`` column
    (``SHEET_ROW_COLUMNS``: a photocopied class, each student's copy of a sheet of the key)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(SHEET_ROW_COLUMNS if by_sheet else ROW_COLUMNS)
    for row in rows:
        w.writerow(row.cells(by_sheet))
    return buf.getvalue()


def _issues_csv(issues: Sequence[Issue]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["kind", "id", "where", "detail", "crop", "settled", "view"])
    for i in issues:
        crop = f"{CROPS}/{i.crop}" if i.crop else ""
        where, detail, settled = protect(i.where), protect(i.detail), protect(i.settled)
        w.writerow([i.kind, protect(i.id), where, detail, crop, settled, i.view])
    return buf.getvalue()


def _write(
    out: Path,
    key: KeyDoc,
    rows: list[ResponseRow],
    issues: list[Issue],
    crops: dict[str, bytes],
    n_pages: int,
    identified: int,
    paper: str = "a4",
    default: bool = False,
    absent: str = "blank",
    views: dict[str, bytes] | None = None,
    scans: dict[str, list[tuple[bytes, int, int]]] | None = None,
    names: Mapping[str, str] | None = None,
) -> ScanResult:
    """Grade and write the whole set in a staging folder, then replace the previous set with
    it at once (``outset``: never a new report beside the previous run's feedback pages)."""
    with staging(out, default) as stage:
        new = stage / "new"
        new.mkdir()
        run: GradeRun | None = None
        try:
            responses = _responses_csv(rows, by_sheet=any(row.sheet for row in rows))
            (new / RESPONSES_FILE).write_bytes(responses.encode("utf-8"))
            (new / ISSUES_FILE).write_bytes(_issues_csv(issues).encode("utf-8"))
            if crops:
                (new / CROPS).mkdir()
            for name, data in crops.items():
                (new / CROPS / name).write_bytes(data)
            if views:
                (new / VIEWS).mkdir()
            for name, data in (views or {}).items():
                (new / VIEWS / name).write_bytes(data)
            # graded even when nothing is marked (an empty class is a class): each student
            # scanned with no mark at all has no total, as one with no responses, never 0;
            # the rows responses.csv holds, handed over as they are (not read back)
            try:
                run = grade_rows(
                    key,
                    rows,
                    new,
                    label=str(out / RESPONSES_FILE),
                    paper=paper,
                    absent="zero" if absent == "zero" else "blank",
                    unanswered=True,
                    scans=scans,
                    names=names,
                )
            except GradeError as exc:
                raise ScanError(f"grading the scanned responses: {exc}") from None
            # the issues a person must settle, in report.md too (nothing added when none)
            report = new / REPORT_FILE
            report.write_bytes(with_issues(report.read_text("utf-8"), issues, key).encode("utf-8"))
            for path in sorted(new.rglob("*")):  # as any new file is (mkstemp's are 0600)
                if path.is_file():
                    as_new(path)
        except OSError as exc:
            error = write_failure(exc, out, rename=(new, out))
            if error is None:
                raise
            raise error from None
        written = sorted(out / p.relative_to(new) for p in new.rglob("*") if p.is_file())
        commit(out, new, OUTPUT_SET, stage / "previous")
    if run is not None:
        run = GradeRun(run.result, tuple(out / f.name for f in run.files))
    return ScanResult(n_pages, identified, issues, run, written)
