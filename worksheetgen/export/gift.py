"""GIFT: Moodle's plain-text question format, for what it can express.

GIFT has numerical questions with a tolerance (``{#=0.80:0.005}``), multiple choice with
per-answer feedback, short answer and essay, but no cloze. So:
- a one-number question is one numerical question, and a multiple-choice item or a pick-one
  answer is one multiple-choice question, in a category per question (one per variant there);
- a question with a matrix, a vector, a shape or several parts becomes one question per entry
  (a masked −∞ entry is a short-answer question accepting -inf, −∞ or "masked"), each showing
  the whole prompt, in a category per variant, because a random pick must not mix variants;
  a comment in the file says so. Moodle XML keeps such a question as one cloze question.
- written parts are essay questions with the model answer as general feedback (GIFT has no
  grader information); a question with several versions asks its written part in each
  graded question and has one essay for all, as the Moodle XML export does.
Every text is escaped for GIFT: ``\\`` and the characters ``~ = # { } :``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import Any

from worksheetgen.errors import ExportError
from worksheetgen.exact.masked import MASKED_SPELLINGS
from worksheetgen.export import html, plain, pools, privacy
from worksheetgen.export.moodle import category_path, masked_answers, numeric_answers
from worksheetgen.export.multi import multi_grades, percent
from worksheetgen.export.route import option_for
from worksheetgen.keyjson.deals import Deal
from worksheetgen.keyjson.records import Cell, KeyDoc, KeyPart, KeyQuestion, Variant
from worksheetgen.keyjson.views import (
    choice_feedback,
    gradable_parts,
    number_text,
    parts_points,
    variant_name,
    written_parts,
)
from worksheetgen.language import N_, gettext, said

_SPECIAL = "~=#{}:"


def gift_escape(text: str) -> str:
    """Text that GIFT reads back as written: backslash first, then ~ = # { } :, one line."""
    out = text.replace("\\", "\\\\")
    for ch in _SPECIAL:
        out = out.replace(ch, "\\" + ch)
    return " ".join(out.replace("\r", " ").replace("\n", " ").split(" "))


def _fb(text: str) -> str:
    """Feedback (HTML, as the question's text), kept off Moodle's filters."""
    return f"#{gift_escape(html.protected_html(text))}" if text else ""


def numeric_answer(cell: Cell) -> str:
    """The answer block of one number (the answers Moodle XML gives it, in the same order),
    or of one masked entry (short answer)."""
    if cell.masked:
        alts = [f"={gift_escape(s)}" for s in MASKED_SPELLINGS]
        for text, feedback in masked_answers(cell):
            alts.append(f"=%0%{gift_escape(text)}{_fb(feedback)}")
        return "{" + " ".join(alts) + "}"
    alts = [
        ("=" if a.fraction == 100 else "=%0%")
        + f"{a.value}:{a.tolerance}{_fb(a.feedback or gettext('Correct.'))}"
        for a in numeric_answers(cell)
    ]
    return "{#" + " ".join(alts) + "}"


#: GIFT cannot keep the printed order: Moodle shuffles its options and letters them anew
CHOICE_NOTE = N_(
    "Each option starts with its letter on the printed sheet; Moodle may show the options "
    "in another order, with letters of its own."
)


def _lettered(label: str, text_html: str) -> str:
    """An option's HTML led by its printed letter ("B. ...")."""
    return gift_escape(html.protected_html(f"{label}. ") + text_html)


def choices_answer(part: KeyPart) -> str:
    """The answer block of a multiple-choice item, each option led by its printed letter,
    feedback naming each slip."""
    alts = []
    for c in part.choices:
        mark = "=" if c.correct else "~"
        text = html.inline_html(html.choice_text(c))
        alts.append(f"{mark}{_lettered(c.label, text)}{_fb(choice_feedback(c))}")
    return "{" + " ".join(alts) + "}"


def options_answer(part: KeyPart) -> str:
    """The answer block of a pick-one answer (kind choice), each option led by its letter."""
    a = part.answer
    assert a is not None
    fb = _fb(html.markup_text(a.explanation)) if a.explanation else ""
    if a.multi:  # mark all that apply: each option's weight (checked by _check_multi)
        right, wrong = (
            percent(1 / Fraction(len(a.right))),
            percent(-1 / Fraction(len(a.options) - len(a.right))),
        )
        return (
            "{"
            + " ".join(
                f"~%{right if o in a.right else wrong}%"
                + _lettered(chr(ord("A") + k), html.inline_html(html.markup_text(o)))
                + (fb if o in a.right else "")
                for k, o in enumerate(a.options)
            )
            + "}"
        )
    alts = [
        ("=" if o == a.value else "~")
        + _lettered(chr(ord("A") + k), html.inline_html(html.markup_text(o)))
        + (fb if o == a.value else "")
        for k, o in enumerate(a.options)
    ]
    return "{" + " ".join(alts) + "}"


