"""The printed page's style as it prints (issue 26, section 4): one digit-grouping style per
document that grade reads back, the note's rounding said where the key departs from it, a
shade-only heatmap for reading questions, one typeface for a whole class whatever names its
roster holds, and lettered options in the Markdown sheet.

A behaviour across modules, not one module's tests (exact.mathtex, grading.key,
grading.responses, grading.score, pipeline.build, render.grid, render.markup)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from worksheetgen.grading.key import load_key
from worksheetgen.grading.responses import parse_responses
from worksheetgen.grading.score import grade
from worksheetgen.pipeline.build import BuildOptions, build

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="TeX is not installed")
needs_poppler = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="no pdftotext")

COST_BANK = """\
sheet: {id: cost, title: Cost}
questions:
  - id: cost
    family: cost
    params: {T: 512, h: 8, L: 12, causal: true}
"""

# the cost question's answers for T = 512, h = 8, L = 12, by hand
BIG = {
    "per_head": 512 * 512,
    "total": 8 * 12 * 512 * 512,
    "total_doubled": 8 * 12 * 1024 * 1024,
    "unmasked": 512 * 513 // 2,
}


def _text(pdf: Path) -> str:
    return subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout


def _write_bank(tmp: Path, text: str) -> str:
    bank = tmp / "bank.yaml"
    bank.write_text(text, encoding="utf-8")
    return str(bank)


@pytest.fixture(scope="module")
def cost_build(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("cost")
    bank = _write_bank(tmp, COST_BANK)
    return build(BuildOptions(seed=1, banks=(bank,), out=str(tmp / "out"))).folder


def _spaced(n: int) -> str:
    return f"{n:,}".replace(",", " ")


@needs_tex
@needs_poppler
def test_the_key_groups_digits_one_way_in_answers_and_worked_steps(cost_build):
    text = _text(cost_build / "key.pdf")
    for n in BIG.values():
        # the answer and the worked steps print it: grouped, every time
        assert text.count(_spaced(n)) >= 2, (n, text)
        assert str(n) not in text, n


@needs_tex
@needs_poppler
def test_the_grid_and_markdown_group_digits_as_the_key_does(cost_build):
    grid = _text(cost_build / "key-grid.pdf")
    for n in BIG.values():
        assert _spaced(n) in grid and str(n) not in grid
    for md in ("key.md", "key-grid.md"):
        doc = (cost_build / md).read_text(encoding="utf-8")
        for n in BIG.values():
            assert _spaced(n).replace(" ", r"\,") in doc and str(n) not in doc, (md, n)


@needs_tex
@needs_poppler
def test_grade_reads_back_the_numbers_as_the_key_prints_them(cost_build):
    text = _text(cost_build / "key.pdf")
    key = load_key(cost_build / "key.json")
    (sheet,) = key.sheets
    printed = {}
    labels = {
        "per_head": "T2=",
        "total": "hLT2=",
        "total_doubled": "hL(2T)2=",
        "unmasked": "T(T+1)/2=",
    }
    for name, label in labels.items():
        # the number as it stands after the answer's label on the key's page
        pattern = r"[ ]*".join(re.escape(c) for c in label)
        m = re.search(pattern + r"\s*(\d{1,3}(?: \d{3})+)\b", text)
        assert m, (name, text)
        assert int(m.group(1).replace(" ", "")) == BIG[name]
        printed[name] = m.group(1)
    for space in (" ", "\u2009", "\u202f"):  # as copied: plain, thin or narrow spaces
        rows = ["student,question,answer,entry,value"]
        rows += [f"{sheet.id},cost,{n},,{v.replace(' ', space)}" for n, v in printed.items()]
        result = grade(key, parse_responses("\n".join(rows) + "\n", key, "responses.csv"))
        (student,) = result.students
        (q,) = student.questions
        assert {p.answer: p.right == p.total for p in q.parts} == dict.fromkeys(BIG, True)
        assert q.earned == q.points


def test_grouped_groups_only_a_long_whole_part():
    from worksheetgen.exact.mathtex import cell, grouped

    assert grouped("1024") == "1024"
    assert grouped(262144) == r"262\,144"
    assert grouped("-2359296") == r"-2\,359\,296"
    assert grouped("12345.6789") == r"12\,345.6789"  # the decimals never grouped
    assert grouped("0.12345") == "0.12345"
    assert grouped("3/12345") == "3/12345"
    assert cell("-inf") == r"-\infty"


def test_the_markdown_sheet_and_key_letter_pick_one_options_as_the_pdf_and_grid_do(tmp_path):
    import json

    from tests.conftest import ROOT
    from worksheetgen.render.grid import option_letter
    from worksheetgen.render.markup import markup_md

    folder = build(
        BuildOptions(
            seed=42, banks=(str(ROOT / "banks" / "quiz.yaml"),), out=str(tmp_path), pdf=False
        )
    ).folder
    sheet = (folder / "sheet.md").read_text(encoding="utf-8").splitlines()
    key = (folder / "key.md").read_text(encoding="utf-8").splitlines()
    (data,) = json.loads((folder / "key.json").read_text(encoding="utf-8"))["sheets"]
    seen = 0
    for q in data["questions"]:
        if q["format"] == "choice":  # multiple choice: its choices are lettered, not its parts
            continue
        for name, options in q.get("options", {}).items():
            lines = [f"- ( ) **{'ABCDEFGH'[i]}** {markup_md(o)}" for i, o in enumerate(options)]
            start = sheet.index(lines[0])
            assert sheet[start : start + len(options)] == lines, (q["id"], name)
            right = option_letter(options, q["answer"][name])
            mark = f"- (x) **{right}** **{markup_md(q['answer'][name])}**"
            assert mark in key, (q["id"], name, right)
            seen += 1
    assert seen >= 4


# the fonts that set only the letters Pagella lacks (Greek, CJK) in a LuaLaTeX document
_FALLBACK_FONTS = re.compile(r"DejaVu|WenQuanYi|Noto")


def _fonts(pdf: Path) -> set[str]:
    out = subprocess.run(["pdffonts", str(pdf)], capture_output=True, text=True, check=True)
    names = {line.split()[0].split("+")[-1] for line in out.stdout.splitlines()[2:] if line}
    return {n for n in names if not _FALLBACK_FONTS.search(n)}


@pytest.fixture(scope="module")
def two_classes(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("fonts")
    bank = _write_bank(tmp, COST_BANK)
    rosters = {
        "latin": "name,id\nAda Lovelace,s1\nAlan Turing,s2\n",
        "greek": "name,id\nAda Lovelace,s1\nΑλέξης Παπαδόπουλος,s2\n王小明,s3\n",
    }
    out = {}
    for name, text in rosters.items():
        roster = tmp / f"{name}.csv"
        roster.write_text(text, encoding="utf-8")
        out[name] = build(
            BuildOptions(
                seed=1,
                banks=(bank,),
                out=str(tmp / name),
                roster=str(roster),
                course="Course of Study",
            )
        ).folder
    return out


@needs_tex
@pytest.mark.skipif(shutil.which("pdffonts") is None, reason="no pdffonts")
def test_one_typeface_for_every_student_whatever_names_the_roster_holds(two_classes):
    fonts: dict[str, dict[str, set[str]]] = {"sheet": {}, "key": {}}
    for name, folder in two_classes.items():
        for pdf in sorted((folder / "students").glob("*.pdf")):
            kind = "key" if pdf.stem.endswith("-key") else "sheet"
            fonts[kind][f"{name}/{pdf.name}"] = _fonts(pdf)
    # every student's sheet (and key), in either class: the same Palatino text and math fonts
    for kind, found in fonts.items():
        assert len(found) == 5, found
        first = next(iter(found.values()))
        assert {"TeXGyrePagella-Regular", "TeXGyrePagella-Bold", "URWPalladioL-Ital"} <= first
        assert not any("LMRoman" in f for f in first), first
        assert all(f == first for f in found.values()), (kind, found)


@pytest.mark.slow
@needs_tex
def test_a_lualatex_run_asks_the_font_index_without_rescanning_the_disk(two_classes, tmp_path):
    """The fallback fonts not installed (the Noto fonts on a Debian machine with DejaVu and
    WenQuanYi) once made luaotfload rescan every font folder in every LuaLaTeX run."""
    lualatex = shutil.which("lualatex")
    if lualatex is None:
        pytest.skip("no lualatex")
    tex = (two_classes["greek"] / "sheets.tex").read_text(encoding="utf-8")
    assert "\\directlua" in tex
    (tmp_path / "sheets.tex").write_text(tex, encoding="utf-8")
    subprocess.run(
        [lualatex, "-interaction=batchmode", "-halt-on-error", "sheets.tex"],
        cwd=tmp_path,
        capture_output=True,
        check=True,
        timeout=300,
    )
    log = (tmp_path / "sheets.log").read_text(encoding="utf-8", errors="replace")
    assert "Reload initiated" not in log
    fonts = subprocess.run(
        ["pdffonts", str(tmp_path / "sheets.pdf")], capture_output=True, text=True, check=True
    ).stdout
    assert "TeXGyrePagella-Regular" in fonts


def _flat(pdf: Path) -> str:
    return " ".join(_text(pdf).split())


@needs_tex
@needs_poppler
def test_the_key_says_where_the_notes_rounding_of_sqrt2_gives_other_digits(tmp_path):
    from tests.conftest import ROOT

    # the practice bank reproduces the note's worked example: S = [[2, 0], [0, 2]], d_k = 2
    folder = build(
        BuildOptions(seed=1, banks=(str(ROOT / "banks" / "practice.yaml"),), out=str(tmp_path))
    ).folder
    text = _flat(folder / "key.pdf")
    # the key's exact e^sqrt(2) = 4.113, and the note's e^1.41 = 4.096: both said, once each
    said = re.findall(
        r"as note 3\.2 does, gives e ?1\.41 ≈ 4\.10 where this key has 4\.11 "
        r"\(row sum 5\.10 where this key has 5\.11\)",
        text,
    )
    assert len(said) >= 2, text  # the worked example and its causal twin
    assert "4.11" in text and "5.11" in text  # the exact values stay as they were


HEATMAP_BANK = """\
sheet: {id: heat, title: Heat}
questions:
  - id: heat
    family: heatmap
    params: {T: 4%s}
