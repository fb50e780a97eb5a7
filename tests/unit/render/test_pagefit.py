"""render/pagefit.py: a sheet's pages counted without TeX, as the exam layout's macros place
its questions (base.tex.j2, "The exam layout of sheets and keys"). How close the count comes
to pdfLaTeX's is tests/e2e/test_page_estimate.py's question; these pin the model's rules."""

from __future__ import annotations

import pytest

from tests.paths import ROOT
from worksheetgen.pipeline.options import BuildOptions
from worksheetgen.pipeline.pages import draw_versions, page_counts, page_report, pages_line
from worksheetgen.render import pagefit
from worksheetgen.render.pagefit import (
    BASELINE,
    DATA_AGAIN,
    HEADER_SHRINK,
    PAPERS,
    PARSKIP,
    PT_PER_MM,
    QuestionFit,
    header_height,
    question_fit,
    sheet_pages,
    text_lines,
)

A4 = PAPERS["a4"]
GOAL = A4.text_height  # 731pt


def pages(header: float, *questions: QuestionFit) -> tuple[int, list[tuple[int, float, float]]]:
    trace: list[tuple[int, float, float]] = []
    return sheet_pages(header, questions, A4, trace), trace


def q(*pieces: float, data: float = 0.0, room: float = 0.0) -> QuestionFit:
    return QuestionFit(tuple(pieces), data, room)


def test_the_papers_text_blocks_are_tex_own():
    # \textheight and \textwidth of 11pt article with geometry margin=2cm, headheight 14pt
    assert PAPERS["a4"].text_height == pytest.approx(731.24, abs=0.01)
    assert PAPERS["letter"].text_height == pytest.approx(681.16, abs=0.01)
    assert PAPERS["a4"].text_width == pytest.approx(483.70, abs=0.01)
    assert PAPERS["letter"].text_width == pytest.approx(500.48, abs=0.01)


def test_text_wraps_by_the_fonts_widths():
    assert text_lines("", 400.0) == 1
    short = "Compute the scores $S = QK^\\top$."
    assert text_lines(short, 483.0) == 1
    long = " ".join(["attention"] * 60)  # 60 words of about 44pt with their spaces
    assert text_lines(long, 483.0) in (5, 6)
    assert text_lines(long, 240.0) > text_lines(long, 483.0)
    # wide letters take more room than narrow ones
    assert text_lines(" ".join(["WWW"] * 40), 483.0) > text_lines(" ".join(["iii"] * 40), 483.0)
    # a word wider than the line stays whole on it, as TeX leaves it
    assert text_lines("W" * 120, 483.0) == 1


def test_questions_that_fit_share_the_first_page():
    count, trace = pages(200.0, q(150.0), q(150.0), q(150.0))
    assert count == 1
    assert [page for page, _, _ in trace] == [1, 1, 1]
    assert trace[1][1] == pytest.approx(350.0) and trace[2][1] == pytest.approx(500.0)


def test_a_question_without_a_part_to_break_at_moves_to_the_next_page():
    # 250pt left: a 300pt question in one piece cannot split, so it starts page 2
    count, trace = pages(GOAL - 250.0, q(300.0))
    assert count == 2
    count, trace = pages(GOAL - 250.0, q(300.0), q(100.0))
    # it starts page 2 (its 6pt and parskip above it dropped at the top)
    assert trace[1] == (2, pytest.approx(300.0 - 9.0), 0.0)


def test_a_question_splits_before_a_part_and_goes_on_under_its_data_again():
    # 300pt left: the opening and first part (200pt) fit; the rest goes on page 2 under
    # "Question N, continued; its data again:" and the data
    count, trace = pages(GOAL - 300.0, q(200.0, 150.0, 150.0, data=60.0), q(10.0))
    assert count == 2
    page, total, _ = trace[1]
    assert page == 2
    assert total == pytest.approx(BASELINE + 60.0 + 3.0 + DATA_AGAIN + 300.0 - 9.0)


