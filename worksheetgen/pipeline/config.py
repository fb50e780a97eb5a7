"""The course configuration (``worksheetgen.toml``) and the course secret.

``worksheetgen.toml`` is found in the working folder or its parents (as ruff and pytest find
theirs), or named with ``--config``. It sets a course's defaults; options on the command line
win. The course secret comes from ``WORKSHEETGEN_SECRET`` or from the file that ``secret_file``
names, which only its owner may read (mode 0600). Every setting remembers where it came from,
for ``worksheetgen config``. Nothing here imports NumPy, SymPy or Jinja2: the CLI reads the
configuration before it knows whether there is any work.

May import: the standard library, ``tomli`` on Python 3.10, errors, textrules, model (the
``space`` setting's record), language (the shipped languages) and (for a fingerprint) solve.rng.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worksheetgen.errors import ConfigError, course_secret, file_kind
from worksheetgen.inputs import forget_secret_file, read_limited, utf8_text
from worksheetgen.language import LANGUAGES, SEPARATORS
from worksheetgen.textrules import problem, shown

if TYPE_CHECKING:
    from worksheetgen.keyjson.read import ExpectedSecret

if os.name == "posix":  # group members and user names, for the ownership check: POSIX only
    import grp
    import pwd

if sys.version_info >= (3, 11):
    import tomllib  # the standard library reads TOML from Python 3.11 on
else:  # Python 3.10: tomli, the package tomllib was made from
    import tomli as tomllib

CONFIG_NAME = "worksheetgen.toml"
SECRET_NAME = ".worksheetgen-secret"
SECRET_ENV = "WORKSHEETGEN_SECRET"
MAX_CONFIG_BYTES = 1_000_000
#: the most bytes a secret file may hold (a secret is 16 to 4096 bytes, blank lines around it)
MAX_SECRET_BYTES = 8192

#: the settings a configuration may hold, in the order ``worksheetgen config`` prints them
SETTINGS = (
    "course",
    "title",
    "decimals",
    "banks",
    "out",
    "paper",
    "engine",
    "language",
    "decimal",
    "jobs",
    "secret_file",
    "kind",
    "space",
    "shuffle",
    "carry",
    "scannable",
    "answer_sheet",
    "student_number",
    "large_print",
)
#: the values ``paper``, ``engine``, ``language`` and ``decimal`` may take (``auto``: pdfLaTeX,
#: or LuaLaTeX when the text has letters pdfLaTeX's fonts lack; a language: one with a
#: catalog; the decimal separator by name)
CHOICES = {
    "paper": ("a4", "letter"),
    "engine": ("auto", "pdflatex", "lualatex"),
    "language": tuple(LANGUAGES),
    "decimal": tuple(SEPARATORS),
}

DEFAULTS: dict[str, Any] = {
    "course": None,
    "title": None,
    "decimals": None,
    "banks": (),
    "out": "output",
    "paper": "a4",
    "engine": "auto",
    "language": "en",  # the fixed words of the sheets and keys
    "decimal": None,  # the printed numbers' decimal separator: point or comma
    "jobs": None,
    "secret_file": None,
    "kind": None,  # worksheet or quiz, where the banks' sheet: kind does not say
    "space": None,  # room to work under every question whose bank gives none
    "shuffle": None,  # None: the bank's sheet: shuffle (false unless it says true)
    "carry": None,  # None: the bank's carry (true unless it says false)
    "scannable": False,  # sheets with corner marks, page codes and boxes for `scan`
    "answer_sheet": False,  # with scannable: the boxes on a separate answer sheet per sheet
    "student_number": 0,  # with scannable: digits of a student-number grid (0: none)
    "large_print": False,  # every sheet in large print (a roster may ask it per student)
}
#: what a setting left unset means, as ``worksheetgen config`` says it
UNSET: dict[str, str] = {
    "course": "the bank's",
    "title": "the bank's",
    "decimals": "the bank's, else 2",
    "banks": "the bundled default bank",
    "jobs": "one per core without PDFs; with PDFs one, TeX on the other cores",
    "secret_file": "no course secret",
    "kind": "the bank's, else worksheet",
    "space": "the bank's, else none (a quiz: 5cm lines under computation questions)",
    "shuffle": "the bank's, else false",
    "carry": "the bank's, else true",
    "decimal": "the language's (en: point, de: comma)",
}


@dataclass(frozen=True)
class Setting:
    """One effective setting and where it came from (``default``, ``file:line``, an option)."""

    value: Any
    source: str


@dataclass(frozen=True)
class Config:
    """The effective settings of a command, and the secret (never printed, never written)."""

    path: Path | None
    settings: dict[str, Setting]
    secret: bytes | None = field(default=None, repr=False)
    secret_source: str | None = None

    def value(self, name: str) -> Any:
        """The effective value of ``name``."""
        return self.settings[name].value


#: names the configuration files (one path, or several joined by ``os.pathsep``) that may be
#: used although they fail the ownership check, as git's ``safe.directory`` does; ``*``: any
TRUST_ENV = "WORKSHEETGEN_TRUST_CONFIG"


def find_config(start: Path | None = None) -> Path | None:
    """The nearest ``worksheetgen.toml`` in ``start`` (the working folder) or its parents.

    Whatever is there under that name is the course's configuration: one that is not a
    regular file (a FIFO, a folder, a link to nothing) is refused, never skipped, so a build
    never runs without the course's settings and secret without a word."""
    here = Path(os.path.abspath(start or Path.cwd()))
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_NAME
        try:
            os.lstat(candidate)
        except OSError:
            continue
        _check_kind(candidate)
        return candidate
    return None


