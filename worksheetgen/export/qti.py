"""Canvas QTI 1.2: a zip with imsmanifest.xml, the assessment and Canvas's quiz settings.

Each question of the key is a question group (a QTI section with ``selection_number`` 1)
holding one item per variant, so Canvas draws one variant per student. Items:
- one number (scalar)               -> ``numerical_question``: the printed value first (what
  Canvas shows as the answer), then the range value ± tolerance from key.json
- a multiple-choice item (choices)  -> ``multiple_choice_question``, each distractor with
  feedback naming its slip; a pick-one answer (kind choice) likewise
- written parts (kind text)         -> ``essay_question``, model answer as general feedback
- anything else (matrices, vectors, shapes, several parts) -> ``fill_in_multiple_blanks_question``
  with one blank per entry. Canvas compares blanks as text, so each blank accepts every
  decimal with the printed number of digits that lies within the tolerance, as a student
  writes it (0.80, 0.8, 0.800, .80, +0.80 ... for 0.8044 ± 0.005), a masked entry accepts
  -inf, −∞ and "masked", and a choice part accepts its option's letter or text. The question
  text says exactly how to write the numbers.
- the written part of a question with graded parts is worth the written parts' share of its
  points (the sheet's and ``grade``'s split) and the graded item the rest: the quiz totals
  what the key totals. When the question has several versions (or is a pool), each graded
  item asks its own written part and the written group holds one essay for all of them, so
  no draw gives a student another version's written part (pools.shares_written).
"""

from __future__ import annotations

import hashlib
import io
import math
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Sequence
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from fractions import Fraction
from typing import Any, BinaryIO

from worksheetgen.errors import ExportError
from worksheetgen.exact.masked import MASKED_SPELLINGS
from worksheetgen.exact.mathtex import decimals_of
from worksheetgen.export import html, plain, pools, privacy
from worksheetgen.export.route import option_for
from worksheetgen.keyjson.deals import Deal
from worksheetgen.keyjson.records import Cell, KeyDoc, KeyPart, KeyQuestion, Variant
from worksheetgen.keyjson.views import (
    choice_feedback,
    gradable_parts,
    graded_points,
    number_text,
    variant_name,
    written_parts,
    written_points,
)
from worksheetgen.language import gettext, ngettext, said

QTI_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
IMSCP_NS = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
CANVAS_NS = "http://canvas.instructure.com/xsd/cccv1p0"
MAX_ACCEPTED = 200  # blanks accepting more spellings than this mean a tolerance far too wide
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed, so the same key gives the same bytes


def ident(*parts: str) -> str:
    """A stable QTI identifier from the names of what it identifies."""
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=12).hexdigest()
    return "g" + digest


def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    el = ET.SubElement(parent, tag, attrs)
    if text is not None:
        el.text = text
    return el


def _meta(item: ET.Element, fields: Sequence[tuple[str, str]]) -> None:
    md = _el(_el(item, "itemmetadata"), "qtimetadata")
    for label, entry in fields:
        f = _el(md, "qtimetadatafield")
        _el(f, "fieldlabel", label)
        _el(f, "fieldentry", entry)


def _material(parent: ET.Element, text: str, texttype: str = "text/html") -> ET.Element:
    mat = _el(parent, "material")
    _el(mat, "mattext", text, texttype=texttype)
    return mat


def _feedback(item: ET.Element, fid: str, text: str) -> None:
    fb = _el(item, "itemfeedback", ident=fid)
    _material(_el(fb, "flow_mat"), text)


def _general_feedback(res: ET.Element) -> None:
    cond = _el(res, "respcondition", **{"continue": "Yes"})
    _el(_el(cond, "conditionvar"), "other")
    _el(cond, "displayfeedback", feedbacktype="Response", linkrefid="general_fb")


def _outcomes(item: ET.Element) -> ET.Element:
    res = _el(item, "resprocessing")
    _el(
        _el(res, "outcomes"),
        "decvar",
        maxvalue="100",
        minvalue="0",
        varname="SCORE",
        vartype="Decimal",
    )
    return res


