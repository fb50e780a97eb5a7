"""Mark all that apply: a question the bank writes itself, with its options and the set of
right ones.

The bank gives the question (markup: text with $math$), the options (at least two, at most
26, each once) and the letters of the right ones in the order written (``right: [b, d]``): at
least one, and at least one option left wrong (a question whose every option is right asks
nothing, and Moodle's penalty for a wrong mark, 1/(number wrong), would be undefined). The
options are printed in an order drawn per sheet from the question's generator (``shuffle:
false`` keeps the bank's). Scoring (``grading.score``): each right option marked earns
1/(number right) of the part, each wrong one marked costs 1/(number wrong), at least 0 (as
Moodle scores a multi-answer question), or ``all_or_nothing: true``: the whole part only for
exactly the right set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from worksheetgen.attention.compute import Recipe
from worksheetgen.exact.answers import choices_answer
from worksheetgen.families.base import BoolParam, Family, TextParam, pick
from worksheetgen.families.common import text_label
from worksheetgen.language import N_, gettext, pgettext
from worksheetgen.model import ParamValue, Part, Pinned, Solution, Step

if TYPE_CHECKING:
    from worksheetgen.bank.yamldoc import Doc

LETTERS = "abcdefghijklmnopqrstuvwxyz"


class MarkAll(Family):
    """A bank's own question with several right options."""

    name = "mark-all"
    answers = ("marked",)
    title = N_("Several right answers")  # printed translated (item_title)
    summary = (
        "A question the bank writes, with options of its own and several right ones "
        "(mark all that apply), scored per option as Moodle does or all or nothing."
    )
    params = (
        TextParam("question", None, "the question (text with $math$)"),
        TextParam("options", None, "the options, 2 to 26 (text with $math$)", many=True),
        TextParam(
            "right",
            None,
            "the letters of the right options in the order written (a, b, ...): at least "
            "one, not all",
            many=True,
            longest=1,
        ),
        BoolParam(
            "all_or_nothing",
            Pinned(False),
            "score the part whole for exactly the right set, else nothing (default: each "
            "right mark earns 1/(number right), each wrong one costs 1/(number wrong))",
        ),
        BoolParam("shuffle", Pinned(True), "print the options in an order drawn per sheet"),
        TextParam("explanation", None, "why the right options are right, for the key"),
    )
    prompt = N_("Mark all that apply.")

    def validate(self, raw: Mapping[str, Any], doc: Doc, path: tuple) -> dict[str, ParamValue]:
        for field in ("question", "options", "right"):
            if field not in raw:
                raise doc.error(
                    path,
                    f"expected params.{field} for family 'mark-all', got nothing (missing)",
                )
        out = super().validate(raw, doc, path)
        options = out["options"]
        right = out["right"]
        assert isinstance(options, Pinned) and isinstance(right, Pinned)
        n = len(options.value)
        if n < 2:
            raise doc.error(path + ("options",), f"expected at least 2 options, got {n}")
        seen: dict[str, int] = {}
        for i, text in enumerate(options.value):
            same = seen.setdefault(" ".join(text.casefold().split()), i)
            if same != i:
                raise doc.error(
                    path + ("options", i),
                    f"expected options that differ in more than case (grade reads an option "
                    f"by its text), got {text!r} like options[{same}]",
                )
        letters = LETTERS[:n]
        for i, letter in enumerate(right.value):
            if letter.lower() not in letters:
                raise doc.error(
                    path + ("right", i),
                    f"expected a letter from a to {letters[-1]} (one per option), got {letter!r}",
                )
        chosen = {x.lower() for x in right.value}
        if len(chosen) != len(right.value):
            raise doc.error(path + ("right",), "expected each letter once, got one twice")
        if len(chosen) == n:
            raise doc.error(
                path + ("right",),
                f"expected at least one wrong option (a question whose every option is right "
                f"asks nothing), got all {n} right",
            )
        return {**out, "right": Pinned(tuple(sorted(chosen)))}

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        options = pick(params["options"], rng)
        n = len(options)
        order = (
            [int(i) for i in rng.permutation(n)] if pick(params["shuffle"], rng) else list(range(n))
        )
        return {
            "question": pick(params["question"], rng),
            "options": list(options),
            "right": [LETTERS.index(x) for x in pick(params["right"], rng)],
            "order": order,
            "all_or_nothing": bool(pick(params["all_or_nothing"], rng)),
            "explanation": pick(params["explanation"], rng) if "explanation" in params else "",
        }

    fingerprint: ClassVar[tuple[str, ...]] = ()

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
        return {}

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        options = tuple(given["options"][i] for i in given["order"])
        right = tuple(given["options"][i] for i in given["right"])
        answer = choices_answer(
            "marked",
            text_label(pgettext("answer label", "answer")),
            right,
            options,
            given["explanation"],
            all_or_nothing=given["all_or_nothing"],
        )
        n_right, n_wrong = len(right), len(options) - len(right)
        if given["all_or_nothing"]:
            rule = gettext("Only the right options, all of them and no other, earn the points.")
        else:
            rule = gettext(
                "Each right option marked earns {earn} of the points and each wrong option "
                "marked costs {cost}; the question scores at least 0.",
                earn=f"$1/{n_right}$",
                cost=f"$1/{n_wrong}$",
            )
        steps = (Step(given["explanation"]),) if given["explanation"] else ()
        return Solution(
            shown=(),
            parts=(Part(given["question"], "marked"),),
            answers=(answer,),
            steps=(*steps, Step(rule)),
        )
