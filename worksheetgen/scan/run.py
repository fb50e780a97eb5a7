"""``worksheetgen scan``: scanned pages -> the responses ``grade`` reads -> grades.

Every scan is checked before any is read (a file that is not a PDF or image, or a damaged
one, is one line and nothing is written). Each page is aligned and identified by its code
(``pages``); a page of another build stops the run with one line. Each box is read as
empty, marked, taken back (filled in completely: the rule printed on the sheet) or unclear;
a part's answer is its one marked box. Unclear boxes, several marks, score rows nobody
marked (a mark still to give, never 0), pages that do not identify, pages scanned twice
and pages missing are listed in issues.csv with a cropped image each, never guessed; a
corrections file (``id,value`` rows, the ids of issues.csv) settles them on a rerun. The
responses go to ``grade``'s own path (``grade_files``), which writes scores.csv and
report.md.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from worksheetgen.errors import GradeError, ScanError
from worksheetgen.files import as_new, write_failure
from worksheetgen.grading.classreport import DATA_DIR, FEEDBACK_DIR, HTML_FILE, PDF_FILE
from worksheetgen.grading.csvcells import protect
from worksheetgen.grading.key import grade_key
from worksheetgen.grading.report import REPORT_FILE, SCORES_FILE, GradeRun, grade_files
from worksheetgen.grading.responses import _RowError as MarkError
from worksheetgen.grading.responses import parse_mark
from worksheetgen.inputs import read_limited
from worksheetgen.keyjson.read import ExpectedSecret, load_key_document
from worksheetgen.keyjson.records import KeyDoc, KeySheet
from worksheetgen.scan.contract import Positions, read_positions
from worksheetgen.scan.layout import ANSWERS, score_values, value_text
from worksheetgen.scan.outset import check_out, commit, staging
from worksheetgen.scan.positions import (
    LETTERS,
    SCAN_FILE,
    SCAN_FORMAT,
    SCAN_VERSIONS,
    key_codes,
    legacy_codes,
)
from worksheetgen.textrules import problem as text_problem
from worksheetgen.textrules import shown

#: How a box is read, from its ink share (pixels darker than the ink level), its light ink
#: share (a thin or blurred stroke counts), its spread and its depth (how far the light ink
#: reaches across the box, the larger and the smaller of its width and height as a share
#: of the box's; pages.box_measures), in this order:
#: ink share TAKEN_BACK and more: filled in completely (a mark taken back); from FULL to
#: TAKEN_BACK: unclear; light ink under EMPTY: empty; spread SPREAD and more and depth DEPTH
#: and more: marked (a tick, a cross, a scribble reach across the box); anything else
#: unclear, for a person: a stray dot (compact, however dark), one line along the box's side
#: or a single dash (thin one way). One ink share alone cannot tell them apart: a thin
#: scribble blurred at 150 dpi can have less dark ink than a stray dot.
EMPTY = 0.06
SPREAD = 0.75
DEPTH = 0.25
FULL = 0.80
TAKEN_BACK = 0.92
#: a page with less ink than this share of its area is blank (every printed page of a
#: sheet has more: its corner marks alone are 0.23 % of an A4 page)
BLANK = 0.001
RESPONSES_FILE = "responses.csv"
#: the mark of a part whose boxes a person has to look at: graded as still to mark, not
#: as blank, until a correction settles it
PENDING = "?"
ISSUES_FILE = "issues.csv"
CROPS = "crops"
MAX_CORRECTIONS_BYTES = 10_000_000
#: a corrections CSV's rows and cells (an id or a value is a few dozen characters)
MAX_CORRECTION_ROWS = 200_000
MAX_CORRECTION_CELL = 1_000
#: every entry a run writes into its output folder (grade's among them): replaced as one set
OUTPUT_FOLDERS = (CROPS, DATA_DIR, FEEDBACK_DIR)
OUTPUT_SET = (
    RESPONSES_FILE,
    ISSUES_FILE,
    SCORES_FILE,
    REPORT_FILE,
    HTML_FILE,
    PDF_FILE,
    *OUTPUT_FOLDERS,
)
#: the most pages one run reads: this many for each page the build printed (both sides of
#: every sheet, scanned twice over), and at least MIN_SCAN_PAGES
PAGES_PER_PRINTED = 4
MIN_SCAN_PAGES = 100


@dataclass(frozen=True)
class BoxReading:
    """One box as read: its state (empty, marked, taken-back, unclear), ink share and
    spread."""

    state: str
    ratio: float
    spread: float = 0.0


def box_state(ratio: float, light: float, spread: float, depth: float) -> str:
    """empty, marked, taken-back or unclear, from a box's ink share, light ink share,
    spread and depth (the rules above EMPTY)."""
    if ratio >= TAKEN_BACK:
        return "taken-back"
    if ratio >= FULL:
        return "unclear"
    if light < EMPTY:
        return "empty"
    if spread >= SPREAD and depth >= DEPTH:
        return "marked"
    return "unclear"


@dataclass(frozen=True)
class Issue:
    """Something a person has to look at: its kind, id (for corrections), where it is and
    what was seen; ``crop`` the file name of its picture."""

    kind: str
    id: str
    where: str
    detail: str
    crop: str = ""
    settled: str = ""


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


def _positions(key_path: Path, key_sheets: int) -> Positions:
    path = key_path.parent / SCAN_FILE
    if not path.exists():
        raise ScanError(
            f"expected {SCAN_FILE} beside the key (a build with --scannable writes it), got none",
            file=str(key_path),
        )
    # every field checked before it is used (scan.contract)
    return read_positions(path, key_sheets, SCAN_FORMAT, SCAN_VERSIONS)


def read_corrections(path: str) -> list[tuple[int, str, str]]:
    """(line, id, value) of every row of a corrections CSV (header ``id,value``): at most
    MAX_CORRECTION_ROWS rows of cells of at most MAX_CORRECTION_CELL characters, printable
    text (``textrules``), each id once."""
    data = read_limited(path, MAX_CORRECTIONS_BYTES, what="a corrections CSV", error=ScanError)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ScanError("expected UTF-8 text, got other bytes", file=path) from None
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


def scan_files(
    scans: Sequence[str],
    key_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str] | None = None,
    corrections: str | None = None,
    jobs: int = 1,
    absent: str = "blank",
    secret: ExpectedSecret | None = None,
) -> ScanResult:
    """Read ``scans`` against the key, write responses.csv, issues.csv (with crops) and
    grade's scores.csv and report.md into ``out_dir`` (default: ``scan`` beside the key);
    ``absent``: as grade's, a student with no page scanned gets no total ("blank") or 0
    ("zero"); ``secret``: the course secret the key must have been built with, if any.

    The stages, each a function from frozen records to a frozen record: the key and
    scan.json (``open_key``), the scans' pages (``read_pages``), which sheet and page each
    is (``identify``), each part's answer from its boxes (``read_boxes``), the corrections
    (``settle``), then the one write of the whole set (``write``)."""
    setup = open_key(key_path, out_dir, secret)
    pages = read_pages(scans, setup)
    fixes = read_corrections(corrections) if corrections else []
    assigned = _assignments(fixes, setup.key.sheets, setup.sheets, str(corrections))
    found = identify(setup, pages, assigned, corrections, jobs)
    answers = read_boxes(setup, found)
    settled = settle(found, answers, fixes, corrections)
    return write(setup, found, answers, settled, absent)


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
    doc, document = load_key_document(key, ScanError, secret)
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


Task = tuple[str, str, int]  # a page: its scan's path, the scan's kind and the page's index


@dataclass(frozen=True)
class ScanPages:
    """Every page of the scans, checked and counted, not yet decoded: each scan's label
    (``scan_labels``) and bytes, and the pages in order."""

    labels: dict[str, str]
    data: dict[str, bytes]
    tasks: tuple[Task, ...]


def read_pages(scans: Sequence[str], setup: ScanSetup) -> ScanPages:
    """Check every scan before any is read (its kind, size and page count), at most
    PAGES_PER_PRINTED pages for each page the build printed (at least MIN_SCAN_PAGES)."""
    # the image machinery only when scanning
    from worksheetgen.scan.images import check_scan, page_count

    labels = scan_labels(scans)
    tasks: list[Task] = []
    data_of: dict[str, bytes] = {}
    # the most pages a run reads: PAGES_PER_PRINTED for each page the build printed, counted
    # (and every page's size checked) before any page is decoded
    printed = sum(len(s.pages) for s in setup.positions.sheets)
    most = max(MIN_SCAN_PAGES, PAGES_PER_PRINTED * printed)
    for path in scans:  # every scan checked before any is read
        kind, data = check_scan(path)
        data_of[path] = data
        count = page_count(path, kind, data, most - len(tasks))
        if len(tasks) + count > most:
            raise ScanError(
                f"expected at most {most:,} pages in all ({PAGES_PER_PRINTED} for each of the "
                f"{printed:,} pages the build printed, or {MIN_SCAN_PAGES}), got "
                f"{len(tasks) + count:,} with this scan's {count:,}",
                file=path,
            )
        tasks += [(path, kind, i) for i in range(count)]
    return ScanPages(labels, data_of, tuple(tasks))


@dataclass(frozen=True)
class FoundPage:
    """A page identified (by its code, or by a correction): which it is, the ink measures
    of its boxes in scan.json's order, and where it was (``scan.pdf#3``)."""

    page: _Found
    ratios: Any
    where: str


