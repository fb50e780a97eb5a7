"""Keys a TA reads without a second thought: whole tables exact, one printing style per
answer, names and wording that say what they mean.

A behaviour across modules, not one module's tests (attention, bank.load, errors, families,
families.cost, model, solve.draw, solve.item)."""

from __future__ import annotations

from tests.paths import ROOT
from worksheetgen.attention import slips as mc
from worksheetgen.bank.load import load_banks
from worksheetgen.families import get_family
from worksheetgen.model import SheetIdentity
from worksheetgen.solve.draw import draw_variant
from worksheetgen.solve.item import solve_item

LAB3 = {
    "Q": [[1, 0], [0, 1], [1, 1]],
    "K": [[1, 1], [0, 1], [1, 0]],
    "V": [[3, 1], [3, 2], [3, 0]],
    "T": 3,
    "d_k": 2,
    "causal": True,
}


def test_whole_number_tables_have_tolerance_zero_like_every_whole_answer():
    solution = get_family("lab3").solve(LAB3, 2, "q")
    scores = solution.answer("scores")
    assert scores.rounded == [["1", "0", "1"], ["1", "1", "0"], ["2", "1", "1"]]
    assert scores.tolerance == 0.0
    assert solution.answer("scaled").tolerance == 0.005  # decimals: half a unit
    masked = (
        get_family("causal")
        .solve({"T": 2, "S": [[2, 0], [4, 2]], "d_k": 4, "causal": True}, 2, "q")
        .answer("masked")
    )
    assert masked.rounded == [["1", "-inf"], ["2", "1"]] and masked.tolerance == 0.0


def test_a_whole_scaled_row_prints_and_grades_like_a_whole_table():
    scaled = (
        get_family("scaling").solve({"row": [4, 0, 2], "d_k": 4, "n": 3}, 2, "q").answer("scaled")
    )
    assert scaled.rounded == ["2", "0", "1"] and scaled.tolerance == 0.0


def rounded_slips(family: str, given: dict, name: str) -> dict[str, object]:
    fp = mc.fingerprints(get_family(family), given)
    assert fp is not None
    style = mc.prints_whole(fp.correct[name])
    return {s.name: mc.value_rounded(s.values[name], 2, style) for s in fp.slips}


def test_a_slip_prints_in_its_answer_style_in_tables_and_rows_alike():
    table = rounded_slips(
        "softmax", {"T": 2, "S": [[3, 0], [1, 2]], "d_k": 2, "causal": False}, "scaled"
    )
    row = rounded_slips("scaling", {"row": [3, 0, 2], "d_k": 4, "n": 3}, "scaled")
    assert table["no-scale"] == [["3.00", "0.00"], ["1.00", "2.00"]]
    assert row["no-scale"] == ["3.00", "0.00", "2.00"]
    whole = rounded_slips("scaling", {"row": [4, 0, 2], "d_k": 4, "n": 3}, "scaled")
    assert whole["no-scale"] == ["4", "0", "2"]  # a whole answer: whole like it


def test_key_json_distractors_print_like_their_answer():
    bank = load_banks([ROOT / "banks" / "note.yaml"])
    spec = next(q for q in bank.questions if q.family == "causal")
    for seed in range(6):
        variant = draw_variant(spec, SheetIdentity(seed, "s"))
        item = solve_item(spec, variant.given, 1, "s", variant=variant)
        for d in item.solution.distractors:
            for name, printed in d.rounded.items():
                mine = {("." in c) for row in printed for c in row if c != "-inf"}
                right = (
                    item.solution.answer(name).rounded
                    if name in {a.name for a in item.solution.answers}
                    else None
                )
                if right is not None and any("." in c for row in right for c in row):
                    assert mine <= {True}, (name, printed, right)


def test_the_heatmap_slip_is_named_for_reading_the_column():
    given = {"T": 2, "A": [[0.2, 0.8], [0.1, 0.9]], "token": 1}
    fp = mc.fingerprints(get_family("heatmap"), given)
    assert fp is not None
    (slip,) = fp.slips
    assert slip.name == "reads-column" and "column" in slip.misconception.description
    assert slip.values == {"top_key": 1}  # column 1 holds 0.2 and 0.1
    assert fp.correct == {"top_key": 2}
    assert "softmax-over-columns" not in get_family("heatmap").slips


def test_one_head_or_one_layer_is_worded_in_the_singular():
    from worksheetgen.families.cost import total_question

    assert total_question(4, 3) == "How many scores do all 4 heads of all 3 layers compute?"
    assert "1 heads" not in total_question(1, 3) and "one head" in total_question(1, 3)
    assert total_question(1, 1) == "How many scores does the one head of the one layer compute?"
    given = {"T": 1, "h": 1, "L": 1, "doubling": False, "causal_count": False}
    import jinja2

    text = " ".join(p.prompt for p in get_family("cost").solve(given, 2, "q").parts)
    for family in ("cost", "multihead"):
        text += jinja2.Template(get_family(family).prompt).render(d=8, d_v_given=False, **given)
    assert "1 heads" not in text and "1$ heads" not in text and "1$ layers" not in text
    assert "$h = 1$ head each" in text


def test_projections_draw_error_names_the_limit_only_for_what_is_asked(write_bank):
    import pytest

    from worksheetgen.errors import DrawError

    def error(flags: str) -> str:
        path = write_bank(
            "sheet: {id: t, title: T}\nquestions:\n  - id: p\n"
            "    family: projections\n    params: {x_low: 0, x_high: 0, "
            f"w_low: 0, w_high: 0{flags}}}\n"
        )
        spec = load_banks([path]).questions[0]
        with pytest.raises(DrawError) as exc:
            draw_variant(spec, SheetIdentity(0, "s"))
        return exc.value.message

    assert "24" not in error("")
    scaled = error(", scale: true")
    assert "at most 24" in scaled and "scale is asked" in scaled and "softmax" not in scaled


def test_at_zero_decimals_a_rounded_table_keeps_its_margin():
    # [0.80, 0.20] prints as [1, 0] at 0 decimals: rounded, not whole, so not exact
    a = (
        get_family("softmax")
        .solve({"T": 2, "S": [[2, 0], [0, 2]], "d_k": 2, "causal": False}, 0, "q")
        .answer("A")
    )
    assert a.rounded == [["1", "0"], ["0", "1"]] and a.tolerance == 1.0
    row = get_family("scaling").solve({"row": [3, 0, 2], "d_k": 4, "n": 3}, 0, "q").answer("scaled")
    assert row.rounded == ["2", "0", "1"] and row.tolerance == 0.5
