"""The rules an LMS export refuses a bank by, checked on the bank itself: before a build
draws a sheet or runs TeX (``build --export``), and by ``check``.

The exports (``export.pools.check_slot``, GIFT's pick) refuse a key whose pool an LMS cannot
deal as the sheets did: one random slot carries one mark for whatever it draws, so every
set of ``pick`` alternatives a sheet can get must be worth the same, in its graded parts and
in its written ones; a pool with graded and written parts is given one shared essay, so
every set must have a written part or none; GIFT has no question holding several, so it
takes no pool of pick 2 or more. Those rules need only each alternative's points and which
of its parts are written: a pool whose alternatives' points differ is refused from the bank
alone; the split into graded and written parts is read from one draw of each alternative
(the parts a question asks do not depend on the draw). The messages are the exports' own,
with the bank's file and line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

from worksheetgen.errors import ExportError
from worksheetgen.model import Bank, Pool, QuestionSpec, SheetIdentity

#: the LMS each bundled export writes for, as its refusals name it
LMS_OF = {"moodle": "Moodle", "gift": "Moodle", "qti": "Canvas"}


@dataclass(frozen=True)
class _Points:
    """One alternative's points: in its graded parts, in its written ones."""

    graded: Fraction
    written: Fraction

    @property
    def total(self) -> Fraction:
        return self.graded + self.written


def _listed(values: Sequence[Fraction]) -> str:
    return ", ".join(f"{round(float(x), 2):g}" for x in sorted(set(values)))


def _split(spec: QuestionSpec, sheet_id: str) -> _Points:
    """``spec``'s points in its graded and its written parts, from one draw (seed 0)."""
    # the drawing machinery only when a bank has a pool whose points need splitting
    from worksheetgen.solve.draw import draw_variant
    from worksheetgen.solve.item import solve_item

    variant = draw_variant(spec, SheetIdentity(0, sheet_id))
    item = solve_item(spec, variant.given, 1, sheet_id, variant=variant)
    kinds = {a.name: a.kind for a in item.solution.answers}
    names = list(dict.fromkeys(p.answer for p in item.solution.parts))
    if spec.part_points:
        points = {n: Fraction(str(p)) for n, p in spec.part_points}
    else:
        share = Fraction(str(spec.points)) / len(names) if names else Fraction(0)
        points = dict.fromkeys(names, share)
    written = {n for n in names if kinds.get(n) == "text" and spec.format != "choice"}
    return _Points(
        sum((points.get(n, Fraction(0)) for n in names if n not in written), Fraction(0)),
        sum((points.get(n, Fraction(0)) for n in written), Fraction(0)),
    )


def _refusal(pool: Pool, message: str) -> ExportError:
    return ExportError(
        message, file=pool.location.file, line=pool.location.line, field=f"pool {pool.id}"
    )


def pool_refusals(bank: Bank, formats: Sequence[str], option: str = "--to") -> list[ExportError]:
    """What the exports ``formats`` (moodle, gift, qti) would refuse in ``bank``'s pools,
    one error each (a format worksheetgen does not bundle is not known here); a refusal
    that names another format names it with ``option`` (``--export`` for a build)."""
    lms = [LMS_OF[f] for f in dict.fromkeys(formats) if f in LMS_OF]
    if not lms:
        return []
    specs = {q.id: q for q in bank.questions}
    out: list[ExportError] = []
    for pool in (e for e in bank.layout if isinstance(e, Pool)):
        if "gift" in formats and pool.pick > 1:
            out.append(
                _refusal(
                    pool,
                    f"expected a pool GIFT can deal as the sheets did, got pick {pool.pick} "
                    "(GIFT has no question holding several, and random questions draw each "
                    f"on its own): export it with {option} moodle (one cloze question per sheet) "
                    "or pick 1",
                )
            )
        if pool.pick >= len(pool.alternatives):
            continue  # every sheet gets them all: one deal
        alternatives = [specs[a] for a in pool.alternatives]
        what = "mark" if lms[0] == "Moodle" else "score"
        totals = [Fraction(str(s.points)) for s in alternatives]
        if len(set(totals)) > 1:  # from the bank alone: nothing drawn
            sums = [sum(c, Fraction(0)) for c in combinations(totals, pool.pick)]
            out.append(
                _refusal(
                    pool,
                    f"expected every sheet's graded points for it to be equal ({lms[0]} gives "
                    f"one {what} to all it draws there), got {_listed(sums)}: give its "
                    "alternatives equal points",
                )
            )
            continue
        split = [_split(s, bank.info.slug) for s in alternatives]
        deals = list(combinations(split, pool.pick))
        graded = [sum((p.graded for p in d), Fraction(0)) for d in deals]
        written = [sum((p.written for p in d), Fraction(0)) for d in deals]
        if any(graded) and any(written):
            without = [s.id for s, p in zip(alternatives, split, strict=True) if not p.written]
            if len(without) >= pool.pick:  # some sheet's set has no written part
                out.append(
                    _refusal(
                        pool,
                        f"expected a written part in every sheet's pool or in none ({lms[0]} "
                        "gives the slot one written question, and a sheet without one would "
                        f"get it too), got {', '.join(without)} without: give the written "
                        "questions a slot of their own",
                    )
                )
                continue
        for part, sums in (("graded", graded), ("written", written)):
            if len(set(sums)) > 1:
                out.append(
                    _refusal(
                        pool,
                        f"expected every sheet's {part} points for it to be equal ({lms[0]} "
                        f"gives one {what} to all it draws there), got {_listed(sums)}: give "
                        "its alternatives points per part whose graded parts total the same "
                        "(and written parts the same)",
                    )
                )
                break
    return out
