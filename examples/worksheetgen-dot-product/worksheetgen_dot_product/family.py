"""``dot-product``: one query against one key, the score q·k and the scaled score q·k/√d_k.

The first step of self-attention for a single (query, key) pair. The answers are exact
(``worksheetgen.authoring.exact``), the scaled score can be got wrong by the named slips
``scale-by-dk`` (dividing by d_k) and ``no-scale`` (not dividing), and the scaled score is
carried forward from the student's own q·k when grading. Everything it uses comes from
``worksheetgen.authoring``, the one front door for family authors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# everything a family needs comes from the one front door, worksheetgen.authoring
from worksheetgen.authoring import (
    Carry,
    Choices,
    Family,
    IntParam,
    ParamValue,
    Part,
    Pinned,
    Recipe,
    Shown,
    Solution,
    SolveError,
    Step,
    cross_check,
    exact,
    int_matrix,
    integer_answer,
    pick,
    scalar_answer,
    sqrt_of,
)


def dot(q: list[int], k: list[int]) -> int:
    """q·k of two integer vectors."""
    return sum(a * b for a, b in zip(q, k, strict=True))


class DotProduct(Family):
    """One query-key score: q·k, then q·k/√d_k."""

    name = "dot-product"
    title = "One query, one key"
    summary = "The score q·k of one query and one key, and the scaled score q·k/sqrt(d_k)."
    params = (
        IntParam("d_k", 2, 9, Choices((2, 3, 4)), "length of q and k (the key width)"),
        IntParam("low", -9, 9, Pinned(-2), "smallest entry of q and k"),
        IntParam("high", -9, 9, Pinned(3), "largest entry of q and k"),
    )
    prompt = "A query $q$ and a key $k$ of width $d_k = {{ d_k }}$ are below."
    # the answers its parts ask: a part naming any other fails when this class is defined
    answers = ("score", "scaled")
    # how its given values are shown (worksheetgen.authoring.DISPLAY_KINDS lists the kinds)
    display_kinds = ("vector", "scalar")
    slips = ("scale-by-dk", "no-scale")
    fingerprint = ("scaled",)
    # the scaled score follows from the student's own q·k: a wrong q·k costs marks once
    carries = (Carry("scaled", ("score",), ("scale",), args=(("d_k", "d_k"),)),)

    def check(self, params: dict[str, ParamValue]) -> list[tuple[str, str]]:
        low, high = params["low"], params["high"]
        if isinstance(low, Pinned) and isinstance(high, Pinned) and low.value > high.value:
            return [("high", f"expected high >= low ({low.value}), got {high.value}")]
        return []

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        d_k = pick(params["d_k"], rng)
        lo, hi = sorted((pick(params["low"], rng), pick(params["high"], rng)))
        q, k = int_matrix(rng, 2, d_k, lo, hi)
        return {"q": q, "k": k, "d_k": d_k}

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
        score = exact.integer(dot(given["q"], given["k"]))
        if recipe.scale == "none":
            return {"scaled": score}
        divisor = (
            exact.sqrt_int(given["d_k"]) if recipe.scale == "sqrt" else exact.integer(given["d_k"])
        )
        return {"scaled": exact.div(score, divisor)}

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        q, k, d_k = given["q"], given["k"], given["d_k"]
        score = dot(q, k)
        if score != int(np.dot(q, k)):
            raise SolveError("q·k differs from NumPy's", field=item)
        scaled = exact.div(exact.integer(score), exact.sqrt_int(d_k))
        cross_check(item, "scaled", [exact.to_float(scaled)], [score / np.sqrt(d_k)])
        products = " + ".join(f"({a})({b})" for a, b in zip(q, k, strict=True))
        return Solution(
            shown=(
                Shown("q", "vector", [str(x) for x in q]),
                Shown("k", "vector", [str(x) for x in k]),
                Shown("d_k", "scalar", str(d_k)),
            ),
            parts=(
                Part("Compute the score $q \\cdot k$.", "score"),
                Part(f"Scale it: write $q \\cdot k / \\sqrt{{{d_k}}}$.", "scaled"),
            ),
            answers=(
                integer_answer("score", "q \\cdot k", score),
                scalar_answer("scaled", f"q \\cdot k / {sqrt_of(d_k)}", scaled, decimals),
            ),
            steps=(
                Step("Multiply entry by entry and add", f"q \\cdot k = {products} = {score}"),
                Step(
                    f"Divide by $\\sqrt{{{d_k}}}$",
                    f"{score} / {sqrt_of(d_k)} \\approx {exact.rounded(scaled, decimals)}",
                ),
            ),
        )
