"""Self versus cross attention: which sequence supplies Q, K and V, and the shapes that follow."""

from __future__ import annotations

from typing import Any

import numpy as np

from worksheetgen.attention.compute import CORRECT, Recipe, Trace, attend, attend_float
from worksheetgen.errors import DrawError
from worksheetgen.exact import number as ex
from worksheetgen.exact.answers import choice_answer, matrix_answer, output_answer, shape_answer
from worksheetgen.exact.mathtex import ints, shape, sqrt_of
from worksheetgen.families.attention_tables import A_FROM_SCALED, OUTPUT_FROM_A, attention_steps
from worksheetgen.families.base import (
    BoolParam,
    Family,
    IntParam,
    MatrixParam,
    Redraw,
    as_rows,
    cross_check,
    int_matrix,
    pick,
    redrawn,
)
from worksheetgen.families.common import computed, max_of, param_values, pinned, text_label
from worksheetgen.language import N_, gettext, pgettext, said
from worksheetgen.model import IntRange, ParamValue, Part, Pinned, Shown, Solution, Step

#: draws of the lengths, or of Q and K, before giving up
TRIES = 100
HAND_MAX = 4
DECODER = N_("the decoder's target tokens")
ENCODER = N_("the encoder's source tokens")
BOTH = N_("both sequences, concatenated")
SOURCE_OPTIONS = (DECODER, ENCODER, BOTH)
SELF_RIGHT = N_("all three from the decoder's target tokens")
SELF_OPTIONS = (
    SELF_RIGHT,
    N_("all three from the encoder's source tokens"),
    N_("$Q$ from the decoder, $K$ and $V$ from the encoder"),
)
NUMERIC_DIMS = ("T_q", "T_k", "d_k", "d_v")


