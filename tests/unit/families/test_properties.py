"""Property-based tests over every registered family with random parameters (Hypothesis).

For each family in worksheetgen.families.FAMILIES (new families are covered automatically) a
random question is written as a bank and built: the result is a Build or a clean
WorksheetgenError, never another exception; the exact answers agree with their floats and
printed values (checked independently with SymPy and Decimal); the key invariants hold
(checked here, apart from the build's own checks); and a build gives the same bytes under
different PYTHONHASHSEED values.

A behaviour across modules, not one module's tests (bank.load, errors, families, families.base,
keyjson.write, pipeline.sheet).
"""

from __future__ import annotations

import math
import os
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sympy as sp
import yaml
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from tests import oracles
from tests.solved import make_build, render_all
from worksheetgen.bank.load import load_banks
from worksheetgen.errors import InvariantError, SolveError, WorksheetgenError
from worksheetgen.families import FAMILIES, get_family
from worksheetgen.families.base import BoolParam, IntParam, MatrixParam
from worksheetgen.keyjson.write import key_json

# each example is a whole build: few examples, no deadline, no shrinking (a failing example is
# reported as drawn), the same examples on every run
# WORKSHEETGEN_PROPERTY_EXAMPLES=200 runs longer, with fresh random examples on every run
LONG = os.environ.get("WORKSHEETGEN_PROPERTY_EXAMPLES")


