"""Compile LaTeX to PDF: in a private temporary folder, without shell escape, with a time limit.

Documents are compiled in parallel on the available cores, one TeX process per document
(a whole class is one document). A failure names the document, shows the first LaTeX error
with its line, and keeps the .tex and the log at a path it prints.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from worksheetgen.errors import CompileError

TEX_TIMEOUT_SECONDS = 120
INSTALL_HINT = ("install TeX Live (Debian/Ubuntu: sudo apt-get install -y "
                "--no-install-recommends texlive-latex-base texlive-latex-recommended "
                "texlive-fonts-recommended texlive-pictures latexmk) or pass --no-pdf")


@dataclass(frozen=True)
class TexJob:
    """One document to compile: its name (for messages) and LaTeX source."""

    name: str
    source: str


def find_engine() -> str | None:
    """The pdflatex executable, or None when TeX is not installed."""
    return shutil.which("pdflatex")


def require_engine() -> str:
    """The pdflatex executable, or a CompileError that says how to get one."""
    engine = find_engine()
    if engine is None:
        raise CompileError("no TeX engine (pdflatex) found on PATH; " + INSTALL_HINT)
    return engine


_ERROR_RE = re.compile(r"^(?:! |(?:\./)?[^:\n]*\.(?:tex|sty|cls):(\d+): )(.*)$", re.M)
_LINE_RE = re.compile(r"^l\.(\d+)", re.M)


def first_error(log: str) -> str:
    """The first LaTeX error in a log, with its source line where the log gives one."""
    m = _ERROR_RE.search(log)
    if not m:
        return "TeX stopped without a readable error"
    message = m.group(2).strip()
    line = m.group(1)
    after = _LINE_RE.search(log, m.end())
    if after:
        line = after.group(1)
    return f"line {line}: {message}" if line else message


def _tex_env() -> dict[str, str]:
    env = dict(os.environ)
    # paranoid file access: no reading or writing outside the working folder
    env.update(openin_any="p", openout_any="p", shell_escape="f", TEXMFOUTPUT="")
    return env


def compile_one(job: TexJob, engine: str, keep_dir: Path) -> bytes:
    """Compile one document and return the PDF's bytes."""
    with tempfile.TemporaryDirectory(prefix="worksheetgen-tex-") as tmp:
        tex = Path(tmp) / "doc.tex"
        tex.write_text(job.source, encoding="utf-8")
        cmd = [engine, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
               "-file-line-error", "doc.tex"]
        try:
            proc = subprocess.run(cmd, cwd=tmp, env=_tex_env(), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  timeout=TEX_TIMEOUT_SECONDS, start_new_session=True)
            log_text = proc.stdout.decode("utf-8", "replace")
            ok = proc.returncode == 0 and (Path(tmp) / "doc.pdf").exists()
            reason = None if ok else first_error(_read_log(Path(tmp)) or log_text)
        except subprocess.TimeoutExpired:
            ok, reason = False, f"TeX ran longer than {TEX_TIMEOUT_SECONDS} s and was stopped"
        if ok:
            return (Path(tmp) / "doc.pdf").read_bytes()
        keep_dir.mkdir(parents=True, exist_ok=True)
        kept_tex = keep_dir / f"{job.name}.tex"
        kept_tex.write_text(job.source, encoding="utf-8")
        log = Path(tmp) / "doc.log"
        if log.exists():
            shutil.copyfile(log, keep_dir / f"{job.name}.log")
        raise CompileError(f"{reason}; kept {kept_tex} and its .log", file=f"{job.name}.tex")


def _read_log(folder: Path) -> str:
    log = folder / "doc.log"
    return log.read_text("utf-8", "replace") if log.exists() else ""


def compile_all(jobs: list[TexJob], keep_dir: Path) -> dict[str, bytes]:
    """Compile documents in parallel; every PDF by name, or the first failure."""
    engine = require_engine()
    workers = max(1, min(len(jobs), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {job.name: pool.submit(compile_one, job, engine, keep_dir) for job in jobs}
        return {name: f.result() for name, f in futures.items()}
