"""Issue 25, the file gates: every file worksheetgen reads passes one gate (a regular file,
within its size and read limit) before a byte is read; the course secret is never shown.

Each hostile input is run as a person runs it (a process, with a time limit, since a FIFO
hangs a reader that skips the gate): one line on stderr, a non-zero exit, no traceback,
within seconds.
"""

from __future__ import annotations

import os

import pytest

from worksheetgen.bank.roster import parse_roster
from worksheetgen.errors import RosterError

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs and devices")


def test_a_roster_header_repeated_mid_file_is_refused_with_its_line():
    text = "name,id\nAda Lovelace,a1\n\nname,id\nAlan Turing,a2\n"
    with pytest.raises(RosterError) as info:
        parse_roster(text, "roster.csv")
    assert str(info.value).startswith("roster.csv:4: row: expected a student, got the header")


def test_a_student_called_name_with_an_id_is_still_a_student():
    students = parse_roster("name,id\nName,n1\n", "roster.csv")
    assert [s.name for s in students] == ["Name"]


def test_a_files_head_is_read_after_the_same_gates_as_the_whole(tmp_path):
    """``head``: a scan of thousands of pages is checked by its kind and size and its first
    bytes read, never the whole (issue 36 §2); a file over the limit or a folder is refused
    all the same, before a byte is read."""
    from worksheetgen.errors import ScanError
    from worksheetgen.inputs import read_limited

    big = tmp_path / "pile.pdf"
    big.write_bytes(b"%PDF-1.4\n" + b"x" * 5000)
    assert read_limited(big, 6000, what="a scan", error=ScanError, head=16) == b"%PDF-1.4\nxxxxxxx"
    assert read_limited(tmp_path / "pile.pdf", 6000, what="a scan", error=ScanError) == (
        big.read_bytes()
    )
    with pytest.raises(ScanError, match="expected a scan of at most 4000 bytes, got 5009"):
        read_limited(big, 4000, what="a scan", error=ScanError, head=16)
    with pytest.raises(ScanError, match="expected a scan, got a folder"):
        read_limited(tmp_path, 4000, what="a scan", error=ScanError, head=16)
    short = tmp_path / "short"
    short.write_bytes(b"%PDF")
    assert read_limited(short, 4000, what="a scan", error=ScanError, head=16) == b"%PDF"
