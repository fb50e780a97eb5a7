"""Spot the bug: a worked solution of one attention head that contains exactly one slip.

The item's generator draws Q, K, V (and whether the head is causal), then one slip among
those that apply to these values (``worksheetgen.attention.slips``). The sheet prints the
worked solution computed with that slip, step by step as a student would write it; the
student names the slip (one of the slip descriptions) and writes the corrected A and AV.
The key names the slip and gives the corrected result with the right worked solution.

Because the family declares every slip it can plant and fingerprints A and AV, the draw
stage only keeps variants where every applicable slip gives a different printed AV: the
planted slip always shows in the numbers and no other slip would have produced them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from worksheetgen.attention import slips as mc
from worksheetgen.attention.compute import CORRECT, Trace, attend_float
from worksheetgen.exact import number as ex
from worksheetgen.exact.answers import choice_answer, matrix_answer, output_answer, table
from worksheetgen.exact.mathtex import bmatrix, ints
from worksheetgen.families.attention_tables import QKVHead, attention_steps
from worksheetgen.families.base import (
    BoolParam,
    Family,
    IntParam,
    OptionParam,
    Redraw,
    cross_check,
    int_matrix,
    pick,
)
from worksheetgen.families.common import (
    computed,
    equal_score_rows,
    int_scores,
    text_label,
)
from worksheetgen.language import N_, gettext, pgettext, said
from worksheetgen.model import Choices, IntRange, ParamValue, Part, Pinned, Shown, Solution, Step

PLANTABLE = (
    "no-transpose",
    "scale-by-dk",
    "no-scale",
    "mask-with-zero",
    "softmax-over-columns",
    "mixed-keys",
)


def _values(p: ParamValue) -> tuple[Any, ...]:
    if isinstance(p, Pinned):
        return (p.value,)
    if isinstance(p, Choices):
        return tuple(p.values)
    return tuple(range(p.lo, p.hi + 1))


def buggy_steps(trace: Trace, given: dict[str, Any], slip: str, decimals: int) -> list[Step]:
    """The worked solution as the student wrote it: each step shows what was computed."""

    def r(m: ex.Matrix) -> list[list[str]]:
        return table(m, decimals)

    d_k = given["d_k"]
    assert trace.scores is not None and trace.output is not None
    steps = [Step(gettext("Scores"), r"S = QK^\top = " + bmatrix(r(trace.scores)))]
    if slip == "scale-by-dk":
        steps.append(Step(gettext("Scale"), rf"S/{d_k} \approx " + bmatrix(r(trace.scaled))))
    elif slip != "no-scale":
        steps.append(
            Step(gettext("Scale"), rf"S/\sqrt{{{d_k}}} \approx " + bmatrix(r(trace.scaled)))
        )
    if trace.masked is not None:
        steps.append(
            Step(gettext("Mask the future keys"), r"\tilde S = " + bmatrix(r(trace.masked)))
        )
    steps.append(Step(gettext("Softmax"), r"A \approx " + bmatrix(r(trace.A))))
    steps.append(Step(gettext("Mix"), r"\text{output} \approx " + bmatrix(r(trace.output))))
    return steps


class SpotBug(QKVHead, Family):
    """A worked solution with one planted slip: name it and correct the result."""

    name = "spot-the-bug"
    answers = ("slip", "A", "output")
    title = N_("Spot the bug")  # printed translated (item_title)
    summary = (
        "A worked attention head with exactly one slip: name the slip and write the "
        "corrected A and AV."
    )
    slips = PLANTABLE
    fingerprint = ("scores", "scaled", "masked", "A", "output")
    target = "output"
    params = (
        IntParam("T", 2, 3, IntRange(2, 3), "number of tokens"),
        IntParam(
            "d_k",
            2,
            3,
            Pinned(2),
            "width of queries, keys and values (2 or 3: with 1 the scale cannot go wrong)",
        ),
        IntParam("low", -3, 3, Pinned(0), "smallest entry of Q, K"),
        IntParam("high", -3, 3, Pinned(2), "largest entry of Q, K"),
        IntParam("v_low", -9, 9, Pinned(0), "smallest entry of V"),
        IntParam("v_high", -9, 9, Pinned(3), "largest entry of V"),
        BoolParam("causal", Choices((True, False)), "apply a causal mask (default: drawn)"),
        OptionParam(
            "slip",
            PLANTABLE,
            Choices(PLANTABLE),
            "the slip to plant, or {choices: [...]} to draw one that applies",
        ),
    )
    prompt = N_(
        "A student computed one attention head over $T = {{ T }}$ tokens with "
        "$d_k = {{ d_k }}${% if causal %}, in a decoder (causal mask){% endif %}. "
        "The queries, keys and values are the rows of $Q$, $K$ and $V$. Their worked "
        "solution below contains exactly one slip."
    )

    def check(self, params: dict[str, ParamValue]) -> list[tuple[str, str]]:
        slips = set(_values(params["slip"]))
        low, high = params["low"], params["high"]
        if isinstance(low, Pinned) and isinstance(high, Pinned) and low.value >= high.value:
            return [("high", f"expected high > low ({low.value}), got {high.value}")]
        if slips == {"mask-with-zero"} and True not in _values(params["causal"]):
            return [
                (
                    "causal",
                    "expected causal: true (the slip mask-with-zero needs a mask), got false",
                )
            ]
        d_k = params["d_k"]
        if (
            slips == {"no-transpose"}
            and isinstance(d_k, Pinned)
            and d_k.value not in _values(params["T"])
        ):
            return [
                (
                    "T",
                    f"expected T = d_k = {d_k.value} (Q·K is defined only for a square "
                    f"K), got T from {', '.join(map(str, _values(params['T'])))}",
                )
            ]
        return []

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        allowed = _values(params["slip"])
        t, d_k = pick(params["T"], rng), pick(params["d_k"], rng)
        lo, hi = sorted((pick(params["low"], rng), pick(params["high"], rng)))
        vlo, vhi = sorted((pick(params["v_low"], rng), pick(params["v_high"], rng)))
        causal = bool(pick(params["causal"], rng))
        given: dict[str, Any] = {
            "Q": int_matrix(rng, t, d_k, lo, hi),
            "K": int_matrix(rng, t, d_k, lo, hi),
            "V": int_matrix(rng, t, d_k, vlo, vhi),
            "T": t,
            "d_k": d_k,
            "causal": causal,
        }
        scores = int_scores(given["Q"], given["K"])
        if equal_score_rows(scores, causal):
            raise Redraw(
                "could not draw Q and K without a row of equal scores (its softmax would be "
                "uniform); widen low..high"
            )
        usable = [n for n in PLANTABLE if n in allowed and mc.get(n).applies(given, {})]
        if not usable:
            raise Redraw(
                "could not draw values to which one of the slips " + ", ".join(allowed) + " applies"
            )
        given["slip"] = usable[int(rng.integers(len(usable)))]
        return given

    def slips_for(self, given: dict[str, Any]) -> tuple[str, ...]:
        return PLANTABLE

    def margin_also(self, given: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The student corrects the printed A too: where the planted slip changes A, its A
        must not pass for the right one."""
        return ("A",), (given["slip"],)

    def options(self, given: dict[str, Any]) -> tuple[str, ...]:
        """The slip descriptions offered to the student: every slip that applies here."""
        return tuple(said(mc.get(n).description) for n in PLANTABLE if mc.get(n).applies(given, {}))

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        q, k, v, d_k, causal = (given[n] for n in ("Q", "K", "V", "d_k", "causal"))
        planted = mc.get(given["slip"])
        right = self.trace(given)
        wrong = self.trace(given, planted.recipe)
        for trace, recipe in ((right, CORRECT), (wrong, planted.recipe)):
            floats = attend_float(Q=q, K=k, V=v, d_k=d_k, causal=causal, recipe=recipe)
            for name in ("scores", "A", "output"):
                cross_check(item, name, ex.matrix_floats(getattr(trace, name)), floats[name])
        options = self.options(given)
        answers = (
            choice_answer(
                "slip",
                text_label(pgettext("answer label", "slip")),
                said(planted.description),
                options,
                gettext("The slip: {slip}.", slip=gettext(planted.title)),
            ),
            matrix_answer("A", "A", right.A, decimals, widen=2),
            output_answer(
                right.A,
                v,
                computed(right.output),
                decimals,
                before=right.masked if causal else right.scaled,
            ),
        )
        parts = (
            Part(gettext("Which slip does the worked solution make?"), "slip"),
            Part(gettext("Correct the attention weights: write $A$."), "A"),
            Part(gettext("Correct the result: write the output $AV$."), "output", col_label="dim"),
        )
        # on paper the slip's name, not its id (the id is in key.json and grade's report)
        steps = [
            Step(
                gettext("The slip: {slip}.", slip=gettext(planted.title)),
                text=gettext(planted.description),
            )
        ]
        steps += attention_steps(right, given, decimals)
        return Solution(
            shown=(
                Shown("Q", "matrix", ints(q)),
                Shown("K", "matrix", ints(k)),
                Shown("V", "matrix", ints(v)),
            ),
            parts=parts,
            answers=answers,
            steps=tuple(steps),
            shown_steps=tuple(buggy_steps(wrong, given, planted.name, decimals)),
        )
