"""pdfLaTeX starts from a format holding the preamble, dumped once into the cache folder;
nothing a reader or a TeX error shows changes, and any trouble falls back to a plain run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import needs_tex
from worksheetgen.errors import CompileError
from worksheetgen.speed.cache import seal
from worksheetgen.tex import formats
from worksheetgen.tex import run as tex

OURS = {"formats": True}  # as the bundled templates' documents are compiled
PREAMBLE = (
    "\\documentclass{article}\n\\usepackage{amsmath}\n"
    "\\newcommand{\\wsgreeting}{Hello from the preamble}\n"
)
BODY = "\\begin{document}\n\\wsgreeting: $\\sqrt{2}$\n\\end{document}\n"


def _text(pdf: bytes, tmp_path: Path) -> str:
    path = tmp_path / "out.pdf"
    path.write_bytes(pdf)
    return subprocess.run(
        ["pdftotext", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def commands(tex_runs):
    """The TeX command lines run, in order."""
    return tex_runs


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("WORKSHEETGEN_CACHE_DIR", str(folder))
    return folder


def test_blanking_the_preamble_keeps_every_line_number():
    text = PREAMBLE + BODY
    blanked = formats.blank_preamble(text)
    assert blanked.count("\n") == text.count("\n")
    assert blanked.splitlines()[PREAMBLE.count("\n") :] == BODY.splitlines()
    assert formats.blank_preamble("no document here") == "no document here"


@needs_tex
def test_the_preamble_is_dumped_once_and_later_runs_start_from_it(tmp_path, cache, commands):
    first = tex.compile_job(tex.TexJob("doc", PREAMBLE + BODY, **OURS), tmp_path / "keep").pdf
    formats = list(cache.glob("tex-formats-*/ws-*.fmt"))
    assert len(formats) == 1
    assert any("-ini" in cmd for cmd in commands)  # the dump
    commands.clear()
    second = tex.compile_job(tex.TexJob("doc", PREAMBLE + BODY, **OURS), tmp_path / "keep").pdf
    assert len(commands) == 1 and f"-fmt={formats[0].with_suffix('')}" in commands[0]
    for pdf in (first, second):
        assert "Hello from the preamble" in _text(pdf, tmp_path)


@needs_tex
def test_the_format_is_stored_uncompressed_and_loads_as_it_is(tmp_path, cache, commands):
    tex.compile_job(tex.TexJob("doc", PREAMBLE + BODY, **OURS), tmp_path / "keep")
    [fmt] = cache.glob("tex-formats-*/ws-*.fmt")
    assert fmt.read_bytes()[:2] != b"\x1f\x8b"  # pdfTeX dumps it gzipped
    commands.clear()
    pdf = tex.compile_job(tex.TexJob("doc", PREAMBLE + BODY, **OURS), tmp_path / "keep").pdf
    assert len(commands) == 1 and "Hello from the preamble" in _text(pdf, tmp_path)


def test_a_format_that_is_not_gzipped_is_stored_as_it_is():
    assert formats._inflated(b"W2TX plain") == b"W2TX plain"
    assert formats._inflated(b"\x1f\x8b broken") == b"\x1f\x8b broken"


@needs_tex
def test_documents_compile_the_same_with_and_without_the_format(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKSHEETGEN_CACHE_DIR", "")
    plain = tex.compile_job(tex.TexJob("doc", PREAMBLE + BODY, **OURS), tmp_path / "keep").pdf
    monkeypatch.setenv("WORKSHEETGEN_CACHE_DIR", str(tmp_path / "cache"))
    tex.compile_job(tex.TexJob("doc", PREAMBLE + BODY, **OURS), tmp_path / "keep")  # dumps it
    started = tex.compile_job(tex.TexJob("doc", PREAMBLE + BODY, **OURS), tmp_path / "keep").pdf
    assert list((tmp_path / "cache").glob("tex-formats-*/ws-*.fmt"))
    assert _text(plain, tmp_path) == _text(started, tmp_path)


@needs_tex
def test_a_tex_error_names_the_same_line_with_the_format(tmp_path, cache):
    broken = PREAMBLE + "\\begin{document}\nfine\n\n\\undefinedthing\n\\end{document}\n"
    line = broken.splitlines().index("\\undefinedthing") + 1
    messages = []
    for attempt in range(2):  # the first run dumps the format, the second starts from it
        with pytest.raises(CompileError) as err:
            tex.compile_job(tex.TexJob("doc", broken, **OURS), tmp_path / f"keep{attempt}")
        messages.append(str(err.value))
        kept = (tmp_path / f"keep{attempt}" / "doc.tex").read_text("utf-8")
        assert kept == broken  # the document as written, preamble and all
    assert list(cache.glob("tex-formats-*/ws-*.fmt"))
    assert all(f"line {line}: Undefined control sequence" in m for m in messages), messages


@needs_tex
def test_an_unreadable_format_is_dumped_again_and_the_document_still_compiles(tmp_path, cache):
    tex.compile_job(tex.TexJob("doc", PREAMBLE + BODY, **OURS), tmp_path / "keep")
    (fmt,) = cache.glob("tex-formats-*/ws-*.fmt")
    fmt.write_bytes(b"not a format")
    pdf = tex.compile_job(tex.TexJob("doc", PREAMBLE + BODY, **OURS), tmp_path / "keep").pdf
    assert "Hello from the preamble" in _text(pdf, tmp_path)
    assert not fmt.exists() or fmt.read_bytes() != b"not a format"


@needs_tex
def test_a_preamble_that_cannot_be_dumped_is_compiled_as_it_is(tmp_path, cache, commands):
    bad = "\\documentclass{article}\n\\nosuchmacro\n" + BODY.replace("\\wsgreeting", "x")
    with pytest.raises(CompileError, match="Undefined control sequence"):
        tex.compile_job(tex.TexJob("doc", bad, **OURS), tmp_path / "keep")
    assert not list(cache.glob("tex-formats-*/ws-*.fmt"))
    assert not any(arg.startswith("-fmt=") for cmd in commands for arg in cmd)


def test_no_cache_folder_means_no_format(monkeypatch):
    monkeypatch.setenv("WORKSHEETGEN_CACHE_DIR", "")
    assert formats.preamble_format("/usr/bin/pdflatex", PREAMBLE) is None


@needs_tex
def test_only_the_most_recently_used_formats_are_kept(tmp_path, cache):
    for i in range(formats.MAX_FORMATS + 2):
        preamble = PREAMBLE + f"\\newcommand{{\\wsnumber}}{{{i}}}\n"
        tex.compile_job(tex.TexJob("doc", preamble + BODY, **OURS), tmp_path / "keep")
    assert len(list(cache.glob("tex-formats-*/ws-*.fmt"))) == formats.MAX_FORMATS


@needs_tex
def test_a_class_streamed_to_tex_starts_from_the_format_and_survives_a_broken_one(
    tmp_path, cache, commands
):
    from worksheetgen.pipeline.build import BuildOptions, build

    def class_build(out: str):
        return build(BuildOptions(seed=3, out=str(tmp_path / out), pdf=True, versions=3))

    first = class_build("a")
    (fmt,) = cache.glob("tex-formats-*/ws-*.fmt")
    commands.clear()
    second = class_build("b")
    runs = [cmd for cmd in commands if "-ini" not in cmd]
    # sheets, keys and the answer grid: one preamble, one format
    assert len(runs) == 3 and all(f"-fmt={fmt.with_suffix('')}" in cmd for cmd in runs)
    for name in ("sheets.pdf", "keys.pdf", "keys-grid.pdf", "versions/A-key.pdf"):
        assert _text((first.folder / name).read_bytes(), tmp_path) == _text(
            (second.folder / name).read_bytes(), tmp_path
        )
    whole = fmt.read_bytes()
    fmt.write_bytes(whole[: len(whole) // 2])  # cut short, as by a power cut: seen, made again
    assert (class_build("c").folder / "keys.pdf").exists()
    # made again, whole (not byte for byte: a format holds the minute it was dumped, \time)
    assert len(fmt.read_bytes()) == len(whole) and formats._usable_format(fmt)
    # one that is whole by its digest but TeX cannot load: the streamed class says so and
    # drops it
    fmt.write_bytes(b"not a format" * 100 + formats._FORMAT_END)
    assert seal(fmt)
    with pytest.raises(CompileError, match="could not read the cached format"):
        class_build("d")
    assert not fmt.exists()
    assert (class_build("e").folder / "keys.pdf").exists()  # dumped again, and used
    assert fmt.exists()


@needs_tex
def test_a_preamble_from_ones_own_templates_is_read_every_time(tmp_path, cache, commands):
    # such a preamble might open a file or use the job's name, which a format cannot keep
    tex.compile_job(tex.TexJob("doc", PREAMBLE + BODY), tmp_path / "keep")
    tex.compile_job(tex.TexJob("doc", PREAMBLE + BODY), tmp_path / "keep")
    assert not list(cache.glob("tex-formats-*/ws-*.fmt"))
    assert not any("-ini" in cmd or any(a.startswith("-fmt=") for a in cmd) for cmd in commands)


@needs_tex
def test_builds_with_ones_own_templates_read_their_preamble_every_time(tmp_path, cache, commands):
    from worksheetgen.pipeline.build import BuildOptions, build

    own = tmp_path / "templates"
    (own / "latex").mkdir(parents=True)  # empty: every template falls back to the bundled one
    build(BuildOptions(seed=1, out=str(tmp_path / "one"), pdf=True, template_dir=str(own)))
    build(
        BuildOptions(
            seed=1, out=str(tmp_path / "class"), pdf=True, versions=2, template_dir=str(own)
        )
    )
    assert len(commands) == 6  # sheet, key and answer grid, twice
    assert not any("-ini" in cmd or any(a.startswith("-fmt=") for a in cmd) for cmd in commands)
    build(BuildOptions(seed=1, out=str(tmp_path / "bundled"), pdf=True))
    assert any(a.startswith("-fmt=") for a in commands[-1])
