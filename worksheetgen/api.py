"""The Python API: what the commands do, as calls that return records and print nothing.

    # imported when called: importing the API loads neither NumPy, SymPy nor Jinja2
    import worksheetgen

    built = worksheetgen.build(42, roster="roster.csv", out="output")
    graded = worksheetgen.grade(built.folder / "key.json", "responses.csv")
    print(graded.result.students[0].total)

Each call reads the course configuration (``worksheetgen.toml``, found as the commands find
it, or ``config=``) and its secret as the command of the same name does; a keyword given
here wins over the configuration, as an option does on the command line. Every failure is a
:class:`~worksheetgen.errors.WorksheetgenError` carrying the one line the command would
print (``str(error)``). The names are imported from ``worksheetgen`` itself, lazily: importing
the package loads neither NumPy nor SymPy.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from worksheetgen.pipeline.check import CheckReport
    from worksheetgen.pipeline.config import Config
    from worksheetgen.pipeline.options import BuildResult
    from worksheetgen.report.grade import GradeRun
    from worksheetgen.scan.write import ScanResult

__all__ = ["build", "check", "export", "grade", "responses_template", "scan"]

PathLike = str | os.PathLike[str]


def _config(config: PathLike | None, given: dict[str, object]) -> Config:
    # imported when called: importing the API loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.pipeline.config import load_config

    return load_config(_path("config", config), given)


def _one_of(name: str, value: object, choices: tuple[object, ...]) -> None:
    """A keyword of a fixed set of values, refused in the commands' words."""
    if value not in choices:
        # imported only when refusing
        from worksheetgen.errors import UsageError

        wanted = ", ".join(str(c) for c in choices)
        raise UsageError(f"{name}: expected one of {wanted}, got {value!r}")


def _count(name: str, value: object, least: int, most: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
        # imported only when refusing
        from worksheetgen.errors import UsageError

        raise UsageError(f"{name}: expected a whole number from {least} to {most}, got {value!r}")


def _path(name: str, value: PathLike | None) -> str | None:
    """A path keyword as the commands take a path: the same limits, refused in one line."""
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        # imported only when refusing
        from worksheetgen.errors import UsageError

        raise UsageError(f"{name}: expected a path, got {type(value).__name__}")
    text = os.fspath(value)
    # imported when called: importing the API loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.textrules import PATH_LIMITS, path_problem

    if "\x00" in text:  # no file system takes it: os.stat would raise ValueError
        # imported only when refusing
        from worksheetgen.errors import UsageError

        raise UsageError(f"{name}: expected a path, got one holding NUL (U+0000)")
    problem = "nothing" if text == "" else path_problem(text)
    if problem is not None:
        # imported only when refusing
        from worksheetgen.errors import UsageError

        raise UsageError(f"{name}: expected a path of {PATH_LIMITS}, got {problem}")
    return text


def _flag(name: str, value: object, unset: bool = False) -> None:
    """A yes-or-no keyword: True or False (``unset``: or None, the configuration's), never a
    value that only looks true ('no' is truthy)."""
    if not (isinstance(value, bool) or (unset and value is None)):
        # imported only when refusing
        from worksheetgen.errors import UsageError

        also = ", or None" if unset else ""
        raise UsageError(f"{name}: expected True or False{also}, got {value!r}")


def _text(name: str, value: object) -> None:
    """A title or course: text (None: the bank's), checked further as the option is."""
    if value is not None and not isinstance(value, str):
        # imported only when refusing
        from worksheetgen.errors import UsageError

        raise UsageError(f"{name}: expected text, got {type(value).__name__}")


def _share(name: str, value: str | Fraction | None) -> Fraction | None:
    """A share from 0 to 1: a Fraction, or a decimal in ASCII digits as the option takes it."""
    if value is None:
        return None
    # imported when called: importing the API loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.textrules import is_decimal

    if isinstance(value, Fraction):
        share: Fraction | None = value
    elif isinstance(value, str) and is_decimal(value.strip(" \t")):
        share = Fraction(value.strip(" \t"))
    else:
        share = None
    if share is None or not 0 <= share <= 1:
        # imported only when refusing
        from worksheetgen.errors import UsageError

        raise UsageError(f"{name}: expected a decimal from 0 to 1, got {value!r}")
    return share


def _paths(name: str, values: PathLike | Sequence[PathLike] | None) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, (str, os.PathLike)):
        values = [values]
    return tuple(_path(name, v) or "" for v in values)