SETTINGS = settings(
    max_examples=int(LONG or 12),
    deadline=None,
    derandomize=LONG is None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def int_value(draw: st.DrawFn, p: IntParam) -> Any:
    """A bank value for an integer parameter: pinned, a range or choices, within bounds."""
    lo, hi = p.lo, min(p.hi, p.lo + 200)  # wide parameters (model widths) stay cheap
    kind = draw(st.sampled_from(["pinned", "range", "choices"]))
    if kind == "pinned":
        return draw(st.integers(lo, hi))
    if kind == "range":
        a, b = sorted(draw(st.tuples(st.integers(lo, hi), st.integers(lo, hi))))
        return {"min": a, "max": b}
    return {"choices": draw(st.lists(st.integers(lo, hi), min_size=1, max_size=4))}


@st.composite
def matrix_value(draw: st.DrawFn, p: MatrixParam) -> list[list[Any]]:
    rows = draw(st.integers(p.min_dim, min(p.max_dim, 4)))
    cols = draw(st.integers(p.min_dim, min(p.max_dim, 4)))
    number = st.one_of(st.integers(-5, 5), st.sampled_from([0.5, -1.25, 2.5, 0.1]))
    return [[draw(number) for _ in range(cols)] for _ in range(rows)]


@st.composite
def question(draw: st.DrawFn, family: str) -> dict[str, Any]:
    """A random bank question of ``family``: some parameters set, the rest left at defaults."""
    fam = get_family(family)
    params: dict[str, Any] = {}
    for p in fam.params:
        if draw(st.integers(0, 2)) != 0:
            continue  # leave the default (two times in three, so most draws build)
        if isinstance(p, IntParam):
            params[p.name] = draw(int_value(p))
        elif isinstance(p, BoolParam):
            params[p.name] = draw(st.one_of(st.booleans(), st.just({"choices": [True, False]})))
        elif isinstance(p, MatrixParam) and draw(st.integers(0, 3)) == 0:
            params[p.name] = draw(matrix_value(p))
    q: dict[str, Any] = {
        "id": "q1",
        "family": family,
        "params": params,
        "decimals": draw(st.integers(0, 4)),
    }
    if fam.supports_choice and draw(st.integers(0, 3)) == 0:
        q["format"] = "choice"
    return q


def build_or_error(questions: list[dict[str, Any]], seed: int) -> Any:
    """A Build with its documents and key.json, or the clean error a user would see."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bank.yaml"
        path.write_text(yaml.safe_dump({"questions": questions}), encoding="utf-8")
        try:
            bank = load_banks([path])
            built = make_build(bank, seed)
            docs = render_all(built)
            key = key_json(built)
        except (SolveError, InvariantError):
            raise  # a wrong key is a bug, never bad input
        except WorksheetgenError as exc:
            assert "\n" not in str(exc)
            assert str(exc).startswith(f"{path}:"), str(exc)  # names the bank and its line
            return exc
    return built, docs, key


def as_float(x: Any) -> float:
    return -math.inf if x in ("-inf", "-oo") else float(x)


def flat(x: Any) -> list[Any]:
    if isinstance(x, list | tuple):
        return [y for item in x for y in flat(item)]
    return [x]


def half_up(exact: sp.Expr, decimals: int) -> Decimal:
    """Round an exact value half-up to ``decimals``, with 30 digits to spare."""
    size = abs(sp.N(exact, 20))
    digits = (int(sp.floor(sp.log(size, 10))) + 1 if size >= 1 else 1) + decimals + 30
    return oracles.half_up(Decimal(str(sp.N(exact, digits))), decimals)


def check_answers(item: Any) -> None:
    """Exact strings, floats and printed strings of every numeric answer agree."""
    for a in item.solution.answers:
        if a.kind not in ("matrix", "vector", "scalar") or a.exact is None:
            continue
        exact, values, printed = flat(a.exact), flat(a.value), flat(a.rounded)
        assert len(exact) == len(values) == len(printed), a.name
        for e, v, r in zip(exact, values, printed, strict=True):
            if e in ("-oo", "-inf"):
                assert as_float(v) == -math.inf and r in ("-inf", "-oo"), (a.name, e, v, r)
                continue
            expr = sp.sympify(e)
            number = float(sp.N(expr, 30))
            assert math.isclose(number, float(v), rel_tol=1e-9, abs_tol=1e-12), (a.name, e, v)
            want = half_up(expr, item.spec.decimals)
            if len(want.as_tuple().digits) <= 40:
                assert Decimal(str(r)) == want, (a.name, e, r, want)
            else:  # beyond the 50-digit working precision only the leading digits can agree
                assert math.isclose(float(Decimal(str(r))), float(want), rel_tol=1e-30), r


def independent_attention(given: dict[str, Any]) -> np.ndarray | None:
    """A = softmax(scores / sqrt(d_k)) with NumPy, from the given values alone."""
    if "S" in given and "d_k" in given:
        scores = np.asarray(given["S"], dtype=float) / np.sqrt(given["d_k"])
    elif "scaled" in given:
        scores = np.asarray(given["scaled"], dtype=float)
    elif "Q" in given and "K" in given and "X" not in given:
        q, k = np.asarray(given["Q"], dtype=float), np.asarray(given["K"], dtype=float)
        scores = q @ k.T / np.sqrt(q.shape[1])
    else:
        return None
    if given.get("causal"):
        scores = np.where(np.triu(np.ones(scores.shape, dtype=bool), 1), -np.inf, scores)
    return np.array(oracles.softmax_rows(scores.tolist()))


def check_invariants(item: Any) -> None:
    """The key's invariants, computed here from the printed key's float values."""
    answers = {a.name: a for a in item.solution.answers}
    a = answers.get("A")
    if a is not None and a.kind == "matrix":
        weights = np.array([[as_float(x) for x in row] for row in a.value])
        assert np.all(weights >= 0) and np.all(weights <= 1)
        assert np.allclose(weights.sum(axis=1), 1.0, atol=1e-12)
        if item.given.get("causal"):
            assert np.all(weights[np.triu_indices_from(weights, 1)] == 0)
        expected = independent_attention(item.given)
        if expected is not None:
            assert np.allclose(weights, expected, rtol=1e-9, atol=1e-12)
    if a is not None and a.kind == "vector":
        weights = np.array([as_float(x) for x in a.value])
        assert np.all(weights >= 0) and math.isclose(weights.sum(), 1.0, abs_tol=1e-12)
    if "d_k" in answers and "concat_width" in answers and {"d", "h"} <= set(item.given):
        d, h = item.given["d"], item.given["h"]
        assert int(answers["d_k"].value) * h == d
    for part in item.solution.parts:
        assert part.answer in answers
    if item.spec.format == "choice":
        assert sum(1 for c in item.solution.choices if c.correct) == 1


@pytest.mark.parametrize("family", sorted(FAMILIES))
@SETTINGS
@given(data=st.data())
def test_random_question_builds_or_fails_cleanly_and_its_key_is_right(family, data) -> None:
    q = data.draw(question(family), label="question")
    seed = data.draw(st.integers(0, 2**63 - 1), label="seed")
    out = build_or_error([q], seed)
    if isinstance(out, WorksheetgenError):
        event(f"clean error: {type(out).__name__}")
        return
    built, docs, key = out
    event("built")
    (item,) = built.sheets[0].items
    check_answers(item)
    check_invariants(item)
    assert set(docs) == {
        "sheet.tex",
        "key.tex",
        "key-grid.tex",
        "sheet.md",
        "key.md",
        "key-grid.md",
        "sheet.html",
        "key.html",
    }
    (entry,) = key["sheets"][0]["questions"]
    assert key["seed"] == seed and entry["id"] == "q1" and entry["given"] == item.given


#: the families whose question a bank writes itself (a text parameter with no default): the
#: words a bank gives them, from the bank guide's example (docs/guide/banks.md)
WRITTEN: dict[str, dict[str, Any]] = {
    "mark-all": {
        "question": "Which of these are true of the causal mask?",
        "options": [
            "It sets the scores of later keys to $-\\infty$",
            "Each row of $A$ still sums to 1",
            "It makes $QK^\\top$ symmetric",
        ],
        "right": ["a", "b"],
    },
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_builds_with_its_defaults_for_many_seeds(family) -> None:
    for seed in range(5):
        question: dict[str, Any] = {"id": "q1", "family": family}
        if family in WRITTEN:  # without its words, one line naming what is missing
            missing = build_or_error([question], seed)
            assert isinstance(missing, WorksheetgenError), family
            assert "got nothing (missing)" in str(missing)
            question["params"] = WRITTEN[family]  # the bank's words; every other default
        out = build_or_error([question], seed)
        assert not isinstance(out, WorksheetgenError), str(out)
        (item,) = out[0].sheets[0].items
        check_answers(item)
        check_invariants(item)
