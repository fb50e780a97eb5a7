"""Issue 25, the file gates: every file worksheetgen reads passes one gate (a regular file,
within its size and read limit) before a byte is read; the course secret is never shown.

Each hostile input is run as a person runs it (a process, with a time limit, since a FIFO
hangs a reader that skips the gate): one line on stderr, a non-zero exit, no traceback,
within seconds.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs and devices")


SECRET = "0123456789abcdef" * 4  # the course secret of these tests, as init writes one


#: a file worksheetgen must never wait on: a reader that opens it blocks until killed
TIME_LIMIT = 60


#: what "within seconds" means here: the command's processor time (the machine is shared,
#: so the time on the clock says little; a hang is caught by TIME_LIMIT)
SECONDS = 10


def run(cwd: Path, *args: str, secret: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKSHEETGEN")}
    if secret is not None:
        env["WORKSHEETGEN_SECRET"] = secret
    return subprocess.run(
        [sys.executable, "-m", "worksheetgen", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIME_LIMIT,
        stdin=subprocess.DEVNULL,
    )


def refused(cwd: Path, *args: str, secret: str | None = None) -> str:
    """The one error line of a command that must refuse its input, within seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = run(cwd, *args, secret=secret)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    took = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    assert done.returncode != 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    # the note naming the configuration file in use is no error line
    lines = [
        x for x in done.stderr.splitlines() if not x.startswith("worksheetgen: configuration:")
    ]
    assert len(lines) == 1, done.stderr
    assert took < SECONDS, (took, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A course folder as `init` makes it, with a key built with its secret."""
    folder = tmp_path_factory.mktemp("course")
    assert run(folder, "init", ".").returncode == 0
    done = run(folder, "build", "--seed", "3", "--no-pdf", "--out", "out")
    assert done.returncode == 0, done.stderr
    return folder


def key_of(course: Path) -> str:
    return str(next((course / "out").rglob("key.json")))


def hostile(folder: Path, name: str, kind: str) -> Path:
    """A path ``name`` in ``folder`` that is a FIFO, a folder or /dev/zero."""
    path = folder / name
    if os.path.lexists(path):
        return path
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    return path


KINDS = {"fifo": "FIFO", "folder": "folder", "zero": "character device"}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("command", [["config"], ["build", "--seed", "1", "--no-pdf"]])
def test_a_secret_file_that_is_no_regular_file_is_refused_before_it_is_read(
    tmp_path, kind, command
):
    hostile(tmp_path, "secret", kind)
    (tmp_path / "worksheetgen.toml").write_text('secret_file = "secret"\n')
    line = refused(tmp_path, *command)
    assert f"secret_file: expected a secret file, got a {KINDS[kind]}" in line
    assert "chmod" not in line
    assert not (tmp_path / "output").exists()


def test_a_secret_file_others_may_read_is_still_refused_with_chmod(tmp_path):
    (tmp_path / "secret").write_text(SECRET)
    (tmp_path / "secret").chmod(0o644)
    (tmp_path / "worksheetgen.toml").write_text('secret_file = "secret"\n')
    assert "expected mode 0600" in refused(tmp_path, "config")


#: every command that takes a key, as it reads one (KEY for the key's path)
KEY_COMMANDS = {
    "grade": ["grade", "--key", "KEY", "r.csv", "--out", "g"],
    "grade-template": ["grade", "--key", "KEY", "--template", "t.csv"],
    "export": ["export", "--to", "gift", "--key", "KEY", "--out", "x.txt"],
    "scan": ["scan", "s.pdf", "--key", "KEY", "--out", "g"],
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("command", sorted(KEY_COMMANDS))
def test_a_key_that_is_no_regular_file_is_refused_by_its_gate_with_a_secret_set(
    tmp_path, kind, command
):
    key = hostile(tmp_path, "key.json", kind)
    (tmp_path / "r.csv").write_text("student,question,answer,entry,value\n")
    (tmp_path / "s.pdf").write_bytes(b"%PDF-1.4\n")
    args = [str(key) if a == "KEY" else a for a in KEY_COMMANDS[command]]
    line = refused(tmp_path, *args, secret=SECRET)
    if kind == "folder":  # refused by the option itself, before any reader, in our words
        assert (
            line.startswith("worksheetgen: error: --key: ")
            and "expected a file, got a folder" in line
        )
    else:
        assert f"expected a key.json file, got a {KINDS[kind]}" in line
    assert not (tmp_path / "g").exists() and not (tmp_path / "x.txt").exists()
    assert not (tmp_path / "t.csv").exists()


@pytest.mark.parametrize("command", ["grade", "export"])
def test_a_key_nested_100000_deep_is_one_line_with_a_secret_set(tmp_path, command):
    (tmp_path / "key.json").write_text('{"secret": ' + "[" * 100_000 + "]" * 100_000 + "}")
    args = (
        ["grade", "--key", "key.json", "--template", "t.csv"]
        if command == "grade"
        else ["export", "--to", "gift", "--key", "key.json", "--out", "x.txt"]
    )
    line = refused(tmp_path, *args, secret=SECRET)
    assert "key.json" in line and "nested at most 64 levels" in line


def test_a_key_of_another_secret_is_refused_in_the_same_read(course, tmp_path):
    line = refused(
        tmp_path, "export", "--to", "gift", "--key", key_of(course), secret="another secret!!"
    )
    assert "secret: expected a key built with the configured course secret" in line
    assert "another secret!!" not in line


def _never_shows_the_secret(text: str, secret: str) -> None:
    for start in range(0, len(secret) - 8 + 1):
        assert secret[start : start + 8] not in text, text


def _file_options(course: Path, secret: str) -> list[list[str]]:
    key = key_of(course)
    return [
        ["grade", "--key", key, secret, "--out", "g"],
        ["grade", "--key", secret, "r.csv", "--out", "g"],
        ["grade", "--key", secret, "--template", "t.csv"],
        ["export", "--to", "gift", "--key", secret, "--out", "x.txt"],
        ["build", "--seed", "1", "--no-pdf", "--roster", secret, "--out", "o"],
        ["build", "--seed", "1", "--no-pdf", "--bank", secret, "--out", "o"],
        ["check", "--bank", secret],
    ]


def test_the_secret_file_given_to_every_file_option_is_never_shown(course):
    secret = (course / ".worksheetgen-secret").read_text().strip()
    (course / "r.csv").write_text("student,question,answer,entry,value\n")
    for args in _file_options(course, ".worksheetgen-secret"):
        line = refused(course, *args)
        _never_shows_the_secret(line, secret)
        assert "course secret's file" in line, line


def test_a_private_copy_of_a_secret_is_never_shown_either(course, tmp_path):
    """Another course's secret (a file of the secret's mode, not the configured one)."""
    other = tmp_path / "other-secret"
    fd = os.open(other, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"fedcba9876543210" * 4 + b"\n")
    os.close(fd)
    (course / "r.csv").write_text("student,question,answer,entry,value\n")
    for args in _file_options(course, str(other)):
        _never_shows_the_secret(refused(course, *args), "fedcba9876543210" * 4)


def test_the_secret_from_the_environment_is_never_shown_in_a_quoted_cell(tmp_path):
    (tmp_path / "roster.csv").write_text(f"{SECRET}\nAda\n")
    line = refused(
        tmp_path, "build", "--seed", "1", "--no-pdf", "--roster", "roster.csv", secret=SECRET
    )
    assert "roster.csv:1: header" in line
    _never_shows_the_secret(line, SECRET)


_TYPES = (
    '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
    'content-types"/>'
)


_SHEET = (
    '<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/'
    'spreadsheetml/2006/main"><sheetData>{rows}</sheetData></worksheet>'
)


def xlsx(path: Path, rows: str | bytes, *, sheet: bool = True) -> Path:
    """An .xlsx with the sheet XML given (rows inside sheetData, or the whole part)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", _TYPES)
        if sheet:
            body = rows if isinstance(rows, bytes) else _SHEET.format(rows=rows).encode()
            zf.writestr("xl/worksheets/sheet1.xml", body)
    return path


