"""What a real Moodle and Canvas showed in the exports (issue 18, sections 2 and 3), each
checked by parsing the exported file back and replaying what the LMS does with it: Moodle
takes the first answer that matches and shows the first 100 % answer as the correct one;
its emoticon and URL filters rewrite text outside ``<span class="nolink">``; Canvas compares
fill-in blanks as exact text.

A behaviour across modules, not one module's tests (export, export.qti, keyjson.read).
"""

from __future__ import annotations


def test_math_keeps_its_formula_and_loses_the_emoticon():
    from worksheetgen.export import html

    root = html.question_root()
    html.add(root, "p", r"Compute \(f(h)\) and (y).")
    out = html.serialize(root)
    assert r"\(f({}h)\)" in out and '<span class="nolink">(y)</span>' in out
    assert html.serialize(root) == out  # serializing again protects nothing twice


def test_canvas_whole_numbers_accept_a_point_zero_and_a_plus():
    from worksheetgen.export.qti import accepted_texts, spelling_note
    from worksheetgen.keyjson.read import Cell

    cell = Cell(key="n", label="", value=2.0, printed="2", tolerance=0.0, exact=None)
    assert accepted_texts(cell) == ["2", "2.0", "+2", "+2.0"]
    assert "2.0 and +2 are accepted" in spelling_note([0])
    minus = Cell(key="m", label="", value=-0.5, printed="-0.50", tolerance=0.0, exact=None)
    assert {"-0.50", "−0.50", "-.5", "−.50", "-0.500"} <= set(accepted_texts(minus))
