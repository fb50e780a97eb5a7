"""Room to work (issue 17, item 4): ``space`` on a question, a bank's sheet and the course
configuration, the quiz default for computation questions, what the LaTeX and Markdown
sheets print (and the key does not), and the heights refused when a bank is loaded.

A behaviour across modules, not one module's tests (model)."""

from __future__ import annotations

import re

import pytest

from worksheetgen.model import Space


@pytest.mark.parametrize(
    ("value", "height", "style", "mm"),
    [
        ("6cm", "6cm", "blank", 60.0),
        ("45mm", "45mm", "blank", 45.0),
        ("2.5in", "2.5in", "blank", 63.5),
        ("6 cm", "6cm", "blank", 60.0),
        ({"height": "6cm", "style": "grid"}, "6cm", "grid", 60.0),
        ({"height": "80mm", "style": "lines"}, "80mm", "lines", 80.0),
        ("none", "", "blank", 0.0),
    ],
)
def test_space_accepts_heights_in_cm_mm_and_in_with_a_style(value, height, style, mm):
    space = Space.parse(value)
    assert (space.height, space.style, space.mm) == (height, style, mm)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("30cm", "expected a height that fits on a page (at most 257mm, the text height)"),
        ("11in", "expected a height that fits on a page"),
        ("0cm", "expected a height above 0 (or none)"),
        ("6pt", "expected none, a height such as 6cm, 60mm or 2.5in"),
        (6, "expected none, a height such as 6cm"),
        ({"height": "6cm", "style": "dots"}, "expected a style of blank, lines, grid, got 'dots'"),
        ({"style": "lines"}, "expected a height (6cm, 60mm, 2.5in), got none"),
        ({"height": "6cm", "colour": "red"}, "expected height and style, got 'colour'"),
    ],
)
def test_space_refuses_what_cannot_be_printed(value, says):
    with pytest.raises(ValueError, match=re.escape(says)):
        Space.parse(value)