@dataclass(frozen=True)
class Identified:
    """Which sheet and page every scanned page is: the pages read (in the order their boxes
    are taken), the pages' issues (in the order found: twice, unidentified, blank, then
    missing and absent), their cropped pictures, and the counts of pages read and
    identified; ``seen``: where each (sheet index, page) was first read."""

    found: tuple[FoundPage, ...]
    issues: tuple[Issue, ...]
    crops: dict[str, bytes]
    seen: dict[tuple[int, int], str]
    pages: int
    identified: int


def identify(
    setup: ScanSetup,
    pages: ScanPages,
    assigned: dict[str, tuple[int, int, int]],
    corrections: str | None,
    jobs: int,
) -> Identified:
    """Decode, align and measure every page (by ``jobs`` processes), identify it by its code
    (or, named by a correction, ``assigned``, as the sheet and page a person said), and list
    what is not a page to read: twice, unidentified, blank; then the pages missing of the
    sheets scanned and the students none of whose pages was (absent)."""
    # the image machinery only when scanning
    from worksheetgen.scan.images import crop_png

    key_sheets, sheets, fields = setup.key.sheets, setup.sheets, setup.fields
    labels = pages.labels
    issues: list[Issue] = []
    crops: dict[str, bytes] = {}
    seen: dict[tuple[int, int], str] = {}
    found: list[FoundPage] = []
    n_pages = identified = 0
    context = _ReadContext(pages.data, setup.paper, setup.box_mm, sheets)
    unread: dict[str, Task] = {}  # unidentified pages' tasks, by issue id

    def take(page: _Found, ratios: Any, where: str) -> None:
        seen[(page.sheet, page.page)] = where
        found.append(FoundPage(page, ratios, where))

    for task, read in zip(pages.tasks, _read_all(context, list(pages.tasks), jobs), strict=True):
        n_pages += 1
        path, kind, index = task
        where = task_where(task, labels)
        if read.code is not None and (
            read.code[1] >= len(fields) or read.code[0] != fields[read.code[1]]
        ):
            raise ScanError(
                f"expected pages of this key's build, got page {index + 1} of another "
                "build (its page code names another class: other students, questions or "
                "order)",
                file=path,
            )
        if read.code is None or read.code[1] not in sheets:
            name = f"page-{len(crops) + 1:03d}.png"
            image = load_page(path, kind, pages.data[path], index)
            small = image[::4, ::4]
            crops[name] = crop_png(small, (0, 0, small.shape[1], small.shape[0]))
            unread[f"page:{where}"] = task
            if _is_blank(image):  # a sheet's blank back, or a page left to even the count
                issues.append(
                    Issue(
                        "blank-page",
                        f"page:{where}",
                        where,
                        f"no ink (under {BLANK:.1%} of the page): nothing to read",
                        name,
                        "blank",
                    )
                )
                continue
            issues.append(
                Issue(
                    "unidentified-page",
                    f"page:{where}",
                    where,
                    "no corner marks or page code read",
                    name,
                )
            )
            continue
        page = _Found(read.code[1], read.code[2], task, read.homography, context)
        sid = key_sheets[page.sheet].id
        if page.page not in sheets[page.sheet]:
            unread[f"page:{where}"] = task
            issues.append(
                Issue(
                    "unidentified-page",
                    f"page:{where}",
                    where,
                    f"its code names page {page.page} of sheet {sid}, which has no such page",
                )
            )
            continue
        identified += 1
        first = seen.get((page.sheet, page.page))
        if first is not None:
            issues.append(
                Issue(
                    "duplicate-page",
                    f"page:{where}",
                    where,
                    f"sheet {sid} page {page.page} again (first: {first}); this one is not read"
                    + (_SHARED_CODES if key_sheets[page.sheet].student is None else ""),
                )
            )
            continue
        take(page, read.ratios, where)
    # pages whose code did not read, named by the corrections: read as the sheet and page
    for pid, (line, s, p) in assigned.items():
        named = f"{key_sheets[s].id}/{p}"
        named_task = unread.get(pid)
        if named_task is None:
            raise ScanError(
                f"id: expected an unidentified page of {ISSUES_FILE} to read as {named}, "
                f"got {pid!r}",
                file=corrections,
                line=line,
            )
        if (s, p) in seen:
            raise ScanError(
                f"value: expected a page no scan gave, got {named} (read from {seen[(s, p)]})",
                file=corrections,
                line=line,
            )
        read = _read_as(named_task, s, p, fields[s], context)
        if read.homography is None:
            raise ScanError(
                f"value: expected a page whose corner marks read, got {pid} as {named}, "
                "whose marks (or which way up it is) do not read: scan it again",
                file=corrections,
                line=line,
            )
        identified += 1
        take(
            _Found(s, p, named_task, read.homography, context),
            read.ratios,
            task_where(named_task, labels),
        )
    issues += _missing(key_sheets, sheets, seen)
    return Identified(tuple(found), tuple(issues), crops, seen, n_pages, identified)


