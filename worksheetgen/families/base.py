"""What every question family shares: parameter declarations, validation and answer helpers.

A family is one kind of question (``heads``: the widths of multi-head attention). It is a
subclass of ``Family`` in a module of its own, registered under its ``name`` by an entry
point of the ``worksheetgen.families`` group (``families.registry``), and it owns everything
that differs between families: the stages, grading and the templates read what it declares
and never test which family they have. Families never touch the file system or print.
Family authors import all of this from ``worksheetgen.authoring``, the one front door; the
declarations are checked when the class is defined (``definition_problems``).

Adding a family, in the order the build uses it:

1. **Declare.** ``name`` (what a bank writes as ``family:``), ``title`` (the question's
   default heading), ``summary`` (one line for ``worksheetgen families``), ``params`` (one
   ``IntParam``, ``BoolParam``, ``MatrixParam`` or ``OptionParam`` each, with its default
   and help) and ``prompt`` (a Jinja template run in the sandbox, markup with ``$math$``;
   it sees the given values and ``prompt_context``). Cross-field rules go in ``check``;
   the shapes of pinned matrices in ``layout``. A pair of parameters named ``low`` and
   ``high`` (or ``v_low``/``v_high``, any ``<prefix>low``/``<prefix>high``) is a range:
   ``validate`` refuses it given the wrong way round, for every family.
2. **Draw.** ``draw(params, rng)`` returns the given values, JSON-able (ints, bools, lists
   of rows), drawing only with ``pick(params[name], rng)`` and ``rng``, so that one seed
   always gives the same sheet. Values that cannot make a question raise ``Redraw`` (the
   draw stage draws the whole variant again from the same generator, up to ``redraws``
   times); values drawn once with only the rest redrawn go through ``redrawn``. A bank
   that can never give a question raises DrawError.
3. **Solve.** ``solve(given, decimals, item)`` returns a ``model.Solution``: ``shown``
   (the given values displayed, each a ``model.Shown`` with its display kind), ``parts``
   (each a ``model.Part``: a sub-prompt and the name of the answer it asks for, one of
   the names the family declares in ``answers``),
   ``answers`` (``model.Answer``, made with ``exact.answers``: exact strings, floats and
   the printed strings) and ``steps`` (the worked solution of the key). Check the exact
   arithmetic against NumPy floats with ``cross_check``.
4. **Slips** (optional: families with no calculation to get wrong skip it). ``slips``
   names the misconceptions of ``attention.slips`` a question can suffer from,
   ``fingerprint`` the answers a slip changes, and ``evaluate(given, recipe)`` computes
   those answers exactly under a recipe with one switch flipped; the draw redraws a
   variant where two slips could not be told apart. Narrow them per variant with
   ``slips_for``, ``target_for``, ``operands``, ``shows_in`` and ``margin_also``;
   ``chain_args``/``rounded``/``chain_reach`` let the draw check that a slip worked from
   rounded earlier steps cannot pass for right. ``supports_choice`` (with
   ``choice_needs``) allows ``format: choice``, whose distractors are the slips; a family
   whose pick-one options are its own (``concept``) names the true/false parameter that
   asks them in ``choice_param``, and ``format: choice`` sets it.
5. **Carried-forward credit.** ``carries`` lists one ``Carry`` per later answer that is
   recomputed from the student's own earlier answers (a slip costs marks once); key.json
   writes each variant's steps and the grader applies them, knowing no family.

Display kinds (``model.DisplayKind``, listed in ``model.DISPLAY_KINDS``): each ``Shown``
value names its kind, and every document draws it with the
``show(g)`` macro of the kind's template partial (``templates/latex/shown/<kind>.tex.j2``,
``templates/markdown/shown/<kind>.md.j2``; the HTML export's ``export.html.BLOCKS``).
``matrix`` (a list of rows of printed strings), ``vector`` (a list) and ``scalar`` (a
string) sit side by side in the question's math display; ``heatmap`` (rows of printed
weights, the weights, row and column labels) is a block of its own, listed in
``model.BLOCK_KINDS`` with the lines it takes, and loads TikZ through its
``shown/heatmap.preamble.tex.j2``. A family lists the kinds it shows in
``display_kinds``. A new kind is a partial per format, a ``BLOCK_KINDS`` line when it is
a block, and an HTML renderer in ``export.html.BLOCKS``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from worksheetgen.attention.compute import Recipe, rounding_chains
from worksheetgen.errors import DrawError, SolveError, describe, did_you_mean
from worksheetgen.exact.rounding import half_unit
from worksheetgen.families.common import (
    explicit_dim_problems,
    order_problems,
    range_pairs,
    shape_dims,
)
from worksheetgen.model import (
    DISPLAY_KINDS,
    Choices,
    DisplayKind,
    IntRange,
    ParamValue,
    Pinned,
    Solution,
)
from worksheetgen.render.markup import math_problems, split_markup

if TYPE_CHECKING:
    from worksheetgen.bank.yamldoc import Doc


def _describe(value: Any) -> str:

    return describe(value)


@dataclass(frozen=True)
class IntParam:
    """An integer parameter: pinned (``T: 3``), a range (``{min: 2, max: 4}``) or choices."""

    name: str
    lo: int
    hi: int
    default: ParamValue
    help: str = ""

    def expected(self) -> str:
        return f"an integer from {self.lo} to {self.hi}"

    def _int(self, doc: Doc, value: Any, path: tuple) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not self.lo <= value <= self.hi:
            raise doc.error(path, f"expected {self.expected()}, got {_describe(value)}")
        return value

    def validate(self, doc: Doc, value: Any, path: tuple) -> ParamValue:
        """Check a bank value and turn it into a ParamValue."""
        if isinstance(value, dict):
            keys = set(value)
            if keys == {"min", "max"}:
                lo = self._int(doc, value["min"], path + ("min",))
                hi = self._int(doc, value["max"], path + ("max",))
                if lo > hi:
                    raise doc.error(path, f"expected min <= max, got min {lo} > max {hi}")
                return IntRange(lo, hi)
            if keys == {"choices"}:
                opts = value["choices"]
                if not isinstance(opts, list) or not opts:
                    raise doc.error(
                        path + ("choices",), f"expected a non-empty list, got {_describe(opts)}"
                    )
                return Choices(
                    tuple(self._int(doc, v, path + ("choices", i)) for i, v in enumerate(opts))
                )
            raise doc.error(
                path,
                "expected an integer, {min: a, max: b} or {choices: [...]}, "
                f"got a mapping with keys {', '.join(sorted(map(str, keys)))}",
            )
        return Pinned(self._int(doc, value, path))


@dataclass(frozen=True)
class BoolParam:
    """A true/false parameter; ``{choices: [true, false]}`` draws it."""

    name: str
    default: ParamValue
    help: str = ""

    def validate(self, doc: Doc, value: Any, path: tuple) -> ParamValue:
        if isinstance(value, dict) and set(value) == {"choices"}:
            opts = value["choices"]
            if not isinstance(opts, list) or not opts or not all(isinstance(v, bool) for v in opts):
                raise doc.error(path, f"expected a list of true/false, got {_describe(opts)}")
            return Choices(tuple(opts))
        if not isinstance(value, bool):
            raise doc.error(path, f"expected true or false, got {_describe(value)}")
        return Pinned(value)


@dataclass(frozen=True)
class MatrixParam:
    """A pinned matrix of numbers (list of rows); its shape is checked by the family."""

    name: str
    min_dim: int = 1
    max_dim: int = 8
    max_abs: float = 1000
    help: str = ""
    default: ParamValue | None = None
    #: only whole numbers (families whose exact arithmetic is on integers)
    integers: bool = False

    def validate(self, doc: Doc, value: Any, path: tuple) -> ParamValue:
        if not isinstance(value, list) or not value or not all(isinstance(r, list) for r in value):
            raise doc.error(path, f"expected a matrix (a list of rows), got {_describe(value)}")
        width = len(value[0])
        for i, row in enumerate(value):
            if len(row) != width:
                raise doc.error(
                    path + (i,), f"expected a row of {width} numbers (like row 0), got {len(row)}"
                )
            for j, x in enumerate(row):
                if (
                    isinstance(x, bool)
                    or not isinstance(x, int | float)
                    or x != x
                    or abs(x) > self.max_abs
                ):
                    raise doc.error(
                        path + (i, j),
                        f"expected a number of at most {self.max_abs:g}"
                        f" in size, got {_describe(x)}",
                    )
                if self.integers and not float(x).is_integer():
                    raise doc.error(path + (i, j), f"expected a whole number, got {_describe(x)}")
        if not (
            self.min_dim <= len(value) <= self.max_dim and self.min_dim <= width <= self.max_dim
        ):
            raise doc.error(
                path,
                f"expected between {self.min_dim} and {self.max_dim} rows and "
                f"columns, got {len(value)}x{width}",
            )
        return Pinned(tuple(tuple(r) for r in value))


@dataclass(frozen=True)
class OptionParam:
    """A word from a fixed list: one (``ask: mask-inf``), or ``{choices: [...]}`` to draw one.

    With ``many`` a list (``ask: [mask-inf, why-sqrt-dk]``) pins several, in that order, and a
    pinned value is always a tuple of words.
    """

    name: str
    options: tuple[str, ...]
    default: ParamValue
    help: str = ""
    many: bool = False

    def expected(self) -> str:
        return "one of: " + ", ".join(self.options)

    def _word(self, doc: Doc, value: Any, path: tuple) -> str:

        if not isinstance(value, str) or value not in self.options:
            hint = did_you_mean(value, self.options) if isinstance(value, str) else ""
            raise doc.error(path, f"expected {self.expected()}, got {_describe(value)}{hint}")
        return value

    def _words(self, doc: Doc, opts: Any, path: tuple) -> tuple[str, ...]:
        if not isinstance(opts, list) or not opts:
            raise doc.error(path, f"expected a non-empty list, got {_describe(opts)}")
        words = tuple(self._word(doc, v, path + (i,)) for i, v in enumerate(opts))
        for i, w in enumerate(words):
            if w in words[:i]:
                raise doc.error(path + (i,), f"expected each word once, got {w!r} twice")
        return words

    def validate(self, doc: Doc, value: Any, path: tuple) -> ParamValue:
        """Check a bank value and turn it into a ParamValue."""
        if isinstance(value, dict):
            if set(value) != {"choices"}:
                raise doc.error(
                    path,
                    "expected a word, a list of words or {choices: [...]}, "
                    "got a mapping with keys " + ", ".join(sorted(map(str, value))),
                )
            return Choices(self._words(doc, value["choices"], path + ("choices",)))
        if isinstance(value, list):
            if not self.many:
                raise doc.error(
                    path, f"expected one word ({self.expected()}) or {{choices: [...]}}, got a list"
                )
            return Pinned(self._words(doc, value, path))
        word = self._word(doc, value, path)
        return Pinned((word,) if self.many else word)


@dataclass(frozen=True)
class TextParam:
    """Text the bank writes (markup: plain text with ``$math$``), one string or, with
    ``many``, a non-empty list of them (each once); never drawn. Each text is at most
    ``longest`` characters and its math is safe (``render.markup.math_problems``)."""

    name: str
    default: ParamValue | None
    help: str = ""
    many: bool = False
    longest: int = 400
    most: int = 26

    def expected(self) -> str:
        return "a list of texts" if self.many else "a text"

    def _text(self, doc: Doc, value: Any, path: tuple) -> str:
        if not isinstance(value, str) or not value.strip():
            raise doc.error(path, f"expected a non-empty text, got {_describe(value)}")
        text = " ".join(value.split())
        if len(text) > self.longest:
            raise doc.error(path, f"expected at most {self.longest} characters, got {len(text)}")
        for is_math, part in split_markup(text):
            problems = math_problems(part) if is_math else []
            if problems:
                raise doc.error(path, f"expected safe math, got {problems[0]} in ${part}$")
        return text

    def validate(self, doc: Doc, value: Any, path: tuple) -> ParamValue:
        if not self.many:
            return Pinned(self._text(doc, value, path))
        if not isinstance(value, list) or not value:
            raise doc.error(path, f"expected a non-empty list of texts, got {_describe(value)}")
        if len(value) > self.most:
            raise doc.error(path, f"expected at most {self.most} texts, got {len(value)}")
        texts = tuple(self._text(doc, v, path + (i,)) for i, v in enumerate(value))
        for i, t in enumerate(texts):
            if t in texts[:i]:
                raise doc.error(path + (i,), f"expected each text once, got {t!r} twice")
        return Pinned(texts)


Param = IntParam | BoolParam | MatrixParam | OptionParam | TextParam


@dataclass(frozen=True)
class Carry:
    """One carried-forward step a family states: how answer ``answer`` is recomputed from the
    student's earlier answers, so that one slip costs marks once.

    ``inputs`` are read from the student's answers where the variant asks them, else from
    the given values (lab3's V); at least one must be an answer. ``steps`` are applied in
    order, the first to all inputs, the rest to its result (the grader's vocabulary:
    ``matmul``, ``matmul_t``, ``scale``, ``mask``, ``softmax``, ``times``, ``shape``,
    ``compare_top``). ``args`` name the given value each step argument reads, ``fixed``
    gives constant arguments. The step applies only to variants whose given ``when`` is true
    and ``unless`` is false. Several steps for one answer: the first that applies is used.

    For example, heads states that the concatenated width is h times the student's own
    d_k: ``Carry("concat_width", ("d_k",), ("times",), args=(("factor", "h"),))``.
    """

    answer: str
    inputs: tuple[str, ...]
    steps: tuple[str, ...]
    args: tuple[tuple[str, str], ...] = ()
    fixed: tuple[tuple[str, Any], ...] = ()
    when: str = ""
    unless: str = ""

    def resolve(self, given: Mapping[str, Any], asked: Sequence[str]) -> dict[str, Any] | None:
        """This step as key.json states it for one variant (None where it does not apply)."""
        if (self.when and not given.get(self.when)) or (self.unless and given.get(self.unless)):
            return None
        if self.answer not in asked or not any(n in asked for n in self.inputs):
            return None
        if any(n not in asked and given.get(n) is None for n in self.inputs):
            return None
        if any(given.get(g) is None for _, g in self.args):
            return None
        args = {k: given[g] for k, g in self.args}
        args.update((k, list(v) if isinstance(v, tuple) else v) for k, v in self.fixed)
        return {
            "answer": self.answer,
            "from": list(self.inputs),
            "steps": list(self.steps),
            "args": args,
        }


def param_text(value: ParamValue | None) -> str:
    """A parameter value as it would be written in a bank."""
    if value is None:
        return "(none)"
    if isinstance(value, Pinned):
        v = value.value
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, tuple):
            return (
                "["
                + ", ".join(
                    "[" + ", ".join(map(str, r)) + "]" if isinstance(r, tuple) else str(r)
                    for r in v
                )
                + "]"
            )
        return str(v)
    if isinstance(value, IntRange):
        return f"{{min: {value.lo}, max: {value.hi}}}"
    return "{choices: [" + ", ".join(param_text(Pinned(v)) for v in value.values) + "]}"


def param_kind(p: Param) -> str:
    """What a parameter accepts, for listings."""
    if isinstance(p, IntParam):
        return f"integer {p.lo}..{p.hi}"
    if isinstance(p, BoolParam):
        return "true/false"
    if isinstance(p, OptionParam):
        return (
            ("a word or a list of words" if p.many else "a word") + " from: " + ", ".join(p.options)
        )
    if isinstance(p, TextParam):
        return p.expected()
    return f"matrix ({p.min_dim}..{p.max_dim} rows and columns)"


def pick(value: ParamValue, rng: np.random.Generator) -> Any:
    """Draw (or read) a parameter value with the question's generator."""
    if isinstance(value, Pinned):
        return value.value
    if isinstance(value, IntRange):
        return int(rng.integers(value.lo, value.hi + 1))
    return value.values[int(rng.integers(len(value.values)))]


def int_matrix(rng: np.random.Generator, rows: int, cols: int, lo: int, hi: int) -> list[list[int]]:
    """A rows x cols matrix of integers drawn uniformly from lo..hi."""
    return rng.integers(lo, hi + 1, size=(rows, cols)).tolist()


def as_rows(m: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """A pinned (tuple) matrix as JSON lists, keeping ints as ints."""
    return [[int(x) if isinstance(x, float) and x.is_integer() else x for x in r] for r in m]


def cross_check(item: str, name: str, exact_vals: Any, floats: Any, tol: float = 1e-9) -> None:
    """Stop the build if the exact values and the NumPy floats disagree (a bug, never input)."""
    a = np.asarray(exact_vals, dtype=object)
    b = np.asarray(floats, dtype=float)
    if a.shape != b.shape:
        raise SolveError(
            f"exact and float {name} differ in shape {a.shape} != {b.shape}", field=item
        )
    for k, (x, y) in enumerate(zip(a.ravel().tolist(), b.ravel().tolist(), strict=True)):
        xf = float("-inf") if x == "-inf" else float(x)
        if xf == y:
            continue
        if not (math.isfinite(xf) and math.isfinite(y) and abs(xf - y) <= tol * max(1.0, abs(y))):
            at = [int(i) for i in np.unravel_index(k, a.shape)]
            raise SolveError(f"exact and float {name}{at} disagree: {x} vs {y}", field=item)


class Redraw(Exception):
    """Raised when values just drawn cannot make a question (h does not divide d), with
    the message to report should no try succeed (``could not draw ...``).

    Raised by ``draw`` itself, it makes the draw stage draw the whole variant again from
    the same generator, up to the family's ``redraws`` times. A family that draws some
    values once and redraws only the rest (the sizes once, then matrices until their
    scores differ) hands the rest to ``redrawn``, which raises nothing but DrawError."""


_T = TypeVar("_T")


def redrawn(part: Callable[[], _T], tries: int) -> _T:
    """The one redraw policy: call ``part`` until it does not raise ``Redraw``, at most
    ``tries`` times, each try reading on from the same generator; then its message is a
    DrawError (the draw stage adds which question it was)."""
    refused = Redraw("could not draw the values")
    for _ in range(tries):
        try:
            return part()
        except Redraw as exc:
            refused = exc
    raise DrawError(str(refused))


class Family:
    """Base class of question families: what a family declares and the hooks it may
    override, each with the default a family gets when it does not (see the module's
    docstring for the order in which to write them)."""

    #: what a bank writes as ``family:`` (lower case, words joined by ``-``)
    name: ClassVar[str]
    #: the question's default heading on the sheet and key
    title: ClassVar[str]
    #: one line for ``worksheetgen families``
    summary: ClassVar[str] = ""
    #: the parameters a bank may set, in the order ``worksheetgen families`` lists them
    params: ClassVar[tuple[Param, ...]] = ()
    #: the default prompt: a Jinja template (run in the sandbox) of markup with $math$; it
    #: sees the given values and ``prompt_context``; a bank's ``prompt`` replaces it
    prompt: ClassVar[str] = ""
    #: True when a bank may ask the question as ``format: choice`` (distractors = slips)
    supports_choice: ClassVar[bool] = False
    #: a true/false parameter that asks the family's own pick-one form (options of its
    #: own, not slips): ``format: choice`` sets it true (concept: ``multiple_choice``)
    choice_param: ClassVar[str | None] = None
    #: true/false parameters one of which must be true for any slip to show, else multiple
    #: choice has no distractors (cross: the numbers; projections: the scale or later steps)
    choice_needs: ClassVar[tuple[str, ...]] = ()
    #: the slips (``attention.slips`` names) its questions can suffer from; ``slips_for``
    #: narrows them per variant, ``fingerprint`` and ``evaluate`` say what each changes
    slips: ClassVar[tuple[str, ...]] = ()
    #: the display kinds (``model.Shown.kind``) its given values may be shown in: a
    #: document's preamble loads what each needs (``templates/latex/shown/<kind>.preamble
    #: .tex.j2``) from the bank alone, before any sheet is drawn; see ``model.BLOCK_KINDS``
    display_kinds: ClassVar[tuple[DisplayKind, ...]] = ("matrix", "vector", "scalar")
    #: the names of every answer its parts may ask, in any variant (``model.Part.answer``,
    #: ``model.Answer.name``): checked when the class is defined against ``target``,
    #: ``carries`` and the answer names its parts write as literals, and at
    #: build time against each variant's parts, so a typo fails on one line naming it
    answers: ClassVar[tuple[str, ...]] = ()
    #: (matrix, dimension of its rows, of its columns) for the matrices a bank may pin: a
    #: dimension the bank also sets must agree with the pinned matrix's shape
    layout: ClassVar[tuple[tuple[str, str, str], ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Check a family's declarations when its class is defined: a typo in an answer name
        or a display kind fails at import, on one line naming the family."""
        super().__init_subclass__(**kwargs)
        problems = definition_problems(cls)
        if problems:
            raise TypeError(problems[0])

    def validate(self, raw: Mapping[str, Any], doc: Doc, path: tuple) -> dict[str, ParamValue]:
        """Check the bank's ``params`` mapping; fill defaults; cross-field checks in ``check``."""

        known = {p.name: p for p in self.params}
        out: dict[str, ParamValue] = {}
        for key, value in raw.items():
            if key not in known:
                raise doc.error(
                    path + (key,),
                    f"unknown parameter{did_you_mean(str(key), known)}"
                    f" for family '{self.name}'; expected one of: " + ", ".join(known),
                )
            out[key] = known[key].validate(doc, value, path + (key,))
        for p in self.params:
            if p.name not in out and p.default is not None:
                out[p.name] = p.default
        ranges = order_problems(out, range_pairs(p.name for p in self.params), map(str, raw))
        for field, message in ranges + self.check(out):
            if field in raw:
                raise doc.error(path + (field,), message)
            # the value at fault is a default the bank never wrote: say so
            raise doc.error(path, f"{message} ({field} is the default, not set here)")
        if self.layout:
            dims, _ = shape_dims(out, self.layout)
            for field, message in explicit_dim_problems(map(str, raw), out, dims):
                raise doc.error(path + (field,), message)
        return out

    def check(self, params: dict[str, ParamValue]) -> list[tuple[str, str]]:
        """Cross-field problems as (field, message) pairs; none by default."""
        return []

    def prompt_context(self, given: dict[str, Any]) -> dict[str, Any]:
        """Variables a prompt sees besides the given values (none by default)."""
        return {}

    #: how many times the draw stage draws again when ``draw`` raises ``Redraw``
    redraws: ClassVar[int] = 100

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        """The given values of one variant (JSON-able: ints, bools, lists of rows), drawn
        with ``pick`` and ``rng`` only. Values that cannot make a question raise ``Redraw``
        (the draw stage's one redraw policy draws again); a bank that can never give one
        raises DrawError. ``solve.draw`` also redraws a variant whose slips cannot be told
        apart, so ``draw`` need not check that."""
        raise NotImplementedError

    def solve(self, given: dict[str, Any], decimals: int, item: str) -> Solution:
        """Exact answers, printed answers and worked steps for one variant."""
        raise NotImplementedError

    #: answers a misconception changes, compared and fingerprinted (in this order)
    fingerprint: ClassVar[tuple[str, ...]] = ()
    #: the one answer a multiple-choice item asks for and slips must differ in
    #: (None: the last fingerprint name); see worksheetgen.attention.slips
    target: ClassVar[str | None] = None

    #: how later answers follow from earlier ones (carried-forward credit); key.json writes
    #: each variant's steps, see ``carries_for``
    carries: ClassVar[tuple[Carry, ...]] = ()

    def carries_for(self, given: Mapping[str, Any], asked: Sequence[str]) -> list[dict[str, Any]]:
        """The carried-forward steps of one variant whose parts ask ``asked`` (key.json's
        ``carries``)."""
        out = (c.resolve(given, asked) for c in self.carries)
        return [c for c in out if c is not None]

    def slips_for(self, given: dict[str, Any]) -> tuple[str, ...]:
        """The slips that apply to this variant (a subset of ``slips``).

        A family whose variants differ in which steps they ask (no scale step, no mask, no
        numeric part, or ``no-transpose`` where Q·K is undefined for the shapes) narrows
        ``slips`` here, so a slip is never reported for a step the variant does not have.
        The default is every declared slip.
        """
        return self.slips

    def target_for(self, given: dict[str, Any]) -> str | None:
        """The answer a multiple-choice item of this variant asks for and every slip must
        change. Families whose variants ask different last steps override it; the default
        is ``target`` if set, else the last ``fingerprint`` name (None without one)."""
        if self.target:
            return self.target
        return self.fingerprint[-1] if self.fingerprint else None

    def operands(self, given: dict[str, Any]) -> dict[str, Any]:
        """The given values with the Q, K and V the slips act on (``Misconception.applies``
        reads them). A family that asks for Q, K, V instead of giving them (projections:
        Q = XW_Q) returns them here; the default is the given values themselves."""
        return given

    def shows_in(self, given: dict[str, Any]) -> tuple[str, ...]:
        """The answers in which a slip may show, when the target alone cannot tell every
        slip apart (multihead with d_v given: ``dk-equals-d`` changes d_k, not W_O).
        Distinguishability then asks a difference in one of them; the default, none, asks
        it in the target."""
        return ()

    def margin_also(self, given: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(answers, slips): further answers besides the target in which the draw checks
        that those slips' rounded chains cannot pass for right (spot-the-bug: the A the
        student corrects, for the planted slip). The default adds none."""
        return (), ()

    def chain_args(self, given: dict[str, Any]) -> dict[str, Any] | None:
        """The ``attention.attend`` arguments of this variant's calculation (Q, K, V or S,
        d_k, causal), or None when it has no attention tables to round step by step."""
        return None

    def rounded(
        self, given: dict[str, Any], recipe: Recipe, decimals: int
    ) -> tuple[dict[str, Any], ...]:
        """The fingerprinted tables as a student who makes ``recipe``'s slip and rounds
        every step to ``decimals`` would write them (floats; see
        ``attention.rounding_chains``). None of them may pass for the right answer."""
        args = self.chain_args(given)
        if args is None:
            return ()

        return tuple(
            {k: v.tolist() for k, v in chain.items()}
            for chain in rounding_chains(decimals, recipe=recipe, **args)
        )

    def chain_reach(self, given: dict[str, Any], name: str, decimals: int) -> float:
        """How far (at most, in any entry) a table of ``rounded`` lies from the same slip's
        exact table: the draw skips the chains of a slip that is farther from the right
        answer than that plus the margin (they could not pass for right).

        A softmax input moved by at most half a unit h moves each weight by a factor
        within e^(±2h), so by at most e^(2h) − 1 (and never by more than 1), plus h for
        rounding A; the output moves by that times the largest column sum of |V| (or of
        |K|, which mixed-keys mixes); a scaled or masked table moves by h.
        """
        args = self.chain_args(given)
        if args is None:
            return 0.0
        h = half_unit(decimals)
        weights = min(1.0, math.expm1(2 * h)) + h
        if name == "A":
            return weights
        if name == "output":
            sums = [
                sum(abs(x) for x in col)
                for m in (args.get("V"), args.get("K"))
                if m is not None
                for col in zip(*m, strict=True)
            ]
            return weights * max(sums, default=0.0) + h
        return h

    def evaluate(self, given: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
        """The exact values of the fingerprinted answers when computed by ``recipe``.

        Values are an exact matrix (list of rows of ``Ex``), a list of ``Ex``, an int or a
        tuple shape. ``solve`` uses the correct recipe; a misconception flips one switch.
        """
        raise NotImplementedError


def _listed(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "(none)"


def definition_problems(cls: type[Family], *, parts: bool | None = None) -> list[str]:
    """What is wrong with a family class's declarations, one line each naming the family
    (none for a class without a ``name``: a base other families extend).

    Checked: ``name`` is a non-empty string; every ``display_kinds`` entry is a display kind
    (``model.DISPLAY_KINDS``); ``answers`` is declared, each name once; ``target`` and
    each ``Carry``'s answer (and at least one of its inputs) name declared answers; and,
    with ``parts``, every answer name a ``Part(...)`` in the class's own
    source writes as a literal is declared. ``parts`` defaults to True for a family outside
    worksheetgen (a plugin: one module read, once); worksheetgen's own families are read by
    the tests (``tests/unit/families/test_family_definitions.py``), which keeps a build's
    start-up from parsing every bundled module.
    """
    if "name" not in vars(cls) and not hasattr(cls, "name"):
        return []
    where = cls.__qualname__  # short: a plugin's import error says the module, within 200
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        return [f"family {cls.__module__}.{where}: name: expected a non-empty string, got {name!r}"]
    at = f"family {name!r} ({where})"
    out = [
        f"{at}: display_kinds: expected one of {_listed(DISPLAY_KINDS)}, got {kind!r}"
        f"{did_you_mean(str(kind), DISPLAY_KINDS)}"
        for kind in cls.display_kinds
        if kind not in DISPLAY_KINDS
    ]
    declared = cls.answers
    if not declared:
        return [*out, f"{at}: answers: expected the names of the answers its parts ask, got none"]
    out += [
        f"{at}: answers: expected each name once, got {n!r} twice"
        for i, n in enumerate(declared)
        if n in declared[:i]
    ]

    def unknown(field: str, got: str) -> str:
        return (
            f"{at}: {field}: expected an answer the family declares ({_listed(declared)}), "
            f"got {got!r}{did_you_mean(got, declared)}"
        )

    if cls.target is not None and cls.target not in declared:
        out.append(unknown("target", cls.target))
    for carry in cls.carries:
        if carry.answer not in declared:
            out.append(unknown("carries", carry.answer))
        elif not any(n in declared for n in carry.inputs):
            out.append(
                f"{at}: carries: expected the step for {carry.answer!r} to read at least one "
                f"declared answer, got only {_listed(carry.inputs)}"
            )
    if parts is None:
        parts = not cls.__module__.startswith("worksheetgen.")
    if parts:
        for prompt, answer in literal_parts(cls):
            if answer not in declared:
                out.append(
                    f'{at}: part "{prompt}" asks for answer {answer!r}; expected one the family '
                    f"declares ({_listed(declared)}){did_you_mean(answer, declared)}"
                )
    return out


def literal_parts(cls: type) -> list[tuple[str, str]]:
    """(prompt, answer name) of every ``Part(prompt, "name")`` the source of the class and of
    the classes it extends (but ``Family``) writes with a literal name (a prompt that is not
    a literal is shown as written, shortened); none from a class whose source cannot be read
    (one made in a REPL)."""
    import ast  # waits: only a plugin's definition and the tests read a family's source
    import inspect  # waits: as ast

    found: list[ast.ClassDef] = []
    for klass in cls.__mro__:
        if klass in (Family, object):
            continue
        try:
            source = inspect.getsource(inspect.getmodule(klass) or klass)
        except (OSError, TypeError):
            continue
        found += [
            n
            for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.ClassDef) and n.name == klass.__name__
        ]
    out = []
    for node in (n for c in found for n in ast.walk(c)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if called != "Part":
            continue
        given: dict[str | None, ast.expr] = dict(zip(("prompt", "answer"), node.args, strict=False))
        given.update((k.arg, k.value) for k in node.keywords)
        prompt, answer = given.get("prompt"), given.get("answer")
        if not (isinstance(answer, ast.Constant) and isinstance(answer.value, str)):
            continue
        if prompt is None:
            continue
        if isinstance(prompt, ast.Constant) and isinstance(prompt.value, str):
            text = prompt.value
        elif isinstance(prompt, ast.JoinedStr):  # an f-string: its text, {…} where it varies
            text = "".join(
                str(v.value)
                if isinstance(v, ast.Constant)
                else "{" + ast.unparse(getattr(v, "value", v)) + "}"
                for v in prompt.values
            )
        else:
            text = ast.unparse(prompt)
        out.append((text if len(text) <= 40 else text[:37] + "...", answer.value))
    return out
