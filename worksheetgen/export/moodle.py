"""Moodle XML: one question per variant, in one category per question.

Mapping (see the README's "Exporting to an LMS"):
- one number (scalar)               -> ``numerical``, tolerance from key.json
- one pick-one answer (kind choice) -> ``multichoice``
- a multiple-choice item (choices)  -> ``multichoice``, each distractor's feedback names its slip
- anything else (matrices, vectors, shapes, several parts) -> ``cloze`` (multianswer): one
  NUMERICAL gap per entry with the tolerance, a SHORTANSWER gap for a masked (−∞) entry that
  accepts -inf, −∞ or "masked", MULTICHOICE_V gaps for choices
- written parts (kind text)         -> ``essay`` with the model answer as grader information
  (in a "(written part)" category of its own, worth the written parts' share of the points,
  when the question also has graded
  parts; when it has several versions, or is a pool, each graded question asks its own
  written part and the category holds one essay for all: pools.shares_written)
A number's printed value is its first answer (Moodle shows it as the correct one); wrong answers
a misconception produces get 0 % answers whose feedback names every slip they match. Every text
is kept off Moodle's emoticon and URL filters (see html.protect).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any
from xml.sax.saxutils import escape as xml_escape

from worksheetgen.errors import ExportError
from worksheetgen.exact.masked import MASKED_SPELLINGS
from worksheetgen.export import html, plain, pools, privacy
from worksheetgen.export.multi import multi_grades, percent
from worksheetgen.keyjson.deals import Deal
from worksheetgen.keyjson.lms import MOODLE_PENALTY_TEXT
from worksheetgen.keyjson.records import Cell, KeyDoc, KeyPart, KeyQuestion, Slip, Variant
from worksheetgen.keyjson.views import (
    choice_feedback,
    gradable_parts,
    graded_points,
    number_text,
    slip_sentence,
    variant_name,
    written_parts,
    written_points,
)
from worksheetgen.language import gettext, said

PENALTY = MOODLE_PENALTY_TEXT  # Moodle's default "Penalty for each incorrect try"


def plain_feedback(text: str) -> str:
    """Feedback inside a cloze gap, kept off Moodle's filters and escaped for the gap."""
    return html.protected_plain(text)


def _text(parent: ET.Element, tag: str, text: str, fmt: str | None = "html") -> ET.Element:
    """``<tag format="html"><text>...</text></tag>``."""
    el = ET.SubElement(parent, tag, {"format": fmt} if fmt else {})
    ET.SubElement(el, "text").text = text
    return el


def _el(parent: ET.Element, tag: str, text: str) -> ET.Element:
    el = ET.SubElement(parent, tag)
    el.text = text
    return el


def category_path(parts: Sequence[str]) -> str:
    """A Moodle category path; a slash inside a name is doubled, as Moodle expects."""
    names = (" ".join(p.split()).replace("/", "//") for p in parts)
    return "/".join(["$course$", "top", *names])


def _category(quiz: ET.Element, path: str, info: str) -> None:
    q = ET.SubElement(quiz, "question", {"type": "category"})
    cat = ET.SubElement(q, "category")
    ET.SubElement(cat, "text").text = path
    _text(q, "info", html.protected_html(info))


def _head(
    quiz: ET.Element,
    qtype: str,
    v: Variant,
    name: str,
    text: str,
    feedback: str,
    grade: float,
    idnumber: str,
) -> ET.Element:
    q = ET.SubElement(quiz, "question", {"type": qtype})
    ET.SubElement(ET.SubElement(q, "name"), "text").text = name
    _text(q, "questiontext", text)
    _text(q, "generalfeedback", feedback)
    _el(q, "defaultgrade", f"{grade:g}")
    _el(q, "penalty", PENALTY if qtype != "essay" else "0")
    _el(q, "hidden", "0")
    _el(q, "idnumber", idnumber[:100])
    return q


# ---------------------------------------------------------------- cloze gaps


def cloze_escape(text: str) -> str:
    """Text inside a cloze gap: '}' and '#' are escaped; '~' (no escape exists) becomes '∼'."""
    return text.replace("}", r"\}").replace("#", r"\#").replace("~", "∼")


