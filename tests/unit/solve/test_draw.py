"""One redraw policy in the draw stage: a family states that a draw cannot make a question
(``Redraw``) and the draw stage draws again from the same generator."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest

from worksheetgen.errors import DrawError
from worksheetgen.families.base import Family, Redraw
from worksheetgen.model import ParamValue
from worksheetgen.solve.draw import draw_given_values


class Sevens(Family):
    """Draws a digit and refuses every digit but 7; counts its tries."""

    name = "sevens"
    title = "Sevens"
    answers: ClassVar[tuple[str, ...]] = ("digit",)
    redraws: ClassVar[int] = 500

    def __init__(self) -> None:
        self.tries = 0

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        self.tries += 1
        digit = int(rng.integers(10))
        if digit != 7:
            raise Redraw("could not draw a seven")
        return {"digit": digit, "after": int(rng.integers(1000))}


class Never(Sevens):
    redraws: ClassVar[int] = 12

    def draw(self, params: dict[str, ParamValue], rng: np.random.Generator) -> dict[str, Any]:
        self.tries += 1
        raise Redraw("could not draw a seven in 12 tries")


def test_a_refused_draw_is_drawn_again_from_the_same_generator() -> None:
    family = Sevens()
    given = draw_given_values(family, {}, np.random.default_rng(5))
    # the same stream, read by hand: digits until the first 7, then the value after it
    rng = np.random.default_rng(5)
    digits = []
    while not digits or digits[-1] != 7:
        digits.append(int(rng.integers(10)))
    assert len(digits) > 1  # this seed refuses at least once
    assert given == {"digit": 7, "after": int(rng.integers(1000))}
    assert family.tries == len(digits)


def test_a_draw_refused_every_time_is_a_draw_error_with_the_familys_message() -> None:
    family = Never()
    with pytest.raises(DrawError, match="could not draw a seven in 12 tries"):
        draw_given_values(family, {}, np.random.default_rng(0))
    assert family.tries == 12