def _check_kind(path: Path) -> os.stat_result:
    """The status of the regular file ``path`` (a link is followed), or a one-line error
    naming what it is instead; nothing is opened, so a FIFO cannot hang."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ConfigError(
            f"{shown(str(path))}: expected a configuration file, got a link to nothing"
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"{shown(str(path))}: expected a configuration file, got an error ({exc.strerror})"
        ) from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(
            f"{shown(str(path))}: expected a configuration file, got {file_kind(info.st_mode)}"
        )
    return info


def _trusted_owner(uid: int) -> bool:
    return uid in (os.getuid(), 0)


def _others_may_write(info: os.stat_result) -> bool:
    """True when someone besides its owner may write what ``info`` describes: anyone (the
    world bit), or a group with others in it (a group-writable file of one's own private
    group, as umask 002 makes them, is no door)."""
    if info.st_mode & 0o002:
        return True
    if not info.st_mode & 0o020:
        return False
    if info.st_gid != os.getgid():
        return True
    try:
        members = grp.getgrgid(info.st_gid).gr_mem
        me = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return True
    return any(member != me for member in members)


def untrusted(path: Path, environ: Mapping[str, str] | None = None) -> str | None:
    """Why a configuration found by looking in the working folder and its parents may not
    be followed ("owned by uid 65534", "writable by others", "in a folder others can write"),
    or None when it may: it and its folder belong to you (or root) and nobody else may
    write them, or ``WORKSHEETGEN_TRUST_CONFIG`` names it. A file someone else could plant
    there would otherwise set where outputs go and the secret that keys every sheet."""
    if not hasattr(os, "getuid"):
        return None
    env = os.environ if environ is None else environ
    trusted = [t for t in env.get(TRUST_ENV, "").split(os.pathsep) if t]
    if "*" in trusted or any(_same_file(t, path) for t in trusted):
        return None
    info = os.stat(path)
    if not _trusted_owner(info.st_uid):
        return f"owned by another user (uid {info.st_uid})"
    if _others_may_write(info):
        return f"writable by others (mode {stat.S_IMODE(info.st_mode):04o})"
    for folder in dict.fromkeys((path.parent, Path(os.path.realpath(path)).parent)):
        try:
            where = os.stat(folder)
        except OSError:
            continue
        if not _trusted_owner(where.st_uid):
            return f"in a folder of another user (uid {where.st_uid})"
        if _others_may_write(where):
            return f"in a folder others can write (mode {stat.S_IMODE(where.st_mode):04o})"
    return None


def _same_file(a: str, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _line_of(text: str, key: str) -> int:
    """The line that sets ``key`` (1 when it cannot be told)."""
    pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return number
    return 1


def _fail(path: Path, line: int, key: str, expected: str, got: Any) -> ConfigError:
    return ConfigError(f"{path}:{line}: {key}: expected {expected}, got {shown(repr(got))}")


def _check(path: Path, text: str, key: str, value: Any) -> Any:
    """One setting of the file, checked and made relative to the file's folder."""
    line = _line_of(text, key)
    here = path.parent
    if isinstance(value, str) and problem(value) is not None:  # the one text rule
        raise ConfigError(f"{path}:{line}: {key}: {problem(value)}")
    if key in ("course", "title"):
        if not isinstance(value, str) or not value.strip() or len(value) > 4000:
            raise _fail(path, line, key, "a non-empty string of at most 4000 characters", value)
        return value
    if key in ("decimals", "jobs", "student_number"):
        top = {"decimals": 6, "jobs": 64, "student_number": 12}[key]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
            raise _fail(path, line, key, f"an integer from 0 to {top}", value)
        return value
    if key == "kind":
        if value not in ("worksheet", "quiz"):
            raise _fail(path, line, key, "worksheet or quiz", value)
        return value
    if key == "space":
        # model holds only records and this one check: nothing heavy is imported
        from worksheetgen.model import Space

        try:
            return Space.parse(value)
        except ValueError as exc:
            raise ConfigError(f"{path}:{line}: {key}: {exc}") from None
    if key in ("shuffle", "carry", "scannable", "answer_sheet", "large_print"):
        if not isinstance(value, bool):
            raise _fail(path, line, key, "true or false", value)
        return value
    if key in CHOICES:
        if value not in CHOICES[key]:
            raise _fail(path, line, key, "one of " + ", ".join(CHOICES[key]), value)
        return value
    if key == "banks":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise _fail(path, line, key, "a bank path or a list of bank paths", value)
        for v in value:
            if problem(v) is not None:
                raise ConfigError(f"{path}:{line}: {key}: {problem(v)}")
        return tuple(str(here / v) for v in value)
    if not isinstance(value, str) or not value.strip():  # out, secret_file
        raise _fail(path, line, key, "a path", value)
    return str(here / value)