def _alt(fraction: str, answer: str, feedback: str = "") -> str:
    fb = f"#{cloze_escape(feedback)}" if feedback else ""
    return f"{fraction}{answer}{fb}"


@dataclass(frozen=True)
class NumericAnswer:
    """One answer of a Moodle numerical question or gap: a fraction (100 or 0), a decimal
    with its tolerance, and the feedback."""

    fraction: int
    value: str
    tolerance: str
    feedback: str


def _decimal(text: str) -> Decimal | None:
    """A printed number as a Decimal (``−`` read as ``-``), or None when it is not one."""
    try:
        d = Decimal(text.strip().replace("\u2212", "-"))
    except InvalidOperation:
        return None
    return d if d.is_finite() else None


def _plain(d: Decimal) -> str:
    """A Decimal as plain text without needless zeros ('0.26', '2', '0.0007864')."""
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _slip_points(slip: Slip) -> dict[Decimal, str]:
    """Where a slip's answer lies, with its text: its printed value (what a student writes)
    and its exact value."""
    assert slip.value is not None
    found: dict[Decimal, str] = {}
    printed = _decimal(slip.printed)
    if printed is not None:
        found[printed] = format(printed, "f")
    found.setdefault(Decimal(repr(slip.value)), number_text(slip.value))
    return found


def _named(slips: Sequence[Slip]) -> str:
    """Feedback naming every slip of ``slips`` (each once)."""
    found: dict[str, str] = {}
    for s in slips:
        for m, d in zip(s.misconceptions, s.descriptions, strict=True):
            found.setdefault(m, d)
    return slip_sentence(list(found), list(found.values()))


def numeric_answers(cell: Cell) -> list[NumericAnswer]:
    """The answers of one (unmasked) number, in the order Moodle tries them.

    Moodle takes the first answer that matches and shows the first 100 % one as "the correct
    answer", so the printed value comes first (with the part of the margin that stays inside
    the key's), then the exact value with the key's tolerance. Each slip follows at its
    printed value and at its exact value (where these lie outside the key's margin), each
    with the key's tolerance; its feedback names every slip whose answer that one matches.
    """
    assert cell.value is not None
    exact = Decimal(repr(cell.value))
    tol = Decimal(repr(cell.tolerance))
    out = []
    printed = _decimal(cell.printed)
    if printed is not None and printed != exact and abs(printed - exact) <= tol:
        inner = _plain(tol - abs(printed - exact))
        out.append(NumericAnswer(100, format(printed, "f"), inner, ""))
    out.append(NumericAnswer(100, number_text(cell.value), number_text(cell.tolerance), ""))
    slips = [s for s in cell.slips if s.value is not None]
    seen: set[Decimal] = set()
    for slip in slips:
        for point, text in _slip_points(slip).items():
            if point in seen or abs(point - exact) <= tol:
                continue
            seen.add(point)
            named = [s for s in slips if any(abs(x - point) <= tol for x in _slip_points(s))]
            out.append(NumericAnswer(0, text, number_text(cell.tolerance), _named(named)))
    return out


def masked_answers(cell: Cell) -> list[tuple[str, str]]:
    """The 0 % answers of a masked entry's short-answer gap: each text a slip writes there
    (printed and exact) with feedback naming every slip that writes it."""
    texts: dict[str, list[Slip]] = {}
    for slip in cell.slips:
        if slip.value is None:
            continue
        for text in dict.fromkeys([slip.printed, number_text(slip.value)]):
            texts.setdefault(text, []).append(slip)
    return [(text, _named(slips)) for text, slips in texts.items()]


def numeric_gap(cell: Cell) -> str:
    """A NUMERICAL gap (or SHORTANSWER for a masked cell) with the slips as 0 % answers."""
    if cell.masked:
        alts = [_alt("=", cloze_escape(s)) for s in MASKED_SPELLINGS]
        for text, feedback in masked_answers(cell):
            alts.append(_alt("%0%", cloze_escape(text), plain_feedback(feedback)))
        return "{1:SHORTANSWER:" + "~".join(alts) + "}"
    alts = [
        _alt(
            "=" if a.fraction == 100 else "%0%",
            f"{a.value}:{a.tolerance}",
            plain_feedback(a.feedback),
        )
        for a in numeric_answers(cell)
    ]
    return "{1:NUMERICAL:" + "~".join(alts) + "}"


