"""Math is typeset wherever it appears, or refused where it cannot be (issue 26, §2).

Titles, the course, instructions, options, slip descriptions and worked steps are markup
(text with ``$…$`` math, ``render.markup``): TeX sets their math on paper, the LMS exports
write it as MathJax's ``\\( … \\)`` and the Markdown files and grade's report.md as ``$…$``.
Checked as output: the text of the PDFs (pdftotext), the exported files and report.md.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import ROOT, needs_tex
from worksheetgen.cli import main
from worksheetgen.render.markup import markup_md, markup_md_inline

needs_poppler = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="no pdftotext")


BANKS = sorted((ROOT / "banks").glob("*.yaml"))


#: what must never reach the paper: TeX's own characters, and math typed as ASCII
RAW_TEX = ("\\", "$")


ASCII_MATH = ("d_k", "^T", "e^x", "-inf", "sqrt(")


ROSTER = "name,id\nZoë Ångström,s1\nΑλέξης Παπαδόπουλος,s2\nJean-Luc Picard,s3\n"


TITLE = r"Scaling by $\sqrt{d_k}$: a quiz on $\mathrm{softmax}(QK^\top)$"


MATH_BANK = r"""
sheet:
  id: math-quiz
  title: 'Scaling by $\sqrt{d_k}$: a quiz on $\mathrm{softmax}(QK^\top)$'
  course: 'Attention: $Q$, $K$ and $V$'
  instructions: Round to {{ places }}; write a masked score as $-\infty$.
  kind: quiz
  shuffle: true
questions:
  - id: bug
    title: 'Find the slip in $A = \mathrm{softmax}(QK^\top/\sqrt{d_k})$'
    family: spot-the-bug
    points: 3
    params: {slip: scale-by-dk, causal: false}
  - pool: where
    pick: 1
    from:
      - id: sources
        title: 'Where $Q$, $K$ and $V$ come from'
        family: cross
      - id: widths
        title: 'Heads of width $d_k = d/h$'
        family: heads
  - id: mask
    title: 'The causal mask: $-\infty$ above the diagonal'
    family: causal
    params: {T: 3}
"""


def _build(out: Path, bank: Path, roster: Path, *extra: str) -> Path:
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--bank",
            str(bank),
            "--seed",
            "3",
            "--roster",
            str(roster),
            "--shuffle",
            "--out",
            str(out),
            "-q",
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    (folder,) = out.iterdir()
    return folder


def _pdf_text(pdf: Path) -> str:
    return subprocess.run(
        ["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout


def _no_raw_math(folder: Path) -> None:
    """The class's sheets, keys and grid read as typeset math: no TeX, no ASCII math."""
    pdfs = [folder / "sheets.pdf", folder / "keys.pdf", folder / "keys-grid.pdf"]
    for pdf in pdfs:
        text = _pdf_text(pdf)
        for bad in RAW_TEX + ASCII_MATH:
            lines = [ln for ln in text.splitlines() if bad in ln]
            assert not lines, f"{pdf.name}: {bad!r} printed in {lines[:3]}"


