"""A made-up class's responses for a key: some right, some a named slip, some wrong, some
blank, each student with an ability of their own, the same for the same ``seed``.

``class_csv(key, seed)`` gives the CSV text (our responses format, by student id) and what
each student wrote, so tests can check a feedback page shows its own student's answers only.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from worksheetgen.grading.key import GradedAnswer, GradeKey, QuestionKey

HEADER = "student,question,answer,entry,value\n"


def _cells(ans: GradedAnswer, value: object) -> list[tuple[str, str]]:
    if ans.kind == "matrix":
        assert isinstance(value, Sequence)
        return [
            (f'"{r},{c}"', str(x))
            for r, row in enumerate(value, 1)
            for c, x in enumerate(row, 1)  # type: ignore[arg-type]
        ]
    if ans.kind in ("vector", "shape"):
        assert isinstance(value, Sequence)
        return [(str(c), str(x)) for c, x in enumerate(value, 1)]
    return [("", str(value))]


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text


def _answer(rng: random.Random, q: QuestionKey, ans: GradedAnswer, ability: float) -> object:
    """What a student of ``ability`` writes for ``ans``: right, a slip's, wrong or None."""
    roll = rng.random()
    slips = [s for s in q.slips if ans.name in s.answers]
    if roll < ability:
        return ans.rounded if ans.kind != "choice" else ans.text
    if roll < ability + (1 - ability) * 0.6 and slips:
        return rng.choice(slips).answers[ans.name]
    if roll < 0.97:
        if ans.kind == "choice":
            return next((o for o in ans.options if o != ans.text), ans.text)
        if ans.kind == "text":
            return "I am not sure"
        value = ans.rounded
        if isinstance(value, list) and value and isinstance(value[0], list):
            out = [list(row) for row in value]
            r, c = rng.randrange(len(out)), rng.randrange(len(out[0]))
            out[r][c] = "9.99"
            return out
        if isinstance(value, list):
            return ["7"] * len(value)
        return "12345"
    return None


def class_csv(key: GradeKey, seed: int = 1) -> tuple[str, dict[str, list[str]]]:
    """The responses CSV of the whole class, and each student's written values."""
    rng = random.Random(seed)
    lines = [HEADER]
    wrote: dict[str, list[str]] = {}
    for i, sheet in enumerate(key.sheets):
        ability = 0.15 + 0.8 * ((i * 37) % len(key.sheets)) / max(1, len(key.sheets) - 1)
        mine = wrote.setdefault(sheet.id, [])
        for q in sheet.questions:
            for ans in q.answers:
                value = _answer(rng, q, ans, ability)
                if value is None:
                    continue
                for entry, text in _cells(ans, value):
                    mine.append(text)
                    row = [sheet.id, q.id, ans.name, entry, _quote(text)]
                    lines.append(",".join(row) + "\n")
    return "".join(lines), wrote
