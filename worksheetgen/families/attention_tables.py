"""Score-table families: softmax tables, causal masking, and the note's Lab 3 (Q, K, V -> A·V)."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, ClassVar

import numpy as np

from worksheetgen.attention.compute import CORRECT, Recipe, Trace, attend, attend_float
from worksheetgen.exact import number as ex
from worksheetgen.exact.answers import matrix_answer, output_answer, relation, table
from worksheetgen.exact.masked import MASKED
from worksheetgen.exact.mathtex import bmatrix, ints, sqrt_of
from worksheetgen.families.base import (
    BoolParam,
    Carry,
    Family,
    IntParam,
    MatrixParam,
    Param,
    Redraw,
    as_rows,
    cross_check,
    int_matrix,
    pick,
)
from worksheetgen.families.common import (
    computed,
    equal_score_rows,
    int_scores,
    pinned,
    text_label,
)
from worksheetgen.language import N_, gettext, pgettext
from worksheetgen.model import Choices, IntRange, ParamValue, Part, Pinned, Shown, Solution, Step

# The carried-forward steps of the attention chain (see Carry); each family's table below
# lists the ones its sheets ask.
#: S = QKᵀ from the student's Q and K (the given ones where the sheet does not ask them)
SCORES_FROM_QK = Carry("scores", ("Q", "K"), ("matmul_t",))
#: S/√d_k from the student's S
SCALED_FROM_SCORES = Carry("scaled", ("scores",), ("scale",), args=(("d_k", "d_k"),))
#: the masked table from the student's scaled table
MASKED_FROM_SCALED = Carry("masked", ("scaled",), ("mask",))
#: A from the student's masked table, or from the scaled one (masked first under a mask)
A_FROM_MASKED = Carry("A", ("masked",), ("softmax",))
A_FROM_SCALED = (
    Carry("A", ("scaled",), ("mask", "softmax"), when="causal"),
    Carry("A", ("scaled",), ("softmax",), unless="causal"),
)
#: A = softmax(S/√d_k) straight from the student's S (a sheet without a scale part)
A_FROM_SCORES = Carry("A", ("scores",), ("scale", "softmax"), args=(("d_k", "d_k"),))
#: AV from the student's A, times the given V (or the student's own V where it is an answer)
OUTPUT_FROM_A = Carry("output", ("A", "V"), ("matmul",))


def attention_steps(trace: Trace, given: dict[str, Any], decimals: int) -> list[Step]:
    """The worked steps of the note's procedure for one trace, rounded for display."""

    def r(m: Any) -> str:  # a table as printed, after '=' or '≈' as its entries print
        shown = table(m, decimals)
        return f"{relation(m, shown)} {bmatrix(shown)}"

    steps: list[Step] = []
    d_k = given.get("d_k")
    if trace.scores is not None:
        steps.append(
            Step(
                gettext("Scores: multiply queries by transposed keys"),
                r"S = QK^\top " + r(trace.scores),
            )
        )
    if d_k is not None:
        scale_text = gettext(
            "Scale: divide every score by $\\sqrt{{d_k}} = \\sqrt{{{d_k}}}$", d_k=d_k
        )
        steps.append(Step(scale_text, rf"\frac{{S}}{{{sqrt_of(d_k)}}} " + r(trace.scaled)))
    if trace.masked is not None:
        steps.append(
            Step(
                gettext("Mask: every future key (above the diagonal) gets $-\\infty$"),
                r"\tilde S " + r(trace.masked),
            )
        )
    sums = [ex.rounded(s, decimals) for s in trace.sums]
    steps.append(
        Step(
            gettext("Exponentiate each entry ($e^{-\\infty} = 0$)")
            if trace.masked is not None
            else gettext("Exponentiate each entry"),
            r"e^{\tilde S} " + r(trace.exps),
            note_rounding(trace, decimals, sums) if d_k is not None else "",
        )
    )
    steps.append(
        Step(
            gettext("Row sums (each query sums over its keys)"),
            r"\left(" + ",\\ ".join(sums) + r"\right)",
        )
    )
    steps.append(
        Step(
            gettext("Divide each row by its sum: the rows of $A$ are distributions over keys"),
            "A " + r(trace.A),
        )
    )
    if trace.output is not None:
        steps.append(
            Step(
                gettext("Mix values: each output row is a weighted sum of the rows of $V$"),
                "AV " + r(trace.output),
            )
        )
    return steps


