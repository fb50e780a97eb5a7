"""Outputs: only what is ours is replaced, a full disk is one line with nothing left behind,
what a killed build left is swept, PDFs are the same bytes on every rebuild, file names are
portable."""

from __future__ import annotations

import errno
import io
import os
import re
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import needs_tex
from tests.unit.pipeline.test_outputs import _dead_pid
from worksheetgen.cli import main

needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mknod needs root"
)


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _leftovers(*folders: Path) -> list[str]:
    """Temporary names of ours anywhere under ``folders``."""
    out = []
    for folder in folders:
        for p in folder.rglob("*"):
            if re.search(r"\.(tmp|old)-|^worksheetgen-(tex|fmt)-", p.name):
                out.append(str(p))
    return out


@pytest.fixture(scope="module")
def key_json(tmp_path_factory) -> Path:
    """The key.json of a small build (no PDFs)."""
    from worksheetgen.pipeline.build import BuildOptions, build

    out = tmp_path_factory.mktemp("built")
    return build(BuildOptions(seed=5, out=str(out), pdf=False)).folder / "key.json"


def _answered(runner, key_json: Path, folder: Path) -> Path:
    """A responses file for ``key_json`` with one answer (1, in its first row, a number)."""
    import csv

    responses = folder / "responses.csv"
    assert (
        runner.invoke(
            main, ["grade", "--key", str(key_json), "--template", str(responses)]
        ).exit_code
        == 0
    )
    rows = list(csv.reader(responses.read_text(encoding="utf-8").splitlines()))
    with open(responses, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([rows[0], [*rows[1][:-1], "1"], *rows[2:]])
    return responses


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    s.close()


def _chardev(path: Path) -> None:
    os.mknod(path, 0o644 | stat.S_IFCHR, os.makedev(1, 3))  # a copy of /dev/null


def _link_to_fifo(path: Path) -> None:
    os.mkfifo(path.with_name("the-fifo"))
    path.symlink_to("the-fifo")


def _dangling(path: Path) -> None:
    path.symlink_to("/nonexistent/worksheetgen-test")


NODES = [  # what an output path may be that is not ours to replace, and how it is said
    pytest.param(_fifo, "a FIFO (named pipe)", id="fifo"),
    pytest.param(_socket, "a socket", id="socket"),
    pytest.param(_chardev, "a character device", id="chardev", marks=needs_root),
    pytest.param(_link_to_fifo, "a symbolic link to the-fifo, a FIFO", id="link-to-fifo"),
    pytest.param(_dangling, "a symbolic link to nothing", id="dangling-link"),
]


def _kind(path: Path) -> int:
    return os.lstat(path).st_mode


COMMANDS = {  # how each writer is run with an output path
    "export-gift": lambda key, out: [
        "export",
        "--to",
        "gift",
        "--key",
        str(key),
        "--out",
        str(out),
    ],
    "export-moodle": lambda key, out: [
        "export",
        "--to",
        "moodle",
        "--key",
        str(key),
        "--out",
        str(out),
    ],
    "export-qti": lambda key, out: ["export", "--to", "qti", "--key", str(key), "--out", str(out)],
    "grade-template": lambda key, out: ["grade", "--key", str(key), "--template", str(out)],
}


@pytest.mark.parametrize("make,said", NODES)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_output_that_is_not_a_regular_file_is_refused_and_left_alone(
    runner, tmp_path, key_json, command, make, said
):
    target = tmp_path / "out-file"
    make(target)
    before = _kind(target)
    result = runner.invoke(main, COMMANDS[command](key_json, target))
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("worksheetgen: error: ")
    assert said in lines[0] and "nothing written" in lines[0]
    assert _kind(target) == before  # still what it was
    assert not _leftovers(tmp_path)


@pytest.mark.parametrize("make,said", NODES)
def test_grade_outputs_that_are_not_regular_files_are_refused_before_grading(
    runner, tmp_path, key_json, make, said
):
    responses = _answered(runner, key_json, tmp_path)
    out = tmp_path / "grades"
    out.mkdir()
    make(out / "report.md")
    before = _kind(out / "report.md")
    result = runner.invoke(
        main, ["grade", "--key", str(key_json), str(responses), "--out", str(out)]
    )
    assert result.exit_code == 1
    assert len(result.stderr.strip().splitlines()) == 1 and said in result.stderr
    assert _kind(out / "report.md") == before
    assert not (out / "scores.csv").exists()  # neither is written
    assert not _leftovers(tmp_path)


@pytest.mark.parametrize("make,said", NODES)
@pytest.mark.parametrize("cls", [False, True], ids=["sheet", "class"])
def test_a_build_folder_that_is_not_a_folder_is_refused_before_any_work(
    runner, tmp_path, monkeypatch, make, said, cls
):
    from worksheetgen.pipeline import build as pipeline
    from worksheetgen.pipeline.renderer import Renderer

    def no_work(*args, **kwargs):
        raise AssertionError("drawing started")

    monkeypatch.setattr(Renderer, "draw", no_work)
    monkeypatch.setattr(pipeline, "rendered", no_work)
    target = tmp_path / ("self-attention-seed1-versions2" if cls else "self-attention-seed1")
    make(target)
    before = _kind(target)
    args = ["build", "--seed", "1", "--no-pdf", "--out", str(tmp_path)]
    result = runner.invoke(main, args + (["--versions", "2"] if cls else []))
    assert result.exit_code == 1, result.output
    assert len(result.stderr.strip().splitlines()) == 1
    assert "expected a build folder it may replace" in result.stderr and said in result.stderr
    assert _kind(target) == before
    assert not _leftovers(tmp_path)


@pytest.mark.parametrize("where", ["out", "parent"])
def test_an_out_folder_through_a_symlink_to_nothing_is_refused_before_any_work(
    runner, tmp_path, monkeypatch, where
):
    from worksheetgen.pipeline.renderer import Renderer

    monkeypatch.setattr(Renderer, "draw", lambda *a, **k: pytest.fail("drawing started"))
    link = tmp_path / "gone"
    link.symlink_to(tmp_path / "nowhere")
    out = link if where == "out" else link / "deeper" / "out"
    result = runner.invoke(main, ["build", "--seed", "1", "--no-pdf", "--out", str(out)])
    assert result.exit_code == 1
    assert "a symbolic link to nothing" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "nowhere").exists()


