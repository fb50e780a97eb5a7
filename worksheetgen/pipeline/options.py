"""The options of a build and what it returns, checked before any work."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worksheetgen.errors import ConfigError, UsageError
from worksheetgen.language import LANGUAGES, SEPARATORS
from worksheetgen.model import Build, Space
from worksheetgen.pipeline.config import SETTINGS
from worksheetgen.pipeline.output import check_out
from worksheetgen.textrules import shown

if TYPE_CHECKING:
    from worksheetgen.pipeline.config import Config

MAX_SEED = 2**63 - 1

#: progress(stage, done, total): stages "sheets", "pdf" (compiling and cutting), "write"
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class BuildOptions:
    """What the user asked for."""

    seed: int
    banks: tuple[str, ...] = ()
    out: str = "output"
    pdf: bool = True
    title: str | None = None
    course: str | None = None  # the course printed above the title (the bank's, by default)
    decimals: int | None = None
    template_dir: str | None = None
    exports: tuple[str, ...] = ()  # LMS formats written beside key.json (moodle, gift, qti)
    roster: str | None = None  # a class roster CSV: one sheet per student
    versions: int | None = None  # or N anonymous versions A, B, C, ...
    secret: bytes | None = field(default=None, repr=False)  # the course secret, never written
    kind: str | None = None  # worksheet or quiz, when the banks do not say (worksheetgen.toml)
    space: Space | None = None  # room to work where the banks give none (worksheetgen.toml)
    shuffle: bool | None = None  # each sheet's questions in its own order (None: the bank's)
    #: carried credit in grading, for the questions whose bank does not say (worksheetgen.toml)
    carry: bool | None = None
    paper: str = "a4"  # the paper size of the PDFs: a4 or letter
    engine: str = "auto"  # the TeX engine: auto (by the text), pdflatex or lualatex
    language: str = "en"  # the fixed words' language: a code of worksheetgen.language.LANGUAGES
    #: the numbers' decimal separator: "point" or "comma" (None: the language's)
    decimal: str | None = None
    #: sheets a scanner reads: corner marks, a page code, boxes to mark, their positions
    scannable: bool = False
    #: with ``scannable``: the boxes on a short answer sheet per sheet (answers.tex), the
    #: sheets booklets without boxes
    answer_sheet: bool = False
    #: with ``scannable``, a lone sheet or versions photocopied for a class: the columns of
    #: the student-number grid on each sheet's first page (0: none)
    student_number: int = 0
    #: every sheet and key in large print (a roster's large_print column: per student)
    large_print: bool = False
    #: a practice page per sheet (practice.html): the answers inside, checked as grade does
    practice: bool = False
    #: write the practice pages even with a course secret (each then says it holds the answers)
    practice_despite_secret: bool = False
    jobs: int | None = None  # processes that draw and render a class's sheets (0: one per

    @classmethod
    def from_config(cls, config: Config, seed: int, **given: Any) -> BuildOptions:
        """The options of a build: every setting of the course configuration that is an
        option (the command line's values already in it, see ``load_config``), the course
        secret, and ``given``: what only a command line or a caller says (pdf, roster,
        versions, exports, template_dir)."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(given) - names)
        if unknown:
            raise UsageError(f"expected options of a build, got {', '.join(unknown)}")
        _check_config_paths(config)
        values: dict[str, Any] = {}
        for name in SETTINGS:
            if name in names:
                value = config.value(name)
                values[name] = bool(value) if isinstance(_DEFAULTS[name], bool) else value
        return cls(seed=seed, **{**values, "secret": config.secret, **given})


def _check_config_paths(config: Config) -> None:
    """The banks and the output folder a configuration file names (not the command line's,
    which are checked as options): a path that cannot be one is one line naming the file's
    line, where the user can mend it, before any work is done."""
    banks, out = config.settings["banks"], config.settings["out"]
    if _from_file(banks.source):
        for bank in banks.value:
            if not Path(bank).exists():
                raise ConfigError(
                    f"{banks.source}: banks: expected a YAML file or a folder of banks, got "
                    f"{shown(str(bank))}, no such file or folder"
                )
    if _from_file(out.source):
        try:
            check_out(out.value)
        except UsageError as exc:
            raise ConfigError(f"{out.source}: out: {exc.message}") from None


def _from_file(source: str) -> bool:
    """Whether a setting came from a configuration file (``file:line``), not an option or
    a default."""
    return source != "default" and not source.startswith("--")


#: each option's default (a flag's is a bool: a setting left unset is False there)
_DEFAULTS = {f.name: f.default for f in fields(BuildOptions) if f.default is not MISSING}


@dataclass(frozen=True)
class BuildResult:
    """Where a build wrote what."""

    folder: Path
    files: tuple[str, ...]
    build: Build = field(repr=False)
    sheet_count: int = 1  # class builds stream their sheets: build.sheets is empty there
    item_count: int | None = None
    details: ClassStats | None = field(default=None, repr=False)  # a class build's counts
    swept: tuple[Path, ...] = ()  # what killed builds had left, removed before this one


@dataclass
class ClassStats:
    """Counts and timings of a class build (for --verbose and the benchmark)."""

    sheets: int = 0
    items: int = 0
    engines: dict[str, str] = field(default_factory=dict)  # combined document -> TeX engine
    forced_engine: str | None = None  # the engine the options name (None: by the text)
    seconds: dict[str, float] = field(default_factory=dict)


PAPERS = ("a4", "letter")
ENGINES = ("auto", "pdflatex", "lualatex")


def check_paper_engine(options: BuildOptions) -> None:
    """The paper size, TeX engine, language and decimal separator must be ones the templates
    and TeX know."""
    if options.paper not in PAPERS:
        raise UsageError(f"--paper: expected one of {', '.join(PAPERS)}, got {options.paper!r}")
    if options.engine not in ENGINES:
        raise UsageError(f"--engine: expected one of {', '.join(ENGINES)}, got {options.engine!r}")
    if options.language not in LANGUAGES:
        raise UsageError(
            f"--language: expected one of {', '.join(LANGUAGES)}, got {options.language!r}"
        )
    if options.decimal is not None and options.decimal not in SEPARATORS:
        raise UsageError(
            f"--decimal: expected one of {', '.join(SEPARATORS)}, got {options.decimal!r}"
        )


def check_answer_sheet(options: BuildOptions) -> None:
    """An answer sheet holds the boxes a scanner reads: it is only made for a scannable
    build."""
    if options.answer_sheet and not options.scannable:
        raise UsageError(
            "--answer-sheet: expected --scannable too (or scannable = true in "
            "worksheetgen.toml: the answer sheet holds the boxes scan reads), got a build "
            "that is not scannable"
        )


#: the most digits a student-number grid has (an ID of more digits than any roster's)
MAX_STUDENT_DIGITS = 12


def check_student_number(options: BuildOptions) -> None:
    """A student-number grid is read by a scanner (a scannable build) and stands for the
    name a roster build prints already: refused without --scannable and with --roster."""
    digits = options.student_number
    if isinstance(digits, bool) or not isinstance(digits, int):
        raise UsageError(f"--student-number: expected a number of digits, got {digits!r}")
    if digits == 0:
        return
    if not 1 <= digits <= MAX_STUDENT_DIGITS:
        raise UsageError(
            f"--student-number: expected 1 to {MAX_STUDENT_DIGITS} digits, got {digits}"
        )
    if not options.scannable:
        raise UsageError(
            "--student-number: expected --scannable too (or scannable = true in "
            "worksheetgen.toml: scan reads the grid), got a build that is not scannable"
        )
    if options.roster is not None:
        raise UsageError(
            "--student-number: expected a lone sheet or --versions N (sheets photocopied for "
            "a class), got --roster, whose sheets name their students already"
        )


def check_large_print(options: BuildOptions, students: int = 0) -> None:
    """A large-print sheet is not scannable: its pages are scaled up as they are shipped,
    and the scanner's marks and boxes are placed for a standard page (``students``: how
    many of a roster's students ask for large print)."""
    if not options.scannable:
        return
    if options.large_print:
        raise UsageError(
            "--large-print: expected a build that is not --scannable (large-print pages "
            "are not read by scan), got both"
        )
    if students:
        raise UsageError(
            f"--scannable: expected no student in large print (large-print pages are not "
            f"read by scan), got {students} with large_print yes in the roster"
        )


def engine_refusal(sample: str, where: str) -> ConfigError:
    """The one line for a forced pdfLaTeX that cannot print some letters of the text."""
    return ConfigError(
        f"engine: expected text pdflatex can print, got letters such as {sample} in {where}; "
        'use --engine lualatex (or engine = "lualatex" or "auto" in worksheetgen.toml)'
    )


def check_seed(seed: int) -> int:
    """A seed must be a non-negative integer that fits in 63 bits."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise UsageError(f"--seed: expected a non-negative integer, got {seed!r}")
    return seed
