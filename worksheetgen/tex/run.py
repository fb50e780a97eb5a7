"""Compile LaTeX to PDF: in a private temporary folder, without shell escape, with a time limit.

Documents are compiled in parallel on the available cores, one TeX process per document
(a whole class is one document). The engine is pdfLaTeX when every character of the document
is one its T1 fonts print, else LuaLaTeX (with fonts that have Greek, Cyrillic, CJK, ...).
A failure names the document, shows the first LaTeX error with its line, and keeps the .tex
and the log at a path it prints.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO

from worksheetgen.errors import CompileError, WorksheetgenError
from worksheetgen.files import (
    check_replaceable,
    tex_folder,
    write_failure,
    write_file,
)
from worksheetgen.speed.cache import cache_root
from worksheetgen.tex import process
from worksheetgen.tex.engines import (  # noqa: F401 - the engine choice, used from here too
    LUALATEX,
    PDFLATEX,
    PDFLATEX_CHARS,
    choose_engine,
    needs_unicode_engine,
    unprintable_sample,
)
from worksheetgen.tex.feed import TexFeed
from worksheetgen.tex.formats import (
    FORMAT_TROUBLE,
    blank_preamble,
    forget_format,
    preamble_format,
    split_preamble,
)
from worksheetgen.tex.process import Cancelled, JobStop, stop, tex_env
from worksheetgen.textrules import shown

TEX_TIMEOUT_SECONDS = 120
TEX_SECONDS_PER_SHEET = 2  # added to the limit for every sheet of a whole-class document
TEX_PACKAGES = (
    "texlive-latex-base texlive-latex-recommended texlive-fonts-recommended "
    "texlive-pictures latexmk"
)
UNICODE_PACKAGES = "texlive-luatex fonts-dejavu-core fonts-wqy-microhei"
INSTALL_HINT = (
    "install TeX Live (Debian/Ubuntu: sudo apt-get install -y "
    f"--no-install-recommends {TEX_PACKAGES}) or pass --no-pdf"
)
LUA_HINT = (
    "install LuaLaTeX and fonts (Debian/Ubuntu: sudo apt-get install -y "
    f"--no-install-recommends {UNICODE_PACKAGES}) or pass --no-pdf"
)


@dataclass(frozen=True)
class TexJob:
    """One document to compile: its name (for messages) and LaTeX source.

    ``path`` compiles a file instead of ``source`` (whole-class documents are streamed to disk);
    ``engine`` None picks one from the text; ``pages`` reads the page range of every sheet
    (written by the templates to ``\\jobname.pages``) and asks TeX for a PDF whose pages can be
    cut out; ``sheets`` scales the time limit; ``output`` moves the PDF there instead of
    returning its bytes; ``feed`` makes TeX read the document while it is being written
    (``path`` is then the file the same text goes to, kept if TeX fails); ``formats`` lets
    pdfLaTeX start from a dumped format of the preamble (:func:`preamble_format`), for the
    bundled templates' preamble: a preamble of one's own might keep state a format cannot
    (an open file, the job's name), so it is read every time.
    """

    name: str
    source: str = ""
    path: Path | None = None
    engine: str | None = None
    pages: bool = False
    sheets: int = 1
    output: Path | None = None
    feed: TexFeed | None = None
    formats: bool = False


@dataclass(frozen=True)
class TexOutput:
    """A compiled document: the PDF (bytes, or None when moved to ``job.output``) and the
    first and last page of every sheet (when the job asked for them)."""

    pdf: bytes | None
    ranges: tuple[tuple[int, int], ...] = ()
    engine: str = PDFLATEX
    #: what a scannable sheet's TeX recorded of its pages and boxes (``\\jobname.scanpos``)
    scanpos: str = ""


def find_engine(engine: str = PDFLATEX) -> str | None:
    """The executable of a TeX engine, or None when it is not installed."""
    return shutil.which(engine)


def require_engine(engine: str = PDFLATEX, why: str = "") -> str:
    """The executable of a TeX engine, or a CompileError that says how to get one."""
    found = find_engine(engine)
    if found is None:
        hint = LUA_HINT if engine == LUALATEX else INSTALL_HINT
        raise CompileError(f"no TeX engine ({engine}) found on PATH{why}; " + hint)
    return found


_ERROR_RE = re.compile(r"^(?:! |(?:\./)?[^:\n]*\.(?:tex|sty|cls):(\d+): )(.*)$", re.M)
_LINE_RE = re.compile(r"^l\.(\d+)", re.M)


_MISSING_RE = re.compile(r"^Missing character: There is no (.+?) \((U\+[0-9A-F]+)\)", re.M)


def first_error(log: str) -> str:
    """The first LaTeX error in a log, with its source line where the log gives one."""
    lost = _MISSING_RE.search(log)
    if lost:  # \tracinglostchars=3: a letter that no installed font has
        return (
            f"no installed font has the letter {lost.group(1)} ({lost.group(2)}); "
            "install a font that has it (the templates also use Noto Serif, Noto Sans "
            "and Noto Sans CJK where installed: Debian fonts-noto-core, fonts-noto-cjk) "
            "or leave it out"
        )
    m = _ERROR_RE.search(log)
    if not m:
        return "TeX stopped without a readable error"
    message = m.group(2).strip()
    line = m.group(1)
    after = _LINE_RE.search(log, m.end())
    if after:
        line = after.group(1)
    return f"line {line}: {message}" if line else message


_QUESTION_RE = re.compile(r"^\\wsquestion(?:\[[^\]]*\])?\{(\d+)\}")
# \wsheader{course}{title}{label}{}, or a sheet's (key's, answer sheet's)
# \wssheetheader{course}{title}{label}{ code}
_SHEET_RE = re.compile(
    r"^\\ws(?:sheet)?header\{.*?\}\{.*?\}\{(.*?)\}"
    r"\{(?: \\textperiodcentered\\ sheet code [^{}\\]*"
    r"(?: \\textperiodcentered\\ answer (?:key|sheet))?)?\}$"
)
_TEX_ESCAPES_RE = re.compile(
    r"\\(?:textperiodcentered\\ |kern0pt |allowbreak\{\}|"
    r"[a-z]+\{\}|(.))"
)


def question_at(tex: Path, reason: str) -> str:
    """Where in the worksheet the line of a TeX error is, for its message: ' (question 3 of
    "Ada Lovelace")', or '' when the error is not inside a question (or has no line)."""
    found = re.match(r"line (\d+): ", reason)
    if not found:
        return ""
    wanted = int(found.group(1))
    question = sheet = None
    try:
        with open(tex, encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, 1):
                if number > wanted:
                    break
                q = _QUESTION_RE.match(line)
                if q:
                    question = q.group(1)
                h = _SHEET_RE.match(line.rstrip("\n"))
                if h:
                    label = h.group(1).replace("\\textperiodcentered\\ ", "\u00b7 ")
                    sheet = _TEX_ESCAPES_RE.sub(lambda m: m.group(1) or "", label)
                    question = None
    except OSError:
        return ""
    if question is None:
        return ""
    of = f' of "{sheet}"' if sheet else ""
    return f" (question {question}{of}: check the math and text of its prompt in the bank)"


