"""Canonical forms print exactly what SymPy prints, and a build never needs SymPy."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from tests.solved import make_build
from worksheetgen.attention.compute import attend, sums_to_one
from worksheetgen.bank.load import load_banks
from worksheetgen.exact import canon
from worksheetgen.exact import number as ex
from worksheetgen.model import Student

BANKS = ["default.yaml", "practice.yaml", "note.yaml", "slips.yaml"]


def _agrees_with_sympy(x: ex.Ex) -> None:
    """The canonical text of ``x`` is ``sstr`` of its independently built SymPy expression."""
    if x.is_neg_inf:
        assert ex.text(x) == "-oo"
        return
    assert x.form is not None, f"no canonical form for {x.expr}"
    assert ex.text(x) == sp.sstr(x.expr)
    # the text parses back to the same number (SymPy may canonicalize the parse differently:
    # it distributes the 2 of "E/(2*(1 + E))")
    back = sp.sympify(ex.text(x)).evalf(45)
    assert abs(back - sp.Float(ex._MP.nstr(x.val, 45), 45)) <= sp.Float("1e-38") * max(1, abs(back))


@pytest.mark.parametrize("bank", BANKS)
def test_every_key_value_of_whole_classes_prints_as_sympy_sstr_does(bank, monkeypatch):
    printed: list[ex.Ex] = []
    plain_text = ex.text

    def recording(x: ex.Ex) -> str:
        printed.append(x)
        return plain_text(x)

    monkeypatch.setattr(ex, "text", recording)
    students = [(f"s{i}", f"S{i}", Student(f"S{i}", f"s{i}")) for i in range(6)]
    for seed in (1, 7, 42, 2024):
        make_build(load_banks([ROOT / "banks" / bank]), seed, students)
    assert printed
    for x in {id(x): x for x in printed}.values():
        _agrees_with_sympy(x)


def _row(scores: list[ex.Ex]) -> list[ex.Ex]:
    exps = [ex.exp(s) for s in scores]
    total = ex.add(exps)
    return [ex.div(e, total) for e in exps]


@pytest.mark.parametrize(
    "scores",
    [
        ["1", "1", "0"],  # tied keys: 2*exp(1) collected as SymPy collects it
        ["0.5", "0.5"],  # all tied: the weights cancel to 1/2
        ["1", "2/3", "-1"],  # E, and a negative exponent
        ["3", "3", "-2", "-2"],  # a row sum whose coefficients share a factor
        ["200", "0", "-150"],  # huge exponentials ordered without overflow
        ["0", "0", "0"],  # every exponential is 1
    ],
)
def test_softmax_rows_print_as_sympy_prints_them(scores):
    row = _row([ex.number(Fraction(s)) for s in scores])
    for w in row:
        _agrees_with_sympy(w)
    assert sums_to_one(row)
    _agrees_with_sympy(ex.add([ex.exp(ex.number(Fraction(s))) for s in scores]))


def test_surds_print_as_sympy_prints_them():
    for n in (2, 3, 4, 8, 12, 18, 50, 64, 1000):
        root = ex.sqrt_int(n)
        for k in (-3, -1, 1, 2, 7):
            for x in (
                ex.div(ex.integer(k), root),
                ex.div(ex.number(Fraction(k, 3)), root),
                ex.mul(ex.integer(k), root),
            ):
                _agrees_with_sympy(x)
                _agrees_with_sympy(ex.exp(x))


def test_a_number_minus_an_exponential_keeps_sympys_order():
    e = ex.exp(ex.number("0.5"))
    for c, k in [(3, -2), (1, -1), (2, 5), (-3, 2)]:
        _agrees_with_sympy(ex.add([ex.integer(c), ex.mul(ex.integer(k), e)]))
    _agrees_with_sympy(ex.add([ex.integer(3), ex.mul(ex.integer(-2), ex.exp(ex.ONE))]))
    _agrees_with_sympy(ex.add([ex.exp(ex.ONE), ex.mul(ex.integer(-2), e)]))


def test_shapes_without_a_canonical_form_fall_back_to_sympy():
    big = ex.sqrt_int(2**16 + 1)  # past SymPy's trial division: left to SymPy
    assert big.form is None
    assert ex.text(big) == sp.sstr(big.expr)
    a, b = ex.exp(ex.ONE), ex.exp(ex.integer(2))
    product = ex.mul(a, b)  # SymPy merges exponentials: not a canonical shape here
    assert product.form is None and ex.text(product) == "exp(3)"


def test_a_quotient_whose_numerator_is_a_multiple_of_its_row_sum_rounds_as_a_rational():
    # every value in the column is 2.5, so the output is exactly 2.5: a tie at 0 decimals
    trace = attend(S=[[1, 0]], d_k=None, causal=False, V=[[2.5], [2.5]])
    out = trace.output[0][0]
    assert out.frac is None and canon.is_rational(out.form) == Fraction(5, 2)
    assert ex.rounded(out, 0) == "3"
    assert ex.text(out) == sp.sstr(out.expr)


def test_a_row_that_does_not_sum_to_one_is_caught_structurally():
    row = _row([ex.integer(1), ex.integer(2)])
    assert sums_to_one(row)
    other = _row([ex.integer(1), ex.integer(3)])
    assert not sums_to_one([row[0], other[1]])
    assert not sums_to_one([row[0], row[0]])
    assert sums_to_one(
        [
            ex.div(ex.ONE, ex.integer(2)),
            ex.div(ex.ONE, ex.integer(4)),
            ex.div(ex.ONE, ex.integer(4)),
            ex.ZERO,
        ]
    )


_entries = st.one_of(st.integers(-4, 4), st.sampled_from([0.5, -1.5, 0.25, 2.5]))


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 3),
    m=st.integers(1, 3),
    data=st.data(),
    d_k=st.integers(1, 12),
    causal=st.booleans(),
)
def test_every_table_of_random_attention_prints_as_sympy_prints_it(n, m, data, d_k, causal):
    S = data.draw(st.lists(st.lists(_entries, min_size=n, max_size=n), min_size=n, max_size=n))
    V = data.draw(st.lists(st.lists(_entries, min_size=m, max_size=m), min_size=n, max_size=n))
    trace = attend(S=S, V=V, d_k=d_k, causal=causal)
    for table in (trace.scaled, trace.exps, [trace.sums], trace.A, trace.output):
        for row in table:
            for x in row:
                _agrees_with_sympy(x)
    for row in trace.A:
        assert sums_to_one(row)


@pytest.mark.parametrize("bank", BANKS)
def test_building_a_bundled_bank_never_imports_sympy(bank, tmp_path):
    code = (
        "import sys\n"
        "from worksheetgen.pipeline.build import BuildOptions, build\n"
        f"build(BuildOptions(seed=42, banks=({str(ROOT / 'banks' / bank)!r},), "
        f"out={str(tmp_path / 'out')!r}, pdf=False))\n"
        "assert 'sympy' not in sys.modules, 'a build imported SymPy'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert list((tmp_path / "out").glob("*/key.json"))


def test_canonical_forms_refuse_what_they_cannot_say():
    half = canon.sqrt_int(2)
    assert canon.div(Fraction(0), Fraction(0)) is None  # 0/0 is nobody's canonical form
    assert canon.div(half, Fraction(0)) is None
    assert canon.sqrt_int(0) is None and canon.sqrt_int(2**20) is None
    assert canon.add([half, Fraction(1)]) is None  # 1 + sqrt(2): left to SymPy
    assert canon.add([half, canon.sqrt_int(3)]) is None
    two_terms = canon.add([canon.exp(Fraction(1)), canon.exp(Fraction(2))])
    assert canon.div(two_terms, two_terms) == 1
    assert canon.div(canon.exp(Fraction(1)), canon.mul(Fraction(-1), two_terms)) is None
    assert canon.mul(canon.exp(Fraction(1)), canon.exp(Fraction(1))) is None
    assert canon.text(canon.mul(half, canon.sqrt_int(6))) == "2*sqrt(3)"


def test_the_manifest_names_the_installed_sympy_without_importing_it():
    code = (
        "import sys\n"
        "from importlib.metadata import version\n"
        "from worksheetgen.keyjson import write as keyfile\n"
        "assert keyfile._sympy_version() == version('sympy'), keyfile._sympy_version()\n"
        "assert 'sympy' not in sys.modules, 'reading the version imported SymPy'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