def choices_gap(part: KeyPart) -> str:
    """A MULTICHOICE_V gap for a multiple-choice item, feedback naming each slip."""
    alts = []
    for c in part.choices:
        text = cloze_escape(html.protected_plain(html.choice_text(c)))
        alts.append(_alt("=" if c.correct else "", text, plain_feedback(choice_feedback(c))))
    return "{1:MULTICHOICE_V:" + "~".join(alts) + "}"


def option_gap(part: KeyPart) -> str:
    """A MULTICHOICE_V gap for a pick-one answer (kind choice)."""
    a = part.answer
    assert a is not None
    alts = [
        _alt("=" if o == a.value else "", cloze_escape(html.protected_plain(html.markup_text(o))))
        for o in a.options
    ]
    return "{1:MULTICHOICE_V:" + "~".join(alts) + "}"


# ---------------------------------------------------------------- question types


def _intro(v: Variant) -> ET.Element:
    root = html.question_root()
    html.add_intro(root, v)
    return root


def _cloze(
    quiz: ET.Element,
    v: Variant,
    parts: Sequence[KeyPart],
    name: str,
    idnumber: str,
    ask_written: bool = False,
) -> None:
    _cloze_of(quiz, [(v, parts)], name, idnumber, ask_written)


def _cloze_of(
    quiz: ET.Element,
    sections: Sequence[tuple[Variant, Sequence[KeyPart]]],
    name: str,
    idnumber: str,
    ask_written: bool = False,
) -> None:
    """One cloze question asking the graded parts of ``sections``: one variant's, or a pool's
    picks on one sheet (each under its own heading), so one random draw deals them together.
    With ``ask_written``, each section's written parts are asked there too (answered in the
    slot's one shared essay)."""
    root = html.question_root()
    gaps: list[str] = []

    def gap(text: str) -> str:
        # a mark for now: every "{" of the text around the gaps is escaped once it is HTML
        gaps.append(text)
        return f"\ue000{len(gaps) - 1}\ue001"

    weights = iter(section_weights(sections))
    mark = 0
    for v, parts in sections:
        if len(sections) > 1:
            html.add(
                html.add(root, "p"), "b", f"{v.title} ({number_text(graded_points(v))} point(s))"
            )
        html.add_intro(root, v)
        single = len(parts) == 1
        for i, part in enumerate(parts):
            html.add_part_prompt(root, i, part, single)
            weight = next(weights)
            mark += weight * _gap_count(part)
            if part.choices:
                html.add(root, "p", gap(weighted(choices_gap(part), weight)))
            elif part.kind == "choice":
                html.add(root, "p", gap(weighted(option_gap(part), weight)))
            else:
                html.add_answer_area(root, part, _numeric_gaps(gap, weight))
        if ask_written:
            html.add_written_prompts(root, v, len(parts))
    if any(html.any_masked(parts) for _, parts in sections):
        html.add(root, "p", said(html.MASKED_HINT))
    # a prompt's own "{1:NUMERICAL:...}" must not become a gap: Moodle finds gaps in the
    # HTML source, where &#123; is not a brace (the browser and MathJax still read "{")
    text = html.serialize(root).replace("{", "&#123;")
    text = _GAP_MARK.sub(lambda m: xml_escape(gaps[int(m.group(1))]), text)
    # Moodle gives a cloze question the sum of its gaps' weights as its mark
    feedback = "".join(html.key_html(v, parts) for v, parts in sections)
    _head(quiz, "cloze", sections[0][0], name, text, feedback, mark, idnumber)


def _no_multi_gap(v: Variant, parts: Sequence[KeyPart], source: str) -> None:
    """Refuse a mark-all part that would be a cloze gap (a pool of pick 2 or more): a cloze
    MULTIRESPONSE gap is not scored as the grader scores it."""
    for p in parts:
        if p.answer is not None and p.answer.multi:
            raise ExportError(
                "expected a mark-all question on its own (a Moodle multichoice question), "
                "got it in a cloze question of several (a pool of pick 2 or more), whose "
                "gaps Moodle scores otherwise: give the pool pick 1",
                file=source,
                field=f"question {v.qid} (sheet {v.sheet_id})",
            )


