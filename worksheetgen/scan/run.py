"""``worksheetgen scan``: scanned pages -> the responses ``grade`` reads -> grades.

Every scan is checked before any is read (a file that is not a PDF or image, or a damaged
one, is one line and nothing is written). Each page is aligned and identified by its code
(``pages``); a page of another build (another class) is listed, never read as this class's,
and the rest are read. Each box is read as empty, marked, taken back (filled in completely:
the rule printed on the sheet) or unclear; a part's answer is its one marked box. Unclear
boxes, several marks, score rows nobody marked (a mark still to give, never 0), pages that
do not identify, pages scanned twice and pages missing are listed in issues.csv with a
cropped image each, never guessed; a corrections file (``id,value`` rows, the ids of
issues.csv) settles them on a rerun. Each page with an issue (or every page read, on
request) is drawn with what its boxes were read as (``overlay``: the verification view). The
responses go to ``grade``'s own path (``grade_files``), which writes scores.csv and report.md,
even when nothing is marked; report.md lists the issues still open.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

from worksheetgen.errors import ScanError
from worksheetgen.keyjson.read import ExpectedSecret
from worksheetgen.language import using
from worksheetgen.model import Student
from worksheetgen.scan.boxes import read_boxes
from worksheetgen.scan.identify import identify, read_pages
from worksheetgen.scan.overlay import draw_views, student_scans, with_views
from worksheetgen.scan.settle import named_pages, read_corrections, settle
from worksheetgen.scan.setup import ScanSetup, open_key
from worksheetgen.scan.studentnumber import number_fixes, read_class, read_roster_file
from worksheetgen.scan.write import ScanResult, write


def scan_files(
    scans: Sequence[str],
    key_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str] | None = None,
    corrections: str | None = None,
    jobs: int = 1,
    absent: str = "blank",
    secret: ExpectedSecret | None = None,
    roster: str | None = None,
    verify_pages: str = "issues",
    feedback_scans: bool = False,
) -> ScanResult:
    """Read ``scans`` against the key, write responses.csv, issues.csv (with crops) and
    grade's scores.csv and report.md into ``out_dir`` (default: ``scan`` beside the key);
    ``absent``: as grade's, a student with no page scanned gets no total ("blank") or 0
    ("zero"); ``secret``: the course secret the key must have been built with, if any;
    ``verify_pages``: the pages drawn with what was read into ``verify/`` ("issues": each
    page with an issue of a part; "all"; "none"); ``feedback_scans``: each student's
    feedback page shows their scanned pages with what was read drawn on them.

    The stages, each a function from frozen records to a frozen record: the key and
    scan.json (``open_key``), the scans' pages (``read_pages``), which sheet and page each
    is (``identify``), each part's answer from its boxes (``read_boxes``), the corrections
    (``settle``), the pages' views (``draw_views``), then the one write of the whole set
    (``write``).

    ``roster``: a class photocopied from a sheet with a student-number grid (build
    --student-number): the copies are told apart and matched to the roster's students
    (``studentnumber``), whose ids and names the responses and grades then carry."""
    setup = open_key(key_path, out_dir, secret)
    with using(setup.key.language, setup.key.decimal):  # as the key's sheets spoke
        students = _roster(setup, roster, feedback_scans)
        pages = read_pages(scans, setup)
        fixes = read_corrections(corrections) if corrections else []
        numbers, fixes = number_fixes(fixes) if students is not None else ([], fixes)
        assigned = named_pages(fixes, setup.key.sheets, setup.sheets, str(corrections))
        found = identify(setup, pages, assigned, corrections, jobs, copies=students is not None)
        comma = setup.key.decimal == ","
        copies = None
        if students is not None:
            copies = read_class(setup, pages, found, students, numbers, corrections)
            found, answers = copies.found, copies.answers
        else:
            answers = read_boxes(setup, found)
        settled = settle(found, answers, fixes, corrections, comma)
        views = draw_views(setup, found, settled.issues, verify_pages)
        settled = replace(settled, issues=tuple(with_views(settled.issues, views)))
        shown = student_scans(setup, found, settled.issues) if feedback_scans else None
        if copies is not None:
            return write(
                setup,
                found,
                answers,
                settled,
                absent,
                views.pictures,
                shown,
                copies.sheet_of,
                copies.names,
            )
        return write(setup, found, answers, settled, absent, views.pictures, shown)


def _roster(
    setup: ScanSetup, roster: str | None, feedback_scans: bool = False
) -> tuple[Student, ...] | None:
    """The roster a photocopied class is matched to: only for a key whose sheets carry a
    student-number grid (a roster build's sheets name their students already)."""
    if roster is None:
        return None
    if not setup.positions.student_number:
        raise ScanError(
            "expected a key whose sheets carry a student-number grid (build --scannable "
            "--student-number DIGITS), got one without: its sheets are matched by their "
            "page codes",
            field="--roster",
        )
    if feedback_scans:
        # the copies of one sheet share its pages' codes: their scans are not yet told apart
        # per student on the feedback pages, and one student must never see another's
        raise ScanError(
            "expected --feedback-scans without --roster (a photocopied class's feedback "
            "pages do not show its scans), got both",
            field="--feedback-scans",
        )
    return read_roster_file(roster)