def _missing(
    key_sheets: Sequence[KeySheet],
    sheets: dict[int, dict[int, list[dict[str, Any]]]],
    seen: dict[tuple[int, int], str],
) -> list[Issue]:
    """The pages not scanned of the sheets scanned at all, and the students none of whose
    pages was (absent)."""
    issues: list[Issue] = []
    # missing pages of the sheets that were scanned at all
    scanned = {s for s, _ in seen}
    for s in sorted(scanned):
        sid = key_sheets[s].id
        for p in sorted(sheets[s]):
            if (s, p) not in seen:
                issues.append(
                    Issue(
                        "missing-page",
                        f"page:{sid}/{p}",
                        f"sheet {sid}",
                        f"page {p} was not scanned",
                    )
                )
    # students none of whose pages was scanned: absent (or their pages lost), one each
    for s, ks in enumerate(key_sheets):
        if s not in scanned and ks.student is not None:
            issues.append(
                Issue(
                    "absent",
                    f"absent:{ks.id}",
                    f"sheet {ks.id}",
                    "no page of this student's sheet was scanned: absent, or the pages "
                    "are still to scan (no responses, not zeros)",
                )
            )
    return issues


@dataclass(frozen=True)
class ScannedAnswer:
    """One part of a sheet as its boxes say: its sheet, question and answer, the entry its
    boxes make ("mark": score boxes; "value": options) and the mark or option read (PENDING
    while a person has to look); ``issue``: what the person has to look at, or None;
    ``allowed``: the option letters or the points its boxes offer."""

    sheet: str
    question: str
    answer: str
    entry: str
    value: str
    kind: str
    allowed: tuple[str, ...]
    issue: Issue | None = None

    @property
    def id(self) -> str:
        """The part's id, as issues.csv and a corrections file name it."""
        return f"{self.sheet}/{self.question}/{self.answer}"


