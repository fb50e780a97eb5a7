"""Read Moodle's own Responses report (its CSV download) as a class's responses.

A quiz built from ``export --to moodle`` has one random question per category: one slot per
key question (two where a question has written parts as well: the graded parts, then an
essay). A pool of pick 2 or more is one slot too, drawing one cloze question per sheet that
holds the sheet's picks in its order (``N. <pool> [<sheet>]``); downloads of quizzes from
older exports have one slot per pick instead, and are read as such (the number of Response
columns tells which). The download does not say which version (A, B, C) each student drew,
so each attempt's slot is matched to the version (a pooled slot: the sheet's picks) whose
values, as Moodle prints them (the exact value at 14 significant digits or, today, the
printed value; ``-inf`` for a masked cell, an option's text), are its Right answer
column. The Response column is then read gap by gap (``part 1: ...; part 2: ...``) into the
same cells our own responses CSV gives, so grading is the same: partial and carried-forward
credit, slip diagnoses, the class table.

An adaptive quiz's "All tries" download has a row per try: each slot gets the mark Moodle's
adaptive mode gives it (``qbehaviour_adaptive``): its best try, less the penalty (the one
the export sets, ``keyjson.lms``, unless told another) for each try before that one, never
below 0. Several attempts of a student count as the quiz's grading method says.

``is_moodle_responses`` tells a Moodle download from our format by its header;
``parse_moodle`` returns the responses and the key the grader uses, one sheet per student
made of the versions that student drew. Every error names the line and column.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Literal

from worksheetgen.errors import GradeError
from worksheetgen.grading.key import GradeKey, QuestionKey, SheetKey, norm_text
from worksheetgen.grading.responses import (
    CHOSEN_SEPARATOR,
    ResponseCell,
    Responses,
    StudentAnswers,
    TryPenalty,
    _parse_number,
    _records,
    _RowError,
    shorten,
)
from worksheetgen.grading.score import grade_question, grade_sheet
from worksheetgen.keyjson.deals import deals
from worksheetgen.keyjson.lms import MOODLE_PENALTY
from worksheetgen.keyjson.records import KeyDoc, KeyQuestion, Variant
from worksheetgen.keyjson.views import gradable_parts, written_parts
from worksheetgen.language import gettext
from worksheetgen.render.markup import markup_lms
from worksheetgen.render.plaintext import plain_text
from worksheetgen.textrules import WORD_JOINER

#: which try of an adaptive quiz counts when the download has one row per try
Tries = Literal["last", "first"]
#: which of a student's finished attempts counts (Moodle's grading methods); "highest" is
#: Moodle's default; "average": the mean of all of them
Attempts = Literal["highest", "average", "first", "last"]

_FIXED = ("last name", "first name", "status")
_IDENTITY = ("id number", "email address")
# ASCII digits only (the one rule for numbers): Python's \d also takes other scripts' digits
_RESPONSE = re.compile(r"^response ([0-9]{1,4})$")
_RIGHT = re.compile(r"^right answer ([0-9]{1,4})$")
_QTEXT = re.compile(r"^question ([0-9]{1,4})$")
_GRADES = re.compile(r"^q\. ?[0-9]{1,4} ?/")
_NONE = "-"  # what Moodle writes for no response, no right answer, not finished
_IN_PROGRESS = "in progress"
_RIGHT_OPTION = (
    'tick "Right answer" in the Responses report\'s "Display options" before downloading'
)


def _cols(record: Sequence[str]) -> list[str]:
    return [c.strip().casefold() for c in record]


def is_moodle_responses(header: Sequence[str]) -> bool:
    """Does this header row come from a Moodle quiz report (Responses or another one)?"""
    cols = _cols(header)
    return ("last name" in cols and "first name" in cols) or _is_statistics(cols)


def _is_statistics(cols: Sequence[str]) -> bool:
    return "quiz name" in cols and "course name" in cols


@dataclass(frozen=True)
class _Gap:
    """One thing a student fills in within a slot: an entry of a numeric answer, an option
    of a pick-one answer, or a multiple-choice item's choice."""

    answer: str
    cell: tuple[int, int]
    value: float | None = None  # numeric: the key's exact value (None: masked)
    printed: str = ""  # numeric: the value the sheet prints (what current exports accept)
    options: dict[str, str] = field(default_factory=dict)  # normalized shown text -> value
    #: what report.md shows for the student's choice, by its normalized shown text: a
    #: multiple-choice item's letter (beside the key's letter), a pick-one option's plain text
    letters: dict[str, str] = field(default_factory=dict)
    right: str | None = None  # options: the normalized text of the right one
    #: a mark-all answer: its right options' normalized shown texts (the response is a set)
    right_set: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Slot:
    """One quiz slot: a key question's graded parts, or its written parts (an essay)."""

    number: int
    question: KeyQuestion
    written: bool
    #: a pool of pick 2 or more dealt as today's exports deal it: per sheet, its picks in the
    #: sheet's order (one cloze question each; empty for any other slot)
    deals: tuple[tuple[Variant, ...], ...] = ()


def _shown_text(text: str) -> str:
    """An option's text as compared: without math delimiters, cloze escapes, spacing and the
    word joiners the Moodle export puts into text its emoticon filter would rewrite."""
    t = text.replace(r"\(", "").replace(r"\)", "").replace(r"\}", "}").replace(r"\#", "#")
    t = t.replace(WORD_JOINER, "")
    return "".join(t.replace("∼", "~").split()).casefold()


