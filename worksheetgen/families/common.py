"""Small helpers the note families share: parameter look-ups, bound checks, worked-step text."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from worksheetgen.exact import number as ex
from worksheetgen.exact.number import Matrix
from worksheetgen.model import Choices, IntRange, ParamValue, Pinned


def param_values(p: ParamValue) -> list[Any]:
    """Every value a parameter can take (a pinned value, its choices, or its range)."""
    if isinstance(p, Pinned):
        return [p.value]
    if isinstance(p, Choices):
        return list(p.values)
    if isinstance(p, IntRange):
        return list(range(p.lo, p.hi + 1))
    raise TypeError(f"not a parameter value: {p!r}")


def computed(table: Matrix | None, name: str = "table") -> Matrix:
    """A table of an attention trace that this variant's calculation has (the scores, the
    masked scores or the output, which ``attend`` leaves None where a variant skips them)."""
    if table is None:
        raise ValueError(f"the trace has no {name} for this variant")
    return table


def pinned(params: dict[str, ParamValue], name: str) -> Any:
    """The pinned value of ``name``, or None when it is drawn or absent (a pinned matrix:
    its tuple of rows, which ``MatrixParam`` always pins)."""
    p = params.get(name)
    return p.value if isinstance(p, Pinned) else None


def range_pairs(names: Iterable[str]) -> list[tuple[str, str]]:
    """The low/high pairs among parameter names: ``low``/``high`` and every
    ``<prefix>low``/``<prefix>high`` (``v_low``/``v_high``, ``x_low``/``x_high``)."""
    known = list(names)
    return [
        (n, n[: -len("low")] + "high")
        for n in known
        if n.endswith("low") and n[: -len("low")] + "high" in known
    ]


def order_problems(
    params: dict[str, ParamValue], pairs: Iterable[tuple[str, str]], written: Iterable[str] = ()
) -> list[tuple[str, str]]:
    """(field, message) for every low/high pair given the wrong way round: some value the
    low may take is above some value the high may take (``low: 3, high: 1``, or
    ``low: {choices: [0, 3]}, high: 2``). The field blamed is the high when the bank wrote
    it (in ``written``), else the low."""
    seen = set(written)
    out = []
    for low, high in pairs:
        if low not in params or high not in params:
            continue
        lo, hi = max_of(params[low]), min(param_values(params[high]))
        if lo <= hi:
            continue
        if high in seen or low not in seen:
            out.append((high, f"expected {high} >= {low} ({lo}), got {_range_text(params[high])}"))
        else:
            out.append((low, f"expected {low} <= {high} ({hi}), got {_range_text(params[low])}"))
    return out


def _range_text(p: ParamValue) -> str:
    values = param_values(p)
    return str(values[0]) if len(values) == 1 else f"values from {min(values)} to {max(values)}"


def equal_score_rows(scores: Sequence[Sequence[Any]], causal: bool) -> list[int]:
    """The rows of a drawn score table whose live scores (two or more; under a causal mask
    row i sees keys 0..i) are all equal: their softmax is exactly uniform, 1/n each, and
    tells the student nothing about which key matters. A family that draws its scores
    redraws such a table (``Redraw``); a pinned one is the bank's choice."""
    out = []
    for i, row in enumerate(scores):
        live = list(row[: i + 1]) if causal else list(row)
        if len(live) >= 2 and max(live) == min(live):
            out.append(i)
    return out


def int_scores(q: Sequence[Sequence[int]], k: Sequence[Sequence[int]]) -> list[list[int]]:
    """The scores QKᵀ of integer queries and keys (lists of rows), as Python ints."""
    return [[sum(a * b for a, b in zip(qr, kr, strict=True)) for kr in k] for qr in q]


def max_of(p: ParamValue) -> int:
    """The largest value a numeric parameter can take."""
    return max(param_values(p))


def factor(x: Any) -> str:
    """A number as a factor in a written product: negatives in parentheses."""
    s = str(x)
    return f"({s})" if s.startswith("-") else s


def dot_text(row: Sequence[Any], col: Sequence[Any]) -> str:
    """A written dot product of integer vectors with its value (LaTeX): 1 . 2 + 0 . 1 = 2."""
    terms = " + ".join(f"{factor(a)}\\cdot {factor(b)}" for a, b in zip(row, col, strict=True))
    total = sum(a * b for a, b in zip(row, col, strict=True))
    return f"{terms} = {total}"


def int_product(a: Sequence[Sequence[int]], b: Sequence[Sequence[int]]) -> Matrix:
    """The exact product of two integer matrices (lists of rows)."""
    return ex.matmul(ex.from_ints(a), ex.from_ints(b))


def ints_of(m: Matrix) -> list[list[int]]:
    """An exact whole-number matrix as Python ints (for the next product)."""
    return [[ex.as_int(x) for x in row] for row in m]


def shape_dims(
    params: dict[str, ParamValue], layout: Sequence[tuple[str, str, str]]
) -> tuple[dict[str, tuple[int, str]], list[tuple[str, str]]]:
    """The dimensions that pinned matrices fix, and the conflicts among them.

    ``layout`` lists (matrix, dim of its rows, dim of its columns), e.g. ("X", "T", "d").
    Returns {dim: (size, matrix that fixed it)} and (field, message) problems.
    """
    dims: dict[str, tuple[int, str]] = {}
    problems: list[tuple[str, str]] = []
    for name, row_dim, col_dim in layout:
        m = pinned(params, name)
        if m is None:
            continue
        for dim, size, what in ((row_dim, len(m), "rows"), (col_dim, len(m[0]), "columns")):
            if dim in dims and dims[dim][0] != size:
                want, src = dims[dim]
                problems.append(
                    (
                        name,
                        f"expected {name} with {want} {what} ({dim} = {want} "
                        f"from {src}), got {size}",
                    )
                )
            else:
                dims.setdefault(dim, (size, name))
    return dims, problems


def explicit_dim_problems(
    raw_keys: Iterable[str], params: dict[str, ParamValue], dims: dict[str, tuple[int, str]]
) -> list[tuple[str, str]]:
    """A dimension set in the bank must agree with the pinned matrix that also fixes it."""
    out = []
    for dim in raw_keys:
        if dim in dims and dim in params:
            size, src = dims[dim]
            if param_values(params[dim]) != [size]:
                out.append(
                    (
                        dim,
                        f"expected {dim} = {size} (the shape of the pinned {src}) "
                        f"or no {dim}, got {', '.join(map(str, param_values(params[dim])))}",
                    )
                )
    return out


def text_label(words: str) -> str:
    """An answer's label in words, in math mode (``\\text{masked scores}``): ``words`` as the
    language being rendered says them (``pgettext("answer label", ...)`` where it is made)."""
    return rf"\text{{{words}}}"