@dataclass(frozen=True)
class BoxAnswers:
    """Every part of the sheets scanned, in responses.csv's order, and the pictures of the
    boxes a person has to look at."""

    answers: tuple[ScannedAnswer, ...]
    crops: dict[str, bytes]


def read_boxes(setup: ScanSetup, found: Identified) -> BoxAnswers:
    """Each part's answer from its boxes: its one marked box; unclear boxes, several marks,
    a box only taken back and a score row nobody marked are for a person (with a cropped
    picture); a part whose boxes are all on a missing page is a mark still to give."""
    # the image machinery only when scanning
    from worksheetgen.scan.images import crop_png

    key_sheets, sheets, box_mm = setup.key.sheets, setup.sheets, setup.box_mm
    readings: dict[tuple[int, str, str], list[tuple[Any, dict[str, Any], BoxReading]]] = {}
    for seen_page in found.found:  # every page's boxes into their parts' groups
        page, ratios, where = seen_page.page, seen_page.ratios, seen_page.where
        boxes = sheets[page.sheet][page.page]
        for box, (ratio, light, spread, depth) in zip(
            boxes, ratios if ratios is not None else (), strict=True
        ):
            reading = BoxReading(
                box_state(float(ratio), float(light), float(spread), float(depth)),
                float(ratio),
                float(spread),
            )
            group = readings.setdefault((page.sheet, box["question"], box["answer"]), [])
            group.append((page, {**box, "where": where}, reading))
    out: list[ScannedAnswer] = []
    crops: dict[str, bytes] = {}
    numbered = len(found.crops)  # the boxes' pictures are numbered after the pages'
    for (s, question, answer), group in sorted(readings.items(), key=lambda kv: (kv[0][0],)):
        sid = key_sheets[s].id
        gid = f"{sid}/{question}/{answer}"
        is_mark = "mark" in group[0][1]
        problem, value, pg = _decide(gid, group)
        if problem is not None:
            name = f"box-{numbered + len(crops) + 1:04d}.png"
            xs = [g[1]["x"] for g in group if g[0] is pg]  # its boxes on that page
            ys = [g[1]["y"] for g in group if g[0] is pg]
            aligned = pg.aligned()
            rect = aligned.pixel_box(min(xs), min(ys), max(xs) + box_mm, max(ys) + box_mm, 3.0)
            crops[name] = crop_png(aligned.image, rect)
            problem = replace(problem, crop=name)
        kind = "mark" if is_mark else "value"
        allowed = tuple(b["mark"] if is_mark else b["option"] for _, b, _ in group)
        # for a person to settle: graded as still to mark, not blank
        entry, shown_value = ("mark", PENDING) if problem is not None else (kind, value or "")
        out.append(ScannedAnswer(sid, question, answer, entry, shown_value, kind, allowed, problem))
    # the parts of a scanned sheet whose boxes are all on a missing page: nobody has seen
    # them, so each is a mark still to give (its page is listed as missing-page)
    scanned = {s for s, _ in found.seen}
    lost = sorted((k, p) for k in scanned for p in sheets[k] if (k, p) not in found.seen)
    unseen: dict[str, tuple[str, str, str, str, list[str]]] = {}
    for s, p in lost:
        sid = key_sheets[s].id
        for box in sheets[s][p]:
            gid = f"{sid}/{box['question']}/{box['answer']}"
            if (s, box["question"], box["answer"]) in readings:
                continue
            if gid not in unseen:
                kind = "mark" if "mark" in box else "value"
                unseen[gid] = (sid, box["question"], box["answer"], kind, [])
            unseen[gid][4].append(box["mark"] if "mark" in box else box["option"])
    for sid, question, answer, kind, offered in unseen.values():
        out.append(
            ScannedAnswer(sid, question, answer, "mark", PENDING, kind, tuple(offered), None)
        )
    return BoxAnswers(tuple(out), crops)