def _numeric_gaps(gap: Callable[[str], str], weight: int) -> Callable[[Cell], str]:
    """What a numeric part's cells hold in a cloze question: a gap of weight ``weight``."""
    return lambda cell: gap(weighted(numeric_gap(cell), weight))


def _gap_count(part: KeyPart) -> int:
    """How many gaps a part of a cloze question has: one per entry, one for a choice."""
    return pools.gap_count(part)


def section_weights(sections: Sequence[tuple[Variant, Sequence[KeyPart]]]) -> list[int]:
    """The weight of each gap of each part of ``sections``, in order: the smallest whole
    numbers in proportion to each entry's points on the sheet (a part's points over its gaps;
    a plain ``points: N`` split equally among the answers, as the sheet and ``grade`` split
    it), so a part's share of the cloze question's mark, the sum of its weights, is the
    sheet's."""
    per_gap = [g for v, parts in sections for g in pools.part_gap_points(v, parts)]
    return pools.whole_weights(per_gap)


def weighted(gap: str, weight: int) -> str:
    """A cloze gap ``{1:TYPE:...}`` with the weight ``weight``."""
    assert gap.startswith("{1:")
    return "{" + str(weight) + gap[2:]


_GAP_MARK = re.compile("\ue000(\\d+)\ue001")


def _numerical(
    quiz: ET.Element, v: Variant, part: KeyPart, name: str, idnumber: str, ask_written: bool
) -> None:
    root = _intro(v)
    html.add_part_prompt(root, 0, part, True)
    if ask_written:
        html.add_written_prompts(root, v, 1)
    a = part.answer
    assert a is not None
    cell = a.rows[0][0]
    assert cell.value is not None
    q = _head(
        quiz,
        "numerical",
        v,
        name,
        html.serialize(root),
        html.key_html(v, [part]),
        graded_points(v),
        idnumber,
    )
    for one in numeric_answers(cell):
        ans = ET.SubElement(
            q, "answer", {"fraction": str(one.fraction), "format": "moodle_auto_format"}
        )
        ET.SubElement(ans, "text").text = one.value
        _text(ans, "feedback", html.protected_html(one.feedback or gettext("Correct.")))
        _el(ans, "tolerance", one.tolerance)
    _el(q, "unitgradingtype", "0")
    _el(q, "unitpenalty", "0.1000000")
    _el(q, "showunits", "3")
    _el(q, "unitsleft", "0")


def _multichoice(
    quiz: ET.Element,
    v: Variant,
    part: KeyPart,
    name: str,
    idnumber: str,
    ask_written: bool,
    source: str = "key.json",
) -> None:
    root = _intro(v)
    html.add_part_prompt(root, 0, part, True)
    if ask_written:
        html.add_written_prompts(root, v, 1)
    q = _head(
        quiz,
        "multichoice",
        v,
        name,
        html.serialize(root),
        html.key_html(v, [part]),
        graded_points(v),
        idnumber,
    )
    multi = part.answer is not None and part.answer.multi
    _el(q, "single", "false" if multi else "true")
    _el(q, "shuffleanswers", "false")  # keep the printed order (the item's own shuffle)
    _el(q, "answernumbering", "ABCD")
    _el(q, "showstandardinstruction", "0")
    _text(q, "correctfeedback", gettext("Correct."))  # no filter rewrites these two
    _text(q, "partiallycorrectfeedback", "")
    _text(q, "incorrectfeedback", gettext("Not correct."))
    if part.choices:
        options = [(c.correct, html.choice_text(c), choice_feedback(c)) for c in part.choices]
    else:
        a = part.answer
        assert a is not None
        options = [
            (o in a.right, html.markup_text(o), gettext("Correct.") if o in a.right else "")
            for o in a.options
        ]
    # a mark-all question: each right option 1/(number right), each wrong one -1/(number
    # wrong), as the grader scores it (the sum of the marked, at least 0)
    right, wrong = (
        (percent(g) for g in multi_grades(v, part.answer, "Moodle", source))
        if multi and part.answer is not None
        else ("100", "0")
    )
    for correct, text, feedback in options:
        ans = ET.SubElement(
            q, "answer", {"fraction": right if correct else wrong, "format": "html"}
        )
        ET.SubElement(ans, "text").text = html.inline_html(text)
        _text(ans, "feedback", html.protected_html(feedback))