#: PDFs the same whatever the day: no CreationDate, no ModDate, no trailer /ID (pdfTeX puts
#: the time into both; pdfTeX before 1.40.17 (2016) has neither: left as it is there;
#: LuaTeX: 32 CreationDate + 64 ModDate + 512 ID of suppressoptionalinfo)
_SAME_BYTES = {
    PDFLATEX: r"\ifdefined\pdftrailerid \pdfinfoomitdate=1 \pdftrailerid{}\fi",
    LUALATEX: r"\pdfvariable suppressoptionalinfo 608",
}


def _command(
    engine_path: str, engine: str, pages: bool, fmt: str | None = None, recorder: bool = False
) -> list[str]:
    cmd = [
        engine_path,
        "-interaction=nonstopmode",
        "-halt-on-error",
        "-no-shell-escape",
        "-file-line-error",
        "-no-parse-first-line",
        "-jobname=doc",
    ]
    if recorder:  # every file TeX opens, in doc.fls (see outside_reads)
        cmd.append("-recorder")
    if fmt is not None:
        cmd.append(f"-fmt={fmt}")
    settings = [_SAME_BYTES[engine]]
    if pages:
        # whole objects only (no object streams), so that pages can be cut out afterwards
        settings.append(
            r"\pdfvariable objcompresslevel=0" if engine == LUALATEX else r"\pdfobjcompresslevel=0"
        )
    # the primitive \input (no braces) opens the file once, as a pipe needs
    return [*cmd, " ".join(settings) + r" \input doc.tex "]


