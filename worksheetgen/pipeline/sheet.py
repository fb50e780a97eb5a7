"""The orchestrator: banks -> sheets -> documents -> files, written atomically at the end.

A build writes everything into a temporary folder beside its target and moves it into place
only when every step, PDFs included, has succeeded; a failed build leaves earlier output as
it was.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from worksheetgen.bank.load import default_bank_path, load_banks, with_decimals
from worksheetgen.errors import UsageError
from worksheetgen.families import get_family
from worksheetgen.files import (
    check_replaceable,
    failures_as_errors,
    release,
    sweep_stale,
    temp_folder,
)
from worksheetgen.model import Bank, Build, Item, Sheet, Student
from worksheetgen.render.documents import render_document
from worksheetgen.solve.item import build_sheet
from worksheetgen.textrules import problem as text_problem

MAX_SEED = 2**63 - 1


@dataclass(frozen=True)
class BuildOptions:
    """What the user asked for."""

    seed: int
    banks: tuple[str, ...] = ()
    out: str = "output"
    pdf: bool = True
    title: str | None = None
    decimals: int | None = None
    template_dir: str | None = None
    exports: tuple[str, ...] = ()  # LMS formats written beside key.json (moodle, gift, qti)
    roster: str | None = None  # a class roster CSV: one sheet per student
    versions: int | None = None  # or N anonymous versions A, B, C, ...
    jobs: int | None = None  # processes that draw and render a class's sheets (0: one per
    # core; None: chosen for the build, see classbuild.workers_for)


@dataclass(frozen=True)
class BuildResult:
    """Where a build wrote what."""

    folder: Path
    files: tuple[str, ...]
    build: Build = field(repr=False)
    sheet_count: int = 1  # class builds stream their sheets: build.sheets is empty there
    item_count: int | None = None
    details: Any = field(default=None, repr=False)  # a class build's ClassStats
    swept: tuple[Path, ...] = ()  # what killed builds had left, removed before this one


def points_text(points: float) -> str:
    """'1 point', '6 points', '2.5 points'."""
    p = int(points) if float(points).is_integer() else points
    return f"{p} point" if p == 1 else f"{p} points"


def sheet_points(sheet: Sheet) -> str:
    """The total points of a sheet, as printed (a number: "30", "7.5")."""
    total = sum(i.spec.points for i in sheet.items)
    return str(int(total)) if float(total).is_integer() else f"{total:g}"


def sheet_points_text(sheet: Sheet) -> str:
    """The total points of a sheet in words: "30 points", "1 point"."""
    return points_text(sum(i.spec.points for i in sheet.items))


def item_title(item: Item) -> str:
    """The heading of a question: the bank's title or the family's."""

    return item.spec.title or get_family(item.spec.family).title


def opening_lines(item: Item, kind: str = "sheet") -> int:
    """About how many lines a question's opening takes on a sheet or key (``kind``): its
    heading, prompt, the given values, a worked solution shown with it, and its first part
    with the table to fill in (or the answer shown), at least the room a part asks for
    (``\\wspart`` keeps 6 lines). The LaTeX templates keep that much together on a page, so
    a question never starts at the foot of one page and asks its first part on the next."""
    lines = 3 + len(item.prompt) // 95  # heading, space, the prompt's lines
    heights = [g.lines for g in item.solution.shown if g.inline]
    if heights:
        lines += max(heights) + 1
    lines += sum(g.lines for g in item.solution.shown if not g.inline)
    for step in item.solution.shown_steps or ():  # title, display, space
        lines += 2 + max(1, step.math.count(r"\\") + 1 if step.math else 0)
    first = 0
    parts = item.solution.parts
    if parts:
        try:
            answer = item.solution.answer(parts[0].answer)
        except KeyError:
            answer = None
        first = 2  # the part's prompt and space
        if answer is not None and answer.kind == "matrix" and isinstance(answer.rounded, list):
            # a table to fill in (rows of blanks), or the key's matrix
            first += (2 if kind == "sheet" else 1) * len(answer.rounded) + 1
        elif answer is not None and answer.kind == "vector":
            first += 3
    return min(lines + max(first, 6), 40)


def check_seed(seed: int) -> int:
    """A seed must be a non-negative integer that fits in 63 bits."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise UsageError(f"--seed: expected a non-negative integer, got {seed!r}")
    return seed


def load_bank(options: BuildOptions) -> Bank:
    """The banks named in the options (or the bundled default), with CLI overrides applied."""
    bank = load_banks(options.banks or [default_bank_path()])
    info = bank.info
    if options.title:
        bad = text_problem(options.title)
        if bad:
            raise UsageError(f"--title: {bad}")
        if len(options.title) > 4000:  # as a bank's title
            raise UsageError(f"--title: expected at most 4000 characters, got {len(options.title)}")
        info = replace(info, title=options.title)
    questions = bank.questions
    if options.decimals is not None:
        questions = tuple(replace(q, decimals=options.decimals) for q in questions)
        info = with_decimals(info, options.decimals)
    return replace(bank, info=info, questions=questions)