def _gaps(v: Variant) -> tuple[list[_Gap], bool]:
    """The gaps of a variant's graded slot in the order Moodle numbers them, and whether the
    slot is a cloze question (``part i: ...``) rather than one numerical or multichoice."""
    parts = gradable_parts(v)
    named = [p.answer.name for p in parts if p.answer is not None]
    gaps: list[_Gap] = []
    for p in parts:
        if p.choices:
            name = p.answer.name if p.answer is not None else (named[0] if named else "")
            options = {_shown_text(c.text): norm_text(c.label) for c in p.choices}
            letters = {_shown_text(c.text): c.label for c in p.choices}
            right = next((_shown_text(c.text) for c in p.choices if c.correct), None)
            gaps.append(_Gap(name, (0, 0), options=options, right=right, letters=letters))
        elif p.kind == "choice" and p.answer is not None:
            a = p.answer
            # the options as the export wrote them (their math as \( … \))
            options = {_shown_text(markup_lms(o)): norm_text(o) for o in a.options}
            right = _shown_text(markup_lms(str(a.value)))
            # report.md shows the option as text, its math as plain Unicode (Moodle's text of
            # it holds the export's \( \) math, which the report would show escaped); not
            # its letter, which versions alike in the download may print differently
            letters = {_shown_text(markup_lms(o)): plain_text(o) for o in a.options}
            right_set = frozenset(_shown_text(markup_lms(o)) for o in a.right) if a.multi else None
            gaps.append(
                _Gap(
                    a.name,
                    (0, 0),
                    options=options,
                    right=None if right_set else right,
                    letters=letters,
                    right_set=right_set or frozenset(),
                )
            )
        elif p.answer is not None:
            for r, row in enumerate(p.answer.rows):
                for c, cell in enumerate(row):
                    gaps.append(_Gap(p.answer.name, (r, c), value=cell.value, printed=cell.printed))
    single = len(parts) == 1 and (bool(parts[0].choices) or parts[0].kind in ("scalar", "choice"))
    return gaps, not single


def _split(text: str, gaps: Sequence[_Gap], cloze: bool) -> list[str] | None:
    """The text of each gap in a cloze response (``part 1: 0.80; part 2: ...``), typed text
    kept as it is; an option's text may hold "; " and ":", so the split that gives a known
    option wins. None when the text is not one entry per gap."""
    if not cloze:
        return [text] if len(gaps) == 1 else None
    out: list[str] = []
    pos = 0
    for i, gap in enumerate(gaps, start=1):
        head = f"part {i}:"
        if not text.startswith(head, pos):
            return None
        pos += len(head)
        if text.startswith(" ", pos):
            pos += 1
        if i == len(gaps):
            out.append(text[pos:])
            return out
        sep = f"; part {i + 1}:"
        ends = [m.start() for m in re.finditer(re.escape(sep), text[pos:])]
        if not ends:
            return None
        end = ends[0]
        if gap.options:
            known = [e for e in ends if _shown_text(text[pos : pos + e]) in gap.options]
            end = known[0] if known else end
        out.append(text[pos : pos + end])
        pos += end + 2
    return out


def _php_number(x: float) -> float:
    """``x`` as Moodle prints it (PHP's 14 significant digits), read back."""
    return float(f"{x:.14g}")


def _printed_number(text: str) -> float | None:
    """A printed key value read back as Moodle stores it (a float: ``0.50`` shows as
    ``0.5``); None for a printed value that is no plain number."""
    try:
        return float(text.strip().replace("\u2212", "-"))
    except ValueError:
        return None


#: how a Right answer column states a numeric gap: the exact value at PHP's 14 digits (the
#: exports before the printed value was the answer) or the printed value (today's exports)
Style = Literal["exact", "printed"]
STYLES: tuple[Style, ...] = ("exact", "printed")


def _is_right_answer(
    texts: Sequence[str], gaps: Sequence[_Gap], style: Style, comma: bool = False
) -> bool:
    """Does a Right answer column's text belong to the version with these gaps, its numbers
    stated in ``style``? (``comma``: a key printed with a decimal comma, whose course Moodle
    shows in a language that writes one: its right answer says ``0,25``.)"""
    for text, gap in zip(texts, gaps, strict=True):
        t = text.strip()
        if gap.right_set:
            if _option_set(gap, t) != gap.right_set:
                return False
        elif gap.options:
            if _shown_text(t) != gap.right:
                return False
        elif gap.value is None:
            if t.casefold() != "-inf":
                return False
        else:
            try:
                x = float(t.replace(",", ".") if comma else t)
            except ValueError:
                return False
            if style == "exact":
                if x != _php_number(gap.value):
                    return False
            elif x != _printed_number(gap.printed):
                return False
    return True


def _slots(doc: KeyDoc, pooled: bool = True) -> list[_Slot]:
    """The quiz's slots as the export makes them: per key question, its graded parts (if
    any version has some; a pool of pick 2 or more: one slot drawing a sheet's picks, or with
    ``pooled`` false, as older exports made it, once per question it picks), then its
    written parts (if any)."""
    out: list[_Slot] = []
    for q in doc.questions:
        if any(gradable_parts(v) for v in q.variants):
            if pooled and q.pick > 1:
                out.append(_Slot(len(out) + 1, q, False, tuple(d.variants for d in deals(doc, q))))
            else:
                for _ in range(q.pick):
                    out.append(_Slot(len(out) + 1, q, False))
        if any(written_parts(v) for v in q.variants):
            out.append(_Slot(len(out) + 1, q, True))
    return out