#: how deep a configuration's arrays and tables may nest (a real one nests two levels)
MAX_TOML_DEPTH = 40


def _deep_line(text: str) -> int:
    """The line where ``text``'s brackets first nest deeper than MAX_TOML_DEPTH (counted
    as written, strings and all: only to name a line), else 1."""
    depth = 0
    line = 1
    for c in text:
        if c == "\n":
            line += 1
        elif c in "[{":
            depth += 1
            if depth > MAX_TOML_DEPTH:
                return line
        elif c in "]}":
            depth -= 1
    return 1


def _parse(path: Path) -> dict[str, Setting]:
    """The settings a configuration file sets, each with its file:line."""
    # the one gate of every input: a regular file (never a FIFO, device or folder, refused
    # before anything is opened), read within its limit
    data = read_limited(path, MAX_CONFIG_BYTES, what="a configuration file", error=ConfigError)
    text = utf8_text(data, str(path), ConfigError, bom=False)  # TOML has no BOM
    try:
        doc = tomllib.loads(text)
    except RecursionError:  # arrays or tables nested thousands deep: the reader recursed
        raise ConfigError(
            f"{path}:{_deep_line(text)}: expected TOML nested at most {MAX_TOML_DEPTH} levels "
            "deep, got far deeper"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        # an error "at end of document" is on the file's last line
        line = found.group(1) if found else str(max(1, len(text.splitlines())))
        message = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(exc))
        raise ConfigError(f"{path}:{line}: expected TOML, got an error ({message})") from None
    settings: dict[str, Setting] = {}
    for key, value in doc.items():
        if key not in SETTINGS:
            raise _fail(path, _line_of(text, key), key, "one of " + ", ".join(SETTINGS), key)
        settings[key] = Setting(_check(path, text, key, value), f"{path}:{_line_of(text, key)}")
    return settings


