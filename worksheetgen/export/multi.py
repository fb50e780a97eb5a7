"""A mark-all-that-apply part in an LMS: each right option's grade and each wrong one's, as
Moodle's multi-answer question scores it (the sum of the options marked, at least 0), or one
line saying why the format cannot.

Moodle accepts only grades of its list (``question_bank::fraction_options_full``: p/q for q
up to 6, tenths, 1/q for q up to 10 and 1/20, to 7 decimals, matched within 0.00001), so a
right option is worth 1/(number right) and a wrong one costs 1/(number wrong) only when each
number is 1 to 10 or 20. An all-or-nothing part has no such grades at all.

May import: keyjson's records, errors.
"""

from __future__ import annotations

from fractions import Fraction

from worksheetgen.errors import ExportError
from worksheetgen.keyjson.records import KeyAnswer, Variant

#: the n of the grades 1/n Moodle's question bank allows
ONE_OVER = frozenset((*range(1, 11), 20))


def percent(share: Fraction) -> str:
    """A grade as Moodle's files write it: percent, whole or to 5 decimals (1/3: 33.33333)."""
    p = share * 100
    if p.denominator == 1:
        return str(p.numerator)
    return f"{float(p):.5f}"


def multi_grades(v: Variant, a: KeyAnswer, fmt: str, source: str) -> tuple[Fraction, Fraction]:
    """The grade of a right option and the (negative) grade of a wrong one, as shares of
    the part; ExportError in one line when ``fmt`` cannot give them."""
    right = len(a.right)
    wrong = len(a.options) - right
    where = f"question {v.qid} (sheet {v.sheet_id})"
    if a.all_or_nothing:
        raise ExportError(
            f"expected a mark-all question scored per option, got all_or_nothing (a {fmt} "
            "multi-answer question adds each marked option's grade, so it cannot give all "
            "or nothing): grade it from the paper with `worksheetgen grade`, or drop "
            "all_or_nothing",
            file=source,
            field=where,
        )
    for n, what in ((right, "right"), (wrong, "wrong")):
        if n not in ONE_OVER:
            raise ExportError(
                f"expected 1 to 10 (or 20) {what} options, got {n} (a {fmt} grade of 1/{n} "
                "is not one Moodle accepts)",
                file=source,
                field=where,
            )
    return Fraction(1, right), -Fraction(1, wrong)