@dataclass
class _Columns:
    """Where each column of a Responses download is."""

    width: int
    last: int
    first: int
    status: int
    idnumber: int | None
    email: int | None
    response: dict[int, int]
    right: dict[int, int]
    qtext: dict[int, int]
    grade: int | None = None  # "Grade/30.00": Moodle's grade of each attempt


def _columns(record: Sequence[str], name: str, line: int, n_slots: int) -> _Columns:
    cols = _cols(record)

    def err(message: str) -> GradeError:
        return GradeError(message, file=name, line=line, field="header")

    if _is_statistics(cols):
        raise err(
            "expected a Moodle Responses report (Results > Responses, downloaded), "
            "got a Statistics report (columns 'Quiz name', 'Course name', ...)"
        )
    if any(_GRADES.match(c) for c in cols) and not any(_RESPONSE.match(c) for c in cols):
        example = next(c.strip() for c in record if _GRADES.match(c.strip().casefold()))
        raise err(
            "expected a Moodle Responses report (Results > Responses, downloaded), "
            f"got a Grades report (columns like {example!r})"
        )
    missing = [c for c in _FIXED if c not in cols]
    if missing:
        raise err(
            "expected a Moodle Responses report with the columns Last name, First name, "
            f"Status, Response N, got no {', '.join(missing)}"
        )
    response: dict[int, int] = {}
    right: dict[int, int] = {}
    qtext: dict[int, int] = {}
    for i, c in enumerate(cols):
        for pattern, where in ((_RESPONSE, response), (_RIGHT, right), (_QTEXT, qtext)):
            m = pattern.match(c)
            if m:
                where[int(m.group(1))] = i
    if not response:
        raise err(
            "expected the Response N columns of a Moodle Responses report, got none "
            '(tick "Response" in the report\'s "Display options" before downloading)'
        )
    if not right and not qtext:
        raise err(
            "expected the Right answer (or Question text) columns, which say which version "
            f"each student drew, got neither ({_RIGHT_OPTION})"
        )
    slots = sorted(response)
    by, which = (right, "Right answer") if right else (qtext, "Question text")
    if slots != list(range(1, n_slots + 1)) or sorted(by) != slots:
        raise err(
            f"expected the {n_slots} question slots of a quiz from this key "
            f"(Response 1-{n_slots} with {which} 1-{n_slots}), got "
            f"{len(response)} Response and {len(by)} {which} columns "
            "(a quiz from another key?)"
        )
    return _Columns(
        width=len(record),
        last=cols.index("last name"),
        first=cols.index("first name"),
        status=cols.index("status"),
        idnumber=cols.index("id number") if "id number" in cols else None,
        email=cols.index("email address") if "email address" in cols else None,
        response=response,
        right=right,
        qtext=qtext if sorted(qtext) == slots else {},
        grade=next((i for i, c in enumerate(cols) if c.startswith("grade/")), None),
    )


@dataclass
class _Attempt:
    """One attempt: the row of each try, in file order."""

    line: int
    student: str
    name: str
    rows: list[tuple[int, list[str]]]


def _identity(cols: _Columns, record: Sequence[str]) -> str:
    for i in (cols.idnumber, cols.email):
        if i is not None and record[i].strip():
            return record[i].strip()
    return ""


def _attempts(
    records: Iterable[tuple[int, list[str]]], cols: _Columns, name: str
) -> list[_Attempt]:
    """Rows grouped into attempts: a row with the names of the row above and no email is a
    further try of that attempt (Moodle's "all tries" rows)."""
    out: list[_Attempt] = []
    for line, record in records:
        if not any(c.strip() for c in record):
            continue
        if len(record) != cols.width:
            raise GradeError(
                f"expected {cols.width} fields as in the header, got {len(record)}",
                file=name,
                line=line,
                field="fields",
            )
        who = f"{record[cols.first].strip()} {record[cols.last].strip()}".strip()
        ident = _identity(cols, record)
        # a further try repeats the names and leaves the email out (or every identity field)
        blank = (cols.email,) if cols.email is not None else (cols.idnumber,)
        further = all(i is None or not record[i].strip() for i in blank)
        if further and out and out[-1].name == who:
            out[-1].rows.append((line, record))
            continue
        if not who and not ident:
            raise GradeError(
                "expected a student's name, ID number or email, got none",
                file=name,
                line=line,
                field="Last name",
            )
        out.append(_Attempt(line, ident or who, who, [(line, record)]))
    return out


def _number_value(text: str, comma: bool = False) -> float:
    """A typed number as the grader compares it: -inf for a masked word, +inf (never right,
    never a slip) for text that is not a number (``comma``: the key's sheets print a decimal
    comma, so that 0,25 is a quarter: responses' ``_parse_number``)."""
    try:
        x = _parse_number(text, comma=comma)
    except _RowError:
        return math.inf
    return math.inf if x is None else x


def _option_value(gap: _Gap, text: str) -> str:
    return gap.options.get(_shown_text(text), norm_text(text))


