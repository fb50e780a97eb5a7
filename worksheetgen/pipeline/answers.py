"""Separate answer sheets (``build --scannable --answer-sheet``): per sheet a question
booklet without boxes and a short answer sheet that holds every box the scanner reads.

The answer sheet (``templates/latex/answers.tex.j2``) lists each question of the sheet in
its printed order, one row per part: a multiple-choice part's option boxes (the letters the
booklet prints), or cells to copy the part's answer into (a table's cells, a number, a
shape; a written answer stays in the booklet) and the TA's score boxes. The boxes carry the
ids the full scannable sheet gives them (``N.l.v``), so ``scan`` reads an answer sheet's
page exactly as it reads a full sheet's; their pages carry page codes of their own
(``scan.positions.document_digest``), so a page of the same class's full sheets is never
taken for one of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from worksheetgen.exact.mathtex import decimals_of
from worksheetgen.model import Answer, Build, Item, Part, Sheet
from worksheetgen.pipeline.sheet import scan_context
from worksheetgen.render.documents import blank_width
from worksheetgen.scan.positions import LETTERS, is_choice, score_rows

#: the combined document of a class's answer sheets (answers.tex, .pdf), and the kind of
#: each student's own PDF (``students/<id>-answers.pdf``)
ANSWERS = "answers"
#: answer kinds the answer sheet has cells for; any other (a written answer, a drawing)
#: is answered in the booklet and only marked on the answer sheet
COPIED = ("matrix", "vector", "scalar", "shape")
OPTION_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: answer kinds copied into cells on the part's one line (a table takes lines of its own)
LINE_KINDS = ("scalar", "shape")


@dataclass(frozen=True)
class AnswerRow:
    """One part's row of an answer sheet: its letter, what the student does there
    (``options``: mark one of ``options``; ``copy``: copy ``answer`` into cells; ``booklet``:
    answered in the booklet) and the TA's score boxes ((index, printed points))."""

    letter: str
    kind: str
    answer: Answer | None = None
    part: Part | None = None
    options: tuple[str, ...] = ()
    scores: tuple[tuple[int, str], ...] = ()


def answer_rows(item: Item) -> list[AnswerRow]:
    """The rows of a question on the answer sheet, one per part, in the booklet's order."""
    scores = dict(score_rows(item))
    rows = []
    for i, part in enumerate(item.solution.parts[: len(LETTERS)]):
        letter = LETTERS[i]
        if is_choice(item, i):
            if item.solution.choices:  # a multiple-choice question: its options' labels
                options = tuple(c.label for c in item.solution.choices)
            else:  # a part to pick one of its options: lettered as the booklet prints them
                count = len(item.solution.answer(part.answer).options)
                options = tuple(OPTION_LETTERS[:count])
            rows.append(AnswerRow(letter, "options", options=options))
            continue
        answer = item.solution.answer(part.answer)
        kind = "copy" if answer.kind in COPIED else "booklet"
        rows.append(AnswerRow(letter, kind, answer, part, scores=tuple(scores.get(letter, ()))))
    return rows


def answer_lines(items: Sequence[Item]) -> list[tuple[Item, ...]]:
    """The questions in the order printed, two to a line where two in a row each take one
    line (one part: a choice, a number, a shape or a written answer's score boxes; the
    template sets them side by side where both fit in half the line), else one."""
    lines: list[tuple[Item, ...]] = []
    for item in items:
        last = lines[-1] if lines else ()
        if _single_choice(item) and len(last) == 1 and _single_choice(last[0]):
            lines[-1] = (last[0], item)
        else:
            lines.append((item,))
    return lines


def _single_choice(item: Item) -> bool:
    """True for a question of one part that takes one line: a choice, a written answer
    (its score boxes) or a number or shape to copy."""
    rows = answer_rows(item)
    if len(rows) != 1:
        return False
    row = rows[0]
    return row.kind != "copy" or (row.answer is not None and row.answer.kind in LINE_KINDS)


def answer_cell_width(answer: Answer) -> str:
    """The width of a table's cell on the answer sheet, for the digits the key prints: 1.15
    cm at up to 2 decimals (a final answer copied, not worked in: "-0.42" in a hand's 2.3 mm
    figures), 0.25 cm more for each further digit; never wider than the booklet's own cells.
    Three tables of three such columns, their rows labelled, go side by side on a line."""
    booklet = float(blank_width(answer)[:-2])
    rows = answer.rounded if answer.kind == "matrix" else [answer.rounded]
    decimals = max((decimals_of(str(c)) for c in rows[0]), default=0)
    return f"{min(booklet, round(1.15 + 0.25 * max(0, decimals - 2), 2)):g}cm"


def answers_context(build: Build, sheets: Sequence[Sheet], first: int = 0) -> dict[str, Any]:
    """What the answer sheet's template sees besides a document's context: the page code's
    cells (of the answer sheets' build code), each question's rows."""
    return {
        **scan_context(build, sheets, first, answers=True),
        "answer_rows": answer_rows,
        "answer_lines": answer_lines,
        "answer_cell_width": answer_cell_width,
    }
