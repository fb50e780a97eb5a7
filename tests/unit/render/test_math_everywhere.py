"""Math is typeset wherever it appears, or refused where it cannot be (issue 26, §2).

Titles, the course, instructions, options, slip descriptions and worked steps are markup
(text with ``$…$`` math, ``render.markup``): TeX sets their math on paper, the LMS exports
write it as MathJax's ``\\( … \\)`` and the Markdown files and grade's report.md as ``$…$``.
Checked as output: the text of the PDFs (pdftotext), the exported files and report.md.

A behaviour across modules, not one module's tests (bank.load, errors).
"""

from __future__ import annotations

import pytest

from worksheetgen.bank.load import load_banks
from worksheetgen.errors import WorksheetgenError


@pytest.mark.parametrize(
    ("field", "yaml", "line"),
    [
        ("sheet.title", "sheet:\n  title: 'A $\\input{x}$ title'\n", 2),
        ("sheet.course", "sheet:\n  title: Fine\n  course: 'Week $\\def\\x{1}$'\n", 3),
        ("questions[0].title", "", 4),
    ],
)
def test_math_a_title_cannot_hold_is_refused_at_load_with_its_line(write_bank, field, yaml, line):
    question = "questions:\n  - id: q\n    family: softmax\n"
    if field == "questions[0].title":
        question += "    title: 'Rows of $A^$'\n"
    path = write_bank(yaml + question)
    with pytest.raises(WorksheetgenError) as err:
        load_banks([path])
    message = str(err.value)
    assert message.startswith(f"{path}:{line}: {field}: expected "), message
    assert "\n" not in message
