"""``scan``'s verification view (issue 36, section 3): each page with an issue (every page
with ``--verify-pages all``) drawn upright with every box outlined by what was read, in
colours that differ in line too, each part labelled, a legend; issues.csv names each box
issue's picture; report.md lists the issues a person must settle in issues.csv's words;
``--feedback-scans`` puts each student's pages so drawn on their feedback pages.

A behaviour across modules, not one module's tests (keyjson.records, scan.issues, scan.issuesmd,
scan.overlay)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from tests.conftest import ROOT
from worksheetgen.scan.overlay import LEGEND_PX, STYLES, VIEW_DPI, ViewBox, render_view

QUIZ = str(ROOT / "banks" / "quiz.yaml")


BOX = 4.0


SCALE = VIEW_DPI / 25.4  # the view's pixels a mm


def _colour(view: Image.Image, x: float, y: float) -> tuple[int, int, int]:
    """The mean colour of the 3 x 3 pixels around (x, y) of the view."""
    a = np.asarray(view.convert("RGB"), dtype=float)
    xi, yi = int(round(x)), int(round(y))
    return tuple(int(v) for v in a[yi - 1 : yi + 2, xi - 1 : xi + 2].reshape(-1, 3).mean(axis=0))


def _nearest(colour: tuple[int, int, int]) -> str:
    """The style (or white, or black) whose colour is nearest."""
    options = {k: c for k, (_, c, _) in STYLES.items()}
    options.update(white=(255, 255, 255), black=(0, 0, 0))
    return min(
        options, key=lambda k: sum((a - b) ** 2 for a, b in zip(options[k], colour, strict=True))
    )


def _flag_at(view: Image.Image, x_mm: float, y_mm: float) -> str:
    """What colour the flag beside the top right corner of the box at (x, y) mm has."""
    return _nearest(_colour(view, (x_mm + BOX) * SCALE + 8, y_mm * SCALE - 9))


def _edge_at(view: Image.Image, x_mm: float, y_mm: float) -> str:
    """What colour the outline just left of the box at (x, y) mm has (a solid outline's
    3 pixels, halfway down)."""
    return _nearest(_colour(view, x_mm * SCALE - 2.5, (y_mm + BOX / 2) * SCALE))


def _page(dpi: int, turned: bool) -> tuple[np.ndarray, np.ndarray]:
    """A white A4 page at ``dpi`` with a black 10 mm square at 20 mm, 20 mm of the printed
    page, and the homography (mm -> pixels) as read: turned half a turn when ``turned``."""
    px = dpi / 25.4
    w, h = int(210 * px), int(297 * px)
    image = np.full((h, w), 250, dtype=np.uint8)
    h_map = np.diag([px, px, 1.0])
    if turned:  # the scan upside down: printed (x, y) mm at pixel (w - x px, h - y px)
        h_map = np.array([[-px, 0, w], [0, -px, h], [0, 0, 1.0]])
    corner = h_map @ np.array([20, 20, 1.0])
    far = h_map @ np.array([30, 30, 1.0])
    (x0, x1), (y0, y1) = sorted([corner[0], far[0]]), sorted([corner[1], far[1]])
    image[int(y0) : int(y1), int(x0) : int(x1)] = 0
    return image, h_map


@pytest.mark.parametrize("turned", [False, True])
def test_each_box_is_outlined_in_its_style_on_the_page_upright(turned):
    image, h_map = _page(200, turned)
    boxes = [
        ViewBox(50, 100, "1(a)", "s/q1/a", "marked"),
        ViewBox(60, 100, "1(a)", "s/q1/a", "empty"),
        ViewBox(50, 150, "2(a)", "s/q2/a", "flagged"),
        ViewBox(60, 150, "2(a)", "s/q2/a", "empty"),
        ViewBox(50, 200, "3(b)", "s/q3/b", "taken-back"),
    ]
    data = render_view(image, h_map, "a4", BOX, boxes, {"s/q2/a"}, "sheet s, page 1: x.png#1")
    assert data.startswith(b"\xff\xd8")  # a JPEG
    view = Image.open(io.BytesIO(data))
    assert view.size == (round(210 * SCALE), round(297 * SCALE) + LEGEND_PX)
    # the printed page upright, however it was scanned: its square at 20-30 mm
    assert _nearest(_colour(view, 25 * SCALE, 25 * SCALE)) == "black"
    assert _nearest(_colour(view, 185 * SCALE, 272 * SCALE)) == "white"
    assert _edge_at(view, 50, 100) == "marked"  # solid blue, 3 px
    assert _flag_at(view, 50, 150) == "flagged"  # vermillion, with its flag
    assert _flag_at(view, 50, 100) == "white"  # no flag on a box read as marked
    assert _flag_at(view, 60, 150) == "white"  # nor on an empty box of a flagged part
    # taken back: two rectangles 2 px wide, 2 and 6 px out, white between them
    x = 50 * SCALE
    y = (200 + BOX / 2) * SCALE
    a = np.asarray(view.convert("RGB"), dtype=float)
    row = [_nearest(tuple(a[int(y), c])) for c in range(int(x) - 9, int(x) + 1)]
    lines = [c for c, k in enumerate(row) if k == "taken-back"]
    assert len(lines) >= 2 and lines[-1] - lines[0] >= 2, row
    assert "white" in row[lines[0] : lines[-1]], row
    # the empty box's thin grey line: no colour of the palette's three
    assert _edge_at(view, 60, 100) not in ("marked", "flagged", "taken-back")
    # the label of a part for a person in the flag's colour, left of its first box
    labels = a[int(150 * SCALE) : int(154 * SCALE), int(40 * SCALE) : int(50 * SCALE)]
    reds = (labels[..., 0] > 170) & (labels[..., 1] < 140) & (labels[..., 2] < 90)
    assert reds.sum() > 5
    # the legend: a sample of each style in the band under the page
    band = a[round(297 * SCALE) + 1 :]
    for _, colour, _ in STYLES.values():
        near = (np.abs(band - np.array(colour)).sum(axis=2) < 60).sum()
        assert near > 10, colour


def test_a_report_with_no_open_issue_is_left_as_grade_wrote_it():
    from worksheetgen.keyjson.records import KeyDoc
    from worksheetgen.scan.issues import Issue
    from worksheetgen.scan.issuesmd import with_issues

    key = KeyDoc("t", "", 1, "t", (), "key.json")
    report = "# Grading report: t\n\nKey: `key.json`.\n\n## Slips seen\n\nNone.\n"
    assert with_issues(report, [], key) == report
    blank = Issue("blank-page", "page:a.png#1", "a.png#1", "no print", "page-001.png", "blank")
    assert with_issues(report, [blank], key) == report
    odd = Issue("other-class-page", "page:b|c.png#1", "b|c.png#1", "another class", "p.png")
    text = with_issues(report, [blank, odd], key)
    assert text.startswith("# Grading report: t\n\nKey: `key.json`.\n\n## Issues for a person (1)")
    assert "| other-class-page | `page:b\\|c.png#1` | b\\|c.png\\#1 |" in text
    assert "[crops/p.png](<crops/p.png>)" in text
    assert "(1 settled already" in text and text.endswith("## Slips seen\n\nNone.\n")


def test_report_md_names_the_student_and_part_of_each_issue_escaped():
    from worksheetgen.keyjson.records import KeyDoc, KeySheet, Student
    from worksheetgen.scan.issues import Issue
    from worksheetgen.scan.issuesmd import issues_md

    sheet = KeySheet("s01", "x", Student("Ana *Ruiz*", "s01"), ())
    key = KeyDoc("t", "", 1, "t", (), "key.json", (sheet,))
    text = issues_md(
        [
            Issue("unmarked", "s01/q-a/b", "p.png#1", "no score box marked", "box-0001.png"),
            Issue("absent", "absent:s01", "sheet s01", "no page of this student's sheet"),
        ],
        key,
    )
    rows = [line for line in text.splitlines() if line.startswith("| unmarked") or "absent" in line]
    assert rows[0].startswith(
        "| unmarked | `s01/q-a/b` | p.png\\#1 | Ana \\*Ruiz\\* (s01) | `q-a/b` |"
    )
    assert rows[0].endswith("| [crops/box-0001.png](<crops/box-0001.png>) |")  # no view: the crop
    assert "| Ana \\*Ruiz\\* (s01) |  |" in rows[1]  # a student's issue names no part


def test_a_view_whose_words_go_beyond_ascii_draws_their_letters():
    """Pillow's own font has no "ü" (it drew "zur□ckgenommen" in a German legend): a view
    whose words need more is set in a font that has them; an ASCII view keeps Pillow's."""
    from worksheetgen.scan.overlay import _font

    def same(font, a: str, b: str) -> bool:
        ma, mb = np.asarray(font.getmask(a)), np.asarray(font.getmask(b))
        return ma.shape == mb.shape and bool((ma == mb).all())

    german = _font(12, ["Blatt m1, Seite 1", "zurückgenommen (ausgefüllt)"])
    for letter in "üäöß":
        assert not same(german, letter, "\ue000"), letter  # not the missing glyph's box
    assert same(_font(12, ["sheet m1, page 1"]), "ü", "\ue000")  # what the German view had
