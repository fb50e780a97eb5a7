"""The TA key's worked keys: one per version of each question, not one per sheet.

A class build renders every question of every sheet as its key prints it (the prompt, the
given values, each part's answer, the slips' fingerprints, the carried credit, the worked
solution: the key template's ``worked`` macro). Two sheets share a *version* of a question
when that text is the same, byte for byte: the same pool pick, the same numbers, the same
options in the same order. ``WorkedKeys`` collects the versions as the sheets are drawn and
decides, per question, what the TA key prints after the answer grid:

- ``one``: every sheet has the same version: one worked key;
- ``each``: a few versions, each shared by several sheets (a ``--versions`` build's, or a
  roster's question whose parameters take a few values: at least ``SHARED`` sheets a version
  on average): every version's worked key, numbered, each naming the sheets that have it,
  and the grid names each sheet's version;
- ``example``: (nearly) every sheet has numbers of its own (a roster's default random draw),
  or more than ``MAX_SHOWN`` versions: the grid carries each sheet's answers, and one worked
  key, of the first sheet, shows the method with its numbers. Each sheet's own worked key
  stays in the class's full keys.

So the worked keys grow with the number of questions and of their versions (at most
``MAX_SHOWN`` each), never with the class. Only the first ``MAX_SHOWN + 1`` versions of a
question are kept as text: a class of thousands keeps a digest per sheet and question.

May import: the standard library.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

#: the most versions of one question the TA key prints; past it, one worked example
MAX_SHOWN = 12
#: in a roster build, the sheets a version must have on average for each to be printed: with
#: fewer, (nearly) every student has numbers of their own, the grid carries the marking and
#: the versions' worked keys would be most of the class's keys again
SHARED = 3
#: the longest a sheet's label is printed in a worked key's heading
LABEL_CHARS = 40


@dataclass(frozen=True)
class WorkedPiece:
    """One question of one sheet as the key prints it (after its heading)."""

    qid: str
    title: str
    tex: str
    md: str


@dataclass
class Version:
    """One version of a question: its worked key and the sheets that have it."""

    number: int
    tex: str
    md: str
    sheets: list[tuple[str, str]] = field(default_factory=list)  # (label, sheet code)

    @property
    def label(self) -> str:
        """How the grid and the worked key name it: "v1", "v2", ..."""
        return f"v{self.number}"

    @property
    def first(self) -> tuple[str, str]:
        """The first sheet that has it: its label (a long name shortened, so that the heading
        that names it stays on the page; the grid has it whole) and its code."""
        label, code = self.sheets[0]
        if len(label) > LABEL_CHARS:
            label = label[: LABEL_CHARS - 1].rstrip() + "\u2026"
        return label, code

    @property
    def codes(self) -> str:
        """The codes of the sheets that have it, in roster order."""
        return ", ".join(code for _, code in self.sheets)


@dataclass
class WorkedQuestion:
    """What the TA key prints for one question after the grid."""

    qid: str
    title: str
    sheets: int  # how many sheets have the question
    count: int  # how many versions they have
    mode: str  # one, each or example (see the module docstring)
    shown: list[Version]  # the versions printed (all of them, or the example)

    @property
    def example(self) -> Version:
        """The version printed as the worked example (the first sheet's)."""
        return self.shown[0]


@dataclass
class _Found:
    qid: str
    title: str
    sheets: int = 0
    versions: dict[bytes, Version] = field(default_factory=dict)


class WorkedKeys:
    """Collects each sheet's worked keys, in roster order, and groups them into versions."""

    def __init__(self, versions_build: bool = False) -> None:
        # in a --versions build every sheet is a version the instructor asked for (printed
        # for many students): each is shown, up to MAX_SHOWN, even when no two are alike
        self.versions_build = versions_build
        self._found: dict[str, _Found] = {}
        self._of_sheet: list[dict[str, bytes]] = []  # per sheet: qid -> its version's digest

    def add(self, label: str, code: str, pieces: Sequence[WorkedPiece]) -> None:
        """The next sheet's questions (``label`` and ``code``: the sheet's, as the grid
        prints them)."""
        mine: dict[str, bytes] = {}
        for piece in pieces:
            found = self._found.setdefault(piece.qid, _Found(piece.qid, piece.title))
            found.sheets += 1
            digest = hashlib.blake2b(piece.tex.encode("utf-8"), digest_size=16).digest()
            version = found.versions.get(digest)
            if version is None:
                keep = len(found.versions) <= MAX_SHOWN  # past it only the example prints
                number = len(found.versions) + 1
                version = Version(number, piece.tex if keep else "", piece.md if keep else "")
                found.versions[digest] = version
            version.sheets.append((label, code))
            mine[piece.qid] = digest
        self._of_sheet.append(mine)

    def _mode(self, found: _Found) -> str:
        count = len(found.versions)
        if count == 1:
            return "one"
        if count > MAX_SHOWN:
            return "example"
        if self.versions_build or SHARED * count <= found.sheets:
            return "each"
        return "example"

    def questions(self) -> list[WorkedQuestion]:
        """The worked keys to print, question by question in the order first seen."""
        out = []
        for found in self._found.values():
            mode = self._mode(found)
            versions = list(found.versions.values())
            shown = versions if mode == "each" else versions[:1]
            out.append(
                WorkedQuestion(found.qid, found.title, found.sheets, len(versions), mode, shown)
            )
        return out

    def labels(self) -> list[dict[str, str]]:
        """Per sheet in roster order: question id -> the label of its version, for the
        questions whose versions are each printed (the grid's "key" column)."""
        each = {
            qid: {d: v.label for d, v in found.versions.items()}
            for qid, found in self._found.items()
            if self._mode(found) == "each"
        }
        return [
            {qid: each[qid][d] for qid, d in mine.items() if qid in each} for mine in self._of_sheet
        ]
