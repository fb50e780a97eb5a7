"""A document fed to TeX while it is written: the writer never waits for TeX to start (what
it writes meanwhile is kept, within a bound), TeX gets every byte in order, and the TeX
installation is asked once however many documents start at once."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

import pytest

from tests.conftest import needs_tex
from worksheetgen.tex import formats
from worksheetgen.tex import run as tex
from worksheetgen.tex.feed import PIPE_BYTES, TexFeed

HEAD = "\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\nfirst\n"


def _read_all(fifo: Path, out: list[bytes], opened: threading.Event) -> None:
    with open(fifo, "rb") as fh:
        opened.set()
        out.append(fh.read())


def _attached(feed: TexFeed, tmp_path: Path) -> tuple[threading.Thread, list[bytes]]:
    """The feed's pipe made and a reader on it, as the compile step does when TeX starts."""
    fifo = tmp_path / "doc.tex"
    os.mkfifo(fifo)
    feed.attach(fifo)  # opens the pipe for writing too: the reader's open returns at once
    got: list[bytes] = []
    opened = threading.Event()
    reader = threading.Thread(target=_read_all, args=(fifo, got, opened))
    reader.start()
    assert opened.wait(5)  # open before the feed closes, or the reader would wait for good
    return reader, got


def _done(feed: TexFeed, reader: threading.Thread) -> None:
    feed.close()  # the reader sees the end of the pipe once every writer closed it
    reader.join(5)
    assert not reader.is_alive()


def test_writes_before_tex_starts_return_at_once_and_arrive_in_order(tmp_path):
    feed = TexFeed(head=HEAD)
    feed.write(HEAD)  # nobody reads yet: kept, not waited for
    feed.write("second\n")
    reader, got = _attached(feed, tmp_path)
    feed.write("third\n\\end{document}\n")
    _done(feed, reader)
    assert got == [(HEAD + "second\nthird\n\\end{document}\n").encode()]


def test_what_is_kept_reaches_tex_on_flush_after_the_last_write(tmp_path):
    feed = TexFeed(head=HEAD)
    feed.write(HEAD)
    feed.write("\\end{document}\n")
    reader, got = _attached(feed, tmp_path)
    feed.flush()
    _done(feed, reader)
    assert got == [(HEAD + "\\end{document}\n").encode()]


def test_writing_nothing_hands_over_what_was_kept_once_tex_started(tmp_path):
    """The answer grid's head is written first and its body only after the last sheet:
    its TeX gets the head as soon as it starts, not at the end."""
    feed = TexFeed(head=HEAD)
    feed.write(HEAD)
    feed.write("")  # not started yet: still kept
    reader, got = _attached(feed, tmp_path)
    feed.write("")
    _done(feed, reader)
    assert got == [HEAD.encode()]


@pytest.mark.skipif(not hasattr(fcntl, "F_GETPIPE_SZ"), reason="Linux pipes only")
def test_the_pipe_to_tex_holds_a_whole_class_document(tmp_path):
    """A 30-student sheets.tex is about 0.5 MB: with a 1 MB pipe the writer never waits on
    one TeX run while the others have nothing to read."""
    feed = TexFeed()
    reader, _ = _attached(feed, tmp_path)
    assert feed._fd is not None
    assert fcntl.fcntl(feed._fd, fcntl.F_GETPIPE_SZ) >= PIPE_BYTES
    _done(feed, reader)


def test_the_preamble_is_blanked_in_what_was_kept_when_tex_starts_from_a_format(tmp_path):
    feed = TexFeed(head=HEAD)
    feed.write(HEAD)
    feed.write("more\n")
    feed.strip_preamble = True  # the compile step found the preamble's format
    reader, got = _attached(feed, tmp_path)
    feed.flush()
    _done(feed, reader)
    assert got == [formats.blank_preamble(HEAD + "more\n").encode()]
    assert got[0].count(b"\n") == (HEAD + "more\n").count("\n")  # same line numbers


def test_past_the_bound_a_write_waits_for_tex(tmp_path, monkeypatch):
    monkeypatch.setattr(TexFeed, "PENDING_BYTES", 10)
    feed = TexFeed()
    feed.write("12345")  # kept
    finished = threading.Event()

    def write_more() -> None:
        feed.write("67890abcdef")  # past 10 characters: waits for TeX
        finished.set()

    writer = threading.Thread(target=write_more)
    writer.start()
    assert not finished.wait(0.3)  # still waiting: TeX has not started
    reader, got = _attached(feed, tmp_path)
    assert finished.wait(5)
    writer.join()
    _done(feed, reader)
    assert got == [b"1234567890abcdef"]


def test_a_feed_whose_tex_stopped_before_it_started_is_broken_not_stuck():
    feed = TexFeed()
    feed.write("kept")
    feed.tex_stopped()  # TeX never started (its run failed before the pipe was made)
    feed.write("more")
    feed.flush()
    assert feed.broken


@needs_tex
def test_the_installation_is_asked_once_for_documents_starting_at_once(monkeypatch):
    formats._installation_of.cache_clear()
    runs: list[list[str]] = []
    real = formats.subprocess.run

    def counting(cmd, *args, **kwargs):
        runs.append(list(cmd))
        return real(cmd, *args, **kwargs)

    monkeypatch.setattr(formats.subprocess, "run", counting)
    engine = tex.require_engine()
    threads = [threading.Thread(target=formats._installation, args=(engine,)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    asked = [c for c in runs if os.path.basename(c[0]) == "kpsewhich"]
    assert len(asked) == 1
    formats._installation_of.cache_clear()


def test_a_document_whose_run_fails_before_tex_starts_leaves_no_writer_waiting(
    tmp_path, monkeypatch
):
    """A run that fails before TeX starts (here: no folder for it) is reported, and the
    writer's last flush gives up instead of waiting for a TeX that never comes."""
    from worksheetgen.errors import CompileError

    def no_folder(*args, **kwargs):
        raise CompileError("no room for TeX's folder")

    monkeypatch.setattr(tex, "tex_folder", no_folder)
    feed = TexFeed(head=HEAD)
    feed.write(HEAD)
    job = tex.TexJob("sheets", path=tmp_path / "sheets.tex", engine="pdflatex", feed=feed)
    monkeypatch.setattr(tex, "require_engine", lambda *a, **k: "/bin/false")
    with pytest.raises(CompileError):
        tex.compile_jobs([job], tmp_path / "failed")
    done = threading.Event()

    def last_flush() -> None:
        feed.write("\\end{document}\n")
        feed.flush()
        done.set()

    threading.Thread(target=last_flush, daemon=True).start()
    assert done.wait(5)
    assert feed.broken
