"""The HTML documents' tables, built in one pass each: a table's cells are many (a class
renders thousands), so they are joined here rather than drawn by a template macro per cell.
Every text is escaped once; every fixed word comes from ``htmlwords``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

from worksheetgen.language import decimal_text, table_label
from worksheetgen.render.htmlmath import cell_text, escape
from worksheetgen.render.htmlwords import words


def _head(cols: int, col_label: str) -> str:
    heads = "".join(
        f'<th scope="col">{escape(words("col_header", label=col_label, j=j))}</th>'
        for j in range(1, cols + 1)
    )
    return f"<thead><tr><td></td>{heads}</tr></thead>"


def _row_head(row_label: str, i: int) -> str:
    if not row_label:
        return "<td></td>"
    return f'<th scope="row">{escape(words("row_header", label=row_label, i=i))}</th>'


def _region(number: int, letter: str, table: str) -> Markup:
    name = escape(words("scroll_region", number=number, letter=letter))
    return Markup(
        f'<div class="scroll" role="region" tabindex="0" aria-label="{name}">\n{table}\n</div>'
    )


def input_table(
    number: int, letter: str, answer: str, rows: Sequence[Sequence[Any]], part: Any
) -> Markup:
    """The cells to fill for one part: an input per entry, named by its row and column."""
    key = f"q{number}{letter}"
    row_label, col_label = table_label(part.row_label), table_label(part.col_label)
    body = []
    for i, row in enumerate(rows, start=1):
        cells = []
        for j in range(1, len(row) + 1):
            if row_label:
                label = words(
                    "cell", number=number, letter=letter, row=row_label, i=i, col=col_label, j=j
                )
            else:
                label = words("cell_no_row", number=number, letter=letter, col=col_label, j=j)
            entry = f"{key}-{i}-{j}"
            cells.append(
                f'<td><input type="text" class="cell" inputmode="decimal" autocomplete="off" '
                f'spellcheck="false" name="{entry}" data-entry="{entry}" data-q="{number}" '
                f'data-answer="{escape(answer)}" data-r="{i}" data-c="{j}" '
                f'aria-label="{escape(label)}"></td>'
            )
        body.append(f"<tr>{_row_head(row_label, i)}{''.join(cells)}</tr>")
    caption = escape(words("table_caption", letter=letter))
    table = (
        f'<table class="answer">\n<caption>{caption}</caption>\n{_head(len(rows[0]), col_label)}'
        f"\n<tbody>\n" + "\n".join(body) + "\n</tbody>\n</table>"
    )
    return _region(number, letter, table)


def value_table(number: int, letter: str, rows: Sequence[Sequence[Any]], part: Any) -> Markup:
    """A table answer as the key shows it: its printed values under header cells (with the
    build's decimal separator)."""
    body = "\n".join(
        f"<tr>{_row_head(table_label(part.row_label), i)}"
        + "".join(f"<td>{escape(decimal_text(cell_text(c)))}</td>" for c in row)
        + "</tr>"
        for i, row in enumerate(rows, start=1)
    )
    caption = escape(words("key_table_caption", letter=letter))
    table = (
        f'<table class="answer">\n<caption>{caption}</caption>\n'
        f"{_head(len(rows[0]), table_label(part.col_label))}\n<tbody>\n{body}\n</tbody>\n</table>"
    )
    return _region(number, letter, table)
