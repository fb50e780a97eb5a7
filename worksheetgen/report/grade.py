"""What grading writes: scores.csv and report.md, both atomically, only after all succeeded.

``scores_csv`` is one row per student (spreadsheet-safe cells, ``csvcells.protect``);
``report_md`` is the class summary, the slips seen and each student's parts with their
diagnoses, every name escaped as the sheets escape it (``render.escape_md_inline``), so a
student's ``$x$`` prints as written. ``grade_files`` runs the whole command: read the key
and the responses, grade, then write both files; ``grade_rows`` does the same for responses
given as records (``scan``'s).
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
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
from worksheetgen.grading.responses import (
    ResponseRow,
    Responses,
    header_row,
    parse_responses,
    read_text,
    responses_of_rows,
    shorten,
)
from worksheetgen.grading.score import Absent, GradeResult, PartResult, QuestionResult, grade
from worksheetgen.grading.spreadsheet import is_spreadsheet, read_rows
from worksheetgen.grading.visible import visible
from worksheetgen.keyjson.read import ExpectedSecret
from worksheetgen.keyjson.read import load_key as read_key
from worksheetgen.keyjson.records import KeyDoc
from worksheetgen.language import decimal, gettext, ngettext, using
from worksheetgen.render.markup import escape_md_inline, markup_md_inline
from worksheetgen.report.analysis import points_shown, points_text, points_words

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


def _students(n: int) -> str:
    return ngettext("{n} student", "{n} students", n)


def _names(names: Sequence[str]) -> str:
    """'scaled', 'A and V', 'Q, K and V'."""
    if len(names) == 1:
        return names[0]
    return gettext("{first} and {last}", first=", ".join(names[:-1]), last=names[-1])


def _scored(p: PartResult) -> str:
    return gettext(
        "{earned}/{possible}", earned=points_shown(p.earned), possible=points_shown(p.possible)
    )


def _part_line(p: PartResult) -> str:
    head = f"- {p.part} {_code(p.answer)}: "
    status = p.status
    if p.pending:  # a mark still to give ("?"; scan: boxes a person has to look at)
        return head + gettext(
            "to mark by hand ({points}): not marked yet.", points=points_words(p.possible)
        )
    if status == "ungraded":
        wrote = _md(shorten(p.response, 200)) if p.response else gettext("(blank)")
        return head + gettext(
            "free text, to grade by hand ({points}). Wrote: {wrote}. Model answer: {model}",
            points=points_words(p.possible),
            wrote=wrote.rstrip("."),
            model=_md(shorten(p.model, 200)),
        )
    if status == "marked":
        return head + gettext("marked by hand ({score}).", score=_scored(p))
    if status == "blank":
        text = gettext("blank ({score})", score=_scored(p))
    elif status == "right":
        text = gettext("right ({score})", score=_scored(p))
    elif status == "carried":
        text = gettext(
            "credit carried forward from your {names} ({score})",
            names=_names(list(p.carried_from)),
            score=_scored(p),
        )
    elif status == "partial":
        right = p.right + p.carried
        # (a part of one entry is partly right only when it is a mark-all part's options)
        if p.carried:
            text = ngettext(
                "partly right ({right} of {total} entries), {n} carried forward from your "
                "{names} ({score})",
                "partly right ({right} of {total} entries), {n} carried forward from your "
                "{names} ({score})",
                p.carried,
                right=right,
                total=p.total,
                names=_names(list(p.carried_from)),
                score=_scored(p),
            )
        elif p.total == 1:  # a mark-all part: some of its options right
            text = gettext("partly right ({score})", score=_scored(p))
        else:
            text = ngettext(
                "partly right ({right} of {n} entries) ({score})",
                "partly right ({right} of {n} entries) ({score})",
                p.total,
                right=right,
                score=_scored(p),
            )
    else:
        text = gettext("wrong ({score})", score=_scored(p))
    line = head + text
    if p.slips:
        named = "; ".join(
            f"**{_md(s.misconception)}**"
            + (f" ({_math_md(s.description.rstrip('.'))})" if s.description else "")
            for s in p.slips
        )
        line += gettext(". Reproduced by {slips}", slips=named)
    elif status in ("partial", "wrong") and p.kind != "choice":
        # (a pick-one answer names its slip when an option is one: else there is none to name)
        line += gettext(". No slip in the misconception library reproduces it")
    if p.wrong:
        shown = "; ".join(
            (f"({w.entry}) " if w.entry else "")
            + gettext("wrote {wrote}, key {key}", wrote=_md(w.wrote), key=_math_md(w.expected))
            for w in p.wrong[:12]
        )
        if len(p.wrong) > 12:
            shown = gettext("{shown}; and {n} more", shown=shown, n=len(p.wrong) - 12)
        line += gettext(". Not credited: {shown}", shown=shown)
    return line + "."


def _carry_lines(result: GradeResult) -> list[str]:
    """What carried credit did: the switch, and the students whose score it changed (an LMS,
    which marks each answer against the key alone, gives them the lower mark)."""
    if result.carry == "off":
        return [
            gettext("Carried credit: off (grade --no-carry): each answer marked against the key.")
        ]
    differ = [s for s in result.students if s.without_carry is not None]
    if not differ:
        return []
    listed = ", ".join(
        gettext(
            "{student} {earned} (without: {plain})",
            student=s.student,
            earned=points_shown(s.earned),
            plain=points_shown(plain),
        )
        for s in differ
        if (plain := s.without_carry) is not None
    )
    return [
        ngettext(
            "Carried credit changes the score of {n} student (an LMS, which credits no "
            "carried step, gives the lower one): {listed}.",
            "Carried credit changes the score of {n} students (an LMS, which credits no "
            "carried step, gives the lower one): {listed}.",
            len(differ),
            listed=_md(listed),
        )
    ]


def report_md(result: GradeResult) -> str:
    """A Markdown report: class summary, slips seen, and each student's parts with diagnoses."""
    key = result.key
    title = _math_md(key.title) if key.title else gettext("worksheet")
    out = [gettext("# Grading report: {title}", title=title), ""]
    class_size = _students(len(result.students))
    if key.seed is not None:
        out.append(
            gettext(
                "Key: {key} (seed {seed}). Responses: {responses}. {students}.",
                key=_code(key.path),
                seed=key.seed,
                responses=_code(result.responses),
                students=class_size,
            )
        )
    else:
        out.append(
            gettext(
                "Key: {key}. Responses: {responses}. {students}.",
                key=_code(key.path),
                responses=_code(result.responses),
                students=class_size,
            )
        )
    graded = [s for s in result.students if s.responded]
    if graded:
        mean = sum((s.earned for s in graded), Fraction(0)) / len(graded)
        top = max(s.possible for s in graded)
        marked = [s.earned / s.marked_possible for s in graded if s.marked_possible]
        if any(s.ungraded for s in graded) and marked:
            # as the class report: each student's share of the points marked so far
            share = 100 * float(sum(marked, Fraction(0)) / len(marked))
            line = ngettext(
                "Mean score of the {n} student with responses: {mean} of {top} so far: "
                "{share} of the points marked (the parts still to be marked by hand are "
                "left out, not counted as 0).",
                "Mean score of the {n} students with responses: {mean} of {top} so far: "
                "{share} of the points marked (the parts still to be marked by hand are "
                "left out, not counted as 0).",
                len(graded),
                mean=points_shown(mean),
                top=points_shown(top),
                share=decimal(f"{share:.1f} %"),
            )
        else:
            line = ngettext(
                "Mean score of the {n} student with responses: {mean} of {top}.",
                "Mean score of the {n} students with responses: {mean} of {top}.",
                len(graded),
                mean=points_shown(mean),
                top=points_shown(top),
            )
        out.append(line)
    missing = [s.student for s in result.students if not s.responded]
    if missing:
        if result.absent == "zero":
            out.append(
                gettext(
                    "No responses from: {students}; counted as 0 (--absent zero).",
                    students=_md(", ".join(missing)),
                )
            )
        else:
            out.append(
                gettext(
                    "No responses from: {students}; no total in scores.csv (--absent zero "
                    "gives them 0).",
                    students=_md(", ".join(missing)),
                )
            )
    if result.in_progress:
        out.append(
            gettext(
                "In progress, not graded (attempt not submitted): {students}.",
                students=_md(", ".join(result.in_progress)),
            )
        )
    if result.attempts:
        out.append(
            gettext("Several attempts: {attempts}.", attempts=_md("; ".join(result.attempts)))
        )
    if result.tries_note:
        out.append(_md(result.tries_note))
    out += _carry_lines(result)
    if result.unreadable:
        out.append(
            ngettext(
                "Unreadable, graded as wrong (grade --lenient): {n} value:",
                "Unreadable, graded as wrong (grade --lenient): {n} values:",
                len(result.unreadable),
            )
        )
        out += ["", *(f"- {_code(line)}" for line in result.unreadable), ""]
    if result.against_pool:
        out.append(
            gettext(
                "Not graded, dealt against the bank's pool rule (the LMS drew two versions of "
                "one question, which no printed sheet has; grade these from a responses CSV: "
                "grade --template): {attempts}.",
                attempts=_md(" / ".join(result.against_pool)),
            )
        )
    out += ["", gettext("## Slips seen"), ""]
    counts = result.slip_counts()
    if counts:
        out += [
            gettext("| misconception | what it is | answers | students |"),
            "|---|---|---:|---:|",
        ]
        out += [
            f"| {_md(s.misconception)} | {_math_md(s.description)} | {n} | {k} |"
            for s, n, k in counts
        ]
    else:
        out.append(
            gettext("No wrong answer was reproduced by a slip in the misconception library.")
        )
    for s in result.students:
        who = _md(s.student)
        if s.name and s.name != s.student:
            who = gettext("{student} ({name})", student=who, name=_md(s.name))
        if result.has_sheet_column:
            who = gettext("{student}, sheet {sheet}", student=who, sheet=_md(s.sheet))
        if not result.has_total(s):
            score = gettext(
                "no responses, no total (of {possible})", possible=points_shown(s.possible)
            )
        elif s.ungraded:
            score = gettext(
                "{earned} / {possible} (+ {ungraded} to grade by hand)",
                earned=points_shown(s.earned),
                possible=points_shown(s.possible),
                ungraded=points_shown(s.ungraded),
            )
        else:
            score = f"{points_shown(s.earned)} / {points_shown(s.possible)}"
        out += ["", f"## {who}: {score}", ""]
        if s.without_carry is not None:
            out += [
                gettext(
                    "Without carried credit (what an LMS gives): {earned} / {possible}.",
                    earned=points_shown(s.without_carry),
                    possible=points_shown(s.possible),
                ),
                "",
            ]
        if not s.responded:
            out.append(gettext("No responses."))
            continue
        for q in s.questions:
            out.append(_question_line(q))
            out.append("")
            out += [_part_line(p) for p in q.parts]
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _question_line(q: QuestionResult) -> str:
    """A question's heading in the report: its number, title, id (and version), score."""
    values = {
        "number": q.number,
        "title": _math_md(q.title),
        "id": _code(q.id),
        "earned": points_shown(q.earned),
        "possible": points_shown(q.possible),
    }
    if q.version:
        line = gettext(
            "### Question {number}: {title} ({id}, version {version}), {earned} / {possible}",
            version=_md(q.version),
            **values,
        )
    else:
        line = gettext("### Question {number}: {title} ({id}), {earned} / {possible}", **values)
    if q.without_carry is not None:
        line += gettext(" (without carried credit: {points})", points=points_shown(q.without_carry))
    return line + _tries_text(q)