def test_a_symlink_to_a_regular_file_is_replaced_not_written_through(runner, tmp_path, key_json):
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me", encoding="utf-8")
    link = tmp_path / "gift.txt"
    link.symlink_to(precious)
    result = runner.invoke(
        main, ["export", "--to", "gift", "--key", str(key_json), "--out", str(link)]
    )
    assert result.exit_code == 0, result.output
    assert precious.read_text(encoding="utf-8") == "keep me"
    assert not link.is_symlink() and link.read_text(encoding="utf-8").startswith("//")


def test_the_template_never_replaces_an_existing_file_even_through_a_symlink(
    runner, tmp_path, key_json
):
    precious = tmp_path / "precious.csv"
    precious.write_text("keep me", encoding="utf-8")
    link = tmp_path / "responses.csv"
    link.symlink_to(precious)
    result = runner.invoke(main, ["grade", "--key", str(key_json), "--template", str(link)])
    assert result.exit_code == 1 and "never overwritten" in result.stderr
    assert precious.read_text(encoding="utf-8") == "keep me" and link.is_symlink()


@pytest.mark.parametrize(
    "fmt,name", [("gift", "gift.txt"), ("moodle", "moodle.xml"), ("qti", "canvas-qti.zip")]
)
def test_export_out_dash_writes_the_same_bytes_to_standard_output(
    runner, tmp_path, key_json, fmt, name
):
    out = tmp_path / name
    assert (
        runner.invoke(
            main, ["export", "--to", fmt, "--key", str(key_json), "--out", str(out)]
        ).exit_code
        == 0
    )
    result = runner.invoke(main, ["export", "--to", fmt, "--key", str(key_json), "--out", "-"])
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout_bytes == out.read_bytes()
    assert not (Path.cwd() / "-").exists()


def test_grade_template_dash_writes_the_same_text_to_standard_output(runner, tmp_path, key_json):
    out = tmp_path / "responses.csv"
    assert (
        runner.invoke(main, ["grade", "--key", str(key_json), "--template", str(out)]).exit_code
        == 0
    )
    result = runner.invoke(main, ["grade", "--key", str(key_json), "--template", "-"])
    assert result.exit_code == 0
    assert result.stdout_bytes == out.read_bytes()


class _Full:
    """Every file opened for writing under ``root`` fails with ``code`` once ``budget``
    bytes have been written to it: the lowest write layer (io.FileIO) of a full disk."""

    def __init__(self, root: Path, code: int = errno.ENOSPC, budget: int = 0) -> None:
        self.root, self.code, self.budget = str(root), code, budget
        self.failed: list[str] = []


