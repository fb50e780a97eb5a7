"""The kinds of answer a part may have, grouped by how their entries are read.

The one definition of which kinds hold numbers (``model.AnswerKind`` names them all): a
reader, a grader, a key or an export asks these tuples, never its own list.
"""

from __future__ import annotations

from worksheetgen.model import AnswerKind

#: the kinds of answer whose entries are numbers read within a tolerance
TOLERANT_KINDS: tuple[AnswerKind, ...] = ("matrix", "vector", "scalar")
#: the kinds of answer made of numbers (a shape's are whole numbers, read exactly)
NUMERIC_KINDS: tuple[AnswerKind, ...] = (*TOLERANT_KINDS, "shape")
#: every kind key.json may hold for a part: the numeric ones, then choice and text
PART_KINDS: tuple[AnswerKind, ...] = (*NUMERIC_KINDS, "choice", "text")
