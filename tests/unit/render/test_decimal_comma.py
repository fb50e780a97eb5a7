"""Numbers as the build's language writes them (issue 37 §1): a German build (or one with
``--decimal comma``) prints every answer, table, given value, worked step and margin with a
decimal comma, checked in the outputs themselves: the PDFs' text (pdftotext, its words'
boxes), the Markdown and the HTML; a section of the course's note ("Note 3.2", the bank's
course) stays as written, and ``--decimal point`` gives German words with points.

A behaviour across modules, not one module's tests (pipeline.build, pipeline.options)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import needs_tex
from tests.pagewords import pages
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions

#: a decimal number with a point, and the section of the course's note the default bank (its
#: course, "Note 3.2") and the families' words ("Skript 3.2") cite: no decimal
POINT = re.compile(r"[0-9]\.[0-9]")
SECTION = re.compile(r"(?:Note|NOTE|Skript) 3\.2")


def _folder(out: Path, pdf: bool = False, **options: object) -> Path:
    return build(BuildOptions(seed=7, out=str(out), pdf=pdf, **options)).folder  # type: ignore[arg-type]


def _without_bank_words(text: str) -> str:
    return SECTION.sub("", text)


@pytest.fixture(scope="module")
def german(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _folder(tmp_path_factory.mktemp("de"), language="de")


@needs_tex
def test_the_german_pdfs_print_decimal_commas_and_no_point(tmp_path):
    folder = _folder(tmp_path, pdf=True, language="de")
    for name in ("sheet", "key", "key-grid"):
        pdf = folder / f"{name}.pdf"
        text = subprocess.run(
            ["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True
        ).stdout
        assert not POINT.search(_without_bank_words(text)), (name, POINT.findall(text))
        boxes = [w for _, _, ws in pages(pdf) for w in ws]
        numbers = [w.text for w in boxes if re.fullmatch(r"[−-]?[0-9]+,[0-9]+[;)\]]*", w.text)]
        # a comma TeX spaced as punctuation (a math comma without braces) splits a number
        # in two words a thin space apart, "0," and "33" (a list of whole numbers, "2, 0",
        # has a whole space after its commas)
        split = [
            (a.text, b.text)
            for a, b in zip(boxes, boxes[1:], strict=False)
            if re.fullmatch(r"[−-]?[0-9]+,", a.text)
            and re.fullmatch(r"[0-9]+", b.text)
            and a.page == b.page
            and abs(a.y1 - b.y1) < 1
            and 0 <= b.x0 - a.x1 < 2.5
        ]
        assert split == [], name
        if name != "sheet":  # the sheet prints the questions' whole numbers only
            assert len(numbers) > 40, name
    key = subprocess.run(
        ["pdftotext", str(folder / "key.pdf"), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "0,25" in key or "0,5" in key
    assert "±0,01" in key  # a margin
    assert "2 steht für 2,00" in key  # the rounding note's number
    assert "Skript 3.2" in key  # a section of the course's note is no decimal


def test_markdown_and_html_print_decimal_commas(german):
    md = (german / "key.md").read_text("utf-8")
    assert "{,}" in md  # in math: a digit's comma, no space after it
    assert not POINT.search(_without_bank_words(md))
    page = (german / "key.html").read_text("utf-8")
    body = page.split("<main", 1)[1]
    mn = re.findall(r"<mn>([^<]*)</mn>", body)
    assert any("," in m for m in mn)
    assert not [m for m in mn if "." in m]
    cells = re.findall(r"<td>([^<]*)</td>", body)
    assert any(re.fullmatch(r"−?[0-9]+,[0-9]+", c) for c in cells)
    assert not [c for c in cells if POINT.search(c)]
    # a list of decimals: its entries apart by semicolons, never by a comma
    assert '<mo separator="true">;</mo>' in body


def test_the_key_json_keeps_points_and_a_point_build_prints_points(german, tmp_path):
    key = (german / "key.json").read_text("utf-8")
    assert '"0.' in key and '"0,' not in key  # data: the point, whatever was printed
    pointed = _folder(tmp_path / "point", language="de", decimal="point")
    for name in ("key.tex", "key.md", "key-grid.tex"):
        assert "{,}" not in (pointed / name).read_text("utf-8"), name
    english = _folder(tmp_path / "comma", decimal="comma")
    tex = (english / "key.tex").read_text("utf-8")
    assert "{,}" in tex and "Worked solution." in tex  # English words, decimal commas
