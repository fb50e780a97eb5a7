"""The preamble format cache.

Loading LaTeX and the packages of the preamble is most of the work of a short document
(about 0.37 of the 1.07 billion instructions of a one-page run here). The preamble of the
bundled templates is dumped once into a TeX format in the cache folder, as mylatexformat
does, and later runs of pdfLaTeX start from it: the document is handed to TeX with its
preamble blanked out (same line numbers). The format's folder is named by the engine and the
base format it was made from, so an updated TeX Live makes new ones.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
import stat
import subprocess
import threading
import zlib
from functools import lru_cache
from pathlib import Path

from worksheetgen.files import sweep_stale, tex_folder
from worksheetgen.speed.cache import cache_root, private_cache_folder, seal, sealed, store_raw
from worksheetgen.tex import process
from worksheetgen.tex.process import tex_env

FORMAT_TIMEOUT_SECONDS = 60
MAX_FORMATS = 3  # kept per TeX installation, the most recently used (about 18 MB each)
# what TeX says when it cannot load a format (never a document's own error)
FORMAT_TROUBLE = re.compile(
    r"Fatal format file error|^---! .*\.fmt\b|Could not undump|"
    r"can't find the format file",
    re.M,
)
#: the last four bytes of every format web2c TeX dumps (TeX's check word 69069, big-endian):
#: a format cut short (a power cut while it was stored) does not end in them
_FORMAT_END = (69069).to_bytes(4, "big")
_format_lock = threading.Lock()
_formats_failed: set[str] = set()


def split_preamble(text: str) -> tuple[str, str] | None:
    """The preamble (everything before ``\\begin{document}``) and the rest, or None."""
    at = text.find("\\begin{document}")
    if at < 0:
        return None
    return text[:at], text[at:]


def blank_preamble(text: str) -> str:
    """The document with its preamble replaced by as many empty lines (same line numbers)."""
    parts = split_preamble(text)
    if parts is None:
        return text
    return "\n" * parts[0].count("\n") + parts[1]


def _installation(engine_path: str) -> str | None:
    """What a dumped format depends on besides its preamble: the engine binary and the base
    LaTeX format (both change when TeX Live is updated); None when they cannot be found.
    Asked once per process: the documents of a class start at once, and the first asks
    kpsewhich while the others wait for its answer."""
    with _installation_lock:
        return _installation_of(engine_path)


_installation_lock = threading.Lock()


@lru_cache(maxsize=4)
def _installation_of(engine_path: str) -> str | None:
    kpsewhich = shutil.which("kpsewhich")
    if kpsewhich is None:
        return None
    try:
        found = subprocess.run(
            [kpsewhich, "-engine=pdftex", "-progname=pdflatex", "pdflatex.fmt"],
            capture_output=True,
            text=True,
            timeout=20,
            env=tex_env(),
            check=False,
        ).stdout.strip()
        parts = []
        for path in (os.path.realpath(engine_path), found):
            info = os.stat(path)
            parts.append(f"{path}:{info.st_size}:{info.st_mtime_ns}")
    except (OSError, subprocess.SubprocessError):
        return None
    return "|".join(parts) if found else None


def _format_folder(engine_path: str) -> Path | None:
    installed = _installation(engine_path)
    # formats stored compressed before this tag were left in a folder of their own
    return (
        None
        if installed is None
        else private_cache_folder("tex-formats", installed + "|stored-inflated")
    )


def preamble_format(
    engine_path: str, preamble: str, cancel: threading.Event | None = None
) -> str | None:
    """The pdfLaTeX format holding ``preamble`` (a path without ``.fmt``, for ``-fmt``),
    dumped on first use; None when there is no cache folder or the preamble cannot be
    dumped (the document is then compiled as it is)."""
    if cache_root() is None:
        return None
    folder = _format_folder(engine_path)
    if folder is None:
        return None
    name = (
        "ws-"
        + hashlib.blake2b(preamble.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    )
    fmt = folder / f"{name}.fmt"
    with _format_lock:  # the sheet and the key share a preamble: dumped once
        if str(fmt) in _formats_failed:
            return None
        if _usable_format(fmt):
            try:
                os.utime(fmt)  # recently used: kept when old ones are removed
            except OSError:
                pass
            return str(folder / name)
        forget_format(str(folder / name), locked=True)  # damaged or not a file: made again
        if not _dump_format(engine_path, preamble, folder, name, cancel):
            _formats_failed.add(str(fmt))
            return None
        _prune_formats(folder, fmt)
    return str(folder / name)


def _usable_format(fmt: Path) -> bool:
    """True when ``fmt`` is a whole format TeX can load: a regular file (a FIFO would hang
    TeX) that ends in TeX's check word (a format cut short makes every run fail with
    "Fatal format file error")."""
    if not sealed(fmt):  # ours, nobody else's to write, and whole (its digest checked)
        return False
    try:
        info = os.lstat(fmt)
        if not stat.S_ISREG(info.st_mode) or info.st_size < 1024:
            return False
        with open(fmt, "rb") as fh:
            head = fh.read(2)
            fh.seek(-4, os.SEEK_END)
            tail = fh.read(4)
    except OSError:
        return False
    return head == b"\x1f\x8b" or tail == _FORMAT_END  # gzipped: TeX checks it itself


def _dump_format(
    engine_path: str, preamble: str, folder: Path, name: str, cancel: threading.Event | None
) -> bool:
    """Dump LaTeX plus ``preamble`` into ``folder/name.fmt`` (written whole or not at all)."""
    with tex_folder("fmt") as work:
        (work / "pre.tex").write_text(preamble + "\n\\dump\n", encoding="utf-8")
        cmd = [
            engine_path,
            "-ini",
            "-interaction=nonstopmode",
            "-halt-on-error",
            "-no-shell-escape",
            f"-jobname={name}",
            "&pdflatex pre.tex",
        ]
        returncode, _ = process.run_tex(cmd, work, FORMAT_TIMEOUT_SECONDS, cancel)
        made = work / f"{name}.fmt"
        if returncode != 0 or not made.exists():
            return False
        target = folder / f"{name}.fmt"
        # TeX reads the format as it is: its digest is kept beside it, in name.fmt.sum
        return store_raw(target, _inflated(made.read_bytes())) and seal(target)


def _inflated(data: bytes) -> bytes:
    """A dumped format as it is stored: uncompressed. pdfTeX gzips the formats it dumps and
    reads plain ones as they are; inflating the 18 MB on every run cost 0.48 of the 0.69
    billion instructions of a one-line document here."""
    if data[:2] != b"\x1f\x8b":
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error):
        return data  # TeX reads it compressed as well


def _prune_formats(folder: Path, keep: Path) -> None:
    """Remove all but the most recently used formats of an installation (and what a build
    killed while it stored one left)."""
    sweep_stale(folder)
    try:
        made = sorted(folder.glob("ws-*.fmt"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in made[MAX_FORMATS:]:
            if old != keep:
                old.unlink(missing_ok=True)
                Path(f"{old}.sum").unlink(missing_ok=True)
    except OSError:
        pass


def forget_format(fmt: str, locked: bool = False) -> None:
    """Remove a format TeX could not read (the next document dumps it again); ``locked``:
    the caller holds the format lock."""
    if not locked:
        with _format_lock:
            forget_format(fmt, locked=True)
        return
    for end in (".fmt", ".fmt.sum"):
        try:
            os.unlink(fmt + end)
        except OSError:
            pass
