"""``scan``'s pages: every scan checked and counted before any is read (``read_pages``),
then each page decoded, aligned and measured (in forked workers, or here) and identified by
its page code, or as the sheet and page a correction names (``identify``); pages scanned
twice, unidentified, blank or missing, and students none of whose pages was scanned, are
issues."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worksheetgen.errors import ScanError
from worksheetgen.keyjson.records import KeySheet
from worksheetgen.language import gettext
from worksheetgen.scan.issues import Issue
from worksheetgen.scan.setup import ISSUES_FILE, ScanSetup
from worksheetgen.textrules import shown

if TYPE_CHECKING:  # the image machinery is loaded only when scanning
    from worksheetgen.scan.images import ScanFile

#: the most pages one run reads: this many for each page the build printed (both sides of
#: every sheet, scanned twice over), and at least MIN_SCAN_PAGES
PAGES_PER_PRINTED = 4


MIN_SCAN_PAGES = 100


Task = tuple[str, str, int]  # a page: its scan's path, the scan's kind and the page's index


@dataclass(frozen=True)
class ScanPages:
    """Every page of the scans, checked and counted, not yet decoded: each scan's label
    (``scan_labels``) and file, and the pages in order. No scan is held: each page is
    decoded from its file when needed, which must be the file checked (``ScanFile``)."""

    labels: dict[str, str]
    files: dict[str, ScanFile]
    tasks: tuple[Task, ...]


def read_pages(scans: Sequence[str], setup: ScanSetup) -> ScanPages:
    """Check every scan before any is read (its kind, size and page count), at most
    PAGES_PER_PRINTED pages for each page the build printed (at least MIN_SCAN_PAGES)."""
    # the image machinery only when scanning
    from worksheetgen.scan.images import check_scan, page_count

    labels = scan_labels(scans)
    tasks: list[Task] = []
    files: dict[str, ScanFile] = {}
    # the most pages a run reads: PAGES_PER_PRINTED for each page the build printed, counted
    # (and every page's size checked) before any page is decoded
    printed = sum(len(s.pages) for s in setup.positions.sheets)
    most = max(MIN_SCAN_PAGES, PAGES_PER_PRINTED * printed)
    for path in scans:  # every scan checked before any is read
        # only the file's kind, size and page count: a page is read from it when decoded
        kind, files[path] = check_scan(path)
        count = page_count(path, kind, files[path], most - len(tasks))
        if len(tasks) + count > most:
            raise ScanError(
                f"expected at most {most:,} pages in all ({PAGES_PER_PRINTED} for each of the "
                f"{printed:,} pages the build printed, or {MIN_SCAN_PAGES}), got "
                f"{len(tasks) + count:,} with this scan's {count:,}",
                file=path,
            )
        tasks += [(path, kind, i) for i in range(count)]
    return ScanPages(labels, files, tuple(tasks))


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
    copies: bool = False,
) -> Identified:
    """Decode, align and measure every page (by ``jobs`` processes), identify it by its code
    (or, named by a correction, ``assigned``, as the sheet and page a person said), and list
    what is not a page to read: twice, unidentified, blank; then the pages missing of the
    sheets scanned and the students none of whose pages was (absent). ``copies``: a class
    photocopied from one printed sheet (``scan --roster``): every copy of a page is read, in
    the pile's order (``found``), and ``studentnumber`` tells the copies apart, so no page is
    a duplicate nor missing here."""
    # the image machinery only when scanning
    from worksheetgen.scan.images import crop_png

    key_sheets, sheets, fields = setup.key.sheets, setup.sheets, setup.fields
    labels = pages.labels
    issues: list[Issue] = []
    crops: dict[str, bytes] = {}
    seen: dict[tuple[int, int], str] = {}
    found: list[FoundPage] = []
    n_pages = identified = 0
    context = _ReadContext(pages.files, setup.paper, setup.box_mm, sheets)
    unread: dict[str, Task] = {}  # unidentified pages' tasks, by issue id

    def take(page: _Found, ratios: Any, where: str) -> None:
        seen[(page.sheet, page.page)] = where
        found.append(FoundPage(page, ratios, where))

    for task, read in zip(pages.tasks, _read_all(context, list(pages.tasks), jobs), strict=True):
        n_pages += 1
        path, kind, index = task
        where = task_where(task, labels)
        other = read.code is not None and (
            read.code[1] >= len(fields) or read.code[0] != fields[read.code[1]]
        )
        if other or read.code is None or read.code[1] not in sheets:
            name = f"page-{len(crops) + 1:03d}.png"
            image = load_page(path, kind, pages.files[path], index)
            small = image[::4, ::4]
            crops[name] = crop_png(small, (0, 0, small.shape[1], small.shape[0]))
            if other:  # never read as this class's, nor named as one of its pages
                issues.append(
                    Issue(
                        "other-class-page",
                        f"page:{where}",
                        where,
                        gettext(
                            "its page code names another class (another build: other "
                            "students, questions or order): not read against this key"
                        ),
                        name,
                    )
                )
                continue
            unread[f"page:{where}"] = task
            if _is_blank(image, setup.paper):  # a sheet's blank back, or a page to even the count
                issues.append(
                    Issue(
                        "blank-page",
                        f"page:{where}",
                        where,
                        gettext(
                            "no print (at most dust, specks, a scanner's edge or dithering): "
                            "nothing to read"
                        ),
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
                    gettext("no corner marks or page code read"),
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
                    gettext(
                        "its code names page {page} of sheet {sheet}, which has no such page",
                        page=page.page,
                        sheet=sid,
                    ),
                )
            )
            continue
        identified += 1
        first = seen.get((page.sheet, page.page))
        if first is not None and copies:  # another copy's page: studentnumber groups them
            found.append(FoundPage(page, read.ratios, where))
            continue
        if first is not None:
            issues.append(
                Issue(
                    "duplicate-page",
                    f"page:{where}",
                    where,
                    _again(setup, sid, page.page, first, key_sheets[page.sheet].student is None),
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
        if (s, p) in seen and not copies:
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
    if not copies:  # a photocopied class's missing pages are each copy's (studentnumber)
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
                        gettext("page {page} was not scanned", page=p),
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
                    gettext(
                        "no page of this student's sheet was scanned: absent, or the pages "
                        "are still to scan (no responses, not zeros)"
                    ),
                )
            )
    return issues


def _again(setup: ScanSetup, sid: str, page: int, first: str, shared: bool) -> str:
    """What a duplicate page says; for a sheet that names no student (a version, a lone sheet),
    whose photocopies carry one page code for all, how to scan a class."""
    if not shared:
        return gettext(
            "sheet {sheet} page {page} again (first: {first}); this one is not read",
            sheet=sid,
            page=page,
            first=first,
        )
    if setup.positions.student_number:  # its copies carry the student-number grid
        return gettext(
            "sheet {sheet} page {page} again (first: {first}); this one is not read; copies of "
            "one printed sheet share its page codes: this sheet has a student-number grid, so "
            "scan with --roster to read each copy as its student's",
            sheet=sid,
            page=page,
            first=first,
        )
    return gettext(
        "sheet {sheet} page {page} again (first: {first}); this one is not read; copies of one "
        "printed sheet share its page codes, so a scan reads one copy of each: to scan a "
        "class, build from the roster (--roster) or one version per student (--versions N)",
        sheet=sid,
        page=page,
        first=first,
    )


def _is_blank(image: Any, paper: str) -> bool:
    """True when a page has no print: the back of a sheet printed on one side."""
    # the image machinery only when scanning
    from worksheetgen.scan.pages import is_blank

    return is_blank(image, paper)


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
    image = load_page(path, kind, context.files[path], index)
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
    """What reading a page needs: the scans' files, the paper, the boxes by sheet and page."""

    files: dict[str, ScanFile]
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
    page = align(load_page(path, kind, ctx.files[path], index), ctx.paper)
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
        image = load_page(path, kind, self.context.files[path], index)
        if image.shape[1] > image.shape[0]:  # as align turned it
            image = np.rot90(image)
        return Aligned(0, self.sheet, self.page, self.homography, ink_mask(image), image)


def load_page(path: str, kind: str, source: ScanFile | bytes, index: int) -> Any:
    """The grey image of page ``index`` of a scan (its file, or its bytes)."""
    # the image machinery only when scanning
    from worksheetgen.scan.images import read_page

    return read_page(path, kind, source, index)
