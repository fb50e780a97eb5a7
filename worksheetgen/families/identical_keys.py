"""Identical keys: two equal keys get equal weight from every query (note 3.2, section 4)."""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np

from worksheetgen.attention.compute import CORRECT, Recipe, Trace, attend, attend_float
from worksheetgen.exact import number as ex
from worksheetgen.exact.answers import (
    choice_answer,
    int_matrix_answer,
    matrix_answer,
    text_answer,
)
from worksheetgen.exact.mathtex import ints, vector
from worksheetgen.families.attention_tables import A_FROM_SCORES, attention_steps
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
from worksheetgen.families.common import computed, equal_score_rows, pinned, text_label
from worksheetgen.language import N_, gettext, pgettext, said
from worksheetgen.model import ParamValue, Part, Pinned, Shown, Solution, Step

#: draws of Q and K before giving up
TRIES = 200
NO_PAIR = N_("no two keys get equal weight from every query")
EQUAL_ALWAYS = N_("equal for every query")
WEIGHT_OPTIONS = (
    EQUAL_ALWAYS,
    N_("equal only for the queries of those two tokens"),
    N_("unequal: the softmax breaks the tie in favour of the earlier token"),
)


def pair_text(a: int, b: int) -> str:
    """'keys 1 and 3' (1-based), in the build's language."""
    return gettext("keys {a} and {b}", a=a, b=b)


def equal_pairs(rows: list[list[Any]]) -> list[tuple[int, int]]:
    """Every (a, b), a < b, 0-based, with rows[a] == rows[b]."""
    return [(a, b) for a, b in combinations(range(len(rows)), 2) if rows[a] == rows[b]]


def model_answer(a: int, b: int) -> str:
    """The key's model answer to 'explain why' (markup)."""
    return gettext(
        "Keys {a} and {b} are the same vector, so every query $q$ scores them the same: "
        "$q \\cdot k_{a} = q \\cdot k_{b}$, and they stay equal after dividing by "
        "$\\sqrt{{d_k}}$. The softmax turns equal scores into equal weights "
        "($e^{{s}}/\\sum_j e^{{s_j}}$ depends only on the score), so columns "
        "{a} and {b} of $A$ are equal in every row: the mass is split evenly between the "
        "two tokens. That is the definition of the softmax, not a tie-break bug; the two "
        "tokens can still contribute different values.",
        a=a,
        b=b,
    )