def _item(
    section: ET.Element,
    iid: str,
    title: str,
    qtype: str,
    points: float,
    answer_ids: Sequence[str] = (),
) -> ET.Element:
    item = _el(section, "item", ident=iid, title=title)
    _meta(
        item,
        [
            ("question_type", qtype),
            ("points_possible", number_text(points)),
            ("original_answer_ids", ",".join(answer_ids)),
            ("assessment_question_identifierref", ident("ref", iid)),
        ],
    )
    return item


def _intro(v: Variant) -> ET.Element:
    root = html.question_root()
    html.add_intro(root, v)
    return root


# ---------------------------------------------------------------- accepted spellings


def _spellings(k: int, d: int) -> list[str]:
    """The ways a student writes the decimal k / 10**d: as printed, without trailing zeros,
    with one trailing zero more, without the leading 0, with a leading + (or − for -):
    '0.80', '0.8', '0.800', '.80', '+0.80', ...; '2', '2.0', '+2'."""
    full = f"{Decimal(k).scaleb(-d):.{d}f}"
    forms = [full]
    while "." in forms[-1] and forms[-1].endswith("0"):
        forms.append(forms[-1][:-1])
    if forms[-1].endswith("."):
        forms[-1] = forms[-1][:-1]
    forms.append(full + ("0" if "." in full else ".0"))
    out = []
    for f in forms:
        out.append(f)
        if f.startswith(("0.", "-0.")):
            out.append(f.replace("0.", ".", 1))
    if k < 0:
        out += [f.replace("-", "−", 1) for f in list(out)]
    else:  # zero too: every blank promises a leading + (+0.00, +0)
        out += ["+" + f for f in list(out)]
    return list(dict.fromkeys(x for x in out if x not in ("", "-", ".", "-0", "−0")))


def spelling_note(digits: Sequence[int]) -> str:
    """How to write the numbers of a blanks item, exactly as its blanks accept them."""
    ds = sorted(set(digits))
    if ds == [0]:
        return gettext(
            "Canvas compares the text you type: write whole numbers as whole numbers (2); "
            "2.0 and +2 are accepted too."
        )
    d = max(ds)
    listed = str(ds[0])
    for x in ds[1:]:
        listed = gettext("{first} or {last}", first=listed, last=x)
    places = ngettext(
        "{places} decimal place", "{places} decimal places", 1 if ds == [1] else 2, places=listed
    )
    example = f"{Decimal(5).scaleb(-1):.{d}f}"  # 0.5 written to d places: 0.50
    zeros = (
        gettext(
            "{fewer} or {more} for {example}",
            fewer=example.rstrip("0"),
            more=f"{example}0",
            example=example,
        )
        if d > 1
        else f"{example}0"
    )
    return gettext(
        "Canvas compares the text you type: give each number to {places}, as in the printed "
        "key ({example}). Also accepted: trailing zeros left out or one more ({zeros}), no "
        "leading zero ({short}), a leading + (+{example}), − or - for a minus; more digits "
        "are marked wrong.",
        places=places,
        example=example,
        zeros=zeros,
        short=example[1:],
    )


def accepted_texts(cell: Cell, comma: bool = False) -> list[str]:
    """What a blank accepts: every printed-precision decimal within the tolerance (with
    ``comma``, a key printed with a decimal comma: each with a point and with a comma,
    0.25 and 0,25, as grade reads them; Canvas compares the text typed)."""
    if cell.masked:
        return list(MASKED_SPELLINGS)
    assert cell.value is not None
    d = decimals_of(cell.printed)
    scale = Decimal(10) ** d
    v, t = Decimal(repr(cell.value)), Decimal(repr(cell.tolerance))
    lo = ((v - t) * scale).to_integral_value(rounding=ROUND_CEILING)
    hi = ((v + t) * scale).to_integral_value(rounding=ROUND_FLOOR)
    printed_k = (Decimal(cell.printed) * scale).to_integral_value()
    lo, hi = min(lo, printed_k), max(hi, printed_k)  # the key's own value is always accepted
    if hi - lo + 1 > MAX_ACCEPTED:
        raise ExportError(
            f"expected a tolerance of a few printed digits for a Canvas blank, "
            f"got ±{number_text(cell.tolerance)} at {d} decimals"
        )
    out: list[str] = list(_spellings(int(printed_k), d))  # the printed value first
    for k in range(int(lo), int(hi) + 1):
        out += _spellings(k, d)
    if comma:  # the sheet printed 0,25: that spelling first, each point spelling too
        out = [t.replace(".", ",") for t in out if "." in t] + out
    return list(dict.fromkeys(out))


