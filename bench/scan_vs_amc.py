"""CPU per scanned page, side by side: ``worksheetgen scan`` on its own sheets against
auto-multiple-choice's ``analyse`` on its own, each pile made the same way at the same
resolution and saved in the same format (JPEG, PNG, or a copier's PDF of page images).

    python bench/scan_vs_amc.py                          # 300 dpi, 12 pages a side
    python bench/scan_vs_amc.py --dpi 200 --pages 24 --formats jpeg pdf

Ours: a --scannable class of the bundled quiz (``--versions``), every question marked with
tests/scansynth.py's pens. AMC's: its ``simple`` sample exam (one page a copy, 8 boxes a
page), made from the command line (``prepare``, ``meptex``), its pages rendered, a box of
each question marked with the same pens at the boxes AMC's layout records. Both piles are
then scanned the same way (tests/scansynth.py's ``distort``: turned, scaled, shifted,
blurred, noised, on a grey background) into JPEG (quality 70-90), PNG, or one PDF of the
JPEG pages (as a copier writes). AMC reads a PDF's pages after its own ``getimages`` splits
them into images: both steps are its cost. Each side runs in one process (``--jobs 1``,
``--n-procs 1``).

The measure is CPU seconds (user + system of the whole process tree, from the children's
``getrusage``), the median of ``--repeat`` runs, whatever else runs on the machine: per page
of the whole command (start-up, grading and the report included), and each page more (the
pile's CPU less a pile of its first page's, over the pages more: what a page costs once
the command has started). The target (issue 36) is on the page more. Needs the Debian
package ``auto-multiple-choice``; without it AMC's side is skipped, saying so.
A script to run by hand, not a test.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.scansynth import Plan, _pen, distort, fill, render  # noqa: E402

AMC_MODEL = Path("/usr/share/auto-multiple-choice/models/en/simple.tgz")
FORMATS = ("jpeg", "png", "pdf")


def cli() -> list[str]:
    exe = Path(sys.executable).with_name("worksheetgen")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "worksheetgen"]


def cpu_of(cmd: list[str], **kwargs) -> float:
    """CPU seconds (user + system) of ``cmd`` and every process it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd[:2])} failed: {done.stderr.strip()[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def save_pile(pages: list[bytes], folder: Path, fmt: str, dpi: int) -> list[Path]:
    """The scanned pages as files: one a page (JPEG or PNG), or one PDF of the pages."""
    from PIL import Image

    folder.mkdir(parents=True)
    if fmt == "pdf":
        images = [Image.open(io.BytesIO(p)).convert("L") for p in pages]
        pdf = folder / "copier.pdf"
        images[0].save(pdf, save_all=True, append_images=images[1:], resolution=dpi)
        return [pdf]
    files = []
    for i, page in enumerate(pages):
        files.append(folder / f"p{i + 1:03d}.{'jpg' if fmt == 'jpeg' else 'png'}")
        files[-1].write_bytes(page)
    return files


def _marks(boxes: list[dict], rng: random.Random) -> list[str | None]:
    kinds: list[str | None] = [None] * len(boxes)
    kinds[rng.randrange(len(boxes))] = rng.choice(["cross", "tick"])
    return kinds


def our_pages(work: Path, pages: int, dpi: int) -> tuple[Path, list, int]:
    """A --scannable class build of the bundled quiz (about 5 pages a sheet), its pages
    marked (every question), as images; with the number of boxes on them."""
    versions = max(1, -(-pages // 5))
    subprocess.run(
        [*cli(), "build", "--seed", "1", "--bank", str(ROOT / "banks" / "quiz.yaml")]
        + ["--versions", str(versions), "--scannable", "--out", str(work / "build"), "-q"],
        check=True,
    )
    folder = next(p for p in (work / "build").iterdir() if p.is_dir())
    positions = json.loads((folder / "scan.json").read_text())
    ids = [s["id"] for s in json.loads((folder / "key.json").read_text())["sheets"]]
    rng = random.Random(1)
    images, boxes = [], 0
    for i, sid in enumerate(ids):
        sheet = next(s for s in positions["sheets"] if s["index"] == i)
        rendered = render(folder / "versions" / f"{sid}-sheet.pdf", dpi)
        fill(rendered, {"sheets": [sheet]}, 0, dpi, _marks, rng, Plan())
        for page in sheet["pages"]:
            if len(images) < pages:
                boxes += len(page["boxes"])
                images.append(rendered[page["page"] - 1])
    return folder, images, boxes


def amc_pages(work: Path, pages: int, dpi: int) -> tuple[Path, list, int] | None:
    """AMC's 'simple' sample exam, ``pages`` copies of one page, prepared by AMC from the
    command line, rendered and marked (a box of each question) as images; None without
    AMC."""
    if shutil.which("auto-multiple-choice") is None or not AMC_MODEL.exists():
        return None
    proj = work / "amc"
    (proj / "data").mkdir(parents=True)
    with tarfile.open(AMC_MODEL) as tar:
        tar.extractall(proj, filter="data")
    amc = ["auto-multiple-choice"]
    data = ["--data", str(proj / "data")]
    subprocess.run(
        [*amc, "prepare", "--mode", "s", "--prefix", f"{proj}/", "simple.tex"]
        + ["--out-sujet", "DOC-sujet.pdf", "--out-corrige", "DOC-corrige.pdf"]
        + ["--out-calage", "DOC-calage.xy", *data, "--n-copies", str(pages)],
        check=True,
        capture_output=True,
        cwd=proj,
    )
    subprocess.run(
        [*amc, "meptex", "--src", "DOC-calage.xy", *data],
        check=True,
        capture_output=True,
        cwd=proj,
    )
    from PIL import ImageDraw

    rng = random.Random(1)
    images = render(proj / "DOC-sujet.pdf", dpi)
    layout = sqlite3.connect(proj / "data" / "layout.sqlite")
    pages_of = {
        (student, page): i
        for i, (student, page) in enumerate(
            layout.execute("SELECT student, page FROM layout_page ORDER BY student, page")
        )
    }
    boxes = 0
    rows = layout.execute(
        "SELECT b.student, b.page, b.question, b.xmin, b.ymin, b.xmax, p.dpi FROM layout_box b "
        "JOIN layout_page p ON p.student = b.student AND p.page = b.page "
        "WHERE b.role = 1 ORDER BY b.student, b.page, b.question, b.answer"
    ).fetchall()
    questions: dict[tuple[int, int, int], list[tuple[float, float, float]]] = {}
    for student, page, question, x0, y0, x1, layout_dpi in rows:
        scale = dpi / layout_dpi
        questions.setdefault((student, page, question), []).append(
            (x0 * scale, y0 * scale, (x1 - x0) * scale)
        )
        boxes += 1
    for (student, page, _), options in questions.items():
        x, y, size = rng.choice(options)
        image = images[pages_of[(student, page)]]
        pen = rng.choice(["cross", "tick"])
        _pen(ImageDraw.Draw(image), pen, x, y, size, rng)
    layout.close()
    return proj, images, boxes


def scanned(images: list, rng: random.Random, fmt: str) -> list[bytes]:
    """Each page as a copier scans it: JPEG for a JPEG or PDF pile, PNG for a PNG one."""
    return [distort(im, rng, jpeg=fmt != "png") for im in images]


def ours_cmd(folder: Path, files: list[Path], out: Path) -> list[str]:
    return [*cli(), "scan", *map(str, files), "--key", str(folder / "key.json")] + [
        "--out",
        str(out),
        "--jobs",
        "1",
        "-q",
    ]


def amc_cpu(proj: Path, files: list[Path], fmt: str) -> float:
    """One AMC read of the pile: ``getimages`` first for a PDF (its pages to images)."""
    for old in ("cr", "scans"):
        shutil.rmtree(proj / old, ignore_errors=True)
    (proj / "cr").mkdir()
    capture = proj / "data" / "capture.sqlite"
    capture.unlink(missing_ok=True)
    cpu = 0.0
    data = ["--data", str(proj / "data")]
    if fmt == "pdf":
        listing = proj / "list.txt"
        listing.write_text("")
        (proj / "scans").mkdir()
        cpu += cpu_of(
            ["auto-multiple-choice", "getimages", "--list", str(listing)]
            + ["--copy-to", str(proj / "scans"), *map(str, files)],
            cwd=proj,
        )
        files_args = ["--liste-fichiers", str(listing)]
    else:
        files_args = [*map(str, files)]
    cpu += cpu_of(
        ["auto-multiple-choice", "analyse", "--projet", str(proj), *data]
        + ["--cr", str(proj / "cr"), "--n-procs", "1", *files_args],
        cwd=proj,
    )
    return cpu


def amc_read(proj: Path) -> int:
    """How many pages AMC's last analyse recognised."""
    db = sqlite3.connect(proj / "data" / "capture.sqlite")
    try:
        return int(db.execute("SELECT COUNT(*) FROM capture_page").fetchone()[0])
    finally:
        db.close()


def versions() -> str:
    import numpy
    import PIL
    import pypdfium2

    amc = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Version}", "auto-multiple-choice"],
        capture_output=True,
        text=True,
    ).stdout
    return (
        f"Python {platform.python_version()}, NumPy {numpy.__version__}, Pillow "
        f"{PIL.__version__}, pypdfium2 {pypdfium2.version.PYPDFIUM_INFO}, "
        f"auto-multiple-choice {amc or 'not installed'}"
    )


def _per_page(runs: list[float], pages: int) -> float:
    return statistics.median(runs) / pages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=12, help="pages on each side (default 12)")
    ap.add_argument("--dpi", type=int, default=300, help="scan resolution (default 300)")
    ap.add_argument("--formats", nargs="+", choices=FORMATS, default=list(FORMATS))
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="scan-vs-amc-"))
    try:
        cpu_model = next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            platform.processor(),
        )
        print(
            f"scan vs AMC: {os.cpu_count()} cores ({cpu_model}), {args.dpi} dpi, "
            f"{args.pages} pages a side, one process each, median of {args.repeat}, "
            f"load average {os.getloadavg()[0]:.1f}\n{versions()}\n"
        )
        folder, ours, our_boxes = our_pages(work, args.pages, args.dpi)
        amc = amc_pages(work, args.pages, args.dpi)
        print(
            f"boxes a page: worksheetgen {our_boxes / len(ours):.1f}"
            + ("" if amc is None else f", AMC {amc[2] / len(amc[1]):.1f}")
        )
        print(
            f"\nCPU seconds a page: whole command (a page more)\n{'format':7} "
            f"{'worksheetgen':>22} {'AMC':>22} {'AMC / ours':>14}  AMC read"
        )
        for fmt in args.formats:
            rng = random.Random(2)
            pile = scanned(ours, rng, fmt)
            files = save_pile(pile, work / f"ours-{fmt}", fmt, args.dpi)
            one = save_pile(pile[:1], work / f"ours1-{fmt}", fmt, args.dpi)

            def ours_run(scans: list[Path]) -> float:
                out = work / "out"
                try:
                    return cpu_of(ours_cmd(folder, scans, out))
                finally:
                    shutil.rmtree(out, ignore_errors=True)

            mine = _per_page([ours_run(files) for _ in range(args.repeat)], len(ours))
            mine_one = statistics.median(ours_run(one) for _ in range(args.repeat))
            mine_more = (mine * len(ours) - mine_one) / (len(ours) - 1)
            if amc is None:
                print(f"{fmt:7} {mine:9.3f} ({mine_more:.3f}) s   (AMC not installed)")
                continue
            proj, images, _ = amc
            amc_pile = scanned(images, rng, fmt)
            theirs_files = save_pile(amc_pile, work / f"amc-{fmt}", fmt, args.dpi)
            theirs_one = save_pile(amc_pile[:1], work / f"amc1-{fmt}", fmt, args.dpi)
            theirs = _per_page(
                [amc_cpu(proj, theirs_files, fmt) for _ in range(args.repeat)], len(images)
            )
            read = amc_read(proj)
            one_cpu = statistics.median(amc_cpu(proj, theirs_one, fmt) for _ in range(args.repeat))
            theirs_more = (theirs * len(images) - one_cpu) / (len(images) - 1)
            ratio = theirs_more / mine_more
            met = "met" if ratio >= 2 else "MISSED"
            print(
                f"{fmt:7} {mine:9.3f} ({mine_more:.3f}) s {theirs:9.3f} ({theirs_more:.3f}) s "
                f"{theirs / mine:5.2f}x ({ratio:.2f}x)  {read}/{len(images)} "
                f"(target >= 2x a page more: {met})"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