@pytest.fixture
def full_disk(monkeypatch):
    """Make files written under a folder fail as on a full disk: ``full_disk(folder, ...)``."""
    import builtins

    real_open = io.open
    state: dict[str, _Full] = {}

    def where(file) -> str:
        if isinstance(file, int):
            try:
                return os.readlink(f"/proc/self/fd/{file}")
            except OSError:
                return ""
        return os.path.abspath(os.fsdecode(file))

    def faulty_open(
        file,
        mode="r",
        buffering=-1,
        encoding=None,
        errors=None,
        newline=None,
        closefd=True,
        opener=None,
    ):
        full = state.get("full")
        if (
            full is None
            or not any(c in mode for c in "wax+")
            or not where(file).startswith(full.root)
        ):
            return real_open(file, mode, buffering, encoding, errors, newline, closefd, opener)
        name = where(file)

        class FullFileIO(io.FileIO):
            written = 0

            def write(self, b):  # noqa: ANN001 - as io.FileIO.write
                if self.written + len(b) > full.budget:
                    full.failed.append(name)
                    raise OSError(full.code, os.strerror(full.code))
                self.written += len(b)
                return super().write(b)

        raw = FullFileIO(
            file, mode.replace("b", "").replace("t", ""), closefd=closefd, opener=opener
        )
        buffered = io.BufferedWriter(raw) if buffering != 0 else raw
        if "b" in mode:
            return buffered
        return io.TextIOWrapper(buffered, encoding or "utf-8", errors, newline)

    monkeypatch.setattr(io, "open", faulty_open)
    monkeypatch.setattr(builtins, "open", faulty_open)

    def arm(root: Path, code: int = errno.ENOSPC, budget: int = 0) -> _Full:
        state["full"] = _Full(root, code, budget)
        return state["full"]

    return arm


def _one_line_about_the_disk(result, code_name: str = "ENOSPC") -> str:
    assert result.exit_code == 1, (result.output, result.exception)
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert f"({code_name})" in lines[0] and "nothing was written" in lines[0]
    return lines[0]


@pytest.mark.parametrize("budget", [0, 3000], ids=["at-once", "part-way"])
@pytest.mark.parametrize(
    "code,code_name", [(errno.ENOSPC, "ENOSPC"), (errno.EDQUOT, "EDQUOT"), (errno.EROFS, "EROFS")]
)
def test_a_full_disk_during_a_build_is_one_line_and_leaves_nothing(
    runner, tmp_path, full_disk, own_tmpdir, budget, code, code_name
):
    out = tmp_path / "out"
    out.mkdir()
    full = full_disk(out, code, budget)
    result = runner.invoke(main, ["build", "--seed", "3", "--no-pdf", "--out", str(out)])
    line = _one_line_about_the_disk(result, code_name)
    assert full.failed and str(out / "self-attention-seed3") in line
    assert ".tmp-" not in line  # the build's own path, not the temporary one
    assert _tree(out) == []


@pytest.mark.parametrize("budget", [0, 20_000], ids=["at-once", "part-way"])
def test_a_full_disk_during_a_class_build_is_one_line_and_leaves_nothing(
    runner, tmp_path, full_disk, own_tmpdir, budget
):
    out = tmp_path / "out"
    out.mkdir()
    full_disk(out, budget=budget)
    result = runner.invoke(
        main,
        [
            "build",
            "--seed",
            "3",
            "--no-pdf",
            "--versions",
            "3",
            "--export",
            "qti",
            "--out",
            str(out),
            "-j",
            "1",
        ],
    )
    line = _one_line_about_the_disk(result)
    assert "self-attention-seed3-versions3" in line
    assert _tree(out) == []


@needs_tex
@pytest.mark.parametrize("cls", [False, True], ids=["sheet", "class"])
@pytest.mark.parametrize("where", ["out", "tmpdir"])
def test_a_full_disk_during_a_build_with_pdfs_is_one_line_and_leaves_nothing(
    runner, tmp_path, full_disk, own_tmpdir, cls, where
):
    out = tmp_path / "out"
    out.mkdir()
    full_disk(out if where == "out" else own_tmpdir, budget=5000)
    args = ["build", "--seed", "3", "--out", str(out)] + (["--versions", "2"] if cls else [])
    result = runner.invoke(main, args)
    if where == "tmpdir" and cls:  # the class streams to TeX: nothing of ours is in TMPDIR
        assert result.exit_code == 0, result.output
    else:
        _one_line_about_the_disk(result)
        assert not [p for p in _tree(out) if not p.startswith(".failed-")]
    assert not _leftovers(out, own_tmpdir)
    assert not list(own_tmpdir.iterdir())