def _private(path: str | os.PathLike[str], st: os.stat_result) -> str | None:
    """The secret file's problem when others may read it (mode 0600 is asked for)."""
    mode = stat.S_IMODE(st.st_mode)
    if os.name == "posix" and mode & 0o077:
        return (
            f"expected mode 0600 (readable only by its owner), got {mode:04o}; run chmod 600 {path}"
        )
    return None


def read_secret_file(path: str | os.PathLike[str]) -> bytes:
    """The secret in ``path``: read through the one gate (a regular file, never a FIFO, a
    device or a folder, at most ``MAX_SECRET_BYTES``) and refused unless only its owner may
    read it (mode 0600)."""
    data = read_limited(
        path,
        MAX_SECRET_BYTES,
        what="a secret file",
        error=ConfigError,
        field="secret_file",
        check=lambda st: _private(path, st),
        secret=True,
    ).strip()
    if not 16 <= len(data) <= 4096:
        raise ConfigError(
            f"expected a secret of 16 to 4096 bytes, got {len(data)}",
            file=str(path),
            line=1,
            field="secret_file",
        )
    return data


def load_config(
    given: str | None = None,
    options: dict[str, Any] | None = None,
    start: Path | None = None,
    environ: dict[str, str] | None = None,
) -> Config:
    """The effective settings: the command line's ``options`` (those not None), then the
    configuration file (``given`` or the nearest one), then the defaults; and the secret."""
    env = os.environ if environ is None else environ
    if given is not None:  # named on the command line: trusted, as it was chosen
        path: Path | None = Path(given)
        try:
            _check_kind(Path(given))
        except ConfigError as exc:
            raise ConfigError(f"--config: {exc}") from None
    else:
        path = find_config(start)
        why = None if path is None else untrusted(path, env)
        if path is not None and why is not None:
            raise ConfigError(
                f"{shown(str(path))}: expected a configuration of your own that only you can "
                f"write, got one {why}; to use it anyway, name it with --config or set "
                f"{TRUST_ENV}={shown(str(path))}"
            )
    from_file = _parse(path) if path is not None else {}
    settings: dict[str, Setting] = {}
    for name in SETTINGS:
        cli = (options or {}).get(name)
        if cli is not None and cli != ():
            flag = name.replace("_", "-")
            settings[name] = Setting(cli, f"--{flag}" if cli is not False else f"--no-{flag}")
        elif name in from_file:
            settings[name] = from_file[name]
        else:
            settings[name] = Setting(DEFAULTS[name], "default")
    _check_space_fits_paper(settings)
    secret: bytes | None = None
    source: str | None = None
    forget_secret_file()
    if env.get(SECRET_ENV):
        try:
            secret, source = env[SECRET_ENV].encode("utf-8"), SECRET_ENV
        except UnicodeEncodeError:  # bytes that are not UTF-8 (os.environ's surrogates)
            raise ConfigError(
                f"{SECRET_ENV}: expected UTF-8 text, got other bytes (the secret is not shown)"
            ) from None
        if len(secret) < 16:
            raise ConfigError(
                f"{SECRET_ENV}: expected a secret of at least 16 bytes, got {len(secret)}"
            )
    elif settings["secret_file"].value is not None:
        source = settings["secret_file"].source
        try:
            secret = read_secret_file(settings["secret_file"].value)
        except ConfigError as exc:  # named where the user set it, then the file itself
            if source.startswith("--"):
                raise
            where = f"{exc.file}:{exc.line}" if exc.line else exc.file
            raise ConfigError(
                f"{source}: secret_file: {exc.message}" + (f" ({where})" if where else "")
            ) from None
    course_secret(secret)  # no error message of this command shows it
    return Config(path, settings, secret, source)