def _decide(
    gid: str, group: list[tuple[Any, dict[str, Any], BoxReading]]
) -> tuple[Issue | None, str | None, Any]:
    """A part's answer from its boxes as read (``group``: page, box, reading): the issue a
    person has to look at (or None), the mark or option its one marked box gives, and the
    page whose boxes the issue's picture shows."""
    marked = [b for _, b, r in group if r.state == "marked"]
    unclear = [(pg, b, r) for pg, b, r in group if r.state == "unclear"]
    is_mark = "mark" in group[0][1]
    pg = group[0][0]
    value: str | None = None
    problem = None
    if unclear:
        problem = Issue(
            "unclear-box",
            gid,
            group[0][1]["where"],
            "; ".join(
                f"{_box_name(b)}: ink {r.ratio:.2f}, spread {r.spread:.2f}" for _, b, r in unclear
            ),
        )
        pg = unclear[0][0]
    elif len(marked) > 1:
        problem = Issue(
            "several-marked",
            gid,
            group[0][1]["where"],
            "marked: " + ", ".join(_box_name(b) for b in marked),
        )
        pg = group[0][0]
    elif marked:
        value = marked[0]["mark"] if is_mark else marked[0]["option"]
    elif any(r.state == "taken-back" for _, _, r in group):
        # a box filled in and nothing else marked: the rule says "taken back", but a
        # student who read "fill in" may have meant it as the answer; a person decides
        problem = Issue(
            "only-taken-back",
            gid,
            group[0][1]["where"],
            "filled in completely (a mark taken back) and nothing else marked: "
            + ", ".join(_box_name(b) for _, b, r in group if r.state == "taken-back"),
        )
        pg = next(g for g, _, r in group if r.state == "taken-back")
    elif is_mark:
        # a score row with no box marked: the TA has not marked this part yet, which is
        # a mark still to give, never a blank answer worth 0
        problem = Issue(
            "unmarked",
            gid,
            group[0][1]["where"],
            "no score box marked: a mark still to give (not a 0)",
        )
        pg = group[0][0]
    return problem, value, pg


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
) -> Settled:
    """Apply the corrections (``fixes``: line, id, value): an answer's value (an option
    letter, points, or ``blank``), or what settled a page's or a student's issue. The
    issues: the pages' first, then the boxes'."""
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
                    value, answer.kind == "mark", list(answer.allowed), str(corrections), line
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