def _essay(
    quiz: ET.Element, v: Variant, parts: Sequence[KeyPart], name: str, idnumber: str, grade: float
) -> None:
    root = _intro(v)
    single = len(parts) == 1
    for i, part in enumerate(parts):
        html.add_part_prompt(root, i, part, single)
    if grade != v.points:
        html.add(root, "p", html.written_part_note(v, grade))
    q = _head(quiz, "essay", v, name, html.serialize(root), "", grade, idnumber)
    _el(q, "responseformat", "editor")
    _el(q, "responserequired", "1")
    _el(q, "responsefieldlines", "10")
    _el(q, "attachments", "0")
    _el(q, "attachmentsrequired", "0")
    _text(q, "graderinfo", html.key_html(v, parts))
    _text(q, "responsetemplate", "")


def _graded(
    quiz: ET.Element, v: Variant, parts: Sequence[KeyPart], ask_written: bool, source: str
) -> None:
    name = variant_name(v)
    idnumber = f"{v.qid}:{v.sheet_id}"
    if len(parts) == 1 and parts[0].choices:
        _multichoice(quiz, v, parts[0], name, idnumber, ask_written)
    elif len(parts) == 1 and parts[0].kind == "scalar":
        _numerical(quiz, v, parts[0], name, idnumber, ask_written)
    elif len(parts) == 1 and parts[0].kind == "choice":
        _multichoice(quiz, v, parts[0], name, idnumber, ask_written, source)
    else:
        _no_multi_gap(v, parts, source)
        _cloze(quiz, v, parts, name, idnumber, ask_written)


def _about(q: KeyQuestion, deals: Sequence[Deal]) -> str:
    """What a question's category holds, and how a quiz gives each student its share."""
    points = number_text(float(sum(Fraction(str(graded_points(v))) for v in deals[0].variants)))
    if all(v.qid == q.qid for v in q.variants):
        return gettext(
            "{variants} variant(s) of question {number} ({qid}), {points} point(s) on the "
            "sheet; add one random question from this category to give each student one, "
            "with the mark {points}.",
            variants=len(q.variants),
            number=q.number,
            qid=q.qid,
            points=points,
        )
    names = ", ".join(dict.fromkeys(v.qid for v in q.variants))
    held = (
        gettext(
            "{deals} question(s), each one sheet's {pick} picks of pool {number}",
            deals=len(deals),
            pick=q.pick,
            number=q.number,
        )
        if q.pick > 1
        else gettext(
            "{variants} variant(s) of pool {number}", variants=len(q.variants), number=q.number
        )
    )
    return gettext(
        "{held} ({qid}: {names}), {points} point(s) on every sheet; add one random question "
        "from this category, with the mark {points}, to give each student a set a sheet "
        "printed.",
        held=held,
        qid=q.qid,
        names=names,
        points=points,
    )


def _deal_name(q: KeyQuestion, deal: Deal) -> str:
    """The name of a question holding one sheet's picks of a pool."""
    return f"{q.number}. {q.qid} [{deal.sheet_id}]"


