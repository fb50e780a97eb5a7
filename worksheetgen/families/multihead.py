"""Multi-head bookkeeping: d_k = d/h, the concat width, W_O, and the layer's parameter count."""

from __future__ import annotations

from typing import Any

import numpy as np

from worksheetgen.attention.compute import Recipe
from worksheetgen.errors import SolveError
from worksheetgen.exact.answers import integer_answer, shape_answer
from worksheetgen.exact.mathtex import shape
from worksheetgen.families.base import BoolParam, Carry, Family, IntParam, Redraw, pick
from worksheetgen.families.common import param_values, pinned, text_label
from worksheetgen.language import N_, gettext, pgettext
from worksheetgen.model import Choices, ParamValue, Part, Pinned, Shown, Solution, Step


def layer_counts(d: int, h: int, d_k: int, d_v: int, wo_shape: tuple[int, int]) -> tuple[int, int]:
    """Weights and biases of an attention layer whose h heads have key width d_k and value
    width d_v.

    Each head has W_Q, W_K (d x d_k) and W_V (d x d_v), with a bias per output; W_O has the
    given shape and a bias per model channel.
    """
    weights = h * d * (2 * d_k + d_v) + wo_shape[0] * wo_shape[1]
    biases = h * (2 * d_k + d_v) + d
    return weights, biases


