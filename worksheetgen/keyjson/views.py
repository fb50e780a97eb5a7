"""Views of a checked key that export and grading share: numbers as plain decimals, the
points an LMS gives a question's parts, and the wording of feedback and categories.

May import: the records of ``keyjson.records``, render's markup and the shared modules.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

from worksheetgen.exact.masked import MASKED_TEXT
from worksheetgen.keyjson.records import Choice, KeyDoc, KeyPart, KeyQuestion, Variant
from worksheetgen.language import gettext
from worksheetgen.render.markup import markup_lms

# ---------------------------------------------------------------- numbers


def number_text(x: float) -> str:
    """A float as a plain decimal (never exponent notation), exact to the float's repr."""
    if x == 0:
        return "0"
    d = Decimal(repr(float(x)))
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def is_finite_number(x: Any) -> bool:
    """True for a JSON number a float holds (not a bool, NaN, an infinity or a huge int)."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return False
    return math.isfinite(x) if isinstance(x, float) else abs(x) < 2**1023


def is_masked_text(x: Any) -> bool:
    """True for the masked entry "-inf" (or SymPy's "-oo")."""
    return isinstance(x, str) and x.strip() in MASKED_TEXT


# ---------------------------------------------------------------- shared wording


def slip_sentence(misconceptions: Sequence[str], descriptions: Sequence[str]) -> str:
    """Feedback naming the slip(s) that give a wrong answer, as LMS text (a description's
    math as MathJax's ``\\( … \\)``)."""
    named = []
    for m, d in zip(misconceptions, descriptions, strict=True):
        named.append(f"{m} ({markup_lms(d)})" if d else m)
    if len(named) == 1:
        return gettext("This is what the slip {slip} gives.", slip=named[0])
    return gettext("This is what these slips give: {slips}.", slips="; ".join(named))


def choice_feedback(choice: Choice) -> str:
    """Feedback for one multiple-choice option."""
    if choice.correct:
        return gettext("Correct.")
    if choice.misconception:
        return slip_sentence([choice.misconception], [choice.description])
    return gettext("Not this one.")


def variant_name(v: Variant) -> str:
    """The LMS name of a variant: question id and sheet (never a student's name)."""
    return f"{v.number}. {v.qid} [{v.sheet_id}]"


def gradable_parts(v: Variant) -> tuple[KeyPart, ...]:
    """Parts an LMS can grade by itself: numbers, shapes, choices."""
    return tuple(p for p in v.parts if p.kind != "text")


def written_parts(v: Variant) -> tuple[KeyPart, ...]:
    """Parts answered in words, graded by a person against the model answer."""
    return tuple(p for p in v.parts if p.kind == "text")


def parts_points(v: Variant, parts: Sequence[KeyPart]) -> Fraction:
    """The points ``parts`` of ``v`` are worth together (each answer counted once)."""
    points = v.answer_points()
    names = dict.fromkeys(p.answer.name for p in parts if p.answer is not None)
    return sum((points.get(n, Fraction(0)) for n in names), Fraction(0))


#: decimal places of an LMS mark: Moodle stores a question's mark and a quiz slot's with 7
LMS_MARK_PLACES = 7


def graded_points(v: Variant) -> float:
    """What an LMS gives the parts it grades itself: their share of the question's points,
    by the rule the sheet and ``grade`` use (key.json's per-part points, or a plain
    ``points: N`` split equally among the question's answers, a written one included), to
    the 7 decimal places Moodle keeps (8 points over 9 answers, 8 graded: 7.1111111)."""
    return round(float(parts_points(v, gradable_parts(v))), LMS_MARK_PLACES)


def written_points(v: Variant, has_graded: bool = True) -> float:
    """What an LMS gives the written parts, graded by hand: the rest of the question's
    points after ``graded_points`` (their share by the same rule, 0.8888889 beside
    7.1111111), so the two marks add up to the sheet's points; all of them when the question
    has no graded parts."""
    if not gradable_parts(v):
        return v.points if not has_graded else float(parts_points(v, written_parts(v)))
    if not written_parts(v):
        return 0.0
    return round(v.points - graded_points(v), LMS_MARK_PLACES)


def category_name(doc: KeyDoc, q: KeyQuestion, written: bool = False) -> list[str]:
    """The category path of a question's variants: sheet title, then the question (their
    math as MathJax's ``\\( … \\)``)."""
    leaf = f"{q.number:02d} {q.qid} - {markup_lms(q.title)}"
    if written:
        leaf = gettext("{question} (written part)", question=leaf)
    return [markup_lms(doc.title), leaf]
