"""SymPy's canonical form of attention values, built and printed without SymPy.

Every correct answer of the bundled families is one of a few shapes: a rational, a surd
``c·√m`` (a score divided by √d_k), or a sum of terms ``c·exp(s)`` over an optional row sum
``S`` (the exponentials, the row sums, the softmax weights and the outputs ``A·V``). SymPy
would build each of these shapes into one canonical expression; this module builds the same
canonical form from plain fractions and prints it with the very text ``sympy.sstr`` gives, in
microseconds and without importing SymPy.

An operation whose result has no shape here returns ``None``; the caller then builds the
SymPy expression instead (see ``worksheetgen.exact.number``). The tests compare this printer with
``sympy.sstr`` on every value of whole classes of every bundled bank.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from worksheetgen.exact.memo import IdentityMemo

# SymPy extracts square factors of an integer fully only up to its trial-division limit; past
# it the form is left to SymPy itself.
_SQUARE_LIMIT = 1 << 15


@dataclass(frozen=True, slots=True)
class Surd:
    """``coef * sqrt(m)`` with ``m`` square-free and at least 2, ``coef`` not 0."""

    coef: Fraction
    m: int


Exponent = Fraction | Surd  # a nonzero exponent of e


@dataclass(frozen=True, slots=True)
class Sum:
    """``Σ coef·exp(s)`` (``s`` None for a plain number), divided by ``den`` when it is set.

    ``terms`` are sorted by their exponent's key and never hold a zero coefficient. A
    ``den`` is itself a ``Sum`` of at least two terms without a ``den``: the row sum of a
    softmax, which SymPy keeps as ``Pow(Add, -1)`` in each term.
    """

    terms: tuple[tuple[Exponent | None, Fraction], ...]
    den: Sum | None = None


Form = Fraction | Surd | Sum


def _exp_key(s: Exponent | None) -> tuple:
    if s is None:
        return (0,)
    if isinstance(s, Fraction):
        return (1, s)
    return (2, s.m, s.coef)


def _sum(coefs: dict, den: Sum | None) -> Form:
    """The normal form of ``Σ coefs[s]·exp(s) / den``: zero terms dropped, numbers plain."""
    terms = tuple(sorted(((s, c) for s, c in coefs.items() if c), key=lambda t: _exp_key(t[0])))
    if not terms:
        return Fraction(0)
    if den is None and len(terms) == 1 and terms[0][0] is None:
        return terms[0][1]
    return Sum(terms, den)


def surd(coef: Fraction, m: int) -> Form:
    """``coef·√m`` in normal form (a rational when ``m`` is 1 or ``coef`` is 0)."""
    if not coef or m == 1:
        return coef
    return Surd(coef, m)


@lru_cache(maxsize=1024)
def sqrt_int(n: int) -> Form | None:
    """``√n`` as ``k·√m`` with ``m`` square-free, or None when SymPy might not factor ``n``."""
    if n < 1 or n >= _SQUARE_LIMIT:
        return None
    k, m, p = 1, n, 2
    while p * p <= m:
        while m % (p * p) == 0:
            m //= p * p
            k *= p
        p += 1
    return surd(Fraction(k), m)


def exp(s: Form | None) -> Form | None:
    """``e^s`` for a rational or surd exponent."""
    if isinstance(s, Fraction):
        return Fraction(1) if s == 0 else Sum(((s, Fraction(1)),))
    if isinstance(s, Surd):
        return Sum(((s, Fraction(1)),))
    return None


def add(terms: Sequence[Form | None]) -> Form | None:
    """The canonical sum: like terms collected, as SymPy's ``Add`` does."""
    forms = [f for f in terms if f is not None]
    if len(forms) != len(terms):
        return None
    fracs = [f for f in forms if isinstance(f, Fraction)]
    if len(fracs) == len(forms):
        return sum(fracs, Fraction(0))
    surds = [f for f in forms if isinstance(f, Surd)]
    if surds:
        if len(surds) != len(forms) or len({f.m for f in surds}) != 1:
            return None
        return surd(sum((f.coef for f in surds), Fraction(0)), surds[0].m)
    if not same_den(forms):
        return None
    den = next(f.den for f in forms if isinstance(f, Sum))
    coefs: dict = {}
    for f in forms:
        if isinstance(f, Fraction):
            if not f:
                continue
            if den is not None:
                return None  # a number plus a quotient: SymPy keeps other shapes
            coefs[None] = coefs.get(None, Fraction(0)) + f
            continue
        assert isinstance(f, Sum)
        for s, c in f.terms:
            coefs[s] = coefs.get(s, Fraction(0)) + c
    out = _sum(coefs, den)
    if isinstance(out, Sum) and out.den is not None:
        # Σ c·e^s over a row sum whose terms the numerator repeats c times (softmax weights
        # that sum to one, times a column constant on the live keys): exactly the number c
        whole = is_rational(out)
        if whole is not None:
            return whole
    return out


