"""What grading writes: scores.csv and report.md, both atomically, only after all succeeded.

``scores_csv`` is one row per student (spreadsheet-safe cells, ``csvcells.protect``);
``report_md`` is the class summary, the slips seen and each student's parts with their
diagnoses, every name escaped as the sheets escape it (``render.escape_md_inline``), so a
student's ``$x$`` prints as written. ``grade_files`` runs the whole command: read the key
and the responses, grade, then write both files.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from worksheetgen.errors import GradeError
from worksheetgen.files import check_replaceable, write_failure, write_file
from worksheetgen.grading.csvcells import protect
from worksheetgen.grading.key import GradeKey, grade_key
from worksheetgen.grading.moodle import (
    Attempts,
    Tries,
    is_moodle_responses,
    parse_moodle,
    parse_moodle_rows,
)
from worksheetgen.grading.responses import header_row, parse_responses, read_text, shorten
from worksheetgen.grading.score import Absent, GradeResult, PartResult, QuestionResult, grade
from worksheetgen.grading.spreadsheet import is_spreadsheet, read_rows
from worksheetgen.grading.visible import visible
from worksheetgen.keyjson.read import ExpectedSecret
from worksheetgen.keyjson.read import load_key as read_key
from worksheetgen.keyjson.records import KeyDoc
from worksheetgen.render.markup import escape_md_inline, markup_md_inline
from worksheetgen.report.analysis import points_text, points_words

SCORES_FILE = "scores.csv"
REPORT_FILE = "report.md"


def scores_csv(result: GradeResult) -> str:
    """One row per student: each question's score, the total and the maximum."""
    qids = result.key.question_ids
    ungraded = any(s.ungraded for s in result.students)
    head = (
        ["student"]
        + (["sheet"] if result.has_sheet_column else [])
        + ["name", *(protect(q) for q in qids), "total", "max"]
    )
    if ungraded:
        head.append("ungraded")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(head)
    for s in result.students:
        by_id = {q.id: q for q in s.questions}
        row = [protect(s.student)] + ([protect(s.sheet)] if result.has_sheet_column else [])
        row.append(protect(s.name))
        if not result.has_total(s):  # nothing handed in, nothing marked: no total, not 0
            row += [""] * len(qids) + ["", points_text(s.possible)] + [""] * ungraded
            w.writerow(row)
            continue
        row += [points_text(by_id[q].earned) if q in by_id else "" for q in qids]
        row += [points_text(s.earned), points_text(s.possible)]
        if ungraded:
            row.append(points_text(s.ungraded))
        w.writerow(row)
    return buf.getvalue()


def _md(text: Any) -> str:
    """Text that prints as written in the Markdown report (one line, no markup, no HTML, no
    math): the sheets' own escaping (``render.escape_md_inline``), so a name reads the same
    in sheets.md and report.md."""

    return escape_md_inline(text)


def _math_md(markup: str) -> str:
    """A bank's text (a title, a slip's description: text with ``$…$`` math) in a line of
    the report, its math as the sheets' Markdown prints it (``render.markup_md_inline``)."""
    return markup_md_inline(markup)


