"""Frozen dataclasses passed between the pipeline's stages.

bank -> QuestionSpec; draw -> given parameters (from a sheet's SheetIdentity: seed, sheet id,
course secret); solve -> Solution; the pipeline assembles Items into a Sheet, and Sheets into
a Build that every renderer and exporter reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from worksheetgen.textrules import is_decimal

AnswerKind = Literal["matrix", "vector", "scalar", "shape", "text", "choice", "heatmap"]

#: How a given value is displayed in a question (``Shown.kind``), every kind there is:
#:
#: - ``matrix``: a list of rows of printed entries, inline in the question's math display;
#: - ``vector``: a list of printed entries, inline;
#: - ``scalar``: one printed string, inline;
#: - ``heatmap``: a block of its own (``BLOCK_KINDS``): a mapping with the rows of printed
#:   weights, the weights, and the row and column labels (``templates/*/shown/heatmap.*``).
#:
#: Each kind is drawn by the ``show(g)`` macro of its partial,
#: ``templates/latex/shown/<kind>.tex.j2`` and ``templates/markdown/shown/<kind>.md.j2``. A
#: family lists the kinds it shows in ``Family.display_kinds`` (checked against this list
#: when the family is defined); a new kind is a line here, a partial per format, a
#: ``BLOCK_KINDS`` line when it is a block and an HTML renderer in ``export.html.BLOCKS``.
DisplayKind = Literal["matrix", "vector", "scalar", "heatmap"]
DISPLAY_KINDS: tuple[DisplayKind, ...] = get_args(DisplayKind)


@dataclass(frozen=True)
class Pinned:
    """A parameter fixed by the bank."""

    value: Any


@dataclass(frozen=True)
class IntRange:
    """Draw an integer uniformly from lo..hi inclusive."""

    lo: int
    hi: int


@dataclass(frozen=True)
class Choices:
    """Draw one of these values uniformly."""

    values: tuple[Any, ...]


ParamValue = Pinned | IntRange | Choices


@dataclass(frozen=True)
class Location:
    """Where something was written: file and 1-based line."""

    file: str
    line: int | None = None


#: the styles of room to work: empty, ruled lines, a squared grid
SPACE_STYLES = ("blank", "lines", "grid")
#: millimetres in one unit a height of room to work may be given in
SPACE_UNITS = {"mm": 1.0, "cm": 10.0, "in": 25.4}
#: the text height of the printed page per paper size (2 cm margins,
#: templates/latex/base.tex.j2): no room to work can be taller
TEXT_HEIGHTS_MM = {"a4": 257.0, "letter": 239.4}
#: the tallest room to work any paper can print: a bank is checked against it when loaded,
#: and against its paper's (``TEXT_HEIGHTS_MM``) when built
TEXT_HEIGHT_MM = max(TEXT_HEIGHTS_MM.values())


@dataclass(frozen=True)
class Space:
    """Room to work under a question on the sheet: a height as written (``6cm``, ``60mm``,
    ``2.5in``; TeX reads it as it is) and a style. No height: no room (``space: none``)."""

    height: str = ""
    style: str = "blank"

    def __str__(self) -> str:
        """As ``worksheetgen config`` prints it: "6cm lines", "none"."""
        return f"{self.height} {self.style}" if self.height else "none"

    @property
    def mm(self) -> float:
        """The height in millimetres (0 for no room)."""
        if not self.height:
            return 0.0
        number, unit = self.height[:-2], self.height[-2:]
        return float(number) * SPACE_UNITS[unit]

    @classmethod
    def parse(cls, value: Any) -> Space:
        """A ``space`` setting as a bank or worksheetgen.toml writes it: ``none``, a height
        (``6cm``: blank) or a mapping ``{height: 6cm, style: lines}``; ValueError (saying
        what was expected and what came) for anything else."""
        if value == "none":
            return cls()
        style = "blank"
        if isinstance(value, dict):
            unknown = [k for k in value if k not in ("height", "style")]
            if unknown:
                raise ValueError(f"expected height and style, got {unknown[0]!r}")
            style = value.get("style", "blank")
            if style not in SPACE_STYLES:
                raise ValueError(f"expected a style of {', '.join(SPACE_STYLES)}, got {style!r}")
            if "height" not in value:
                raise ValueError("expected a height (6cm, 60mm, 2.5in), got none")
            value = value["height"]
        text = str(value).replace(" ", "") if isinstance(value, str) else None
        unit = text[-2:] if text else ""
        number = text[:-2] if text else ""
        # the one rule for numbers: ASCII digits (TeX reads no other, and float() would
        # take Arabic-Indic or full-width ones and refuse superscripts in Python's words)
        if text is None or unit not in SPACE_UNITS or not is_decimal(number):
            other = isinstance(value, str) and any(c.isdigit() and not c.isascii() for c in value)
            raise ValueError(
                f"expected none, a height such as 6cm, 60mm or 2.5in, or {{height: 6cm, "
                f"style: lines}}, got {value!r}" + (" (write the digits 0-9)" if other else "")
            )
        space = cls(text, style)
        if space.mm == 0:
            raise ValueError(f"expected a height above 0 (or none), got {value!r}")
        if space.mm > TEXT_HEIGHT_MM:
            raise ValueError(
                f"expected a height that fits on a page (at most {TEXT_HEIGHT_MM:g}mm, the "
                f"text height), got {value!r}"
            )
        return space


#: the room a quiz gives a computation question by default
QUIZ_SPACE = Space("5cm", "lines")


@dataclass(frozen=True)
class QuestionSpec:
    """One validated bank item: which family, how many points, which parameters."""

    id: str
    family: str
    points: float
    decimals: int
    params: dict[str, ParamValue]
    prompt: str | None = None
    format: Literal["open", "choice"] = "open"
    title: str | None = None
    location: Location = field(default_factory=lambda: Location("<memory>"))
    param_lines: dict[str, int] = field(default_factory=dict)
    prompt_line: int | None = None
    #: per-part points, when the bank gives them: (answer name, points) for every part, in
    #: part order, adding up to ``points``; empty when ``points`` is split equally
    part_points: tuple[tuple[str, float], ...] = ()
    #: room to work under the question (its own or its bank file's ``sheet: space``); None
    #: when neither says, so the course's default or a quiz's applies
    space: Space | None = None
    #: whether grading credits error carried forward in this question (its own ``carry``,
    #: else its bank file's ``sheet: carry``, else the course's); None: not said (true)
    carry: bool | None = None


@dataclass(frozen=True)
class SheetInfo:
    """The header of a worksheet: where the banks say what the sheet is."""

    slug: str
    title: str
    course: str = ""
    instructions: str = ""
    decimals: int = 2
    #: the instructions as written, when they say ``{{ places }}`` or ``{{ decimals }}``
    #: (``instructions`` is then that text for ``decimals``; --decimals renders it again)
    instructions_template: str = ""
    #: ``worksheet`` or ``quiz`` (a quiz gives computation questions room to work); "" when
    #: no bank says, so worksheetgen.toml's ``kind`` applies (else a worksheet)
    kind: str = ""
    #: the room to work of a question whose bank says none (worksheetgen.toml's ``space``)
    space: Space | None = None
    #: the bank's ``sheet: shuffle:``: each sheet prints its questions in its own order
    shuffle: bool = False


@dataclass(frozen=True)
class BankFile:
    """A bank file read for a build, with its content hash for the manifest."""

    path: str
    sha256: str


@dataclass(frozen=True)
class Pool:
    """A slot of the sheet filled from alternatives: each sheet gets ``pick`` of them."""

    id: str
    pick: int
    alternatives: tuple[str, ...]  # question ids, in the order the bank names them
    location: Location = field(default_factory=lambda: Location("<memory>"))


@dataclass(frozen=True)
class Bank:
    """The validated questions of one or more bank files."""

    info: SheetInfo
    questions: tuple[QuestionSpec, ...]  # every question, pools' alternatives too
    files: tuple[BankFile, ...]
    #: the sheet's entries in order when the banks have pools: the id of a question placed
    #: on its own, or a Pool; empty: every question once, in order
    layout: tuple[str | Pool, ...] = ()


@dataclass(frozen=True)
class Answer:
    """One answer a student gives: exact strings, floats and the strings printed in the key.

    ``value`` holds floats (lists of rows for matrices, ``"-inf"`` for masked cells),
    ``exact`` SymPy-parsable strings of the same shape, ``rounded`` the printed strings.
    """

    name: str
    label: str
    kind: AnswerKind
    value: Any
    rounded: Any
    exact: Any = None
    tolerance: float | None = None
    options: tuple[str, ...] = ()
    explanation: str = ""
    #: a mark-all-that-apply choice scored all or nothing (else each option earns or costs
    #: its share, as Moodle scores a multi-answer question)
    all_or_nothing: bool = False

    @property
    def multi(self) -> bool:
        """True for a choice with a set of right options (mark all that apply)."""
        return self.kind == "choice" and isinstance(self.value, list | tuple)

    @property
    def right(self) -> tuple[str, ...]:
        """A choice's right options: the one of a pick-one, every one of a mark-all."""
        if self.kind != "choice":
            return ()
        return tuple(self.value) if self.multi else (self.value,)