def _check_space_fits_paper(settings: dict[str, Setting]) -> None:
    """A configuration's room to work must fit on the paper the build prints on: said at the
    configuration's line (a bank's own ``space`` is checked where the bank says it)."""
    space, paper = settings["space"], settings["paper"]
    mm = getattr(space.value, "mm", None)
    if mm is None or space.source == "default" or space.source.startswith("--"):
        return
    # model holds only records and constants: nothing heavy is imported
    from worksheetgen.model import TEXT_HEIGHTS_MM

    limit = TEXT_HEIGHTS_MM.get(str(paper.value), max(TEXT_HEIGHTS_MM.values()))
    if mm > limit:
        raise ConfigError(
            f"{space.source}: space: expected a height that fits on a {paper.value} page "
            f"(at most {limit:g}mm, the text height; paper from {paper.source}), got "
            f"{space.value.height!r}"
        )


def fingerprint(secret: bytes) -> str:
    """A secret's fingerprint, as key.json holds it."""
    # solve.rng loads NumPy: only when a fingerprint is asked for, never for --help
    from worksheetgen.solve.rng import secret_fingerprint

    return secret_fingerprint(secret)


def key_secret(config: Config) -> ExpectedSecret | None:
    """The course secret every key.json a command reads must be built with (None: no secret
    configured; a key built without a secret is left to the key's own reader), for the
    command to hand to the one key reader, which checks it in its one gated read
    (``keyjson.read.ExpectedSecret``)."""
    if config.secret is None or config.secret_source is None:
        return None
    # keyjson is imported only by a command that reads a key (never for --help)
    from worksheetgen.keyjson.read import ExpectedSecret

    return ExpectedSecret(fingerprint(config.secret), config.secret_source)


def toml_string(text: str) -> str:
    """``text`` (printable: the text rule holds) as a TOML basic string: every character as
    written but the quote and the backslash, escaped (JSON's ``\\ud83e\\udd16`` surrogate
    pairs for an emoji are not TOML)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def init_course(folder: Path, course: str | None = None) -> tuple[Path, Path]:
    """Write ``worksheetgen.toml`` and a random secret (mode 0600) into ``folder``; refuse to
    replace either."""
    config, secret = folder / CONFIG_NAME, folder / SECRET_NAME
    if course is not None:  # the rule a course's name meets when read back
        bad = problem(course)
        if bad is None and (not course.strip() or len(course) > 4000):
            bad = f"expected a non-empty name of at most 4000 characters, got {len(course)}"
        if bad is not None:
            raise ConfigError(f"--course: {bad}")
    for path in (config, secret):
        if path.exists():
            raise ConfigError(f"{path}: expected no such file, got one; remove it first")
    lines = [
        "# worksheetgen course configuration: options given on the command line win",
        f"course = {toml_string(course)}" if course else '# course = "Course name"',
        '# title = "Quiz 1"',
        "# decimals = 2",
        '# banks = ["banks/"]',
        '# out = "output"',
        '# paper = "a4"  # or "letter"',
        '# engine = "auto"  # or "pdflatex", "lualatex"',
        '# language = "de"  # the fixed words of sheets and keys; default "en"',
        '# decimal = "comma"  # or "point"; default: the language\'s separator',
        "# jobs = 0",
        '# kind = "quiz"  # computation questions get room to work',
        '# space = {height = "6cm", style = "lines"}  # or "grid", "blank"; "none"',
        "# shuffle = true  # each sheet's questions in an order of its own",
        "# scannable = true  # sheets `worksheetgen scan` reads back",
        "# answer_sheet = true  # with scannable: the boxes on a separate answer sheet",
        "# student_number = 8  # with scannable, not a roster: a grid of 8 digits to mark",
        "# large_print = true  # every sheet in large print (PDF 14 pt, HTML 16 pt)",
        "# the course secret: keep this file private and out of version control",
        f'secret_file = "{SECRET_NAME}"',
        "",
    ]
    made: list[Path] = []
    try:
        fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        made.append(secret)
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_hex(32) + "\n")
        os.chmod(secret, 0o600)  # whatever the umask
        fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        made.append(config)
        os.fchmod(fd, 0o644)  # whatever the umask: a later command refuses one others can write
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines))
    except OSError as exc:
        for path in made:  # nothing half-written
            path.unlink(missing_ok=True)
        raise ConfigError(f"{folder}: cannot write the configuration ({exc.strerror})") from None
    return config, secret
