"""Benchmark worksheetgen: start-up, whole-class builds with and without PDFs, and the naive
one-TeX-process-per-student compile of the same LaTeX, printed side by side.

    python bench/bench.py                 # --help, 30 and 100 students, PDFs, naive TeX
    python bench/bench.py --sizes 30 --repeat 1 --no-naive
    python bench/bench.py --sizes 30,1000 --repeat 1 --no-naive   # memory: flat in the class
    python bench/bench.py --tex-ratio 5   # the build against TeX alone, alternating

Every build runs in a fresh process, as a user would run it. The class builds use the bundled
default bank (5 questions) and a roster of Latin names (pdfLaTeX); ``--unicode`` uses Greek,
Cyrillic and CJK names as well (LuaLaTeX). Timings are wall-clock medians of ``--repeat``
runs; "in-process" times exclude Python's start-up and imports; the peak memory is that of
the build's largest process (Linux reports it in kilobytes). This is a script to run by
hand, not a test: its numbers depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

LATIN = [
    "Ada Lovelace",
    "Alan Turing",
    "Grace Hopper",
    "Edsger Dijkstra",
    "Barbara Liskov",
    "Donald Knuth",
    "Frances Allen",
    "John Backus",
    "Margaret Hamilton",
    "Zoë O'Brien",
]
UNICODE = ["Ελένη Παπαδοπούλου", "Иван Петров", "李雷", "Łukasz Nowak", "Ñúñez García"]

# run inside a fresh interpreter: time one build in-process and print its numbers as JSON
CHILD = r"""
import json, sys, time
from worksheetgen.speed.process import tune_process
tune_process()  # as the command line does (cli.main)
t0 = time.perf_counter()
from worksheetgen.pipeline.build import BuildOptions, build
# the imports a build needs, timed apart
import worksheetgen.solve.item, worksheetgen.render.documents
t1 = time.perf_counter()
r = build(BuildOptions(seed=42, roster=sys.argv[1], out=sys.argv[2], pdf=sys.argv[3] == "1",
                       jobs=None if sys.argv[4] == "auto" else int(sys.argv[4])))
t2 = time.perf_counter()
from worksheetgen.pipeline.stream import workers_for
workers = workers_for(r.sheet_count, None if sys.argv[4] == "auto" else int(sys.argv[4]))
if r.details.seconds.get("pdf") is not None and sys.argv[4] == "auto":
    workers = 1  # a build that streams to TeX draws in one process
print(json.dumps({"imports": t1 - t0, "build": t2 - t1, "variants": r.item_count,
                  "workers": workers,
                  "stages": r.details.seconds, "engines": r.details.engines,
                  "folder": str(r.folder)}), flush=True)
import os
os._exit(0)  # as the installed command ends (cli.run: no teardown of the heap)
"""


# Child processes run as an installed program does: Python may cache compiled modules (some
# shells export PYTHONDONTWRITEBYTECODE, which would recompile worksheetgen on every run).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def median_time(cmd: list[str], repeat: int, **kwargs) -> float:
    """The median wall-clock seconds of running ``cmd``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=ENV, **kwargs)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cli() -> list[str]:
    """How to run worksheetgen: the installed command, else ``python -m worksheetgen``."""
    found = shutil.which("worksheetgen")
    return [found] if found else [sys.executable, "-m", "worksheetgen"]


