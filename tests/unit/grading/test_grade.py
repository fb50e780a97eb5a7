"""Grading responses against a real key.json: scores, partial and carried-forward credit,
the slip behind each wrong answer, and clear errors for bad response files.

The key comes from the pipeline (banks/practice.yaml pins the note's numbers); every value a
student "writes" below is typed from the note or computed by hand, never read from the key.

A behaviour across modules, not one module's tests (errors, families, grading.key,
keyjson.read).
"""

from __future__ import annotations

import pytest

from worksheetgen.errors import KeyFileError
from worksheetgen.grading.key import load_key


def test_grade_rejects_a_key_that_is_not_json(tmp_path):
    bad = tmp_path / "key.json"
    bad.write_text('{"sheets": [\n  oops\n]}', encoding="utf-8")
    with pytest.raises(KeyFileError, match=r"key\.json:2: expected JSON"):
        load_key(bad)


def test_every_familys_carried_steps_are_steps_the_grader_knows():
    from worksheetgen.families import FAMILIES
    from worksheetgen.keyjson.read import CARRY_STEPS

    for name, cls in FAMILIES.items():
        for c in cls.carries:
            assert set(c.steps) <= set(CARRY_STEPS), (name, c)
            assert c.inputs and c.answer not in c.inputs, (name, c)