#: Display kinds shown as a block of their own after a question's math display, with about
#: how many lines of a page each takes. Every other kind (matrix, vector, scalar) is shown
#: inline, side by side in the one display as ``label = value``. Each kind is drawn by the
#: ``show(g)`` macro of its template partial, ``templates/latex/shown/<kind>.tex.j2`` and
#: ``templates/markdown/shown/<kind>.md.j2`` (a template folder of one's own may replace
#: one); ``shown/<kind>.preamble.tex.j2``, where it exists, loads what the kind needs (TikZ).
BLOCK_KINDS: dict[DisplayKind, int] = {"heatmap": 10}


@dataclass(frozen=True)
class Shown:
    """A given value displayed in the question: a LaTeX label, its display kind and the
    printed entries (a list of rows for a matrix, a list for a vector, a string for a
    scalar; a block kind's partial says what it reads, see ``BLOCK_KINDS``)."""

    label: str
    kind: DisplayKind
    value: Any

    @property
    def inline(self) -> bool:
        """True when the value sits in the question's math display, False for a block."""
        return self.kind not in BLOCK_KINDS

    @property
    def lines(self) -> int:
        """About how many lines of a page the value takes (a matrix: its rows)."""
        if not self.inline:
            return BLOCK_KINDS[self.kind]
        return len(self.value) if self.kind == "matrix" and isinstance(self.value, list) else 1