def write(
    setup: ScanSetup, found: Identified, boxes: BoxAnswers, settled: Settled, absent: str
) -> ScanResult:
    """Write responses.csv, issues.csv and the crops, and grade them (``_write``)."""
    rows = [[a.sheet, a.question, a.answer, a.entry, a.value] for a in settled.answers]
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
    )


def _check_value(value: str, is_mark: bool, allowed: list[str], name: str, line: int) -> None:
    """A correction's value must be one the part can take: one of its option letters, or
    points from 0 to the part's (as grade reads a mark)."""
    if is_mark:
        points = max(Fraction(v) for v in allowed)
        try:
            parse_mark(value, points)
        except MarkError as exc:
            raise ScanError(f"value: {exc.message}", file=name, line=line) from None
    elif value.upper() not in {v.upper() for v in allowed}:
        raise ScanError(
            f"value: expected one of the options {', '.join(sorted(allowed))} or blank, "
            f"got {value!r}",
            file=name,
            line=line,
        )


def _is_blank(image: Any) -> bool:
    """True when a page has (almost) no ink: the back of a sheet printed on one side."""
    # the image machinery only when scanning
    from worksheetgen.scan.pages import ink_mask

    return float(ink_mask(image).mean()) < BLANK


# photocopies of a sheet that names no student (a version, a lone sheet) carry one page code
# for all: said beside their duplicates
_SHARED_CODES = (
    "; copies of one printed sheet share its page codes, so a scan reads one copy of each:"
    " to scan a class, build from the roster (--roster) or one version per student (--versions N)"
)


def task_where(task: tuple[str, str, int], labels: dict[str, str]) -> str:
    """Where a page is: its scan's label (:func:`scan_labels`) and page number (``scan.pdf#3``)."""
    return f"{labels[task[0]]}#{task[2] + 1}"


