"""``worksheetgen check``: validate banks and stress-draw every item over many seeds.

For each question the checker draws ``stress`` seeds (0, 1, ...) on the bank's sheet id, each
exactly as a build would (draw with distinguishability redraws, solve, misconceptions,
invariants), and records failures, redraws, invariant violations, how far apart the variants
are (the spread of a meaningful number, so variants are equally hard) and the time per draw.
Nothing here prints: the CLI formats the report.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from worksheetgen.attention import slips as mc
from worksheetgen.bank.load import default_bank_path, load_banks
from worksheetgen.errors import DrawError, InvariantError, WorksheetgenError
from worksheetgen.exact.number import Ex, is_zero
from worksheetgen.model import QuestionSpec, SheetIdentity
from worksheetgen.pipeline.lmsrules import LMS_OF, pool_refusals
from worksheetgen.resources import data_dir
from worksheetgen.solve.draw import Variant, draw_variant, margin_slips
from worksheetgen.solve.item import solve_item

DEFAULT_STRESS = 200
MAX_MESSAGES = 3
#: ``check --stress`` with no number: every bundled bank, these seeds, at these decimals
SWEEP_SEEDS = 50
SWEEP_DECIMALS = (0, 1, 2, 3, 4)


@dataclass(frozen=True)
class Spread:
    """Minimum, median and maximum of one number over the draws of an item."""

    measure: str
    low: float
    median: float
    high: float

    @classmethod
    def of(cls, measure: str, values: Sequence[float]) -> Spread | None:
        """The spread of ``values`` (None when there are none)."""
        if not values:
            return None
        return cls(measure, min(values), statistics.median(values), max(values))


#: a softmax row counts as near-uniform when its largest weight is below 1/n + this (n
#: live keys): the student learns nothing from which key won
NEAR_UNIFORM = 0.05


@dataclass(frozen=True)
class RowSpread:
    """How informative the softmax rows of a draw are: rows with two or more live keys,
    those that are near-uniform (largest weight below 1/n + ``NEAR_UNIFORM``), those that
    are exactly uniform (all their scores equal), and each row's largest weight."""

    rows: int = 0
    near_uniform: int = 0
    all_equal: int = 0
    peaks: tuple[float, ...] = ()

    def __add__(self, other: RowSpread) -> RowSpread:
        return RowSpread(
            self.rows + other.rows,
            self.near_uniform + other.near_uniform,
            self.all_equal + other.all_equal,
            self.peaks + other.peaks,
        )

    def share(self, count: int) -> float:
        """``count`` as a share of the rows (0 without rows)."""
        return count / self.rows if self.rows else 0.0

    @property
    def median_peak(self) -> float | None:
        """The median largest weight of a row (None without rows)."""
        return statistics.median(self.peaks) if self.peaks else None


#: a pick-one choice set gives itself away when its right option is the longest, or this
#: many times the mean length of its options or more
LONG_RATIO = 1.2


@dataclass(frozen=True)
class ChoiceBias:
    """How much the length of one pick-one choice set's options gives the answer away: a
    student who picks the longest (most specific) option should not be right for it."""

    answer: str
    options: int
    #: the right option is strictly the longest
    right_longest: bool
    #: the right option's length over the mean length of all the options
    ratio: float

    @property
    def biased(self) -> bool:
        """The right option stands out by its length."""
        return self.right_longest or self.ratio >= LONG_RATIO


def choice_bias(answer: str, right: str, options: Sequence[str]) -> ChoiceBias:
    """The length bias of one choice set (``right`` is one of ``options``)."""
    lengths = [len(o) for o in options]
    others = [len(o) for o in options if o != right]
    mean = statistics.fmean(lengths)
    return ChoiceBias(
        answer=answer,
        options=len(options),
        right_longest=bool(others) and len(right) > max(others),
        ratio=len(right) / mean if mean else 1.0,
    )