class IdenticalKeys(Family):
    """Q and K with two equal keys: A's two columns are equal; explain why."""

    name = "identical-keys"
    answers = ("scores", "A", "equal_pair", "equal_weights", "explain")
    title = N_("Identical keys")  # printed translated (item_title)
    summary = (
        "Two equal keys get equal weight for every query: compute A and spot the equal "
        "columns, and/or explain why."
    )
    supports_choice = True
    choice_needs = ("numeric",)
    slips = ("no-transpose", "scale-by-dk", "no-scale", "softmax-over-columns")
    # the sheet asks S and then A = softmax(S/√d_k) with no scale part in between
    carries = (A_FROM_SCORES,)
    layout = (("Q", "T", "d_k"), ("K", "T", "d_k"))
    params = (
        IntParam("T", 2, 4, Pinned(3), "number of tokens"),
        IntParam("d_k", 1, 4, Pinned(2), "width of queries and keys"),
        IntParam("low", -3, 3, Pinned(0), "smallest entry of Q and K"),
        IntParam("high", -3, 3, Pinned(2), "largest entry of Q and K"),
        BoolParam("numeric", Pinned(True), "give Q and K: ask the scores, A and which keys tie"),
        BoolParam("explain", Pinned(True), "ask the student to explain why (model answer)"),
        MatrixParam("Q", 2, 4, max_abs=9, help="pin Q (T x d_k); pin Q and K together"),
        MatrixParam("K", 2, 4, max_abs=9, help="pin K (T x d_k) with exactly two equal rows"),
    )
    prompt = N_(
        "{% if numeric %}The queries and keys of $T = {{ T }}$ tokens ($d_k = {{ d_k }}$) "
        "are the rows of $Q$ and $K$.{% else %}In a sequence of $T = {{ T }}$ tokens, "
        "tokens {{ pair[0] }} and {{ pair[1] }} have identical keys, "
        "$k_{{ pair[0] }} = k_{{ pair[1] }}$; their queries and values may differ."
        "{% endif %}"
    )

    def check(self, params: dict[str, ParamValue]) -> list[tuple[str, str]]:
        if not (pinned(params, "numeric") is not False or pinned(params, "explain") is not False):
            return [("explain", "expected numeric or explain (or both) to be true, got both false")]
        q, k = pinned(params, "Q"), pinned(params, "K")
        if (q is None) != (k is None):
            return [
                (
                    "K" if k is None else "Q",
                    "expected Q and K pinned together, got only " + ("Q" if k is None else "K"),
                )
            ]
        if q is not None:
            if len(q) != len(k) or len(q[0]) != len(k[0]):
                return [
                    (
                        "K",
                        f"expected K with the shape of Q ({len(q)}x{len(q[0])}), got "
                        f"{len(k)}x{len(k[0])}",
                    )
                ]
            pairs = equal_pairs([list(r) for r in k])
            if len(pairs) != 1:
                got = (
                    "no equal rows"
                    if not pairs
                    else "; ".join(f"rows {a + 1} and {b + 1}" for a, b in pairs)
                )
                return [
                    ("K", f"expected exactly two equal rows in K (the identical keys), got {got}")
                ]
        return []  # the low/high range is Family.validate's

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        numeric = bool(pick(params["numeric"], rng))
        explain = bool(pick(params["explain"], rng))
        if pinned(params, "Q") is not None:
            q, k = as_rows(pinned(params, "Q")), as_rows(pinned(params, "K"))
            ((a, b),) = equal_pairs(k)
            return {
                "T": len(q),
                "d_k": len(q[0]),
                "pair": [a + 1, b + 1],
                "numeric": True,
                "explain": explain,
                "Q": q,
                "K": k,
            }
        t, d_k = pick(params["T"], rng), pick(params["d_k"], rng)
        lo, hi = sorted((pick(params["low"], rng), pick(params["high"], rng)))
        pairs = list(combinations(range(t), 2))
        a, b = pairs[int(rng.integers(len(pairs)))]
        given: dict[str, Any] = {
            "T": t,
            "d_k": d_k,
            "pair": [a + 1, b + 1],
            "numeric": numeric,
            "explain": explain,
        }
        if not numeric:
            return given

        def keys_and_queries() -> dict[str, list[list[int]]]:
            k = int_matrix(rng, t, d_k, lo, hi)
            k[b] = list(k[a])
            q = int_matrix(rng, t, d_k, lo, hi)
            if not self._clear(q, k, a):
                raise Redraw(
                    f"could not draw {t} keys of width {d_k} from {lo}..{hi} with exactly "
                    "one equal pair and distinct score columns; widen low..high or d_k"
                )
            return {"Q": q, "K": k}

        given.update(redrawn(keys_and_queries, TRIES))
        return given

    @staticmethod
    def _clear(q: list[list[int]], k: list[list[int]], a: int) -> bool:
        """Exactly one pair of equal (non-zero) keys, no zero query, no other column ties
        with theirs, and (beyond two tokens, where the pair is every key) no row whose
        scores are all equal: its softmax would be uniform, hiding the pair's tie."""
        if len(equal_pairs(k)) != 1 or not any(k[a]) or any(not any(r) for r in q):
            return False
        s = np.asarray(q) @ np.asarray(k).T
        if len(k) > 2 and equal_score_rows(s.tolist(), causal=False):
            return False
        ties = [j for j in range(s.shape[1]) if np.array_equal(s[:, j], s[:, a])]
        return len(ties) == 2

    def slips_for(self, given: dict[str, Any]) -> tuple[str, ...]:
        if not given["numeric"]:
            return ()
        return tuple(s for s in self.slips if s != "no-transpose" or given["d_k"] == given["T"])

    fingerprint = ("scores", "A")
    target = "A"

    def chain_args(self, given: dict[str, Any]) -> dict[str, Any] | None:
        """The arguments of ``attend`` (numeric variants only)."""
        if not given["numeric"]:
            return None
        return {"Q": given["Q"], "K": given["K"], "d_k": given["d_k"], "causal": False}

    def trace(self, given: dict[str, Any], recipe: Recipe = CORRECT) -> Trace:
        """The attention trace of a numeric variant."""
        args = self.chain_args(given)
        assert args is not None
        return attend(recipe=recipe, **args)

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
        if not given["numeric"]:
            return {}
        t = self.trace(given, recipe)
        return {"scores": t.scores, "A": t.A}

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        a, b = given["pair"]
        shown: tuple[Shown, ...] = ()
        answers: list = []
        parts: list[Part] = []
        steps: list[Step] = []
        if given["numeric"]:
            q, k, d_k = given["Q"], given["K"], given["d_k"]
            trace = self.trace(given)
            floats = attend_float(Q=q, K=k, d_k=d_k, causal=False)
            for name in ("scores", "scaled", "A"):
                cross_check(item, name, ex.matrix_floats(getattr(trace, name)), floats[name])
            shown = (Shown("Q", "matrix", ints(q)), Shown("K", "matrix", ints(k)))
            options = tuple(
                pair_text(x + 1, y + 1) for x, y in combinations(range(given["T"]), 2)
            ) + (said(NO_PAIR),)
            answers += [
                int_matrix_answer("scores", r"S = QK^\top", computed(trace.scores)),
                matrix_answer("A", "A", trace.A, decimals, widen=2),
                choice_answer(
                    "equal_pair",
                    text_label(pgettext("answer label", "equal columns")),
                    pair_text(a, b),
                    options,
                    gettext("Columns {a} and {b} of $A$ agree in every row.", a=a, b=b),
                ),
            ]
            parts += [
                Part(gettext("Compute the scores $S = QK^\\top$."), "scores"),
                Part(
                    gettext(
                        "Write $A = \\mathrm{{softmax}}(S/\\sqrt{{{d_k}}})$, row by row over keys.",
                        d_k=d_k,
                    ),
                    "A",
                ),
                Part(gettext("Which two keys get equal weight from every query?"), "equal_pair"),
            ]
            steps.append(
                Step(
                    gettext("Keys {a} and {b} are the same row of $K$", a=a, b=b),
                    rf"k_{a} = k_{b} = " + vector([str(x) for x in k[a - 1]]),
                )
            )
            steps += attention_steps(trace, {"d_k": d_k}, decimals)
            steps.append(
                Step(
                    gettext("Columns {a} and {b} of $A$ are equal in every row.", a=a, b=b),
                    text=gettext(
                        "Each query scores keys {a} and {b} the same, so the "
                        "softmax gives them the same weight.",
                        a=a,
                        b=b,
                    ),
                )
            )
        else:
            answers.append(
                choice_answer(
                    "equal_weights",
                    text_label(pgettext("answer label", "their weights")),
                    said(EQUAL_ALWAYS),
                    tuple(map(said, WEIGHT_OPTIONS)),
                    gettext(
                        "Equal keys mean equal scores for every query, and equal scores get equal "
                        "weights."
                    ),
                )
            )
            parts.append(
                Part(
                    gettext(
                        "For a query $q$, how do the softmax weights of keys {a} and {b} compare?",
                        a=a,
                        b=b,
                    ),
                    "equal_weights",
                )
            )
            steps.append(
                Step(
                    gettext("Equal keys give equal scores for every query"),
                    rf"q \cdot k_{a} = q \cdot k_{b}\ \Rightarrow\ "
                    rf"A_{{t{a}}} = A_{{t{b}}}\ \text{{for every query }} t",
                )
            )
        if given["explain"]:
            answers.append(
                text_answer(
                    "explain", text_label(pgettext("answer label", "why")), model_answer(a, b)
                )
            )
            # with numbers, the pair is the previous part's answer: not named here
            parts.append(
                Part(
                    gettext(
                        "Explain why those two keys get the same weight from every query. Is "
                        "that a tie-break bug?"
                    )
                    if given["numeric"]
                    else gettext(
                        "Explain why keys {a} and {b} get the same weight from every query. Is "
                        "that a tie-break bug?",
                        a=a,
                        b=b,
                    ),
                    "explain",
                )
            )
        return Solution(shown=shown, parts=tuple(parts), answers=tuple(answers), steps=tuple(steps))
