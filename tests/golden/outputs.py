"""Digests of every file worksheetgen builds, for checking that a refactoring changes nothing.

The matrix is every bundled bank at seeds 1, 42 and 2024, each as one sheet, as a class of the
30 students in ``roster.csv`` (names with TeX specials, Greek and CJK letters) and as 12 versions.
Text outputs (.tex, .md, .json) are compared byte for byte; the manifest without the fields that
name this machine (library versions, absolute bank paths). PDFs are compared as page images
(``pdftoppm`` at a low resolution), recorded together with the TeX and Poppler versions that
made them, since another TeX Live sets other pixels.

``python -m tests.golden.outputs --record`` rewrites ``digests.json`` (and, with ``--pdf``,
``pdf-pages.json``); the tests in ``tests/golden/test_golden_outputs.py`` compare against them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BANKS = ("default", "note", "practice", "slips", "quiz")
SEEDS = (1, 42, 2024)
KINDS = ("sheet", "roster", "versions")
TEXT_SUFFIXES = (".tex", ".md", ".json")
MACHINE_FIELDS = ("worksheetgen", "numpy", "sympy", "python")
DPI = "30"


@dataclass(frozen=True)
class Case:
    """One build of the matrix: a bundled bank, a seed and a kind of build."""

    bank: str
    seed: int
    kind: str

    @property
    def name(self) -> str:
        return f"{self.bank}-seed{self.seed}-{self.kind}"

    def arguments(self) -> list[str]:
        """The ``worksheetgen build`` options for this case (without --out and --no-pdf)."""
        args = ["--seed", str(self.seed), "--bank", str(ROOT / "banks" / f"{self.bank}.yaml")]
        if self.kind == "roster":
            args += ["--roster", str(HERE / "roster.csv")]
        elif self.kind == "versions":
            args += ["--versions", "12"]
        return args


def cases() -> Iterator[Case]:
    """Every case of the matrix, in a fixed order."""
    for bank in BANKS:
        for seed in SEEDS:
            for kind in KINDS:
                yield Case(bank, seed, kind)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def normalised_manifest(data: bytes) -> bytes:
    """The manifest without what names this machine: library versions, bank and roster paths."""
    manifest = json.loads(data)
    for field in MACHINE_FIELDS:
        manifest.pop(field, None)
    options = manifest.get("options", {})
    if isinstance(options, dict) and options.get("roster"):
        options["roster"] = Path(options["roster"]).name
    for bank in manifest.get("banks", []):
        if isinstance(bank, dict) and "path" in bank:
            bank["path"] = Path(bank["path"]).name
    return json.dumps(manifest, indent=2, sort_keys=True).encode()


def run_build(case: Case, out: Path, pdf: bool) -> Path:
    """Build ``case`` into ``out`` with the installed package; the build folder it made."""
    command = [
        sys.executable,
        "-m",
        "worksheetgen",
        "build",
        *case.arguments(),
        "--out",
        str(out),
        "-q",
    ]
    if not pdf:
        command.append("--no-pdf")
    env = dict(os.environ, PYTHONHASHSEED="0")
    subprocess.run(command, check=True, cwd=ROOT, env=env, capture_output=True)
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return folder


def text_digests(folder: Path) -> dict[str, str]:
    """Relative path -> digest of every text output of one build folder."""
    found: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES:
            continue
        data = path.read_bytes()
        if path.name == "manifest.json":
            data = normalised_manifest(data)
        found[str(path.relative_to(folder))] = sha256(data)
    return found


def page_digests(pdf: Path) -> list[str]:
    """One digest per page image of ``pdf``, rendered in grey at a low resolution."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["pdftoppm", "-r", DPI, "-gray", str(pdf), f"{tmp}/p"], check=True)
        return [sha256(p.read_bytes())[:20] for p in sorted(Path(tmp).iterdir())]


def pdf_digests(folder: Path) -> dict[str, list[str]]:
    """Relative path -> page-image digests of every PDF of one build folder."""
    return {str(p.relative_to(folder)): page_digests(p) for p in sorted(folder.rglob("*.pdf"))}


def toolchain() -> str:
    """The TeX and Poppler versions that set the recorded pixels."""

    def first_line(*command: str) -> str:
        done = subprocess.run(command, capture_output=True, text=True)
        return (done.stdout or done.stderr).splitlines()[0].strip()

    return " | ".join(
        (
            first_line("pdflatex", "--version"),
            first_line("lualatex", "--version"),
            first_line("pdftoppm", "-v"),
        )
    )


def digests_of(case: Case, pdf: bool) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The text digests and (with ``pdf``) the page digests of one case, built afresh."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = run_build(case, Path(tmp), pdf)
        return text_digests(folder), (pdf_digests(folder) if pdf else {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="rewrite the digest files")
    parser.add_argument("--pdf", action="store_true", help="also build and record the PDFs")
    args = parser.parse_args()
    if not args.record:
        parser.error("nothing to do: pass --record")
    if args.pdf and shutil.which("pdflatex") is None:
        parser.error("--pdf needs TeX")
    texts: dict[str, dict[str, str]] = {}
    pages: dict[str, dict[str, list[str]]] = {}
    for case in cases():
        texts[case.name], _ = digests_of(case, pdf=False)  # the manifest says pdf: false
        if args.pdf:
            pages[case.name] = digests_of(case, pdf=True)[1]
    (HERE / "digests.json").write_text(json.dumps(texts, indent=1, sort_keys=True) + "\n")
    if args.pdf:
        record = {"toolchain": toolchain(), "pages": pages}
        (HERE / "pdf-pages.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
