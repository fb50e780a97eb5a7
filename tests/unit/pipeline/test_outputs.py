"""Outputs: only what is ours is replaced, a full disk is one line with nothing left behind,
what a killed build left is swept, PDFs are the same bytes on every rebuild, file names are
portable.

A behaviour across modules, not one module's tests (bank.roster, errors, files, pipeline.build,
pipeline.output, tex)."""

from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.conftest import needs_tex
from worksheetgen import files as outfiles
from worksheetgen.errors import OutputError

needs_lua = pytest.mark.skipif(
    __import__("shutil").which("lualatex") is None, reason="LuaLaTeX is not installed"
)


def test_check_replaceable_allows_regular_files_folders_and_nothing(tmp_path):
    (tmp_path / "f").write_text("x", encoding="utf-8")
    (tmp_path / "d").mkdir()
    (tmp_path / "lf").symlink_to("f")
    outfiles.check_replaceable(tmp_path / "f")
    outfiles.check_replaceable(tmp_path / "lf")
    outfiles.check_replaceable(tmp_path / "new")
    outfiles.check_replaceable(tmp_path / "new" / "deeper")
    outfiles.check_replaceable(tmp_path / "d", folder=True)
    with pytest.raises(OutputError, match="got a folder"):
        outfiles.check_replaceable(tmp_path / "d")
    with pytest.raises(OutputError, match="got a regular file"):
        outfiles.check_replaceable(tmp_path / "f", folder=True)
    with pytest.raises(OutputError, match="f, a regular file"):
        outfiles.check_replaceable(tmp_path / "f" / "under")


@pytest.fixture
def own_tmpdir(tmp_path, monkeypatch) -> Path:
    """TMPDIR for the test (where TeX works)."""
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_other_os_errors_are_not_turned_into_disk_errors():
    assert outfiles.write_failure(OSError(errno.ECHILD, "No child processes")) is None
    error = outfiles.write_failure(OSError(errno.ENOSPC, "No space left on device", "/a/b"))
    assert error is not None and str(error).startswith("/a/b: cannot write here: No space")


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_leftover_whose_lock_is_held_is_kept(tmp_path):
    dead = _dead_pid()
    held = tmp_path / f".x-seed1.tmp-{dead}-lockedab"
    held.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"fd = os.open({str(held)!r}, os.O_RDONLY)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        assert outfiles.sweep_stale(tmp_path) == []
        assert held.exists()
    finally:
        holder.kill()
        holder.wait()
    assert outfiles.sweep_stale(tmp_path) == [held] and not held.exists()


def test_tex_folders_a_killed_build_left_in_tmpdir_are_swept(own_tmpdir):
    from worksheetgen.pipeline.output import sweep_leftovers

    dead = _dead_pid()
    stale = own_tmpdir / f"worksheetgen-tex-{dead}-abcdefgh"
    stale.mkdir()
    (stale / "doc.pdf").write_bytes(b"%PDF")
    other = own_tmpdir / "worksheetgen-tex-abcdefgh"  # an older kind: not known to be ours
    other.mkdir()
    with outfiles.tex_folder("tex") as mine:
        assert sweep_leftovers(own_tmpdir / "no-out", pdf=True) == (stale,)
        assert mine.exists()
    assert other.exists() and not mine.exists()


def test_temporary_folders_carry_the_pid_and_are_locked_while_used(tmp_path):
    folder = outfiles.temp_folder(tmp_path, "name")
    assert re.fullmatch(rf"\.name\.tmp-{os.getpid()}-[A-Za-z0-9_]{{8}}", folder.name)
    assert not outfiles._unused(folder)
    outfiles.release(folder)
    assert outfiles._unused(folder)


def _no_dates(pdf: bytes) -> bool:
    return b"/CreationDate" not in pdf and b"/ModDate" not in pdf and b"/ID" not in pdf


@needs_tex
def test_pdfs_of_the_same_seed_are_byte_identical_across_rebuilds(tmp_path):
    from worksheetgen.pipeline.build import BuildOptions, build

    one = build(BuildOptions(seed=8, out=str(tmp_path / "a"))).folder
    time.sleep(1.1)  # another second on the clock
    two = build(BuildOptions(seed=8, out=str(tmp_path / "b"))).folder
    for name in ("sheet.pdf", "key.pdf"):
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
        assert _no_dates((one / name).read_bytes())


@pytest.mark.slow
@needs_tex
@pytest.mark.parametrize(
    "roster",
    [
        "name,id\nAnn,a1\nBob,b2\n",
        pytest.param("name,id\nΑλέξης,a1\nBob,b2\n", marks=needs_lua, id="lualatex"),
    ],
    ids=["pdflatex", "lualatex"],
)
def test_class_pdfs_and_the_cut_ones_are_byte_identical_across_rebuilds(tmp_path, roster):
    from worksheetgen.pipeline.build import BuildOptions, build

    csv = tmp_path / "class.csv"
    csv.write_text(roster, encoding="utf-8")
    one = build(BuildOptions(seed=8, out=str(tmp_path / "a"), roster=str(csv))).folder
    time.sleep(1.1)
    two = build(BuildOptions(seed=8, out=str(tmp_path / "b"), roster=str(csv))).folder
    pdfs = sorted(p.relative_to(one) for p in one.rglob("*.pdf"))
    assert len(pdfs) == 7  # sheets, keys, the answer grid, and two of each per student
    for rel in pdfs:
        assert (one / rel).read_bytes() == (two / rel).read_bytes(), rel
        assert _no_dates((one / rel).read_bytes())