"""


@needs_tex
@needs_poppler
@pytest.mark.parametrize("numbers", [False, True])
def test_a_reading_heatmap_is_shade_only_and_one_to_compute_with_prints_its_weights(
    tmp_path, numbers
):
    import json

    bank = _write_bank(tmp_path, HEATMAP_BANK % (", numbers: true" if numbers else ""))
    folder = build(BuildOptions(seed=1, banks=(bank,), out=str(tmp_path / "out"))).folder
    text = _text(folder / "sheet.pdf")
    (sheet,) = json.loads((folder / "key.json").read_text(encoding="utf-8"))["sheets"]
    weights = {f"{x:.2f}" for row in sheet["questions"][0]["given"]["A"] for x in row}
    printed = re.findall(r"\b[01]\.\d\d\b", text)
    if numbers:
        assert weights <= set(printed), (weights, text)
    else:
        assert "darker = more weight" in text
        assert printed == [], text  # no weight in the heatmap: it is read by its shades


def test_a_shade_only_heatmap_asks_a_row_whose_largest_weight_stands_out(tmp_path):
    import json
    from fractions import Fraction

    bank = _write_bank(tmp_path, HEATMAP_BANK % "")
    folder = build(
        BuildOptions(seed=5, banks=(bank,), out=str(tmp_path / "out"), versions=20, pdf=False)
    ).folder
    sheets = json.loads((folder / "key.json").read_text(encoding="utf-8"))["sheets"]
    assert len(sheets) == 20
    for sheet in sheets:
        given = sheet["questions"][0]["given"]
        row = sorted((Fraction(str(x)) for x in given["A"][given["token"] - 1]), reverse=True)
        assert row[0] - row[1] >= Fraction(3, 20), (sheet["id"], row)


@needs_tex
@pytest.mark.skipif(shutil.which("pdffonts") is None, reason="no pdffonts")
def test_no_document_has_a_bitmap_font(tmp_path):
    """Typewriter text (an answer sheet's sheet code, a key's slip names, the grid's ids)
    was set in Computer Modern's T1 typewriter, which has outlines only with cm-super (not
    among the README's packages): pdfLaTeX drew those words as bitmap Type 3 fonts."""
    folder = build(
        BuildOptions(
            seed=1,
            out=str(tmp_path / "out"),
            versions=2,
            scannable=True,
            answer_sheet=True,
            engine="pdflatex",
        )
    ).folder
    pdfs = sorted(folder.rglob("*.pdf"))
    assert {"answers.pdf", "keys.pdf", "keys-grid.pdf"} <= {p.name for p in pdfs}, pdfs
    for pdf in pdfs:
        out = subprocess.run(["pdffonts", str(pdf)], capture_output=True, text=True, check=True)
        rows = out.stdout.splitlines()[2:]
        assert rows, pdf.name
        assert not [r for r in rows if "Type 3" in r], (pdf.name, out.stdout)
    grid = subprocess.run(
        ["pdffonts", str(folder / "keys-grid.pdf")], capture_output=True, text=True, check=True
    )
    assert "LMMono" in grid.stdout  # the ids in the typewriter face, as outlines
