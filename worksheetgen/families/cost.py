"""The O(T^2) bill: attention scores per head per layer, and in total for h heads and L layers."""

from __future__ import annotations

from typing import Any

import numpy as np

from worksheetgen.attention.compute import Recipe
from worksheetgen.errors import SolveError
from worksheetgen.exact import mathtex
from worksheetgen.exact.answers import integer_answer
from worksheetgen.families.base import BoolParam, Family, IntParam, pick
from worksheetgen.language import N_, gettext
from worksheetgen.model import Choices, ParamValue, Part, Pinned, Shown, Solution, Step


def counts(t: int, h: int, layers: int) -> dict[str, int]:
    """Scores per head, in total, in total at 2T, and unmasked under a causal mask."""
    return {
        "per_head": t * t,
        "total": h * layers * t * t,
        "total_doubled": h * layers * (2 * t) * (2 * t),
        "unmasked": t * (t + 1) // 2,
    }


def grouped(n: int) -> str:
    """A large whole number in the documents' one digit-grouping style (LaTeX math)."""
    return mathtex.grouped(n)


def total_question(h: int, layers: int) -> str:
    """The question for the total, worded for one head or one layer as well as for many."""
    if h > 1 and layers > 1:
        return gettext(
            "How many scores do all {h} heads of all {layers} layers compute?", h=h, layers=layers
        )
    if h > 1:
        return gettext("How many scores do all {h} heads of the one layer compute?", h=h)
    if layers > 1:
        return gettext(
            "How many scores do the heads of all {layers} layers (one head each) compute?",
            layers=layers,
        )
    return gettext("How many scores does the one head of the one layer compute?")


class Cost(Family):
    """How many attention scores a model computes: T^2 per head per layer, h*L*T^2 in all."""

    name = "cost"
    answers = ("per_head", "total", "total_doubled", "unmasked")
    title = N_("The cost of attention")  # printed translated (item_title)
    summary = (
        "Scores per head per layer (T^2), in total for h heads and L layers (h*L*T^2), "
        "when T doubles, and optionally how many a causal mask leaves."
    )
    params = (
        IntParam("T", 1, 1_000_000, Choices((4, 8, 16, 128, 512, 1024)), "sequence length"),
        IntParam("h", 1, 256, Choices((2, 4, 8, 12)), "heads per layer"),
        IntParam("L", 1, 512, Choices((2, 3, 6, 12)), "number of layers"),
        BoolParam("doubling", Pinned(True), "also ask the total when T doubles"),
        BoolParam(
            "causal",
            Pinned(False),
            "also ask how many scores per head a causal mask leaves (T(T+1)/2)",
        ),
    )
    prompt = N_(
        "A transformer has $L = {{ L }}$ {{ 'layer' if L == 1 else 'layers' }} of "
        "self-attention with $h = {{ h }}$ {{ 'head' if h == 1 else 'heads' }} each, and "
        "reads a sequence of $T = {{ T }}$ {{ 'token' if T == 1 else 'tokens' }}. Every "
        "head of every layer scores each query against every key."
    )

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        return {
            "T": pick(params["T"], rng),
            "h": pick(params["h"], rng),
            "L": pick(params["L"], rng),
            "doubling": bool(pick(params["doubling"], rng)),
            "causal_count": bool(pick(params["causal"], rng)),
        }

    fingerprint = ("per_head", "total", "total_doubled", "unmasked")

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
        c = counts(given["T"], given["h"], given["L"])
        out = {"per_head": c["per_head"], "total": c["total"]}
        if given["doubling"]:
            out["total_doubled"] = c["total_doubled"]
        if given["causal_count"]:
            out["unmasked"] = c["unmasked"]
        return out

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        t, h, layers = given["T"], given["h"], given["L"]
        c = counts(t, h, layers)
        if c["per_head"] != t**2 or c["total_doubled"] != 4 * c["total"]:
            raise SolveError("score counts broke T^2 or the factor 4", field=item)
        g = {k: grouped(v) for k, v in c.items()}
        answers = [
            integer_answer("per_head", "T^2", c["per_head"]),
            integer_answer("total", "hLT^2", c["total"]),
        ]
        parts = [
            Part(
                gettext("How many attention scores does one head of one layer compute?"), "per_head"
            ),
            Part(total_question(h, layers), "total"),
        ]
        steps = [
            Step(
                gettext("One score per (query, key) pair: a $T \\times T$ table per head"),
                rf"T \cdot T = {t} \cdot {t} = {g['per_head']}",
            ),
            Step(
                gettext("Every head of every layer has its own table"),
                rf"h \cdot L \cdot T^2 = {h} \cdot {layers} \cdot {g['per_head']} = "
                rf"{g['total']}",
            ),
        ]
        if given["doubling"]:
            answers.append(integer_answer("total_doubled", "hL(2T)^2", c["total_doubled"]))
            parts.append(
                Part(
                    gettext(
                        "The sequence doubles to $T = {t}$ tokens. How many scores in all now?",
                        t=2 * t,
                    ),
                    "total_doubled",
                )
            )
            steps.append(
                Step(
                    gettext(
                        "Doubling $T$ multiplies every table by $2^2 = 4$: the bill is $O(T^2)$"
                    ),
                    rf"h \cdot L \cdot (2T)^2 = 4 \cdot {g['total']} = "
                    rf"{g['total_doubled']}",
                )
            )
        if given["causal_count"]:
            answers.append(integer_answer("unmasked", "T(T+1)/2", c["unmasked"]))
            parts.append(
                Part(
                    gettext(
                        "Under a causal mask, how many scores per head are not masked "
                        "(query $i$ sees keys $1, \\ldots, i$)?"
                    ),
                    "unmasked",
                )
            )
            steps.append(
                Step(
                    gettext("Query $i$ keeps $i$ keys: $1 + 2 + \\cdots + T$; still $O(T^2)$"),
                    rf"\frac{{T(T+1)}}{{2}} = \frac{{{t} \cdot {t + 1}}}{{2}} = "
                    rf"{g['unmasked']}",
                )
            )
        shown = (
            Shown("T", "scalar", str(t)),
            Shown("h", "scalar", str(h)),
            Shown("L", "scalar", str(layers)),
        )
        return Solution(shown=shown, parts=tuple(parts), answers=tuple(answers), steps=tuple(steps))
