"""The one front door for family authors: everything a question family needs, in ``__all__``.

A family (one kind of question) is a subclass of :class:`Family` in a package of its own,
named under the ``worksheetgen.families`` entry-point group of that package's
``pyproject.toml`` (``examples/worksheetgen-dot-product`` is one, and imports only from
here). As pytest exposes ``pytest`` over ``_pytest``, this module is the public surface for
families; the modules it draws from (``worksheetgen.families.base``, ``worksheetgen.model``,
``worksheetgen.exact``, ``worksheetgen.attention``, ``worksheetgen.errors``) are
worksheetgen's internals and may change between releases.

What is here, in the order a family uses it (``Family``'s docstrings say each hook's
contract and default):

- **declare**: :class:`Family`, the parameter declarations :class:`IntParam`,
  :class:`BoolParam`, :class:`MatrixParam`, :class:`OptionParam` with their values
  :class:`Pinned`, :class:`IntRange`, :class:`Choices` (:data:`ParamValue`), and the
  display kinds (:data:`DisplayKind`, listed in :data:`DISPLAY_KINDS`);
- **draw**: :func:`pick`, :func:`int_matrix`, :func:`as_rows`, :class:`Redraw`,
  :func:`redrawn`, :class:`DrawError`;
- **solve**: :class:`Solution` of :class:`Shown`, :class:`Part`, :class:`Answer` and
  :class:`Step`; the answers made exact with :mod:`exact` (``exact.integer(3)``,
  ``exact.div(a, b)``, ``exact.sqrt_int(2)``: an :class:`Ex`; a :data:`Matrix` is a list of
  rows of them) by :func:`integer_answer`, :func:`scalar_answer`, :func:`vector_answer`,
  :func:`matrix_answer`, :func:`int_matrix_answer`, :func:`shape_answer`,
  :func:`text_answer` and :func:`choice_answer`; LaTeX for steps with :func:`sqrt_of` and
  :func:`bmatrix`; :func:`cross_check` against NumPy floats, :class:`SolveError`;
- **slips**: the :class:`Recipe` of the attention calculation (:data:`CORRECT`, one switch
  flipped per slip), :func:`attend` (exact) and :func:`attend_float`, and
  :data:`SLIP_NAMES`, the names a family's ``slips`` may list;
- **carried-forward credit**: :class:`Carry`.

A family's declarations are checked when its class is defined (a typo in an answer name or
a display kind fails at import, on one line naming the family): see ``Family.answers``.

May import: families, attention, exact, model, errors (it re-exports, it adds nothing).
"""

from __future__ import annotations

from worksheetgen.attention.compute import CORRECT, Recipe, attend, attend_float
from worksheetgen.attention.slips import NAMES as SLIP_NAMES
from worksheetgen.errors import DrawError, SolveError
from worksheetgen.exact import number as exact
from worksheetgen.exact.answers import (
    choice_answer,
    int_matrix_answer,
    integer_answer,
    matrix_answer,
    scalar_answer,
    shape_answer,
    text_answer,
    vector_answer,
)
from worksheetgen.exact.mathtex import bmatrix, sqrt_of
from worksheetgen.exact.number import Ex, Matrix
from worksheetgen.families.base import (
    BoolParam,
    Carry,
    Family,
    IntParam,
    MatrixParam,
    OptionParam,
    Param,
    Redraw,
    as_rows,
    cross_check,
    int_matrix,
    pick,
    redrawn,
)
from worksheetgen.model import (
    DISPLAY_KINDS,
    Answer,
    AnswerKind,
    Choices,
    DisplayKind,
    IntRange,
    ParamValue,
    Part,
    Pinned,
    Shown,
    Solution,
    Step,
)

__all__ = [
    "CORRECT",
    "DISPLAY_KINDS",
    "SLIP_NAMES",
    "Answer",
    "AnswerKind",
    "BoolParam",
    "Carry",
    "Choices",
    "DisplayKind",
    "DrawError",
    "Ex",
    "Family",
    "IntParam",
    "IntRange",
    "Matrix",
    "MatrixParam",
    "OptionParam",
    "Param",
    "ParamValue",
    "Part",
    "Pinned",
    "Recipe",
    "Redraw",
    "Shown",
    "Solution",
    "SolveError",
    "Step",
    "as_rows",
    "attend",
    "attend_float",
    "bmatrix",
    "choice_answer",
    "cross_check",
    "exact",
    "int_matrix",
    "int_matrix_answer",
    "integer_answer",
    "matrix_answer",
    "pick",
    "redrawn",
    "scalar_answer",
    "shape_answer",
    "sqrt_of",
    "text_answer",
    "vector_answer",
]
