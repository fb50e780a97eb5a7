"""Why divide by √d_k: one row of scores, softmax with and without the scale."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from worksheetgen.attention.compute import Recipe, scale_matrix, softmax_float, softmax_rows
from worksheetgen.exact import number as ex
from worksheetgen.exact.answers import choice_answer, table, vector_answer
from worksheetgen.exact.mathtex import sqrt_of, vector
from worksheetgen.families.base import (
    Carry,
    Family,
    IntParam,
    MatrixParam,
    Param,
    Redraw,
    cross_check,
    pick,
    redrawn,
)
from worksheetgen.families.common import pinned
from worksheetgen.language import N_, gettext, pgettext, said
from worksheetgen.model import Choices, IntRange, ParamValue, Part, Pinned, Shown, Solution, Step

PEAKED_OPTIONS = (N_("without the scale"), N_("with the scale"), N_("equally peaked"))
CHANGE_OPTIONS = (N_("it lost probability"), N_("it gained probability"), N_("no change"))
#: draws of a row before giving up on one with a single largest score
ROW_TRIES = 50


def _softmax_float(row: list[float]) -> np.ndarray:
    return softmax_float(np.asarray(row, dtype=float))


class Scaling(Family):
    name = "scaling"
    answers: ClassVar[tuple[str, ...]] = ("scaled", "A", "A_unscaled", "largest_change", "peaked")
    title = N_("The effect of the scale")  # printed translated (item_title)
    summary = "Softmax a row of scores with and without dividing by sqrt(d_k); which is peaked."
    supports_choice = True
    slips = ("scale-by-dk", "no-scale")
    # A from the student's scaled row; which softmax is more peaked, and whether the largest
    # score (the top of the given row) gained or lost, from the student's own two softmaxes
    # (the options in order: more weight there without the scale, with it, the same)
    carries = (
        Carry("A", ("scaled",), ("softmax",)),
        Carry(
            "peaked",
            ("A_unscaled", "A"),
            ("compare_top",),
            args=(("top_of", "row"),),
            fixed=(("options", PEAKED_OPTIONS),),
        ),
        Carry(
            "largest_change",
            ("A_unscaled", "A"),
            ("compare_top",),
            args=(("top_of", "row"),),
            fixed=(("options", CHANGE_OPTIONS),),
        ),
    )
    layout = (("row", "rows", "n"),)
    params: ClassVar[tuple[Param, ...]] = (
        IntParam("n", 2, 4, IntRange(2, 3), "number of keys (entries in the row)"),
        IntParam("d_k", 2, 64, Choices((2, 4, 9)), "key width"),
        IntParam("low", -9, 9, Pinned(0), "smallest score"),
        IntParam("high", -9, 9, Pinned(3), "largest score"),
        MatrixParam("row", 1, 4, help="pin the row of scores, as [[s1, s2, ...]]"),
    )
    prompt = N_(
        "One query's raw scores $s$ against {{ n }} keys, and the key width $d_k$, are below."
    )

    def check(self, params: dict[str, ParamValue]) -> list[tuple[str, str]]:
        row = params.get("row")
        if isinstance(row, Pinned):
            r = row.value
            if len(r) != 1 or len(r[0]) < 2:
                return [
                    (
                        "row",
                        "expected one row of at least 2 scores, like [[0, 2]], "
                        f"got {len(r)}x{len(r[0])}",
                    )
                ]
            if max(r[0]) == min(r[0]):
                return [
                    (
                        "row",
                        "expected scores that are not all equal (else both softmaxes "
                        "are uniform), got equal scores",
                    )
                ]
        low, high = params["low"], params["high"]
        if isinstance(low, Pinned) and isinstance(high, Pinned) and low.value >= high.value:
            return [("high", f"expected high > low ({low.value}), got {high.value}")]
        return []

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        d_k = pick(params["d_k"], rng)
        if "row" in params:
            return {
                "row": list(pinned(params, "row")[0]),
                "d_k": d_k,
                "n": len(pinned(params, "row")[0]),
            }
        n = pick(params["n"], rng)
        lo, hi = sorted((pick(params["low"], rng), pick(params["high"], rng)))

        def one_row() -> list[int]:
            row: list[int] = rng.integers(lo, hi + 1, size=n).tolist()
            if row.count(max(row)) != 1:
                raise Redraw(f"could not draw a row with one largest score from {lo}..{hi}")
            return row

        return {"row": redrawn(one_row, ROW_TRIES), "d_k": d_k, "n": n}

    fingerprint: ClassVar[tuple[str, ...]] = ("scaled", "A")

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
        raw = [ex.number(x) for x in given["row"]]
        (scaled,) = scale_matrix([raw], given["d_k"], recipe.scale)
        _, _, (weights,) = softmax_rows([scaled])
        return {"scaled": scaled, "A": weights}

    def carries_for(self, given: Mapping[str, Any], asked: Sequence[str]) -> list[dict[str, Any]]:
        """The carried steps, their options in the build's language as the sheet prints them
        (the step picks one of them from the student's own softmaxes)."""
        out = super().carries_for(given, asked)
        for carry in out:
            options = carry["args"].get("options")
            if options is not None:
                carry["args"]["options"] = [said(o) for o in options]
        return out

    def chain_args(self, given: dict[str, Any]) -> dict[str, Any] | None:
        """The arguments of ``attend``: the row as a one-row score table."""
        if "row" not in given:
            return None
        return {"S": [given["row"]], "d_k": given["d_k"], "causal": False}

    def rounded(
        self, given: dict[str, Any], recipe: Recipe, decimals: int
    ) -> tuple[dict[str, Any], ...]:
        """The rounding chains of the row, as vectors like the answers."""
        return tuple(
            {k: v[0] for k, v in chain.items()}
            for chain in super().rounded(given, recipe, decimals)
        )

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        row, d_k = given["row"], given["d_k"]
        raw = [ex.number(x) for x in row]
        (scaled,) = scale_matrix([raw], d_k, "sqrt")
        _, _, (plain,) = softmax_rows([raw])
        exps, sums, (weights,) = softmax_rows([scaled])
        cross_check(item, "A_unscaled", [ex.to_float(x) for x in plain], _softmax_float(row))
        cross_check(
            item,
            "A",
            [ex.to_float(x) for x in weights],
            _softmax_float([x / np.sqrt(d_k) for x in row]),
        )
        top = max(range(len(row)), key=lambda i: row[i])
        if plain[top].val > weights[top].val:
            change, peaked = CHANGE_OPTIONS[0], PEAKED_OPTIONS[0]
        elif plain[top].val < weights[top].val:
            change, peaked = CHANGE_OPTIONS[1], PEAKED_OPTIONS[1]
        else:
            change, peaked = CHANGE_OPTIONS[2], PEAKED_OPTIONS[2]
        r = lambda v: table([v], decimals)[0]  # noqa: E731  (printed as the answers are)
        # the top weight before and after, to as many digits as it takes to see them differ
        # (at 0 decimals 0.88 and 0.80 both print as 1)
        shown = decimals
        while shown < decimals + 4 and ex.rounded(plain[top], shown) == ex.rounded(
            weights[top], shown
        ):
            shown += 1
        before, after = ex.rounded(plain[top], shown), ex.rounded(weights[top], shown)
        answers = (
            vector_answer("A_unscaled", r"\mathrm{softmax}(s)", plain, decimals),
            vector_answer("scaled", rf"s/{sqrt_of(d_k)}", scaled, decimals),
            vector_answer(
                "A", rf"\mathrm{{softmax}}(s/{sqrt_of(d_k)})", weights, decimals, widen=2
            ),
            choice_answer(
                "peaked",
                pgettext("answer label", "more peaked"),
                said(peaked),
                tuple(map(said, PEAKED_OPTIONS)),
                gettext(
                    "Dividing by a number above 1 shrinks the gaps between scores, so "
                    "the softmax flattens; skipping the scale leaves it more peaked."
                ),
            ),
            choice_answer(
                "largest_change",
                pgettext("answer label", "largest entry"),
                said(change),
                tuple(map(said, CHANGE_OPTIONS)),
                gettext("Its weight goes from {before} to {after}.", before=before, after=after),
            ),
        )
        parts = (
            Part(
                gettext("Softmax the row as it is: write $\\mathrm{softmax}(s)$."),
                "A_unscaled",
                row_label="",
                col_label="key",
            ),
            Part(
                gettext("Scale the row: write $s/\\sqrt{{{d_k}}}$.", d_k=d_k),
                "scaled",
                row_label="",
                col_label="key",
            ),
            Part(
                gettext(
                    "Softmax the scaled row: write $\\mathrm{{softmax}}(s/\\sqrt{{{d_k}}})$.",
                    d_k=d_k,
                ),
                "A",
                row_label="",
                col_label="key",
            ),
            Part(gettext("Which softmax is more peaked?"), "peaked"),
            Part(
                gettext(
                    "Did the largest score (key {key}) gain or lose probability after scaling?",
                    key=top + 1,
                ),
                "largest_change",
            ),
        )
        steps = (
            Step(
                gettext("Softmax without the scale"),
                r"\mathrm{softmax}(s) \approx " + vector(r(plain)),
            ),
            Step(
                gettext("Divide by $\\sqrt{{{d_k}}}$", d_k=d_k),
                rf"s/{sqrt_of(d_k)} \approx " + vector(r(scaled)),
            ),
            Step(
                gettext("Exponentiate and sum"),
                r"e^{s/\sqrt{d_k}} \approx "
                + vector(r(exps[0]))
                + r",\quad \textstyle\sum \approx "
                + ex.rounded(sums[0], decimals),
            ),
            Step(
                gettext("Softmax with the scale"),
                rf"\mathrm{{softmax}}(s/{sqrt_of(d_k)}) \approx " + vector(r(weights)),
            ),
            Step(
                gettext(
                    "The largest entry lost probability: the unscaled softmax is more peaked; "
                    "that is the scale's job."
                )
                if change == CHANGE_OPTIONS[0]
                else gettext(
                    "The largest entry gained probability: the unscaled softmax is more peaked; "
                    "that is the scale's job."
                )
                if change == CHANGE_OPTIONS[1]
                else gettext(
                    "The largest entry no change: the unscaled softmax is more peaked; "
                    "that is the scale's job."
                )
            ),
        )
        return Solution(
            shown=(Shown("s", "vector", [str(x) for x in row]), Shown("d_k", "scalar", str(d_k))),
            parts=parts,
            answers=answers,
            steps=steps,
        )

    def prompt_context(self, given: dict[str, Any]) -> dict[str, Any]:
        return {"row_tex": vector([str(x) for x in given["row"]])}