def _tries_text(q: QuestionResult) -> str:
    """What the question line says of an adaptive quiz's tries and penalty, or of an average
    of attempts."""
    if q.averaged is not None:
        return gettext(" (the mean of the attempts; the parts below: the last attempt's)")
    if q.tries is None:
        return ""
    counted, made = q.tries
    if counted == 1:
        return gettext(" (the first of {made} tries counts)", made=made)
    return ngettext(
        " (try {counted} of {made} tries counts, less {penalty} for {n} wrong try)",
        " (try {counted} of {made} tries counts, less {penalty} for {n} wrong tries)",
        counted - 1,
        counted=counted,
        made=made,
        penalty=points_shown(q.penalty),
    )


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
    names: Mapping[str, str] | None = None,
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
    ``names``: the name to show for a student of the responses' student column (``scan
    --roster``: the roster's names of the students a photocopied sheet was matched to),
    instead of their sheet's.

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
    with using(doc.language, doc.decimal):  # the reports speak as the key's sheets spoke
        return _grade(
            doc,
            responses_path,
            out,
            tries,
            attempts,
            carry,
            lenient,
            pictures,
            paper,
            label,
            absent,
            penalty,
            unanswered,
            names,
            scans,
        )


def _grade(
    doc: KeyDoc,
    responses_path: str | os.PathLike[str],
    out: Path,
    tries: Tries,
    attempts: Attempts,
    carry: bool | None,
    lenient: bool,
    pictures: bool,
    paper: str,
    label: str | None,
    absent: Absent,
    penalty: Fraction | None,
    unanswered: bool,
    names: Mapping[str, str] | None,
    scans: Mapping[str, Sequence[tuple[bytes, int, int]]] | None,
) -> GradeRun:
    """``grade_files``'s work once its key is read, in the key's language."""
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
    return _graded(key, responses, carry, absent, out, pictures, paper, names, scans)


