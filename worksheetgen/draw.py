"""Draw: one generator per (seed, sheet, question) gives each question's parameters."""

from __future__ import annotations

from typing import Any

from worksheetgen.families import get_family
from worksheetgen.models import QuestionSpec
from worksheetgen.rng import generator


def draw_given(spec: QuestionSpec, seed: int, sheet_id: str) -> dict[str, Any]:
    """The given values of ``spec`` on sheet ``sheet_id``: they depend on nothing else."""
    rng = generator(seed, sheet_id, spec.id)
    return get_family(spec.family).draw(spec.params, rng)