@dataclass(frozen=True)
class ItemReport:
    """What stress-drawing one question found."""

    id: str
    family: str
    where: str
    format: str
    draws: int
    failures: int = 0
    failure_messages: tuple[str, ...] = ()
    invariant_violations: int = 0
    invariant_messages: tuple[str, ...] = ()
    redraws: int = 0
    max_redraws: int = 0
    redrawn_draws: int = 0
    fixed: bool = False
    coincident: tuple[str, ...] = ()
    #: drawn variants that kept slips within the key's margin (no draw kept them all apart)
    coincident_draws: int = 0
    distinct_variants: int = 0
    slips: tuple[str, ...] = ()
    spread: Spread | None = None
    closest_slip: Spread | None = None
    ms_per_draw: float = 0.0
    ms_max: float = 0.0
    #: draws that kept a slip (offered as a distractor) whose answer passes for right
    inside_margin: int = 0
    inside_messages: tuple[str, ...] = ()
    #: failures because no draw lets every slip be told apart at these decimals
    unavoidable: int = 0
    #: the softmax rows of every draw: how many are near-uniform or all-equal
    rows: RowSpread = field(default_factory=RowSpread)
    #: draws with at least one all-equal softmax row
    equal_draws: int = 0
    #: every distinct pick-one choice set its draws asked (text options), by answer name
    choice_sets: tuple[ChoiceBias, ...] = ()

    @property
    def ok(self) -> bool:
        """No failure, no invariant violation and no kept slip inside the margin."""
        return self.failures == 0 and self.invariant_violations == 0 and self.inside_margin == 0

    @property
    def named(self) -> bool:
        """Draws where the question could not keep every slip apart, and says so (the build
        stops with that error, or lists the slips as coinciding)."""
        return bool(self.unavoidable or self.coincident_draws or (self.fixed and self.coincident))


