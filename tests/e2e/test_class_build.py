"""Whole-class builds: per-student variants, combined and per-student files, PDFs, engines."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import needs_tex
from tests.solved import make_build
from worksheetgen.bank.load import load_banks
from worksheetgen.cli import main
from worksheetgen.errors import RosterError, UsageError
from worksheetgen.keyjson import write as keyfile
from worksheetgen.model import Student
from worksheetgen.pipeline.build import BuildOptions, build
from worksheetgen.tex import run as tex

TRICKY = "Zoë O'Brien & Co_1 \\input{x} 100%"
NON_LATIN = ["Łukasz Nowak", "Ñúñez García", "Ελένη Παπαδοπούλου", "Иван Петров", "李雷"]

needs_poppler = pytest.mark.skipif(
    shutil.which("pdftotext") is None or shutil.which("pdfinfo") is None,
    reason="poppler-utils is not installed",
)


def _lua_ready() -> bool:
    if shutil.which("lualatex") is None or shutil.which("fc-list") is None:
        return False
    fonts = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True).stdout
    return "DejaVu Serif" in fonts and "WenQuanYi Micro Hei" in fonts


needs_lua = pytest.mark.skipif(
    not _lua_ready(),
    reason="LuaLaTeX or its fonts are missing "
    "(texlive-luatex fonts-dejavu-core fonts-wqy-microhei)",
)

SMALL_BANK = """
sheet: {id: quiz, title: Quiz}
questions:
  - id: soft
    family: softmax
    params: {T: 2}
  - id: heads
    family: heads