@dataclass(frozen=True)
class Step:
    """One worked step of the key: a short title and a LaTeX display (math mode)."""

    title: str
    math: str = ""
    text: str = ""


@dataclass(frozen=True)
class Part:
    """One thing the student writes: a sub-prompt (markup) and the answer it asks for."""

    prompt: str
    answer: str
    row_label: str = "query"
    col_label: str = "key"


@dataclass(frozen=True)
class Distractor:
    """What one named misconception would produce for this variant."""

    misconception: str
    description: str
    answer: dict[str, Any]
    rounded: dict[str, Any]


@dataclass(frozen=True)
class Choice:
    """One option of a multiple-choice item, in display order."""

    label: str
    text: str
    correct: bool
    misconception: str | None = None
    rounded: Any = None


@dataclass(frozen=True)
class Coincidence:
    """A slip left out of the distractors because it cannot be told apart here.

    ``same_as`` is ``"correct"`` (the slip gives the right answer on this variant, for example
    scale-by-dk when d_k = 1) or the name of the slip it coincides with. ``margin`` is set when
    the slip's printed answer differs from the right one but lies within the margin the key
    accepts for it.
    """

    misconception: str
    description: str
    same_as: str
    margin: float | None = None


@dataclass(frozen=True)
class Solution:
    """Everything a family computes for one variant."""

    shown: tuple[Shown, ...]
    parts: tuple[Part, ...]
    answers: tuple[Answer, ...]
    steps: tuple[Step, ...]
    distractors: tuple[Distractor, ...] = ()
    choices: tuple[Choice, ...] = ()
    choice_answer: str | None = None
    #: slips left out of the distractors because they coincide on a pinned variant
    coincident: tuple[Coincidence, ...] = ()
    #: the answers the key's fingerprint table shows for each slip
    fingerprint_shown: tuple[str, ...] = ()
    #: a worked solution printed in the question itself (spot-the-bug)
    shown_steps: tuple[Step, ...] = ()

    def answer(self, name: str) -> Answer:
        """The answer called ``name``."""
        for a in self.answers:
            if a.name == name:
                return a
        raise KeyError(name)