@dataclass(frozen=True)
class CheckReport:
    """The whole check: which banks, how many seeds, one report per question."""

    banks: tuple[str, ...]
    stress: int
    items: tuple[ItemReport, ...] = field(default_factory=tuple)
    #: what an LMS export would refuse in the banks (``lmsrules``), one error line each
    refusals: tuple[str, ...] = ()
    #: the exports asked for (``check --export``): their refusals fail the check
    exports: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when every item passed every draw, and no export asked for refuses the banks."""
        return all(i.ok for i in self.items) and not (self.exports and self.refusals)

    @property
    def draws(self) -> int:
        """Draws made in total."""
        return sum(i.draws for i in self.items)


def _finite_cells(value: Any) -> list[float]:
    out = []
    for c in mc.cells(value):
        if isinstance(c, Ex):
            if not c.is_neg_inf:
                out.append(float(c.val))
        elif isinstance(c, int | float) and not isinstance(c, bool):
            out.append(float(c))
    return out


def _live_rows(a: Any) -> list[list[float]]:
    rows = a if a and isinstance(a[0], list) else [a]
    return [[float(w.val) for w in row if isinstance(w, Ex) and not is_zero(w)] for row in rows]


def difficulty(variant: Variant) -> tuple[str, float] | None:
    """A number that says how hard a variant is, comparable across the draws of one item.

    For attention weights: the largest weight among rows with two or more live keys (how
    peaked the softmax is; a row with one live key is always 1). Otherwise the largest
    magnitude in the target answer.
    """
    fp = variant.fingerprints
    if fp is None:
        return None
    a = fp.correct.get("A")
    if isinstance(a, list) and a:
        peaks = [max(r) for r in _live_rows(a) if len(r) >= 2]
        if peaks:
            return "largest weight", max(peaks)
    cells = _finite_cells(fp.correct.get(fp.target))
    if cells:
        return f"largest |{fp.target}|", max(abs(c) for c in cells)
    return None


def row_spread(variant: Variant) -> RowSpread:
    """The softmax rows of one draw's right answer (``A``), as ``RowSpread`` counts them;
    empty for a question without attention weights."""
    fp = variant.fingerprints
    a = None if fp is None else fp.correct.get("A")
    if not (isinstance(a, list) and a):
        return RowSpread()
    rows = [r for r in _live_rows(a) if len(r) >= 2]
    peaks = tuple(max(r) for r in rows)
    return RowSpread(
        rows=len(rows),
        near_uniform=sum(max(r) < 1 / len(r) + NEAR_UNIFORM for r in rows),
        all_equal=sum(max(r) - min(r) < 1e-12 for r in rows),
        peaks=peaks,
    )


def closest_slip(variant: Variant, decimals: int) -> float | None:
    """How close the nearest slip comes to the right target, in units of the last digit.

    Whole-number targets (widths, shapes) count in whole units.
    """
    fp = variant.fingerprints
    if fp is None or not variant.slips:
        return None
    gaps = []
    for s in variant.slips:
        diffs = []
        for name in fp.compared:  # the answers a slip may show in (the target first)
            a, b = mc.cells(s.values.get(name)), mc.cells(fp.correct.get(name))
            if len(a) != len(b):
                continue
            for x, y in zip(a, b, strict=True):
                if isinstance(x, Ex) and isinstance(y, Ex) and not (x.is_neg_inf or y.is_neg_inf):
                    diffs.append(abs(float(x.val) - float(y.val)) * 10**decimals)
                elif isinstance(x, int) and isinstance(y, int):
                    diffs.append(float(abs(x - y)))
        if diffs:
            gaps.append(max(diffs))
    return min(gaps) if gaps else None


def check_item(
    spec: QuestionSpec, seeds: Sequence[int], sheet_id: str, secret: bytes | None = None
) -> ItemReport:
    """Draw, solve and check one question on sheet ``sheet_id`` for every seed (each its own
    ``SheetIdentity``, with the course secret, as a build draws, when there is one)."""
    failures: Counter[str] = Counter()
    violations: Counter[str] = Counter()
    redraws: list[int] = []
    coincident: set[str] = set()
    coincident_draws = 0
    variants: set[str] = set()
    slips: set[str] = set()
    hardness: list[float] = []
    measure = ""
    gaps: list[float] = []
    times: list[float] = []
    fixed = False
    inside: Counter[str] = Counter()
    unavoidable = 0
    rows = RowSpread()
    equal_draws = 0
    choice_sets: dict[tuple[str, str, frozenset[str]], ChoiceBias] = {}
    for seed in seeds:
        t0 = time.perf_counter()
        try:
            variant = draw_variant(spec, SheetIdentity(seed, sheet_id, secret))
            solved = solve_item(spec, variant.given, 1, sheet_id, variant=variant)
            for a in solved.solution.answers:
                if a.kind == "choice" and a.options and not a.multi:
                    key = (a.name, str(a.value), frozenset(a.options))
                    choice_sets.setdefault(key, choice_bias(a.name, str(a.value), a.options))
            for c in margin_slips(spec, variant, sheet_id):
                inside[f"seed {seed}: {c.text()}, yet offered as a distractor"] += 1
        except InvariantError as exc:
            violations[f"seed {seed}: {exc.message}"] += 1
            continue
        except DrawError as exc:
            failures[f"seed {seed}: {exc}"] += 1
            unavoidable += "can be told apart" in exc.message
            continue
        except WorksheetgenError as exc:
            failures[f"seed {seed}: {exc}"] += 1
            continue
        except Exception as exc:  # a bug in a family: report it, keep checking the others
            failures[f"seed {seed}: internal error {type(exc).__name__}: {exc}"] += 1
            continue
        finally:
            times.append((time.perf_counter() - t0) * 1000)
        redraws.append(variant.redraws)
        fixed = fixed or variant.fixed
        coincident.update(c.text() for c in variant.coincident)
        coincident_draws += bool(variant.coincident) and not variant.fixed
        slips.update(s.name for s in variant.slips)
        variants.add(json.dumps(variant.given, sort_keys=True, default=str))
        hard = difficulty(variant)
        if hard is not None:
            measure = hard[0]
            hardness.append(hard[1])
        gap = closest_slip(variant, spec.decimals)
        if gap is not None:
            gaps.append(gap)
        drawn_rows = row_spread(variant)
        rows += drawn_rows
        equal_draws += drawn_rows.all_equal > 0
    loc = spec.location
    return ItemReport(
        id=spec.id,
        family=spec.family,
        where=loc.file if loc.line is None else f"{loc.file}:{loc.line}",
        format=spec.format,
        draws=len(seeds),
        failures=sum(failures.values()),
        failure_messages=tuple(m for m, _ in failures.most_common(MAX_MESSAGES)),
        invariant_violations=sum(violations.values()),
        invariant_messages=tuple(m for m, _ in violations.most_common(MAX_MESSAGES)),
        redraws=sum(redraws),
        max_redraws=max(redraws, default=0),
        redrawn_draws=sum(1 for r in redraws if r),
        fixed=fixed,
        coincident=tuple(sorted(coincident)),
        coincident_draws=coincident_draws,
        distinct_variants=len(variants),
        slips=tuple(n for n in mc.NAMES if n in slips),
        spread=Spread.of(measure, hardness),
        closest_slip=Spread.of("closest slip (units of the last digit)", gaps),
        ms_per_draw=statistics.fmean(times) if times else 0.0,
        ms_max=max(times, default=0.0),
        inside_margin=sum(inside.values()),
        inside_messages=tuple(m for m, _ in inside.most_common(MAX_MESSAGES)),
        unavoidable=unavoidable,
        rows=rows,
        equal_draws=equal_draws,
        choice_sets=tuple(choice_sets[k] for k in sorted(choice_sets)),
    )


def check_banks(
    paths: Sequence[str] = (),
    stress: int = DEFAULT_STRESS,
    progress: Callable[[ItemReport], None] | None = None,
    decimals: int | None = None,
    secret: bytes | None = None,
    exports: Sequence[str] = (),
) -> CheckReport:
    """Validate the banks (BankError if one is invalid), check what the LMS exports would
    refuse (``exports``, else every bundled one), then stress-draw every question (at
    ``decimals``, as ``build --decimals`` would, when given; with the course secret, as a
    build draws, when there is one)."""

    bank = load_banks(list(paths) or [default_bank_path()])
    refusals = tuple(str(e) for e in pool_refusals(bank, tuple(exports) or tuple(LMS_OF)))
    if decimals is not None:
        bank = replace(bank, questions=tuple(replace(q, decimals=decimals) for q in bank.questions))
    seeds = range(stress)
    reports = []
    for spec in bank.questions:
        report = check_item(spec, seeds, bank.info.slug, secret)
        reports.append(report)
        if progress is not None:
            progress(report)
    return CheckReport(
        banks=tuple(b.path for b in bank.files),
        stress=stress,
        items=tuple(reports),
        refusals=refusals,
        exports=tuple(exports),
    )


def _num(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def item_lines(r: ItemReport) -> list[str]:
    """The report of one question as text lines (the CLI prints them)."""
    status = "ok" if r.ok else "FAILED"
    fmt = " (multiple choice)" if r.format == "choice" else ""
    lines = [f"{r.id}  [{r.family}{fmt}]  {r.where}  {status}"]
    lines.append(
        f"    {r.draws} draws, {r.distinct_variants} distinct variants; "
        f"failures {r.failures}; invariant violations {r.invariant_violations}; "
        f"redraws {r.redraws} in {r.redrawn_draws} draws (max {r.max_redraws})"
    )
    detail = []
    if r.spread is not None:
        s = r.spread
        detail.append(
            f"{s.measure} min {_num(s.low)} / median {_num(s.median)} / max {_num(s.high)}"
        )
    if r.closest_slip is not None:
        c = r.closest_slip
        detail.append(
            f"closest slip min {_num(c.low)} / median {_num(c.median)} / max {_num(c.high)} units"
        )
    detail.append(f"{r.ms_per_draw:.1f} ms per draw (max {r.ms_max:.0f})")
    lines.append("    " + "; ".join(detail))
    if r.rows.rows:
        lines.append("    " + row_text(r.rows, r.equal_draws, r.draws))
    if r.choice_sets:
        lines += ["    " + line for line in choice_lines(r.choice_sets)]
    if r.slips:
        lines.append("    slips: " + ", ".join(r.slips))
    if r.fixed and r.coincident:
        lines.append("    pinned variant, left out of the distractors: " + "; ".join(r.coincident))
    elif r.coincident_draws:
        lines.append(
            f"    in {r.coincident_draws} of {r.draws} draws no redraw kept every slip "
            "apart; left out of the distractors: " + "; ".join(r.coincident)
        )
    for m in r.failure_messages:
        lines.append(f"    failure: {m}")
    for m in r.invariant_messages:
        lines.append(f"    invariant violated: {m}")
    for m in r.inside_messages:
        lines.append(f"    slip inside the margin: {m}")
    return lines


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def row_text(rows: RowSpread, equal_draws: int, draws: int) -> str:
    """The softmax rows' spread in one line: how many rows, the share near-uniform and
    all-equal, and the median largest weight of a row."""
    median = rows.median_peak
    return (
        f"softmax rows {rows.rows}: near-uniform (largest weight < 1/n + {NEAR_UNIFORM}) "
        f"{_pct(rows.share(rows.near_uniform))}, all-equal {_pct(rows.share(rows.all_equal))}"
        f" (in {equal_draws} of {draws} draws); median largest weight "
        f"{_num(median) if median is not None else '-'}"
    )


def choice_lines(sets: Sequence[ChoiceBias]) -> list[str]:
    """The length bias of pick-one choice sets: how often the right option is the longest,
    its length over the mean (min / median / max), then each biased set."""
    ratios = [b.ratio for b in sets]
    longest = sum(b.right_longest for b in sets)
    lines = [
        f"pick-one choice sets {len(sets)}: the right option is the longest in {longest} "
        f"({_pct(longest / len(sets))}); its length / the mean length min {_num(min(ratios))}"
        f" / median {_num(statistics.median(ratios))} / max {_num(max(ratios))}"
    ]
    biased = [b for b in sets if b.biased]
    if biased:
        lines.append(
            f"length-biased (the longest, or {LONG_RATIO}x the mean or more): "
            + ", ".join(
                f"{b.answer} ({_num(b.ratio)}x{', the longest' if b.right_longest else ''})"
                for b in biased[:12]
            )
            + (f", and {len(biased) - 12} more" if len(biased) > 12 else "")
        )
    return lines


def summary_line(report: CheckReport) -> str:
    """One closing line: how many questions and draws, and whether all passed."""
    bad = [i for i in report.items if not i.ok]
    head = (
        f"{len(report.items)} questions x {report.stress} seeds = {report.draws} draws "
        f"from {', '.join(report.banks)}"
    )
    refused = bool(report.exports and report.refusals)
    if not bad and not refused:
        return f"OK: {head}; no failures."
    failing = [i.id for i in bad] + (["--export " + ", ".join(report.exports)] if refused else [])
    return f"FAILED: {head}; failing: " + ", ".join(failing)


def refusal_lines(report: CheckReport) -> list[str]:
    """What an LMS export would refuse in the banks: failures when ``check --export`` asked
    for those exports, else notes (a paper build and ``grade`` take such a bank)."""
    if not report.refusals:
        return []
    if report.exports:
        head = f"refused by --export {', '.join(report.exports)} (build --export stops here):"
    else:
        head = (
            "note: an LMS export (build --export moodle, gift or qti) would refuse it; "
            "a paper build and grade take it (check --export FORMAT makes it a failure):"
        )
    return [head, *(f"    {line}" for line in report.refusals)]


@dataclass(frozen=True)
class SweepReport:
    """``check --stress``: every bank at every decimals, one CheckReport each."""

    runs: tuple[tuple[int, CheckReport], ...]

    @property
    def ok(self) -> bool:
        """No slip inside the margin, and every failure is a question that says it cannot
        keep its slips apart at those decimals."""
        return all(
            i.inside_margin == 0 and i.invariant_violations == 0 and i.failures == i.unavoidable
            for _, r in self.runs
            for i in r.items
        )


def bundled_banks() -> list[str]:
    """The bundled banks (the ``banks`` folder shipped with worksheetgen), by name."""

    return [str(p) for p in sorted(data_dir("banks").glob("*.yaml"))]


def sweep_banks(
    paths: Sequence[str] = (),
    seeds: int = SWEEP_SEEDS,
    decimals: Sequence[int] = SWEEP_DECIMALS,
    progress: Callable[[int, CheckReport], None] | None = None,
    secret: bytes | None = None,
) -> SweepReport:
    """Stress-check each bank on its own (every bundled bank when none is given) at each
    of ``decimals``: no kept slip may pass for the right answer however the student rounds;
    the questions that cannot avoid it are named."""
    runs = []
    for path in list(paths) or bundled_banks():
        for d in decimals:
            report = check_banks([path], seeds, decimals=d, secret=secret)
            runs.append((d, report))
            if progress is not None:
                progress(d, report)
    return SweepReport(tuple(runs))


def sweep_lines(d: int, report: CheckReport) -> list[str]:
    """One bank at one decimals, as text lines: a summary, then each question that is not
    clean (named: cannot keep its slips apart; FAILED: anything else)."""
    places = f"{d} decimal" + ("" if d == 1 else "s")
    lines = [
        f"{', '.join(report.banks)} at {places}: {len(report.items)} questions x "
        f"{report.stress} seeds"
    ]
    for i in report.items:
        if i.inside_margin or i.invariant_violations or i.failures != i.unavoidable:
            lines += ["  FAILED " + line.strip() for line in item_lines(i)[:1]]
            lines += [
                "    " + line.strip()
                for line in item_lines(i)[1:]
                if "failure" in line or "invariant" in line or "inside" in line
            ]
        elif i.unavoidable:
            lines.append(
                f"  cannot avoid: {i.id} ({i.where}): in {i.unavoidable} of "
                f"{i.draws} draws no variant lets every slip be told apart at "
                f"{places}; the build stops and says so"
            )
        elif i.coincident_draws:
            lines.append(
                f"  cannot avoid: {i.id} ({i.where}): in {i.coincident_draws} of "
                f"{i.draws} draws a slip stays within the key's margin; left out "
                "of the distractors and named in the key: " + "; ".join(i.coincident[:MAX_MESSAGES])
            )
        elif i.fixed and i.coincident:
            lines.append(
                f"  cannot avoid: {i.id} ({i.where}): pinned variant; left out of "
                "the distractors and named in the key: " + "; ".join(i.coincident[:MAX_MESSAGES])
            )
    return lines


def family_rows(report: SweepReport) -> dict[str, tuple[RowSpread, int, int]]:
    """Per family, over every bank and decimals of a sweep: its softmax rows, the draws
    with an all-equal row, and the draws (families without weights are left out)."""
    out: dict[str, tuple[RowSpread, int, int]] = {}
    for _, r in report.runs:
        for i in r.items:
            if not i.rows.rows:
                continue
            rows, equal, draws = out.get(i.family, (RowSpread(), 0, 0))
            out[i.family] = (rows + i.rows, equal + i.equal_draws, draws + i.draws)
    return dict(sorted(out.items()))


def family_lines(report: SweepReport) -> list[str]:
    """The spread of the softmax rows per family, one line each (``check --stress``)."""
    return [
        f"  {name}: {row_text(rows, equal, draws)}"
        for name, (rows, equal, draws) in family_rows(report).items()
    ]


def sweep_summary(report: SweepReport) -> str:
    """The closing line of ``check --stress``."""
    draws = sum(r.draws for _, r in report.runs)
    named = sorted({f"{i.id}@{d}" for d, r in report.runs for i in r.items if i.named})
    head = f"{len(report.runs)} bank x decimals runs, {draws} draws"
    if not report.ok:
        return f"FAILED: {head}; a slip passes for right or a question fails (see above)."
    tail = f"; {len(named)} question x decimals cannot avoid a slip and say so" if named else ""
    return f"OK: {head}; no kept slip inside the margin{tail}."