def _question(name: str, text_html: str, answer: str) -> str:
    return f"::{gift_escape(name)}::[html]{gift_escape(text_html)}{answer}"


def with_general_feedback(answer: str, v: Variant, parts: Sequence[KeyPart]) -> str:
    """An answer block ``{...}`` with the key of ``parts`` as the question's general feedback
    (GIFT's ``####``), as the Moodle XML export gives every question."""
    assert answer.endswith("}")
    return f"{answer[:-1]} ####{gift_escape(html.key_html(v, parts))}}}"


def _text(
    v: Variant, i: int, part: KeyPart, single: bool, entry: str = "", ask_written: bool = False
) -> str:
    root = html.question_root()
    html.add_intro(root, v)
    p = html.add_part_prompt(root, i, part, single)
    if entry:
        html.add(p, "br").tail = entry
    if part.answer is not None and any(c.masked for c in part.answer.cells):
        html.add(root, "p", said(html.MASKED_HINT))
    if ask_written:
        html.add_written_prompts(root, v, 1)
    return html.serialize(root)


def _entry_text(part: KeyPart, cell: Cell) -> str:
    a = part.answer
    assert a is not None
    if a.kind == "scalar":
        return gettext("Write {label}.", label=html.math(a.label))
    return gettext(
        "Write the entry of {label} at {cell}.", label=html.math(a.label), cell=cell.label
    )


def _one(v: Variant, part: KeyPart, ask_written: bool = False) -> str | None:
    """The one GIFT question for a single-part variant, when GIFT can ask it as one."""
    name = variant_name(v)
    if part.choices:
        answer, note = choices_answer(part), said(CHOICE_NOTE)
    elif part.kind == "choice":
        answer, note = options_answer(part), said(CHOICE_NOTE)
    elif part.kind == "scalar":
        assert part.answer is not None
        answer, note = numeric_answer(part.answer.cells[0]), ""
    else:
        return None
    text = _text(v, 0, part, True, note, ask_written)
    return _question(name, text, with_general_feedback(answer, v, [part]))


def _split(v: Variant, parts: Sequence[KeyPart], ask_written: bool = False) -> Iterator[str]:
    """One GIFT question per entry (and per choice part) of a variant.

    Every question repeats the variant's prompt and given values: that HTML is made and
    escaped once per variant, and only each entry's own paragraph per question. With
    ``ask_written``, the last one asks the variant's written parts too (answered in the
    slot's one shared essay).
    """
    single = len(parts) == 1
    root = html.question_root()
    html.add_intro(root, v)
    intro = html.serialize(root)
    end = "</div>"
    assert intro.endswith(end)
    head = gift_escape(intro[: -len(end)])

    last = len(parts) - 1

    def question(
        name: str, i: int, part: KeyPart, answer: str, entry: str = "", end_of: bool = True
    ) -> str:
        rest = html.question_root()  # holds this question's own paragraphs
        p = html.add_part_prompt(rest, i, part, single)
        if entry:
            html.add(p, "br").tail = entry
        if part.answer is not None and any(c.masked for c in part.answer.cells):
            html.add(rest, "p", said(html.MASKED_HINT))
        if ask_written and i == last and end_of:
            html.add_written_prompts(rest, v, len(parts))
        own = "".join(html.serialize(child) for child in rest) + end
        answer = with_general_feedback(answer, v, parts)
        return f"::{gift_escape(name)}::[html]{head}{gift_escape(own)}{answer}"

    for i, part in enumerate(parts):
        letter = "" if single else html.part_letter(i) + " "
        name = f"{variant_name(v)} {letter}".rstrip()
        if part.choices:
            yield question(name, i, part, choices_answer(part), said(CHOICE_NOTE))
            continue
        if part.kind == "choice":
            yield question(name, i, part, options_answer(part), said(CHOICE_NOTE))
            continue
        assert part.answer is not None
        cells = part.answer.cells
        for k, cell in enumerate(cells):
            label = f"{name} {part.answer.name}" + (f" {cell.label}" if cell.label else "")
            entry = _entry_text(part, cell)
            yield question(label, i, part, numeric_answer(cell), entry, k == len(cells) - 1)


def _essay(v: Variant, parts: Sequence[KeyPart], suffix: str) -> str:
    root = html.question_root()
    html.add_intro(root, v)
    for i, part in enumerate(parts):
        html.add_part_prompt(root, i, part, len(parts) == 1)
    answer = "{####" + gift_escape(html.key_html(v, parts)) + "}"
    return _question(variant_name(v) + suffix, html.serialize(root), answer)