RESERVED = re.compile(r"(?i)^(CON|PRN|AUX|NUL|COM[0-9]|LPT[0-9])(\.|$)")


def test_per_student_file_names_are_never_windows_device_names():
    from worksheetgen.bank.roster import file_stems

    ids = [
        "COM1.txt",
        "CON.x",
        "nul.b",
        "aux",
        "LPT9",
        "prn",
        "com0",
        "Con",
        "COM1_.txt",
        "console",
        "com10",
        "s1",
    ]
    stems = file_stems(ids)
    assert stems == file_stems(ids)  # the same every time
    assert len({s.lower() for s in stems}) == len(stems)
    for stem in stems:
        for name in (stem, f"{stem}-sheet.pdf", f"{stem}-key.pdf"):
            assert not RESERVED.match(name) and not name.endswith((".", " ")), name
    same = dict(zip(ids, stems, strict=True))
    assert same["console"] == "console" and same["com10"] == "com10" and same["s1"] == "s1"
    assert same["COM1_.txt"] == "COM1_.txt" and same["COM1.txt"] != "COM1_.txt"
    assert file_stems(["s2", "COM1.txt"])[1] == same["COM1.txt"]  # depends on the id only


@needs_tex
def test_a_format_tex_cannot_undump_is_dumped_again_and_the_document_compiles(
    tmp_path, monkeypatch
):
    from worksheetgen.tex import formats as tex_formats
    from worksheetgen.tex import run as tex

    monkeypatch.setenv("WORKSHEETGEN_CACHE_DIR", str(tmp_path / "cache"))
    doc = "\\documentclass{article}\n\\begin{document}\nHi\n\\end{document}\n"
    tex.compile_job(tex.TexJob("doc", doc, formats=True), tmp_path / "keep")
    (fmt,) = (tmp_path / "cache").glob("tex-formats-*/ws-*.fmt")
    whole = fmt.read_bytes()
    fmt.write_bytes(whole[: len(whole) // 2] + tex_formats._FORMAT_END)  # passes the quick look
    runs = []
    real = tex.process.run_tex
    monkeypatch.setattr(
        tex.process, "run_tex", lambda cmd, *a, **k: runs.append(cmd) or real(cmd, *a, **k)
    )
    out = tex.compile_job(tex.TexJob("doc", doc, formats=True), tmp_path / "keep")
    assert out.pdf is not None and out.pdf.startswith(b"%PDF")
    again = fmt.read_bytes()  # dumped again, once (whole; it records the minute of its dump)
    assert len(again) == len(whole) and again.endswith(tex_formats._FORMAT_END)
    assert sum("-ini" in cmd for cmd in runs) == 1
    assert not (tmp_path / "keep").exists()


def test_a_failure_without_a_log_never_says_its_log_was_kept(tmp_path, monkeypatch):
    from worksheetgen.errors import CompileError
    from worksheetgen.tex import run as tex

    monkeypatch.setattr(tex, "require_engine", lambda *a, **k: "/bin/false")
    monkeypatch.setattr(tex.process, "run_tex", lambda *a, **k: (1, b""))
    keep = tmp_path / "keep"
    (keep).mkdir()
    (keep / "doc.log").write_text("an older run's log", encoding="utf-8")
    with pytest.raises(CompileError) as caught:
        tex.compile_job(tex.TexJob("doc", "\\documentclass{article}"), keep)
    assert "TeX wrote no log" in str(caught.value) and "its .log" not in str(caught.value)
    assert (keep / "doc.tex").exists() and not (keep / "doc.log").exists()


def test_a_kept_tex_is_never_written_through_a_symlink_or_into_a_fifo(tmp_path, monkeypatch):
    from worksheetgen.errors import CompileError
    from worksheetgen.tex import run as tex

    monkeypatch.setattr(tex, "require_engine", lambda *a, **k: "/bin/false")
    monkeypatch.setattr(tex.process, "run_tex", lambda *a, **k: (1, b""))
    keep = tmp_path / "keep"
    keep.mkdir()
    precious = tmp_path / "precious"
    precious.write_text("keep me", encoding="utf-8")
    (keep / "doc.tex").symlink_to(precious)
    with pytest.raises(CompileError, match="kept"):
        tex.compile_job(tex.TexJob("doc", "\\documentclass{article}"), keep)
    assert precious.read_text(encoding="utf-8") == "keep me"
    (keep / "doc.tex").unlink()
    os.mkfifo(keep / "doc.tex")
    with pytest.raises(CompileError, match="nothing kept.*FIFO"):
        tex.compile_job(tex.TexJob("doc", "\\documentclass{article}"), keep)
    assert stat.S_ISFIFO(os.lstat(keep / "doc.tex").st_mode)


def test_a_build_killed_between_its_two_renames_gets_the_earlier_build_back(tmp_path):
    # kill -9 after the earlier build was moved aside and before the new one took its place
    dead = _dead_pid()
    aside = tmp_path / f".self-attention-seed1.old-{dead}-abcdefgh"
    (aside / "previous").mkdir(parents=True)
    (aside / "previous" / "key.json").write_text("{}", encoding="utf-8")
    assert outfiles.sweep_stale(tmp_path) == [aside]
    assert (tmp_path / "self-attention-seed1" / "key.json").read_text(encoding="utf-8") == "{}"
    # when the new build did take its place, the earlier one is just removed
    aside.mkdir()
    (aside / "previous").mkdir()
    assert outfiles.sweep_stale(tmp_path) == [aside] and not aside.exists()
    assert (tmp_path / "self-attention-seed1" / "key.json").exists()