def grade_rows(
    key_doc: KeyDoc,
    rows: Iterable[ResponseRow],
    out_dir: str | os.PathLike[str],
    label: str,
    paper: str = "a4",
    absent: Absent = "blank",
    unanswered: bool = False,
    names: Mapping[str, str] | None = None,
    scans: Mapping[str, Sequence[tuple[bytes, int, int]]] | None = None,
) -> GradeRun:
    """``grade_files`` for responses given as records (``scan``'s rows, the ones it writes
    to responses.csv, handed over without reading the file back): the same checks, grading
    and outputs as for those rows read from a responses CSV that ``label`` names, against
    the key as its reader gave it (``key_doc``). Rows with a sheet (``ResponseRow.sheet``: a
    photocopied class's) are read as a CSV with a ``sheet`` column; ``names`` and
    ``scans`` as for ``grade_files``."""
    if paper not in ("a4", "letter"):
        raise GradeError(f"expected a4 or letter, got {paper!r}", field="paper")
    out = Path(out_dir)
    for name in (SCORES_FILE, REPORT_FILE):
        check_replaceable(out / name)  # before any work
    key = grade_key(key_doc)
    rows = list(rows)
    by_sheet = any(row.sheet for row in rows)
    with using(key_doc.language, key_doc.decimal):  # as the key's sheets spoke
        responses = responses_of_rows(rows, key, label, unanswered, by_sheet)
        return _graded(key, responses, None, absent, out, True, paper, names, scans)


def _graded(
    key: GradeKey,
    responses: Responses,
    carry: bool | None,
    absent: Absent,
    out: Path,
    pictures: bool,
    paper: str,
    names: Mapping[str, str] | None = None,
    scans: Mapping[str, Sequence[tuple[bytes, int, int]]] | None = None,
) -> GradeRun:
    """Grade the responses read, then write every output (``names``: as for
    ``grade_files``)."""
    if absent not in ("blank", "zero"):
        raise GradeError(f"expected blank or zero, got {absent!r}", field="absent")
    # every name and typed string as the text rule shows it, in every output (visible)
    graded = grade(key, responses, carry, absent)
    if names:
        named = (replace(s, name=names.get(s.student, s.name)) for s in graded.students)
        graded = replace(graded, students=tuple(named))
    result = visible(graded)
    return GradeRun(result, tuple(write_outputs(result, out, pictures, paper, scans)))