def _code(text: Any) -> str:
    """A one-line code span that shows ``text`` as written, whatever backticks it holds."""
    one_line = " ".join(str(text).split())
    run = max((len(m) for m in re.findall(r"`+", one_line)), default=0)
    fence = "`" * (run + 1)
    pad = " " if one_line.startswith("`") or one_line.endswith("`") else ""
    return f"{fence}{pad}{one_line}{pad}{fence}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _names(names: Sequence[str]) -> str:
    """'scaled', 'A and V', 'Q, K and V'."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _part_line(p: PartResult) -> str:
    head = f"- {p.part} {_code(p.answer)}: "
    entries = f"{p.right + p.carried} of {p.total} entries" if p.total > 1 else ""
    status = p.status
    if p.pending:  # a mark still to give ("?"; scan: boxes a person has to look at)
        return head + f"to mark by hand ({points_words(p.possible)}): not marked yet."
    if status == "ungraded":
        wrote = _md(shorten(p.response, 200)) if p.response else "(blank)"
        return (
            head + f"free text, to grade by hand ({points_words(p.possible)}). "
            f"Wrote: {wrote.rstrip('.')}. Model answer: {_md(shorten(p.model, 200))}"
        )
    if status == "marked":
        return head + f"marked by hand ({points_text(p.earned)}/{points_text(p.possible)})."
    if status == "blank":
        text = "blank"
    elif status == "right":
        text = "right"
    elif status == "carried":
        text = f"credit carried forward from your {_names(list(p.carried_from))}"
    elif status == "partial":
        text = f"partly right ({entries})"
        if p.carried:
            text += f", {p.carried} carried forward from your {_names(list(p.carried_from))}"
    else:
        text = "wrong"
    line = head + text + f" ({points_text(p.earned)}/{points_text(p.possible)})"
    if p.slips:
        named = "; ".join(
            f"**{_md(s.misconception)}**"
            + (f" ({_math_md(s.description.rstrip('.'))})" if s.description else "")
            for s in p.slips
        )
        line += f". Reproduced by {named}"
    elif status in ("partial", "wrong") and p.kind != "choice":
        # (a pick-one answer names its slip when an option is one: else there is none to name)
        line += ". No slip in the misconception library reproduces it"
    if p.wrong:
        shown = "; ".join(
            (f"({w.entry}) " if w.entry else "")
            + f"wrote {_md(w.wrote)}, key {_math_md(w.expected)}"
            for w in p.wrong[:12]
        )
        more = f"; and {len(p.wrong) - 12} more" if len(p.wrong) > 12 else ""
        line += f". Not credited: {shown}{more}"
    return line + "."


def _carry_lines(result: GradeResult) -> list[str]:
    """What carried credit did: the switch, and the students whose score it changed (an LMS,
    which marks each answer against the key alone, gives them the lower mark)."""
    if result.carry == "off":
        return ["Carried credit: off (grade --no-carry): each answer marked against the key."]
    differ = [s for s in result.students if s.without_carry is not None]
    if not differ:
        return []
    listed = ", ".join(
        f"{s.student} {points_text(s.earned)} (without: {points_text(plain)})"
        for s in differ
        if (plain := s.without_carry) is not None
    )
    return [
        f"Carried credit changes the score of {_count(len(differ), 'student')} (an LMS, "
        f"which credits no carried step, gives the lower one): {_md(listed)}."
    ]


def report_md(result: GradeResult) -> str:
    """A Markdown report: class summary, slips seen, and each student's parts with diagnoses."""
    key = result.key
    out = [f"# Grading report: {_math_md(key.title or 'worksheet')}", ""]
    seed = f" (seed {key.seed})" if key.seed is not None else ""
    out.append(
        f"Key: {_code(key.path)}{seed}. Responses: {_code(result.responses)}. "
        f"{_count(len(result.students), 'student')}."
    )
    graded = [s for s in result.students if s.responded]
    if graded:
        mean = sum((s.earned for s in graded), Fraction(0)) / len(graded)
        top = max(s.possible for s in graded)
        line = (
            f"Mean score of the {_count(len(graded), 'student')} with responses: "
            f"{points_text(mean)} of {points_text(top)}."
        )
        marked = [s.earned / s.marked_possible for s in graded if s.marked_possible]
        if any(s.ungraded for s in graded) and marked:
            # as the class report: each student's share of the points marked so far
            share = 100 * float(sum(marked, Fraction(0)) / len(marked))
            line = (
                line[:-1] + f" so far: {share:.1f} % of the points marked (the parts still "
                "to be marked by hand are left out, not counted as 0)."
            )
        out.append(line)
    missing = [s.student for s in result.students if not s.responded]
    if missing:
        counted = (
            "counted as 0 (--absent zero)"
            if result.absent == "zero"
            else "no total in scores.csv (--absent zero gives them 0)"
        )
        out.append(f"No responses from: {_md(', '.join(missing))}; {counted}.")
    if result.in_progress:
        out.append(
            f"In progress, not graded (attempt not submitted): "
            f"{_md(', '.join(result.in_progress))}."
        )
    if result.attempts:
        out.append(f"Several attempts: {_md('; '.join(result.attempts))}.")
    if result.tries_note:
        out.append(_md(result.tries_note))
    out += _carry_lines(result)
    if result.unreadable:
        out.append(
            f"Unreadable, graded as wrong (grade --lenient): "
            f"{_count(len(result.unreadable), 'value')}:"
        )
        out += ["", *(f"- {_code(line)}" for line in result.unreadable), ""]
    if result.against_pool:
        out.append(
            "Not graded, dealt against the bank's pool rule (the LMS drew two versions of one "
            "question, which no printed sheet has; grade these from a responses CSV: "
            f"grade --template): {_md(' / '.join(result.against_pool))}."
        )
    out += ["", "## Slips seen", ""]
    counts = result.slip_counts()
    if counts:
        out += ["| misconception | what it is | answers | students |", "|---|---|---:|---:|"]
        out += [
            f"| {_md(s.misconception)} | {_math_md(s.description)} | {n} | {k} |"
            for s, n, k in counts
        ]
    else:
        out.append("No wrong answer was reproduced by a slip in the misconception library.")
    for s in result.students:
        who = _md(s.student) + (f" ({_md(s.name)})" if s.name and s.name != s.student else "")
        if result.has_sheet_column:
            who += f", sheet {_md(s.sheet)}"
        score = f"{points_text(s.earned)} / {points_text(s.possible)}"
        if s.ungraded:
            score += f" (+ {points_text(s.ungraded)} to grade by hand)"
        if not result.has_total(s):
            score = f"no responses, no total (of {points_text(s.possible)})"
        out += ["", f"## {who}: {score}", ""]
        if s.without_carry is not None:
            out += [
                f"Without carried credit (what an LMS gives): {points_text(s.without_carry)} / "
                f"{points_text(s.possible)}.",
                "",
            ]
        if not s.responded:
            out.append("No responses.")
            continue
        for q in s.questions:
            out.append(
                f"### Question {q.number}: {_math_md(q.title)} ({_code(q.id)}"
                + (f", version {_md(q.version)}" if q.version else "")
                + "), "
                f"{points_text(q.earned)} / {points_text(q.possible)}"
                + (
                    f" (without carried credit: {points_text(q.without_carry)})"
                    if q.without_carry is not None
                    else ""
                )
                + _tries_text(q)
            )
            out.append("")
            out += [_part_line(p) for p in q.parts]
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _tries_text(q: QuestionResult) -> str:
    """What the question line says of an adaptive quiz's tries and penalty, or of an average
    of attempts."""
    if q.averaged is not None:
        return " (the mean of the attempts; the parts below: the last attempt's)"
    if q.tries is None:
        return ""
    counted, made = q.tries
    less = f"less {points_text(q.penalty)} for {_count(counted - 1, 'wrong try')}"
    which = "the first" if counted == 1 else f"try {counted}"
    return f" ({which} of {made} tries counts" + (f", {less})" if counted > 1 else ")")