def scan_labels(scans: Sequence[str]) -> dict[str, str]:
    """A name for each scan that does not depend on how its path was spelled: its file name,
    or as many of its last folders as tell it from the other scans' (``day1/copier.pdf``).
    So a page's issue id (``page:copier.pdf#7``) is the same whether the scan was given as
    ``copier.pdf``, ``./copier.pdf`` or its absolute path, and a corrections file keeps
    settling it when ``scan`` is run again from another folder. One file given twice is
    refused: its pages would all be read twice."""
    real: dict[str, tuple[str, ...]] = {}
    first: dict[tuple[str, ...], str] = {}
    for path in scans:
        parts = real[path] = Path(os.path.realpath(path)).parts
        if parts in first:
            raise ScanError(
                f"expected each scan once, got this file twice (also as {first[parts]})",
                file=path,
            )
        first[parts] = path
    labels = {}
    for path, parts in real.items():
        depth = 1
        while depth < len(parts) and any(
            other != parts and other[-depth:] == parts[-depth:] for other in real.values()
        ):
            depth += 1
        # as the text rule shows it (an ESC, a BEL or a bidi override in a file name reaches
        # issues.csv, report.md and the terminal escaped); a corrections file names it so
        labels[path] = shown("/".join(parts[-depth:]))
    return labels


