"""What a build makes: its sheets in order (one per roster student, or per anonymous version),
each by its identity (``model.SheetIdentity``), and where their files go."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from worksheetgen.bank.roster import file_stems, safe_stem, version_ids
from worksheetgen.errors import UsageError
from worksheetgen.language import gettext
from worksheetgen.model import Bank, Build, Pool, SheetIdentity, Student

__all__ = [
    "MAX_CLASS_ITEMS",
    "MAX_VERSIONS",
    "ClassPlan",
    "Entry",
    "SheetIdentity",
    "plan_roster",
    "plan_sheet",
    "plan_versions",
    "questions_per_sheet",
    "texts_of_bank",
]

MAX_VERSIONS = 702  # A .. ZZ


MAX_CLASS_ITEMS = 40_000  # sheets x questions in one class build (about 3 minutes of drawing)


@dataclass(frozen=True)
class Entry:
    """One sheet of a build: its identity, printed label, student (None for a version), and
    the stem of its file names."""

    identity: SheetIdentity
    label: str
    student: Student | None
    stem: str

    @property
    def id(self) -> str:
        """The sheet's id (its identity's)."""
        return self.identity.sheet


@dataclass(frozen=True)
class ClassPlan:
    """What a build makes: the entries in order and where their files go (a lone sheet is
    a class of one)."""

    entries: tuple[Entry, ...]
    folder_suffix: str
    subfolder: str
    #: for sheets a scanner reads (build --scannable): the build's code and the paper
    scan: tuple[int, str] | None = None
    #: the scanner's boxes on answer sheets of their own (build --answer-sheet): the sheets
    #: are booklets, the answer sheets are the class's answers.tex and what scan reads
    answer_sheet: bool = False
    #: the columns of the student-number grid on each sheet's first page (0: none)
    student_number: int = 0

    @property
    def scannable(self) -> bool:
        return self.scan is not None

    def folder_name(self, build: Build) -> str:
        """The build's folder: the sheet's slug and the seed (and, for a class, what the
        class is: the roster's name, or the versions)."""
        name = f"{build.info.slug}-seed{build.seed}"
        return f"{name}-{self.folder_suffix}" if self.folder_suffix else name


def plan_sheet(slug: str, seed: int, secret: bytes | None = None) -> ClassPlan:
    """A lone sheet: a class of one, seeded by the sheet's slug, its folder named by it."""
    return ClassPlan(
        (Entry(SheetIdentity(seed, slug, secret), gettext("Worksheet"), None, slug),), "", ""
    )


def plan_roster(
    students: Sequence[Student], roster_path: str, seed: int, secret: bytes | None = None
) -> ClassPlan:
    """One sheet per student, seeded by the student's id."""

    stems = file_stems([s.id for s in students])
    entries = tuple(
        Entry(SheetIdentity(seed, s.id, secret), s.name, s, stem)
        for s, stem in zip(students, stems, strict=True)
    )
    return ClassPlan(entries, safe_stem(Path(roster_path).stem), "students")


def plan_versions(count: int, seed: int, secret: bytes | None = None) -> ClassPlan:
    """Anonymous versions A, B, C, ... seeded by their letter."""

    if not 1 <= count <= MAX_VERSIONS:
        raise UsageError(f"--versions: expected a number from 1 to {MAX_VERSIONS}, got {count}")
    ids = version_ids(count)
    return ClassPlan(
        tuple(
            Entry(SheetIdentity(seed, v, secret), gettext("Version {version}", version=v), None, v)
            for v in ids
        ),
        f"versions{count}",
        "versions",
    )


def texts_of_bank(bank: Bank) -> list[str]:
    """The bank's texts that print on every sheet (what the TeX engine is chosen by)."""
    info = bank.info
    texts = [info.title, info.course, info.instructions]
    for q in bank.questions:
        texts += [q.title or "", q.prompt or ""]
    return texts


def questions_per_sheet(bank: Bank) -> int:
    """How many questions each sheet gets: a pool counts its ``pick``, not its alternatives."""
    if not bank.layout:
        return len(bank.questions)
    return sum(e.pick if isinstance(e, Pool) else 1 for e in bank.layout)
