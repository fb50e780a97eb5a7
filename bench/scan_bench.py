"""Benchmark ``worksheetgen scan``: scanned pages read per second at 200 dpi on this
machine's cores, beside auto-multiple-choice's ``analyse`` on synthetic scans of AMC's own
sample exam, made the same way (tests/scansynth.py: rendered at the same resolution,
turned, scaled, shifted, blurred, noised, JPEG, grey background) and measured in the same
run. Without the Debian package ``auto-multiple-choice`` that pair is skipped, saying so.

    python bench/scan_bench.py                     # about 60 pages each, 2 processes
    python bench/scan_bench.py --pages 120 --jobs 2

Timings are wall-clock medians of ``--repeat`` runs of the whole command in a fresh
process (as a user runs it: start-up, reading, grading, writing). A script to run by hand,
not a test: its numbers depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.scansynth import Plan, distort, fill, render  # noqa: E402

DPI = 200
AMC_MODEL = Path("/usr/share/auto-multiple-choice/models/en/simple.tgz")


def cli() -> list[str]:
    exe = Path(sys.executable).with_name("worksheetgen")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "worksheetgen"]


def timed(cmd: list[str], repeat: int, **kwargs) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
        runs.append(time.perf_counter() - start)
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd[:2])} failed: {done.stderr.strip()[-2000:]}")
    return statistics.median(runs)


def _marks(boxes: list[dict], rng: random.Random) -> list[str | None]:
    kinds: list[str | None] = [None] * len(boxes)
    kinds[rng.randrange(len(boxes))] = rng.choice(["cross", "tick", "fill"])
    return kinds


def our_scans(work: Path, pages: int) -> tuple[Path, list[Path]]:
    """A --scannable class build of the bundled quiz (about 5 pages a sheet) and synthetic
    scans of its sheets, every box group marked."""
    versions = max(1, round(pages / 5))
    subprocess.run(
        [*cli(), "build", "--seed", "1", "--bank", str(ROOT / "banks" / "quiz.yaml")]
        + ["--versions", str(versions), "--scannable", "--out", str(work / "build"), "-q"],
        check=True,
    )
    folder = next(p for p in (work / "build").iterdir() if p.is_dir())
    import json

    positions = json.loads((folder / "scan.json").read_text())
    rng = random.Random(1)
    files = []
    ids = [s["id"] for s in json.loads((folder / "key.json").read_text())["sheets"]]
    for i, pdf in enumerate(folder / "versions" / f"{v}-sheet.pdf" for v in ids):
        images = render(pdf, DPI)
        sheet = next(s for s in positions["sheets"] if s["index"] == i)
        fill(images, {"sheets": [sheet]}, 0, DPI, _marks, rng, Plan())
        for p, image in enumerate(images):
            path = work / "scans" / f"s{i:03d}-p{p + 1}.jpg"
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(distort(image, rng, upside_down=p == 1))
            files.append(path)
    return folder, files


def amc_scans(work: Path, pages: int) -> tuple[Path, list[Path]] | None:
    """AMC's own sample exam (its 'simple' model, one page a copy), prepared by AMC, and
    synthetic scans of its pages made the same way; None without AMC."""
    if shutil.which("auto-multiple-choice") is None or not AMC_MODEL.exists():
        return None
    proj = work / "amc"
    (proj / "data").mkdir(parents=True)
    (proj / "cr").mkdir()
    with tarfile.open(AMC_MODEL) as tar:
        tar.extractall(proj, filter="data")
    amc = ["auto-multiple-choice"]
    subprocess.run(
        [*amc, "prepare", "--mode", "s", "--prefix", f"{proj}/", "simple.tex"]
        + ["--out-sujet", "DOC-sujet.pdf", "--out-corrige", "DOC-corrige.pdf"]
        + ["--out-calage", "DOC-calage.xy", "--data", str(proj / "data")]
        + ["--n-copies", str(pages)],
        check=True,
        capture_output=True,
        cwd=proj,
    )
    subprocess.run(
        [*amc, "meptex", "--src", "DOC-calage.xy", "--data", str(proj / "data")],
        check=True,
        capture_output=True,
        cwd=proj,
    )
    rng = random.Random(1)
    files = []
    from PIL import ImageDraw

    for p, image in enumerate(render(proj / "DOC-sujet.pdf", DPI)):
        draw = ImageDraw.Draw(image)  # a few pen strokes, as on our pages
        for _ in range(6):
            x, y = rng.uniform(0.2, 0.8) * image.width, rng.uniform(0.3, 0.8) * image.height
            draw.line([(x, y), (x + 20, y + 20)], fill=0, width=4)
        path = proj / "scans" / f"p{p + 1:03d}.jpg"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(distort(image, rng))
        files.append(path)
    return proj, files


def amc_analyse(proj: Path, files: list[Path], jobs: int) -> list[str]:
    return ["auto-multiple-choice", "analyse", "--projet", str(proj)] + [
        "--data",
        str(proj / "data"),
        "--cr",
        str(proj / "cr"),
        "--n-procs",
        str(jobs),
        *map(str, files),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=60, help="pages to scan on each side")
    ap.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="scan-bench-"))
    try:
        load = os.getloadavg()[0]
        print(
            f"worksheetgen scan benchmark: {os.cpu_count()} cores, --jobs {args.jobs}, "
            f"{DPI} dpi, median of {args.repeat}, load average {load:.1f}\n"
        )
        folder, files = our_scans(work, args.pages)
        cmd = [*cli(), "scan", *map(str, files), "--key", str(folder / "key.json")]
        cmd += ["--out", str(work / "out"), "--jobs", str(args.jobs), "-q"]
        ours = timed(cmd, args.repeat)
        rate = len(files) / ours
        met = "met" if rate >= 10 else "MISSED"
        print(
            f"{'worksheetgen scan (whole command)':42} {len(files):4d} pages {ours:7.2f} s "
            f"{rate:6.1f} pages/s (target >= 10: {met})"
        )
        amc = amc_scans(work, len(files))
        if amc is None:
            print("auto-multiple-choice analyse: skipped (the Debian package is not installed)")
            return
        proj, amc_files = amc
        theirs = timed(amc_analyse(proj, amc_files, args.jobs), args.repeat, cwd=proj)
        amc_rate = len(amc_files) / theirs
        print(
            f"{'auto-multiple-choice analyse (its sample)':42} {len(amc_files):4d} pages "
            f"{theirs:7.2f} s {amc_rate:6.1f} pages/s"
        )
        faster = rate / amc_rate
        verdict = "at least as fast: met" if faster >= 1 else "slower: MISSED"
        print(f"\nper page, worksheetgen scan is {faster:.2f}x AMC's analyse ({verdict})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