def note_rounding(trace: Trace, decimals: int, sums: list[str]) -> str:
    """Where rounding the scaled scores first, as note 3.2 does (e^1.41 = 4.10, not the 4.11
    of e^sqrt(2)), would print other exponentials or row sums than the key's, a sentence
    saying so; else nothing. The key's values stay those of the exact scores."""
    shown = table(trace.masked if trace.masked is not None else trace.scaled, decimals)
    exps = table(trace.exps, decimals, whole=False)
    unit = Decimal(1).scaleb(-decimals)
    first = None
    note_sums = []
    for i, row in enumerate(shown):
        total = Decimal(0)
        for j, s in enumerate(row):
            e = Decimal(0) if s == MASKED else Decimal(repr(math.exp(float(s))))
            e = e.quantize(unit, rounding=ROUND_HALF_UP)
            total += e
            if first is None and str(e) != exps[i][j]:
                first = (s, str(e), exps[i][j])
        note_sums.append(str(total))
    if first is None and note_sums == sums:
        return ""
    differ = [(n, k) for n, k in zip(note_sums, sums, strict=True) if n != k]
    if first is not None:
        s, note, ours = first
        text = gettext(
            "— of the exact scaled scores, not of the rounded ones above. Rounding first, as "
            "note 3.2 does, gives $e^{{{s}}} \\approx {note}$ where this key has ${ours}$",
            s=s,
            note=note,
            ours=ours,
        )
    else:
        text = gettext(
            "— of the exact scaled scores, not of the rounded ones above. Rounding first, as "
            "note 3.2 does, gives other row sums"
        )
    if differ:  # the last: the row with the most keys, in a causal table
        text = gettext(
            "{text} (row sum ${theirs}$ where this key has ${ours}$)",
            text=text,
            theirs=differ[-1][0],
            ours=differ[-1][1],
        )
    return gettext("{text}.", text=text)