@pytest.mark.parametrize("fmt", ["gift", "moodle", "qti"])
def test_a_full_disk_during_an_export_is_one_line_and_leaves_nothing(
    runner, tmp_path, key_json, full_disk, fmt
):
    out = tmp_path / "exports"
    out.mkdir()
    full_disk(out, budget=100)
    result = runner.invoke(
        main, ["export", "--to", fmt, "--key", str(key_json), "--out", str(out / "x")]
    )
    line = _one_line_about_the_disk(result)
    assert str(out / "x") in line
    assert _tree(out) == []


@pytest.mark.parametrize("code,code_name", [(errno.ENOSPC, "ENOSPC"), (errno.EACCES, "EACCES")])
def test_a_full_disk_during_grading_is_one_line_and_leaves_nothing(
    runner, tmp_path, key_json, full_disk, code, code_name
):
    responses = _answered(runner, key_json, tmp_path)
    out = tmp_path / "grades"
    out.mkdir()
    full_disk(out, code, budget=10)
    result = runner.invoke(
        main, ["grade", "--key", str(key_json), str(responses), "--out", str(out)]
    )
    _one_line_about_the_disk(result, code_name)
    assert _tree(out) == []


def test_a_full_disk_while_writing_the_template_is_one_line_and_leaves_nothing(
    runner, tmp_path, key_json, full_disk
):
    folder = tmp_path / "blank"
    folder.mkdir()
    full_disk(folder, budget=10)
    result = runner.invoke(
        main, ["grade", "--key", str(key_json), "--template", str(folder / "responses.csv")]
    )
    assert str(folder / "responses.csv") in _one_line_about_the_disk(result)
    assert _tree(folder) == []  # its temporary file is gone too


