"""One text rule for every output (issue 33, section 5): names and strings a student typed
in a Moodle download (ESC, BEL, a bidi override, NUL) reach no output raw: scores.csv,
report.md, the class report and each feedback page (HTML and PDF) show them escaped, as
error lines do (``textrules.shown``).

A behaviour across modules, not one module's tests (report.grade, textrules)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.paths import MOODLE
from worksheetgen.report.grade import grade_files
from worksheetgen.textrules import first_refused

HOSTILE = ["\x1b[2J", "\x07", "\u202e", "\x00"]


def _hostile_download(tmp: Path) -> Path:
    """Moodle's download with each hostile character in a name and in a typed response."""
    text = (MOODLE / "default" / "responses-resp-right.csv").read_text("utf-8-sig")
    lines = text.split("\n")
    lines[1] = lines[1].replace("Lovelace,Ada", "Love\x1b[2Jlace\x07,A\u202eda\x00", 1)
    typed = "part 10: without the scale"
    assert typed in lines[1]
    lines[1] = lines[1].replace(typed, "part 10: with\x00out\x1b the \u202escale\x07", 1)
    path = tmp / "hostile.csv"
    path.write_text("\n".join(lines), "utf-8")
    return path


def _pdf_text(path: Path) -> str:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        return "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    finally:
        pdf.close()


def _raw(text: str) -> list[str]:
    """The characters the text rule refuses (a PDF's text breaks lines with CR LF)."""
    return [c for c in text if c not in "\r\n\t" and first_refused(c) is not None]


@pytest.mark.tex
def test_moodle_names_and_typed_responses_reach_no_output_raw(tmp_path):
    responses = _hostile_download(tmp_path)
    out = tmp_path / "out"
    grade_files(MOODLE / "default" / "key.json", responses, out)
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert any(p.suffix == ".pdf" and p.parent.name == "feedback" for p in files)
    seen_name = False
    for path in files:
        text = _pdf_text(path) if path.suffix == ".pdf" else path.read_text("utf-8")
        assert _raw(text) == [], (path.name, _raw(text)[:5])
        seen_name |= "Love\\x1b[2Jlace\\x07" in text
    assert seen_name  # shown escaped, not dropped
    page = next(p for p in files if p.suffix == ".html" and "ada.lovelace" in p.name)
    html = page.read_text("utf-8")
    assert "A\\u202eda\\x00" in html and "with\\x00out\\x1b the \\u202escale\\x07" in html
