"""What one random draw of an LMS may deal for a slot of the key, and when it cannot.

A slot of the key is a question (one variant per sheet) or a pool (each sheet got ``pick`` of
its alternatives). A Moodle random question and a Canvas question group draw questions from
a category or group independently of each other, so the only set a draw can keep together is
one question. The exports therefore give each slot one question per *deal*: what one sheet
printed for the slot (one variant; for a pool of pick 2 or more, that sheet's picks together
in one question), and the quiz draws one deal per student. Every set a student can get is
then a set some sheet printed: distinct alternatives, one version of each.

One random slot carries one mark and one Canvas group one score for every question it draws,
so a student's maximum in the LMS equals their sheet's points only when every deal of the
slot is worth the same; ``check_slot`` refuses a slot whose deals differ, with one line
naming it and what to change. ``deal_points`` is the points per gap (or blank) of a deal,
the sheet's part points (equal shares when the bank gives one number), for the weights.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction

from worksheetgen.errors import ExportError
from worksheetgen.export.route import option_for
from worksheetgen.keyjson.deals import Deal, deals
from worksheetgen.keyjson.records import KeyDoc, KeyPart, KeyQuestion, Variant
from worksheetgen.keyjson.views import (
    gradable_parts,
    number_text,
    parts_points,
    written_parts,
    written_points,
)


def gap_count(part: KeyPart) -> int:
    """How many gaps (blanks) a part has in one question: one per entry, one for a choice."""
    if part.choices or part.kind == "choice" or part.answer is None:
        return 1
    return len(part.answer.cells)


def part_gap_points(v: Variant, parts: Sequence[KeyPart]) -> list[Fraction]:
    """Each part's points per gap: the sheet's part points (key.json's per-part points, or
    the question's points split equally among its answers, as the sheet and ``grade`` split
    a plain ``points: N``) over the part's gaps."""
    points = v.answer_points()
    return [
        points[p.answer.name] / gap_count(p) if p.answer is not None else Fraction(0) for p in parts
    ]


