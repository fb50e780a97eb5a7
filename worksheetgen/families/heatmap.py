"""Reading an attention heatmap: where does token t look most, and is the matrix causal?"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from worksheetgen.attention.compute import Recipe
from worksheetgen.errors import DrawError, SolveError, describe
from worksheetgen.exact.answers import choice_answer, integer_answer
from worksheetgen.exact.mathtex import vector
from worksheetgen.families.base import (
    BoolParam,
    Family,
    IntParam,
    MatrixParam,
    Redraw,
    pick,
    redrawn,
)
from worksheetgen.families.common import pinned, text_label
from worksheetgen.language import N_, gettext, pgettext, said
from worksheetgen.model import Choices, ParamValue, Part, Pinned, Shown, Solution, Step

if TYPE_CHECKING:
    from worksheetgen.bank.yamldoc import Doc

#: draws of the weights before giving up
TRIES = 200
UNITS = 20  # drawn weights are multiples of 1/20 = 0.05
CAUSAL = N_("causal: every weight above the diagonal is 0")
NOT_CAUSAL = N_("not causal: some query puts weight on a later key")
CAUSAL_OPTIONS = (CAUSAL, NOT_CAUSAL)
#: in a shade-only heatmap, the asked row's largest weight is at least this far above the
#: next (a tenth of the grey scale): reading it is seeing the darkest cell, not guessing
SHADE_GAP = Fraction(3, 20)


def exact_rows(rows: Any) -> list[list[Fraction]]:
    """Weights read exactly (0.35 is 7/20, not the nearest float)."""
    return [[Fraction(str(x)) for x in row] for row in rows]


def weight_text(x: Fraction) -> str:
    """A weight as printed in the heatmap: two decimals where exact, else as written."""
    if (x * 100).denominator == 1:
        return f"{float(x):.2f}"
    return str(float(x))


def top(values: list[Fraction]) -> int | None:
    """The 0-based index of the single largest value, or None on a tie."""
    best = max(values)
    hits = [i for i, v in enumerate(values) if v == best]
    return hits[0] if len(hits) == 1 else None


def is_causal(w: list[list[Fraction]]) -> bool:
    """No weight above the diagonal."""
    return all(x == 0 for i, row in enumerate(w) for x in row[i + 1 :])


def clear_top(values: list[Fraction]) -> bool:
    """True when the largest value stands out by SHADE_GAP from the next."""
    ranked = sorted(values, reverse=True)
    return len(ranked) < 2 or ranked[0] - ranked[1] >= SHADE_GAP


def askable(w: list[list[Fraction]], causal: bool) -> list[int]:
    """0-based rows with one largest weight (and, if causal, more than one visible key)."""
    return [i for i, row in enumerate(w) if top(row) is not None and (i > 0 or not causal)]


class Heatmap(Family):
    """A heatmap of attention weights A: the strongest key of a token; causal or not."""

    name = "heatmap"
    answers = ("top_key", "is_causal")
    title = N_("Reading an attention heatmap")  # printed translated (item_title)
    summary = (
        "An attention-weight heatmap (TikZ in LaTeX, a shaded table in Markdown): which "
        "key does token t attend to most, and is the weight matrix causal?"
    )
    # one slip only (reading a column instead of a row): too few distractors for format: choice
    #: the weights are a heatmap block (TikZ, which the preamble loads for it)
    display_kinds = ("heatmap",)
    slips = ("reads-column",)
    params = (
        IntParam("T", 2, 6, Pinned(4), "number of tokens (rows and columns of A)"),
        BoolParam(
            "causal",
            Choices((True, False)),
            "draw a causal A (zeros above the diagonal); {choices: [true, false]} draws",
        ),
        IntParam("token", 0, 6, Pinned(0), "the query token asked about (1..T); 0 draws one"),
        BoolParam(
            "numbers",
            Pinned(False),
            "print each weight in its cell (for a question that computes with them); by "
            "default the heatmap is shaded only, and the asked row's largest weight stands "
            "out by 0.15",
        ),
        MatrixParam(
            "A",
            2,
            6,
            max_abs=1,
            help="pin the weights (square, entries from 0 to 1, rows summing to 1)",
        ),
    )
    prompt = N_(
        "The heatmap shows the attention weights $A$ of one head over $T = {{ T }}$ "
        "tokens: row $i$ is query $i$, column $j$ is key $j$, and darker cells carry "
        "more weight."
    )

    def validate(self, raw: Mapping[str, Any], doc: Doc, path: tuple) -> dict[str, ParamValue]:
        out = super().validate(raw, doc, path)
        a = pinned(out, "A")
        if a is not None:
            for name in ("T", "causal"):
                if name in raw and not (name == "T" and raw[name] == len(a)):
                    raise doc.error(
                        path + (name,),
                        f"expected no {name} with a pinned A (A "
                        f"itself gives it), got {describe(raw[name])}",
                    )
        return out

    def check(self, params: dict[str, ParamValue]) -> list[tuple[str, str]]:
        a, token = pinned(params, "A"), pinned(params, "token")
        t = len(a) if a is not None else pinned(params, "T")
        if token and t is not None and token > t:
            return [("token", f"expected token from 1 to T = {t} (0 draws one), got {token}")]
        if a is None:
            return []
        if len(a[0]) != len(a):
            return [("A", f"expected a square T x T matrix, got {len(a)}x{len(a[0])}")]
        w = exact_rows(a)
        for i, row in enumerate(w):
            if any(x < 0 for x in row):
                return [("A", f"expected weights from 0 to 1, got a negative one in row {i + 1}")]
            if sum(row) != 1:
                return [
                    (
                        "A",
                        f"expected every row to sum to 1 (a softmax row), got row {i + 1} "
                        f"summing to {float(sum(row)):g}",
                    )
                ]
        if token:
            if top(w[token - 1]) is None:
                return [
                    (
                        "token",
                        f"expected a token whose row has one largest weight, got "
                        f"token {token}, whose row ties",
                    )
                ]
        elif not askable(w, is_causal(w)):
            return [
                ("A", "expected at least one row with one largest weight, got ties in every row")
            ]
        return []

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        a, token = pinned(params, "A"), pick(params["token"], rng)
        numbers = bool(pick(params["numbers"], rng))
        if a is not None:
            w = exact_rows(a)
            rows = askable(w, is_causal(w))
            t_row = token - 1 if token else rows[int(rng.integers(len(rows)))]
            return self._given(w, t_row, numbers)
        t = pick(params["T"], rng)
        causal = bool(pick(params["causal"], rng))

        def weights() -> dict[str, Any]:
            failed = Redraw(
                f"could not draw a {t} x {t} heatmap with a row that has one largest "
                f"weight in {TRIES} tries"
            )
            w = []
            for i in range(t):
                visible = i + 1 if causal else t
                w.append(self._row(rng, visible) + [Fraction(0)] * (t - visible))
            if not causal and is_causal(w):
                raise failed
            if token:
                row = w[token - 1] if token <= t else []
                if row and top(row) is not None and (token > 1 or not causal):
                    if numbers or clear_top(row):
                        return self._given(w, token - 1, numbers)
                raise failed
            rows = [i for i in askable(w, causal) if numbers or clear_top(w[i])]
            if not rows:
                raise failed
            return self._given(w, rows[int(rng.integers(len(rows)))], numbers)

        return redrawn(weights, TRIES)

    @staticmethod
    def _row(rng: np.random.Generator, n: int) -> list[Fraction]:
        """n weights, multiples of 1/20 summing to 1 (a random composition of 20)."""
        cuts = sorted(int(c) for c in rng.integers(0, UNITS + 1, size=n - 1))
        bounds = [0, *cuts, UNITS]
        return [Fraction(bounds[i + 1] - bounds[i], UNITS) for i in range(n)]

    @staticmethod
    def _given(w: list[list[Fraction]], row: int, numbers: bool) -> dict[str, Any]:
        """Weights as JSON numbers (short decimals, read back exactly), the token asked and,
        where the heatmap prints its weights, ``numbers``."""
        given: dict[str, Any] = {"T": len(w), "A": [[float(x) for x in r] for r in w]}
        given["token"] = row + 1
        if numbers:
            given["numbers"] = True
        return given

    fingerprint = ("top_key",)
    target = "top_key"

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
        w = exact_rows(given["A"])
        t = given["token"] - 1
        line = [row[t] for row in w] if recipe.read == "column" else w[t]
        best = max(line)
        return {"top_key": line.index(best) + 1}

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        w = exact_rows(given["A"])
        texts = [[weight_text(x) for x in row] for row in w]
        t = given["token"]
        k = top(w[t - 1])
        if k is None:
            raise DrawError(f"row {t} of the heatmap has no single largest weight")
        floats = np.asarray(given["A"], dtype=float)
        if not np.allclose(floats.sum(axis=1), 1.0) or int(np.argmax(floats[t - 1])) != k:
            raise SolveError("the float heatmap disagrees with the exact one", field=item)
        causal = is_causal(w)
        above = [
            (i + 1, j + 1) for i, row in enumerate(w) for j, x in enumerate(row) if j > i and x > 0
        ]
        answers = (
            integer_answer("top_key", text_label(pgettext("answer label", "key")), k + 1),
            choice_answer(
                "is_causal",
                text_label(pgettext("answer label", "causal?")),
                said(CAUSAL if causal else NOT_CAUSAL),
                tuple(map(said, CAUSAL_OPTIONS)),
                gettext("Every entry above the diagonal is 0.")
                if causal
                else gettext(
                    "For example, query {query} puts weight {weight} on the later key {key}.",
                    query=above[0][0],
                    weight=texts[above[0][0] - 1][above[0][1] - 1],
                    key=above[0][1],
                ),
            ),
        )
        parts = (
            Part(
                gettext("Which key does token {t} attend to most? Write its number.", t=t),
                "top_key",
            ),
            Part(
                gettext(
                    "Is this weight matrix causal (could it come from a decoder with a "
                    "causal mask)?"
                ),
                "is_causal",
            ),
        )
        key_word = pgettext("answer label", "key")
        steps = [
            Step(
                gettext(
                    "Read across row {t} (query {t}): the largest weight is in column {column}.",
                    t=t,
                    column=k + 1,
                ),
                rf"A_{{{t},\cdot}} = "
                + vector(texts[t - 1])
                + rf"\ \Rightarrow\ \text{{{key_word} }} {k + 1}\ ({texts[t - 1][k]})",
                gettext("Rows are queries: read across, not down."),
            ),
        ]
        if causal:
            steps.append(
                Step(
                    gettext(
                        "Causal means no query looks at a later key: every entry above "
                        "the diagonal is 0, and it is"
                    ),
                    r"A_{ij} = 0 \text{ for all } j > i",
                )
            )
        else:
            i, j = above[0]
            steps.append(
                Step(
                    gettext("Causal means every entry above the diagonal is 0; this one is not"),
                    rf"A_{{{i}{j}}} = {texts[i - 1][j - 1]} > 0 \quad (j = {j} > "
                    rf"i = {i})",
                )
            )
        shown = (
            Shown(
                "A",
                "heatmap",
                {
                    "rows": texts,
                    "weights": given["A"],
                    "row_label": "query",
                    "col_label": "key",
                    "numbers": bool(given.get("numbers", False)),
                },
            ),
        )
        return Solution(shown=shown, parts=parts, answers=answers, steps=tuple(steps))
