"""Projections: X and W_Q, W_K, W_V give Q, K, V (note 3.2, section 1), then the scores."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from worksheetgen.attention.compute import CORRECT, Recipe, Trace, attend, attend_float
from worksheetgen.exact import number as ex
from worksheetgen.exact.answers import int_matrix_answer, matrix_answer, output_answer
from worksheetgen.exact.mathtex import bmatrix, ints, sqrt_of
from worksheetgen.families.attention_tables import (
    A_FROM_SCALED,
    OUTPUT_FROM_A,
    SCALED_FROM_SCORES,
    SCORES_FROM_QK,
    attention_steps,
)
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
from worksheetgen.families.common import (
    computed,
    dot_text,
    int_product,
    ints_of,
    param_values,
    pinned,
    shape_dims,
)
from worksheetgen.language import N_, gettext
from worksheetgen.model import IntRange, ParamValue, Part, Pinned, Shown, Solution, Step

#: draws of the matrices before giving up
TRIES = 100
MAX_SCORE = 24  # with a scale (and so any later) step, |QK^T| at most this: e^x stays a
# calculator number
LAYOUT = (("X", "T", "d"), ("W_Q", "d", "d_k"), ("W_K", "d", "d_k"), ("W_V", "d", "d_v"))
WEIGHTS = ("W_Q", "W_K", "W_V")


class Projections(Family):
    """X (T x d) times W_Q, W_K, W_V; then S = QK^T and, if asked, S/sqrt(d_k), A and AV."""

    name = "projections"
    answers = ("Q", "K", "V", "scores", "scaled", "A", "output")
    layout = LAYOUT
    title = N_("Queries, keys and values from X")  # printed translated (item_title)
    summary = (
        "X and W_Q, W_K, W_V: compute Q, K, V and the scores QK^T "
        "(optionally S/sqrt(d_k), A and AV)."
    )
    supports_choice = True
    choice_needs = ("scale", "softmax", "output")
    # no-transpose and mixed-keys act on Q, K and V, which are answers here: ``operands``
    # gives the library the projected ones to decide where they apply
    slips = ("no-transpose", "scale-by-dk", "no-scale", "softmax-over-columns", "mixed-keys")
    # Q, K and V are answers here: the scores follow from the student's Q and K, AV from
    # their A and their V
    carries = (SCORES_FROM_QK, SCALED_FROM_SCORES, *A_FROM_SCALED, OUTPUT_FROM_A)
    params = (
        IntParam("T", 2, 4, IntRange(2, 3), "number of tokens (rows of X); a pinned X sets it"),
        IntParam("d", 1, 4, IntRange(2, 3), "model width (columns of X, rows of each W)"),
        IntParam("d_k", 1, 4, Pinned(2), "width of queries and keys (columns of W_Q and W_K)"),
        IntParam("d_v", 1, 4, Pinned(2), "width of values (columns of W_V)"),
        IntParam("x_low", -3, 3, Pinned(0), "smallest entry of X"),
        IntParam("x_high", -3, 3, Pinned(2), "largest entry of X"),
        IntParam("w_low", -3, 3, Pinned(-1), "smallest entry of W_Q, W_K, W_V"),
        IntParam("w_high", -3, 3, Pinned(1), "largest entry of W_Q, W_K, W_V"),
        BoolParam("scale", Pinned(False), "also ask S/sqrt(d_k)"),
        BoolParam("softmax", Pinned(False), "also ask A = softmax(S/sqrt(d_k)) (implies scale)"),
        BoolParam("output", Pinned(False), "also ask the output AV (implies softmax)"),
        MatrixParam("X", 1, 4, max_abs=9, help="pin X (T x d, T from 2 to 4)", integers=True),
        MatrixParam("W_Q", 1, 4, max_abs=9, help="pin W_Q (d x d_k)", integers=True),
        MatrixParam("W_K", 1, 4, max_abs=9, help="pin W_K (d x d_k)", integers=True),
        MatrixParam("W_V", 1, 4, max_abs=9, help="pin W_V (d x d_v)", integers=True),
    )
    prompt = N_(
        "A sequence of $T = {{ T }}$ tokens of width $d = {{ d }}$ is the matrix $X$, one "
        "token per row. The projections are $W_Q$ and $W_K$ ($d \\times d_k$, "
        "$d_k = {{ d_k }}$) and $W_V$ ($d \\times d_v$, $d_v = {{ d_v }}$), so that "
        "$Q = XW_Q$, $K = XW_K$ and $V = XW_V$."
    )

    def check(self, params: dict[str, ParamValue]) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []  # the ranges: Family.validate
        dims, conflicts = shape_dims(params, LAYOUT)
        problems += conflicts
        if "T" in dims and dims["T"][0] < 2:
            problems.append(("X", f"expected X with 2 to 4 rows (tokens), got {dims['T'][0]}"))
        mats = {n: pinned(params, n) for n in ("X",) + WEIGHTS}
        exps = any(True in param_values(params[n]) for n in ("scale", "softmax", "output"))
        if not problems and exps and all(m is not None for m in mats.values()):
            s = (
                np.asarray(mats["X"])
                @ np.asarray(mats["W_Q"])
                @ (np.asarray(mats["X"]) @ np.asarray(mats["W_K"])).T
            )
            if np.abs(s).max() > MAX_SCORE:
                problems.append(
                    (
                        "X",
                        f"expected scores QK^T of at most {MAX_SCORE} in size "
                        "when the scale, softmax or output is asked (e^x by hand), "
                        f"got {int(np.abs(s).max())}",
                    )
                )
        return problems

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        dims = {k: v for k, (v, _) in shape_dims(params, LAYOUT)[0].items()}
        for name in ("T", "d", "d_k", "d_v"):
            if name not in dims:
                dims[name] = pick(params[name], rng)
        xlo, xhi = sorted((pick(params["x_low"], rng), pick(params["x_high"], rng)))
        wlo, whi = sorted((pick(params["w_low"], rng), pick(params["w_high"], rng)))
        scale, softmax, output = (
            bool(pick(params[n], rng)) for n in ("scale", "softmax", "output")
        )
        softmax = softmax or output
        scale = scale or softmax
        shapes = {"X": ("T", "d"), "W_Q": ("d", "d_k"), "W_K": ("d", "d_k"), "W_V": ("d", "d_v")}
        all_pinned = all(pinned(params, n) is not None for n in shapes)

        def matrices() -> dict[str, list[list[int]]]:
            mats: dict[str, list[list[int]]] = {}
            for name, (r, c) in shapes.items():
                fixed = pinned(params, name)
                if fixed is not None:
                    mats[name] = as_rows(fixed)
                else:
                    lo, hi = (xlo, xhi) if name == "X" else (wlo, whi)
                    mats[name] = int_matrix(rng, dims[r], dims[c], lo, hi)
            if all_pinned or self._lively(mats, scale, output):
                return mats
            limit = (
                (
                    f" and at most {MAX_SCORE} in size (the scale is asked, and e^x of the "
                    "scaled scores must stay a calculator number)"
                )
                if scale
                else ""
            )
            raise Redraw(
                "could not draw X (no all-zero token) and W with scores that "
                f"are not all equal in every row{limit} ({TRIES} tries); "
                "change x_low..x_high or w_low..w_high"
            )

        mats = redrawn(matrices, TRIES)
        return {**mats, **dims, "scale": scale, "softmax": softmax, "output": output}

    @staticmethod
    def _lively(mats: dict[str, list[list[int]]], scale: bool, output: bool) -> bool:
        """No token is all zeros, scores differ within every row (a row of equal scores
        has a uniform softmax, which teaches nothing; and they stay small enough for e^x by
        hand when scaled), and (if mixed) V is not all zero."""
        if not all(any(r) for r in mats["X"]):
            return False
        q = np.asarray(mats["X"]) @ np.asarray(mats["W_Q"])
        k = np.asarray(mats["X"]) @ np.asarray(mats["W_K"])
        v = np.asarray(mats["X"]) @ np.asarray(mats["W_V"])
        s = q @ k.T
        varied = bool(np.all(s.max(axis=1) != s.min(axis=1)))
        small = not scale or int(np.abs(s).max()) <= MAX_SCORE
        return varied and small and (not output or bool(np.any(v != 0)))

    def slips_for(self, given: dict[str, Any]) -> tuple[str, ...]:
        """The scale slips where the scale is asked, softmax-over-columns where A is,
        mixed-keys where AV is, and no-transpose always (the scores are always asked; it
        applies where K is square and as wide as Q)."""
        on = {
            "no-transpose": True,
            "scale-by-dk": given["scale"],
            "no-scale": given["scale"],
            "softmax-over-columns": given["softmax"],
            "mixed-keys": given["output"],
        }
        return tuple(s for s in self.slips if on[s])

    def operands(self, given: dict[str, Any]) -> dict[str, Any]:
        """The given values with the projected Q, K and V (what the slips act on)."""
        q, k, v = self.projections(given)
        return {**given, "Q": q, "K": k, "V": v}

    def target_for(self, given: dict[str, Any]) -> str:
        """The last answer the variant asks: what every slip must change."""
        if given["output"]:
            return "output"
        if given["softmax"]:
            return "A"
        return "scaled" if given["scale"] else "scores"

    def projections(self, given: dict[str, Any]) -> tuple[list[list[int]], ...]:
        """Q, K, V as integer matrices."""
        return tuple(ints_of(int_product(given["X"], given[w])) for w in WEIGHTS)

    fingerprint = ("scores", "scaled", "A", "output")

    def chain_args(self, given: dict[str, Any]) -> dict[str, Any]:
        """The arguments of ``attend`` for this variant (Q, K, V projected from X)."""
        q, k, v = self.projections(given)
        return {
            "Q": q,
            "K": k,
            "V": v if given["output"] else None,
            "d_k": given["d_k"],
            "causal": False,
        }

    def trace(self, given: dict[str, Any], recipe: Recipe = CORRECT) -> Trace:
        """The attention trace of this variant under ``recipe``."""
        return attend(recipe=recipe, **self.chain_args(given))

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
        t = self.trace(given, recipe)
        out: dict[str, Any] = {"scores": t.scores}
        if given["scale"]:
            out["scaled"] = t.scaled
        if given["softmax"]:
            out["A"] = t.A
        if given["output"]:
            out["output"] = t.output
        return out

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        x = given["X"]
        d_k = given["d_k"]
        q, k, v = self.projections(given)
        for name, w, m in zip("QKV", WEIGHTS, (q, k, v), strict=True):
            cross_check(item, name, m, np.asarray(x, dtype=float) @ np.asarray(given[w], float))
        trace = self.trace(given)
        floats = attend_float(Q=q, K=k, V=v, d_k=d_k, causal=False)
        cross_check(item, "scores", ex.matrix_floats(computed(trace.scores)), floats["scores"])
        shown = tuple(Shown(n, "matrix", ints(given[n])) for n in ("X",) + WEIGHTS)
        answers = [
            int_matrix_answer(n, f"{n} = X{w}", ex.from_ints(m))
            for n, w, m in zip("QKV", WEIGHTS, (q, k, v), strict=True)
        ]
        answers.append(int_matrix_answer("scores", r"S = QK^\top", computed(trace.scores)))
        parts = [
            Part(prompt, n, row_label="token", col_label="dim")
            for n, prompt in zip(
                "QKV",
                (
                    gettext("Compute the queries $Q = XW_Q$."),
                    gettext("Compute the keys $K = XW_K$."),
                    gettext("Compute the values $V = XW_V$."),
                ),
                strict=True,
            )
        ]
        parts.append(Part(gettext("Compute the scores $S = QK^\\top$."), "scores"))
        if given["scale"]:
            cross_check(item, "scaled", ex.matrix_floats(trace.scaled), floats["scaled"])
            answers.append(matrix_answer("scaled", rf"S/{sqrt_of(d_k)}", trace.scaled, decimals))
            parts.append(
                Part(gettext("Scale the scores: write $S/\\sqrt{{{d_k}}}$.", d_k=d_k), "scaled")
            )
        if given["softmax"]:
            cross_check(item, "A", ex.matrix_floats(trace.A), floats["A"])
            answers.append(matrix_answer("A", "A", trace.A, decimals, widen=2))
            parts.append(Part(gettext("Softmax each row over keys: write $A$."), "A"))
        if given["output"]:
            cross_check(item, "output", ex.matrix_floats(computed(trace.output)), floats["output"])
            answers.append(
                output_answer(
                    trace.A,
                    v,
                    computed(trace.output),
                    decimals,
                    before=trace.scaled if given["scale"] else None,
                )
            )
            parts.append(
                Part(gettext("Mix the values: write the output $AV$."), "output", col_label="dim")
            )
        return Solution(
            shown=shown,
            parts=tuple(parts),
            answers=tuple(answers),
            steps=tuple(self.steps(given, (q, k, v), trace, decimals)),
        )

    def steps(
        self, given: dict[str, Any], qkv: tuple[list[list[int]], ...], trace: Trace, decimals: int
    ) -> list[Step]:
        """Worked steps: each projection with one entry written out, the scores, then softmax."""
        x = given["X"]
        steps = []
        titles = (
            gettext("Queries: row $t$ of $X$ times $W_Q$ gives token $t$'s query."),
            gettext("Keys: row $t$ of $X$ times $W_K$ gives token $t$'s key."),
            gettext("Values: row $t$ of $X$ times $W_V$ gives token $t$'s value."),
        )
        for n, w, m, title in zip("QKV", WEIGHTS, qkv, titles, strict=True):
            col = [row[0] for row in given[w]]
            steps.append(
                Step(
                    title,
                    rf"{n} = X W_{n} = " + bmatrix(ints(m)),
                    gettext(
                        "For example, row 1 of $X$ times column 1 of $W_{n}$: ${entry} = {dot}$.",
                        n=n,
                        entry=f"{n.lower()}_{{11}}",
                        dot=dot_text(x[0], col),
                    ),
                )
            )
        q, k, _ = qkv
        j = 1 if len(k) > 1 else 0
        steps.append(
            Step(
                gettext("Scores: each query against every key (rows of $Q$ times rows of $K$)."),
                r"S = QK^\top = " + bmatrix(ints(ints_of(computed(trace.scores)))),
                gettext(
                    "For example, ${entry} = q_1 \\cdot k_{j} = {dot}$ (the columns of "
                    "$K^\\top$ are the keys).",
                    entry=f"s_{{1{j + 1}}}",
                    j=j + 1,
                    dot=dot_text(q[0], k[j]),
                ),
            )
        )
        if given["scale"]:
            rest = attention_steps(replace(trace, scores=None), {"d_k": given["d_k"]}, decimals)
            steps += rest if given["softmax"] else rest[:1]
        return steps