def write_roster(path: Path, n: int, unicode: bool) -> Path:
    names = LATIN + UNICODE if unicode else LATIN
    rows = [f'"{names[i % len(names)]} {i // len(names) + 1}",s{i:04d}' for i in range(n)]
    path.write_text("name,id\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def child_build(roster: Path, out: Path, pdf: bool, repeat: int, jobs: str = "auto") -> dict:
    """Build in fresh processes (``jobs``: "auto" for the default plan, else --jobs); the run
    with the median total time."""
    runs = []
    for _ in range(repeat):
        shutil.rmtree(out, ignore_errors=True)
        with tempfile.TemporaryFile("w+", encoding="utf-8") as stdout:
            start = time.perf_counter()
            proc = subprocess.Popen(
                [sys.executable, "-c", CHILD, str(roster), str(out), "1" if pdf else "0", jobs],
                stdout=stdout,
                env=ENV,
            )
            # wait4, not wait: its resource usage gives the peak memory of the build (the
            # largest of its process and the processes it waited for, TeX among them)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode:
                raise SystemExit(f"the build failed (exit {proc.returncode})")
            stdout.seek(0)
            data = json.loads(stdout.read().strip().splitlines()[-1])
        data["wall"] = wall
        data["peak_mb"] = usage.ru_maxrss / 1024  # kilobytes on Linux
        runs.append(data)
    runs.sort(key=lambda d: d["wall"])
    return runs[len(runs) // 2]


def split_class_tex(source: str) -> list[str]:
    """The per-student documents inside a combined class document (head + one sheet + end)."""
    head, _, rest = source.partition("\n\\wsstartsheet\n")
    bodies = ("\\wsstartsheet\n" + rest).split("\n\\wsstartsheet\n")
    docs = []
    for body in bodies:
        body = body.removesuffix("\\end{document}\n")
        if not body.startswith("\\wsstartsheet"):
            body = "\\wsstartsheet\n" + body
        docs.append(head + "\n" + body + "\\end{document}\n")
    return docs


def combined_compile(folder: Path, engine: str) -> float:
    """Compile the two combined documents alone, both at once, as a build compiles them
    (from the cached preamble format where pdfLaTeX is used): the TeX time no build of these
    documents can go below (with one TeX run per document)."""
    from worksheetgen.tex.run import TexJob, compile_jobs

    work = Path(tempfile.mkdtemp(prefix="wsg-tex-"))
    jobs = [
        TexJob(
            name,
            path=folder / f"{name}.tex",
            engine=engine,
            pages=True,
            output=work / f"{name}.pdf",
        )
        for name in ("sheets", "keys")
    ]
    compile_jobs(jobs, work / "failed")  # once first, so the format exists
    start = time.perf_counter()
    compile_jobs(jobs, work / "failed")
    elapsed = time.perf_counter() - start
    shutil.rmtree(work, ignore_errors=True)
    return elapsed


def tex_alone(folder: Path, engine: str, n: int) -> tuple[float, float]:
    """Compile the build's own documents (sheets, keys and the answer grid, from its folder)
    at once, as the build compiles them (its TeX command line, the same jobs and the cached
    preamble format): the wall-clock and the CPU seconds (TeX's processes) of that alone."""
    from worksheetgen.tex.run import TexJob, compile_jobs

    work = Path(tempfile.mkdtemp(prefix="wsg-tex-"))
    jobs = [
        TexJob(
            name,
            path=folder / f"{name}.tex",
            engine=engine,
            pages=name != "keys-grid",
            sheets=n,
            output=work / f"{name}.pdf",
            formats=True,
        )
        for name in ("sheets", "keys", "keys-grid")
    ]
    before = os.times()
    start = time.perf_counter()
    compile_jobs(jobs, work / "failed")
    wall = time.perf_counter() - start
    after = os.times()
    shutil.rmtree(work, ignore_errors=True)
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def whole_build(
    roster: Path, out: Path, bank: str | None, extra: tuple[str, ...] = ()
) -> tuple[float, float, Path]:
    """``worksheetgen build`` for the roster, as a user runs it: wall-clock and CPU seconds
    (the command, its workers and its TeX processes), and the class folder."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [*cli(), "build", "--seed", "42", "--roster", str(roster), "--out", str(out), "-q"]
    cmd += extra
    if bank:
        cmd += ["--bank", bank]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"the build failed: {' '.join(cmd)}")
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return wall, usage.ru_utime + usage.ru_stime, folder


def tex_ratio(tmp: Path, rounds: int, unicode: bool, bank: str | None) -> None:
    """The 30-student class with every PDF against TeX alone on the build's own documents,
    alternating (build, TeX, build, TeX ...), after one unmeasured build of each."""
    roster = write_roster(tmp / "ratio30.csv", 30, unicode)
    _, _, folder = whole_build(roster, tmp / "ratio-warm", bank)
    manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    engine = "lualatex" if "lualatex" in json.dumps(manifest.get("engines", {})) else "pdflatex"
    if engine == "pdflatex" and unicode:
        engine = "lualatex"
    tex_alone(folder, engine, 30)
    builds: list[tuple[float, float]] = []
    texes: list[tuple[float, float]] = []
    pythons: list[float] = []
    for _ in range(rounds):
        wall, cpu, _ = whole_build(roster, tmp / "ratio-out", bank)
        builds.append((wall, cpu))
        texes.append(tex_alone(folder, engine, 30))
        # the build's own work without TeX, in one process: what it adds to TeX's
        _, cpu, _ = whole_build(roster, tmp / "ratio-py", bank, ("--no-pdf", "--jobs", "1"))
        pythons.append(cpu)
    bw = statistics.median(w for w, _ in builds)
    bc = statistics.median(c for _, c in builds)
    tw = statistics.median(w for w, _ in texes)
    tc = statistics.median(c for _, c in texes)
    pc = statistics.median(pythons)
    cores = os.cpu_count() or 1
    load = os.getloadavg()[0]
    print(
        f"30 students, every PDF ({bank or 'the default bank'}, {engine}), alternating, "
        f"median of {rounds}, load average {load:.1f}"
    )
    print(f"  worksheetgen build (whole command)  wall {bw:6.2f} s   CPU {bc:6.2f} s")
    print(f"  TeX alone (its 3 documents)        wall {tw:6.2f} s   CPU {tc:6.2f} s")
    verdict = "met" if bw / tw <= 1.3 else "MISSED"
    print(f"  the build without PDFs, one process  CPU {pc:6.2f} s")
    print(f"  ratio: wall {bw / tw:.2f} (target <= 1.3: {verdict}), CPU {bc / tc:.2f}")
    # however well the build's work and TeX's share the cores, the build takes at least
    # their CPU together spread over every core (TeX's own start-up and the cutting of the
    # per-sheet PDFs come on top)
    floor = (tc + pc) / cores / tw
    print(f"  lowest wall ratio these CPU times allow on {cores} cores: {floor:.2f}")
    print("  each round (build wall/CPU, TeX wall/CPU):")
    for (a, b), (c, d) in zip(builds, texes, strict=True):
        print(f"    {a:5.2f} {b:5.2f}   {c:5.2f} {d:5.2f}")


def naive_compile(folder: Path, engine: str, workers: int) -> tuple[float, int]:
    """Compile every student's sheet and key as its own TeX process (``workers`` at a time)."""
    docs = []
    for name in ("sheets.tex", "keys.tex"):
        docs += split_class_tex((folder / name).read_text("utf-8"))
    work = Path(tempfile.mkdtemp(prefix="wsg-naive-"))

    def run(i: int) -> None:
        d = work / f"d{i}"
        d.mkdir()
        (d / "doc.tex").write_text(docs[i], encoding="utf-8")
        subprocess.run(
            [engine, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
            cwd=d,
            check=True,
            stdout=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(run, range(len(docs))))
    elapsed = time.perf_counter() - start
    shutil.rmtree(work, ignore_errors=True)
    return elapsed, len(docs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="30,100", help="class sizes (default 30,100)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    ap.add_argument("--no-pdf", action="store_true", help="skip every TeX measurement")
    ap.add_argument("--no-naive", action="store_true", help="skip the naive TeX compile")
    ap.add_argument(
        "--unicode", action="store_true", help="Greek, Cyrillic and CJK names too (LuaLaTeX)"
    )
    ap.add_argument(
        "--tex-ratio",
        type=int,
        metavar="ROUNDS",
        help="only the 30-student build against TeX alone on its own documents, alternating",
    )
    ap.add_argument("--bank", help="with --tex-ratio: the bank to build (default: the default)")
    args = ap.parse_args()
    if args.tex_ratio:
        tmp = Path(tempfile.mkdtemp(prefix="wsg-bench-"))
        tex_ratio(tmp, args.tex_ratio, args.unicode, args.bank)
        shutil.rmtree(tmp, ignore_errors=True)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    cores = os.cpu_count() or 1
    tmp = Path(tempfile.mkdtemp(prefix="wsg-bench-"))
    results: list[tuple[str, str, str]] = []

    def row(what: str, value: str, note: str = "") -> None:
        results.append((what, value, note))
        print(f"{what:<46} {value:>14}   {note}", flush=True)

    print(
        f"worksheetgen benchmark: {cores} cores, Python {sys.version.split()[0]}, "
        f"median of {args.repeat}\n"
    )
    help_t = median_time([*cli(), "--help"], args.repeat)
    click_t = median_time([sys.executable, "-c", "import click"], args.repeat)
    ratio = help_t / click_t
    row("worksheetgen --help", f"{help_t * 1000:.0f} ms")
    row(
        'python -c "import click"',
        f"{click_t * 1000:.0f} ms",
        f"--help is {ratio:.2f}x (target <= 1.5x: {'met' if ratio <= 1.5 else 'MISSED'})",
    )

    pdf_runs: dict[int, dict] = {}
    no_pdf: dict[int, dict] = {}  # class size -> the median no-PDF build (default plan)
    peaks: dict[int, dict[str, float]] = {}  # class size -> kind of build -> peak MB
    # one unmeasured build first: Python's compiled modules and worksheetgen's compiled
    # templates are cached as after any first run
    warm = write_roster(tmp / "warm.csv", 4, args.unicode)
    child_build(warm, tmp / "warm", False, 1)
    for n in sizes:
        roster = write_roster(tmp / f"roster{n}.csv", n, args.unicode)
        d = child_build(roster, tmp / f"out{n}", False, args.repeat)
        no_pdf[n] = d
        per = d["build"] / d["variants"] * 1000
        peaks.setdefault(n, {})["no PDFs"] = d["peak_mb"]
        row(
            f"{n} students, no PDFs: whole command",
            f"{d['wall'] * 1000:.0f} ms",
            f"{d['variants']} question variants, imports {d['imports'] * 1000:.0f} ms, "
            f"peak {d['peak_mb']:.0f} MB",
        )
        row(
            f"{n} students, no PDFs: build in-process",
            f"{d['build'] * 1000:.0f} ms",
            f"{per:.2f} ms per question variant, {d['workers']} process(es) (target < 1 ms: "
            f"{'met' if per < 1 else 'MISSED'})",
        )
        if d["workers"] > 1:
            d = child_build(roster, tmp / f"out{n}", False, args.repeat, jobs="1")
            row(
                f"{n} students, no PDFs, --jobs 1: in-process",
                f"{d['build'] * 1000:.0f} ms",
                f"{d['build'] / d['variants'] * 1000:.2f} ms per question variant (one process)",
            )
        if args.no_pdf:
            continue
        d = child_build(roster, tmp / f"pdf{n}", True, args.repeat)
        pdf_runs[n] = d
        st = d["stages"]
        engines = ", ".join(sorted(set(d["engines"].values())))
        peaks[n]["all PDFs"] = d["peak_mb"]
        note = (
            f"sheets {st.get('sheets', 0) * 1000:.0f} ms + TeX and cutting "
            f"{st.get('pdf', 0) * 1000:.0f} ms ({engines}), peak {d['peak_mb']:.0f} MB"
        )
        row(
            f"{n} students, all PDFs: whole command",
            f"{d['wall'] * 1000:.0f} ms",
            note
            + (f"; target < 1.5 s: {'met' if d['wall'] < 1.5 else 'MISSED'}" if n == 30 else ""),
        )

    if len(no_pdf) > 1:  # what one more question variant costs, the fixed part apart
        small, large = min(no_pdf), max(no_pdf)
        a, b = no_pdf[small], no_pdf[large]
        slope = (b["build"] - a["build"]) / (b["variants"] - a["variants"]) * 1000
        fixed = a["build"] * 1000 - slope * a["variants"]
        row(
            f"no PDFs, {small} -> {large} students: each variant",
            f"{slope:.2f} ms",
            f"the build's cost beyond a fixed {fixed:.0f} ms ({a['workers']} process(es))",
        )

    if len(peaks) > 1:
        small, large = min(peaks), max(peaks)
        for kind in peaks[small]:
            a, b = peaks[small][kind], peaks[large][kind]
            row(
                f"memory, {kind}: {small} -> {large} students",
                f"{a:.0f} -> {b:.0f} MB",
                f"{b / a:.2f}x the memory for {large / small:.1f}x the students",
            )

    if not args.no_pdf and not args.no_naive:
        for n, d in pdf_runs.items():
            folder = Path(d["folder"])
            engine = "lualatex" if "lualatex" in d["engines"].values() else "pdflatex"
            naive, count = naive_compile(folder, engine, cores)
            speedup = naive / d["wall"]
            note = f"{count} TeX processes, {cores} at a time; ours is {speedup:.1f}x faster"
            if n == 30:
                note += f" (target >= 8x: {'met' if speedup >= 8 else 'MISSED'})"
            row(f"{n} students, naive: one TeX run per student", f"{naive * 1000:.0f} ms", note)
            tex = combined_compile(folder, engine)
            row(
                f"{n} students, TeX alone: the 2 documents",
                f"{tex * 1000:.0f} ms",
                f"both at once, nothing else running: at most {naive / tex:.1f}x faster "
                "than naive for any build",
            )
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