"""


def _roster(path: Path, rows: list[tuple[str, str]]) -> Path:
    lines = ["name,id"] + [f'"{n}",{i}' for n, i in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _class(
    tmp_path: Path, bank: Path, rows: list[tuple[str, str]], name: str = "roster", pdf: bool = False
) -> Path:
    result = build(
        BuildOptions(
            seed=7,
            banks=(str(bank),),
            out=str(tmp_path / "out"),
            pdf=pdf,
            roster=str(_roster(tmp_path / f"{name}.csv", rows)),
        )
    )
    return result.folder


def _givens(folder: Path) -> dict[str, dict]:
    key = json.loads((folder / "key.json").read_text("utf-8"))
    return {s["id"]: {q["id"]: q["given"] for q in s["questions"]} for s in key["sheets"]}


# ---------------------------------------------------------------- variants per student


def test_adding_removing_and_reordering_students_changes_no_other_students_numbers(
    tmp_path, write_bank
):
    bank = write_bank(SMALL_BANK)
    base = _givens(_class(tmp_path, bank, [("Ada", "a"), ("Bob", "b"), ("Cy", "c")], "r1"))
    more = _givens(
        _class(tmp_path, bank, [("Di", "d"), ("Cy", "c"), ("Ada", "a"), ("Bob", "b")], "r2")
    )
    fewer = _givens(_class(tmp_path, bank, [("Cy", "c"), ("Ada", "a")], "r3"))
    assert {s: more[s] for s in base} == base
    assert fewer == {s: base[s] for s in ("c", "a")}
    # and the students really got different numbers (seeded by their own id)
    assert len({json.dumps(g, sort_keys=True) for g in base.values()}) == 3


def test_adding_a_question_changes_no_other_question_for_any_student(tmp_path, write_bank):
    rows = [("Ada", "a"), ("Bob", "b")]
    before = _givens(_class(tmp_path, write_bank(SMALL_BANK, "one.yaml"), rows, "r1"))
    extra = SMALL_BANK.replace("  - id: heads", "  - id: new\n    family: causal\n  - id: heads")
    after = _givens(_class(tmp_path, write_bank(extra, "two.yaml"), rows, "r2"))
    for sid in before:
        assert {q: after[sid][q] for q in before[sid]} == before[sid]
        assert set(after[sid]) == {"soft", "new", "heads"}


def test_a_students_sheet_is_drawn_from_seed_student_id_and_question_id(tmp_path, write_bank):
    bank = write_bank(SMALL_BANK)
    folder = _class(tmp_path, bank, [("Ada", "a"), ("Bob", "b")])
    alone = make_build(load_banks([bank]), 7, [("b", "Bob", Student("Bob", "b"))])
    assert _givens(folder)["b"] == {i.spec.id: i.given for i in alone.sheets[0].items}


# ---------------------------------------------------------------- files of a class build


def test_class_build_without_pdf_writes_combined_and_per_student_files(tmp_path, write_bank):
    folder = _class(tmp_path, write_bank(SMALL_BANK), [(TRICKY, "z1"), ("Ada", "a/../2")])
    assert folder.name == "quiz-seed7-roster"
    names = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert names == {
        "sheets.tex",
        "sheets.md",
        "keys.tex",
        "keys.md",
        "keys-grid.tex",
        "keys-grid.md",
        "key.json",
        "manifest.json",
        # HTML: the class's documents, and each student's own beside where their PDFs go
        "sheets.html",
        "keys.html",
        "students/z1-sheet.html",
        "students/z1-key.html",
        "students/a-2-3ca3e2ef-sheet.html",
        "students/a-2-3ca3e2ef-key.html",
    }
    key = json.loads((folder / "key.json").read_text("utf-8"))
    assert [(s["id"], s["student"]) for s in key["sheets"]] == [
        ("z1", {"name": TRICKY, "id": "z1"}),
        ("a/../2", {"name": "Ada", "id": "a/../2"}),
    ]
    manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    assert [d["sheet"] for d in manifest["draws"]] == ["z1", "a/../2"]
    assert sorted(manifest["files"]) == sorted(names)


def test_streamed_key_json_is_exactly_the_key_of_the_whole_class(tmp_path, write_bank):
    bank = write_bank(SMALL_BANK)
    rows = [(TRICKY, "z1"), ("Ελένη", "g2"), ("Ada", "a3")]
    folder = _class(tmp_path, bank, rows)
    whole = make_build(load_banks([bank]), 7, [(i, n, Student(n, i)) for n, i in rows])
    text = (folder / "key.json").read_text("utf-8")
    assert json.loads(text) == json.loads(keyfile.dumps(keyfile.key_json(whole)))
    lines = text.splitlines()
    assert sum(1 for line in lines if line.startswith('    {"id": ')) == 3  # a sheet per line


def test_combined_documents_hold_every_sheet_in_roster_order(tmp_path, write_bank):
    rows = [("Cy", "c"), ("Ada", "a"), ("Bob", "b")]
    folder = _class(tmp_path, write_bank(SMALL_BANK), rows)
    tex_text = (folder / "sheets.tex").read_text("utf-8")
    assert tex_text.count(r"\documentclass") == 1 and tex_text.count(r"\end{document}") == 1
    assert len(re.findall(r"^\\wsstartsheet$", tex_text, re.M)) == 3
    order = [m.group(1) for m in re.finditer(r"^\\wsnameid\{([^}]*)\}", tex_text, re.M)]
    assert order == ["Cy", "Ada", "Bob"]
    md = (folder / "keys.md").read_text("utf-8")
    assert md.count("\n---\n") >= 2 and md.index("Cy") < md.index("Ada") < md.index("Bob")


def test_names_are_data_in_markdown_and_latex(tmp_path, write_bank):
    folder = _class(tmp_path, write_bank(SMALL_BANK), [(TRICKY, "z1")])
    md = (folder / "sheets.md").read_text("utf-8")
    line = next(x for x in md.splitlines() if x.startswith("Name:"))
    shown = re.search(r"Name: \*\*(.*?)\*\* ·", line).group(1)
    # CommonMark: a backslash before ASCII punctuation prints that character; &amp; is &
    unescaped = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", shown).replace("&amp;", "&")
    assert unescaped == TRICKY
    tex_text = (folder / "sheets.tex").read_text("utf-8")
    assert r"\input{x}" not in tex_text and r"\textbackslash{}input\{x\}" in tex_text


def test_versions_make_anonymous_sheets_a_b_c(tmp_path, write_bank):
    result = build(
        BuildOptions(
            seed=7, banks=(str(write_bank(SMALL_BANK)),), out=str(tmp_path), pdf=False, versions=3
        )
    )
    assert result.folder.name == "quiz-seed7-versions3" and result.sheet_count == 3
    key = json.loads((result.folder / "key.json").read_text("utf-8"))
    assert [(s["id"], s["label"], s["student"]) for s in key["sheets"]] == [
        ("A", "Version A", None),
        ("B", "Version B", None),
        ("C", "Version C", None),
    ]
    assert "Version B" in (result.folder / "sheets.md").read_text("utf-8")


def test_roster_and_versions_together_are_refused(tmp_path, write_bank):
    with pytest.raises(UsageError, match="expected one of them, got both"):
        build(
            BuildOptions(
                seed=1,
                banks=(str(write_bank(SMALL_BANK)),),
                out=str(tmp_path),
                pdf=False,
                versions=2,
                roster=str(_roster(tmp_path / "r.csv", [("A", "a")])),
            )
        )


def test_bad_roster_writes_nothing(tmp_path, write_bank):
    roster = tmp_path / "r.csv"
    roster.write_text("name,id\nAda,a\nBob,a\n", encoding="utf-8")
    with pytest.raises(RosterError, match=r"r.csv:3: id: expected a unique id"):
        build(
            BuildOptions(
                seed=1,
                banks=(str(write_bank(SMALL_BANK)),),
                out=str(tmp_path / "out"),
                pdf=False,
                roster=str(roster),
            )
        )
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_class_build_reports_progress_for_every_sheet(tmp_path, write_bank):
    seen: list[tuple[str, int, int]] = []
    build(
        BuildOptions(
            seed=1, banks=(str(write_bank(SMALL_BANK)),), out=str(tmp_path), pdf=False, versions=4
        ),
        lambda *a: seen.append(a),
    )
    assert [s for s in seen if s[0] == "sheets"] == [("sheets", i, 4) for i in range(1, 5)]


def test_class_build_keeps_no_sheets_in_memory(tmp_path, write_bank):
    result = build(
        BuildOptions(
            seed=1, banks=(str(write_bank(SMALL_BANK)),), out=str(tmp_path), pdf=False, versions=5
        )
    )
    assert result.build.sheets == () and result.sheet_count == 5 and result.item_count == 10


# ---------------------------------------------------------------- command line


def test_cli_roster_build_quiet_prints_nothing(runner, tmp_path, write_bank):
    roster = _roster(tmp_path / "r.csv", [("Ada", "a")])
    result = runner.invoke(
        main,
        [
            "build",
            "--seed",
            "3",
            "--bank",
            str(write_bank(SMALL_BANK)),
            "--roster",
            str(roster),
            "--no-pdf",
            "--out",
            str(tmp_path / "o"),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output == ""
    assert (tmp_path / "o" / "quiz-seed3-r" / "key.json").exists()


def test_cli_roster_build_summarizes_and_verbose_lists_every_file(runner, tmp_path, write_bank):
    roster = _roster(tmp_path / "r.csv", [("Ada", "a"), ("Bob", "b")])
    args = [
        "build",
        "--seed",
        "3",
        "--bank",
        str(write_bank(SMALL_BANK)),
        "--roster",
        str(roster),
        "--no-pdf",
        "--out",
        str(tmp_path / "o"),
    ]
    plain = runner.invoke(main, args)
    assert plain.exit_code == 0, plain.output
    assert "for 2 students (seed 3, 4 questions)" in plain.output
    # without PDFs the students' folder holds their HTML only, summed up on one line
    assert (
        "sheets.tex" in plain.output
        and "students/  (4 files: each sheet's and key's .html" in plain.output
    )
    # not a terminal: no progress bar
    assert "Drawing and rendering" not in plain.output
    verbose = runner.invoke(main, [*args, "--verbose"])
    assert verbose.exit_code == 0
    assert re.search(r"Drawing and rendering sheets: \d+\.\d\d s", verbose.output)


def test_cli_bad_roster_is_one_line_with_file_line_and_field(runner, tmp_path):
    roster = tmp_path / "r.csv"
    roster.write_text("id\n1\n", encoding="utf-8")
    result = runner.invoke(
        main, ["build", "--seed", "1", "--roster", str(roster), "--no-pdf", "--out", str(tmp_path)]
    )
    assert result.exit_code != 0
    assert f"{roster}:1: header: expected a header row with a 'name' column" in result.output
    assert "Traceback" not in result.output


# ---------------------------------------------------------------- engines and PDFs


def test_engine_is_pdflatex_for_latin_text_and_lualatex_beyond_it():
    assert tex.choose_engine([TRICKY, "Łukasz Ñúñez Ștefan Œuvre"]) == tex.PDFLATEX
    for name in ("Ελένη", "Иван", "李雷"):
        assert tex.choose_engine(["Ada", name]) == tex.LUALATEX


@needs_tex
@needs_poppler
def test_every_character_pdflatex_is_trusted_with_prints_as_outline_glyphs(tmp_path):
    chars = sorted(c for c in tex.PDFLATEX_CHARS if c not in "\n\\{}$&#^_%~")
    body = "\n".join("".join(chars[i : i + 40]) + r"\par" for i in range(0, len(chars), 40))
    source = (
        "\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage[utf8]{inputenc}"
        "\\usepackage{mathpazo}\\usepackage{tgpagella}\\begin{document}\n"
        + body
        + "\n\\end{document}\n"
    )
    out = tex.compile_job(tex.TexJob("chars", source, engine=tex.PDFLATEX), tmp_path / "keep")
    pdf = tmp_path / "chars.pdf"
    pdf.write_bytes(out.pdf)
    fonts = subprocess.run(["pdffonts", str(pdf)], capture_output=True, text=True).stdout
    assert "Type 3" not in fonts  # no bitmap fallback fonts


def _page_texts(pdf: Path) -> list[str]:
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    return text.split("\f")[:-1]


def _pages(pdf: Path) -> int:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout
    return int(re.search(r"Pages:\s+(\d+)", info).group(1))


@needs_tex
@needs_poppler
def test_class_pdfs_start_every_student_on_an_odd_page_and_cut_per_student_pdfs(
    tmp_path, write_bank, tex_runs
):
    runs = tex_runs
    rows = [(TRICKY, "z1"), ("Łukasz Nowak", "l2"), ("Ada Lovelace", "a3")]
    folder = _class(
        tmp_path, write_bank(SMALL_BANK + "  - id: lab\n    family: lab3\n"), rows, pdf=True
    )
    dumps = [cmd for cmd in runs if "-ini" in cmd]  # the preamble's format, made once
    assert len(dumps) <= 1
    # one TeX run for all sheets, one for all keys, one for the answer grid
    assert len(runs) - len(dumps) == 3
    for kind, combined in (("sheet", "sheets.pdf"), ("key", "keys.pdf")):
        pages = _page_texts(folder / combined)
        start = 1
        for name, sid in rows:
            own = folder / "students" / f"{sid}-{kind}.pdf"
            own_pages = _page_texts(own)
            assert start % 2 == 1, f"{name} starts on page {start}"
            assert name in pages[start - 1] and name in own_pages[0]
            assert [p.strip() for p in own_pages] == [
                p.strip() for p in pages[start - 1 : start - 1 + len(own_pages)]
            ]
            start += len(own_pages)
            if start % 2 == 0 and start <= len(pages):  # the blank back of an odd sheet
                assert pages[start - 1].strip() == ""
                start += 1
        assert start - 1 == len(pages)
    sheet_text = "".join(_page_texts(folder / "sheets.pdf"))
    assert f"Name: {TRICKY}" in sheet_text
    assert "Page 1 of" in _page_texts(folder / "students" / "l2-sheet.pdf")[0]


@needs_tex
@needs_poppler
@needs_lua
def test_greek_cyrillic_and_cjk_names_print_as_written(tmp_path, write_bank):
    rows = [(n, f"s{i}") for i, n in enumerate(NON_LATIN + [TRICKY])]
    result = build(
        BuildOptions(
            seed=7,
            banks=(str(write_bank(SMALL_BANK)),),
            out=str(tmp_path / "out"),
            pdf=True,
            roster=str(_roster(tmp_path / "r.csv", rows)),
        )
    )
    assert result.details.engines == {"sheets": "lualatex", "keys": "lualatex"}
    text = "".join(_page_texts(result.folder / "sheets.pdf"))
    for name, _ in rows:
        assert f"Name: {name}" in text
    for i, (name, _) in enumerate(rows):
        assert name in _page_texts(result.folder / "students" / f"s{i}-key.pdf")[0]
    fonts = subprocess.run(
        ["pdffonts", str(result.folder / "sheets.pdf")], capture_output=True, text=True
    ).stdout
    assert "Type 3" not in fonts


@needs_tex
@needs_poppler
def test_single_sheet_build_has_no_blank_pages_or_page_record(tmp_path):
    result = build(BuildOptions(seed=42, out=str(tmp_path)))
    source = (result.folder / "sheet.tex").read_text("utf-8")
    assert not re.search(r"^\\wsstartsheet$", source, re.M) and "openout" not in source
    assert all(p.strip() for p in _page_texts(result.folder / "key.pdf"))


def test_a_missing_unicode_engine_is_reported_before_any_work(tmp_path, write_bank, monkeypatch):
    real = tex.find_engine
    monkeypatch.setattr(
        tex,
        "find_engine",
        lambda engine=tex.PDFLATEX: None if engine == tex.LUALATEX else real(engine),
    )
    from worksheetgen.errors import CompileError

    with pytest.raises(CompileError, match=r"no TeX engine \(lualatex\).* Ε λ έ.*texlive-luatex"):
        _class(tmp_path, write_bank(SMALL_BANK), [("Ελένη", "g")], pdf=True)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_rendering_in_two_processes_writes_the_very_same_files(tmp_path, write_bank):
    # a fresh process: the test runner's own threads would (rightly) disable forking
    bank = write_bank(SMALL_BANK + "  - id: lab\n    family: lab3\n")
    folders = []
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "worksheetgen",
                "build",
                "--seed",
                "11",
                "--bank",
                str(bank),
                "--out",
                str(out),
                "--no-pdf",
                "--versions",
                "12",
                "--jobs",
                str(jobs),
                "--quiet",
            ],
            check=True,
            capture_output=True,
        )
        (folder,) = out.iterdir()
        folders.append(folder)
    for name in ("sheets.tex", "keys.tex", "sheets.md", "keys.md", "key.json", "manifest.json"):
        assert (folders[0] / name).read_bytes() == (folders[1] / name).read_bytes(), name


@needs_tex
def test_workers_forked_before_tex_starts_stream_the_same_class_pdfs(tmp_path, write_bank):
    # with PDFs and --jobs 2 the worker processes are forked first, then TeX reads the
    # combined documents while they render them
    bank = write_bank(SMALL_BANK)
    folders = []
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "worksheetgen",
                "build",
                "--seed",
                "5",
                "--bank",
                str(bank),
                "--out",
                str(out),
                "--versions",
                "8",
                "--jobs",
                str(jobs),
                "--quiet",
            ],
            check=True,
            capture_output=True,
        )
        (folder,) = out.iterdir()
        folders.append(folder)
    for name in ("sheets.tex", "keys.tex", "key.json"):
        assert (folders[0] / name).read_bytes() == (folders[1] / name).read_bytes(), name
    for folder in folders:
        assert (folder / "sheets.pdf").read_bytes().startswith(b"%PDF")
        assert len(list(folder.glob("*/*-key.pdf"))) == 8


def test_a_worker_error_keeps_its_file_line_and_field(tmp_path, write_bank, monkeypatch):
    from worksheetgen.errors import DrawError
    from worksheetgen.pipeline.renderer import Renderer

    def failing(self, build_, entry, *more):
        raise DrawError(
            "expected a drawable variant, got none", file="bank.yaml", line=3, field="questions[0]"
        )

    monkeypatch.setattr(Renderer, "sheet", failing)
    with pytest.raises(DrawError) as info:
        build(
            BuildOptions(
                seed=1,
                banks=(str(write_bank(SMALL_BANK)),),
                out=str(tmp_path),
                pdf=False,
                versions=8,
                jobs=2,
            )
        )
    assert str(info.value) == ("bank.yaml:3: questions[0]: expected a drawable variant, got none")
    assert [p.name for p in tmp_path.iterdir()] == ["bank.yaml"]  # no folder, no leftovers


def test_a_letter_no_font_has_is_named_in_the_error():
    log = (
        "This is LuaHBTeX\nMissing character: There is no \U00013000 (U+13000) in font "
        "LatinModernRoman:mode=node\n! ==> Fatal error occurred\n"
    )
    message = tex.first_error(log)
    assert message.startswith("no installed font has the letter \U00013000 (U+13000)")


@needs_tex
@needs_poppler
@needs_lua
def test_text_that_needs_the_other_engine_after_all_is_compiled_again(
    tmp_path, write_bank, monkeypatch
):
    from worksheetgen.tex import engines as texchars

    # the engine is guessed from roster and banks before any sheet is drawn: make it guess
    # wrong, as a template with Greek letters of its own would
    monkeypatch.setattr(texchars, "choose_engine", lambda texts: texchars.PDFLATEX)
    result = build(
        BuildOptions(
            seed=7,
            banks=(str(write_bank(SMALL_BANK)),),
            out=str(tmp_path / "out"),
            pdf=True,
            roster=str(_roster(tmp_path / "r.csv", [("Ελένη", "g1"), ("Ada", "a2")])),
        )
    )
    assert result.details.engines == {"sheets": "lualatex", "keys": "lualatex"}
    assert "Name: Ελένη" in _page_texts(result.folder / "students" / "g1-sheet.pdf")[0]


@needs_tex
def test_a_latex_error_while_the_class_streams_stops_the_build_with_its_line(tmp_path, write_bank):
    from worksheetgen.errors import CompileError
    from worksheetgen.resources import data_dir

    templates = tmp_path / "tpl"
    (templates / "latex").mkdir(parents=True)
    key = (data_dir("templates") / "latex" / "key.tex.j2").read_text("utf-8")
    (templates / "latex" / "key.tex.j2").write_text(
        key.replace("((* block sheet_body *))", "((* block sheet_body *))\\nosuchcommand", 1),
        encoding="utf-8",
    )
    rows = [(f"S{i}", f"s{i}") for i in range(12)]
    start = __import__("time").perf_counter()
    with pytest.raises(CompileError, match=r"keys.tex: .*Undefined control sequence"):
        build(
            BuildOptions(
                seed=7,
                banks=(str(write_bank(SMALL_BANK)),),
                out=str(tmp_path / "out"),
                pdf=True,
                template_dir=str(templates),
                roster=str(_roster(tmp_path / "r.csv", rows)),
            )
        )
    assert __import__("time").perf_counter() - start < 60  # no wait for a time limit
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [".failed-quiz-seed7-r"]
    assert "nosuchcommand" in (out / ".failed-quiz-seed7-r" / "keys.tex").read_text("utf-8")


@needs_tex
def test_pdf_cutter_refuses_what_it_cannot_read_with_a_clear_error(tmp_path):
    from worksheetgen.tex.pdfsplit import PdfFormatError, iter_split_pages, page_count, split_pages

    source = (
        "\\documentclass{article}\\begin{document}one\\newpage two\\newpage three\\end{document}\n"
    )
    packed = tex.compile_job(tex.TexJob("packed", source, engine=tex.PDFLATEX), tmp_path).pdf
    with pytest.raises(PdfFormatError, match="cross-reference stream"):
        split_pages(packed, [(1, 1)])
    whole = _uncompressed(source, tmp_path)
    assert page_count(whole) == 3
    with pytest.raises(PdfFormatError, match="page range 2-4 is outside the PDF's 3 pages"):
        split_pages(whole, [(2, 4)])
    # one at a time: a bad range is refused before any PDF is made, not when it is reached
    with pytest.raises(PdfFormatError, match="page range 3-4 is outside"):
        iter_split_pages(whole, [(1, 1), (3, 4)])
    parts = iter_split_pages(whole, [(3, 3), (1, 2)])
    assert [page_count(next(parts)), page_count(next(parts))] == [1, 2]
    assert next(parts, None) is None


@pytest.mark.parametrize(
    "text",
    [
        b"[1 2 3]",
        b"[ ]",
        b"[]",
        b"[0 0 612.0 792]",
        b"[-.5 +3 4.]",
        b"[\n1\r\n2\t]",
        b"[1-2]",
        b"[1 0 R 2 0 R]",
        b"[1\x002]",
        b"[1 %note\n 2]",
        b"[1 /Name (s) 2]",
        b"[[1 2] 3]",
    ],
)
def test_pdf_cutter_reads_number_arrays_as_its_general_parser_does(text, monkeypatch):
    from worksheetgen.tex import pdfsplit

    fast = pdfsplit._Parser(text).value(0)
    monkeypatch.setattr(pdfsplit, "_NUMBER_ARRAY", __import__("re").compile(rb"(?!)"))
    assert pdfsplit._Parser(text).value(0) == fast


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            b"<< % a comment\r/Type /Page %another\n/Kids [1 0 R] >>",
            {b"Type": "Name:Page", b"Kids": ["Ref:1"]},
        ),
        (
            b"<</Length 12 0 R/Filter/FlateDecode>>",
            {b"Length": "Ref:12", b"Filter": "Name:FlateDecode"},
        ),
        (
            b"<<\x00/A 1\x0c/B (x)/C<0a>/D [12 0 R/E]%\n>>",
            {b"A": "Raw:1", b"B": "Raw:(x)", b"C": "Raw:<0a>", b"D": ["Ref:12", "Name:E"]},
        ),
    ],
)
def test_pdf_cutter_tokens_stop_at_whitespace_comments_and_delimiters(text, expected):
    from worksheetgen.tex import pdfsplit

    def plain(value):
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, list):
            return [plain(v) for v in value]
        kind = type(value).__name__
        return f"{kind}:{value.num}" if kind == "Ref" else f"{kind}:{value.raw.decode()}"

    value, end = pdfsplit._Parser(text).value(0)
    assert end == len(text) and plain(value) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"<0a 1", "unexpected byte b'<' in PDF at 0"),  # a hex string never closed
        (b"<< /A 1 >", "unexpected byte b'>' in PDF at 8"),
        (b"[1 /A >>", "unexpected byte b'>' in PDF at 6"),
        (b"<< 1 2 >>", "PDF dictionary key expected at byte 4"),
        (b"<< /A >>", "unexpected byte b'>' in PDF at 6"),
        (b"  ", "unexpected byte b'' in PDF at 2"),
    ],
)
def test_pdf_cutter_says_where_a_value_it_cannot_read_goes_wrong(text, message):
    from worksheetgen.tex.pdfsplit import PdfFormatError, _Parser

    with pytest.raises(PdfFormatError, match=re.escape(message)):
        _Parser(text).value(0)


def _uncompressed(source: str, tmp_path: Path) -> bytes:
    """A PDF without object streams, as class builds ask TeX for."""
    work = tmp_path / "u"
    work.mkdir()
    (work / "doc.tex").write_text(source, encoding="utf-8")
    subprocess.run(
        [
            "pdflatex",
            "-interaction=nonstopmode",
            "-jobname=doc",
            r"\pdfobjcompresslevel=0 \input doc.tex ",
        ],
        cwd=work,
        check=True,
        capture_output=True,
    )
    return (work / "doc.pdf").read_bytes()


def test_rendering_never_forks_from_a_process_with_other_threads():
    import threading

    from worksheetgen.pipeline.stream import workers_for

    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)
    helper.start()
    try:
        assert workers_for(100, jobs=2) == 1
    finally:
        stop.set()
        helper.join()


def test_by_default_a_class_without_pdfs_is_drawn_on_every_core_of_linux(monkeypatch):
    import sys

    from worksheetgen.pipeline.stream import workers_for

    monkeypatch.setattr("os.cpu_count", lambda: 4)
    monkeypatch.setattr(sys, "platform", "linux")
    assert workers_for(40, None) == 4
    assert workers_for(40, 1) == 1 and workers_for(40, 3) == 3
    assert workers_for(6, None) == 1  # too few sheets to be worth a process each
    monkeypatch.setattr(sys, "platform", "darwin")  # fork is offered there, not the default
    assert workers_for(40, None) == 1


def test_workers_die_on_sigterm_whatever_handler_the_parent_had():
    # workers are stopped with a signal; a handler inherited from the parent that raises
    # instead would send a worker back into the parent's code
    import signal

    from worksheetgen.speed.workers import worker_signals as _ignore_interrupt

    saved = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        _ignore_interrupt()
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, saved[0])
        signal.signal(signal.SIGTERM, saved[1])


def test_the_cli_puts_back_the_sigterm_handler_it_found(runner):
    import signal

    from worksheetgen.cli import main

    def mine(*_):
        return None

    saved = signal.signal(signal.SIGTERM, mine)
    try:
        runner.invoke(main, ["--version"])
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, saved)