def whole_weights(per_gap: Sequence[Fraction]) -> list[int]:
    """The smallest whole numbers in the proportion of ``per_gap`` (Moodle's gap weights)."""
    if not per_gap:
        return []
    scale = math.lcm(*(w.denominator for w in per_gap))
    whole = [int(w * scale) for w in per_gap]
    common = math.gcd(*whole) or 1
    return [w // common for w in whole]


def _graded(deal: Deal) -> Fraction:
    return sum((parts_points(v, gradable_parts(v)) for v in deal.variants), Fraction(0))


def _written(deal: Deal, has_graded: bool) -> Fraction:
    return sum(
        (
            parts_points(v, written_parts(v)) if has_graded else Fraction(str(v.points))
            for v in deal.variants
            if written_parts(v)
        ),
        Fraction(0),
    )


def _listed(values: Sequence[Fraction]) -> str:
    return ", ".join(number_text(round(float(x), 2)) for x in sorted(set(values)))


def deal_written(q: KeyQuestion, deal: Deal) -> float:
    """What an LMS gives a deal of slot ``q`` for its written parts (graded by hand): see
    ``written_points``."""
    has_graded = any(gradable_parts(v) for v in q.variants)
    marks = (
        Fraction(str(written_points(v, has_graded))) for v in deal.variants if written_parts(v)
    )
    return float(sum(marks, Fraction(0)))


def shares_written(q: KeyQuestion, found: Sequence[Deal]) -> bool:
    """Whether slot ``q`` is exported with one written question for all its deals: it has
    graded and written parts and more than one deal, so separate essays would be drawn apart
    from the graded question (a student could get another version's essay). Its graded
    question then asks the written part, and the one essay answers it."""
    has_graded = any(gradable_parts(v) for v in q.variants)
    has_written = any(written_parts(v) for v in q.variants)
    return has_graded and has_written and len(found) > 1


def check_slot(doc: KeyDoc, q: KeyQuestion, lms: str) -> list[Deal]:
    """The deals of slot ``q``, after checking that ``lms`` (``Moodle``, ``Canvas``) can deal
    them as the sheets did: every deal worth the same points in its graded question and in
    its written part (one random slot carries one mark, one group one score), and, when the
    slot's written part is one shared question (``shares_written``), a written part in every
    deal (a sheet without one would be dealt an essay it never printed). Raises an
    ExportError naming the slot and what to change."""
    found = deals(doc, q)
    kind = "pool" if any(v.qid != q.qid for v in q.variants) else "question"
    where = f"{kind} {q.qid}"
    has_graded = any(gradable_parts(v) for v in q.variants)
    if shares_written(q, found):
        without = [d for d in found if not any(written_parts(v) for v in d.variants)]
        if without:
            names = ", ".join(dict.fromkeys(v.qid for d in without for v in d.variants))
            raise ExportError(
                f"expected a written part in every sheet's {kind} or in none ({lms} gives "
                "the slot one written question, and a sheet without one would get it too), "
                f"got {names} without: give the written questions a slot of their own",
                file=doc.source,
                field=where,
            )
    what = "mark" if lms == "Moodle" else "score"
    for part, sums in (
        ("graded", [_graded(d) for d in found]),
        ("written", [_written(d, has_graded) for d in found]),
    ):
        if len(set(sums)) > 1:
            each = "alternatives" if kind == "pool" else "versions"
            totals = {sum(Fraction(str(v.points)) for v in d.variants) for d in found}
            # equal totals split differently: a plain points: N shares out among the answers,
            # and the alternatives have different numbers of graded and written answers
            fix = (
                f"give its {each} points per part whose graded parts total the same "
                "(and written parts the same)"
                if len(totals) == 1
                else f"give its {each} equal points"
            )
            raise ExportError(
                f"expected every sheet's {part} points for it to be equal ({lms} gives one "
                f"{what} to all it draws there), got {_listed(sums)}: {fix}",
                file=doc.source,
                field=where,
            )
    if lms == "Canvas" and q.pick > 1:
        _check_canvas_picks(doc, q, found)
    return found


def _check_canvas_picks(doc: KeyDoc, q: KeyQuestion, found: Sequence[Deal]) -> None:
    """Refuse a pool of pick 2 or more whose picks Canvas would weigh otherwise than the
    sheet: a sheet's picks are one fill-in-multiple-blanks item (one group draw keeps them
    together), and Canvas's scoring splits an item's points equally among its blanks, whatever
    the item's own scores say (``correct_answer_parts`` counts right blanks). So each pick
    gets its sheet points only where its share of the blanks is its share of the points."""
    for deal in found:
        blanks = [sum(gap_count(p) for p in gradable_parts(v)) for v in deal.variants]
        points = [parts_points(v, gradable_parts(v)) for v in deal.variants]
        total_blanks, total_points = sum(blanks), sum(points, Fraction(0))
        if not total_blanks or not total_points:
            continue
        if all(
            Fraction(b, total_blanks) == p / total_points
            for b, p in zip(blanks, points, strict=True)
        ):
            continue
        each = ", ".join(
            f"{v.qid} {number_text(float(p))} point(s) over {b} blank(s)"
            for v, b, p in zip(deal.variants, blanks, points, strict=True)
        )
        raise ExportError(
            "expected each sheet's picks to keep their points in Canvas, which splits a "
            "sheet's item's points equally among its blanks, got "
            f"{each} (sheet {deal.sheet_id}): give the pool pick 1, or alternatives whose "
            f"points are in proportion to their blanks, or export it with {option_for('moodle')}",
            file=doc.source,
            field=f"pool {q.qid}",
        )


def check_slots(doc: KeyDoc, lms: str, extra: Callable[[KeyQuestion], None] | None = None) -> None:
    """Check every slot of the key before anything is written (``check_slot``, and ``extra``
    for what one format cannot hold), and refuse them all at once: one line naming every
    slot that fails and what to change for each."""
    failed: list[ExportError] = []
    for q in doc.questions:
        try:
            if extra is not None:
                extra(q)
            check_slot(doc, q, lms)
        except ExportError as exc:
            failed.append(exc)
    if not failed:
        return
    first = failed[0]
    rest = "".join(f"; {e.field}: {e.message}" for e in failed[1:])
    raise ExportError(first.message + rest, file=first.file, field=first.field)


def written_count(found: Sequence[Deal]) -> int:
    """The most written parts any deal of a slot has (its shared essay answers them all)."""
    return max((sum(len(written_parts(v)) for v in d.variants) for d in found), default=0)


def quiz_numbers(doc: KeyDoc) -> dict[str, int]:
    """Each slot's graded question's number in the quiz an LMS makes of the export: one
    question per slot's graded parts and one per its written part, in the key's order (a
    Canvas group picks 1 of them; a Moodle quiz gets a random question per category, in the
    order the guide gives), so not the bank's number once a slot has a written part."""
    out: dict[str, int] = {}
    n = 0
    for q in doc.questions:
        graded = any(gradable_parts(v) for v in q.variants)
        written = any(written_parts(v) for v in q.variants)
        n += 1
        out[q.qid] = n
        if graded and written:
            n += 1
    return out