@dataclass(frozen=True)
class Item:
    """A drawn and solved question on one sheet."""

    number: int
    spec: QuestionSpec
    given: dict[str, Any]
    prompt: str
    solution: Solution
    #: its heading, as the sheet prints it: the bank's title or the family's
    title: str
    #: how its later answers follow from earlier ones in this variant: the family's
    #: carried-forward steps, as key.json states them (``Family.carries_for``)
    carries: tuple[dict[str, Any], ...]
    slot: str | None = None  # the pool the question was drawn from (None: placed on its own)


@dataclass(frozen=True)
class Student:
    """A roster entry."""

    name: str
    id: str
    #: the roster's large-print column: this student's sheet and key in large print (PDF
    #: and HTML)
    large_print: bool = False


@dataclass(frozen=True)
class SheetIdentity:
    """What a sheet's draws follow from, as one value: the build's seed, the sheet's id (a
    student's id, a version's letter, a lone sheet's slug) and the course secret (never
    printed)."""

    seed: int
    sheet: str
    secret: bytes | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Sheet:
    """One student's (or one version's) worksheet: the object both sheet and key render."""

    id: str
    label: str
    student: Student | None
    items: tuple[Item, ...]
    code: str = ""  # the short sheet code printed instead of the seed (solve/rng.py)


@dataclass(frozen=True)
class Build:
    """A whole build: sheet header, seed, banks and every sheet."""

    info: SheetInfo
    seed: int
    bank: Bank
    sheets: tuple[Sheet, ...]
    # the course secret: enters every draw, is never written (key.json holds its fingerprint)
    secret: bytes | None = field(default=None, repr=False, compare=False)
    paper: str = "a4"  # the paper the LaTeX documents lay out on: a4 or letter
    language: str = "en"  # the fixed words' language (worksheetgen.language.LANGUAGES)
    #: the decimal separator every printed number is written with ("." or ","): the
    #: language's unless the build chose (``--decimal``); key.json says it when it is ","
    decimal: str = "."
    #: a scannable class build's digest of the class (scan.positions.class_digest: what
    #: key.json says of the build and of every sheet's student, in order), which every page
    #: code depends on; empty when the sheets are all in ``sheets`` (it is computed from them)
    scan_class: bytes = field(default=b"", repr=False, compare=False)
    #: every sheet in large print (``--large-print``; a roster may ask it per student)
    large_print: bool = False
    #: a scannable sheet not tied to one student (a lone sheet, a version) photocopied for a
    #: class: this many columns of digit boxes on its first page (``--student-number``), which
    #: ``scan --roster`` matches to the roster; 0: none
    student_number: int = 0
    #: some student's sheet in large print (a roster's large_print column): the combined
    #: LaTeX documents, whose preamble is set before any sheet is drawn, can print it
    large_print_some: bool = False
