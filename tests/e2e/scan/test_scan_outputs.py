"""``scan``'s output folder is written as one set or not at all (issue 33, section 4): a
run stopped while writing (a full disk, an error, SIGTERM or Ctrl-C) leaves the previous
set as it was, never a new report beside old feedback pages; --out that cannot be a folder
or cannot be written is one line; scan never writes through a symbolic link to a folder
inside --out; staging folders of killed runs are swept."""

from __future__ import annotations

import errno
import io
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, needs_tex
from tests.e2e.scan.test_scan import _one_sheet_scans
from tests.signals import default_signals  # whatever this test was started with
from worksheetgen.errors import WorksheetgenError
from worksheetgen.scan.run import scan_files

pytestmark = needs_tex
QUIZ = str(ROOT / "banks" / "quiz.yaml")


@pytest.fixture(scope="module")
def scans(quiz: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    """Two marked scans of the quiz's sheet (one is read into the folder first, the other
    replaces it)."""
    out = {}
    for seed in (4, 5):
        tmp = tmp_path_factory.mktemp(f"scans{seed}")
        out[f"s{seed}"] = _one_sheet_scans(quiz, tmp, seed, 150, {})[2]
    return out


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative name -> bytes), staging folders included."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _scan(quiz: Path, files: list[Path], out: Path) -> None:
    scan_files([str(f) for f in files], quiz / "key.json", out, jobs=1)


