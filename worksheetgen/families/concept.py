"""Concept questions: the note's practice questions without a numeric answer, with model answers.

Each concept has a short id (what a bank writes), the question, a model answer for the key,
a one-line key idea with the note section it comes from, and pick-one options (the first is
correct) for ``format: choice`` (the older spelling: ``multiple_choice: true``). Options are
plain text; questions and model answers are markup (text with $math$).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from worksheetgen.attention.compute import Recipe
from worksheetgen.exact.answers import choice_answer, text_answer
from worksheetgen.families.base import BoolParam, Family, IntParam, OptionParam, pick
from worksheetgen.families.common import param_values, text_label
from worksheetgen.language import N_, gettext, pgettext, said
from worksheetgen.model import Choices, ParamValue, Part, Pinned, Solution, Step

if TYPE_CHECKING:
    from worksheetgen.bank.yamldoc import Doc


@dataclass(frozen=True)
class Concept:
    """One concept question."""

    id: str
    question: str
    model: str
    idea: str
    section: str
    options: tuple[str, ...]  # the first is correct


CONCEPTS: tuple[Concept, ...] = (
    Concept(
        "identical-keys",
        N_("If two tokens have identical keys, what does the softmax do to their weights?"),
        N_(
            "It gives them equal weight, for every query. Equal keys give equal scores "
            "($q \\cdot k_i = q \\cdot k_j$ for any $q$), and the softmax turns equal scores into "
            "equal weights, so the mass is split evenly between the two tokens. That is the "
            "definition of the softmax, not a tie-break bug."
        ),
        N_("Equal scores in, equal weights out."),
        N_("section 4, How it works"),
        (
            N_("It gives them equal weight, for every query"),
            N_("It gives all the weight to the earlier token (a tie-break)"),
            N_("It gives both of them zero weight"),
            N_("It depends on their values $V$"),
        ),
    ),
    Concept(
        "why-sqrt-dk",
        N_("Why are the scores divided by $\\sqrt{d_k}$?"),
        N_(
            "If the coordinates of $q$ and $k$ are roughly independent with variance 1, the dot "
            "product $q \\cdot k$ has variance $d_k$. For a large $d_k$ the logits are large and "
            "the softmax is pushed toward a one-hot. Dividing by $\\sqrt{d_k}$ brings the variance "
            "back to 1, so the softmax still mixes. Skipping the scale, or dividing by $d_k$, "
            "peaks or flattens the softmax for the wrong reason."
        ),
        N_("The scale keeps the variance of the scores at 1 whatever $d_k$ is."),
        N_("section 2, Why we use it"),
        (
            N_("To keep the scores' variance near 1, so the softmax does not saturate"),
            N_("To make every row of $A$ sum to 1, whatever the width $d_k$ of the keys"),
            N_("To normalize the scores over the keys instead of over the queries"),
            N_("Because the values $V$ have width $d_k$, and the output must keep that width"),
        ),
    ),
    Concept(
        "self-vs-cross",
        N_("Self-attention versus cross-attention: which matrices come from which sequence?"),
        N_(
            "In self-attention $Q$, $K$ and $V$ are all computed from the same sequence $X$. In "
            "cross-attention (encoder-decoder, later BLIP) the queries come from one sequence (the "
            "decoder's) and the keys and values from the other (the encoder's output). The "
            "formula $\\mathrm{softmax}(QK^\\top/\\sqrt{d_k})V$ is the same."
        ),
        N_("Only which sequence supplies $Q$ versus $K, V$ changes."),
        N_("section 1, What self-attention is"),
        (
            N_(
                "Self: $Q$, $K$, $V$ all from one sequence; cross: $Q$ from one sequence, "
                "$K$ and $V$ from the other"
            ),
            N_(
                "Self: $Q$, $K$, $V$ all from one sequence; cross: $Q$ and $K$ from one sequence, "
                "$V$ from the other"
            ),
            N_(
                "Self: $Q$ from the input and $K$, $V$ from the output; cross: all three from both "
                "sequences concatenated"
            ),
        ),
    ),
    Concept(
        "mask-inf",
        N_("A causal mask sets future scores to $-\\infty$ before the softmax. Why not to 0?"),
        N_(
            "A score of 0 is an ordinary score: $e^0 = 1$, so it still gets weight. For example "
            "$\\mathrm{softmax}([1, 0]) \\approx [0.73, 0.27]$ puts 0.27 on the masked key. "
            "$-\\infty$ becomes $e^{-\\infty} = 0$, so the future key gets probability exactly 0."
        ),
        N_("Only $-\\infty$ becomes probability 0 after the softmax."),
        N_("section 3, Architecture"),
        (
            N_("Minus infinity gives the future key weight 0; a score of 0 still gets weight"),
            N_("A score of 0 would make the row of weights sum to more than 1 after the softmax"),
            N_("There is no difference: both give the future key exactly zero weight"),
            N_("Minus infinity keeps the score matrix symmetric, which the softmax needs"),
        ),
    ),
    Concept(
        "bert-vs-causal",
        N_(
            "BERT also uses a mask. How is BERT's mask different from the causal mask of a "
            "next-token predictor?"
        ),
        N_(
            "The causal mask is a triangle on the scores: query $i$ cannot attend to keys after "
            "$i$, so a language model cannot cheat by reading the token it must predict. BERT does "
            "not mask the future; it replaces random input tokens by a mask token and trains the "
            "model to reconstruct them, attending in both directions (note 3.4). They are two "
            "different uses of the word mask, and BERT's token mask is not a substitute for the "
            "causal mask."
        ),
        N_("Causal: hide later keys in the scores. BERT: hide random input tokens."),
        N_("sections 3 and 6"),
        (
            N_("Causal hides later keys in the scores; BERT hides random input tokens to predict"),
            N_("They are the same triangular mask on the scores; BERT applies it in the encoder"),
            N_(
                "BERT masks the past instead of the future, so each token reads only the later ones"
            ),
            N_("BERT's mask sets the scores of the masked tokens to 0 instead of minus infinity"),
        ),
    ),
    Concept(
        "concat-not-residual",
        N_(
            "The outputs of the $h$ heads are concatenated. Is that a residual connection? Where "
            "does $W_O$ come in?"
        ),
        N_(
            "No. The concatenation puts the $h$ head outputs (each of width $d_k = d/h$) side by "
            "side into one vector of width $h \\cdot d_k = d$; nothing is added to the input. "
            "$W_O$ then maps the concatenated vector back to width $d$, and its weights count in "
            "attention's parameters (note 3.3). A residual connection, $x + \\mathrm{Attention}(x)"
            "$, is a separate addition around the layer."
        ),
        N_("Concat stacks the heads; $W_O$ projects them; the residual is a separate sum."),
        N_("section 3, Architecture"),
        (
            N_(
                "No: concat stacks the heads, $W_O$ projects them, and the residual is a "
                "separate sum"
            ),
            N_(
                "Yes: concatenating the heads adds their outputs to the input, which is the "
                "residual"
            ),
            N_(
                "No, and $W_O$ is not among attention's parameters: it is part of the feed-forward "
                "layer"
            ),
        ),
    ),
    Concept(
        "mix-values",
        N_(
            "After the softmax, what does $A$ multiply: the keys or the values? What goes wrong "
            "with the other choice?"
        ),
        N_(
            "The values: the output is $AV$, so output row $t$ is a weighted sum of the rows of "
            "$V$. Keys only serve to compute the weights, through $QK^\\top$. Multiplying $A$ by "
            "$K$ is a common lab bug: when $d_k = d_v$ the shapes still work, but the output mixes "
            "what tokens look like to be found instead of what they contribute."
        ),
        N_("Weights from queries and keys; the mix is of values."),
        N_("section 1, What self-attention is"),
        (
            N_("The values $V$: output row $t$ is a weighted sum of the rows of $V$"),
            N_("The keys $K$, since the weights were computed from the keys"),
            N_("The queries $Q$, so that each output row stays tied to its own query"),
            N_("The scores $QK^\\top$ again, to sharpen the weights before the output"),
        ),
    ),
    Concept(
        "softmax-axis",
        N_("Over which axis is the softmax of $QK^\\top/\\sqrt{d_k}$ taken, and why?"),
        N_(
            "Over the keys: along each row (the last dimension), so that row $t$ of $A$ is a "
            "probability distribution over the positions token $t$ attends to. Normalizing each "
            "column (over the queries) instead silently produces a different mix."
        ),
        N_("Each row of $A$ sums to 1."),
        N_("section 4, How it works"),
        (
            N_("Over the keys: each row of $A$ sums to 1"),
            N_("Over the queries: each column of $A$ sums to 1"),
            N_("Over the whole matrix: all entries of $A$ sum to 1"),
        ),
    ),
    Concept(
        "when-causal",
        N_("When must self-attention use a causal mask?"),
        N_(
            "When the model predicts the next token (a decoder or language model): without the "
            "mask, token $t$ could attend to the very token it is asked to predict, and the model "
            "would cheat. Where the whole input is known in advance (an encoder), attention in "
            "both directions is fine."
        ),
        N_("Next-token prediction: bidirectional attention would be cheating."),
        N_("section 6, When not to"),
        (
            N_("When it predicts the next token, so no token reads the future"),
            N_("Always, in every attention layer of every transformer model"),
            N_("Only in cross-attention, where the decoder reads the encoder's output"),
            N_("Only when the sequence length $T$ is larger than the width $d$"),
        ),
    ),
    Concept(
        "positions",
        N_("Without positional information, does self-attention know the order of the tokens?"),
        N_(
            "No. Every query is compared with every key by the same formula, so permuting the "
            "tokens only permutes the rows and columns of $A$ and the rows of the output: "
            "attention is a set operation. Order must be added, with positional encodings "
            "(note 3.3)."
        ),
        N_("Attention is a set operation until positions are added."),
        N_("section 6, Negative points"),
        (
            N_("No: permuting the tokens just permutes the outputs; order must be added"),
            N_("Yes: the rows of $Q$ are stored in token order, and the scores keep that order"),
            N_("Yes: the softmax runs from left to right over the keys, as an RNN does"),
        ),
    ),
    Concept(
        "why-heads",
        N_("Why does a layer use several heads instead of one?"),
        N_(
            "Each head has its own $W_Q, W_K, W_V$ on a slice of the channels ($d_k = d/h$), so "
            "different heads can attend to different things at once: syntax, a name, a comma. "
            "One head gives a single weighted average per token; several heads give several "
            "different mixes, which are concatenated and projected by $W_O$, at about the same "
            "cost."
        ),
        N_("Several heads, several different mixes in parallel."),
        N_("section 2, Why we use it"),
        (
            N_("So that different heads can attend to different things at the same time"),
            N_("To make the softmax more peaked, since each head sees fewer of the channels"),
            N_("To remove the need for the square-root scale in every single head"),
            N_("To reduce the number of attention scores the layer has to compute"),
        ),
    ),
    Concept(
        "parallel",
        N_("Why can self-attention process all tokens in parallel, unlike an RNN?"),
        N_(
            "An RNN mixes left to right through its hidden state $h_t$, so step $t$ waits for step "
            "$t-1$. Self-attention computes all the scores $QK^\\top$ at once with matrix "
            "products: any pair of tokens interacts in one layer (path length 1), and every row is "
            "computed at the same time."
        ),
        N_("Any pair of tokens interacts in one layer: path length 1."),
        N_("section 2, Why we use it"),
        (
            N_("All scores come from one matrix product: no step waits for the one before"),
            N_("Because the causal mask removes every dependence between the tokens of a sentence"),
            N_("Because each head processes a different token, one head per position"),
        ),
    ),
)
BY_ID = {c.id: c for c in CONCEPTS}
IDS = tuple(BY_ID)


def answer_name(concept_id: str) -> str:
    """The key.json answer name of a concept (an identifier: mask-inf -> mask_inf)."""
    return concept_id.replace("-", "_")


class ConceptQuestions(Family):
    """One or more of the note's conceptual questions, as free text or pick-one."""

    name = "concept"
    answers = tuple(answer_name(c.id) for c in CONCEPTS)
    title = N_("Concepts")  # printed translated (item_title)
    choice_param = "multiple_choice"  # format: choice asks every question pick-one
    summary = (
        "The note's questions without a numeric answer, free text (model answers in "
        "the key) or multiple choice; pick them by id."
    )
    params = (
        OptionParam(
            "ask",
            IDS,
            Choices(IDS),
            "which question(s): an id, a list of ids (all asked, in order), or "
            "{choices: [...]} to draw count of them",
            many=True,
        ),
        IntParam(
            "count",
            1,
            len(IDS),
            Pinned(1),
            "how many different questions to draw when ask is {choices: [...]}",
        ),
        BoolParam(
            "multiple_choice",
            Pinned(False),
            "the older spelling of format: choice (pick-one questions, options shuffled "
            "per variant); {choices: [true, false]} draws the form per variant",
        ),
    )
    prompt = N_(
        "{% if multiple_choice %}Choose the best answer{% if ask|length > 1 %} to each "
        "question{% endif %}.{% else %}Answer in two or three sentences{% if ask|length "
        "> 1 %} each{% endif %}.{% endif %}"
    )

    def validate(self, raw: Mapping[str, Any], doc: Doc, path: tuple) -> dict[str, ParamValue]:
        out = super().validate(raw, doc, path)
        if "count" in raw and isinstance(out["ask"], Pinned):
            raise doc.error(
                path + ("count",),
                "expected no count when ask names the "
                "questions (all named ones are asked), got "
                f"{raw['count']!r}",
            )
        return out

    def check(self, params: dict[str, ParamValue]) -> list[tuple[str, str]]:
        ask = params["ask"]
        if isinstance(ask, Choices):
            most = max(param_values(params["count"]))
            if most > len(ask.values):
                return [
                    (
                        "count",
                        f"expected count of at most {len(ask.values)} (the number "
                        f"of choices), got {most}",
                    )
                ]
        return []

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        ask = params["ask"]
        if isinstance(ask, Pinned):
            ids = list(ask.value)
        else:
            assert isinstance(ask, Choices)  # an OptionParam: pinned words or choices
            count = int(pick(params["count"], rng))
            picks = rng.choice(len(ask.values), size=count, replace=False)
            ids = [ask.values[int(i)] for i in picks]
        choice = bool(pick(params["multiple_choice"], rng))
        orders = [
            [int(i) for i in rng.permutation(len(BY_ID[c].options))] if choice else [] for c in ids
        ]
        return {"ask": ids, "multiple_choice": choice, "orders": orders}

    fingerprint: ClassVar[tuple[str, ...]] = ()

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
        return {}

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        answers = []
        parts = []
        steps = []
        for cid, order in zip(given["ask"], given["orders"], strict=True):
            c = BY_ID[cid]
            name = answer_name(cid)
            model = gettext(c.model)
            if given["multiple_choice"]:
                options = tuple(said(c.options[i]) for i in order)
                answers.append(
                    choice_answer(
                        name,
                        text_label(pgettext("answer label", "answer")),
                        said(c.options[0]),
                        options,
                        model,
                    )
                )
            else:
                answers.append(
                    text_answer(name, text_label(pgettext("answer label", "model answer")), model)
                )
            parts.append(Part(gettext(c.question), name))
            steps.append(
                Step(
                    gettext(
                        "{idea} (Note 3.2, {section}.)",
                        idea=gettext(c.idea),
                        section=gettext(c.section),
                    )
                )
            )
        return Solution(shown=(), parts=tuple(parts), answers=tuple(answers), steps=tuple(steps))