@lru_cache(maxsize=1)
def _tex_roots() -> tuple[str, ...]:
    """The folders TeX may read besides a document's own: the TeX installation's trees
    (kpathsea's TEXMF variables), the system's font folders and the format cache."""
    roots = {
        "/usr/share/fonts",
        "/usr/local/share/fonts",
        "/etc/fonts",
        "/usr/share/fontconfig",
        "/var/cache/fontconfig",
    }
    kpsewhich = shutil.which("kpsewhich")
    names = (
        "TEXMF TEXMFROOT TEXMFDIST TEXMFVAR TEXMFSYSVAR TEXMFCONFIG TEXMFSYSCONFIG "
        "TEXMFCACHE TEXMFLOCAL TEXMFHOME OSFONTDIR TEXMFCNF"
    ).split()
    found = ""
    if kpsewhich is not None:
        try:
            found = subprocess.run(  # one string: kpsewhich expands one argument of its kind
                [kpsewhich, "-expand-braces=" + ":".join(f"${n}" for n in names)],
                capture_output=True,
                text=True,
                timeout=20,
                env=tex_env(),
                check=False,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            found = ""
    for line in found.splitlines():
        for part in line.split(":"):
            part = part.strip().lstrip("!")
            if os.path.isabs(part):
                roots.add(os.path.realpath(part.rstrip("/") or "/"))
    # pdfTeX and LuaTeX binaries find their trees relative to themselves (TinyTeX, MacTeX)
    for engine in (PDFLATEX, LUALATEX):
        path = shutil.which(engine)
        if path is not None:
            tree = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(path))))
            if os.path.isdir(os.path.join(tree, "texmf-dist")):
                roots.add(tree)
    cache = cache_root()
    if cache is not None:
        roots.add(os.path.realpath(cache))
    return tuple(sorted(r for r in roots if r != "/"))


def outside_reads(work: Path) -> str | None:
    """The first file TeX's recorder (``doc.fls``) says it read outside ``work`` and the TeX
    installation (:func:`_tex_roots`), or None. A missing record is read as nothing read
    (TeX that stopped before it began)."""
    try:
        with open(work / "doc.fls", encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read(20_000_000).splitlines()
    except OSError:
        return None
    here = os.path.realpath(work)
    roots = (here, *_tex_roots())
    for line in lines:
        if not line.startswith("INPUT "):
            continue
        name = line[6:]
        # as named (fontconfig's conf.d links into conf.avail) or where it leads
        for path in (
            os.path.normpath(os.path.join(here, name)),
            os.path.realpath(os.path.join(here, name)),
        ):
            if any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots):
                break
        else:
            return shown(name)
    return None


def read_ranges(text: str, name: str) -> tuple[tuple[int, int], ...]:
    """The (first, last) page of every sheet from the lines of ``\\jobname.pages``."""
    out: list[tuple[int, int]] = []
    start: int | None = None
    for line in text.splitlines():
        word, _, number = line.strip().partition(" ")
        if not number.isdigit():
            continue
        if word == "start":
            start = int(number)
        elif word == "end" and start is not None:
            out.append((start, int(number)))
            start = None
    if start is not None:
        raise CompileError("a sheet started but never ended in the page record", file=f"{name}.tex")
    return tuple(out)