def _assignments(
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


def _read_as(
    task: tuple[str, str, int], sheet: int, page: int, build: int, context: _ReadContext
) -> _PageRead:
    """Read a page a person named (its code did not read) as ``sheet``'s ``page``: aligned
    by its corner marks, the way up its code's cells come nearest to what they should be."""
    # the image machinery only when scanning
    import numpy as np

    from worksheetgen.scan.layout import page_cells
    from worksheetgen.scan.pages import BOX_INSET_MM, align_as, box_measures

    path, kind, index = task
    image = load_page(path, kind, context.data[path], index)
    aligned = align_as(image, context.paper, page_cells(build, sheet, page))
    if aligned is None:
        return _PageRead(None)
    boxes = context.sheets[sheet][page]
    if not boxes:
        return _PageRead((build, sheet, page), aligned.homography)
    corners = np.array([[b["x"], b["y"]] for b in boxes]).reshape(-1, 2)
    ratios = box_measures(aligned, corners, context.box_mm, BOX_INSET_MM)
    return _PageRead((build, sheet, page), aligned.homography, ratios)


@dataclass(frozen=True)
class _ReadContext:
    """What reading a page needs: the scans' bytes, the paper, the boxes by sheet and page."""

    data: dict[str, bytes]
    paper: str
    box_mm: float
    sheets: dict[int, dict[int, list[dict[str, Any]]]]


@dataclass(frozen=True)
class _PageRead:
    """What a worker read of one page: its code (build, sheet, page) or None, the
    homography (mm -> pixels) and the ink share in each of its boxes."""

    code: tuple[int, int, int] | None
    homography: Any = None
    ratios: Any = None


_CONTEXT: list[_ReadContext] = []  # the context forked workers inherit


def _read_page(task: tuple[str, str, int], context: _ReadContext | None = None) -> _PageRead:
    """Decode, align and measure one page (in a worker, or here)."""
    # the image machinery only when scanning
    import numpy as np

    from worksheetgen.scan.pages import BOX_INSET_MM, align, box_measures

    ctx = context or _CONTEXT[0]
    path, kind, index = task
    page = align(load_page(path, kind, ctx.data[path], index), ctx.paper)
    if page is None:
        return _PageRead(None)
    code = (page.build, page.sheet, page.page)
    boxes = ctx.sheets.get(page.sheet, {}).get(page.page)
    if not boxes:
        return _PageRead(code, page.homography)
    corners = np.array([[b["x"], b["y"]] for b in boxes]).reshape(-1, 2)
    return _PageRead(code, page.homography, box_measures(page, corners, ctx.box_mm, BOX_INSET_MM))


def _read_all(
    context: _ReadContext, tasks: list[tuple[str, str, int]], jobs: int
) -> Iterable[_PageRead]:
    """Every page read, in order: by ``jobs`` forked processes (0: one per core), or here."""
    workers = (os.cpu_count() or 1) if jobs == 0 else jobs
    workers = min(workers, max(1, len(tasks) // 2))
    if workers <= 1 or not hasattr(os, "fork"):
        yield from (_read_page(t, context) for t in tasks)
        return
    # forked workers read the pages; the parent only collects what they read (the pool and
    # the worker set-up are loaded only when a scan forks)
    import multiprocessing

    from worksheetgen.speed.workers import worker_signals

    _CONTEXT[:] = [context]
    try:
        # worker_signals: the pool's exit terminates its workers with SIGTERM, which the
        # command line's handler would turn into KeyboardInterrupt inside a worker; one
        # stopped that way while holding the task queue's lock left the other waiting forever
        context_ = multiprocessing.get_context("fork")
        with context_.Pool(workers, initializer=worker_signals) as pool:
            yield from pool.imap(_read_page, tasks, chunksize=2)
    finally:
        _CONTEXT.clear()


class _Found:
    """A page identified by a worker: its sheet and page, and how to see it again (for a
    cropped picture) without keeping its image."""

    def __init__(
        self,
        sheet: int,
        page: int,
        task: tuple[str, str, int],
        homography: Any,
        context: _ReadContext,
    ) -> None:
        self.sheet, self.page, self.task = sheet, page, task
        self.homography, self.context = homography, context

    def aligned(self) -> Any:
        # the image machinery only when scanning
        import numpy as np

        from worksheetgen.scan.pages import Aligned, ink_mask

        path, kind, index = self.task
        image = load_page(path, kind, self.context.data[path], index)
        if image.shape[1] > image.shape[0]:  # as align turned it
            image = np.rot90(image)
        return Aligned(0, self.sheet, self.page, self.homography, ink_mask(image), image)


def load_page(path: str, kind: str, data: bytes, index: int) -> Any:
    """The grey image of page ``index`` of a scan."""
    # the image machinery only when scanning
    from worksheetgen.scan.images import read_page

    return read_page(path, kind, data, index)


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
                boxes.append({**meaning, "id": box.id, "x": box.x, "y": box.y})
    return out


def _box_name(box: dict[str, Any]) -> str:
    """A box as the sheet labels it: "box 2.5" (a score box), "option B"."""
    if "mark" in box:
        return f"box {value_text(Fraction(box['mark']))}"
    return f"option {box['option']}"


def _responses_csv(rows: Iterable[list[str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["student", "question", "answer", "entry", "value", "mark"])
    for sid, question, answer, kind, value in rows:
        if kind == "mark":
            w.writerow([protect(sid), protect(question), protect(answer), "", "", value])
        else:
            w.writerow([protect(sid), protect(question), protect(answer), "", value, ""])
    return buf.getvalue()


def _issues_csv(issues: Sequence[Issue]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["kind", "id", "where", "detail", "crop", "settled"])
    for i in issues:
        crop = f"{CROPS}/{i.crop}" if i.crop else ""
        w.writerow(
            [i.kind, protect(i.id), protect(i.where), protect(i.detail), crop, protect(i.settled)]
        )
    return buf.getvalue()


def _write(
    out: Path,
    key: KeyDoc,
    rows: list[list[str]],
    issues: list[Issue],
    crops: dict[str, bytes],
    n_pages: int,
    identified: int,
    paper: str = "a4",
    default: bool = False,
    absent: str = "blank",
) -> ScanResult:
    """Grade and write the whole set in a staging folder, then replace the previous set with
    it at once (``outset``: never a new report beside the previous run's feedback pages)."""
    with staging(out, default) as stage:
        new = stage / "new"
        new.mkdir()
        run: GradeRun | None = None
        try:
            (new / RESPONSES_FILE).write_bytes(_responses_csv(rows).encode("utf-8"))
            (new / ISSUES_FILE).write_bytes(_issues_csv(issues).encode("utf-8"))
            if crops:
                (new / CROPS).mkdir()
            for name, data in crops.items():
                (new / CROPS / name).write_bytes(data)
            if any(r[4] for r in rows):  # grade refuses a file of blanks
                try:
                    run = grade_files(
                        key.source,
                        new / RESPONSES_FILE,
                        new,
                        paper=paper,
                        label=str(out / RESPONSES_FILE),
                        absent="zero" if absent == "zero" else "blank",
                        key_doc=key,
                    )
                except GradeError as exc:
                    raise ScanError(f"grading the scanned responses: {exc}") from None
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
