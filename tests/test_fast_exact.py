"""The fast paths of exact arithmetic keep it exact: memoized operations, the key printer."""

from __future__ import annotations

import mpmath
import sympy as sp

from worksheetgen import exact as ex
from worksheetgen.bank import load_banks
from worksheetgen.models import Student
from worksheetgen.pipeline import make_build
from worksheetgen.resources import data_dir


def _class_exact_texts(n: int) -> list[str]:
    banks = [data_dir("banks") / "default.yaml"]
    build = make_build(load_banks(banks), 42,
                       [(f"s{i}", f"S{i}", Student(f"S{i}", f"s{i}")) for i in range(n)])
    out: list[str] = []

    def walk(v: object) -> None:
        if isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str):
            out.append(v)

    for sheet in build.sheets:
        for item in sheet.items:
            for a in item.solution.answers:
                walk(a.exact)
    return out


def test_key_printer_prints_what_sympy_sstr_prints_for_a_whole_class():
    texts = _class_exact_texts(12)
    assert len(texts) > 200
    for text in set(texts):
        if text == "-oo":
            continue
        expr = sp.sympify(text)
        # parsing the text gives the very expression, and SymPy's own printer agrees on it
        assert ex.exact_text(expr) == text == sp.sstr(expr)


def test_numeric_sums_are_ordered_by_value_like_sstr():
    e = [sp.exp(sp.sqrt(2) * k / 2) for k in range(4)]
    for expr in (e[3] + e[1] + e[2], 1 + e[2], 3 - 2 * e[1], e[1] / (e[1] + e[2] + 1),
                 -e[2] / 7 + sp.Rational(5, 3) * e[1] / (1 + e[3]), sp.exp(-3) + sp.exp(-2)):
        assert ex.exact_text(expr) == sp.sstr(expr)


def test_memoized_operations_equal_fresh_sympy_arithmetic():
    a, b = ex.div(ex.integer(3), ex.sqrt_int(2)), ex.div(ex.integer(1), ex.sqrt_int(8))
    ea, eb = ex.exp(a), ex.exp(b)
    total = ex.add([ea, eb, ex.ONE])
    w = ex.div(ea, total)
    again = ex.div(ex.exp(ex.div(ex.integer(3), ex.sqrt_int(2))),
                   ex.add([ex.exp(ex.div(ex.integer(1), ex.sqrt_int(8))),
                           ex.exp(ex.div(ex.integer(3), ex.sqrt_int(2))), ex.ONE]))
    fresh = sp.exp(3 / sp.sqrt(2)) / (sp.exp(3 / sp.sqrt(2)) + sp.exp(1 / sp.sqrt(8)) + 1)
    assert w.expr == fresh and again.expr == fresh
    mp = mpmath.mp.clone()
    mp.dps = 50
    expected = mp.exp(3 / mp.sqrt(2)) / (mp.exp(3 / mp.sqrt(2)) + mp.exp(1 / mp.sqrt(8)) + 1)
    assert abs(w.val - expected) < mpmath.mpf(10) ** -45
    assert ex.mul(ex.integer(6), ex.number("0.5")).expr == 3


def test_equal_values_built_separately_share_their_memo_entry():
    x = ex.Ex(sp.Integer(2) * sp.sqrt(2), ex._MP.mpf(2) * ex._MP.sqrt(2))
    y = ex.Ex(sp.Integer(2) * sp.sqrt(2), ex._MP.mpf(2) * ex._MP.sqrt(2))
    assert ex.exp(x) is ex.exp(y)


def test_rounding_is_cached_per_number_of_decimals():
    third = ex.div(ex.ONE, ex.integer(3))
    assert [ex.rounded(third, d) for d in (0, 1, 2, 3)] == ["0", "0.3", "0.33", "0.333"]
    assert ex.rounded(third, 2) == "0.33"  # from the cache, the same answer
    assert ex.rounded(ex.number("0.125"), 2) == "0.13" and ex.rounded(ex.number("0.125"), 1) \
        == "0.1"