def make_build(
    bank: Bank, seed: int, sheets: Sequence[tuple[str, str, Student | None]] | None = None
) -> Build:
    """Draw and solve every sheet: (sheet id, label, student) for each, default one sheet."""

    wanted = sheets or [(bank.info.slug, "Worksheet", None)]
    return Build(
        info=bank.info,
        seed=seed,
        bank=bank,
        sheets=tuple(
            build_sheet(bank.questions, seed, sid, label, student) for sid, label, student in wanted
        ),
    )


def display_kinds(build: Build, sheets: Sequence[Sheet]) -> list[str]:
    """The display kinds a document may show (sorted): those the bank's families declare,
    so a class build's preamble, rendered before any sheet is drawn, loads what they need,
    and those the given sheets show."""
    kinds = {k for q in build.bank.questions for k in get_family(q.family).display_kinds}
    kinds.update(g.kind for sheet in sheets for item in sheet.items for g in item.solution.shown)
    return sorted(kinds)


def document_context(build: Build, sheets: Sequence[Sheet] | None = None) -> dict[str, Any]:
    """What every document template sees."""

    def kinds(shown: Sequence[Sheet]) -> list[str]:
        return display_kinds(build, shown)

    return {
        "build": build,
        "display_kinds": kinds,
        "sheets": list(sheets if sheets is not None else build.sheets),
        "points_text": points_text,
        "sheet_points": sheet_points,
        "sheet_points_text": sheet_points_text,
        "item_title": item_title,
        "opening_lines": opening_lines,
    }


def render_all(build: Build, template_dir: str | None = None) -> dict[str, str]:
    """Sheet and key, as LaTeX and Markdown, from the one Build."""
    ctx = document_context(build)
    return {
        f"{kind}{ext}": render_document(fmt, kind, ctx, template_dir)
        for kind in ("sheet", "key")
        for fmt, ext in (("latex", ".tex"), ("markdown", ".md"))
    }


def folder_name(build: Build) -> str:
    """The output folder of a build: the sheet's slug and the seed."""
    return f"{build.info.slug}-seed{build.seed}"


def check_out(out: str | Path) -> None:
    """Refuse an ``--out`` that cannot hold build folders, before any work is done: a file,
    a path through a file, or a folder (or its nearest existing parent) we cannot write."""
    path = Path(out)
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        what = (
            f"the file {path}"
            if existing == path
            else f"{path}, a path through the file {existing}"
        )
        raise UsageError(f"expected a folder to write builds into, got {what}", field="--out")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(
            f"expected a folder we can write to, got {existing} (permission denied)", field="--out"
        )
    # a symlink to nothing on the way (the folder itself or a parent) is refused now, not
    # after all the work
    check_replaceable(path, folder=True, what="a folder to write builds into")


def check_target(target: Path) -> None:
    """Refuse a build folder that is not ours to replace (a file, a device, a symlink to
    nothing, ...) before any drawing or TeX work is done."""
    check_replaceable(target, folder=True)


def sweep_leftovers(out: str | Path, pdf: bool) -> tuple[Path, ...]:
    """Remove what builds killed with ``kill -9`` left: their temporary folders in ``out``
    and (``pdf``) their TeX working folders in TMPDIR (see outfiles.sweep_stale)."""
    swept = sweep_stale(out)
    if pdf:
        swept += sweep_stale(tempfile.gettempdir(), tmpdir=True)
    return tuple(swept)


def staging_folder(target: Path) -> Path:
    """A new empty temporary sibling of ``target`` to write a build into, readable as any
    new folder is, named by our pid and locked while the build runs (so that the next build
    can tell it from a killed build's leftover: outfiles.sweep_stale)."""
    check_target(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        return temp_folder(target.parent, target.name)
    except OSError as exc:
        raise UsageError(
            f"expected a folder to write builds into, got {target.parent} ({exc.strerror or exc})",
            field="--out",
        ) from None


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C until the block is done (main thread only), then raise it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(
            signal.SIGINT, previous if previous is not None else signal.default_int_handler
        )
    if held:
        raise KeyboardInterrupt


def swap_into_place(tmp: Path, target: Path) -> None:
    """Move the finished folder ``tmp`` to ``target``, replacing an earlier build only now.

    Ctrl-C is held during the two renames, so the target is always the old build or the new
    one, never missing.
    """
    with interrupts_held():
        check_target(target)  # still so, after all the work
        old = None
        if target.exists():
            old = temp_folder(target.parent, target.name, "old")
            os.replace(target, old / "previous")
        try:
            os.replace(tmp, target)
        except BaseException:
            if old is not None:
                os.replace(old / "previous", target)
                old.rmdir()
                release(old)
            raise
        release(tmp)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
            release(old)


def write_atomically(target: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` into a temporary sibling of ``target``, then swap it into place; a
    full disk is one line (outfiles.write_failure), with the temporary folder removed."""
    tmp = staging_folder(target)
    try:
        with failures_as_errors(target, rename=(tmp, target)):
            for name, data in files.items():
                path = tmp / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            swap_into_place(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        release(tmp)