def ods(path: Path, rows: str) -> Path:
    content = (
        '<?xml version="1.0"?><office:document-content '
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body>'
        f"<office:spreadsheet><table:table>{rows}</table:table></office:spreadsheet>"
        "</office:body></office:document-content>"
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        zf.writestr("content.xml", content)
    return path


def cell(text: str, ref: str = "") -> str:
    where = f' r="{ref}"' if ref else ""
    return f'<c{where} t="inlineStr"><is><t>{text}</t></is></c>'


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("suffix", [".xlsx", ".ods"])
def test_a_spreadsheet_that_is_no_regular_file_is_refused_before_it_is_read(
    course, tmp_path, kind, suffix
):
    path = hostile(tmp_path, "responses" + suffix, kind)
    line = refused(tmp_path, "grade", "--key", key_of(course), str(path), "--out", "g")
    if kind == "folder":  # refused by the argument itself, before any reader, in our words
        assert "expected a file, got a folder" in line
    else:
        assert f"got a {KINDS[kind]}" in line
    assert not (tmp_path / "g").exists()


def test_a_zip_bomb_is_refused_from_its_declared_sizes(course, tmp_path):
    bomb = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as fh:
            block = b" " * (1 << 20)
            for _ in range(150):  # 150 MB of spaces, about 150 KB packed
                fh.write(block)
    assert bomb.stat().st_size < 1_000_000
    line = refused(tmp_path, "grade", "--key", key_of(course), str(bomb), "--out", "g")
    assert "bytes of XML packed in it (at most 100000000 are unpacked)" in line


def test_a_million_rows_are_refused_within_seconds(course, tmp_path):
    rows = "".join(f'<row r="{n}">{cell("x")}</row>' for n in range(1, 1_000_001))
    path = xlsx(tmp_path / "million.xlsx", rows)
    line = refused(tmp_path, "grade", "--key", key_of(course), str(path), "--out", "g")
    assert "expected at most 100000 rows, got more" in line


def test_a_row_repeated_a_million_times_is_refused_within_seconds(course, tmp_path):
    row = '<table:table-row table:number-rows-repeated="1000000"><table:table-cell>'
    path = ods(tmp_path / "repeat.ods", row + "<text:p>x</text:p></table:table-cell>"
               "</table:table-row>")  # fmt: skip
    line = refused(tmp_path, "grade", "--key", key_of(course), str(path), "--out", "g")
    assert "expected at most 100000 rows, got more" in line


@pytest.mark.parametrize(
    ("name", "make", "said"),
    [
        (
            "cut.xlsx",
            lambda p: xlsx(p, _SHEET.format(rows=cell("a") * 50).encode()[:-40]),
            "cut off or not well-formed",
        ),
        ("nosheet.xlsx", lambda p: xlsx(p, "", sheet=False), "got none of its part"),
        ("ref.xlsx", lambda p: xlsx(p, f'<row r="1">{cell("a", "ZZZZ1")}</row>'), "impossible"),
        ("ref0.xlsx", lambda p: xlsx(p, f'<row r="1">{cell("a", "A0")}</row>'), "impossible"),
        (
            "shared.xlsx",
            lambda p: xlsx(p, '<row r="1"><c r="A1" t="s"><v>7</v></c></row>'),
            "shared string",
        ),
        (
            "dtd.xlsx",
            lambda p: xlsx(
                p,
                b'<?xml version="1.0"?><!DOCTYPE w [<!ENTITY a "aaaaaaaaaa">'
                b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><worksheet>&b;</worksheet>',
            ),
            "entities or a DTD",
        ),
        (
            "repeat.ods",
            lambda p: ods(
                p,
                '<table:table-row><table:table-cell table:number-columns-repeated="-3">'
                "<text:p>x</text:p></table:table-cell></table:table-row>",
            ),
            "bad repeat count '-3'",
        ),
        (
            "nocontent.ods",
            lambda p: zipfile.ZipFile(p, "w").close(),
            "got none of its part (content.xml)",
        ),
        ("text.ods", lambda p: p.write_text("name,answer\n"), "got no zip file"),
    ],
)
def test_a_damaged_spreadsheet_is_one_line_naming_what_is_wrong(course, tmp_path, name, make, said):
    path = tmp_path / name
    make(path)
    line = refused(tmp_path, "grade", "--key", key_of(course), str(path), "--out", "g")
    assert line.startswith(f"worksheetgen: error: {path}: expected an"), line
    assert said in line
    assert not (tmp_path / "g").exists()


@pytest.mark.parametrize("command", ["grade", "export"])
def test_a_key_of_28000_sheets_is_refused_at_once(tmp_path, command):
    sheet = '{"id": "v%d", "code": "C-%05d", "questions": [{"id": "q", "variant": 1}]}'
    sheets = ",\n".join(sheet % (i, i) for i in range(28_000))
    (tmp_path / "key.json").write_text('{"format": "worksheetgen-key", "sheets": [' + sheets + "]}")
    args = (
        ["grade", "--key", "key.json", "--template", "t.csv"]
        if command == "grade"
        else ["export", "--to", "gift", "--key", "key.json", "--out", "x.txt"]
    )
    line = refused(tmp_path, *args)
    assert (
        "key.json: sheets: expected at most 2000 sheets (the largest class build), got 28000"
        in line
    )
    assert not (tmp_path / "t.csv").exists() and not (tmp_path / "x.txt").exists()


def test_a_key_of_more_questions_than_a_class_build_is_refused_at_once(tmp_path):
    questions = ", ".join(['{"id": "q"}'] * 21)
    sheets = ", ".join(f'{{"id": "v{i}", "questions": [{questions}]}}' for i in range(2000))
    (tmp_path / "key.json").write_text('{"sheets": [' + sheets + "]}")
    line = refused(tmp_path, "export", "--to", "gift", "--key", "key.json", "--out", "x.txt")
    assert "expected at most 40000 questions in all sheets together" in line and "got 42000" in line