def test_a_build_removes_what_killed_builds_left_and_only_that(runner, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    dead = _dead_pid()
    stale = out / f".self-attention-seed9.tmp-{dead}-abcd_123"
    (stale / "students").mkdir(parents=True)
    (stale / "sheets.tex").write_text("half", encoding="utf-8")
    stale_old = out / f".other-seed1.old-{dead}-zzzzzzzz"
    stale_old.mkdir()
    stale_file = out / f".gift.txt.tmp-{dead}-qwertyui"
    stale_file.write_text("half", encoding="utf-8")
    alive = out / f".self-attention-seed9.tmp-{os.getpid()}-abcdefgh"  # a running build's
    alive.mkdir()
    unknown = [
        out / ".self-attention-seed9.tmp-abcdefgh",  # no pid: not known to be ours
        out / f"self-attention-seed9.tmp-{dead}-abcdefgh",  # not hidden
        out / ".failed-self-attention-seed9",  # kept on purpose
        out / "notes",
    ]
    for p in unknown:
        p.mkdir()
    result = runner.invoke(main, ["build", "--seed", "1", "--no-pdf", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert not stale.exists() and not stale_old.exists() and not stale_file.exists()
    assert alive.exists() and all(p.exists() for p in unknown)
    notes = [line for line in result.stderr.splitlines() if "interrupted build" in line]
    assert len(notes) == 1 and str(stale) in notes[0] and "removed 3 temporary" in notes[0]
    quiet = out / f".self-attention-seed9.tmp-{dead}-quietquy"
    quiet.mkdir()
    result = runner.invoke(main, ["build", "--seed", "1", "--no-pdf", "--out", str(out), "-q"])
    assert result.exit_code == 0 and result.output == "" and not quiet.exists()


@needs_tex
def test_kill_9_of_a_class_build_with_pdfs_is_cleaned_up_by_the_next_build(tmp_path, own_tmpdir):
    out = tmp_path / "out"
    env = {**os.environ, "TMPDIR": str(own_tmpdir)}
    cmd = [
        sys.executable,
        "-m",
        "worksheetgen",
        "build",
        "--seed",
        "4",
        "--versions",
        "40",
        "--out",
        str(out),
        "-q",
    ]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
            (out / p).is_dir() and (out / p / "sheets.tex").exists()
            for p in (os.listdir(out) if out.exists() else [])
        ):
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read()
        proc.kill()  # SIGKILL: nothing of ours runs
    finally:
        proc.wait()
    left = [p for p in out.iterdir() if ".tmp-" in p.name]
    assert left, "the killed build left nothing to clean up"
    time.sleep(0.5)  # TeX, reading the pipe of the killed build, stops at its end
    run = subprocess.run([*cmd[:-1]], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "interrupted build left" in run.stderr
    assert [p.name for p in out.iterdir()] == ["self-attention-seed4-versions40"]
    assert not list(own_tmpdir.iterdir())


@needs_tex
def test_a_truncated_cached_format_is_dumped_again_before_use(tmp_path, monkeypatch, runner):
    from worksheetgen.tex import formats as tex_formats

    monkeypatch.setenv("WORKSHEETGEN_CACHE_DIR", str(tmp_path / "cache"))
    out = str(tmp_path / "out")
    assert runner.invoke(main, ["build", "--seed", "2", "--out", out, "-q"]).exit_code == 0
    (fmt,) = (tmp_path / "cache").glob("tex-formats-*/ws-*.fmt")
    whole = fmt.read_bytes()
    fmt.write_bytes(whole[: len(whole) // 3])  # as after a power cut
    for args in (["--seed", "2"], ["--seed", "2", "--versions", "2"]):
        result = runner.invoke(main, ["build", *args, "--out", out, "-q"])
        assert result.exit_code == 0, result.output
        # dumped again whole (not byte for byte: a format records the minute it was dumped)
        again = fmt.read_bytes()
        assert len(again) == len(whole) and again.endswith(tex_formats._FORMAT_END)
        fmt.write_bytes(whole[:1000])


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize(
    "args",
    [["export", "--to", "gift", "--out", "-"], ["grade", "--template", "-"]],
    ids=["export", "template"],
)
def test_standard_output_on_a_full_disk_is_one_line(key_json, args):
    with open("/dev/full", "wb") as full:
        run = subprocess.run(
            [sys.executable, "-m", "worksheetgen", *args[:1], "--key", str(key_json), *args[1:]],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert run.returncode == 1
    assert run.stderr.strip() == (
        "worksheetgen: error: standard output: cannot write here: No space left on device (ENOSPC)"
    )


def test_an_export_removes_the_temporary_file_a_killed_export_left(runner, tmp_path, key_json):
    dead = _dead_pid()
    left = tmp_path / f".gift.txt.tmp-{dead}-abcdefgh"
    left.write_text("half", encoding="utf-8")
    other = tmp_path / f".moodle.xml.tmp-{dead}-abcdefgh"  # another file's: not this one's
    other.write_text("half", encoding="utf-8")
    result = runner.invoke(
        main,
        ["export", "--to", "gift", "--key", str(key_json), "--out", str(tmp_path / "gift.txt")],
    )
    assert result.exit_code == 0
    assert not left.exists() and other.exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize(
    "args", [["families"], ["build", "--seed", "1", "--no-pdf"]], ids=["families", "build"]
)
def test_printing_to_a_full_standard_output_is_one_line_not_a_traceback(tmp_path, args):
    with open("/dev/full", "wb") as full:
        run = subprocess.run(
            [sys.executable, "-m", "worksheetgen", *args],
            cwd=tmp_path,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert run.returncode == 1
    assert run.stderr.strip() == (
        "worksheetgen: error: standard output: cannot write here: No space left on device (ENOSPC)"
    )


@pytest.mark.parametrize("whom", [[], ["--versions", "2"]], ids=["lone", "class"])
def test_an_export_refused_after_the_draw_leaves_no_out_folder(runner, tmp_path, whom):
    """A mark-all question Canvas cannot score as grade does is refused once the key is
    written, after the sheets are drawn: the build fails in one line and takes away the
    folders it made for --out (a lone sheet's build used to leave --out behind, empty)."""
    from tests.paths import ROOT

    (tmp_path / "kept").mkdir()
    for out in (tmp_path / "new" / "deeper" / "out", tmp_path / "kept" / "out"):
        bank = ROOT / "tests" / "fixtures" / "mark-all.yaml"
        args = ["build", "--bank", str(bank), "--seed", "3", "--export", "qti", "--no-pdf"]
        result = runner.invoke(main, [*args, *whom, "--out", str(out), "-q"])
        assert result.exit_code == 1, result.output
        assert "Canvas docks each wrong mark" in result.output
        assert len(result.output.strip().splitlines()) == 1
        assert not out.exists()
    assert not (tmp_path / "new").exists()
    assert _tree(tmp_path / "kept") == []