def test_a_question_with_data_may_break_after_its_opening_and_points_back_to_it():
    # 150pt left: the opening (120pt) fits, its first part (200pt) does not; the parts go on
    # page 2 under one line naming the page of the data just above, not the data again
    opening = QuestionFit((120.0, 200.0, 100.0), 60.0, 0.0, opens=True)
    count, trace = pages(GOAL - 150.0, opening, q(10.0))
    assert count == 2
    assert trace[1] == (2, pytest.approx(BASELINE + 300.0 - 9.0), 0.0)
    # without that break (a question without data) it moves whole
    whole = QuestionFit((320.0, 100.0), 60.0, 0.0)
    _, trace = pages(GOAL - 150.0, whole, q(10.0))
    assert trace[1] == (2, pytest.approx(420.0 - 9.0), 0.0)


def test_data_too_tall_to_print_again_is_named_by_its_page():
    # a worked solution of 200pt (over 15% of the page): the last part, continued on page 2,
    # has one line above it, not the data
    tall = q(140.0, 150.0, 150.0, data=200.0)
    count, trace = pages(GOAL - 300.0, tall, q(10.0))
    assert count == 2
    assert trace[1] == (2, pytest.approx(BASELINE + 150.0 - 9.0), 0.0)
    short = q(140.0, 150.0, 150.0, data=100.0)
    _, trace = pages(GOAL - 300.0, short, q(10.0))
    assert trace[1][1] == pytest.approx(BASELINE + 100.0 + PARSKIP + DATA_AGAIN + 150.0 - 9.0)
    # and where what is left is less than the data and 8% of the page, a question with tall
    # data still starts here (its continued part does not repeat it)
    _, trace = pages(GOAL - 180.0, q(140.0, 150.0, data=200.0), q(10.0))
    assert trace[1] == (2, pytest.approx(BASELINE + 150.0 - 9.0), 0.0)


def test_a_question_without_data_splits_where_a_part_fits_rather_than_moving():
    # 250pt left, a 400pt question without data in pieces of 200: \wsendquestion splits it
    # (only a question with data to print again moves whole where little is left)
    count, trace = pages(GOAL - 250.0, q(200.0, 200.0), q(10.0))
    assert count == 2
    assert trace[1] == (2, pytest.approx(BASELINE + 200.0 - 9.0), 0.0)


def test_a_first_piece_shorter_than_four_lines_is_not_split_off():
    count, trace = pages(GOAL - 200.0, q(40.0, 300.0, data=30.0), q(10.0))
    assert count == 2 and trace[1][0] == 2
    assert trace[1][1] == pytest.approx(340.0 - 9.0)  # whole, on page 2


def test_a_question_moves_whole_when_what_is_left_would_hold_little_more_than_its_data():
    # fits on a fresh page; 80pt left (and the header's 18pt of shrink) is less than its
    # data and 8% of the page: it moves
    count, trace = pages(GOAL - 80.0, q(60.0, 100.0, data=50.0), q(10.0))
    assert trace[1][0] == 2 and trace[1][1] == pytest.approx(160.0 - 9.0)


def test_rooms_shrink_to_a_third_so_a_question_fits_above_the_foot():
    room = 90 * PT_PER_MM  # 256pt of room to work, shrinking to 85pt
    first = q(200.0, room=room)
    # the second question fits only if the first's room shrinks
    second_height = GOAL - 100.0 - 200.0 - room / 3 - room / 3 - BASELINE - 4.0 - 10.0
    count, trace = pages(100.0, first, q(second_height, room=room))
    assert count == 1
    # the shrink the first room left, with the header's
    assert trace[1][2] == pytest.approx(HEADER_SHRINK + room - room / 3)
    # without the shrink it would not: a room that cannot shrink (none, but a taller box)
    rigid = q(200.0 + room + 4.0)
    count, _ = pages(100.0, rigid, q(second_height, room=room))
    assert count == 2


def test_a_question_taller_than_a_page_runs_on():
    count, _ = pages(0.0, q(GOAL * 2.5))
    assert count == 3


def test_the_header_grows_with_instructions_and_a_scanners_rule():
    plain = header_height(
        A4, title="Quiz", course="", questions=9, instructions="", scannable=False
    )
    more = header_height(
        A4,
        title="Quiz",
        course="CS 101",
        questions=9,
        instructions="Show your work. " * 20,
        scannable=True,
    )
    assert 150.0 < plain < 250.0
    assert more > plain + 3 * 12.0
    wide = header_height(
        A4, title="Quiz", course="", questions=24, instructions="", scannable=False
    )
    assert wide > plain  # two rows of the score table