def _option_set(gap: _Gap, text: str) -> frozenset[str] | None:
    """The options (normalized shown texts) a mark-all response names: Moodle joins the
    options marked with "; " (an option's text may hold "; " itself: the longest run of
    pieces that is one option is taken first); None when a piece is no option."""
    pieces = text.split(";")
    found: set[str] = set()
    i = 0
    while i < len(pieces):
        for j in range(len(pieces), i, -1):
            shown = _shown_text(";".join(pieces[i:j]))
            if shown in gap.options:
                found.add(shown)
                i = j
                break
        else:
            return None
    return frozenset(found)


#: what a slot drew: each question in it with its gaps (several: a pool's picks on one
#: sheet, gaps numbered through them in order), and whether it is a cloze question
Drawn = tuple[list[tuple[Variant, list[_Gap]]], bool]


def _candidates(slot: _Slot) -> list[Drawn]:
    """What ``slot`` may draw: a version of its question, or one sheet's picks of a pool."""
    if slot.deals:
        return [([(v, _gaps(v)[0]) for v in deal], True) for deal in slot.deals]
    out: list[Drawn] = []
    for v in slot.question.variants:
        gaps, cloze = _gaps(v)
        out.append(([(v, gaps)], cloze))
    return out


def _versions(slot: _Slot) -> str:
    if slot.deals:
        return "/".join(deal[0].sheet_id for deal in slot.deals)
    return "/".join(v.sheet_id for v in slot.question.variants)


def _match(slot: _Slot, texts: str, line: int, name: str, comma: bool = False) -> list[Drawn]:
    """The versions of ``slot``'s question (a pooled slot: the sheets' picks) whose key is
    the Right answer ``texts`` (several when their right answers read alike): their exact
    values as older exports made Moodle state them, else their printed values as today's do
    (an exact match first, so that versions whose printed values agree stay apart)."""
    candidates = _candidates(slot)
    for style in STYLES:
        found = []
        for sections, cloze in candidates:
            gaps = [g for _, gs in sections for g in gs]
            split = _split(texts, gaps, cloze)
            if split is not None and _is_right_answer(split, gaps, style, comma):
                found.append((sections, cloze))
        if found:
            return found
    names = _versions(slot)
    raise GradeError(
        f"expected the right answer of a version ({names}) of question "
        f"{slot.question.number} ({slot.question.qid}) of the key, got "
        f"{shorten(texts, 60)!r} (a quiz from another key?)",
        file=name,
        line=line,
        field=f"Right answer {slot.number}",
    )


_NUMBER_IN_TEXT = re.compile(r"(?<![\w.])[-\u2212]?[0-9]+(?:\.[0-9]+)?(?![\w.])")


#: a table heading as Moodle's HTML-to-text writes it ("KEY 2", "QUERY 1"): not a value
_HEADINGS = re.compile(r"\b[A-Z]{2,}\s+[0-9]+\b")


def _numbers(text: str) -> list[float]:
    """The numbers a text states, in order (to 6 decimals): subscripts are not numbers."""
    return [round(float(m.replace("\u2212", "-")), 6) for m in _NUMBER_IN_TEXT.findall(text)]


