"""Nothing lost: a failed or interrupted build leaves earlier output exactly as it was.

Covers issue 5 section 2: the atomic swap of the output folder, rebuilds with other settings,
a failed TeX compile (named document, first error with its line, .tex and log kept), and
Ctrl-C (no half-written output, no temporary folders, no TeX process left running).

A behaviour across modules, not one module's tests (errors, pipeline, tex).
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import needs_tex
from tests.signals import ctrl_c_raises
from worksheetgen.errors import CompileError
from worksheetgen.pipeline import output as pipeline
from worksheetgen.tex import run as tex

HANGING_TEX = "\\documentclass{article}\n\\begin{document}\n\\def\\x{\\x}\\x\n\\end{document}\n"


BROKEN_TEX = (
    "\\documentclass{article}\n\\begin{document}\nfine\n\n"
    "\\undefinedcommand{here}\n\\end{document}\n"
)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative name -> bytes)."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


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


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point Python's temporary folders into the test's own folder."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


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


@pytest.mark.slow
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