@pytest.fixture(scope="module")
def quiz():
    return draw_versions(BuildOptions(seed=0, banks=(str(ROOT / "banks" / "quiz.yaml"),)), 3)


def test_a_solved_question_is_cut_before_its_parts(quiz):
    for item in quiz.sheets[0].items:
        fit = question_fit(item, A4, title="T", points="3 points", room_mm=35.0)
        has_data = bool(item.solution.shown or item.solution.shown_steps)
        # a question with data breaks after its opening too: a piece more
        assert fit.opens == (has_data and bool(item.solution.parts))
        assert 1 <= len(fit.pieces) <= max(1, len(item.solution.parts)) + fit.opens
        assert all(p > 0 for p in fit.pieces)
        assert fit.room == pytest.approx(35.0 * PT_PER_MM)
        assert (fit.data > 0) == has_data


def _last_is_a_lone_table(item) -> bool:
    return pagefit._last_table(item) is not None


def test_score_rows_make_a_scannable_question_taller(quiz):
    item = next(
        i
        for s in quiz.sheets
        for i in s.items
        if len(i.solution.parts) >= 3 and not _last_is_a_lone_table(i)
    )
    plain = question_fit(item, A4, title="T", points="5 points")
    rows = [["0", "0.5", "1"]] * len(item.solution.parts)
    scannable = question_fit(
        item, A4, title="T", points="5 points", score_rows=rows, scannable=True
    )
    assert scannable.height > plain.height + BASELINE
    many = question_fit(
        item, A4, title="T", points="5 points", score_rows=[[str(v) for v in range(10)]] * 5
    )
    assert many.height > scannable.height + BASELINE  # the boxes wrap onto more lines


def test_the_bundled_quiz_counts_as_the_paper_and_the_scanner_make_it(quiz):
    a4 = page_counts(quiz, "a4")
    letter = page_counts(quiz, "letter")
    scannable = page_counts(quiz, "letter", scannable=True)
    assert len(a4) == len(letter) == 3
    assert all(3 <= n <= 5 for n in a4 + letter + scannable)
    assert sum(letter) >= sum(a4)  # Letter's page is shorter
    assert sum(scannable) >= sum(letter)


def test_the_check_line_says_each_paper_and_kind_of_sheet():
    options = BuildOptions(seed=0, banks=(str(ROOT / "banks" / "default.yaml"),))
    both = pages_line(page_report(options, 4))
    assert both.startswith("pages: ")
    assert (
        " a sheet on A4, " in both and " on Letter (4 sheets drawn at seed 0; scannable: " in both
    )
    one = pages_line(page_report(options, 1, papers=("letter",), scannable=(True,)))
    assert one.endswith(" a scannable sheet on Letter (1 sheet drawn at seed 0)")
    assert "A4" not in one


def test_score_rows_go_beside_a_last_table_alone_on_its_line(quiz):
    """A question whose last part is a table alone on its line: a short score row beside the
    table adds nothing; a long one, from the table's top down past its foot, adds less than
    the same row under the question (scan.tex.j2's \\ws@scorebeside)."""
    item = next(i for s in quiz.sheets for i in s.items if _last_is_a_lone_table(i))
    plain = question_fit(item, A4, title="T", points="5 points")
    short = question_fit(
        item, A4, title="T", points="5 points", score_rows=[["0", "1"]], scannable=True
    )
    assert short.height == pytest.approx(plain.height)
    rows = [[str(v / 5) for v in range(9)]] * 5
    beside = pagefit._score_rows(rows, A4.text_width, pagefit._last_table(item))
    under = pagefit._score_rows(rows, A4.text_width)
    assert 0 < beside < under


def test_a_scannable_header_has_no_row_for_marks():
    kw = dict(title="Quiz", course="", questions=12, instructions="")
    plain = header_height(A4, scannable=False, **kw)
    scannable = header_height(A4, scannable=True, **kw)
    # the rule's one line in footnotesize, less the score table's row for marks
    assert scannable == pytest.approx(plain + PARSKIP + 11.0 - pagefit.MARK_ROW)
