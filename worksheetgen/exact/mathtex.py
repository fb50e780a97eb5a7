"""Small LaTeX math builders shared by families and templates (math mode, both formats)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from worksheetgen.exact.masked import MASKED_TEXT, has_masked

# The one digit-grouping style of every printed document (sheet, key, grid, Markdown): a whole
# part of five digits or more in groups of three with thin spaces (2\,359\,296), four digits
# or fewer as they are (1024), the digits after the point never grouped. What a student
# copies from the page is read back by grade (thin, narrow or plain spaces between groups).
_LONG_WHOLE_RE = re.compile(r"^([+-]?)(\d{5,})((?:\.\d*)?)$")


def grouped(printed: Any) -> str:
    """A printed number as math in the documents' one digit-grouping style (see above);
    anything else (a fraction, a word) as it is."""
    s = str(printed)
    if len(s) < 5:
        return s
    m = _LONG_WHOLE_RE.match(s)
    if m is None:
        return s
    sign, whole, rest = m.groups()
    head = len(whole) % 3 or 3
    groups = [whole[:head]] + [whole[i : i + 3] for i in range(head, len(whole), 3)]
    return sign + r"\,".join(groups) + rest


def cell(x: Any) -> str:
    """One printed entry in math mode: "-inf" becomes −∞, a minus sign stays a minus, a
    long whole part is grouped (:func:`grouped`)."""
    s = str(x)
    if s in MASKED_TEXT:
        return r"-\infty"
    return grouped(s)


def _joined(sep: str, xs: Sequence[Any]) -> str:
    """Entries as math joined by ``sep``: a list of plain printed numbers in one step."""
    if isinstance(xs, list | tuple) and not has_masked(xs):
        try:
            joined = sep.join(xs)
        except TypeError:  # not all text
            pass
        else:
            if not any(len(x) > 4 for x in xs):
                return joined
    return sep.join(cell(x) for x in xs)


def bmatrix(rows: Sequence[Sequence[Any]]) -> str:
    """A bracketed matrix of printed entries."""
    body = r" \\ ".join(_joined(" & ", row) for row in rows)
    return r"\begin{bmatrix} " + body + r" \end{bmatrix}"


def vector(xs: Sequence[Any]) -> str:
    """A row vector in brackets."""
    return r"\left[" + _joined(",\\ ", xs) + r"\right]"


def shape(dims: Sequence[Any]) -> str:
    """A shape such as 4 × 4."""
    return r" \times ".join(str(d) for d in dims)


def value_math(printed: Any, kind: str, small: bool = False) -> str:
    """A printed answer of any kind as math: matrices in brackets (``small``: a
    ``smallmatrix``, for a line of a table), vectors, shapes, or the value itself."""
    if kind == "matrix":
        if small:
            return (
                r"\left[\begin{smallmatrix} "
                + r" \\ ".join(_joined(" & ", row) for row in printed)
                + r" \end{smallmatrix}\right]"
            )
        return bmatrix(printed)
    if kind == "vector":
        return vector(printed)
    if kind == "shape":
        return shape(printed)
    return cell(printed)


def sqrt_of(n: int) -> str:
    """√n as LaTeX."""
    return rf"\sqrt{{{n}}}"


def ints(rows: Sequence[Sequence[Any]]) -> list[list[str]]:
    """Printed entries of a given integer (or decimal) matrix."""
    out = []
    for row in rows:
        r = []
        for x in row:
            if isinstance(x, float) and x.is_integer():
                x = int(x)
            # a float as its shortest decimal, never in exponent form (1e-05 -> 0.00001)
            r.append(format(Decimal(repr(x)), "f") if isinstance(x, float) else str(x))
        out.append(r)
    return out


def decimals_of(printed: str) -> int:
    """How many digits follow the point in a printed number ("0.80" -> 2, "12" -> 0)."""
    point = printed.find(".")
    return 0 if point < 0 else len(printed.rstrip()) - point - 1


def decimals_in(printed: Any) -> int:
    """The most digits after the point in a printed answer: one number, a vector or a
    matrix of printed entries ("-inf" has none)."""
    rows = printed if isinstance(printed, list | tuple) else [printed]
    return max(
        (
            decimals_of(str(c))
            for row in rows
            for c in (row if isinstance(row, list | tuple) else [row])
        ),
        default=0,
    )