class ScoreTable(Family):
    """Given a score table S (and d_k): scale, optionally mask, and softmax row by row."""

    causal_default: ClassVar[bool] = False
    layout = (("S", "T", "T"),)
    params: ClassVar[tuple[Param, ...]] = (
        IntParam("T", 2, 4, IntRange(2, 3), "number of tokens (rows and columns of S)"),
        IntParam("d_k", 1, 64, Choices((2, 3, 4)), "key width; scores are divided by sqrt(d_k)"),
        IntParam("low", -9, 9, Pinned(0), "smallest score drawn"),
        IntParam("high", -9, 9, Pinned(3), "largest score drawn"),
        BoolParam("prescaled", Pinned(False), "scores are already scaled: no d_k, no scale step"),
        MatrixParam("S", 2, 4, help="pin the score table instead of drawing it"),
    )

    def check(self, params: dict[str, ParamValue]) -> list[tuple[str, str]]:
        s = params.get("S")
        if isinstance(s, Pinned) and len(s.value) != len(s.value[0]):
            return [("S", f"expected a square T x T table, got {len(s.value)}x{len(s.value[0])}")]
        return []

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        prescaled = bool(pick(params["prescaled"], rng))
        d_k = pick(params["d_k"], rng)
        if "S" in params:
            s = as_rows(pick(params["S"], rng))
        else:
            t = pick(params["T"], rng)
            lo, hi = sorted((pick(params["low"], rng), pick(params["high"], rng)))
            s = int_matrix(rng, t, t, lo, hi)
        given: dict[str, Any] = {"T": len(s)}
        if prescaled:
            given["scaled"] = s
        else:
            given["S"] = s
            given["d_k"] = d_k
        given["causal"] = self.causal(params, rng)
        if "S" not in params and equal_score_rows(s, given["causal"]):
            raise Redraw(
                "could not draw a score table without a row of equal scores (its softmax "
                "would be uniform); widen low..high"
            )
        return given

    def causal(self, params: dict[str, ParamValue], rng: np.random.Generator) -> bool:
        return self.causal_default

    fingerprint = ("scaled", "masked", "A")

    def chain_args(self, given: dict[str, Any]) -> dict[str, Any]:
        """The arguments of ``attend`` for this variant."""
        return {
            "S": given.get("S", given.get("scaled")),
            "d_k": given.get("d_k"),
            "causal": given["causal"],
        }

    def trace(self, given: dict[str, Any], recipe: Recipe = CORRECT) -> Trace:
        """The attention trace of this variant under ``recipe``."""
        return attend(recipe=recipe, **self.chain_args(given))

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
        t = self.trace(given, recipe)
        out: dict[str, Any] = {"A": t.A}
        if given.get("d_k") is not None:
            out["scaled"] = t.scaled
        if t.masked is not None:
            out["masked"] = t.masked
        return out

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        d_k = given.get("d_k")
        s = given["S"] if "S" in given else given["scaled"]
        causal = given["causal"]
        trace = self.trace(given)
        floats = attend_float(S=s, d_k=d_k, causal=causal)
        for name in ("scaled", "A") + (("masked",) if causal else ()):
            cross_check(item, name, ex.matrix_floats(getattr(trace, name)), floats[name])
        shown = [
            Shown(
                "S = QK^\\top" if d_k is not None else "\\tilde S = QK^\\top/\\sqrt{d_k}",
                "matrix",
                ints(s),
            )
        ]
        answers = []
        parts = []
        widen = 1
        if d_k is not None:
            shown.append(Shown("d_k", "scalar", str(d_k)))
            answers.append(matrix_answer("scaled", rf"S/{sqrt_of(d_k)}", trace.scaled, decimals))
            parts.append(
                Part(gettext("Scale the scores: write $S/\\sqrt{{{d_k}}}$.", d_k=d_k), "scaled")
            )
            widen = 2
        if causal:
            answers.append(
                matrix_answer(
                    "masked",
                    text_label(pgettext("answer label", "masked scores")),
                    computed(trace.masked),
                    decimals,
                )
            )
            parts.append(
                Part(
                    gettext(
                        "Apply the causal mask: write the masked score table "
                        "(a future key gets $-\\infty$)."
                    ),
                    "masked",
                )
            )
        # A from a rounded scaled table stays within a unit: a softmax moves by at most half
        # of what its inputs move (here half a unit), plus A's own rounding
        answers.append(matrix_answer("A", "A", trace.A, decimals, widen=widen))
        parts.append(Part(gettext("Apply the softmax over keys (row by row): write $A$."), "A"))
        return Solution(
            shown=tuple(shown),
            parts=tuple(parts),
            answers=tuple(answers),
            steps=tuple(attention_steps(trace, given, decimals)),
        )


class Softmax(ScoreTable):
    name = "softmax"
    answers = ("scaled", "masked", "A")
    title = N_("Scaled softmax table")  # printed translated (item_title)
    summary = "A score table S and d_k: fill in S/sqrt(d_k) and the row-wise softmax A."
    supports_choice = True
    slips = ("scale-by-dk", "no-scale", "softmax-over-columns")
    carries = A_FROM_SCALED
    prompt = N_(
        "The raw attention scores $S = QK^\\top$ for {{ T }} tokens are below"
        "{% if d_k is defined %}, with key width $d_k = {{ d_k }}${% endif %}. "
        "Row $i$ is query $i$; column $j$ is key $j$."
    )


