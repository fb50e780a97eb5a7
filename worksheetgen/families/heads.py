"""Multi-head widths: d and h give d_k = d/h, the concatenated width and the shape of W_O."""

from __future__ import annotations

from typing import Any

import numpy as np

from worksheetgen.attention.compute import Recipe
from worksheetgen.exact.answers import integer_answer, shape_answer
from worksheetgen.exact.mathtex import shape
from worksheetgen.families.base import Carry, Family, IntParam, Redraw, pick
from worksheetgen.families.common import text_label
from worksheetgen.language import N_, gettext, pgettext
from worksheetgen.model import Choices, ParamValue, Part, Pinned, Shown, Solution, Step


def _values(p: ParamValue) -> list[int]:
    if isinstance(p, Pinned):
        return [p.value]
    if isinstance(p, Choices):
        return list(p.values)
    return list(range(p.lo, p.hi + 1))


class Heads(Family):
    name = "heads"
    answers = ("d_k", "concat_width", "W_O_shape")
    title = N_("Multi-head widths")  # printed translated (item_title)
    summary = "Model width d and h heads: head width d_k = d/h, concat width, shape of W_O."
    # wo-transposed is not declared: here the concat is h * d/h = d wide, so W_O is square and
    # its transpose has the same shape (multihead with a value width of its own has it)
    slips = ("dk-equals-d",)
    # the concat width is h times the student's d_k; W_O is (their concat width) x d
    carries = (
        Carry("concat_width", ("d_k",), ("times",), args=(("factor", "h"),)),
        Carry("W_O_shape", ("concat_width",), ("shape",), args=(("cols", "d"),)),
    )
    params = (
        IntParam("d", 2, 4096, Choices((4, 8, 12, 16, 24, 512, 768)), "model width"),
        IntParam("h", 1, 64, Choices((2, 3, 4, 8, 12)), "number of heads (must divide d)"),
    )
    prompt = N_(
        "A multi-head attention layer has model width $d = {{ d }}$ and $h = {{ h }}$ "
        "heads. Each head attends in its own slice of the channels."
    )

    def check(self, params: dict[str, ParamValue]) -> list[tuple[str, str]]:
        ds, hs = _values(params["d"]), _values(params["h"])
        if not any(d % h == 0 for d in ds for h in hs):
            if len(ds) == 1 and len(hs) == 1:
                return [("h", f"expected h to divide d = {ds[0]}, got h = {hs[0]}")]
            return [("h", "expected at least one choice of h that divides a choice of d, got none")]
        return []

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        d, h = pick(params["d"], rng), pick(params["h"], rng)
        if d % h:
            raise Redraw("could not draw d and h with h dividing d")
        return {"d": d, "h": h}

    fingerprint = ("d_k", "concat_width", "W_O_shape")

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
        d, h = given["d"], given["h"]
        d_k = d if recipe.head_width == "d" else d // h
        concat = h * d_k
        shape_ = (d, concat) if recipe.wo_transposed else (concat, d)
        return {"d_k": d_k, "concat_width": concat, "W_O_shape": shape_}

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        d, h = given["d"], given["h"]
        d_k = d // h
        concat = h * d_k
        answers = (
            integer_answer("d_k", "d_k", d_k),
            integer_answer(
                "concat_width", text_label(pgettext("answer label", "concat width")), concat
            ),
            shape_answer("W_O_shape", r"W_O", (concat, d)),
        )
        parts = (
            Part(gettext("What is the width $d_k$ of each head?"), "d_k"),
            Part(gettext("What is the width of the concatenated head outputs?"), "concat_width"),
            Part(
                gettext(
                    "What is the shape of $W_O$ (rows $\\times$ columns, acting on a row vector)?"
                ),
                "W_O_shape",
            ),
        )
        steps = (
            Step(
                gettext("Each head gets an equal slice of the channels"),
                rf"d_k = d/h = {d}/{h} = {d_k}",
            ),
            Step(
                gettext("Concatenate the heads (this is not a residual)"),
                rf"h \cdot d_k = {h} \cdot {d_k} = {concat}",
            ),
            Step(
                gettext("$W_O$ maps the concatenation back to the model width"),
                rf"W_O \in \mathbb{{R}}^{{{shape((concat, d))}}}",
            ),
        )
        return Solution(
            shown=(Shown("d", "scalar", str(d)), Shown("h", "scalar", str(h))),
            parts=parts,
            answers=answers,
            steps=steps,
        )