def test_a_run_stopped_while_writing_leaves_the_previous_set_whole(
    quiz, scans, tmp_path, monkeypatch
):
    out = tmp_path / "out"
    _scan(quiz, scans["s4"], out)
    before = _snapshot(out)
    assert {"report.md", "class-report.html", "scores.csv", "issues.csv"} <= set(before)
    assert any(name.startswith("feedback/") for name in before)
    real_open = io.open
    opened = [0]
    fail_at = [0]

    def counting_open(file, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+"):
            opened[0] += 1
            if opened[0] == fail_at[0]:
                raise OSError(errno.ENOSPC, "No space left on device", str(file))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(io, "open", counting_open)
    # how many files a whole run writes, then a full disk at the first, some and the last
    fail_at[0] = -1
    other = tmp_path / "other"
    _scan(quiz, scans["s5"], other)
    writes = opened[0]
    assert writes > 10
    for k in sorted({1, 2, writes // 3, writes // 2, writes - 1, writes}):
        opened[0], fail_at[0] = 0, k
        with pytest.raises(WorksheetgenError) as caught:
            _scan(quiz, scans["s5"], out)
        assert "\n" not in str(caught.value)
        assert _snapshot(out) == before, f"a full disk at write {k} of {writes}"
    monkeypatch.setattr(io, "open", real_open)
    _scan(quiz, scans["s5"], out)  # a whole run replaces the whole set
    after = _snapshot(out)
    same = _snapshot(other)  # the same inputs: the same bytes (report.md names its folder)
    same["report.md"] = same["report.md"].replace(bytes(other), bytes(out))
    assert after == same
    assert after["responses.csv"] != before["responses.csv"]


def test_a_symlinked_folder_inside_out_is_refused_and_nothing_is_written_through_it(
    quiz, scans, tmp_path
):
    for name in ("feedback", "crops", "class-report"):
        out = tmp_path / f"out-{name}"
        out.mkdir()
        elsewhere = tmp_path / f"elsewhere-{name}"
        elsewhere.mkdir()
        (out / name).symlink_to(elsewhere)
        with pytest.raises(WorksheetgenError) as caught:
            _scan(quiz, scans["s4"], out)
        assert "symbolic link" in str(caught.value) and name in str(caught.value)
        assert not any(elsewhere.iterdir())
        assert sorted(p.name for p in out.iterdir()) == [name]


def _cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "worksheetgen", *args],
        capture_output=True,
        text=True,
        timeout=300,
        **kwargs,
    )


def test_an_out_that_cannot_be_a_folder_is_one_line(quiz, scans, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    page = str(scans["s4"][0])
    res = _cli("scan", page, "--key", str(quiz / "key.json"), "--out", str(afile / "sub"))
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.count("\n") == 1 and "a regular file" in res.stderr, res.stderr
    assert afile.read_text() == "mine\n"


def test_a_read_only_out_is_one_line(quiz, scans, tmp_path):
    """A read-only file system (a bind mount in a mount namespace of its own, where this
    user may make one), as --out and as the folder of the default beside the key."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not installed")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("no mount namespace for this user")
    ro = tmp_path / "ro"
    shutil.copytree(quiz, ro)
    page = str(scans["s4"][0])
    command = (
        f'mount --bind "{ro}" "{ro}" && mount -o remount,ro,bind "{ro}" "{ro}" && '
        f'"{sys.executable}" -m worksheetgen scan "{page}" --key "{ro}/key.json" '
        f'--out "{ro}/out"; echo "rc=$?"; '
        f'"{sys.executable}" -m worksheetgen scan "{page}" --key "{ro}/key.json"; echo "rc=$?"'
    )
    res = subprocess.run(
        ["unshare", "-m", "sh", "-c", command], capture_output=True, text=True, timeout=300
    )
    assert res.stdout.splitlines() == ["rc=1", "rc=1"], (res.stdout, res.stderr)
    lines = res.stderr.splitlines()
    assert len(lines) == 2 and "Traceback" not in res.stderr, res.stderr
    assert lines[0].startswith(f"worksheetgen: error: {ro}: --out: cannot write here")
    assert lines[1].startswith(f"worksheetgen: error: {ro}: cannot write here")
    assert "--out" in lines[1]  # says how to write elsewhere


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_staging_folders_of_killed_runs_are_swept(quiz, scans, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    legacy = out / ".scan-k3j9x_2a"  # an earlier version's
    stale = out / f".scan.tmp-{_dead_pid()}-abcdEF12"
    for folder in (legacy, stale):
        (folder / "feedback").mkdir(parents=True)
        (folder / "feedback" / "s.html").write_text("old")
    _scan(quiz, scans["s4"], out)
    assert not legacy.exists() and not stale.exists()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def _set_of(folder: Path) -> dict[str, bytes]:
    return {k: v for k, v in _snapshot(folder).items() if not k.startswith(".")}


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupt_ends_with_exit_130_one_line_and_one_whole_set(quiz, scans, tmp_path, signum):
    """The signal to the whole process group (as a terminal's Ctrl-C, or `kill -- -PGID`),
    at moments through the run: exit 130 and one line, or the run had ended; the folder
    holds the previous set or the new one, whole."""
    out = tmp_path / "out"
    _scan(quiz, scans["s4"], out)
    before = _set_of(out)
    whole = tmp_path / "whole"
    _scan(quiz, scans["s5"], whole)
    new = _set_of(whole)  # report.md names its folder
    new["report.md"] = new["report.md"].replace(bytes(whole), bytes(out))
    args = [sys.executable, "-m", "worksheetgen", "scan", *map(str, scans["s5"])]
    args += ["--key", str(quiz / "key.json"), "--out", str(out), "-q", "-j", "2"]

    # the moments: spread over a whole run's length
    start = time.monotonic()
    subprocess.run(args, capture_output=True, timeout=300, preexec_fn=default_signals)
    length = time.monotonic() - start
    shutil.rmtree(out)
    _scan(quiz, scans["s4"], out)
    ended = 0
    for share in (0.3, 0.6, 0.9, 1.0):
        child = subprocess.Popen(
            args,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=default_signals,
        )
        time.sleep(length * share)
        try:
            os.killpg(child.pid, signum)
        except ProcessLookupError:
            pass
        stdout, stderr = child.communicate(timeout=120)
        now = _set_of(out)
        if child.returncode == 0:
            ended += 1
            assert stderr == "" and now == new, stderr
            shutil.rmtree(out)
            _scan(quiz, scans["s4"], out)
            continue
        assert child.returncode == 130, (share, child.returncode, stderr)
        assert stderr.strip() == "worksheetgen: interrupted", (share, stderr)
        assert now in (before, new), share
        assert not [p for p in out.iterdir() if p.name.startswith(".scan")], share
    assert ended < 4  # at least one was interrupted


def test_scan_writes_the_same_bytes_for_the_same_inputs_at_any_time(
    quiz, scans, tmp_path, monkeypatch
):
    """Issue 33, section 7: responses, issues, crops, scores, report, class report and
    feedback pages, PDFs included, whatever the time of the run."""
    out = tmp_path / "out"
    _scan(quiz, scans["s4"], out)
    first = _snapshot(out)
    later = time.time() + 3 * 86400
    monkeypatch.setattr(time, "time", lambda: later)
    _scan(quiz, scans["s4"], out)  # replaces the first set with its own bytes
    again = _snapshot(out)
    assert any(name.endswith(".pdf") for name in first)
    assert sorted(first) == sorted(again)
    assert [name for name in first if first[name] != again[name]] == []