class Causal(ScoreTable):
    name = "causal"
    answers = ("scaled", "masked", "A")
    title = N_("Causal masking")  # printed translated (item_title)
    summary = "A score table under a causal mask: the masked table with -inf, then A."
    supports_choice = True
    causal_default = True
    slips = ("mask-with-zero", "scale-by-dk", "no-scale", "softmax-over-columns")
    carries = (MASKED_FROM_SCALED, A_FROM_MASKED, *A_FROM_SCALED)
    params = ScoreTable.params + (
        BoolParam("causal", Pinned(True), "mask the future (set false for an unmasked drill)"),
    )
    prompt = N_(
        "A decoder predicts the next token, so token $i$ may only attend to keys "
        "$j \\le i$. The raw scores $S = QK^\\top$ for {{ T }} tokens are below"
        "{% if d_k is defined %}, with $d_k = {{ d_k }}${% else %} (already scaled)"
        "{% endif %}."
    )

    def causal(self, params: dict[str, ParamValue], rng: np.random.Generator) -> bool:
        return bool(pick(params["causal"], rng))


class QKVHead:
    """A head computed from given Q, K and V: its trace and fingerprinted tables under a recipe."""

    fingerprint: ClassVar[tuple[str, ...]] = ("scores", "scaled", "masked", "A", "output")

    def chain_args(self, given: dict[str, Any]) -> dict[str, Any]:
        """The arguments of ``attend`` for this variant."""
        return {
            "Q": given["Q"],
            "K": given["K"],
            "V": given["V"],
            "d_k": given["d_k"],
            "causal": given["causal"],
        }

    def trace(self, given: dict[str, Any], recipe: Recipe = CORRECT) -> Trace:
        """The attention trace of this variant under ``recipe``."""
        return attend(recipe=recipe, **self.chain_args(given))

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
        """Scores, scaled, masked (when causal), A and AV under ``recipe``."""
        t = self.trace(given, recipe)
        out: dict[str, Any] = {"scores": t.scores, "scaled": t.scaled, "A": t.A, "output": t.output}
        if t.masked is not None:
            out["masked"] = t.masked
        return out