def same_den(forms: Sequence[Form]) -> bool:
    """True when every ``Sum`` among ``forms`` (at least one) has the same ``den`` (or none).

    The terms of a row share the very row-sum object, so identity settles it at once;
    otherwise the row sums are compared by value (hashing a Sum hashes its fractions).
    """
    sums = [f for f in forms if isinstance(f, Sum)]
    if not sums:
        return False
    first = sums[0].den
    return all(f.den is first for f in sums) or len({f.den for f in sums}) == 1


def _scale(f: Form, r: Fraction) -> Form:
    if not r:
        return Fraction(0)
    if isinstance(f, Fraction):
        return f * r
    if isinstance(f, Surd):
        return Surd(f.coef * r, f.m)
    return Sum(tuple((s, c * r) for s, c in f.terms), f.den)


def mul(a: Form | None, b: Form | None) -> Form | None:
    """The canonical product of a rational with anything, or of two surds."""
    if a is None or b is None:
        return None
    if isinstance(b, Fraction):
        return _scale(a, b)
    if isinstance(a, Fraction):
        return _scale(b, a)
    if isinstance(a, Surd) and isinstance(b, Surd):
        g = math.gcd(a.m, b.m)
        return surd(a.coef * b.coef * g, (a.m // g) * (b.m // g))
    return None


def div(a: Form | None, b: Form | None) -> Form | None:
    """The canonical quotient: by a number or a surd, or one term over a row sum."""
    if a is None or b is None or b == 0:
        return None
    if a == b:
        return Fraction(1)
    if isinstance(b, Fraction):
        return _scale(a, 1 / b)
    if isinstance(b, Surd):
        if isinstance(a, Sum):
            return None
        return mul(a, Surd(1 / (b.coef * b.m), b.m))
    if b.den is not None or any(c < 0 for _, c in b.terms):
        return None
    if isinstance(a, Fraction):
        num: tuple = ((None, a),)
    elif isinstance(a, Sum) and a.den is None and len(a.terms) == 1:
        num = a.terms
    else:
        return None
    if len(b.terms) == 1:  # c_a·e^s / (c_b·e^s) cancels; other exponents would combine
        (s_b, c_b), (s_a, c_a) = b.terms[0], num[0]
        return c_a / c_b if s_a == s_b else None
    return Sum(num, b)


def is_rational(f: Form) -> Fraction | None:
    """The exact rational value of a form, or None when it is irrational.

    A surd is irrational, and so is ``N/S`` unless the numerator's coefficients are a
    multiple of the row sum's (exponentials of distinct algebraic numbers are linearly
    independent: Lindemann–Weierstrass).
    """
    if isinstance(f, Fraction):
        return f
    if isinstance(f, Surd) or f.den is None:
        return None  # a Sum without den holds a term with an exponential (else it is a number)
    if len(f.terms) != len(f.den.terms):
        return None
    num, den = dict(f.terms), dict(f.den.terms)
    if num.keys() != den.keys():
        return None
    first = next(iter(num))
    ratio = num[first] / den[first]
    return ratio if all(num[s] == ratio * den[s] for s in num) else None


# ------------------------------------------------------------------------------ printing


def _rational_text(r: Fraction) -> str:
    return str(r.numerator) if r.denominator == 1 else f"{r.numerator}/{r.denominator}"


def _mul_text(coef: Fraction, nums: list[str], dens: list[str]) -> str:
    """SymPy's ``_print_Mul`` for ``coef · Π nums / Π dens`` (factors already printed)."""
    sign = "-" if coef < 0 else ""
    p, q = abs(coef.numerator), coef.denominator
    a = ([str(p)] if p != 1 else []) + nums
    b = ([str(q)] if q != 1 else []) + dens
    if not a:
        a = ["1"]
    if not b:
        return sign + "*".join(a)
    if len(b) == 1:
        return sign + "*".join(a) + "/" + b[0]
    return sign + "*".join(a) + "/(" + "*".join(b) + ")"


def _surd_text(f: Surd) -> str:
    root = f"sqrt({f.m})"
    if f.coef == 1:
        return root
    return _mul_text(f.coef, [root], [])


def _exp_text(s: Exponent) -> str:
    if s == 1:
        return "E"
    return f"exp({_rational_text(s) if isinstance(s, Fraction) else _surd_text(s)})"


def _log_exp(s: Exponent | None) -> float:
    """The natural log of ``e^s``: ``s`` as a float."""
    if s is None:
        return 0.0
    if isinstance(s, Fraction):
        return float(s)
    return float(s.coef) * math.sqrt(s.m)


def _log_sum(f: Sum) -> float:
    """The natural log of a row sum of positive terms (computed without overflow)."""
    logs = [math.log(c) + _log_exp(s) for s, c in f.terms]
    top = max(logs)
    return top + math.log(math.fsum(math.exp(x - top) for x in logs))


def _order_key(s: Exponent | None, c: Fraction, log_den: float) -> tuple[int, float]:
    """Sorts terms by value, ascending, from their logs (no overflow on large scores)."""
    log_abs = math.log(abs(c)) + _log_exp(s) - log_den
    return (0, -log_abs) if c < 0 else (1, log_abs)


def _term_text(s: Exponent | None, c: Fraction, den_text: str | None) -> str:
    if den_text is None:
        if s is None:
            return _rational_text(c)
        if c == 1:
            return _exp_text(s)
        return _mul_text(c, [_exp_text(s)], [])
    if s is None and c == 1:
        return "1/" + den_text  # Pow(S, -1)
    return _mul_text(c, [] if s is None else [_exp_text(s)], [den_text])


def _is_numberlike(s: Exponent | None, c: Fraction) -> bool:
    """The term is a SymPy Number or NumberSymbol (a rational, or E itself)."""
    return s is None or (s == 1 and c == 1)


# The text and log of the row sums recently printed: every weight and output of a row divides
# by the same row sum (the same object).
_dens = IdentityMemo(4096)


def _den(den: Sum) -> tuple[str, float]:
    """A row sum's text, parenthesized as a denominator, and its log."""
    return _dens.get((den,), (), lambda: ("(" + _sum_text(den) + ")", _log_sum(den)))


def _sum_text(f: Sum) -> str:
    den_text, log_den = (None, 0.0) if f.den is None else _den(f.den)
    terms = list(f.terms)
    if len(terms) == 1:
        return _term_text(*terms[0], den_text)
    ordered = None
    if f.den is None and len(terms) == 2:
        # sstr keeps "number - k*x" when the sum is a positive number and one negative term
        # of exactly two factors (a coefficient and an exponential)
        by_kind = sorted(terms, key=lambda t: not _is_numberlike(*t))
        (s0, c0), (s1, c1) = by_kind
        if _is_numberlike(s0, c0) and not _is_numberlike(s1, c1) and c1 < 0 < c0:
            ordered = by_kind
    if ordered is None:
        ordered = sorted(terms, key=lambda t: _order_key(t[0], t[1], log_den))
    out = ""
    for i, (s, c) in enumerate(ordered):
        text = _term_text(s, c, den_text)
        if text.startswith("-"):
            out += ("-" if i == 0 else " - ") + text[1:]
        else:
            out += ("" if i == 0 else " + ") + text
    return out


def text(f: Form) -> str:
    """The text ``sympy.sstr`` prints for the SymPy expression of this form."""
    if isinstance(f, Fraction):
        return _rational_text(f)
    if isinstance(f, Surd):
        return _surd_text(f)
    return _sum_text(f)
