"""grade's class report (HTML and PDF with pictures, the numbers in CSVs), each student's
feedback page, and grading a real class without friction (every unreadable value in one run,
--lenient, a versions template per student)."""

from __future__ import annotations

import math

import pytest


def _pearson(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    return sxy / math.sqrt(sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))


def test_point_biserial_of_an_all_or_nothing_item_by_the_textbook_formula():
    """r_pb = (M1 - M0) / s * sqrt(p q), s the population deviation of the rest scores."""
    import random

    from worksheetgen.report.analysis import _pearson

    rng = random.Random(4)
    for _ in range(50):
        n = rng.randrange(5, 40)
        item = [float(rng.random() < 0.6) for _ in range(n)]
        rest = [rng.randrange(0, 30) + 5 * x for x in item]
        if len(set(item)) < 2 or len(set(rest)) < 2:
            assert _pearson(item, rest) is None
            continue
        ones = [r for x, r in zip(item, rest, strict=True) if x]
        zeros = [r for x, r in zip(item, rest, strict=True) if not x]
        mean = sum(rest) / n
        sd = math.sqrt(sum((r - mean) ** 2 for r in rest) / n)
        p = len(ones) / n
        textbook = (sum(ones) / len(ones) - sum(zeros) / len(zeros)) / sd * math.sqrt(p * (1 - p))
        assert _pearson(item, rest) == pytest.approx(textbook, abs=1e-12)


def test_every_misconception_says_how_to_avoid_it():
    from worksheetgen.attention.slips import MISCONCEPTIONS

    for m in MISCONCEPTIONS.values():
        assert m.avoid.strip().endswith("."), m.name


def test_charts_add_a_cjk_font_only_for_text_dejavu_lacks():
    """Each font in matplotlib's list costs time in every text drawn: DejaVu alone for the
    bank's usual text (math as Unicode included), the installed CJK fonts after it as soon
    as some text needs them, and DejaVu alone again for the next report."""
    import matplotlib
    from matplotlib import font_manager

    from worksheetgen.report import charts

    charts.use_fonts(["Q1 (a) Scale the scores: write S/√2", "QKᵀ/√dₖ", "−∞ above"])
    assert matplotlib.rcParams["font.family"] == ["DejaVu Sans"]
    installed = {f.name for f in font_manager.fontManager.ttflist}
    charts.use_fonts(["Q1 注意力", "plain"])
    want = ["DejaVu Sans", *(f for f in charts.FALLBACKS if f in installed)]
    assert matplotlib.rcParams["font.family"] == want
    charts.use_fonts(["plain"])
    assert matplotlib.rcParams["font.family"] == ["DejaVu Sans"]


def test_rich_math_marks_scripts_and_reads_flat_elsewhere():
    from worksheetgen.report.classreport import flat_scripts, plain_math
    from worksheetgen.report.marks import END, SUB, no_marks

    assert plain_math("$W_Q^{(i)}$") == "W_Q⁽ⁱ⁾"  # charts and CSVs: as before
    rich = plain_math("$W_Q^{(i)}$ and $W_O$ and $d_k$", rich=True)
    assert rich == f"W{SUB}Q{END}⁽ⁱ⁾ and W{SUB}O{END} and dₖ"
    assert flat_scripts(rich) == "W_Q⁽ⁱ⁾ and W_O and dₖ"
    assert no_marks(f"Ann{SUB}x{END}") == "Annx"  # what a student typed sets nothing