def entry_marks(v: Variant, parts: Sequence[KeyPart]) -> list[Fraction]:
    """Each graded part's mark per entry in Moodle, exactly: the sheet's part points over the
    part's entries (a plain ``points: N`` split equally among the answers, as the sheet and
    ``grade`` split it), scaled so the entries total what the LMS gives the graded parts."""
    per_gap = pools.part_gap_points(v, parts)
    whole = sum((g * pools.gap_count(p) for g, p in zip(per_gap, parts, strict=True)), Fraction(0))
    target = parts_points(v, parts)
    return [g * target / whole if whole else g for g in per_gap]


def mark_scale(doc: KeyDoc) -> int:
    """What every mark of the file is multiplied by so that each can be typed (Moodle's mark
    field takes a decimal: 0.5 can be typed, 1/6 cannot): 1 when every mark can already."""
    denominators = [1]
    for q in doc.questions:
        for v in q.variants:
            graded = gradable_parts(v)
            if graded:
                denominators += [m.denominator for m in entry_marks(v, graded)]
                denominators.append(parts_points(v, graded).denominator)
            if written_parts(v):
                denominators.append(_written_mark(v, bool(graded)).denominator)
    return math.lcm(*(_undecimal(d) for d in denominators))


def _written_mark(v: Variant, has_graded: bool) -> Fraction:
    """The written parts' points of ``v``, exactly (the sheet's split; GIFT's marks are
    scaled so that a third can be typed): see ``written_points``."""
    if not gradable_parts(v) and not has_graded:
        return Fraction(str(v.points))
    return parts_points(v, written_parts(v))