class Lab3(QKVHead, Family):
    """The note's Lab 3: Q, K, V given (T = 4), scores, scale, mask, A, then A·V."""

    name = "lab3"
    answers = ("scores", "scaled", "masked", "A", "output")
    title = N_("Lab 3: one attention head by hand")  # printed translated (item_title)
    summary = "Q, K, V given: scores, scale, causal mask, A and the output A·V."
    supports_choice = True
    slips = (
        "no-transpose",
        "scale-by-dk",
        "no-scale",
        "mask-with-zero",
        "softmax-over-columns",
        "mixed-keys",
    )
    carries = (SCALED_FROM_SCORES, MASKED_FROM_SCALED, A_FROM_MASKED, *A_FROM_SCALED, OUTPUT_FROM_A)
    layout = (("Q", "T", "d_k"), ("K", "T", "d_k"), ("V", "T", "d_v"))
    params = (
        IntParam("T", 2, 4, Pinned(4), "number of tokens"),
        IntParam("d_k", 1, 4, Pinned(2), "width of queries and keys"),
        IntParam("d_v", 1, 4, Pinned(2), "width of values"),
        IntParam("low", -3, 3, Pinned(0), "smallest entry of Q, K"),
        IntParam("high", -3, 3, Pinned(2), "largest entry of Q, K"),
        IntParam("v_low", -9, 9, Pinned(0), "smallest entry of V"),
        IntParam("v_high", -9, 9, Pinned(4), "largest entry of V"),
        BoolParam("causal", Pinned(True), "apply the causal mask"),
        MatrixParam("Q", 1, 4, help="pin Q"),
        MatrixParam("K", 1, 4, help="pin K"),
        MatrixParam("V", 1, 4, help="pin V"),
    )
    prompt = N_(
        "One attention head over $T = {{ T }}$ tokens with $d_k = {{ d_k }}$"
        "{% if causal %}, in a decoder (causal mask){% endif %}. "
        "The queries, keys and values are the rows of $Q$, $K$ and $V$."
    )

    def check(self, params: dict[str, ParamValue]) -> list[tuple[str, str]]:
        pinned = {k: p.value for k in ("Q", "K", "V") if isinstance(p := params.get(k), Pinned)}
        if pinned and len(pinned) != 3:
            missing = [k for k in ("Q", "K", "V") if k not in pinned]
            return [
                (missing[0], "expected Q, K and V pinned together, got only " + ", ".join(pinned))
            ]
        if pinned:
            q, k, v = pinned["Q"], pinned["K"], pinned["V"]
            if len(q[0]) != len(k[0]):
                return [("K", f"expected K with {len(q[0])} columns like Q, got {len(k[0])}")]
            if len(k) != len(v):
                return [("V", f"expected V with {len(k)} rows like K, got {len(v)}")]
            if len(q) != len(k):
                return [
                    ("Q", f"expected Q with {len(k)} rows like K (self-attention), got {len(q)}")
                ]
        return []

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        causal = bool(pick(params["causal"], rng))
        if "Q" in params:
            q, k, v = (as_rows(pinned(params, n)) for n in ("Q", "K", "V"))
        else:
            t, d_k, d_v = (pick(params[n], rng) for n in ("T", "d_k", "d_v"))
            lo, hi = sorted((pick(params["low"], rng), pick(params["high"], rng)))
            vlo, vhi = sorted((pick(params["v_low"], rng), pick(params["v_high"], rng)))
            q = int_matrix(rng, t, d_k, lo, hi)
            k = int_matrix(rng, t, d_k, lo, hi)
            v = int_matrix(rng, t, d_v, vlo, vhi)
            if equal_score_rows(int_scores(q, k), causal):
                raise Redraw(
                    "could not draw Q and K without a row of equal scores (its softmax "
                    "would be uniform); widen low..high"
                )
        return {"Q": q, "K": k, "V": v, "T": len(q), "d_k": len(q[0]), "causal": causal}

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        q, k, v, d_k, causal = (given[n] for n in ("Q", "K", "V", "d_k", "causal"))
        trace = self.trace(given)
        floats = attend_float(Q=q, K=k, V=v, d_k=d_k, causal=causal)
        names = ["scores", "scaled", "A", "output"] + (["masked"] if causal else [])
        for name in names:
            cross_check(item, name, ex.matrix_floats(getattr(trace, name)), floats[name])
        shown = (
            Shown("Q", "matrix", ints(q)),
            Shown("K", "matrix", ints(k)),
            Shown("V", "matrix", ints(v)),
        )
        answers = [
            matrix_answer("scores", r"QK^\top", computed(trace.scores), decimals),
            matrix_answer("scaled", rf"QK^\top/{sqrt_of(d_k)}", trace.scaled, decimals, widen=1),
        ]
        parts = [
            Part(gettext("Compute the scores $S = QK^\\top$."), "scores"),
            Part(gettext("Scale: write $S/\\sqrt{{{d_k}}}$.", d_k=d_k), "scaled"),
        ]
        if causal:
            answers.append(
                matrix_answer(
                    "masked",
                    text_label(pgettext("answer label", "masked scores")),
                    computed(trace.masked),
                    decimals,
                )
            )
            parts.append(
                Part(gettext("Apply the causal mask ($-\\infty$ above the diagonal)."), "masked")
            )
        answers.append(matrix_answer("A", "A", trace.A, decimals, widen=2))
        answers.append(
            output_answer(
                trace.A,
                v,
                computed(trace.output),
                decimals,
                before=trace.masked if causal else trace.scaled,
            )
        )
        parts += [
            Part(gettext("Softmax each row over keys: write $A$."), "A"),
            Part(gettext("Mix the values: write the output $AV$."), "output", col_label="dim"),
        ]
        return Solution(
            shown=shown,
            parts=tuple(parts),
            answers=tuple(answers),
            steps=tuple(attention_steps(trace, given, decimals)),
        )