def build(
    seed: int,
    *,
    banks: PathLike | Sequence[PathLike] | None = None,
    out: PathLike | None = None,
    roster: PathLike | None = None,
    versions: int | None = None,
    pdf: bool = True,
    exports: Sequence[str] = (),
    title: str | None = None,
    course: str | None = None,
    decimals: int | None = None,
    paper: Literal["a4", "letter"] | None = None,
    engine: Literal["auto", "pdflatex", "lualatex"] | None = None,
    language: Literal["en", "de"] | None = None,
    decimal: Literal["point", "comma"] | None = None,
    template_dir: PathLike | None = None,
    jobs: int | None = None,
    shuffle: bool | None = None,
    scannable: bool | None = None,
    answer_sheet: bool | None = None,
    student_number: int | None = None,
    large_print: bool | None = None,
    practice: bool = False,
    practice_despite_secret: bool = False,
    config: PathLike | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> BuildResult:
    """``worksheetgen build``: draw the sheets, write sheet, key and key.json (with
    ``roster`` or ``versions``, a whole class) into ``out``; returns where it wrote what
    (``.folder``, ``.files``) and the solved build (``.build``). ``progress(stage, done,
    total)`` is told how far each stage is. ``practice``: a practice page per sheet (the
    answers inside: refused with a course secret unless ``practice_despite_secret``)."""
    # imported when called: importing the API loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.pipeline.build import build as run_build
    from worksheetgen.pipeline.options import BuildOptions

    for name, value, least, most in (
        ("decimals", decimals, 0, 6),
        ("versions", versions, 1, 702),
        ("jobs", jobs, 0, 64),
        ("student_number", student_number, 0, 12),
    ):
        if value is not None:
            _count(name, value, least, most)
    for name, flag, unset in (
        ("pdf", pdf, False),
        ("shuffle", shuffle, True),
        ("scannable", scannable, True),
        ("answer_sheet", answer_sheet, True),
        ("large_print", large_print, True),
        ("practice", practice, False),
        ("practice_despite_secret", practice_despite_secret, False),
    ):
        _flag(name, flag, unset)
    _text("title", title)
    _text("course", course)
    if decimal is not None:
        _one_of("decimal", decimal, ("point", "comma"))
    if progress is not None and not callable(progress):
        # imported only when refusing
        from worksheetgen.errors import UsageError

        raise UsageError(f"progress: expected a function or None, got {type(progress).__name__}")
    settings = _config(
        config,
        {
            "banks": _paths("banks", banks),
            "out": _path("out", out),
            "title": title,
            "course": course,
            "decimals": decimals,
            "paper": paper,
            "engine": engine,
            "language": language,
            "decimal": decimal,
            "jobs": jobs,
            "shuffle": shuffle,
            "scannable": scannable,
            "answer_sheet": answer_sheet,
            "student_number": student_number,
            "large_print": large_print,
        },
    )
    options = BuildOptions.from_config(
        settings,
        seed,
        pdf=pdf,
        template_dir=_path("template_dir", template_dir),
        exports=tuple(exports),
        roster=_path("roster", roster),
        versions=versions,
        practice=practice,
        practice_despite_secret=practice_despite_secret,
    )
    return run_build(options, progress)


def check(
    banks: PathLike | Sequence[PathLike] | None = None,
    *,
    stress: int = 200,
    decimals: int | None = None,
    exports: Sequence[str] = (),
    config: PathLike | None = None,
) -> CheckReport:
    """``worksheetgen check``: load the banks and draw every question ``stress`` times;
    the report says per question what failed (``.ok`` when nothing did)."""
    # imported when called: importing the API loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.pipeline.check import check_banks

    _count("stress", stress, 1, 100_000)
    if decimals is not None:
        _count("decimals", decimals, 0, 6)
    settings = _config(config, {"banks": _paths("banks", banks), "decimals": decimals})
    return check_banks(
        settings.value("banks"),
        stress,
        decimals=settings.value("decimals"),
        secret=settings.secret,
        exports=tuple(exports),
    )


def grade(
    key: PathLike,
    responses: PathLike,
    *,
    out: PathLike | None = None,
    tries: Literal["last", "first"] = "last",
    grading_method: Literal["highest", "average", "first", "last"] = "highest",
    penalty: str | Fraction | None = None,
    carry: bool | None = None,
    lenient: bool = False,
    paper: Literal["a4", "letter"] | None = None,
    absent: Literal["blank", "zero"] = "blank",
    config: PathLike | None = None,
) -> GradeRun:
    """``worksheetgen grade``: grade ``responses`` (our CSV or a Moodle download) against
    ``key`` (a key.json); writes scores.csv, report.md and the class report into ``out``
    (default: beside the responses) and returns the scores (``.result``) and the files.
    ``grading_method``: the Moodle quiz's, for a student with several attempts;
    ``penalty``: an adaptive quiz's per wrong try, a decimal from 0 to 1 as text
    (``"0.3333333"``) or a Fraction (None: the one the Moodle export sets)."""
    # imported when called: importing the API loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.pipeline.config import key_secret
    from worksheetgen.report.grade import grade_files

    _one_of("tries", tries, ("last", "first"))
    _one_of("grading_method", grading_method, ("highest", "average", "first", "last"))
    _one_of("absent", absent, ("blank", "zero"))
    _flag("carry", carry, unset=True)
    _flag("lenient", lenient)
    share = _share("penalty", penalty)
    settings = _config(config, {"paper": paper})
    return grade_files(
        _path("key", key) or "",
        _path("responses", responses) or "",
        _path("out", out),
        tries=tries,
        attempts=grading_method,
        carry=carry,
        lenient=lenient,
        paper=settings.value("paper"),
        absent=absent,
        penalty=share,
        secret=key_secret(settings),
    )


def scan(
    pages: PathLike | Sequence[PathLike],
    key: PathLike,
    *,
    out: PathLike | None = None,
    corrections: PathLike | None = None,
    jobs: int = 0,
    absent: Literal["blank", "zero"] = "blank",
    roster: PathLike | None = None,
    verify_pages: Literal["issues", "all", "none"] = "issues",
    feedback_scans: bool = False,
    config: PathLike | None = None,
) -> ScanResult:
    """``worksheetgen scan``: read the marked pages (PDF, PNG, JPEG or TIFF files, or
    folders of them) against ``key``; writes responses.csv, issues.csv and grade's outputs
    into ``out`` (default: ``scan`` beside the key) and returns what it read. ``jobs``:
    processes that read the pages (0: one per core). ``roster``: for sheets photocopied for
    a class (``build(student_number=...)``), the roster the copies are matched to.
    ``verify_pages``: the pages drawn into ``verify/`` with what was read (each page with an
    issue, every page, or none); ``feedback_scans``: each feedback page shows the student's
    scanned pages so drawn."""
    # imported when called: importing the API loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.pipeline.config import key_secret
    from worksheetgen.scan.run import scan_files

    _count("jobs", jobs, 0, 64)
    _one_of("absent", absent, ("blank", "zero"))
    _one_of("verify_pages", verify_pages, ("issues", "all", "none"))
    _flag("feedback_scans", feedback_scans)
    files = list(_paths("pages", pages))
    if not files:  # the command's SCANS is required: a scan of nothing grades no one
        # imported only when refusing
        from worksheetgen.errors import UsageError

        raise UsageError("pages: expected at least one scan (a file or a folder), got none")
    settings = _config(config, {})
    return scan_files(
        files,
        _path("key", key) or "",
        _path("out", out),
        _path("corrections", corrections),
        jobs,
        absent,
        secret=key_secret(settings),
        roster=_path("roster", roster),
        verify_pages=verify_pages,
        feedback_scans=feedback_scans,
    )


def export(
    key: PathLike,
    to: str,
    *,
    out: PathLike | None = None,
    config: PathLike | None = None,
) -> Path:
    """``worksheetgen export``: ``key`` (a key.json) as an LMS import file (``to``: moodle,
    gift or qti); returns where it was written (default: beside the key)."""
    # imported when called: importing the API loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.export import export_file
    from worksheetgen.pipeline.config import key_secret

    if out is not None and os.fspath(out) == "-":
        # imported only when refusing
        from worksheetgen.errors import UsageError

        raise UsageError("expected a file to export to, got - (standard output is the CLI's)")
    settings = _config(config, {})
    path = export_file(_path("key", key) or "", to, _path("out", out), secret=key_secret(settings))
    assert path is not None  # only "-" writes to a stream
    return path


def responses_template(
    key: PathLike,
    out: PathLike,
    *,
    marks: bool = False,
    students: int = 0,
    config: PathLike | None = None,
) -> Path:
    """``worksheetgen grade --template``: a blank responses CSV for ``key`` (a row per
    entry of each sheet, or with ``marks`` a row per part to type its points) at ``out``,
    never replacing a file; returns its path. ``students`` (for a ``--versions`` build):
    rows for this many students, each with every version's rows (0: a row set per version)."""
    # imported when called: importing the API loads neither NumPy, SymPy nor Jinja2
    from worksheetgen.grading.template import write_template
    from worksheetgen.pipeline.config import key_secret

    _count("students", students, 0, 2000)
    _flag("marks", marks)
    target = _path("out", out) or ""
    if target == "-":
        # imported only when refusing
        from worksheetgen.errors import UsageError

        raise UsageError("out: expected a file to write the template to, got -")
    path = write_template(
        _path("key", key) or "",
        target,
        marks=marks,
        students=students,
        secret=key_secret(_config(config, {})),
    )
    assert path is not None
    return path
