"""The fast paths of exact arithmetic keep it exact: memoized operations, the key printer.

A behaviour across modules, not one module's tests (attention, attention.compute, bank.load,
exact, exact.answers, exact.memo, families, model, resources)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import sympy as sp
from hypothesis import given as for_all
from hypothesis import settings
from hypothesis import strategies as st

from tests.solved import make_build
from worksheetgen.bank.load import load_banks
from worksheetgen.exact import number as ex
from worksheetgen.model import Student
from worksheetgen.resources import data_dir


def _class_exact_texts(n: int) -> list[str]:
    banks = [data_dir("banks") / "default.yaml"]
    build = make_build(
        load_banks(banks), 42, [(f"s{i}", f"S{i}", Student(f"S{i}", f"s{i}")) for i in range(n)]
    )
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
    for expr in (
        e[3] + e[1] + e[2],
        1 + e[2],
        3 - 2 * e[1],
        e[1] / (e[1] + e[2] + 1),
        -e[2] / 7 + sp.Rational(5, 3) * e[1] / (1 + e[3]),
        sp.exp(-3) + sp.exp(-2),
    ):
        assert ex.exact_text(expr) == sp.sstr(expr)


def test_memoized_operations_equal_fresh_sympy_arithmetic():
    a, b = ex.div(ex.integer(3), ex.sqrt_int(2)), ex.div(ex.integer(1), ex.sqrt_int(8))
    ea, eb = ex.exp(a), ex.exp(b)
    total = ex.add([ea, eb, ex.ONE])
    w = ex.div(ea, total)
    again = ex.div(
        ex.exp(ex.div(ex.integer(3), ex.sqrt_int(2))),
        ex.add(
            [
                ex.exp(ex.div(ex.integer(1), ex.sqrt_int(8))),
                ex.exp(ex.div(ex.integer(3), ex.sqrt_int(2))),
                ex.ONE,
            ]
        ),
    )
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
    assert (
        ex.rounded(ex.number("0.125"), 2) == "0.13" and ex.rounded(ex.number("0.125"), 1) == "0.1"
    )


# ---------------------------------------------------------------- lazy SymPy expressions


def _fresh_memo(monkeypatch) -> None:
    """Start from an empty memo, so no value built by an earlier test is handed out."""
    monkeypatch.setattr(ex, "_memo", {})
    ex.integer.cache_clear()
    ex.sqrt_int.cache_clear()


def _forbid_sympy(monkeypatch) -> list[str]:
    built: list[str] = []

    def forbidden(self):
        built.append(self._op)
        raise AssertionError("a SymPy expression was built")

    monkeypatch.setattr(ex.Ex, "_build", forbidden)
    return built


def test_slips_and_distinguishability_build_no_sympy_expression(monkeypatch):
    from worksheetgen.attention import slips as mc
    from worksheetgen.families import get_family

    _fresh_memo(monkeypatch)
    built = _forbid_sympy(monkeypatch)
    for name, given in [
        (
            "lab3",
            {
                "Q": [[1, 0], [0, 1], [1, 1]],
                "K": [[1, 2], [0, 1], [2, 0]],
                "V": [[1, 0], [0, 2], [3, 1]],
                "d_k": 2,
                "causal": True,
            },
        ),
        ("causal", {"S": [[2, 1, 0], [1, 3, 2], [0, 2, 1]], "d_k": 4, "causal": True}),
        ("softmax", {"S": [[3, 1], [0, 2]], "d_k": 9, "causal": False}),
    ]:
        family = get_family(name)
        fp = mc.fingerprints(family, given)
        assert fp is not None and fp.slips
        mc.collisions(fp, 2)
        for s in fp.slips:
            mc.value_rounded(s.values[fp.target], 2)
            mc.value_json(s.values[fp.target])
    assert built == []


def test_rounding_and_whole_number_checks_build_no_sympy_expression(monkeypatch):
    _fresh_memo(monkeypatch)
    built = _forbid_sympy(monkeypatch)
    w = ex.div(
        ex.exp(ex.div(ex.integer(3), ex.sqrt_int(2))),
        ex.add([ex.exp(ex.div(ex.integer(1), ex.sqrt_int(2))), ex.integer(2)]),
    )
    # e^(3/√2) / (e^(1/√2) + 2) = 8.3421.../(2.0281... + 2) = 2.07098...
    assert ex.rounded(w, 3) == "2.071" and not ex.is_integer(w) and not ex.is_zero(w)
    third = ex.div(ex.integer(1), ex.integer(3))
    assert ex.rounded(third, 4) == "0.3333" and ex.rounded(ex.number("2.5"), 0) == "3"
    assert ex.as_int(ex.mul(ex.integer(6), ex.number("0.5"))) == 3
    assert built == []


def test_rational_values_carry_their_exact_fraction():
    assert ex.sqrt_int(9).frac == 3 and ex.sqrt_int(9).expr == 3
    assert ex.sqrt_int(2).frac is None
    assert ex.exp(ex.ZERO) is ex.ONE and ex.exp(ex.number("0.0")).frac == 1
    assert ex.exp(ex.NEG_INF).frac == 0
    assert ex.div(ex.number("0.5"), ex.integer(3)).frac == Fraction(1, 6)
    assert ex.add([ex.number("0.25"), ex.number("1.5")]).frac == Fraction(7, 4)
    assert ex.mul(ex.ZERO, ex.exp(ex.ONE)).frac == 0


def test_values_that_sympy_finds_rational_round_exactly_and_print_whole():
    # √2/4 · √2/4 is exactly 1/8 = 0.125, a tie at 2 decimals (half-up: 0.13), though no
    # fraction is known while building it; √2·√2 is the whole number 2
    q = ex.div(ex.sqrt_int(2), ex.integer(4))
    eighth = ex.mul(q, q)
    assert eighth.frac is None
    assert ex.rounded(eighth, 2) == "0.13" and ex.rounded(eighth, 1) == "0.1"
    two = ex.mul(ex.sqrt_int(2), ex.sqrt_int(2))
    assert ex.is_integer(two) and ex.as_int(two) == 2
    from worksheetgen.exact.answers import table

    assert table([[two, ex.integer(5)]], 2) == [["2", "5"]]


def test_lazily_built_expressions_equal_eagerly_built_sympy():
    from worksheetgen.attention.compute import attend, flipped

    S = [[2, -1, 0], [1, 3, 1], [0, 0, 4]]
    V = [[1, 0], [2, -3], [0, 5]]
    for recipe, d_k in [(flipped(), 3), (flipped(scale="dk"), 4), (flipped(mask_fill="zero"), 2)]:
        trace = attend(d_k=d_k, causal=True, S=S, V=V, recipe=recipe)
        div = sp.sqrt(d_k) if recipe.scale == "sqrt" else sp.Integer(d_k)
        fill = -sp.oo if recipe.mask_fill == "-inf" else sp.S.Zero
        scaled = [
            [sp.Integer(x) / div if j <= i else fill for j, x in enumerate(row)]
            for i, row in enumerate(S)
        ]
        exps = [[sp.exp(x) for x in row] for row in scaled]
        weights = [[e / sp.Add(*row) for e in row] for row in exps]
        out = [
            [sp.Add(*[weights[i][k] * V[k][c] for k in range(3)]) for c in range(2)]
            for i in range(3)
        ]
        for i, c in itertools.product(range(3), range(2)):
            # a mix whose numerator is a multiple of the row sum is that number (canon.add)
            ratio = sp.cancel(sp.Add(*[exps[i][k] * V[k][c] for k in range(3)]) / sp.Add(*exps[i]))
            if ratio.is_Rational:
                out[i][c] = ratio
        assert out[0][0] == 1  # mask-with-zero: (e^sqrt(2) + 2·1)/(e^sqrt(2) + 1 + 1)
        assert [[w.expr for w in row] for row in trace.A] == weights
        assert [[o.expr for o in row] for row in trace.output] == out
        assert ex.matrix_exact(trace.A) == [[sp.sstr(w) for w in row] for row in weights]


def test_the_memo_stays_bounded(monkeypatch):
    _fresh_memo(monkeypatch)
    monkeypatch.setattr(ex, "_MEMO_LIMIT", 50)
    for n in range(400):
        ex.exp(ex.div(ex.integer(n), ex.sqrt_int(3)))
        assert len(ex._memo) <= 50


def test_slips_share_the_stages_they_have_in_common_with_the_correct_calculation():
    from worksheetgen.attention import compute as att

    att._stages.clear()
    given = {"Q": [[1, 0], [2, 1]], "K": [[0, 1], [1, 1]], "V": [[1, 2], [3, 0]]}
    right = att.attend(d_k=2, causal=True, **given)
    zero_mask = att.attend(d_k=2, causal=True, recipe=att.flipped(mask_fill="zero"), **given)
    by_dk = att.attend(d_k=2, causal=True, recipe=att.flipped(scale="dk"), **given)
    assert zero_mask.scaled is right.scaled and zero_mask.masked is not right.masked
    assert by_dk.scores is right.scores and by_dk.scaled is not right.scaled
    # shared or not, every table is what a fresh calculation gives
    att._stages.clear()
    fresh = att.attend(d_k=2, causal=True, recipe=att.flipped(mask_fill="zero"), **given)
    assert ex.matrix_exact(fresh.A) == ex.matrix_exact(zero_mask.A)
    assert ex.matrix_exact(fresh.output) == ex.matrix_exact(zero_mask.output)


def test_the_stage_cache_stays_bounded(monkeypatch):
    from worksheetgen.attention import compute as att

    monkeypatch.setattr(att._stages, "limit", 20)
    for n in range(60):
        att.attend(d_k=None, causal=False, S=[[n, 0], [1, n]])
        assert len(att._stages) <= 20


_values = st.one_of(
    st.fractions(min_value=-1000, max_value=1000, max_denominator=64).map(ex.number),
    st.tuples(st.integers(-40, 40), st.integers(1, 12)).map(
        lambda p: ex.exp(ex.div(ex.integer(p[0]), ex.sqrt_int(p[1])))
    ),
    st.tuples(st.integers(-9, 9), st.integers(-9, 9), st.integers(1, 8)).map(
        lambda p: ex.div(
            ex.exp(ex.number(Fraction(p[0], 4))),
            ex.add(
                [
                    ex.exp(ex.number(Fraction(p[0], 4))),
                    ex.mul(ex.integer(p[2]), ex.exp(ex.number(Fraction(p[1], 3)))),
                ]
            ),
        )
    ),
)


@settings(max_examples=300, deadline=None)
@for_all(x=_values, decimals=st.integers(0, 8))
def test_rounding_from_the_double_agrees_with_exact_rounding(x, decimals):
    fast = ex._rounded_fast(x, decimals)
    exact = ex._rounded_exactly(x, decimals)
    assert fast is None or fast == exact
    assert ex.rounded(x, decimals) == exact


def test_ties_and_huge_values_are_left_to_exact_rounding():
    assert ex._rounded_fast(ex.number("0.125"), 2) is None  # a tie: decided exactly
    assert ex.rounded(ex.number("0.125"), 2) == "0.13"
    assert ex.rounded(ex.number("-0.125"), 2) == "-0.13"
    big = ex.exp(ex.integer(92))
    assert ex._rounded_fast(big, 2) is None
    assert ex.rounded(big, 0) == ex._rounded_exactly(big, 0)
    assert ex.rounded(ex.number("-0.004"), 2) == "0.00"  # no minus sign on a zero


def test_an_identity_memo_remembers_by_object_not_by_value_and_stays_bounded():
    from worksheetgen.exact.memo import IdentityMemo

    memo, made = IdentityMemo(3), []
    a, b = [1, 2], [1, 2]  # equal, not the same object

    def make(tag):
        made.append(tag)
        return tag

    assert memo.get((a,), ("x",), lambda: make("a")) == "a"
    assert memo.get((a,), ("x",), lambda: make("again")) == "a"
    assert memo.get((b,), ("x",), lambda: make("b")) == "b"
    assert memo.get((a,), ("y",), lambda: make("ay")) == "ay"
    assert made == ["a", "b", "ay"] and len(memo) == 3
    memo.get((a, b), (), lambda: make("ab"))
    assert len(memo) == 1  # cleared when full, then remembered


def test_whole_number_matrix_products_are_the_same_values_as_term_by_term():
    from worksheetgen.exact import number as ex

    q = ex.from_ints([[0, 1], [2, -3], [0, 0]])
    k = ex.from_ints([[1, 4], [0, 0], [5, 1]])
    product = ex.matmul(q, ex.transpose(k))
    by_terms = [[ex.add([ex.mul(x, y) for x, y in zip(r, c, strict=True)]) for c in k] for r in q]
    assert [[x.frac for x in row] for row in product] == [[4, 0, 1], [-10, 0, 7], [0, 0, 0]]
    assert [[x.key for x in row] for row in product] == [[x.key for x in row] for row in by_terms]
    assert product[2][0] is ex.ZERO  # an all-zero dot product is ZERO, as add gives it
    half = ex.number(Fraction(1, 2))
    mixed = ex.matmul([[half, ex.integer(1)]], ex.from_ints([[2], [3]]))
    assert mixed[0][0].frac == 4


def test_a_mix_of_a_constant_value_column_is_the_number_itself_in_the_key():
    from worksheetgen.families import get_family

    given = {
        "Q": [[1, 0], [0, 1], [1, 1]],
        "K": [[1, 1], [0, 1], [1, 0]],
        "V": [[3, 1], [3, 2], [3, 0]],
        "T": 3,
        "d_k": 2,
        "causal": False,
    }
    output = get_family("lab3").solve(given, 2, "q").answer("output")
    assert [row[0] for row in output.exact] == ["3", "3", "3"]
    assert any("exp" in row[1] for row in output.exact)
    assert [row[0] for row in output.rounded] == ["3.00", "3.00", "3.00"]
    assert sp.sympify(output.exact[0][0]) == 3