def compile_job(
    job: TexJob,
    keep_dir: Path,
    cancel: threading.Event | None = None,
    formats: bool = True,
    redumped: bool = False,
) -> TexOutput:
    """Compile one document (``cancel``: see :func:`stop`; ``formats``: pdfLaTeX may start
    from a format of the preamble, see :func:`preamble_format`).

    A cached format TeX cannot load (damaged on disk) is removed and dumped again once
    (``redumped``), silently; should the new one fail too, the document is compiled from
    its own preamble."""
    text: str | None = None
    if job.feed is None:
        text = job.source if job.path is None else job.path.read_text("utf-8")
    engine = job.engine
    if engine is None:
        engine = choose_engine([text or ""])
    engine_path = require_engine(engine, f" (needed for {job.name})")
    timeout = TEX_TIMEOUT_SECONDS + TEX_SECONDS_PER_SHEET * max(job.sheets - 1, 0)
    head = job.feed.head if job.feed is not None else text
    parts = (
        split_preamble(head)
        if job.formats and formats and head is not None and engine == PDFLATEX
        else None
    )
    fmt = preamble_format(engine_path, parts[0], cancel) if parts is not None else None
    with tex_folder("tex") as work:
        tex = work / "doc.tex"
        if job.feed is not None:
            os.mkfifo(tex)
            job.feed.strip_preamble = fmt is not None
            job.feed.attach(tex)
        else:
            assert text is not None
            tex.write_text(blank_preamble(text) if fmt is not None else text, encoding="utf-8")
        # a document of templates of one's own may not read files outside its folder and
        # the TeX installation: pdfTeX's \pdfobj stream file {/etc/passwd} would put them
        # into the PDF, and openin_any=p does not stop it; TeX's recorder lists every file
        # such a primitive opens, and the PDF is refused if one is outside
        confined = not job.formats
        try:
            returncode, output = process.run_tex(
                _command(engine_path, engine, job.pages, fmt, recorder=confined),
                work,
                timeout,
                cancel,
            )
        finally:
            if job.feed is not None:
                job.feed.tex_stopped()
        outside = outside_reads(work) if confined else None
        if outside is not None:
            raise CompileError(
                f"expected a document that reads no file outside its templates and the TeX "
                f"installation, got one that read {outside} (a template of one's own may "
                "not embed other files); nothing written",
                file=f"{job.name}.tex",
            )
        trouble = (
            fmt is not None
            and returncode != 0
            and bool(FORMAT_TROUBLE.search(output.decode("utf-8", "replace")))
        )
        if trouble:
            assert fmt is not None
            forget_format(fmt)  # unreadable after all: dumped again
            if text is not None:  # not fed through a pipe, so still at hand: once more
                return compile_job(
                    replace(job, source=text, path=None),
                    keep_dir,
                    cancel,
                    formats=not redumped,
                    redumped=True,
                )
        if returncode is None:
            ok, reason = False, f"TeX ran longer than {timeout} s and was stopped"
        else:
            ok = returncode == 0 and (work / "doc.pdf").exists()
            reason = "" if ok else first_error(_read_log(work) or output.decode("utf-8", "replace"))
            if trouble:
                reason = (
                    "TeX could not read the cached format of the preamble (it was "
                    "removed: building again works)"
                )
        if ok:
            ranges: tuple[tuple[int, int], ...] = ()
            if job.pages:
                record = work / "doc.pages"
                if not record.exists():
                    raise CompileError(
                        "the templates recorded no page ranges (a whole-class "
                        "base template must use \\wsstartsheet and "
                        "\\wsendsheet)",
                        file=f"{job.name}.tex",
                    )
                ranges = read_ranges(record.read_text("utf-8", "replace"), job.name)
            positions = work / "doc.scanpos"
            scanpos = positions.read_text("ascii", "replace") if positions.exists() else ""
            if job.output is not None:
                job.output.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(work / "doc.pdf"), job.output)
                return TexOutput(None, ranges, engine, scanpos)
            return TexOutput((work / "doc.pdf").read_bytes(), ranges, engine, scanpos)
        kept = _keep(job, keep_dir, text, work)
        where = question_at(keep_dir / f"{job.name}.tex", reason)
        raise CompileError(f"{reason.rstrip('.')}{where}; {kept}", file=f"{job.name}.tex")


