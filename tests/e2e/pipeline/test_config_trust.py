"""Hardening, round three (issue 25, §1 config item, §2, §3 config/init, §5): whose
configuration, whose cache, whose templates, and plugins that cannot break our output.

Every refusal is one line on stderr, a non-zero exit, no traceback and nothing half-written.
The tests run as root, so "another user" is simulated by giving files to uid 65534 (nobody).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

NOBODY = 65534
as_root = pytest.mark.skipif(
    not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to give files to nobody"
)


def run(
    args: list[str],
    cwd: Path,
    env: dict[str, str | None] | None = None,
    timeout: float = 120,
):
    """The installed CLI in a process of its own: stdout and stderr kept apart (the test
    session's cache folder kept; ``env`` values of None remove a variable)."""
    full = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("WORKSHEETGEN_") or k == "WORKSHEETGEN_CACHE_DIR"
    }
    for key, value in (env or {}).items():
        if value is None:
            full.pop(key, None)
        else:
            full[key] = value
    return subprocess.run(
        [sys.executable, "-m", "worksheetgen", *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The single error line of a failed command (and the checks every refusal meets)."""
    assert result.returncode != 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("worksheetgen: error: ")
    return lines[0]


# ---------------------------------------------------------------- §1: what the config file is


@pytest.mark.parametrize("kind", ["fifo", "dangling link", "folder"])
def test_a_configuration_that_is_no_regular_file_is_refused_not_skipped(tmp_path, kind):
    path = tmp_path / "worksheetgen.toml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dangling link":
        path.symlink_to(tmp_path / "nowhere.toml")
    else:
        path.mkdir()
    out = tmp_path / "out"
    for args in (["config"], ["build", "--seed", "1", "--no-pdf", "--out", str(out)]):
        line = one_line_error(run(args, tmp_path, timeout=30))  # a FIFO must not hang
        assert f"{path}: expected a configuration file, got" in line
    assert not out.exists()


def test_a_configuration_named_with_config_that_is_a_fifo_is_refused(tmp_path):
    fifo = tmp_path / "c.toml"
    os.mkfifo(fifo)
    line = one_line_error(run(["config", "--config", str(fifo)], tmp_path, timeout=30))
    assert "--config: " in line and "a FIFO" in line


# ---------------------------------------------------------------- §2: whose configuration


def _planted(folder: Path, owner: int | None = None, mode: int | None = None) -> Path:
    out = folder / "planted-out"
    path = folder / "worksheetgen.toml"
    path.write_text(f'title = "Planted"\nout = "{out}"\n', encoding="utf-8")
    if owner is not None:
        os.chown(path, owner, -1)
    if mode is not None:
        path.chmod(mode)
    return path


@as_root
def test_a_configuration_of_another_user_in_a_parent_is_refused_like_git(tmp_path):
    path = _planted(tmp_path, owner=NOBODY)
    work = tmp_path / "course"
    work.mkdir()
    result = run(["build", "--seed", "1", "--no-pdf", "--out", str(work / "o")], work)
    line = one_line_error(result)
    assert f"{path}: expected a configuration of your own" in line
    assert "another user (uid 65534)" in line
    assert "--config" in line and "WORKSHEETGEN_TRUST_CONFIG" in line
    assert not (tmp_path / "planted-out").exists() and not (work / "o").exists()


def test_a_configuration_others_can_write_or_in_a_folder_others_can_write_is_refused(
    tmp_path,
):
    path = _planted(tmp_path, mode=0o666)
    assert "writable by others (mode 0666)" in one_line_error(run(["config"], tmp_path))
    path.chmod(0o644)
    tmp_path.chmod(0o1777)  # a shared /tmp: sticky, but anyone may have planted the file
    try:
        line = one_line_error(run(["config"], tmp_path))
        assert "in a folder others can write (mode 1777)" in line
    finally:
        tmp_path.chmod(0o755)


@as_root
def test_group_write_is_a_door_only_when_the_group_has_others(tmp_path):
    import grp

    path = _planted(tmp_path, mode=0o664)
    if grp.getgrgid(os.getgid()).gr_mem:
        pytest.skip("our own group has other members here")
    # our own private group (as umask 002 makes files): no one else may write
    assert run(["config"], tmp_path).returncode == 0
    os.chown(path, -1, NOBODY)  # a group of others
    assert "writable by others (mode 0664)" in one_line_error(run(["config"], tmp_path))


@as_root
def test_an_untrusted_configuration_is_used_when_trusted_by_name_or_given(tmp_path):
    path = _planted(tmp_path, owner=NOBODY)
    trusted = run(["config"], tmp_path, {"WORKSHEETGEN_TRUST_CONFIG": str(path)})
    assert trusted.returncode == 0 and "title = Planted" in trusted.stdout
    given = run(["config", "--config", str(path)], tmp_path)
    assert given.returncode == 0 and f"configuration: {path}" in given.stdout


def test_the_configuration_in_use_is_named_on_stderr_never_on_stdout(tmp_path):
    (tmp_path / "worksheetgen.toml").write_text('title = "Quiz 1"\n', encoding="utf-8")
    out = tmp_path / "out"
    result = run(["build", "--seed", "1", "--no-pdf", "--out", str(out)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"worksheetgen: configuration: {tmp_path / 'worksheetgen.toml'}" in result.stderr
    key = next(out.glob("*/key.json"))
    exported = run(["export", "--to", "gift", "--key", str(key), "--out", "-"], tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert "configuration" not in exported.stdout and exported.stdout.startswith("//")
    assert "worksheetgen: configuration: " in exported.stderr
    quiet = run(["build", "--seed", "2", "--no-pdf", "--out", str(out), "-q"], tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == ""


# ---------------------------------------------------------------- §3: init and config text


def test_init_writes_a_course_name_with_an_emoji_as_valid_toml(tmp_path):
    result = run(["init", ".", "--course", "Intro to ML 🤖"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert 'course = "Intro to ML 🤖"' in (tmp_path / "worksheetgen.toml").read_text("utf-8")
    shown = run(["config"], tmp_path)
    assert shown.returncode == 0 and "course = Intro to ML 🤖  (" in shown.stdout


@pytest.mark.parametrize("course", ["a\x1b]0;pwned\x07b", "abc\u202edef", 'x"\\\x7f'])
def test_init_refuses_a_course_name_the_text_rule_refuses_and_writes_nothing(tmp_path, course):
    line = one_line_error(run(["init", ".", "--course", course], tmp_path))
    assert line.startswith("worksheetgen: error: --course: expected printable text, got U+")
    assert "\x1b" not in line and "\u202e" not in line
    assert list(tmp_path.iterdir()) == []


def test_quotes_and_backslashes_in_a_course_name_survive_init(tmp_path):
    result = run(["init", ".", "--course", 'Ada\'s "ML" C:\\course'], tmp_path)
    assert result.returncode == 0, result.stderr
    assert 'course = Ada\'s "ML" C:\\course  (' in run(["config"], tmp_path).stdout


@pytest.mark.parametrize(
    "line",
    [
        'title = "a\\u202eb"',
        'course = "a\\u001b[2Jb"',
        'out = "o\\u0007ut"',
        'banks = ["a\\u200fb"]',
    ],
)
def test_a_configuration_value_that_breaks_the_text_rule_is_named_by_file_and_line(tmp_path, line):
    (tmp_path / "worksheetgen.toml").write_text(f"# course\n{line}\n", encoding="utf-8")
    key = line.split(" ")[0]
    for args in (["config"], ["build", "--seed", "1", "--no-pdf", "--out", "o"]):
        error = one_line_error(run(args, tmp_path))
        assert f"worksheetgen.toml:2: {key}: expected printable text, got U+" in error
        assert "--title" not in error and "\x1b" not in error and "\u202e" not in error
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------- §2: whose cache


def _cached_build(
    tmp_path: Path, name: str, cache: Path, extra: dict[str, str | None] | None = None
):
    result = run(
        ["build", "--seed", "7", "--no-pdf", "--out", str(tmp_path / name)],
        tmp_path,
        {"WORKSHEETGEN_CACHE_DIR": str(cache), **(extra or {})},
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return {p.name: p.read_bytes() for p in sorted((tmp_path / name).glob("*/*.md"))}


def _evil_pickle(marker: Path) -> bytes:
    """Bytes that run ``touch marker`` when unpickled."""
    import pickle

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    return pickle.dumps(Evil())


def test_a_planted_cache_entry_others_can_write_is_never_executed(tmp_path):
    from jinja2.bccache import bc_magic

    from worksheetgen.speed.cache import MAGIC, _digest

    cache = tmp_path / "cache"
    first = _cached_build(tmp_path, "a", cache)
    entries = sorted(cache.glob("templates-*/*.cache"))
    assert entries
    marker = tmp_path / "executed"
    raw = bc_magic + _evil_pickle(marker)  # what Jinja2 itself would unpickle
    sealed = MAGIC + _digest(raw) + raw  # and one that even has our digest
    for i, entry in enumerate(entries):
        entry.write_bytes(raw if i % 2 else sealed)
        entry.chmod(0o666)
    assert _cached_build(tmp_path, "b", cache) == first
    assert not marker.exists()
    for entry in entries:  # rebuilt: ours again, private and whole
        assert entry.stat().st_mode & 0o077 == 0
        assert entry.read_bytes().startswith(MAGIC)


@as_root
def test_a_cache_entry_of_another_user_is_rebuilt_not_trusted(tmp_path):
    from jinja2.bccache import bc_magic

    from worksheetgen.speed.cache import MAGIC, _digest

    cache = tmp_path / "cache"
    first = _cached_build(tmp_path, "a", cache)
    marker = tmp_path / "executed"
    raw = bc_magic + _evil_pickle(marker)
    for entry in cache.glob("templates-*/*.cache"):
        entry.write_bytes(MAGIC + _digest(raw) + raw)
        entry.chmod(0o600)
        os.chown(entry, NOBODY, -1)
    assert _cached_build(tmp_path, "b", cache) == first
    assert not marker.exists()


def test_cut_short_and_flipped_cache_entries_are_rebuilt_without_a_traceback(tmp_path):
    cache = tmp_path / "cache"
    first = _cached_build(tmp_path, "a", cache)
    entries = sorted(cache.glob("templates-*/*.cache")) + sorted(cache.glob("prompts-*/*"))
    assert len(entries) > 2
    for i, entry in enumerate(entries):
        data = bytearray(entry.read_bytes())
        if i % 3 == 0:
            entry.write_bytes(bytes(data[: len(data) // 2]))  # cut short
        elif i % 3 == 1:
            entry.write_bytes(bytes(data[:-3]))  # cut short by a few bytes
        else:
            for at in range(len(data) // 3, len(data), max(1, len(data) // 7)):
                data[at] ^= 0x10  # flipped bits in the compiled code
            entry.write_bytes(bytes(data))
    assert _cached_build(tmp_path, "b", cache) == first
    assert _cached_build(tmp_path, "c", cache) == first  # and every later build


def test_a_relative_xdg_cache_home_leaves_no_cache_in_the_working_folder(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    result = run(
        ["build", "--seed", "1", "--no-pdf", "--out", str(tmp_path / "o")],
        work,
        {"XDG_CACHE_HOME": "relative-cache", "HOME": str(home), "WORKSHEETGEN_CACHE_DIR": None},
    )
    assert result.returncode == 0, result.stderr
    assert list(work.iterdir()) == []
    assert (home / ".cache" / "worksheetgen").is_dir()  # ignored, as the XDG spec says


# ---------------------------------------------------------------- §5: plugins


def _distribution(site: Path, name: str, entry_points: bytes, module: str | None = None) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n\n")
    (info / "entry_points.txt").write_bytes(entry_points)
    if module is not None:
        (site / f"{name}.py").write_text(module, encoding="utf-8")


NOISY = """
import os, sys
print("hello from a noisy plugin")
os.write(1, b"and from its file descriptor\\n")


class Noisy:
    name = "noisy"
    file_name = "noisy.txt"
    binary = False

    def write(self, doc, stream):
        stream.write("noise")
"""


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    out = tmp_path_factory.mktemp("key")
    result = run(["build", "--seed", "1", "--no-pdf", "--out", str(out)], out)
    assert result.returncode == 0, result.stderr
    return next(out.glob("*/key.json"))


def test_a_plugin_that_prints_on_import_cannot_corrupt_standard_output(tmp_path, key):
    site = tmp_path / "site"
    _distribution(
        site, "noisy_plugin", b"[worksheetgen.exporters]\nnoisy = noisy_plugin:Noisy\n", NOISY
    )
    env = {"PYTHONPATH": str(site)}
    clean = run(["export", "--to", "gift", "--key", str(key), "--out", "-"], tmp_path)
    noisy = run(["export", "--to", "gift", "--key", str(key), "--out", "-"], tmp_path, env)
    assert noisy.returncode == 0, noisy.stderr
    assert noisy.stdout == clean.stdout  # byte for byte the file, nothing of the plugin's
    assert "hello" not in noisy.stdout and "descriptor" not in noisy.stdout
    assert "worksheetgen: warning: plugin 'noisy'" in noisy.stderr
    assert "wrote to standard output while it was imported" in noisy.stderr
    template = run(["grade", "--key", str(key), "--template", "-"], tmp_path, env)
    assert template.returncode == 0, template.stderr
    assert "hello" not in template.stdout and "descriptor" not in template.stdout


def test_a_distribution_whose_entry_points_are_not_utf8_is_skipped_with_a_warning(tmp_path):
    site = tmp_path / "site"
    _distribution(site, "latin1_pkg", "[worksheetgen.families]\ncaf\xe9 = x:Y\n".encode("latin-1"))
    _distribution(site, "other_pkg", "[console_scripts]\nna\xefve = x:y\n".encode("latin-1"))
    env = {"PYTHONPATH": str(site)}
    families = run(["families"], tmp_path, env)
    assert families.returncode == 0, families.stderr
    assert "Traceback" not in families.stderr
    assert "latin1_pkg" in families.stderr and "expected UTF-8 text" in families.stderr
    assert "other_pkg" not in families.stderr  # not ours to judge: skipped quietly
    build = run(["build", "--seed", "1", "--no-pdf", "--out", str(tmp_path / "o")], tmp_path, env)
    assert build.returncode == 0, build.stderr
    assert "Traceback" not in build.stderr


# ---------------------------------------------------------------- §2: whose templates


def _own_template(tmp_path: Path, fmt: str, body: str) -> Path:
    folder = tmp_path / "tpl" / fmt
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "latex":
        text = (
            f'((* extends "base.tex.j2" *))\n((* block sheet_body *))\n{body}\n((* endblock *))\n'
        )
    else:
        text = body
    (folder / f"sheet.{'tex' if fmt == 'latex' else 'md'}.j2").write_text(text, "utf-8")
    return tmp_path / "tpl"


def _build_own(tmp_path: Path, templates: Path, *extra: str, timeout: float = 120):
    args = ["build", "--seed", "1", "--templates", str(templates), "--out", "out", *extra]
    return run(args, tmp_path, timeout=timeout)


def test_a_template_link_out_of_the_templates_folder_is_refused(tmp_path):
    folder = tmp_path / "tpl" / "markdown"
    folder.mkdir(parents=True)
    (folder / "sheet.md.j2").symlink_to("/etc/passwd")
    line = one_line_error(_build_own(tmp_path, tmp_path / "tpl", "--no-pdf"))
    assert "sheet.md.j2: expected a template inside the templates folder" in line
    assert "got a link to /etc/passwd" in line
    assert not (tmp_path / "out").exists()
    # an include of a link is the same door
    (folder / "sheet.md.j2").unlink()
    (folder / "sheet.md.j2").write_text('{% include "leak.md.j2" %}\n', "utf-8")
    (folder / "leak.md.j2").symlink_to("/etc/passwd")
    line = one_line_error(_build_own(tmp_path, tmp_path / "tpl", "--no-pdf"))
    assert "leak.md.j2: expected a template inside the templates folder" in line
    assert not (tmp_path / "out").exists()


def test_a_template_link_inside_the_folder_is_followed(tmp_path):
    folder = tmp_path / "tpl" / "markdown"
    folder.mkdir(parents=True)
    (folder / "mine.md.j2").write_text("Sheet of my own\n", "utf-8")
    (folder / "sheet.md.j2").symlink_to("mine.md.j2")
    result = _build_own(tmp_path, tmp_path / "tpl", "--no-pdf")
    assert result.returncode == 0, result.stderr
    assert next((tmp_path / "out").glob("*/sheet.md")).read_text() == "Sheet of my own\n"


def test_a_template_that_is_a_fifo_is_refused_without_hanging(tmp_path):
    folder = tmp_path / "tpl" / "markdown"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "sheet.md.j2")
    line = one_line_error(_build_own(tmp_path, tmp_path / "tpl", "--no-pdf", timeout=60))
    assert "sheet.md.j2: expected a template file, got a FIFO" in line


@pytest.mark.parametrize(
    "body,words",
    [
        (
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
            "expected at most 5,000,000 loop steps in a document, got more",
        ),
        ('{{ "x" * 10**9 }}', "expected texts and lists of at most 10,000,000 items"),
        ("{{ 10 ** 100000000 }}", "expected powers of at most 100000 bits"),
    ],
    ids=["nested loop", "huge text", "huge power"],
)
def test_a_template_has_bounded_work(tmp_path, body, words):
    templates = _own_template(tmp_path, "markdown", body)
    line = one_line_error(_build_own(tmp_path, templates, "--no-pdf", timeout=110))
    assert "sheet.md.j2:1: template error: " + words in line
    assert not (tmp_path / "out").exists()


def _pdf_streams(pdf: Path) -> bytes:
    import re
    import zlib

    data = pdf.read_bytes()
    out = [data]
    for m in re.finditer(rb"stream\r?\n(.*?)endstream", data, re.S):
        try:
            out.append(zlib.decompress(m.group(1)))
        except zlib.error:
            out.append(m.group(1))
    return b"".join(out)


SECRET_FILE_LINE = b"worksheetgen-not-for-the-pdf"


OUTSIDE = "expected a document that reads no file outside its templates"


@pytest.mark.tex
@pytest.mark.parametrize(
    "engine,body,words",
    [
        (
            "pdflatex",
            r"\immediate\pdfobj stream file {%s}\pdfcatalog{/X \the\pdflastobj\space 0 R}",
            OUTSIDE,
        ),
        ("pdflatex", r"\input{%s}", "LaTeX Error: File"),  # openin_any=p refuses this one
        (
            "lualatex",
            r"\directlua{local f = io.open('%s') if f then tex.print(-2, f:read('*l')) end}",
            OUTSIDE,
        ),
    ],
    ids=["pdfobj file", "input", "lua io.open"],
)
def test_a_template_of_ones_own_cannot_read_a_file_into_the_pdf(tmp_path, engine, body, words):
    import shutil

    if shutil.which(engine) is None:
        pytest.skip(f"{engine} is not installed")
    secret = tmp_path / "private" / "notes.txt"
    secret.parent.mkdir()
    secret.write_bytes(SECRET_FILE_LINE + b"\n")
    templates = _own_template(tmp_path, "latex", body % secret)
    result = _build_own(tmp_path, templates, "--engine", engine, timeout=300)
    line = one_line_error(result)
    assert words in line
    if words == OUTSIDE:
        assert str(secret) in line
    assert not list((tmp_path / "out").glob("*/sheet.pdf"))
    for path in (tmp_path / "out").rglob("*"):  # no PDF, no kept log holds the file's text
        if path.is_file():
            data = _pdf_streams(path) if path.suffix == ".pdf" else path.read_bytes()
            assert SECRET_FILE_LINE not in data, path


@pytest.mark.tex
def test_a_harmless_template_of_ones_own_still_compiles(tmp_path):
    templates = _own_template(tmp_path, "latex", "A sheet of my own, with $x^2$.")
    result = _build_own(tmp_path, templates, timeout=300)
    assert result.returncode == 0, result.stderr
    text = subprocess.run(
        ["pdftotext", str(next((tmp_path / "out").glob("*/sheet.pdf"))), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "A sheet of my own" in text