def write_outputs(
    result: GradeResult,
    out_dir: str | os.PathLike[str],
    pictures: bool = True,
    paper: str = "a4",
    scans: Mapping[str, Sequence[tuple[bytes, int, int]]] | None = None,
) -> list[Path]:
    """Write scores.csv, report.md and (``pictures``) the class report and the students'
    feedback pages (on ``paper``, each with the student's ``scans``: JPEG, width, height)
    into ``out_dir``, each file atomically (temp file + rename), all made in memory first
    so that a failure writes none."""
    files = {
        SCORES_FILE: scores_csv(result).encode("utf-8"),
        REPORT_FILE: report_md(result).encode("utf-8"),
    }
    if pictures:
        # imported here, so that --help and builds never load matplotlib
        from worksheetgen.report.classreport import class_report

        files.update(class_report(result, paper, scans))
    out = Path(out_dir)
    for name in files:  # all may be replaced, or none is written
        check_replaceable(out / name)
    try:
        for name, data in files.items():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            write_file(out / name, data)
    except OSError as exc:
        error = write_failure(exc, out)
        if error is None:
            raise
        raise error from None
    return [out / name for name in files if "/" not in name] + sorted(
        {out / name.split("/")[0] for name in files if "/" in name}
    )


@dataclass(frozen=True)
class GradeRun:
    """What ``grade_files`` did: the result and the files it wrote."""

    result: GradeResult
    files: tuple[Path, ...]


#: a responses CSV holds at most LINES_PER_ENTRY lines for each entry and part the key asks
#: for (a row each; a quoted entry may span lines), and MIN_RESPONSE_LINES in any case (as
#: many as a Moodle spreadsheet's rows: a Moodle download has a row per attempt)
LINES_PER_ENTRY = 2
MIN_RESPONSE_LINES = 100_000