def _question(quiz: ET.Element, doc: KeyDoc, q: KeyQuestion, flush: Callable[[], None]) -> None:
    """Add the questions of one key question to ``quiz``, calling ``flush`` after each."""
    deals = pools.check_slot(doc, q, "Moodle")
    graded = [(v, gradable_parts(v)) for v in q.variants]
    written = [(v, written_parts(v)) for v in q.variants]
    has_graded = any(p for _, p in graded)
    # several deals with a written part: the graded question asks it, one essay answers it
    shared = pools.shares_written(q, deals)
    if has_graded:
        _category(
            quiz,
            category_path(_category_name(doc, q)),
            _about(q, deals),
        )
        if q.pick > 1:
            for v, parts in graded:
                _no_multi_gap(v, parts, doc.source)
            for deal in deals:
                sections = [(v, gradable_parts(v)) for v in deal.variants]
                name = _deal_name(q, deal)
                _cloze_of(quiz, sections, name, f"{q.qid}:{deal.sheet_id}", shared)
                flush()
        else:
            for v, parts in graded:
                if parts:
                    _graded(quiz, v, parts, shared, doc.source)
                    flush()
    if any(p for _, p in written):
        _category(
            quiz,
            category_path(_category_name(doc, q, has_graded)),
            gettext(
                "The written part of question {number} ({qid}), graded by hand: one essay "
                "every version shares, asking what the graded question showed; add one random "
                "question from this category (or the essay itself), with the mark {mark}.",
                number=q.number,
                qid=q.qid,
                mark=number_text(pools.deal_written(q, deals[0])),
            )
            if shared
            else gettext(
                "The written part of question {number} ({qid}), graded by hand.",
                number=q.number,
                qid=q.qid,
            ),
        )
        if shared:
            points = pools.deal_written(q, deals[0])
            _shared_essay(quiz, doc, q, deals, points)
            flush()
            return
        for v, parts in written:
            if parts:
                suffix = gettext(" (written)") if has_graded else ""
                # a mixed question's written part: its share of the points (written_points)
                _essay(
                    quiz,
                    v,
                    parts,
                    variant_name(v) + suffix,
                    f"{v.qid}:{v.sheet_id}" + (":written" if has_graded else ""),
                    written_points(v, has_graded),
                )
                flush()


def _shared_essay(
    quiz: ET.Element, doc: KeyDoc, q: KeyQuestion, deals: Sequence[Deal], points: float
) -> None:
    """The one essay of a slot whose versions (or a pool's deals) have written parts: its
    text refers to the prompt the graded question showed (by its number in a quiz assembled
    as the guide says: a random question per category, in order), its grader information
    holds each sheet's model answer."""
    number = pools.quiz_numbers(doc)[q.qid]
    text = html.shared_written_text(
        number, q.qid, q.title, points, pools.written_count(deals), " of the quiz"
    )
    first = deals[0].variants[0]
    q_el = _head(
        quiz,
        "essay",
        first,
        gettext("{number}. {qid} (written)", number=q.number, qid=q.qid),
        text,
        "",
        points,
        f"{q.qid}:written",
    )
    _el(q_el, "responseformat", "editor")
    _el(q_el, "responserequired", "1")
    _el(q_el, "responsefieldlines", "10")
    _el(q_el, "attachments", "0")
    _el(q_el, "attachmentsrequired", "0")
    _text(q_el, "graderinfo", html.shared_written_key([(d.sheet_id, d.variants) for d in deals]))
    _text(q_el, "responsetemplate", "")


def write_moodle_xml(doc: KeyDoc, text: Any) -> None:
    """Write the Moodle XML question file of a checked key to a text stream, a question at a
    time."""
    doc = privacy.lms_doc(doc)  # no student's name, id or e-mail
    pools.check_slots(doc, "Moodle")  # every slot it cannot deal, refused at once
    out = html.XmlStream(text, indent="  ", what="a Moodle XML file")
    quiz = ET.Element("quiz")
    about = gettext(
        "worksheetgen export of {title}{notes}: {n} question(s), one category each",
        title=repr(html.markup_text(doc.title)),
        notes=html.key_note(doc),
        n=len(doc.questions),
    )
    quiz.append(ET.Comment(" " + about.replace("--", "- -") + " "))
    out.open(quiz)
    for q in doc.questions:
        _question(quiz, doc, q, out.flush)
    out.close()


class MoodleXml:
    """The Moodle XML exporter (``export --to moodle``): a question bank file."""

    name = "moodle"
    file_name = "moodle.xml"
    binary = False

    def write(self, doc: KeyDoc, stream: Any) -> None:
        """Write the Moodle XML file of a checked key to a text stream."""
        write_moodle_xml(doc, stream)


def _category_name(doc: KeyDoc, q: KeyQuestion, written: bool = False) -> list[str]:
    """The category path of a slot (of its written part), as plain text."""
    return plain.category_name(doc.title, q.number, q.qid, q.title, written)
