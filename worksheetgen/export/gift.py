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
  grader information).
Every text is escaped for GIFT: ``\\`` and the characters ``~ = # { } :``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from worksheetgen.exact.masked import MASKED_SPELLINGS
from worksheetgen.export import html
from worksheetgen.export.moodle import category_path, masked_answers, numeric_answers
from worksheetgen.keyjson.read import (
    Cell,
    KeyDoc,
    KeyPart,
    KeyQuestion,
    Variant,
    category_name,
    choice_feedback,
    gradable_parts,
    number_text,
    variant_name,
    written_parts,
)

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
        + f"{a.value}:{a.tolerance}{_fb(a.feedback or 'Correct.')}"
        for a in numeric_answers(cell)
    ]
    return "{#" + " ".join(alts) + "}"


#: GIFT cannot keep the printed order: Moodle shuffles its options and letters them anew
CHOICE_NOTE = (
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
    alts = [
        ("=" if o == a.value else "~")
        + _lettered(chr(ord("A") + k), html.inline_html(html.markup_text(o)))
        + (fb if o == a.value else "")
        for k, o in enumerate(a.options)
    ]
    return "{" + " ".join(alts) + "}"


def _question(name: str, text_html: str, answer: str) -> str:
    return f"::{gift_escape(name)}::[html]{gift_escape(text_html)}{answer}"


def _text(v: Variant, i: int, part: KeyPart, single: bool, entry: str = "") -> str:
    root = html.question_root()
    html.add_intro(root, v)
    p = html.add_part_prompt(root, i, part, single)
    if entry:
        html.add(p, "br").tail = entry
    if part.answer is not None and any(c.masked for c in part.answer.cells):
        html.add(root, "p", html.MASKED_HINT)
    return html.serialize(root)


def _entry_text(part: KeyPart, cell: Cell) -> str:
    a = part.answer
    assert a is not None
    if a.kind == "scalar":
        return f"Write {html.math(a.label)}."
    return f"Write the entry of {html.math(a.label)} at {cell.label}."


def _one(v: Variant, part: KeyPart) -> str | None:
    """The one GIFT question for a single-part variant, when GIFT can ask it as one."""
    name = variant_name(v)
    if part.choices:
        return _question(name, _text(v, 0, part, True, CHOICE_NOTE), choices_answer(part))
    if part.kind == "choice":
        return _question(name, _text(v, 0, part, True, CHOICE_NOTE), options_answer(part))
    if part.kind == "scalar":
        assert part.answer is not None
        return _question(name, _text(v, 0, part, True), numeric_answer(part.answer.cells[0]))
    return None


def _split(v: Variant, parts: Sequence[KeyPart]) -> Iterator[str]:
    """One GIFT question per entry (and per choice part) of a variant.

    Every question repeats the variant's prompt and given values: that HTML is made and
    escaped once per variant, and only each entry's own paragraph per question.
    """
    single = len(parts) == 1
    root = html.question_root()
    html.add_intro(root, v)
    intro = html.serialize(root)
    end = "</div>"
    assert intro.endswith(end)
    head = gift_escape(intro[: -len(end)])

    def question(name: str, i: int, part: KeyPart, answer: str, entry: str = "") -> str:
        rest = html.question_root()  # holds this question's own paragraphs
        p = html.add_part_prompt(rest, i, part, single)
        if entry:
            html.add(p, "br").tail = entry
        if part.answer is not None and any(c.masked for c in part.answer.cells):
            html.add(rest, "p", html.MASKED_HINT)
        own = "".join(html.serialize(child) for child in rest) + end
        return f"::{gift_escape(name)}::[html]{head}{gift_escape(own)}{answer}"

    for i, part in enumerate(parts):
        letter = "" if single else html.part_letter(i) + " "
        name = f"{variant_name(v)} {letter}".rstrip()
        if part.choices:
            yield question(name, i, part, choices_answer(part), CHOICE_NOTE)
            continue
        if part.kind == "choice":
            yield question(name, i, part, options_answer(part), CHOICE_NOTE)
            continue
        assert part.answer is not None
        for cell in part.answer.cells:
            label = f"{name} {part.answer.name}" + (f" {cell.label}" if cell.label else "")
            yield question(label, i, part, numeric_answer(cell), _entry_text(part, cell))


def _essay(v: Variant, parts: Sequence[KeyPart], suffix: str) -> str:
    root = html.question_root()
    html.add_intro(root, v)
    for i, part in enumerate(parts):
        html.add_part_prompt(root, i, part, len(parts) == 1)
    answer = "{####" + gift_escape(html.key_html(v, parts)) + "}"
    return _question(variant_name(v) + suffix, html.serialize(root), answer)


def entry_marks_note(v: Variant, parts: Sequence[KeyPart]) -> str:
    """A comment giving each entry's mark when key.json gives points per part: GIFT has no
    syntax for a question's mark (Moodle imports each with 1), so the file says what to set."""
    points = v.answer_points()
    each = []
    for i, part in enumerate(parts):
        a = part.answer
        if a is None:
            continue
        n = 1 if part.choices or part.kind == "choice" else len(a.cells)
        share = points[a.name] / n
        exact = 10_000 % share.denominator == 0  # a decimal of at most four places
        mark = number_text(float(share)) if exact else f"{share.numerator}/{share.denominator}"
        each.append(f"{html.part_letter(i)} {mark}" + (f" each of {n}" if n > 1 else ""))
    return (
        f"// {variant_name(v)}: the sheet gives points per part; set each question's mark "
        f"in Moodle to its entry's points ({'; '.join(each)}), as GIFT cannot."
    )


def _category(path: Sequence[str]) -> str:
    return f"$CATEGORY: {category_path(path)}"


def _blocks(doc: KeyDoc, q: KeyQuestion) -> Iterator[str]:
    """The GIFT blocks of one key question, one at a time."""
    graded = [(v, gradable_parts(v)) for v in q.variants]
    has_graded = any(p for _, p in graded)
    base = category_name(doc, q)
    whole = [(v, _one(v, p[0]) if len(p) == 1 else None) for v, p in graded if p]
    if has_graded and all(text is not None for _, text in whole):
        yield _category(base)
        yield from (text for _, text in whole if text is not None)
    elif has_graded:
        yield (
            f"// Question {q.number} ({q.qid}) has matrix, vector or shape answers "
            "or several parts; GIFT has no cloze question, so each entry is its own "
            "question, in one category per variant. Moodle XML keeps it as one "
            "cloze question per variant."
        )
        for v, parts in graded:
            if parts:
                yield _category([*base, v.sheet_id])
                if v.part_points is not None:
                    yield entry_marks_note(v, parts)
                yield from _split(v, parts)
    written = [(v, written_parts(v)) for v in q.variants]
    if any(p for _, p in written):
        yield _category(category_name(doc, q, written=has_graded))
        yield from (_essay(v, p, " (written)" if has_graded else "") for v, p in written if p)


def write_gift(doc: KeyDoc, text: Any) -> None:
    """Write the GIFT file of a checked key to a text stream, a question at a time."""
    title = html.markup_text(doc.title)
    text.write(
        f"// worksheetgen export of {title} (GIFT){html.key_note(doc)}.\n"
        "// Numbers are accepted within the tolerance of their printed digits; "
        "0 % answers name the slip that gives them."
    )
    for q in doc.questions:
        for block in _blocks(doc, q):
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
