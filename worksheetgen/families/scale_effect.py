"""The scale's effect and its reason: softmax with and without 1/sqrt(d_k), and Var(q.k) = d_k."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from worksheetgen.attention.compute import Recipe
from worksheetgen.exact import number as ex
from worksheetgen.exact.answers import choice_answer, integer_answer, text_answer
from worksheetgen.exact.mathtex import vector
from worksheetgen.families.base import BoolParam, IntParam, Param, pick
from worksheetgen.families.common import pinned, text_label
from worksheetgen.families.scaling import Scaling
from worksheetgen.language import N_, gettext, pgettext, said
from worksheetgen.model import Choices, ParamValue, Part, Pinned, Shown, Solution, Step

ONE_HOT = N_("it pushes the softmax toward a one-hot (one weight near 1)")
LARGE_DK_OPTIONS = (
    ONE_HOT,
    N_("it pushes the softmax toward uniform weights"),
    N_("nothing: the softmax does not depend on the size of the scores"),
)
WHY_SCALE = N_(
    "Without the scale, $q \\cdot k$ has variance $d_k$, so its typical size "
    "($\\sqrt{d_k}$) grows with the width. Large logits push the softmax toward a one-hot: "
    "one weight near 1, the rest near 0, and almost no gradient. Dividing by $\\sqrt{d_k}$ "
    "divides the variance by $d_k$, so $q \\cdot k/\\sqrt{d_k}$ has variance 1 whatever the "
    "width, and the softmax still mixes. Dividing by $d_k$ instead would leave variance "
    "$1/d_k$ and flatten the softmax toward uniform."
)


class ScaleEffect(Scaling):
    """Scaling's row (softmax with and without the scale) plus the variance argument."""

    name = "scale-effect"
    answers = (*Scaling.answers, "var_qk", "var_scaled", "large_dk", "why_scale")
    title = N_("Why the scores are scaled")  # printed translated (item_title)
    summary = (
        "Softmax a row with and without 1/sqrt(d_k) (did the largest entry gain or "
        "lose?), and the variance of q.k (= d_k) and of q.k/sqrt(d_k) (= 1)."
    )
    supports_choice = True
    slips = ("scale-by-dk", "no-scale")
    carries = Scaling.carries  # the row's parts (the variance parts carry nothing)
    params: ClassVar[tuple[Param, ...]] = tuple(
        IntParam(
            "d_k",
            2,
            1024,
            Choices((4, 9, 16)),
            "key width: the row is divided by sqrt(d_k), and Var(q.k) = d_k",
        )
        if p.name == "d_k"
        else p
        for p in Scaling.params
    ) + (
        BoolParam("softmax", Pinned(True), "ask the row's softmax with and without the scale"),
        BoolParam(
            "variance",
            Pinned(True),
            "ask Var(q.k), Var(q.k/sqrt(d_k)) and why the scale fixes the variance",
        ),
    )
    #: a multiple-choice item (``format`` choice) asks the target alone: the row's softmax
    #: when the row is given, so the variance parts' sentence is left out
    prompt = N_(
        "{% if softmax %}A query's raw scores against {{ n }} keys are $s = {{ row_tex }}$"
        ", with $d_k = {{ d_k }}$.{% endif %}"
        "{% if variance and not (softmax and format == 'choice') %}{% if softmax %} For the "
        "variance parts, suppose{% else %}Suppose{% endif %} the $d_k = {{ d_k }}$ "
        "coordinates of a query $q$ and of a key $k$ are independent, each with mean 0 "
        "and variance 1.{% endif %}"
    )

    def check(self, params: dict[str, ParamValue]) -> list[tuple[str, str]]:
        if pinned(params, "softmax") is False and pinned(params, "variance") is False:
            return [
                ("variance", "expected softmax or variance (or both) to be true, got both false")
            ]
        return super().check(params)

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        given = super().draw(params, rng)
        softmax = bool(pick(params["softmax"], rng))
        variance = bool(pick(params["variance"], rng))
        if not (softmax or variance):
            variance = True
        if not softmax:
            given = {"d_k": given["d_k"]}
        return {**given, "softmax": softmax, "variance": variance}

    fingerprint: ClassVar[tuple[str, ...]] = ("scaled", "A", "var_scaled")

    def target_for(self, given: dict[str, Any]) -> str:
        """The scaled softmax when the row is asked, else the scaled variance."""
        return "A" if given["softmax"] else "var_scaled"

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
        out: dict[str, Any] = super().evaluate(given, recipe) if given["softmax"] else {}
        if given["variance"]:
            d_k = ex.integer(given["d_k"])
            divisor = {"sqrt": d_k, "dk": ex.mul(d_k, d_k), "none": ex.ONE}[recipe.scale]
            var = ex.div(d_k, divisor)
            out["var_scaled"] = ex.as_int(var) if ex.is_integer(var) else var
        return out

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        d_k = given["d_k"]
        shown: tuple[Shown, ...] = (Shown("d_k", "scalar", str(d_k)),)
        answers: list = []
        parts: list[Part] = []
        steps: list[Step] = []
        if given["softmax"]:
            base = super().solve(given, decimals, item)
            shown, answers, parts, steps = (
                base.shown,
                list(base.answers),
                list(base.parts),
                list(base.steps),
            )
        if given["variance"]:
            var_scaled = ex.div(ex.integer(d_k), ex.integer(d_k))
            answers += [
                integer_answer("var_qk", r"\mathrm{Var}(q \cdot k)", d_k),
                integer_answer(
                    "var_scaled",
                    rf"\mathrm{{Var}}(q \cdot k/\sqrt{{{d_k}}})",
                    ex.as_int(var_scaled),
                ),
                choice_answer(
                    "large_dk",
                    r"\text{large } d_k",
                    said(ONE_HOT),
                    tuple(map(said, LARGE_DK_OPTIONS)),
                    gettext(
                        "Scores with a large spread make the largest exponential dominate the sum."
                    ),
                ),
                text_answer(
                    "why_scale", text_label(pgettext("answer label", "why")), said(WHY_SCALE)
                ),
            ]
            parts += [
                Part(gettext("What is the variance of the dot product $q \\cdot k$?"), "var_qk"),
                Part(
                    gettext("What is the variance of $q \\cdot k/\\sqrt{{{d_k}}}$?", d_k=d_k),
                    "var_scaled",
                ),
                Part(
                    gettext("Without the scale, what does a large $d_k$ do to the softmax?"),
                    "large_dk",
                ),
                Part(
                    gettext(
                        "Explain in two or three sentences why attention divides by "
                        "$\\sqrt{d_k}$ (and not by $d_k$)."
                    ),
                    "why_scale",
                ),
            ]
            steps += [
                Step(
                    gettext(
                        "Each product $q_i k_i$ has mean 0 and variance 1 (independent factors)"
                    ),
                    r"\mathrm{Var}(q_i k_i) = \mathbb{E}[q_i^2]\,\mathbb{E}[k_i^2] = "
                    r"1 \cdot 1 = 1",
                ),
                Step(
                    gettext("The {d_k} products are independent, so their variances add", d_k=d_k),
                    rf"\mathrm{{Var}}(q \cdot k) = \sum_{{i=1}}^{{{d_k}}} \mathrm{{Var}}"
                    rf"(q_i k_i) = {d_k}",
                ),
                Step(
                    gettext("Dividing by $\\sqrt{{{d_k}}}$ divides the variance by {d_k}", d_k=d_k),
                    rf"\mathrm{{Var}}\left(\frac{{q \cdot k}}{{\sqrt{{{d_k}}}}}\right) = "
                    rf"\frac{{{d_k}}}{{{d_k}}} = 1",
                ),
                Step(gettext("Why it matters:"), text=said(WHY_SCALE)),
            ]
        return Solution(shown=shown, parts=tuple(parts), answers=tuple(answers), steps=tuple(steps))

    def prompt_context(self, given: dict[str, Any]) -> dict[str, Any]:
        if "row" not in given:
            return {"row_tex": "", "n": 0}
        return {"row_tex": vector([str(x) for x in given["row"]])}
