"""The numbers behind the class report's pictures, from a graded class (no plotting here).

Only students who handed something in are counted, and only the parts marked: a part still
to be marked by hand (a pending mark ``?``, a written part not marked yet) is left out of
every number, never counted as 0 points. ``analyse`` gives: the score histogram (percent of
the points marked, in tenths); per question its facility (the mean share of its marked
points earned) and discrimination (the point-biserial, as item-analysis reports give it:
the correlation of the question's score with the rest of the total, the question's own
points taken out, so a question does not correlate with itself; for an all-or-nothing
question this Pearson correlation is the point-biserial itself); per part its success (mean
share of its points) and how many were right, partly right, wrong, blank or marked by hand;
each slip with the answers and students it reproduced; and per table answer the cells
missed (wrong or left blank), counted over the students whose table has the most common
shape. ``csv_files`` writes each picture's numbers as a CSV.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from worksheetgen.exact.rounding import quantize_half_up
from worksheetgen.grading.csvcells import protect
from worksheetgen.grading.score import GradeResult, StudentResult
from worksheetgen.language import decimal, ngettext, pgettext

#: the histogram's bins: percent of the possible points, 0-10, 10-20, ..., 90-100
BINS = 10


@dataclass(frozen=True)
class QuestionStats:
    id: str
    #: the number every sheet printed it under; None where the sheets numbered it
    #: differently (shuffled or pooled): the report then names it by its id
    number: int | None
    title: str
    students: int
    points: float
    mean: float
    facility: float | None
    #: None when it cannot be computed (fewer than 3 students, or no spread)
    discrimination: float | None

    @property
    def label(self) -> str:
        """How the report names it: ``Q3`` (in the language being rendered: "A3"), or
        ``[q-mask]`` (its id in the bank) where the sheets printed it under different numbers.
        Prose: the CSV files name a question by its id and number."""
        if self.number is None:
            return f"[{self.id}]"
        return pgettext("question label", "Q{number}", number=self.number)


@dataclass(frozen=True)
class PartStats:
    question: str
    answer: str
    part: str
    students: int
    success: float | None
    right: int
    partial: int
    wrong: int
    blank: int
    marked: int


@dataclass(frozen=True)
class SlipStats:
    misconception: str
    description: str
    answers: int
    students: int


@dataclass(frozen=True)
class CellMap:
    """Which cells of one table answer were missed, by how many of ``students``."""

    question: str
    answer: str
    part: str
    rows: int
    cols: int
    students: int
    missed: tuple[tuple[int, ...], ...]
    #: students whose part was marked by hand (a scanned score box, a typed mark) or is
    #: still to mark: a mark holds points, not cells, so they are not counted
    by_hand: int = 0


@dataclass(frozen=True)
class ClassStats:
    students: int
    mean: float | None
    percents: tuple[float, ...]
    histogram: tuple[int, ...]
    questions: tuple[QuestionStats, ...]
    parts: tuple[PartStats, ...]
    slips: tuple[SlipStats, ...]
    cells: tuple[CellMap, ...]
    #: parts still to be marked by hand (left out of every number above)
    to_mark: int = 0
    #: table parts marked by hand (or still to mark): points, no cells for ``cells``
    tables_by_hand: int = 0


def points_text(x: Fraction) -> str:
    """Points rounded half-up to 2 decimals, without trailing zeros (2.67, 3.5, 4)."""
    d = quantize_half_up(Decimal(x.numerator) / Decimal(x.denominator), 2)
    text = f"{d:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def points_shown(x: Fraction) -> str:
    """``points_text`` as a reader sees it in a report's text, with the decimal separator
    being rendered with (the key's: "2,67" for a German key); a CSV keeps ``points_text``."""
    return decimal(points_text(x))


def points_words(x: Fraction) -> str:
    """Points in words: "1 point", "1.5 points", "2.67 points" ("2,67 Punkte")."""
    return ngettext("{n} point", "{n} points", float(x), n=points_shown(x))


def _share(earned: Fraction, possible: Fraction) -> float:
    return float(earned / possible) if possible else 0.0


def _pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    n = len(xs)
    if n < 3:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx <= 1e-12 or syy <= 1e-12:
        return None
    return sxy / math.sqrt(sxx * syy)


def histogram(percents: Sequence[float]) -> tuple[int, ...]:
    """How many scores fall in each tenth (100 % in the last)."""
    counts = [0] * BINS
    for p in percents:
        counts[min(BINS - 1, max(0, int(p // (100 / BINS))))] += 1
    return tuple(counts)


def _question_stats(graded: Sequence[StudentResult]) -> tuple[QuestionStats, ...]:
    order: dict[str, tuple[int, str]] = {}
    printed: dict[str, set[int]] = {}
    for s in graded:
        for q in s.questions:
            order.setdefault(q.id, (q.number, q.title))
            printed.setdefault(q.id, set()).add(q.number)
    firsts = [n for n, _ in order.values()]
    # one number per question, no two questions under one: else no number is the question's
    stable = all(len(v) == 1 for v in printed.values()) and len(set(firsts)) == len(firsts)
    out = []
    for qid, (first, title) in order.items():
        number = first if stable else None
        item: list[float] = []
        points: list[float] = []
        # the discrimination's pairs: students with marked points outside the question too
        pairs: list[tuple[float, float]] = []
        for s in graded:
            found = [x for x in s.questions if x.id == qid]
            if not found or not found[0].marked_points:
                continue  # not drawn, or nothing of it marked yet: left out, not a 0
            q = found[0]
            share = _share(q.earned, q.marked_points)
            item.append(share)
            points.append(float(q.points))
            marked_rest = s.marked_possible - q.marked_points
            if marked_rest:
                # the rest of the total, its parts still to mark left out: the student's
                # share of the rest's marked points, on the scale of the rest's points
                rest_share = (s.earned - q.earned) / marked_rest
                pairs.append((share, float(rest_share * (s.possible - q.points))))
        n = len(item)
        out.append(
            QuestionStats(
                id=qid,
                number=number,
                title=title,
                students=n,
                points=max(points, default=0.0),
                mean=sum(i * p for i, p in zip(item, points, strict=True)) / n if n else 0.0,
                facility=sum(item) / n if n else None,
                discrimination=_pearson([a for a, _ in pairs], [b for _, b in pairs]),
            )
        )
    return tuple(out)


def _part_stats(graded: Sequence[StudentResult]) -> tuple[PartStats, ...]:
    keys: dict[tuple[str, str], str] = {}
    tally: dict[tuple[str, str], dict[str, float]] = {}
    for s in graded:
        for q in s.questions:
            for p in q.parts:
                k = (q.id, p.answer)
                keys.setdefault(k, p.part)
                t = tally.setdefault(k, {"n": 0, "share": 0.0, "graded": 0})
                t["n"] += 1
                status = p.status
                if status == "ungraded":
                    t["ungraded"] = t.get("ungraded", 0) + 1
                    continue
                t["graded"] += 1
                t["share"] += _share(p.earned, p.possible)
                bucket = {"carried": "right"}.get(status, status)
                t[bucket] = t.get(bucket, 0) + 1
    out = []
    for (qid, answer), part in keys.items():
        t = tally[(qid, answer)]
        out.append(
            PartStats(
                question=qid,
                answer=answer,
                part=part,
                students=int(t["n"]),
                success=t["share"] / t["graded"] if t["graded"] else None,
                right=int(t.get("right", 0)),
                partial=int(t.get("partial", 0)),
                wrong=int(t.get("wrong", 0)),
                blank=int(t.get("blank", 0)),
                marked=int(t.get("marked", 0)),
            )
        )
    return tuple(out)


def _cell_maps(graded: Sequence[StudentResult]) -> tuple[CellMap, ...]:
    # per (question, answer): the shapes seen, and per shape the students and missed cells
    seen: dict[tuple[str, str], dict[tuple[int, int], list[tuple[tuple[int, int], ...]]]] = {}
    parts: dict[tuple[str, str], str] = {}
    by_hand: dict[tuple[str, str], int] = {}
    for s in graded:
        for q in s.questions:
            for p in q.parts:
                if p.kind == "matrix" and (p.marked or p.pending):
                    by_hand[(q.id, p.answer)] = by_hand.get((q.id, p.answer), 0) + 1
                if p.kind != "matrix" or p.marked or not p.dims:
                    continue
                parts.setdefault((q.id, p.answer), p.part)
                seen.setdefault((q.id, p.answer), {}).setdefault(p.dims, []).append(p.missed)
    out = []
    for (qid, answer), shapes in seen.items():
        dims, missed_lists = max(shapes.items(), key=lambda kv: (len(kv[1]), kv[0]))
        rows, cols = dims
        grid = [[0] * cols for _ in range(rows)]
        for missed in missed_lists:
            for r, c in missed:
                grid[r][c] += 1
        out.append(
            CellMap(
                question=qid,
                answer=answer,
                part=parts[(qid, answer)],
                rows=rows,
                cols=cols,
                students=len(missed_lists),
                missed=tuple(tuple(row) for row in grid),
                by_hand=by_hand.get((qid, answer), 0),
            )
        )
    return tuple(out)


def analyse(result: GradeResult) -> ClassStats:
    """Every number the class report draws, from the students who handed something in."""
    graded = [s for s in result.students if s.responded]
    # a student's percent of the points marked so far (one with nothing marked yet: none)
    percents = tuple(100 * _share(s.earned, s.marked_possible) for s in graded if s.marked_possible)
    return ClassStats(
        students=len(graded),
        mean=sum(percents) / len(percents) if percents else None,
        percents=percents,
        histogram=histogram(percents),
        questions=_question_stats(graded),
        parts=_part_stats(graded),
        slips=tuple(
            SlipStats(s.misconception, s.description, n, k) for s, n, k in result.slip_counts()
        ),
        cells=_cell_maps(graded),
        to_mark=sum(p.status == "ungraded" for s in graded for q in s.questions for p in q.parts),
        tables_by_hand=sum(
            p.kind == "matrix" and (p.marked or p.pending)
            for s in graded
            for q in s.questions
            for p in q.parts
        ),
    )


def _num(x: float | None) -> str | Decimal:
    """A number to 3 decimals, as a number: a negative one (a discrimination of -0.25) is
    no text a spreadsheet could run, so it is written as it is, never prefixed with '."""
    return "" if x is None else Decimal(f"{x:.3f}")


def _csv(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows([protect(c) if isinstance(c, str) else c for c in row] for row in rows)
    return buf.getvalue()


def csv_files(stats: ClassStats) -> dict[str, str]:
    """Each picture's numbers as CSV text, by file name."""
    width = 100 // BINS
    return {
        "histogram.csv": _csv(
            ["from_percent", "to_percent", "students"],
            [(i * width, (i + 1) * width, n) for i, n in enumerate(stats.histogram)],
        ),
        "questions.csv": _csv(
            ["question", "number", "students", "points", "mean", "facility", "discrimination"],
            [
                (
                    q.id,
                    q.number,
                    q.students,
                    f"{q.points:g}",
                    _num(q.mean),
                    _num(q.facility),
                    _num(q.discrimination),
                )
                for q in stats.questions
            ],
        ),
        "parts.csv": _csv(
            [
                "question",
                "answer",
                "part",
                "students",
                "success",
                "right",
                "partial",
                "wrong",
                "blank",
                "marked",
            ],
            [
                (
                    p.question,
                    p.answer,
                    p.part,
                    p.students,
                    _num(p.success),
                    p.right,
                    p.partial,
                    p.wrong,
                    p.blank,
                    p.marked,
                )
                for p in stats.parts
            ],
        ),
        "slips.csv": _csv(
            ["misconception", "answers", "students"],
            [(s.misconception, s.answers, s.students) for s in stats.slips],
        ),
        "cells.csv": _csv(
            ["question", "answer", "row", "column", "students", "missed"],
            [
                (m.question, m.answer, r + 1, c + 1, m.students, m.missed[r][c])
                for m in stats.cells
                for r in range(m.rows)
                for c in range(m.cols)
            ],
        ),
    }
