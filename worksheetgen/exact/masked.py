"""A masked cell (the −∞ the causal mask writes): how it is written, printed and typed.

The one home of its spellings: the key and key.json write :data:`MASKED`; a printed table
may hold :data:`MASKED_TEXT` (ours, or SymPy's ``-oo``); a student may type any of
:data:`MASKED_SPELLINGS`, compared without regard to case.
"""

from __future__ import annotations

from collections.abc import Collection

#: a masked cell as the key, key.json and every printed table write it
MASKED = "-inf"
#: a masked cell as printed text: ours, and SymPy's spelling of −∞
MASKED_TEXT = (MASKED, "-oo")
#: what a student may type for a masked cell (compared casefolded)
MASKED_SPELLINGS = (MASKED, "−inf", "-∞", "−∞", "masked", "-infinity", "−infinity")


def is_masked_text(cell: object) -> bool:
    """True when a printed entry is a masked cell."""
    return str(cell) in MASKED_TEXT


def has_masked(cells: Collection[object]) -> bool:
    """True when a row of printed entries holds a masked cell."""
    return MASKED in cells or "-oo" in cells