def _decimal_text(x: Decimal) -> str:
    text = format(x, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


# ---------------------------------------------------------------- items


def _numerical(
    section: ET.Element, iid: str, v: Variant, part: KeyPart, ask_written: bool = False
) -> None:
    a = part.answer
    assert a is not None
    cell = a.cells[0]
    assert cell.value is not None
    aid = ident("answer", iid)
    item = _item(section, iid, variant_name(v), "numerical_question", graded_points(v), [aid])
    pres = _el(item, "presentation")
    root = _intro(v)
    html.add_part_prompt(root, 0, part, True)
    if ask_written:
        html.add_written_prompts(root, v, 1)
    _material(pres, html.serialize(root))
    resp = _el(pres, "response_str", ident="response1", rcardinality="Single")
    _el(_el(resp, "render_fib", fibtype="Decimal"), "response_label", ident=aid)
    res = _outcomes(item)
    _general_feedback(res)
    exact = Decimal(repr(cell.value))
    margin = Decimal(repr(cell.tolerance))
    printed = Decimal(cell.printed)
    if printed != exact:
        # first the printed value (Canvas shows it as the answer), then the key's whole
        # margin as a range
        cond = _el(res, "respcondition", **{"continue": "No"})
        alt = _el(_el(cond, "conditionvar"), "or")
        _el(alt, "varequal", format(printed, "f"), respident="response1")
        both = _el(alt, "and")
        _el(both, "vargte", format(printed, "f"), respident="response1")
        _el(both, "varlte", format(printed, "f"), respident="response1")
        _el(cond, "setvar", "100", action="Set", varname="SCORE")
        cond = _el(res, "respcondition", **{"continue": "No"})
        within = _el(cond, "conditionvar")
        _el(within, "vargte", _decimal_text(exact - margin), respident="response1")
        _el(within, "varlte", _decimal_text(exact + margin), respident="response1")
        _el(cond, "setvar", "100", action="Set", varname="SCORE")
    else:
        cond = _el(res, "respcondition", **{"continue": "No"})
        alt = _el(_el(cond, "conditionvar"), "or")
        _el(alt, "varequal", number_text(cell.value), respident="response1")
        both = _el(alt, "and")
        _el(both, "vargte", _decimal_text(exact - margin), respident="response1")
        _el(both, "varlte", _decimal_text(exact + margin), respident="response1")
        _el(cond, "setvar", "100", action="Set", varname="SCORE")
    _feedback(item, "general_fb", html.key_html(v, [part]))


def _multiple_choice(
    section: ET.Element, iid: str, v: Variant, part: KeyPart, ask_written: bool = False
) -> None:
    if part.choices:
        options = [(c.correct, html.choice_text(c), choice_feedback(c)) for c in part.choices]
    else:
        a = part.answer
        assert a is not None
        options = [
            (o in a.right, html.markup_text(o), gettext("Correct.") if o in a.right else "")
            for o in a.options
        ]
    multi = part.answer is not None and part.answer.multi
    ids = [ident("choice", iid, str(k)) for k in range(len(options))]
    qtype = "multiple_answers_question" if multi else "multiple_choice_question"
    item = _item(section, iid, variant_name(v), qtype, graded_points(v), ids)
    pres = _el(item, "presentation")
    root = _intro(v)
    html.add_part_prompt(root, 0, part, True)
    if ask_written:
        html.add_written_prompts(root, v, 1)
    _material(pres, html.serialize(root))
    cardinality = "Multiple" if multi else "Single"
    choice = _el(
        _el(pres, "response_lid", ident="response1", rcardinality=cardinality), "render_choice"
    )
    for cid, (_, text, _fb) in zip(ids, options, strict=True):
        _material(_el(choice, "response_label", ident=cid), html.inline_html(text))
    res = _outcomes(item)
    _general_feedback(res)
    for cid, (_, _, fb) in zip(ids, options, strict=True):
        if fb:
            cond = _el(res, "respcondition", **{"continue": "Yes"})
            _el(_el(cond, "conditionvar"), "varequal", cid, respident="response1")
            _el(cond, "displayfeedback", feedbacktype="Response", linkrefid=f"{cid}_fb")
    cond = _el(res, "respcondition", **{"continue": "No"})
    if multi:  # the right ones marked and no other: Canvas's multiple answers (its weights)
        both = _el(_el(cond, "conditionvar"), "and")
        for cid, (correct, _, _) in zip(ids, options, strict=True):
            if correct:
                _el(both, "varequal", cid, respident="response1")
            else:
                _el(_el(both, "not"), "varequal", cid, respident="response1")
    else:
        right = ids[[c for c, _, _ in options].index(True)]
        _el(_el(cond, "conditionvar"), "varequal", right, respident="response1")
    _el(cond, "setvar", "100", action="Set", varname="SCORE")
    _feedback(item, "general_fb", html.key_html(v, [part]))
    for cid, (_, _, fb) in zip(ids, options, strict=True):
        if fb:
            _feedback(item, f"{cid}_fb", fb)


def _blanks(
    section: ET.Element,
    iid: str,
    v: Variant,
    parts: Sequence[KeyPart],
    ask_written: bool,
    comma: bool = False,
) -> None:
    """A fill-in-multiple-blanks item: one [blank] per entry, choice parts included."""
    _blanks_of(section, iid, [(v, parts)], variant_name(v), ask_written, comma)


def _blanks_of(
    section: ET.Element,
    iid: str,
    sections: Sequence[tuple[Variant, Sequence[KeyPart]]],
    title: str,
    ask_written: bool = False,
    comma: bool = False,
) -> None:
    """A fill-in-multiple-blanks item asking the graded parts of ``sections``: one variant's,
    or a pool's picks on one sheet (each under its own heading), so that one draw of the
    group deals them together. With ``ask_written``, each section's written parts are asked
    there too (answered in the slot's one shared essay); with ``comma``, each blank accepts
    a decimal comma too (:func:`accepted_texts`)."""
    blanks: list[tuple[str, list[str]]] = []
    used: set[str] = set()

    def blank_id(key: str) -> str:
        name = key if key not in used else f"{key}_{len(used)}"
        used.add(name)
        return name

    per_blank: list[Fraction] = []  # each blank's points on the sheet
    share = Fraction(0)

    def cell_blank(cell: Cell) -> str:
        bid = blank_id(cell.key)
        blanks.append((bid, accepted_texts(cell, comma)))
        per_blank.append(share)
        return f"[{bid}]"

    root = html.question_root()
    digits: set[int] = set()
    many = len(sections) > 1
    for n, (v, parts) in enumerate(sections):
        if many:
            heading = f"{v.title} ({number_text(graded_points(v))} point(s))"
            html.add(html.add(root, "p"), "b", heading)
        html.add_intro(root, v)
        single = len(parts) == 1
        for i, (part, share) in enumerate(zip(parts, pools.part_gap_points(v, parts), strict=True)):
            html.add_part_prompt(root, i, part, single)
            if part.choices or part.kind == "choice":
                if part.choices:
                    opts = [(c.label, html.choice_text(c), c.correct) for c in part.choices]
                else:
                    a = part.answer
                    assert a is not None
                    opts = [
                        (chr(ord("A") + k), html.markup_text(o), o == a.value)
                        for k, o in enumerate(a.options)
                    ]
                ul = html.add(root, "ul")
                for label, text, _ in opts:
                    html.add(ul, "li", f"{label}. {text}")
                bid = blank_id(f"choice_{i + 1}" if not many else f"choice_{n + 1}_{i + 1}")
                label, text, _ = next(o for o in opts if o[2])
                blanks.append((bid, list(dict.fromkeys([label, label.lower(), text]))))
                per_blank.append(share)
                html.add(root, "p", gettext("Your choice (letter): {blank}", blank=f"[{bid}]"))
            else:
                a = part.answer
                assert a is not None
                digits |= {decimals_of(c.printed) for c in a.cells if not c.masked}
                html.add_answer_area(root, part, cell_blank)
        if ask_written:
            html.add_written_prompts(root, v, len(parts))
    note = []
    if digits:
        note.append(spelling_note(sorted(digits)))
    if any(html.any_masked(parts) for _, parts in sections):
        note.append(said(html.MASKED_HINT))
    shares = blank_shares(per_blank)
    if len(set(shares)) > 1:
        note.append(canvas_split_note(sections, len(blanks)))
    if note:
        html.add(root, "p", " ".join(note))
    answer_ids = [
        ident("blank", iid, bid, str(k)) for bid, texts in blanks for k in range(len(texts))
    ]
    points = float(sum((Fraction(str(graded_points(v))) for v, _ in sections), Fraction(0)))
    item = _item(
        section,
        iid,
        title,
        "fill_in_multiple_blanks_question",
        points,
        answer_ids,
    )
    pres = _el(item, "presentation")
    _material(pres, html.serialize(root))
    for bid, texts in blanks:
        lid = _el(pres, "response_lid", ident=f"response_{bid}")
        _material(lid, bid, texttype="text/plain")
        choice = _el(lid, "render_choice")
        for k, text in enumerate(texts):
            option = _el(choice, "response_label", ident=ident("blank", iid, bid, str(k)))
            _material(option, text, texttype="text/plain")
    res = _outcomes(item)
    _general_feedback(res)
    for (bid, texts), score in zip(blanks, shares, strict=True):
        # any accepted spelling of a blank adds its share
        cond = _el(res, "respcondition")
        alts = _el(_el(cond, "conditionvar"), "or")
        for k in range(len(texts)):
            _el(alts, "varequal", ident("blank", iid, bid, str(k)), respident=f"response_{bid}")
        _el(cond, "setvar", score, varname="SCORE", action="Add")
    feedback = "".join(html.key_html(v, parts) for v, parts in sections)
    _feedback(item, "general_fb", feedback)


def blank_shares(per_blank: Sequence[Fraction]) -> list[str]:
    """Each blank's share of the item's SCORE (percent, two decimals), in proportion to its
    points on the sheet (a part's points over its blanks; a plain ``points: N`` split equally
    among the answers, as the sheet and ``grade`` split it)."""
    total = sum(per_blank, Fraction(0))
    if not per_blank:
        return []
    if total == 0:
        return [f"{100 / len(per_blank):.2f}"] * len(per_blank)
    return [f"{float(100 * x / total):.2f}" for x in per_blank]


def canvas_split_note(sections: Sequence[tuple[Variant, Sequence[KeyPart]]], blanks: int) -> str:
    """What a fill-in-multiple-blanks item says when its parts' points differ per blank:
    Canvas gives every blank an equal share of the item's points on import, so the item
    states the sheet's points for a teacher to regrade by (the item's total is the sheet's)."""
    each = []
    many = len(sections) > 1
    for v, parts in sections:
        points = v.answer_points()
        head = f"{v.title}: " if many else ""
        each.append(
            head
            + ", ".join(
                f"{html.part_letter(i)} {number_text(float(points[p.answer.name]))}"
                for i, p in enumerate(parts)
                if p.answer is not None
            )
        )
    total = sum((Fraction(str(graded_points(v))) for v, _ in sections), Fraction(0))
    return gettext(
        "Canvas splits this question's {points} points equally among its {blanks} blanks; on "
        "the printed sheet the parts are worth: {parts}.",
        points=number_text(float(total)),
        blanks=blanks,
        parts="; ".join(each),
    )


def _essay(
    section: ET.Element,
    iid: str,
    v: Variant,
    parts: Sequence[KeyPart],
    title: str,
    points: float,
) -> None:
    item = _item(section, iid, title, "essay_question", points)
    pres = _el(item, "presentation")
    root = _intro(v)
    for i, part in enumerate(parts):
        html.add_part_prompt(root, i, part, len(parts) == 1)
    if points != v.points:
        html.add(root, "p", html.written_part_note(v, points))
    _material(pres, html.serialize(root))
    resp = _el(pres, "response_str", ident="response1", rcardinality="Single")
    _el(_el(resp, "render_fib"), "response_label", ident="answer1", rshuffle="No")
    res = _outcomes(item)
    _general_feedback(res)
    cond = _el(res, "respcondition", **{"continue": "No"})
    _el(_el(cond, "conditionvar"), "other")
    _feedback(item, "general_fb", html.key_html(v, parts))


def _shared_essay(
    section: ET.Element,
    iid: str,
    doc: KeyDoc,
    q: KeyQuestion,
    deals: Sequence[Deal],
    points: float,
) -> None:
    """The one essay of a slot whose versions (or a pool's deals) have written parts: its
    text refers to the prompt the graded item showed, its general feedback holds each
    sheet's model answer."""
    item = _item(section, iid, f"{q.number}. {q.qid} (written)", "essay_question", points)
    pres = _el(item, "presentation")
    # the graded question's number as Canvas shows it (a running number over the groups)
    number = pools.quiz_numbers(doc)[q.qid]
    text = html.shared_written_text(
        number, q.qid, q.title, points, pools.written_count(deals), " of the quiz"
    )
    _material(pres, text)
    resp = _el(pres, "response_str", ident="response1", rcardinality="Single")
    _el(_el(resp, "render_fib"), "response_label", ident="answer1", rshuffle="No")
    res = _outcomes(item)
    _general_feedback(res)
    cond = _el(res, "respcondition", **{"continue": "No"})
    _el(_el(cond, "conditionvar"), "other")
    _feedback(
        item, "general_fb", html.shared_written_key([(d.sheet_id, d.variants) for d in deals])
    )


def _graded_item(
    section: ET.Element,
    iid: str,
    v: Variant,
    parts: Sequence[KeyPart],
    ask_written: bool,
    comma: bool = False,
) -> None:
    """A variant's graded parts as one item. With ``comma`` (a key printed with a decimal
    comma) a single number is a blank too: Canvas's numerical question reads a student's
    answer with Ruby's BigDecimal, which takes no comma (0,25 scores as 0), while a blank
    accepts every spelling it lists, 0,25 among them."""
    if len(parts) == 1 and (parts[0].choices or parts[0].kind == "choice"):
        _multiple_choice(section, iid, v, parts[0], ask_written)
    elif len(parts) == 1 and parts[0].kind == "scalar" and not comma:
        _numerical(section, iid, v, parts[0], ask_written)
    else:
        _blanks(section, iid, v, parts, ask_written, comma)


def _group(gid: str, title: str, points: float, pick: int = 1) -> ET.Element:
    """A question group (detached: its items are streamed into it) of which each student
    gets ``pick`` items (a pool's pick; one variant of a question)."""
    section = ET.Element("section", ident=gid, title=title)
    sel = _el(_el(section, "selection_ordering"), "selection")
    _el(sel, "selection_number", str(pick))
    _el(_el(sel, "selection_extension"), "points_per_item", number_text(points))
    return section


def _check_multi(doc: KeyDoc, q: KeyQuestion) -> None:
    """Refuse a mark-all part Canvas would score otherwise than the grader: Canvas's multiple
    answers question docks each wrong mark 1/(number right) of the points (the grader, as
    Moodle: 1/(number wrong)) and always gives partial credit, so only a question with as
    many right options as wrong ones, scored per option and on its own, is the same."""
    for v in q.variants:
        for part in gradable_parts(v):
            a = part.answer
            if a is None or not a.multi:
                continue
            right, wrong = len(a.right), len(a.options) - len(a.right)
            where = f"question {v.qid} (sheet {v.sheet_id})"
            if a.all_or_nothing or q.pick > 1 or right != wrong:
                got = (
                    "all_or_nothing"
                    if a.all_or_nothing
                    else f"pick {q.pick}"
                    if q.pick > 1
                    else f"{right} right and {wrong} wrong"
                )
                raise ExportError(
                    "expected a mark-all question Canvas scores as grade does (as many right "
                    "options as wrong ones, scored per option, on its own: Canvas docks each "
                    f"wrong mark 1/(number right) of the points), got {got}: export it with "
                    f"{option_for('moodle')}",
                    file=doc.source,
                    field=where,
                )


def _question(out: html.XmlStream, aid: str, doc: KeyDoc, q: KeyQuestion) -> float:
    """Write the group(s) of one question, an item at a time; returns the points a student
    can get."""
    deals = pools.check_slot(doc, q, "Canvas")
    _check_multi(doc, q)
    comma = doc.decimal == ","  # the sheets printed 0,25: the blanks accept it
    total = 0.0
    graded = [(v, gradable_parts(v)) for v in q.variants]
    written = [(v, written_parts(v)) for v in q.variants]
    has_graded = any(p for _, p in graded)
    # several deals with a written part: the graded item asks it, one essay answers it
    shared = pools.shares_written(q, deals)
    title = f"{q.number}. {q.qid}: {plain.plain_text(q.title)}"  # a group's name: text
    if has_graded:
        # every deal is worth the same (pools.check_slot): the group gives it to each
        first = deals[0].variants
        points = float(sum((Fraction(str(graded_points(v))) for v in first), Fraction(0)))
        section = _group(ident(aid, "group", q.qid), title, points)
        out.open(section)
        if q.pick > 1:
            for deal in deals:
                sections = [(v, gradable_parts(v)) for v in deal.variants]
                name = f"{q.number}. {q.qid} [{deal.sheet_id}]"
                iid = ident(aid, "item", q.qid, deal.sheet_id)
                _blanks_of(section, iid, sections, name, shared, comma)
                out.flush()
        else:
            for v, parts in graded:
                if parts:
                    iid = ident(aid, "item", *_item_names(q, v))
                    _graded_item(section, iid, v, parts, shared, comma)
                    out.flush()
        out.close()
        total += points
    if any(p for _, p in written):
        wtitle = gettext("{question} (written part)", question=title) if has_graded else title
        # a mixed question's written part is worth its share of the question's points, the
        # graded group the rest, so the quiz totals what the key totals
        points = max(written_points(v, has_graded) for v, p in written if p)
        if shared:  # one essay for every deal (each worth the same: pools.check_slot)
            points = pools.deal_written(q, deals[0])
        section = _group(ident(aid, "group", q.qid, "written"), wtitle, points)
        out.open(section)
        if shared:  # the group of one always gives it
            _shared_essay(section, ident(aid, "item", q.qid, "written"), doc, q, deals, points)
            out.flush()
            out.close()
            return total + points
        for v, parts in written:
            if parts:
                name = variant_name(v) + (gettext(" (written)") if has_graded else "")
                wid = ident(aid, "item", *_item_names(q, v), "written")
                _essay(section, wid, v, parts, name, points)
                out.flush()
        out.close()
        total += points
    return total


def _item_names(q: KeyQuestion, v: Variant) -> tuple[str, ...]:
    """What makes a variant's item identifier: its slot and sheet, and its question id when
    the slot is a pool (a sheet can have several of its alternatives)."""
    return (q.qid, v.sheet_id) if v.qid == q.qid else (q.qid, v.sheet_id, v.qid)


def write_assessment(doc: KeyDoc, aid: str, text: Any) -> float:
    """Write the QTI assessment document to a text stream; returns its total points."""
    out = html.XmlStream(text, what="a QTI assessment")  # not indented: a machine file inside a zip
    root = ET.Element("questestinterop", {"xmlns": QTI_NS})
    out.open(root)
    assessment = ET.Element("assessment", ident=aid, title=plain.plain_text(doc.title))
    md = _el(assessment, "qtimetadata")
    f = _el(md, "qtimetadatafield")
    _el(f, "fieldlabel", "cc_maxattempts")
    _el(f, "fieldentry", "1")
    out.open(assessment)
    out.open(ET.Element("section", ident="root_section"))
    total = sum(_question(out, aid, doc, q) for q in doc.questions)
    for _ in range(3):
        out.close()
    return total


def meta_xml(doc: KeyDoc, aid: str, points: float) -> bytes:
    """Canvas's quiz settings (assessment_meta.xml): title, points, an unpublished quiz."""
    root = ET.Element("quiz", {"identifier": aid, "xmlns": CANVAS_NS})
    _el(root, "title", plain.plain_text(doc.title))  # Canvas lists quiz titles untypeset
    _el(root, "description", gettext("worksheetgen export{notes}", notes=html.key_note(doc)))
    _el(root, "shuffle_answers", "false")
    _el(root, "scoring_policy", "keep_highest")
    _el(root, "quiz_type", "assignment")
    _el(root, "points_possible", number_text(points))
    _el(root, "show_correct_answers", "true")
    _el(root, "allowed_attempts", "1")
    _el(root, "one_question_at_a_time", "false")
    _el(root, "cant_go_back", "false")
    _el(root, "available", "false")
    ET.indent(root, space="  ")
    return html.xml_bytes(root)


def manifest_xml(doc: KeyDoc, aid: str) -> bytes:
    """imsmanifest.xml: the assessment and its Canvas settings as resources."""
    root = ET.Element("manifest", {"identifier": ident("manifest", aid), "xmlns": IMSCP_NS})
    md = _el(root, "metadata")
    _el(md, "schema", "IMS Content")
    _el(md, "schemaversion", "1.1.3")
    _el(root, "organizations")
    res = _el(root, "resources")
    meta_id = ident("meta", aid)
    r = _el(res, "resource", identifier=aid, type="imsqti_xmlv1p2")
    _el(r, "file", href=f"{aid}/{aid}.xml")
    _el(r, "dependency", identifierref=meta_id)
    m = _el(
        res,
        "resource",
        identifier=meta_id,
        type="associatedcontent/imscc_xmlv1p1/learning-application-resource",
        href=f"{aid}/assessment_meta.xml",
    )
    _el(m, "file", href=f"{aid}/assessment_meta.xml")
    ET.indent(root, space="  ")
    return html.xml_bytes(root)


def write_qti_zip(doc: KeyDoc, out: BinaryIO) -> None:
    """Write the Canvas QTI 1.2 package of a checked key to a seekable binary stream (same
    key, same bytes); the assessment is streamed into the zip, never held whole."""
    doc = privacy.lms_doc(doc)  # no student's name, id or e-mail
    pools.check_slots(doc, "Canvas")  # every slot it cannot deal, refused at once
    aid = ident(
        "assessment",
        doc.title,
        *html.build_marks(doc),
        doc.slug,
        *("/".join(_item_names(q, v)) for q in doc.questions for v in q.variants),
    )

    def entry(name: str) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        return info

    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(entry("imsmanifest.xml"), manifest_xml(doc, aid))
        with (
            zf.open(entry(f"{aid}/{aid}.xml"), "w") as raw,
            io.TextIOWrapper(raw, encoding="utf-8", newline="") as text,
        ):
            points = write_assessment(doc, aid, text)
        if not math.isfinite(points):  # pragma: no cover - points are checked finite on load
            raise ExportError(f"expected finite points, got {points}")
        zf.writestr(entry(f"{aid}/assessment_meta.xml"), meta_xml(doc, aid, points))


class CanvasQti:
    """The Canvas QTI 1.2 exporter (``export --to qti``): a zip Canvas imports as a quiz."""

    name = "qti"
    file_name = "canvas-qti.zip"
    binary = True

    def write(self, doc: KeyDoc, stream: Any) -> None:
        """Write the QTI package of a checked key to a seekable binary stream."""
        write_qti_zip(doc, stream)