def _keep(job: TexJob, keep_dir: Path, text: str | None, work: Path) -> str:
    """Keep a failed document's .tex (and TeX's log, when it wrote one) in ``keep_dir``;
    says what was kept. Each file is written whole through a temporary name (a symlink or
    a device there is never written through), and a failure to keep is said, not raised."""

    def copy_of(path: Path) -> Callable[[BinaryIO], None]:
        def write(out: BinaryIO) -> None:
            with open(path, "rb") as fh:
                shutil.copyfileobj(fh, out)

        return write

    kept_tex = keep_dir / f"{job.name}.tex"
    log = work / "doc.log"
    try:
        check_replaceable(keep_dir, folder=True, field=None)
        if keep_dir.is_symlink():  # never written through
            keep_dir.unlink()
        keep_dir.mkdir(parents=True, exist_ok=True)
        if job.path is not None:
            write_file(kept_tex, copy_of(job.path))
        elif text is not None:
            write_file(kept_tex, text.encode("utf-8"))
        else:
            write_file(kept_tex, copy_of(work / "doc.tex"))
        has_log = log.is_file()
        if has_log:
            write_file(keep_dir / f"{job.name}.log", copy_of(log))
        else:
            (keep_dir / f"{job.name}.log").unlink(missing_ok=True)  # an older run's
    except OSError as exc:
        error = write_failure(exc, keep_dir)
        if error is None:
            raise
        return f"could not keep the .tex in {keep_dir} ({exc.strerror or exc})"
    except WorksheetgenError as exc:
        return f"nothing kept ({exc})"
    if has_log:
        return f"kept {kept_tex} and its .log"
    return f"kept {kept_tex} (TeX wrote no log)"


def _read_log(folder: Path) -> str:
    log = folder / "doc.log"
    return log.read_text("utf-8", "replace") if log.exists() else ""


#: how long the documents before a failed one may still run, so that the error said is
#: the first document's (the build's order) and not the quickest TeX run's
FAILURE_GRACE_SECONDS = 15


def compile_jobs(
    jobs: list[TexJob],
    keep_dir: Path,
    cancel: threading.Event | None = None,
    then: Callable[[str, TexOutput], object] | None = None,
) -> dict[str, TexOutput]:
    """Compile documents in parallel (one TeX process each); every result by name.

    ``cancel`` lets the caller stop the runs (:func:`stop`), e.g. when the text it feeds them
    fails. Documents fed through a pipe all run at once (each waits for its text). ``then``
    is called with each document's name and result as soon as it is compiled (while other
    documents may still be compiling); an exception it raises fails the whole call.
    """
    workers = max(1, min(len(jobs), os.cpu_count() or 1))
    if any(job.feed is not None for job in jobs):
        workers = len(jobs)
    cancel = cancel or threading.Event()

    def run(job: TexJob, own: threading.Event) -> TexOutput:
        try:
            result = compile_job(job, keep_dir, own)
        finally:
            if job.feed is not None:  # also when the run failed before TeX started: the
                job.feed.tex_stopped()  # writer gives up instead of waiting for it
        if then is not None:
            then(job.name, result)
        return result

    pool = ThreadPoolExecutor(max_workers=workers)
    stops = {job.name: JobStop(cancel) for job in jobs}
    futures = {job.name: pool.submit(run, job, stops[job.name]) for job in jobs}
    order = list(futures)
    try:
        wait(futures.values(), return_when=FIRST_EXCEPTION)
        failed = [n for n in order if futures[n].done() and futures[n].exception() is not None]
        if failed:
            # the first failure in document order, whichever TeX run ended first: the
            # documents after it are stopped, those before it have a few seconds to end
            # (a sheet names the question of an error in its text, the grid's worked keys
            # may not; one that hangs does not hold the build)
            first = order.index(failed[0])
            for name in order[first + 1 :]:
                stop(stops[name])
            wait([futures[n] for n in order[:first]], timeout=FAILURE_GRACE_SECONDS)
            stop(cancel)
            wait([futures[n] for n in order[:first]])
            for name in order[: first + 1]:
                problem = futures[name].exception()
                if problem is not None and not isinstance(problem, Cancelled):
                    raise problem
        return {name: f.result() for name, f in futures.items()}
    except BaseException:
        # the first failure, or Ctrl-C: start nothing new, stop the TeX runs still going
        stop(cancel)
        raise
    finally:
        pool.shutdown(wait=True)  # workers remove their temporary folders


def compile_all(jobs: list[TexJob], keep_dir: Path) -> dict[str, bytes]:
    """Compile documents in parallel; every PDF by name, or the first failure."""
    out = {}
    for name, result in compile_jobs(jobs, keep_dir).items():
        assert result.pdf is not None, "compile_all returns bytes: give jobs no output path"
        out[name] = result.pdf
    return out