def _check_lines(text: str, key: GradeKey, name: str) -> None:
    """Refuse a responses file of more lines than any responses to ``key`` can have,
    from its line count (a million rows were read for a minute before)."""
    lines = text.count("\n") + 1
    if lines <= MIN_RESPONSE_LINES:
        return
    asked = sum(a.n_entries + 1 for s in key.sheets for q in s.questions for a in q.answers)
    most = max(MIN_RESPONSE_LINES, LINES_PER_ENTRY * asked)
    if lines > most:
        raise GradeError(
            f"expected at most {most:,} lines ({LINES_PER_ENTRY} for each entry and part the "
            f"key asks for, at least {MIN_RESPONSE_LINES:,}), got {lines:,}",
            file=name,
        )


def grade_files(
    key_path: str | os.PathLike[str],
    responses_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str] | None = None,
    tries: Tries = "last",
    attempts: Attempts = "highest",
    carry: bool | None = None,
    lenient: bool = False,
    pictures: bool = True,
    paper: str = "a4",
    label: str | None = None,
    absent: Absent = "blank",
    penalty: Fraction | None = None,
    key_doc: KeyDoc | None = None,
    secret: ExpectedSecret | None = None,
    unanswered: bool = False,
    scans: Mapping[str, Sequence[tuple[bytes, int, int]]] | None = None,
) -> GradeRun:
    """Load, validate and grade everything, then (only then) write scores.csv, report.md
    and the class report. ``carry``: credit error carried forward in every question (True),
    in none (False), or as the key says for each (None). ``lenient``: values of our CSV that
    cannot be read are graded as wrong and listed, instead of stopping. ``paper``: the
    feedback pages' paper, a4 or letter (as the build printed). ``label``: what report.md
    and messages call the responses file (default: its path; ``scan`` grades a staged copy
    and names the file it puts in place). ``absent``: a student with no responses gets no
    total and no feedback page ("blank"), or 0 points ("zero"). ``penalty``: a Moodle adaptive
    quiz's penalty per wrong try (None: the one the Moodle export sets). ``key_doc``: the key
    at ``key_path`` as its reader gave it already (``scan`` reads it once), else read here,
    refused if not built with the course secret ``secret`` (when there is one).
    ``unanswered``: a responses CSV with no answer in it is graded (every student without a
    total, as one with no responses; ``scan`` of unmarked pages, which replaces its whole
    set), not refused as a blank template whose grading would replace earlier scores.
    ``scans``: each student's scanned pages as ``scan`` read them (JPEG, width, height), on
    their feedback pages (``scan --feedback-scans``)."""
    if paper not in ("a4", "letter"):
        raise GradeError(f"expected a4 or letter, got {paper!r}", field="paper")
    out = Path(out_dir) if out_dir is not None else Path(responses_path).parent
    responses_file = Path(responses_path)
    for name in (SCORES_FILE, REPORT_FILE):
        target = out / name
        if target.exists() and responses_file.exists() and target.samefile(responses_file):
            raise GradeError(
                f"expected an output folder where {name} is not the responses "
                "file itself, got the same file",
                file=str(out),
                field="--out",
            )
    for name in (SCORES_FILE, REPORT_FILE):
        check_replaceable(out / name)  # before any work
    doc = read_key(key_path, secret) if key_doc is None else key_doc
    key = grade_key(doc)
    name = str(responses_path) if label is None else label
    if is_spreadsheet(responses_path):
        rows = read_rows(responses_path, name)
        if not rows or not is_moodle_responses(rows[0][1]):
            raise GradeError(
                "expected a Moodle Responses report saved as a spreadsheet (our own "
                "responses format is read as CSV), got other columns",
                file=name,
                line=rows[0][0] if rows else 1,
                field="header",
            )
        responses, key = parse_moodle_rows(rows, doc, key, name, tries, attempts, carry, penalty)
    else:
        text = read_text(responses_path, name)
        _check_lines(text, key, name)  # before a row is read
        if is_moodle_responses(header_row(text, name)):
            responses, key = parse_moodle(text, doc, key, name, tries, attempts, carry, penalty)
        else:
            responses = parse_responses(text, key, name, lenient, unanswered)
    if absent not in ("blank", "zero"):
        raise GradeError(f"expected blank or zero, got {absent!r}", field="absent")
    # every name and typed string as the text rule shows it, in every output (visible)
    result = visible(grade(key, responses, carry, absent))
    return GradeRun(result, tuple(write_outputs(result, out, pictures, paper, scans)))
