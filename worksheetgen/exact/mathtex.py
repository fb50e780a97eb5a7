"""Small LaTeX math builders shared by families and templates (math mode, both formats)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from worksheetgen.exact.masked import MASKED_TEXT, has_masked


def cell(x: Any) -> str:
    """One printed entry in math mode: "-inf" becomes −∞, a minus sign stays a minus."""
    s = str(x)
    if s in MASKED_TEXT:
        return r"-\infty"
    return s


def _joined(sep: str, xs: Sequence[Any]) -> str:
    """Entries as math joined by ``sep``: a list of plain printed numbers in one step."""
    if isinstance(xs, list | tuple) and not has_masked(xs):
        try:
            return sep.join(xs)
        except TypeError:  # not all text
            pass
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
    return str(printed)


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
