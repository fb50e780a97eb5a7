"""Scans whose decoding would take unbounded work are refused in one line, before or while
a page is decoded (issue 33, section 2): an image declaring billions of pixels, a PDF page
of 200 inches, a content stream inflating to gigabytes, a page tree listing one page
thousands of times; no library warning reaches the user; a folder given as a scan is said
in the project's words."""

from __future__ import annotations

import resource
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from tests.conftest import ROOT, needs_tex

pytestmark = needs_tex
QUIZ = str(ROOT / "banks" / "quiz.yaml")


def tiny_pdf(box: tuple[int, int] = (595, 842), content: bytes = b"", kids: int = 1) -> bytes:
    """A PDF of one page object (``box`` in points, its content stream deflated), listed
    ``kids`` times by the page tree."""

    def stream(data: bytes) -> bytes:
        packed = zlib.compress(data, 9)
        head = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed)
        return head + packed + b"\nendstream"

    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join([b"3 0 R"] * kids), kids),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Contents 4 0 R >>" % box,
        stream(content),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def grey_png(width: int, height: int, rows: bytes = b"") -> bytes:
    """A grey PNG's bytes declaring ``width`` x ``height`` (its pixel rows as given)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


@pytest.fixture(scope="module")
def key(quiz: Path) -> Path:
    """The scannable quiz's key.json (the quiz: tests/unit/scan/conftest.py)."""
    return quiz / "key.json"


def _memory_bound() -> None:
    """The scan under test may take 3 GB of address space (an unbounded decoder would take
    ten times that, starving the machine, before dying)."""
    resource.setrlimit(resource.RLIMIT_AS, (3_000_000_000, 3_000_000_000))


def _scan(key: Path, out: Path, *scans: Path, timeout: float = 90) -> subprocess.CompletedProcess:
    """``worksheetgen scan`` as a user runs it (its own process, its own stderr)."""
    return subprocess.run(
        [sys.executable, "-m", "worksheetgen", "scan", *map(str, scans), "--key", str(key)]
        + ["--out", str(out), "-q", "-j", "1"],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_memory_bound,
    )


def _refused(res: subprocess.CompletedProcess, name: str, says: str, out: Path) -> None:
    assert res.returncode == 1, (res.returncode, res.stderr)
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.startswith(f"worksheetgen: error: {name}"), res.stderr
    assert says in res.stderr, res.stderr
    assert not out.exists() or not any(out.iterdir())


def test_an_image_declaring_billions_of_pixels_is_refused_before_decoding(key, tmp_path):
    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(grey_png(50_000, 50_000))
    assert len(bomb.read_bytes()) < 100
    res = _scan(key, tmp_path / "out", bomb)
    _refused(res, str(bomb), "expected a page of at most 120,000,000 pixels", tmp_path / "out")


def test_a_huge_pdf_page_is_refused_from_its_size_before_it_is_rendered(key, tmp_path):
    big = tmp_path / "big.pdf"
    big.write_bytes(tiny_pdf((14_400, 14_400)))
    start = time.monotonic()
    res = _scan(key, tmp_path / "out", big)
    _refused(res, f"{big}: page 1", "at most 120,000,000 pixels, got 40000x40000", tmp_path / "out")
    assert time.monotonic() - start < 20


def test_a_pdf_listing_one_page_thousands_of_times_is_refused_by_its_page_count(key, tmp_path):
    many = tmp_path / "many.pdf"
    many.write_bytes(tiny_pdf(kids=20_000))
    start = time.monotonic()
    res = _scan(key, tmp_path / "out", many)
    _refused(res, str(many), "expected at most 100 pages in all", tmp_path / "out")
    assert time.monotonic() - start < 20  # it ran past two minutes
    # the limit is the run's: two scans of 60 pages together are over it too
    halves = [tmp_path / "a.pdf", tmp_path / "b.pdf"]
    for half in halves:
        half.write_bytes(tiny_pdf(kids=60))
    res = _scan(key, tmp_path / "out", *halves)
    _refused(res, str(halves[1]), "got 120 with this scan's 60", tmp_path / "out")


def test_a_content_stream_inflating_to_gigabytes_stops_its_page_not_the_machine(key, tmp_path):
    bomb = tmp_path / "inflate.pdf"
    bomb.write_bytes(tiny_pdf(content=b"0 0 m 1 1 l S\n" * 22_000_000))  # 308 MB inflated
    assert len(bomb.read_bytes()) < 1_000_000
    res = _scan(key, tmp_path / "out", bomb)
    _refused(res, f"{bomb}: page 1", "expected a page that decodes within", tmp_path / "out")


def test_no_library_warning_reaches_the_user(key, tmp_path):
    """An image under the pixel limit but over Pillow's own warning threshold: Pillow's
    DecompressionBombWarning (with a site-packages path) is not printed."""
    side = 9_800  # 96 million pixels: under 120 million, over Pillow's 89 million
    page = tmp_path / "white.png"
    page.write_bytes(grey_png(side, side, (b"\x00" + b"\xff" * side) * side))
    res = _scan(key, tmp_path / "out", page, timeout=180)
    assert res.returncode == 0, res.stderr
    assert res.stderr == "", res.stderr


def test_a_folder_or_a_file_in_the_wrong_place_is_said_in_the_projects_words(key, tmp_path, runner):
    from worksheetgen.cli import main

    folder = tmp_path / "adir"
    folder.mkdir()
    afile = tmp_path / "afile"
    afile.write_text("x")
    cases = [
        (
            ["scan", str(folder), "--key", str(key)],
            f"scans: {folder}: expected a file, got a folder",
        ),
        (
            ["scan", str(afile), "--key", str(folder)],
            f"--key: {folder}: expected a file, got a folder",
        ),
        (
            ["scan", str(afile), "--key", str(key), "--out", str(afile)],
            f"--out: {afile}: expected a folder, got a file",
        ),
    ]
    for args, says in cases:
        res = runner.invoke(main, args)
        assert res.exit_code == 2, res.output
        assert res.output == f"worksheetgen: error: {says}\n"