def _undecimal(d: int) -> int:
    """The part of a denominator no decimal of at most 7 places can write (1 for 2, 4, 5, 8,
    ...: 0.5 is typed as it is; 3 for 6: 1/6 is not)."""
    rest = d
    for p in (2, 5):
        while rest % p == 0:
            rest //= p
    return rest if 10**7 % (d // rest) == 0 else d


def _mark(x: Fraction, scale: int) -> str:
    return number_text(float(x * scale))


def marks_header(doc: KeyDoc, scale: int) -> str:
    """The file's note on marks: Moodle imports every GIFT question with mark 1."""
    if scale == 1:
        return "// " + gettext(
            "Marks: GIFT cannot state a question's mark (Moodle imports each with 1); set "
            "each question's mark in the quiz to the mark the comment before its category "
            "gives, the sheet's points."
        )
    total = sum((Fraction(str(v.points)) for v in doc.sheets[0].variants), Fraction(0))
    return "// " + gettext(
        "Marks: GIFT cannot state a question's mark (Moodle imports each with 1); set each "
        "question's mark in the quiz to the number the comment before its category gives "
        "(the sheet's points times {scale}: some are fractions no decimal writes, like 1/3), "
        "then the quiz's maximum grade to {total}, the sheet's total: Moodle scales the marks "
        "back to the sheet's points.",
        scale=scale,
        total=_mark(total, 1),
    )


def entry_marks_note(v: Variant, parts: Sequence[KeyPart], scale: int = 1) -> str:
    """A comment giving each entry's mark (times ``scale``, a decimal): GIFT has no
    syntax for a question's mark (Moodle imports each with 1), so the file says what to set."""
    each = []
    for i, (part, mark) in enumerate(zip(parts, entry_marks(v, parts), strict=True)):
        if part.answer is None:
            continue
        n = pools.gap_count(part)
        each.append(
            gettext(
                "{part} {mark} each of {n}",
                part=html.part_letter(i),
                mark=_mark(mark, scale),
                n=n,
            )
            if n > 1
            else f"{html.part_letter(i)} {_mark(mark, scale)}"
        )
    return "// " + gettext(
        "{name}: set each question's mark to its entry's mark ({marks}), as GIFT cannot.",
        name=variant_name(v),
        marks="; ".join(each),
    )


def _category(path: Sequence[str]) -> str:
    return f"$CATEGORY: {category_path(path)}"


def _check_pick(doc: KeyDoc, q: KeyQuestion) -> None:
    """Refuse a pool of pick 2 or more, which GIFT cannot deal as the sheets did."""
    if q.pick > 1:
        # GIFT has no cloze: a sheet's picks cannot be one question, and random questions
        # from a category draw each on its own
        raise ExportError(
            f"expected a pool GIFT can deal as the sheets did, got pick {q.pick} (GIFT has no "
            "question holding several, and random questions draw each on its own): export "
            f"it with {option_for('moodle')} (one cloze question per sheet) or pick 1",
            file=doc.source,
            field=f"pool {q.qid}",
        )


def _check_multi(doc: KeyDoc, q: KeyQuestion) -> None:
    """Refuse a mark-all part GIFT cannot weigh as the grader scores it: all or nothing, a
    number of right or wrong options whose 1/n Moodle does not accept, or one right option
    (Moodle makes a GIFT question whose one answer is 100% pick-one, which the sheet's
    "mark all that apply" is not)."""
    for v in q.variants:
        for part in gradable_parts(v):
            a = part.answer
            if a is None or not a.multi:
                continue
            multi_grades(v, a, "GIFT", doc.source)
            if len(a.right) == 1:
                raise ExportError(
                    "expected a mark-all question with at least 2 right options for GIFT, "
                    "got 1 (Moodle makes a GIFT question with one full-mark answer pick-one): "
                    f"export it with {option_for('moodle')}",
                    file=doc.source,
                    field=f"question {v.qid} (sheet {v.sheet_id})",
                )


def _blocks(doc: KeyDoc, q: KeyQuestion, scale: int = 1) -> Iterator[str]:
    """The GIFT blocks of one key question, one at a time."""
    _check_pick(doc, q)
    _check_multi(doc, q)
    found = pools.check_slot(doc, q, "Moodle")
    # several versions with a written part: the graded question asks it, one essay answers it
    shared = pools.shares_written(q, found)
    graded = [(v, gradable_parts(v)) for v in q.variants]
    has_graded = any(p for _, p in graded)
    base = _category_name(doc, q)
    whole = [(v, _one(v, p[0], shared) if len(p) == 1 else None) for v, p in graded if p]
    if has_graded and all(text is not None for _, text in whole):
        first = whole[0][0]
        mark = parts_points(first, gradable_parts(first))
        yield "// " + gettext(
            "Question {number} ({qid}): mark {mark} each.",
            number=q.number,
            qid=q.qid,
            mark=_mark(mark, scale),
        )
        yield _category(base)
        yield from (text for _, text in whole if text is not None)
    elif has_graded:
        yield "// " + gettext(
            "Question {number} ({qid}) has matrix, vector or shape answers or several parts; "
            "GIFT has no cloze question, so each entry is its own question, in one category "
            "per variant. Moodle XML keeps it as one cloze question per variant.",
            number=q.number,
            qid=q.qid,
        )
        for v, parts in graded:
            if parts:
                yield _category([*base, v.sheet_id])
                yield entry_marks_note(v, parts, scale)
                yield from _split(v, parts, shared)
    written = [(v, written_parts(v)) for v in q.variants]
    if any(p for _, p in written):
        w = _written_mark(next(v for v, p in written if p), has_graded)
        yield "// " + gettext(
            "Question {number} ({qid}), written part: mark {mark} each.",
            number=q.number,
            qid=q.qid,
            mark=_mark(w, scale),
        )
        yield _category(_category_name(doc, q, has_graded))
        if shared:
            yield _shared_essay(q, found, float(w))
            return
        yield from (
            _essay(v, p, gettext(" (written)") if has_graded else "") for v, p in written if p
        )


def _shared_essay(q: KeyQuestion, found: Sequence[Deal], points: float) -> str:
    """The one essay of a question whose versions have written parts: its text refers to the
    prompt the graded question showed, its general feedback holds each sheet's model answer
    (GIFT has no grader information)."""
    key = html.shared_written_key([(d.sheet_id, d.variants) for d in found])
    text = html.shared_written_text(q.number, q.qid, q.title, points, pools.written_count(found))
    return _question(
        gettext("{number}. {qid} (written)", number=q.number, qid=q.qid),
        text,
        "{####" + gift_escape(key) + "}",
    )


def write_gift(doc: KeyDoc, text: Any) -> None:
    """Write the GIFT file of a checked key to a text stream, a question at a time."""
    doc = privacy.lms_doc(doc)  # no student's name, id or e-mail
    pools.check_slots(doc, "Moodle", lambda q: _check_pick(doc, q))  # every refusal at once
    title = html.markup_text(doc.title)
    text.write(
        "// "
        + gettext(
            "worksheetgen export of {title} (GIFT){notes}.", title=title, notes=html.key_note(doc)
        )
        + "\n// "
        + gettext(
            "Numbers are accepted within the tolerance of their printed digits; {zero} answers "
            "name the slip that gives them.",
            zero="0 %",
        )
    )
    scale = mark_scale(doc)
    text.write("\n" + marks_header(doc, scale))
    for q in doc.questions:
        for block in _blocks(doc, q, scale):
            text.write("\n\n" + block)
    text.write("\n")


class Gift:
    """The GIFT exporter (``export --to gift``): a text file Moodle imports."""

    name = "gift"
    file_name = "gift.txt"
    binary = False

    def write(self, doc: KeyDoc, stream: Any) -> None:
        """Write the GIFT file of a checked key to a text stream."""
        write_gift(doc, stream)


def _category_name(doc: KeyDoc, q: KeyQuestion, written: bool = False) -> list[str]:
    """The category path of a slot (of its written part), as plain text."""
    return plain.category_name(doc.title, q.number, q.qid, q.title, written)