def _flat(value: object) -> list[float] | None:
    """A drawn input's finite numbers in reading order (None: not numbers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return [round(float(value), 6)] if math.isfinite(value) else None
    if isinstance(value, list | tuple):
        out = []
        for x in value:
            inner = _flat(x)
            out += inner or []
        return out or None
    return None


def _named(text: str, name: str) -> list[float]:
    """The numbers the text sets ``name`` to ("d_k = 4")."""
    pattern = re.escape(name) + r"\s*=\s*([-\u2212]?[0-9]+(?:\.[0-9]+)?)(?![\w.])"
    return [round(float(m.replace("\u2212", "-")), 6) for m in re.findall(pattern, text)]


def _fit(v: Variant, text: str, stated: Sequence[float]) -> int:
    """How well a question text states a variant's drawn numbers: each table or vector
    counted by its entries each time they stand in the text in a row, each single number once
    and again each time the text names it ("d_k = 4")."""
    score = 0
    for key, value in v.given.items():
        flat = _flat(value)
        if flat is None:
            continue
        if len(flat) == 1:
            score += (flat[0] in stated) + _named(text, key).count(flat[0])
        else:  # every place the entries stand in a row (a table shown twice counts twice)
            runs = sum(list(stated[i : i + len(flat)]) == flat for i in range(len(stated)))
            score += runs * len(flat)
    return score


def _match_text(slot: _Slot, text: str, line: int, name: str) -> tuple[Variant, ...]:
    """The version of ``slot``'s question (a pooled slot: the sheet's picks) whose drawn
    numbers the Question text states (the one that fits best; a tie is refused)."""
    stated = _numbers(_HEADINGS.sub(" ", text))
    dealt = slot.deals or tuple((v,) for v in slot.question.variants)
    scored = [(sum(_fit(v, text, stated) for v in deal), deal) for deal in dealt]
    best = max(k for k, _ in scored)
    chosen = [d for k, d in scored if k == best]
    givens = [[(v.qid, v.given) for v in d] for d in chosen]
    if len(chosen) == 1 or all(g == givens[0] for g in givens) or _same_scores(chosen):
        return chosen[0]
    raise GradeError(
        f"expected the question text of one version ({_versions(slot)}) of question "
        f"{slot.question.number} ({slot.question.qid}), got text that fits "
        f"{'/'.join(d[0].sheet_id for d in chosen)} alike ({_RIGHT_OPTION})",
        file=name,
        line=line,
        field=f"Question {slot.number}",
    )


def _scoring(v: Variant) -> tuple[object, ...]:
    """What grading a variant's graded answers depends on: its gaps' keys (values, printed
    values, options and the right one; not the letters, which only name a choice in the
    report) and, where credit can carry, the drawn values it is recomputed from."""
    gaps = [
        (g.answer, g.cell, g.value, g.printed, sorted(g.options.items()), g.right)
        + ((sorted(g.right_set),) if g.right_set else ())
        for g in _gaps(v)[0]
    ]
    tolerances = [(p.answer.name, p.answer.tolerance) for p in gradable_parts(v) if p.answer]
    points = sorted(v.answer_points().items())
    return (v.qid, gaps, tolerances, points, (v.carries, v.given) if v.carries else ())


def _same_scores(deals: Sequence[tuple[Variant, ...]]) -> bool:
    """Whether any answer scores the same against each of ``deals`` (versions whose question
    text Moodle shows alike, such as a concept question asked the same way on every sheet:
    which one was drawn changes no score, so grading needs not know)."""
    first = [_scoring(v) for v in deals[0]]
    return all([_scoring(v) for v in d] == first for d in deals[1:])


def _match_slot(
    slot: _Slot, record: Sequence[str], cols: _Columns, line: int, name: str, comma: bool = False
) -> tuple[Drawn, str]:
    """What a graded slot drew: from its Right answer, else its Question text; and, when
    versions whose right answers read alike cannot be told apart (no Question text to tell
    them), every one of them ("B or D") for the report to name, never the first alone."""
    if cols.right:
        found = _match(slot, record[cols.right[slot.number]], line, name, comma)
        if len(found) > 1 and cols.qtext:  # the question's text tells which Moodle drew
            text = record[cols.qtext[slot.number]]
            stated = _numbers(_HEADINGS.sub(" ", text))
            fits = [sum(_fit(v, text, stated) for v, _ in d[0]) for d in found]
            found = [d for d, k in zip(found, fits, strict=True) if k == max(fits)]
        if len(found) == 1:
            return found[0], ""
        names = [d[0][0][0].sheet_id for d in found]
        return found[0], ", ".join(names[:-1]) + " or " + names[-1]
    deal = _match_text(slot, record[cols.qtext[slot.number]], line, name)
    if slot.deals:
        return ([(v, _gaps(v)[0]) for v in deal], True), ""
    gaps, cloze = _gaps(deal[0])
    return ([(deal[0], gaps)], cloze), ""


def _read_attempt(
    attempt: _Attempt,
    row: tuple[int, list[str]],
    slots: Sequence[_Slot],
    cols: _Columns,
    name: str,
    clashes: list[str],
    numbers: dict[str, int] | None = None,
    tied: dict[str, str] | None = None,
    comma: bool = False,
) -> dict[str, tuple[Variant, dict[str, dict[tuple[int, int], ResponseCell]]]]:
    """The version drawn and the cells written, per question id, from one try's row; a slot
    that drew a second version of a question drawn before (Moodle's random questions of a
    pool can) is added to ``clashes`` and not read. ``numbers`` gets each question's quiz slot
    (its first: the one Moodle calls "Question N")."""
    line, record = row
    numbers = {} if numbers is None else numbers
    drawn: dict[str, tuple[Variant, dict[str, dict[tuple[int, int], ResponseCell]]]] = {}
    essays: list[tuple[_Slot, str]] = []
    # per key question (a pool: its slot), the variants its graded slot drew: the written
    # part belongs to these, whichever essay the quiz gave (today's exports: one per slot)
    dealt: dict[str, list[Variant]] = {}
    for slot in slots:
        typed = record[cols.response[slot.number]]
        if slot.written:
            essays.append((slot, typed))
            continue
        (sections, cloze), alike = _match_slot(slot, record, cols, line, name, comma)
        if alike and tied is not None:
            tied.update({v.qid: alike for v, _ in sections})
        again = [v for v, _ in sections if v.qid in drawn]
        if again:  # a pool's random questions drew two versions of one question
            clashes += [
                gettext(
                    "question {qid} twice in pool {pool} (versions {first} and {second}, "
                    "line {line})",
                    qid=v.qid,
                    pool=slot.question.qid,
                    first=drawn[v.qid][0].sheet_id,
                    second=v.sheet_id,
                    line=line,
                )
                for v in again
            ]
            continue  # the rest of the row is still read, so that a bad cell is reported
        # each gap with the cells of the question it belongs to (a pooled slot holds several)
        gaps: list[_Gap] = []
        into: list[dict[str, dict[tuple[int, int], ResponseCell]]] = []
        dealt.setdefault(slot.question.qid, []).extend(v for v, _ in sections)
        for v, section in sections:
            cells: dict[str, dict[tuple[int, int], ResponseCell]] = {}
            drawn[v.qid] = (v, cells)
            numbers.setdefault(v.qid, slot.number)
            gaps += section
            into += [cells] * len(section)
        if typed.strip() == _NONE:
            continue
        split = _split(typed, gaps, cloze)
        if split is None:
            raise GradeError(
                f"expected {len(gaps)} parts ('part 1: ...; part 2: ...') as the version "
                f"drawn has, got {shorten(typed, 60)!r}",
                file=name,
                line=line,
                field=f"Response {slot.number}",
            )
        for gap, text, cells in zip(gaps, split, into, strict=True):
            t = text.strip()
            if not t:
                continue
            if gap.right_set:  # mark all that apply: the options marked, as one set
                chosen = _option_set(gap, t)
                if chosen is None:
                    raise GradeError(
                        f"expected the options of the version drawn, separated by '; ', "
                        f"got {shorten(t, 60)!r}",
                        file=name,
                        line=line,
                        field=f"Response {slot.number}",
                    )
                order = list(gap.options)
                picked = sorted(chosen, key=order.index)
                value: float | str = CHOSEN_SEPARATOR.join(gap.options[k] for k in picked)
                shown = "; ".join(gap.letters[k] for k in picked)
                cells.setdefault(gap.answer, {})[gap.cell] = ResponseCell(line, shown, value)
                continue
            value = _option_value(gap, t) if gap.options else _number_value(t, comma)
            shown = gap.letters.get(_shown_text(t), t)  # a choice by its letter, not its TeX
            cells.setdefault(gap.answer, {})[gap.cell] = ResponseCell(line, shown, value)
    for slot, typed in essays:
        with_written = [v for v in dealt.get(slot.question.qid, []) if written_parts(v)]
        if with_written:  # the graded slot's deal: its written parts, one essay for all
            for v in with_written:
                _essay_cell(drawn[v.qid][1], v, typed, line)
            continue
        got = drawn.get(slot.question.qid)
        if got is not None:
            v = got[0]
        elif cols.qtext:  # an essay-only question: its text may tell the version
            try:
                v = _match_text(slot, record[cols.qtext[slot.number]], line, name)[0]
            except GradeError:  # versions that state the same numbers: graded by hand
                v = slot.question.variants[0]
        else:
            v = slot.question.variants[0]
        cells = got[1] if got is not None else {}
        drawn[v.qid] = (v, cells)
        numbers.setdefault(v.qid, slot.number)
        _essay_cell(cells, v, typed, line)
    return drawn


def _essay_cell(
    cells: dict[str, dict[tuple[int, int], ResponseCell]], v: Variant, typed: str, line: int
) -> None:
    """What a student wrote in an essay, as the answer of each of ``v``'s written parts (a
    shared essay answers all of them; the grader reads it beside each)."""
    if typed.strip() == _NONE:
        return
    for part in written_parts(v):
        if part.answer is not None:
            cells.setdefault(part.answer.name, {})[(0, 0)] = ResponseCell(
                line, typed.strip(), typed.strip()
            )


def _check_pools(doc: KeyDoc) -> None:
    """Refuse a key with a pool the Moodle export refuses to deal and a download cannot be
    read against: one where some alternatives have a written part and others none (its one
    written question would be given to sheets that never printed one)."""
    for q in doc.questions:
        if all(v.qid == q.qid for v in q.variants):
            continue
        without = [v.qid for v in q.variants if not written_parts(v)]
        if any(written_parts(v) for v in q.variants) and without:
            raise GradeError(
                "expected a pool whose alternatives all have a written part or none, as "
                f"the Moodle export deals them, got pool {q.qid!r} with "
                f"{', '.join(dict.fromkeys(without))} without one (grade such a quiz from a "
                "responses CSV: grade --template)",
                file=doc.source,
                field="slots",
            )


def _question_key(key: GradeKey, v: Variant) -> QuestionKey:
    sheet = key.sheet(v.sheet_id)
    q = sheet.question(v.qid) if sheet is not None else None
    assert q is not None  # the grade key is made from the same document
    return replace(q, version=v.sheet_id)


def parse_moodle(
    text: str,
    doc: KeyDoc,
    key: GradeKey,
    name: str,
    tries: Tries = "last",
    attempts: Attempts = "highest",
    carry: bool | None = None,
    penalty: Fraction | None = None,
) -> tuple[Responses, GradeKey]:
    """Read a Moodle Responses CSV (its text) against the key (GradeError naming the line):
    the responses (attempts in progress listed, not graded) and the key they are graded
    against, one sheet per student of the versions that student drew (the attempt that
    ``attempts``, Moodle's grading method, counts). ``penalty``: an adaptive quiz's penalty
    per wrong try, as a fraction of the question's mark (None: the one the export sets)."""
    return parse_moodle_rows(_records(text, name), doc, key, name, tries, attempts, carry, penalty)


def parse_moodle_rows(
    rows: Iterable[tuple[int, list[str]]],
    doc: KeyDoc,
    key: GradeKey,
    name: str,
    tries: Tries = "last",
    attempts: Attempts = "highest",
    carry: bool | None = None,
    penalty: Fraction | None = None,
) -> tuple[Responses, GradeKey]:
    """``parse_moodle`` for rows already split into cells (a spreadsheet's, numbered)."""
    rate = MOODLE_PENALTY if penalty is None else penalty
    _check_pools(doc)
    records = iter(rows)
    header_line, header = next(((ln, r) for ln, r in records if any(c.strip() for c in r)), (1, []))
    # a download of a quiz from an older export has a slot per pick of a pool (its Response
    # columns say so); today's, one per pool
    slots = _slots(doc)
    older = _slots(doc, pooled=False)
    if len(older) != len(slots) and sum(bool(_RESPONSE.match(c)) for c in _cols(header)) == len(
        older
    ):
        slots = older
    cols = _columns(header, name, header_line, len(slots))
    found = _attempts(records, cols, name)
    if not found:
        raise GradeError(
            "expected a row per attempt after the header, got none",
            file=name,
            line=header_line + 1,
            field="rows",
        )
    finished: dict[str, list[_Finished]] = {}
    in_progress: dict[str, str] = {}
    against_pool: list[str] = []
    attempts_seen: dict[str, int] = {}
    for attempt in found:
        status = next(
            (r[cols.status].strip() for _, r in reversed(attempt.rows) if r[cols.status].strip()),
            "",
        )
        attempts_seen[attempt.student] = attempts_seen.get(attempt.student, 0) + 1
        row = _try_row(attempt, slots, cols, tries)
        clashes: list[str] = []
        numbers: dict[str, int] = {}
        tied: dict[str, str] = {}  # versions alike in the download, by question id
        comma = doc.decimal == ","
        drawn = _read_attempt(attempt, row, slots, cols, name, clashes, numbers, tied, comma)
        # every row is read (a bad cell in any try is reported); with a row per try, each
        # question's mark is its best try less the penalty, as Moodle's adaptive mode gives
        per_row = [
            _read_attempt(attempt, other, slots, cols, name, [], comma=comma)
            if other is not row
            else drawn
            for other in attempt.rows
        ]
        penalties: dict[str, TryPenalty] = {}
        if tries == "last" and len(attempt.rows) > 1 and not clashes:
            penalties = _best_tries(attempt, per_row, drawn, slots, cols, numbers, key, carry, rate)
        if status.casefold() == _IN_PROGRESS:
            if attempt.student not in finished:
                in_progress[attempt.student] = _who(attempt)
            continue
        if clashes:  # dealt against the pool rule: no sheet the bank prints; the rest graded
            n = sum(a.student == attempt.student for a in found)
            against_pool.append(
                gettext(
                    "{student}, attempt {k} of {n}: {clashes}",
                    student=_who(attempt),
                    k=attempts_seen[attempt.student],
                    n=n,
                    clashes="; ".join(clashes),
                )
                if n > 1
                else f"{_who(attempt)}: {'; '.join(clashes)}"
            )
            continue
        # in quiz order, each numbered as Moodle numbers its slot ("Question N"): the
        # versions drawn come from several sheets, whose own numbers may repeat
        questions = [
            replace(
                _question_key(key, drawn[qid][0]),
                number=numbers[qid],
                version=tied.get(qid, drawn[qid][0].sheet_id),
            )
            for qid in sorted(drawn, key=lambda q: numbers[q])
        ]
        sheet = SheetKey(id=attempt.student, name=attempt.name, questions=tuple(questions))
        answers = StudentAnswers(
            attempt.student,
            attempt.student,
            attempt.line,
            {q: drawn[q][1] for q in drawn},
            submitted=True,
            penalties=penalties,
        )
        moodle = _moodle_grade(row[1][cols.grade]) if cols.grade is not None else None
        finished.setdefault(attempt.student, []).append(_Finished(attempt, sheet, answers, moodle))
        in_progress.pop(attempt.student, None)  # a finished attempt is graded instead
    counted = [(_counted(tries_of, attempts, carry), tries_of) for tries_of in finished.values()]
    if attempts == "average":  # the mean of every finished attempt's grade
        counted = [
            (
                replace(
                    c,
                    answers=replace(c.answers, averaged=tuple((f.sheet, f.answers) for f in every)),
                ),
                every,
            )
            if len(every) > 1
            else (c, every)
            for c, every in counted
        ]
    single = all(len(a.rows) == 1 for a in found)
    graded_key = GradeKey(
        path=key.path,
        title=key.title,
        seed=key.seed,
        sheets=tuple(c.sheet for c, _ in counted),
        decimal=key.decimal,
    )
    responses = Responses(
        path=name,
        students=tuple(c.answers for c, _ in counted),
        has_sheet_column=False,
        in_progress=tuple(in_progress.values()),
        attempts=tuple(
            (
                gettext(
                    "{student}, the average of {n} attempts counts ({rule})",
                    student=_who(c.attempt),
                    n=len(every),
                    rule=attempts,
                )
                if attempts == "average"
                else gettext(
                    "{student}, attempt {k} of {n} counts ({rule})",
                    student=_who(c.attempt),
                    k=every.index(c) + 1,
                    n=len(every),
                    rule=attempts,
                )
            )
            for c, every in counted
            if len(every) > 1
        ),
        against_pool=tuple(against_pool),
        tries_note=(
            gettext(
                "Penalty for wrong tries not applied: the download has one row per attempt "
                '(Moodle\'s "last try"), so the wrong tries are unknown (download "All tries").'
            )
            if single and penalty is not None and penalty > 0 and tries == "last"
            else ""
        ),
    )
    return responses, graded_key


def _written_names(v: Variant) -> set[str]:
    return {p.answer.name for p in written_parts(v) if p.answer is not None}


def _best_tries(
    attempt: _Attempt,
    per_row: Sequence[dict[str, tuple[Variant, dict[str, dict[tuple[int, int], ResponseCell]]]]],
    drawn: dict[str, tuple[Variant, dict[str, dict[tuple[int, int], ResponseCell]]]],
    slots: Sequence[_Slot],
    cols: _Columns,
    numbers: dict[str, int],
    key: GradeKey,
    carry: bool | None,
    rate: Fraction,
) -> dict[str, TryPenalty]:
    """Moodle's adaptive mode (``qbehaviour_adaptive``) per graded slot of an "All tries"
    attempt: a slot's tries are its rows with a response (``-``: no such try), the k-th
    try's fraction its raw fraction less ``rate`` times k-1 (``adjusted_fraction``), and the
    slot keeps the best of them, never below 0 (``max($prevbest, ...)``, from 0): one
    fraction for the whole slot, a cloze question's gaps and a pool's picks together. The
    slot's questions in ``drawn`` get that try's answers (their written parts, an essay of
    their own, are kept and never penalised); the returned penalty per question is the
    slot's (``rate`` × (k-1) × its graded points), shared out as the try's points are."""
    out: dict[str, TryPenalty] = {}
    for slot in slots:
        if slot.written:
            continue
        col = cols.response[slot.number]
        made = [k for k, (_, record) in enumerate(attempt.rows) if record[col].strip() != _NONE]
        qids = [q for q in drawn if numbers.get(q) == slot.number]
        if len(made) < 2 or not qids:
            continue
        # per try, each question's graded points with carried credit as asked, and without
        earned: list[dict[str, Fraction]] = []
        plain: list[dict[str, Fraction]] = []
        possible = Fraction(0)
        for k in made:
            earned.append({})
            plain.append({})
            possible = Fraction(0)
            for q in qids:
                v = drawn[q][0]
                skip = _written_names(v)
                got = per_row[k].get(q)
                cells = {n: c for n, c in (got[1] if got else {}).items() if n not in skip}
                result = grade_question(_question_key(key, v), cells, carry)
                graded = [p for p in result.parts if p.answer not in skip]
                earned[-1][q] = sum((p.earned for p in graded), Fraction(0))
                plain[-1][q] = (
                    earned[-1][q] if result.without_carry is None else result.without_carry
                )
                possible += sum((p.possible for p in graded), Fraction(0))
        i = _best_try(earned, rate, possible)
        j = _best_try(plain, rate, possible)
        for q in qids:
            v, cells = drawn[q]
            skip = _written_names(v)
            got = per_row[made[i]].get(q)
            kept = {n: c for n, c in cells.items() if n in skip}  # the essay's, as read
            cells.clear()
            cells.update(kept)
            cells.update({n: c for n, c in (got[1] if got else {}).items() if n not in skip})
            off = _share(earned[i], q, rate * i * possible)
            lms = plain[j][q] - _share(plain[j], q, rate * j * possible)
            out[q] = TryPenalty(off, i + 1, len(made), lms)
    return out


def _best_try(earned: Sequence[dict[str, Fraction]], rate: Fraction, possible: Fraction) -> int:
    """The try (0-based) whose points less ``rate`` × its index × ``possible`` are highest,
    the earliest of equal ones (Moodle keeps the best: ``max($prevbest, ...)``)."""
    adjusted = [sum(e.values(), Fraction(0)) - rate * i * possible for i, e in enumerate(earned)]
    return adjusted.index(max(adjusted))


def _share(earned: dict[str, Fraction], q: str, penalty: Fraction) -> Fraction:
    """Question ``q``'s part of a slot's ``penalty``: as its share of the slot's points."""
    total = sum(earned.values(), Fraction(0))
    return penalty * earned[q] / total if total else Fraction(0)


def _try_row(
    attempt: _Attempt, slots: Sequence[_Slot], cols: _Columns, tries: Tries
) -> tuple[int, list[str]]:
    """The row of the try that counts, per slot. An "all tries" download has a row per try up
    to the most tries of any slot; a slot with fewer tries shows ``-`` in the later rows
    (Moodle has no step of that try), not a blank answer: its last try is the last row where
    it has a response. The first try is the first row for every slot."""
    if tries == "first" or len(attempt.rows) == 1:
        return attempt.rows[0]
    line, last = attempt.rows[-1]
    merged = list(last)
    for slot in slots:
        col = cols.response[slot.number]
        for _, record in reversed(attempt.rows):
            if record[col].strip() != _NONE:
                merged[col] = record[col]
                break
    return line, merged


@dataclass(frozen=True)
class _Finished:
    """One finished attempt, as the grader would take it."""

    attempt: _Attempt
    sheet: SheetKey
    answers: StudentAnswers
    moodle: float | None = None  # Moodle's grade of it (its Grade column), when it has one


def _moodle_grade(text: str) -> float | None:
    """An attempt's grade as the download states it ("22.25"); None for "Not yet graded"
    (an essay to mark), "-" or anything else."""
    try:
        x = float(text.strip())
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _who(attempt: _Attempt) -> str:
    return attempt.student + (f" ({attempt.name})" if attempt.name != attempt.student else "")


def _counted(every: Sequence[_Finished], rule: Attempts, carry: bool | None = None) -> _Finished:
    """The attempt that counts among a student's finished ones (in file order, which is
    Moodle's order of attempts): the first, the last, or the highest: the one Moodle's
    "Highest grade" counts, by the grades the download states when it states each one's,
    else by ``grade``'s own scores (the first of equal grades, as Moodle keeps the earliest
    best)."""
    if rule == "first" or len(every) == 1:
        return every[0]
    if rule == "last":
        return every[-1]
    moodle = [f.moodle for f in every]
    if all(x is not None for x in moodle):
        # the attempt Moodle's "Highest grade" counts: the highest grade Moodle gave (its
        # penalties and marks, without carried credit), the earliest of equal ones
        return every[moodle.index(max(x for x in moodle if x is not None))]
    scores = [
        sum((q.earned for q in grade_sheet(f.sheet, f.answers, carry)), Fraction(0)) for f in every
    ]
    return every[scores.index(max(scores))]