class Cross(Family):
    """Cross-attention in an encoder-decoder: sources of Q, K, V; shapes of A and AV."""

    name = "cross"
    answers = (
        "Q_source",
        "K_source",
        "V_source",
        "self_source",
        "A_shape",
        "output_shape",
        "scaled",
        "A",
        "output",
    )
    title = N_("Self versus cross attention")  # printed translated (item_title)
    summary = (
        "Cross-attention between a decoder (T_q tokens) and an encoder (T_k tokens): "
        "which sequence gives Q, K, V; the shapes of A and AV; optionally A by hand."
    )
    supports_choice = True
    choice_needs = ("numeric",)
    slips = ("mixed-keys", "no-transpose", "scale-by-dk", "no-scale", "softmax-over-columns")
    carries = (*A_FROM_SCALED, OUTPUT_FROM_A)  # the numeric parts; the scaled scores are first
    layout = (("Q", "T_q", "d_k"), ("K", "T_k", "d_k"), ("V", "T_k", "d_v"))
    params = (
        IntParam("T_q", 1, 512, IntRange(2, 3), "tokens in the query (decoder) sequence"),
        IntParam(
            "T_k",
            1,
            512,
            IntRange(2, 4),
            "tokens in the key/value (encoder) sequence; never equal to T_q; 2 to 4 when numeric",
        ),
        IntParam("d_k", 1, 1024, Pinned(2), "width of queries and keys"),
        IntParam("d_v", 1, 1024, Pinned(3), "width of values"),
        BoolParam(
            "numeric",
            Pinned(False),
            "also give Q, K, V and ask S/sqrt(d_k), A and AV (all sizes at most 4)",
        ),
        IntParam("low", -3, 3, Pinned(0), "smallest entry of Q and K (numeric)"),
        IntParam("high", -3, 3, Pinned(2), "largest entry of Q and K (numeric)"),
        IntParam("v_low", -9, 9, Pinned(0), "smallest entry of V (numeric)"),
        IntParam("v_high", -9, 9, Pinned(4), "largest entry of V (numeric)"),
        MatrixParam("Q", 1, 4, max_abs=9, help="pin Q (T_q x d_k); pin Q, K, V together"),
        MatrixParam("K", 1, 4, max_abs=9, help="pin K (T_k x d_k)"),
        MatrixParam("V", 1, 4, max_abs=9, help="pin V (T_k x d_v)"),
    )
    prompt = N_(
        "An encoder-decoder translator: the encoder has read a source sentence of "
        "$T_k = {{ T_k }}$ tokens, and the decoder has written $T_q = {{ T_q }}$ target "
        "tokens so far. In the decoder's cross-attention layer, queries and keys have "
        "width $d_k = {{ d_k }}$ and values have width $d_v = {{ d_v }}$."
        "{% if numeric %} The projected queries, keys and values are below.{% endif %}"
    )

    def check(self, params: dict[str, ParamValue]) -> list[tuple[str, str]]:
        mats = {n: pinned(params, n) for n in ("Q", "K", "V")}
        given = [n for n, m in mats.items() if m is not None]
        if given and len(given) != 3:
            missing = [n for n in ("Q", "K", "V") if mats[n] is None]
            return [
                (missing[0], "expected Q, K and V pinned together, got only " + ", ".join(given))
            ]
        if given:
            q, k, v = mats["Q"], mats["K"], mats["V"]
            if len(k[0]) != len(q[0]):
                return [("K", f"expected K with {len(q[0])} columns like Q (d_k), got {len(k[0])}")]
            if len(v) != len(k):
                return [("V", f"expected V with {len(k)} rows like K (T_k), got {len(v)}")]
            if len(q) == len(k):
                return [
                    (
                        "K",
                        "expected K with a number of rows (T_k) different from Q's "
                        f"(T_q = {len(q)}): cross-attention reads another sequence, got "
                        f"{len(k)}",
                    )
                ]
            return []
        qs, ks = param_values(params["T_q"]), param_values(params["T_k"])
        if not any(a != b for a in qs for b in ks):
            return [
                (
                    "T_k",
                    f"expected T_k different from T_q = {qs[0]} (the two sequences "
                    f"have different lengths), got {ks[0]}",
                )
            ]
        if True in param_values(params["numeric"]):
            for n in NUMERIC_DIMS:
                # one key (T_k = 1) makes every weight 1: no draw has scores that differ
                # within a row, so the numbers start at two source tokens
                low = 2 if n == "T_k" else 1
                if max_of(params[n]) > HAND_MAX:
                    return [
                        (
                            n,
                            f"expected {n} from {low} to {HAND_MAX} when numeric is true "
                            f"(hand work), got up to {max_of(params[n])}",
                        )
                    ]
                if min(param_values(params[n])) < low:
                    return [
                        (
                            n,
                            f"expected {n} from {low} to {HAND_MAX} when numeric is true "
                            "(with one source token every weight is 1), got "
                            f"{min(param_values(params[n]))}",
                        )
                    ]
        return []  # the low/high ranges are Family.validate's

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        if pinned(params, "Q") is not None:
            q, k, v = (as_rows(pinned(params, n)) for n in ("Q", "K", "V"))
            return {
                "T_q": len(q),
                "T_k": len(k),
                "d_k": len(q[0]),
                "d_v": len(v[0]),
                "numeric": True,
                "Q": q,
                "K": k,
                "V": v,
            }
        numeric = bool(pick(params["numeric"], rng))

        def lengths() -> tuple[int, int]:
            t_q, t_k = pick(params["T_q"], rng), pick(params["T_k"], rng)
            if t_q == t_k:
                raise Redraw(f"could not draw T_q different from T_k in {TRIES} tries")
            return t_q, t_k

        t_q, t_k = redrawn(lengths, TRIES)
        d_k, d_v = pick(params["d_k"], rng), pick(params["d_v"], rng)
        given: dict[str, Any] = {"T_q": t_q, "T_k": t_k, "d_k": d_k, "d_v": d_v, "numeric": numeric}
        if numeric:
            if max(t_q, t_k, d_k, d_v) > HAND_MAX:
                raise DrawError(f"numeric cross-attention needs sizes of at most {HAND_MAX}")
            lo, hi = sorted((pick(params["low"], rng), pick(params["high"], rng)))
            vlo, vhi = sorted((pick(params["v_low"], rng), pick(params["v_high"], rng)))

            def queries_and_keys() -> tuple[list[list[int]], list[list[int]]]:
                q, k = int_matrix(rng, t_q, d_k, lo, hi), int_matrix(rng, t_k, d_k, lo, hi)
                s = np.asarray(q) @ np.asarray(k).T
                if not np.all(s.max(axis=1) != s.min(axis=1)):
                    raise Redraw(
                        "could not draw Q and K whose scores differ within every row; "
                        "widen low..high"
                    )
                return q, k

            q, k = redrawn(queries_and_keys, TRIES)
            given.update(Q=q, K=k, V=int_matrix(rng, t_k, d_v, vlo, vhi))
        return given

    def slips_for(self, given: dict[str, Any]) -> tuple[str, ...]:
        if not given["numeric"]:
            return ()
        on = {
            "mixed-keys": given["d_k"] == given["d_v"],
            "no-transpose": given["d_k"] == given["T_k"],
            "scale-by-dk": True,
            "no-scale": True,
            "softmax-over-columns": True,
        }
        return tuple(s for s in self.slips if on[s])

    fingerprint = ("scaled", "A", "output")
    target = "output"

    def chain_args(self, given: dict[str, Any]) -> dict[str, Any] | None:
        """The arguments of ``attend`` (numeric variants only)."""
        if not given["numeric"]:
            return None
        return {
            "Q": given["Q"],
            "K": given["K"],
            "V": given["V"],
            "d_k": given["d_k"],
            "causal": False,
        }

    def trace(self, given: dict[str, Any], recipe: Recipe = CORRECT) -> Trace:
        """The numeric attention trace (numeric variants only)."""
        args = self.chain_args(given)
        assert args is not None
        return attend(recipe=recipe, **args)

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
        if not given["numeric"]:
            return {}
        t = self.trace(given, recipe)
        return {"scaled": t.scaled, "A": t.A, "output": t.output}

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        t_q, t_k, d_k, d_v = (given[n] for n in NUMERIC_DIMS)
        sources = tuple(map(said, SOURCE_OPTIONS))  # the options in the build's language
        answers = [
            choice_answer(
                "Q_source",
                "Q",
                said(DECODER),
                sources,
                gettext("Queries belong to the tokens that are looking: the decoder's."),
            ),
            choice_answer(
                "K_source",
                "K",
                said(ENCODER),
                sources,
                gettext("Keys describe the tokens being looked at: the encoder's."),
            ),
            choice_answer(
                "V_source",
                "V",
                said(ENCODER),
                sources,
                gettext("Values are what gets mixed in, so they come with the keys."),
            ),
            shape_answer("A_shape", "A", (t_q, t_k)),
            shape_answer("output_shape", "AV", (t_q, d_v)),
            choice_answer(
                "self_source",
                text_label(pgettext("answer label", "self-attention")),
                said(SELF_RIGHT),
                tuple(map(said, SELF_OPTIONS)),
                gettext(
                    "Self-attention takes $Q$, $K$ and $V$ from one sequence; only cross-"
                    "attention splits them. The formula is the same."
                ),
            ),
        ]
        parts = [
            Part(gettext("Which sequence supplies the queries $Q$?"), "Q_source"),
            Part(gettext("Which sequence supplies the keys $K$?"), "K_source"),
            Part(gettext("Which sequence supplies the values $V$?"), "V_source"),
            Part(
                gettext("What is the shape of the attention weights $A$ (rows $\\times$ columns)?"),
                "A_shape",
            ),
            Part(gettext("What is the shape of the output $AV$?"), "output_shape"),
            Part(
                gettext(
                    "The decoder also has its own masked self-attention layer. Where do its "
                    "$Q$, $K$ and $V$ come from?"
                ),
                "self_source",
            ),
        ]
        steps = [
            Step(
                gettext(
                    "Queries come from the sequence that is looking (the decoder), keys and "
                    "values from the sequence being read (the encoder)"
                ),
                r"Q = X_{\mathrm{dec}} W_Q,\quad K = X_{\mathrm{enc}} W_K,\quad "
                r"V = X_{\mathrm{enc}} W_V",
            ),
            Step(
                gettext(
                    "Self-attention uses one sequence for all three (the decoder's own layer "
                    "also masks the future); the formula is the same"
                ),
                r"Q = X_{\mathrm{dec}} W_Q,\quad K = X_{\mathrm{dec}} W_K,\quad "
                r"V = X_{\mathrm{dec}} W_V",
            ),
            Step(
                gettext("One row of $A$ per query, one column per key"),
                rf"QK^\top:\ ({shape((t_q, d_k))})({shape((d_k, t_k))}) \to "
                rf"A \in \mathbb{{R}}^{{{shape((t_q, t_k))}}}",
            ),
            Step(
                gettext("Each output row mixes the value rows: one output per target token"),
                rf"AV:\ ({shape((t_q, t_k))})({shape((t_k, d_v))}) \to "
                rf"\mathbb{{R}}^{{{shape((t_q, d_v))}}}",
            ),
        ]
        shown: tuple[Shown, ...] = ()
        if given["numeric"]:
            q, k, v = given["Q"], given["K"], given["V"]
            trace = self.trace(given)
            floats = attend_float(Q=q, K=k, V=v, d_k=d_k, causal=False)
            for name in ("scores", "scaled", "A", "output"):
                cross_check(item, name, ex.matrix_floats(getattr(trace, name)), floats[name])
            shown = (
                Shown("Q", "matrix", ints(q)),
                Shown("K", "matrix", ints(k)),
                Shown("V", "matrix", ints(v)),
            )
            answers += [
                matrix_answer("scaled", rf"QK^\top/{sqrt_of(d_k)}", trace.scaled, decimals),
                matrix_answer("A", "A", trace.A, decimals, widen=2),
                output_answer(trace.A, v, computed(trace.output), decimals, before=trace.scaled),
            ]
            parts += [
                Part(
                    gettext(
                        "Compute the scaled scores $QK^\\top/\\sqrt{{{d_k}}}$ (no mask: a "
                        "target token may read every source token).",
                        d_k=d_k,
                    ),
                    "scaled",
                ),
                Part(gettext("Softmax each row over the keys: write $A$."), "A"),
                Part(gettext("Mix the values: write the output $AV$."), "output", col_label="dim"),
            ]
            steps += attention_steps(trace, {"d_k": d_k}, decimals)
        return Solution(shown=shown, parts=tuple(parts), answers=tuple(answers), steps=tuple(steps))
