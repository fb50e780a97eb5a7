"""Per-part points (issue 17, item 5): the bank's spelling, what the sheet and key print,
key.json's ``part_points``, grading with them, and the LMS exports' weights, parsed back.

The bank is tests/banks/part_points.yaml: softmax (a) 2 by letter, (b) 4 by answer name;
heads with a total of 5, (c) 3 and the other two sharing 2; identical-keys with a total of
7, a written part of 1.5; and a plain ``points: 3`` that keeps today's meaning.

A behaviour across modules, not one module's tests (bank.load, errors, model, solve.item).
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import FIXTURES, ROOT
from worksheetgen.model import SheetIdentity

BANK = FIXTURES / "part_points.yaml"


def test_the_bank_guides_points_per_part_example_loads_with_the_points_it_says(tmp_path):
    from worksheetgen.bank.load import load_banks

    guide = (ROOT / "docs" / "guide" / "banks.md").read_text(encoding="utf-8")
    section = guide[guide.index("## Points per part") :]
    (yaml_text,) = re.findall(r"^```yml\n(.*?)^```$", section, re.M | re.S)[:1]
    path = tmp_path / "example.yaml"
    path.write_text(yaml_text, encoding="utf-8")
    soft, heads = load_banks([path]).questions
    assert (soft.points, soft.part_points) == (6, (("scaled", 2), ("A", 4)))
    assert (heads.points, heads.part_points) == (
        5,
        (("d_k", 1), ("concat_width", 1), ("W_O_shape", 3)),
    )


def test_a_draw_whose_parts_are_not_the_ones_given_points_is_the_banks_error():
    """The guard behind the load-time check: points for parts a draw does not ask refuse the
    build with the question's file and line, rather than print points beside other parts."""
    from dataclasses import replace

    from worksheetgen.bank.load import load_banks
    from worksheetgen.errors import BankError
    from worksheetgen.solve.item import make_item

    soft = load_banks([BANK]).questions[0]
    assert make_item(soft, SheetIdentity(1, "s"), 1).spec.part_points == (("scaled", 2), ("A", 4))
    wrong = replace(soft, part_points=(("scaled", 2), ("masked", 4)))
    with pytest.raises(BankError) as err:
        make_item(wrong, SheetIdentity(1, "s"), 1)
    assert err.value.field == "questions[soft].points"
    assert err.value.line == soft.location.line
    assert "this draw asks scaled, A, not the parts given points (scaled, masked)" in str(err.value)
