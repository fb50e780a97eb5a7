"""Nothing lost: a failed or interrupted build leaves earlier output exactly as it was.

Covers issue 5 section 2: the atomic swap of the output folder, rebuilds with other settings,
a failed TeX compile (named document, first error with its line, .tex and log kept), and
Ctrl-C (no half-written output, no temporary folders, no TeX process left running).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import needs_tex
from tests.signals import ctrl_c_raises, default_signals
from worksheetgen.cli import main
from worksheetgen.errors import CompileError
from worksheetgen.pipeline import output as pipeline
from worksheetgen.tex import run as tex

HANGING_TEX = "\\documentclass{article}\n\\begin{document}\n\\def\\x{\\x}\\x\n\\end{document}\n"
BROKEN_TEX = (
    "\\documentclass{article}\n\\begin{document}\nfine\n\n"
    "\\undefinedcommand{here}\n\\end{document}\n"
)
SMALL = "questions:\n  - id: w\n    family: heads\n    params: {d: 8, h: 2}\n"


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative name -> bytes)."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def leftovers(out: Path) -> list[str]:
    """Temporary siblings a build may have left in the output folder."""
    return sorted(p.name for p in out.iterdir() if ".tmp-" in p.name or ".old-" in p.name)


def tex_processes_in(folder: Path) -> list[int]:
    """TeX processes whose working folder is under ``folder`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes()
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if (b"pdflatex" in cmd or b"lualatex" in cmd) and cwd.startswith(str(folder)):
            found.append(int(entry.name))
    return found


def templates(tmp_path: Path, sheet_tex: str) -> Path:
    """A --templates folder whose LaTeX sheet is ``sheet_tex``."""
    folder = tmp_path / "tpl"
    (folder / "latex").mkdir(parents=True)
    (folder / "latex" / "sheet.tex.j2").write_text(sheet_tex, encoding="utf-8")
    return folder


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point Python's temporary folders into the test's own folder."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def build(runner, out: Path, *args: str):
    return runner.invoke(main, ["build", "--seed", "5", "--out", str(out), *args])


def test_failed_bank_leaves_earlier_output_byte_for_byte(runner, tmp_path, write_bank) -> None:
    out = tmp_path / "out"
    good = write_bank(SMALL, "good.yaml")
    assert build(runner, out, "--no-pdf", "--bank", str(good)).exit_code == 0
    (folder,) = out.iterdir()
    before = snapshot(folder)
    good.write_text(SMALL + "    points: -1\n", encoding="utf-8")  # same bank name, now bad
    result = build(runner, out, "--no-pdf", "--bank", str(good))
    assert result.exit_code == 1
    assert "points: expected a number of points above 0, got -1" in result.stderr
    assert snapshot(folder) == before
    assert leftovers(out) == []


def test_rebuild_with_other_settings_leaves_no_old_files(runner, tmp_path, write_bank) -> None:
    out = tmp_path / "out"
    bank = write_bank(SMALL)
    assert build(runner, out, "--no-pdf", "--bank", str(bank), "--export", "gift").exit_code == 0
    (folder,) = out.iterdir()
    assert (folder / "gift.txt").exists()
    assert build(runner, out, "--no-pdf", "--bank", str(bank), "--decimals", "3").exit_code == 0
    assert not (folder / "gift.txt").exists()
    manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    assert set(manifest["files"]) == set(snapshot(folder))
    assert leftovers(out) == []


@needs_tex
def test_failed_tex_keeps_earlier_output_and_names_document_error_line(
    runner, tmp_path, write_bank, private_tmp
) -> None:
    out = tmp_path / "out"
    bank = write_bank(SMALL)
    assert build(runner, out, "--bank", str(bank)).exit_code == 0
    (folder,) = out.iterdir()
    before = snapshot(folder)
    assert "sheet.pdf" in before
    bad = templates(tmp_path, BROKEN_TEX)
    result = build(runner, out, "--bank", str(bank), "--templates", str(bad))
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    # which document, the first LaTeX error with the line of the .tex it is on, where it is kept
    assert lines[0].startswith(
        "worksheetgen: error: sheet.tex: line 5: Undefined control sequence"
    ), lines[0]
    kept_tex = Path(lines[0].split("kept ")[1].split(" and its .log")[0])
    assert kept_tex.read_text("utf-8").splitlines()[4] == "\\undefinedcommand{here}"
    assert kept_tex.with_suffix(".log").exists()
    assert snapshot(folder) == before
    assert leftovers(out) == []
    assert list(private_tmp.iterdir()) == []


@needs_tex
def test_tex_time_limit_stops_a_runaway_document(tmp_path, private_tmp, monkeypatch) -> None:
    monkeypatch.setattr(tex, "TEX_TIMEOUT_SECONDS", 2)
    started = time.monotonic()
    with pytest.raises(CompileError) as err:
        tex.compile_all([tex.TexJob("sheet", HANGING_TEX)], tmp_path / "kept")
    assert time.monotonic() - started < 30
    assert "TeX ran longer than 2 s and was stopped" in str(err.value)
    assert tex_processes_in(private_tmp) == []
    assert list(private_tmp.iterdir()) == []


@needs_tex
def test_one_failing_document_stops_the_others(tmp_path, private_tmp) -> None:
    started = time.monotonic()
    with pytest.raises(CompileError) as err:
        tex.compile_all(
            [tex.TexJob("sheet", HANGING_TEX), tex.TexJob("key", BROKEN_TEX)], tmp_path / "kept"
        )
    # the hanging sheet would run for TEX_TIMEOUT_SECONDS (120 s); the key's error stops it
    assert time.monotonic() - started < 60
    assert str(err.value).startswith("key.tex: line 5: Undefined control sequence; kept ")
    assert tex_processes_in(private_tmp) == []
    assert list(private_tmp.iterdir()) == []
    assert not (tmp_path / "kept" / "sheet.tex").exists()


@needs_tex
def test_interrupt_during_tex_kills_it_and_removes_temporary_folders(tmp_path, private_tmp) -> None:
    def ctrl_c_once_tex_runs() -> None:
        deadline = time.monotonic() + 60
        while not tex_processes_in(private_tmp) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C does: KeyboardInterrupt in main

    watcher = threading.Thread(target=ctrl_c_once_tex_runs)
    started = time.monotonic()
    with ctrl_c_raises(), pytest.raises(KeyboardInterrupt):
        watcher.start()
        tex.compile_all([tex.TexJob("sheet", HANGING_TEX)], tmp_path / "kept")
    watcher.join()
    assert time.monotonic() - started < 60
    assert tex_processes_in(private_tmp) == []
    assert list(private_tmp.iterdir()) == []
    assert not (tmp_path / "kept").exists()


@needs_tex
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "kill"])
def test_ctrl_c_in_a_real_build_leaves_nothing_behind(signum, tmp_path) -> None:
    out = tmp_path / "out"
    bank = tmp_path / "bank.yaml"
    bank.write_text(SMALL, encoding="utf-8")
    assert (
        subprocess.run(
            [
                sys.executable,
                "-m",
                "worksheetgen",
                "build",
                "--seed",
                "5",
                "--out",
                str(out),
                "--bank",
                str(bank),
            ],
            capture_output=True,
            timeout=300,
        ).returncode
        == 0
    )
    (folder,) = out.iterdir()
    before = snapshot(folder)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    tpl = templates(tmp_path, HANGING_TEX)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "worksheetgen",
            "build",
            "--seed",
            "5",
            "--out",
            str(out),
            "--bank",
            str(bank),
            "--templates",
            str(tpl),
        ],
        env={**os.environ, "TMPDIR": str(tmp)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,  # Ctrl-C is not ignored there, however this was started
    )
    deadline = time.monotonic() + 120
    while not tex_processes_in(tmp) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert tex_processes_in(tmp), "TeX never started"
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert stderr.strip() == "worksheetgen: interrupted"
    assert "Traceback" not in stderr
    assert tex_processes_in(tmp) == []
    assert list(tmp.iterdir()) == []
    assert snapshot(folder) == before
    assert leftovers(out) == []
    assert sorted(p.name for p in out.iterdir()) == [folder.name]


def test_ctrl_c_while_writing_keeps_the_earlier_output(
    runner, tmp_path, write_bank, monkeypatch
) -> None:
    out = tmp_path / "out"
    bank = write_bank(SMALL)
    assert build(runner, out, "--no-pdf", "--bank", str(bank)).exit_code == 0
    (folder,) = out.iterdir()
    before = snapshot(folder)
    real_write = Path.write_bytes
    calls = {"n": 0}

    def write_then_interrupt(self: Path, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", write_then_interrupt)
    result = build(runner, out, "--no-pdf", "--bank", str(bank), "--decimals", "4")
    monkeypatch.undo()
    assert result.exit_code == 130
    assert result.stderr.strip() == "worksheetgen: interrupted"
    assert snapshot(folder) == before
    assert leftovers(out) == []


def test_interrupt_between_the_two_renames_restores_the_old_folder(tmp_path, monkeypatch) -> None:
    target = tmp_path / "out" / "sheet-seed1"
    target.mkdir(parents=True)
    (target / "old.txt").write_text("old", encoding="utf-8")
    new = pipeline.staging_folder(target)
    (new / "new.txt").write_text("new", encoding="utf-8")
    real_replace = os.replace

    def replace(src, dst):  # the second rename (new -> target) is interrupted
        if Path(src) == new:
            raise KeyboardInterrupt
        return real_replace(src, dst)

    monkeypatch.setattr(pipeline.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        pipeline.swap_into_place(new, target)
    monkeypatch.undo()
    assert snapshot(target) == {"old.txt": b"old"}
    assert sorted(p.name for p in target.parent.iterdir() if ".old-" in p.name) == []


def test_ctrl_c_is_held_until_the_swap_is_done() -> None:
    done = []
    with ctrl_c_raises():
        with pytest.raises(KeyboardInterrupt):
            with pipeline.interrupts_held():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)  # the signal arrives here and is held
                done.append("finished")
        assert done == ["finished"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_interrupt_is_exactly_one_line_on_stderr(tmp_path):
    # Click wrote a blank line before it (to close a terminal's ^C echo) whatever stderr
    # was: two lines where a script reads one (issue 33 §4)
    slow = (
        "import sys, time, worksheetgen.report.grade as g\n"
        "def wait(*a, **k):\n"
        "    print('ready', flush=True)\n"
        "    time.sleep(60)\n"
        "g.grade_files = wait\n"
        "from worksheetgen.cli import main\n"
        "sys.argv[0] = 'worksheetgen'\n"
        "main()\n"
    )
    key = tmp_path / "key.json"
    key.write_text("{}", "utf-8")
    for signum in (signal.SIGTERM, signal.SIGINT):
        child = subprocess.Popen(
            [sys.executable, "-c", slow, "grade", str(key), "--key", str(key)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=default_signals,
        )
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        child.send_signal(signum)
        _, stderr = child.communicate(timeout=60)
        assert child.returncode == 130, stderr
        assert stderr == "worksheetgen: interrupted\n", repr(stderr)