class MultiHead(Family):
    """d and h: head width, concat width, W_O's shape, and 4d^2 (+ 4d) parameters."""

    name = "multihead"
    answers = ("d_k", "concat_width", "W_Q_head_shape", "W_O_shape", "params", "params_bias")
    title = N_("Multi-head attention: widths and parameters")  # printed translated (item_title)
    summary = (
        "Model width d and h heads (h divides d): d_k = d/h, concat width, shapes of a "
        "head's W_Q and of W_O, and the layer's parameters with W_O (4d^2, +4d biases)."
    )
    slips = ("dk-equals-d", "wo-transposed")
    # as in heads, except that with a d_v of its own the concat width (h d_v) does not
    # depend on d_k
    carries = (
        Carry("concat_width", ("d_k",), ("times",), args=(("factor", "h"),), unless="d_v_given"),
        Carry("W_O_shape", ("concat_width",), ("shape",), args=(("cols", "d"),)),
    )
    params = (
        IntParam("d", 2, 8192, Choices((8, 12, 16, 64, 512, 768)), "model width"),
        IntParam("h", 1, 128, Choices((2, 4, 8, 12)), "number of heads; must divide d"),
        IntParam(
            "d_v",
            0,
            8192,
            Pinned(0),
            "value width per head; 0 (the default) means d/h as in the note, so W_O is d x d",
        ),
        BoolParam("biases", Pinned(True), "also ask the parameter count with biases"),
        BoolParam("head_shape", Pinned(True), "also ask the shape of one head's W_Q"),
    )
    prompt = N_(
        "A multi-head self-attention layer has model width $d = {{ d }}$ and "
        "$h = {{ h }}$ {{ 'head' if h == 1 else 'heads' }}. Head $i$ projects the input "
        "with its own "
        "$W_Q^{(i)}, W_K^{(i)}$ (each $d \\times d_k$) and $W_V^{(i)}$ "
        "($d \\times d_v$, {% if d_v_given %}here $d_v = {{ d_v }}${% else %}with "
        "$d_v = d_k${% endif %}); the heads' outputs are concatenated and multiplied by "
        "$W_O$. Vectors are rows, so a matrix of shape $m \\times n$ maps width $m$ to "
        "width $n$. Count the weights of all heads' $W_Q$, $W_K$, $W_V$ and of $W_O$; "
        "with biases, each of these maps also has one bias per output."
    )

    def check(self, params: dict[str, ParamValue]) -> list[tuple[str, str]]:
        ds, hs = param_values(params["d"]), param_values(params["h"])
        d_pin, h_pin = pinned(params, "d"), pinned(params, "h")
        if d_pin is not None and h_pin is not None and d_pin % h_pin:
            return [
                (
                    "h",
                    f"expected h to divide d = {d_pin} (d_k = d/h must be a whole "
                    f"number), got h = {h_pin}",
                )
            ]
        if h_pin is not None:
            bad = [d for d in ds if d % h_pin]
            if bad:
                return [
                    (
                        "d",
                        f"expected every d to be a multiple of h = {h_pin}, got "
                        + ", ".join(map(str, bad[:5])),
                    )
                ]
        if d_pin is not None:
            bad = [h for h in hs if d_pin % h]
            if bad:
                return [
                    (
                        "h",
                        f"expected every h to divide d = {d_pin}, got "
                        + ", ".join(map(str, bad[:5])),
                    )
                ]
        if not any(d % h == 0 for d in ds for h in hs):
            return [("h", "expected at least one choice of h that divides a choice of d, got none")]
        return []

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        d = pick(params["d"], rng)
        hs = [h for h in param_values(params["h"]) if d % h == 0]
        if not hs:
            raise Redraw(f"could not draw d with a dividing h in {self.redraws} tries")
        h = hs[int(rng.integers(len(hs)))] if len(hs) > 1 else hs[0]
        d_v = pick(params["d_v"], rng)
        return {
            "d": d,
            "h": h,
            "d_v": d_v or d // h,
            "d_v_given": bool(d_v),
            "biases": bool(pick(params["biases"], rng)),
            "head_shape": bool(pick(params["head_shape"], rng)),
        }

    def slips_for(self, given: dict[str, Any]) -> tuple[str, ...]:
        """dk-equals-d wherever there is more than one head (it changes d_k, and W_O's shape
        too when d_v follows d_k), wo-transposed where W_O is not square."""
        on = {
            "dk-equals-d": given["h"] > 1,
            "wo-transposed": given["h"] * given["d_v"] != given["d"],
        }
        return tuple(s for s in self.slips if on[s])

    def shows_in(self, given: dict[str, Any]) -> tuple[str, ...]:
        """W_O's shape, and d_k: with d_v given, dk-equals-d leaves W_O alone."""
        return ("W_O_shape", "d_k")

    fingerprint = ("d_k", "concat_width", "W_Q_head_shape", "params", "params_bias", "W_O_shape")
    target = "W_O_shape"

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
        d, h = given["d"], given["h"]
        d_k = d if recipe.head_width == "d" else d // h
        d_v = given["d_v"] if given["d_v_given"] else d_k
        concat = h * d_v
        wo = (d, concat) if recipe.wo_transposed else (concat, d)
        weights, biases = layer_counts(d, h, d_k, d_v, wo)
        out: dict[str, Any] = {
            "d_k": d_k,
            "concat_width": concat,
            "W_O_shape": wo,
            "params": weights,
        }
        if given["head_shape"]:
            out["W_Q_head_shape"] = (d, d_k)
        if given["biases"]:
            out["params_bias"] = weights + biases
        return out

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        d, h, d_v = given["d"], given["h"], given["d_v"]
        d_k = d // h
        concat = h * d_v
        weights, biases = layer_counts(d, h, d_k, d_v, (concat, d))
        if h * d_k != d or (
            not given["d_v_given"] and (concat != d or weights != 4 * d * d or biases != 4 * d)
        ):
            raise SolveError(
                f"h * d_k = {h * d_k} is not d = {d}, or the count is not 4d^2", field=item
            )
        answers = [
            integer_answer("d_k", "d_k", d_k),
            integer_answer(
                "concat_width", text_label(pgettext("answer label", "concat width")), concat
            ),
        ]
        parts = [
            Part(gettext("What is the width $d_k$ of each head?"), "d_k"),
            Part(gettext("What is the width of the concatenated head outputs?"), "concat_width"),
        ]
        if given["head_shape"]:
            answers.append(shape_answer("W_Q_head_shape", r"W_Q^{(i)}", (d, d_k)))
            parts.append(
                Part(gettext("What is the shape of one head's $W_Q^{(i)}$?"), "W_Q_head_shape")
            )
        answers += [
            shape_answer("W_O_shape", "W_O", (concat, d)),
            integer_answer("params", text_label(pgettext("answer label", "weights")), weights),
        ]
        parts += [
            Part(gettext("What is the shape of $W_O$?"), "W_O_shape"),
            Part(gettext("How many weights does the layer have in all?"), "params"),
        ]
        if given["biases"]:
            answers.append(
                integer_answer(
                    "params_bias",
                    text_label(pgettext("answer label", "with biases")),
                    weights + biases,
                )
            )
            parts.append(Part(gettext("How many parameters with the biases?"), "params_bias"))
        steps = self.steps(given, d_k, concat, weights, biases)
        shown = [Shown("d", "scalar", str(d)), Shown("h", "scalar", str(h))]
        if given["d_v_given"]:
            shown.append(Shown("d_v", "scalar", str(d_v)))
        return Solution(
            shown=tuple(shown), parts=tuple(parts), answers=tuple(answers), steps=tuple(steps)
        )

    def steps(
        self, given: dict[str, Any], d_k: int, concat: int, weights: int, biases: int
    ) -> list[Step]:
        """The worked steps, in the note's order."""
        d, h, d_v = given["d"], given["h"], given["d_v"]
        note = not given["d_v_given"]
        steps = [
            Step(
                gettext("Each head gets an equal slice of the channels"),
                rf"d_k = d/h = {d}/{h} = {d_k}",
            ),
            Step(
                gettext(
                    "Concatenate the heads' outputs (a concat, not a residual): back to the "
                    "model width"
                )
                if note
                else gettext("Concatenate the heads' outputs (a concat, not a residual)"),
                rf"h \cdot d_v = {h} \cdot {d_v} = {concat}",
            ),
        ]
        if given["head_shape"]:
            steps.append(
                Step(
                    gettext("One head's query projection maps width $d$ to width $d_k$"),
                    rf"W_Q^{{(i)}} \in \mathbb{{R}}^{{{shape((d, d_k))}}}",
                )
            )
        steps.append(
            Step(
                gettext("$W_O$ maps the concatenation back to the model width"),
                rf"W_O \in \mathbb{{R}}^{{{shape((concat, d))}}}",
            )
        )
        per_head = f"{h} \\cdot {d} \\cdot ({d_k} + {d_k} + {d_v})"
        if note:
            steps.append(
                Step(
                    gettext(
                        "Weights: $W_Q$, $W_K$, $W_V$ of every head (together three "
                        "$d \\times d$ matrices), plus $W_O$ ($d \\times d$)"
                    ),
                    rf"{per_head} + {concat} \cdot {d} = 4d^2 = {weights}",
                )
            )
        else:
            steps.append(
                Step(
                    gettext("Weights: $W_Q$, $W_K$, $W_V$ of every head, plus $W_O$"),
                    rf"{per_head} + {concat} \cdot {d} = {weights}",
                )
            )
        if given["biases"]:
            rule = "4d = " if note else ""
            steps.append(
                Step(
                    gettext(
                        "Biases: one per output of each head's three projections, and $d$ for $W_O$"
                    ),
                    rf"{h} \cdot ({d_k} + {d_k} + {d_v}) + {d} = {rule}{biases},"
                    rf"\quad {weights} + {biases} = {weights + biases}",
                )
            )
        return steps

    def prompt_context(self, given: dict[str, Any]) -> dict[str, Any]:
        return {"d_v_given": given["d_v_given"]}
