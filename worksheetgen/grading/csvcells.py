"""Spreadsheet-safe CSV text cells: one rule for every CSV worksheetgen writes, and its inverse
for every CSV it reads back.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and, in some, a tab or
a carriage return) as a formula, so a student id such as ``=1+1`` or ``@SUM(1)`` written as it
is would be computed, or worse, when a TA opens the file. Every text cell taken from user
data (ids, names, question and answer names) is written through ``protect``, which puts a
``'`` in front of such a cell (and of a cell that already starts with ``'``, so the rule can
be undone); ``unprotect`` undoes exactly that when a filled-in file is read back, so
``'=1+1`` is the id ``=1+1`` again. Numbers are never text cells: ``-0.5`` stays a number.
"""

from __future__ import annotations

#: first characters a spreadsheet may take as the start of a formula
FORMULA_START = frozenset("=+-@\t\r")
_QUOTE = "'"


def protect(value: str) -> str:
    """A text cell a spreadsheet shows as text, never runs as a formula."""
    first = value[:1]
    return _QUOTE + value if first in FORMULA_START or first == _QUOTE else value


def unprotect(value: str) -> str:
    """The text ``protect`` was given, from the cell it wrote (other cells unchanged)."""
    if (
        value[:1] == _QUOTE
        and value[1:2] != ""
        and (value[1] in FORMULA_START or value[1] == _QUOTE)
    ):
        return value[1:]
    return value