@pytest.fixture
def math_bank(tmp_path: Path) -> Path:
    path = tmp_path / "math.yaml"
    path.write_text(MATH_BANK.lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture
def roster(tmp_path: Path) -> Path:
    path = tmp_path / "roster.csv"
    path.write_text(ROSTER, encoding="utf-8")
    return path


@needs_tex
@needs_poppler
@pytest.mark.slow
@pytest.mark.parametrize("bank", BANKS, ids=lambda p: p.stem)
def test_no_raw_tex_or_ascii_math_in_any_bundled_banks_pdfs(bank, roster, tmp_path):
    _no_raw_math(_build(tmp_path / "out", bank, roster))


@needs_tex
@needs_poppler
@pytest.mark.slow
def test_a_title_with_math_is_typeset_on_paper_and_mathjax_in_the_exports(
    math_bank, roster, tmp_path
):
    folder = _build(
        tmp_path / "out",
        math_bank,
        roster,
        "--export",
        "moodle",
        "--export",
        "gift",
        "--export",
        "qti",
    )
    _no_raw_math(folder)
    sheets = _pdf_text(folder / "sheets.pdf")
    # pdftotext's spacing around math depends on the fonts' metrics (Pagella's math puts a
    # space after the parenthesis): compare without spaces
    flat = "".join(sheets.split())
    assert "Scalingby" in flat and "aquizonsoftmax(QK" in flat

    # the Markdown documents keep the math as $…$
    for name in ("sheets.md", "keys.md", "keys-grid.md"):
        assert markup_md(TITLE) in (folder / name).read_text(encoding="utf-8"), name

    # the exports: MathJax \( \) math, never the bank's $…$ (GIFT escapes \ { } as \\ \{ \})
    # ($course$ and $CATEGORY: are Moodle's and GIFT's own words, not math)
    moodle = (folder / "moodle.xml").read_text(encoding="utf-8")
    gift = (folder / "gift.txt").read_text(encoding="utf-8")
    with zipfile.ZipFile(folder / "canvas-qti.zip") as z:
        qti = "\n".join(z.read(n).decode("utf-8") for n in z.namelist() if n.endswith(".xml"))
    for name, text in (("moodle.xml", moodle), ("gift.txt", gift), ("canvas qti", qti)):
        text = text.replace("$course$/", "").replace("$CATEGORY:", "")
        assert "$" not in text, (name, re.findall(r".{40}\$.{40}", text)[:3])
    # the sheet's title and the question titles where an LMS lists them untypeset (Moodle's
    # category names, Canvas's quiz title and group names): plain text, no raw \( \)
    plain_title = "Scaling by √dₖ: a quiz on softmax(QKᵀ)"
    categories = re.findall(r"<category>\s*<text>([^<]*)</text>", moodle)
    assert categories and all(c.startswith(f"$course$/top/{plain_title}/") for c in categories)
    assert not any("\\(" in c for c in categories)
    assert any(c.endswith("The causal mask: −∞ above the diagonal") for c in categories)
    assert any("of width dₖ = d//h" in c for c in categories), categories  # "/" doubled
    assert f"$CATEGORY: $course$/top/{plain_title}/" in gift
    assert f'title="{plain_title}"' in qti and f"<title>{plain_title}</title>" in qti
    assert not re.findall(r'<section [^>]*title="[^"]*\\\(', qti)
    # the options of spot-the-bug and of cross
    for text in (moodle, qti):
        assert r"Divides the scores by \(d_k\) instead of by \(\sqrt{d_k}\)." in text
    assert r"Divides the scores by \\(d_k\\) instead of by \\(\\sqrt\{d_k\}\\)." in gift

    # grade's report.md prints the title's math as Markdown math
    key = folder / "key.json"
    sheet = json.loads(key.read_text(encoding="utf-8"))["sheets"][0]["id"]
    responses = tmp_path / "responses.csv"
    with responses.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(
            [["student", "question", "answer", "entry", "value"], [sheet, "bug", "slip", "", "b"]]
        )
    result = CliRunner().invoke(
        main,
        ["grade", "--key", str(key), str(responses), "--out", str(tmp_path / "g")],
    )
    assert result.exit_code == 0, result.output
    report = (tmp_path / "g" / "report.md").read_text(encoding="utf-8")
    assert f"# Grading report: {markup_md_inline(TITLE)}\n" in report
    assert r"$\sqrt{d_k}$" in report and r"\$" not in report
    assert markup_md_inline(r"Find the slip in $A = \mathrm{softmax}(QK^\top/\sqrt{d_k})$") in (
        report
    )


def test_math_in_a_title_from_the_command_line_is_refused_before_a_build(tmp_path):
    result = CliRunner().invoke(
        main,
        ["build", "--seed", "1", "--no-pdf", "--out", str(tmp_path), "--title", "$\\input{x}$"],
    )
    assert result.exit_code != 0
    assert "--title: expected math with safe commands only, got \\input" in result.output
    assert "Traceback" not in result.output and not any(tmp_path.iterdir())
