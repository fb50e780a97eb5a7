"""The answers of a key.json question, checked: each answer by its kind, a numeric one split
into the cells a student writes (with the slips that show in each), a multiple-choice item's
choices, and the distractors the cells' slips come from.

May import: the records of ``keyjson.records``, ``keyjson.fields``, exact and the shared modules.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from worksheetgen.errors import WorksheetgenError
from worksheetgen.exact.kinds import NUMERIC_KINDS
from worksheetgen.exact.rounding import SLACK
from worksheetgen.keyjson.fields import FieldReader, kind_of
from worksheetgen.keyjson.records import KINDS, Cell, Choice, Distractor, KeyAnswer, Slip
from worksheetgen.keyjson.views import is_finite_number, is_masked_text, number_text


def read_distractor(r: FieldReader, raw: Any, w: str) -> Distractor:
    d = r.obj(raw, w)
    return Distractor(
        misconception=r.text(r.get(d, "misconception", w), f"{w}.misconception", empty=False),
        description=r.text(d.get("description") or "", f"{w}.description"),
        answer=r.obj(d.get("answer", {}), f"{w}.answer"),
        rounded=r.obj(d.get("rounded", {}), f"{w}.rounded"),
    )


def read_choices(
    r: FieldReader, raw: Any, w: str, descriptions: Mapping[str, str]
) -> tuple[Choice, ...]:
    items = r.lst(raw, w)
    if len(items) < 2:
        raise r.fail(w, f"expected at least 2 choices, got {len(items)}")
    out = []
    for i, raw_c in enumerate(items):
        cw = f"{w}[{i}]"
        c = r.obj(raw_c, cw)
        correct = r.get(c, "correct", cw)
        if not isinstance(correct, bool):
            raise r.fail(f"{cw}.correct", f"expected true or false, got {kind_of(correct)}")
        slip = c.get("misconception")
        if slip is not None:
            slip = r.text(slip, f"{cw}.misconception", empty=False)
        if correct and slip is not None:
            raise r.fail(
                f"{cw}.misconception", f"expected null for the correct choice, got {slip!r}"
            )
        out.append(
            Choice(
                label=r.text(c.get("label") or chr(ord("A") + i), f"{cw}.label"),
                text=r.text(r.get(c, "text", cw), f"{cw}.text", empty=False),
                correct=correct,
                misconception=slip,
                description=descriptions.get(slip or "", ""),
                rounded=c.get("rounded"),
            )
        )
    n_correct = sum(c.correct for c in out)
    if n_correct != 1:
        raise r.fail(w, f"expected exactly one correct choice, got {n_correct}")
    return tuple(out)


def read_answer(
    r: FieldReader,
    w: str,
    name: str,
    answers: Mapping[str, Any],
    rounded: Mapping[str, Any],
    kinds: Mapping[str, Any],
    tolerances: Mapping[str, Any],
    exacts: Mapping[str, Any],
    options: Mapping[str, Any],
    labels: Mapping[str, Any],
    explanations: Mapping[str, Any],
    distractors: Sequence[Distractor],
    row_label: str,
    col_label: str,
    *,
    all_or_nothing: bool = False,
) -> KeyAnswer:
    kind = kinds.get(name)
    if kind not in KINDS:
        raise r.fail(
            f"{w}.kinds.{name}", f"expected one of {', '.join(KINDS)}, got {kind_of(kind)}"
        )
    if name not in rounded:
        raise r.fail(f"{w}.rounded.{name}", "expected the printed answer, got nothing (missing)")
    value, printed = answers[name], rounded[name]
    label = r.text(labels.get(name) or name, f"{w}.labels.{name}")
    explanation = r.text(explanations.get(name) or "", f"{w}.explanations.{name}")
    opts: tuple[str, ...] = ()
    tol: float | None = None
    rows: tuple[tuple[Cell, ...], ...] = ()
    if kind in NUMERIC_KINDS:
        if name not in tolerances:
            raise r.fail(
                f"{w}.tolerance.{name}",
                "expected the tolerance of a numeric answer "
                "(half a unit of its last printed digit, or wider), got nothing",
            )
        tol = r.num(tolerances[name], f"{w}.tolerance.{name}")
        if tol < 0:
            raise r.fail(f"{w}.tolerance.{name}", f"expected a number >= 0, got {tol:g}")
        rows = _cells(
            r,
            w,
            name,
            kind,
            value,
            printed,
            exacts.get(name),
            tol,
            distractors,
            row_label,
            col_label,
        )
    elif kind == "choice":
        opts = tuple(
            r.text(o, f"{w}.options.{name}[{i}]", empty=False)
            for i, o in enumerate(r.lst(options.get(name, []), f"{w}.options.{name}"))
        )
        if len(opts) < 2:
            raise r.fail(f"{w}.options.{name}", f"expected at least 2 options, got {len(opts)}")
        if isinstance(value, list):  # mark all that apply: the right options, as printed
            _right_set(r, f"{w}.answer.{name}", value, opts)
            if printed != value:
                raise r.fail(
                    f"{w}.rounded.{name}", "expected the same list of options as the answer"
                )
        elif value not in opts:
            raise r.fail(f"{w}.answer.{name}", f"expected one of the options, got {kind_of(value)}")
        if all_or_nothing and not isinstance(value, list):
            raise r.fail(
                f"{w}.all_or_nothing",
                f"expected only answers with several right options, got {name!r} (one right)",
            )
    else:
        r.text(value, f"{w}.answer.{name}", empty=False)
    return KeyAnswer(
        name=name,
        label=label,
        kind=kind,
        value=value,
        rounded=printed,
        tolerance=tol,
        options=opts,
        explanation=explanation,
        rows=rows,
        all_or_nothing=all_or_nothing,
    )


def _right_set(r: FieldReader, w: str, value: list[Any], opts: tuple[str, ...]) -> None:
    """A mark-all answer's right options: at least one, each an option once, in the order
    printed, and at least one option left wrong."""
    if not value:
        raise r.fail(w, "expected at least one right option, got an empty list")
    for i, v in enumerate(value):
        if v not in opts:
            raise r.fail(f"{w}[{i}]", f"expected one of the options, got {kind_of(v)}")
    if len(set(value)) != len(value):
        raise r.fail(w, "expected each right option once, got one twice")
    if sorted(value, key=opts.index) != value:
        raise r.fail(w, "expected the right options in the order printed")
    if len(value) == len(opts):
        raise r.fail(w, f"expected at least one wrong option, got all {len(opts)} right")


def read_grid(r: FieldReader, x: Any, kind: str, where: str) -> list[list[Any]]:
    """A numeric answer's entries as rows (a vector or shape is one row, a scalar 1x1)."""
    if kind == "scalar":
        return [[x]]
    if kind in ("vector", "shape"):
        return [r.lst(x, where)]
    rows = r.lst(x, where)
    if not rows:
        raise r.fail(where, "expected at least one row, got an empty list")
    out = [r.lst(row, f"{where}[{i}]") for i, row in enumerate(rows)]
    width = len(out[0])
    for i, row in enumerate(out):
        if len(row) != width or not row:
            raise r.fail(f"{where}[{i}]", f"expected {width} entries like row 0, got {len(row)}")
    return out


def _entry(r: FieldReader, x: Any, where: str, kind: str) -> float | None:
    if is_masked_text(x):
        if kind not in ("matrix", "vector"):
            raise r.fail(
                where,
                "expected a number (only matrix and vector entries can be masked), "
                f"got {kind_of(x)}",
            )
        return None
    return r.num(x, where)


def _cells(
    r: FieldReader,
    w: str,
    name: str,
    kind: str,
    value: Any,
    printed: Any,
    exact: Any,
    tol: float,
    distractors: Sequence[Distractor],
    row_label: str,
    col_label: str,
) -> tuple[tuple[Cell, ...], ...]:
    vals = read_grid(r, value, kind, f"{w}.answer.{name}")
    prints = read_grid(r, printed, kind, f"{w}.rounded.{name}")
    if [len(x) for x in prints] != [len(x) for x in vals]:
        raise r.fail(
            f"{w}.rounded.{name}",
            "expected the same shape as the answer "
            f"({len(vals)}x{len(vals[0])}), got {len(prints)}x{len(prints[0])}",
        )
    exact_grid: list[list[Any]] | None = None
    if exact is not None:
        try:
            exact_grid = read_grid(r, exact, kind, f"{w}.exact.{name}")
        except WorksheetgenError:
            exact_grid = None
        if exact_grid is not None and [len(x) for x in exact_grid] != [len(x) for x in vals]:
            exact_grid = None
    slip_grids = []
    for d in distractors:
        if name not in d.answer:
            continue
        try:
            g = read_grid(r, d.answer[name], kind, "")
            pg = read_grid(r, d.rounded.get(name, d.answer[name]), kind, "")
        except WorksheetgenError:
            continue  # a slip of another shape (e.g. no-transpose) gives no per-cell value
        if [len(x) for x in g] == [len(x) for x in vals] and [len(x) for x in pg] == [
            len(x) for x in vals
        ]:
            slip_grids.append((d, g, pg))
    rows = []
    for i, row in enumerate(vals):
        cells = []
        for j, x in enumerate(row):
            at = "" if kind == "scalar" else f"[{i}][{j}]" if kind == "matrix" else f"[{j}]"
            v = _entry(r, x, f"{w}.answer.{name}{at}", kind)
            p = prints[i][j]
            if not isinstance(p, str | int | float) or isinstance(p, bool):
                raise r.fail(
                    f"{w}.rounded.{name}{at}", f"expected a printed number, got {kind_of(p)}"
                )
            p = str(p)
            _check_printed(r, f"{w}.rounded.{name}{at}", f"{w}.tolerance.{name}", v, p, tol)
            cells.append(
                Cell(
                    key=_cell_key(name, kind, i, j),
                    label=_cell_label(kind, i, j, row_label, col_label),
                    value=v,
                    printed=p,
                    tolerance=tol,
                    exact=None if exact_grid is None else str(exact_grid[i][j]),
                    slips=_cell_slips(v, tol, [(d, g[i][j], pg[i][j]) for d, g, pg in slip_grids]),
                )
            )
        rows.append(tuple(cells))
    return tuple(rows)


def _check_printed(
    r: FieldReader, rfield: str, tfield: str, v: float | None, p: str, tol: float
) -> None:
    """The printed key value must be an answer the export accepts."""
    if v is None:
        if not is_masked_text(p):
            raise r.fail(rfield, f'expected "-inf" for a masked cell, got {p!r}')
        return
    try:
        pv = float(p)
    except ValueError:
        raise r.fail(rfield, f"expected a printed number, got {p!r}") from None
    if abs(pv - v) > tol + SLACK * max(1.0, abs(v)):
        raise r.fail(
            tfield,
            f"expected a tolerance that accepts the printed {p} for the value "
            f"{number_text(v)}, got {number_text(tol)}",
        )


def _cell_key(name: str, kind: str, i: int, j: int) -> str:
    safe = "".join(ch if ch.isalnum() else "_" for ch in name)
    if kind == "scalar":
        return safe
    if kind == "matrix":
        return f"{safe}_{i + 1}_{j + 1}"
    return f"{safe}_{j + 1}"


def _cell_label(kind: str, i: int, j: int, row_label: str, col_label: str) -> str:
    if kind == "scalar":
        return ""
    if kind == "shape":
        return ("rows", "columns")[j] if j < 2 else f"dimension {j + 1}"
    col = f"{col_label} {j + 1}" if col_label else f"column {j + 1}"
    if kind == "vector":
        return col
    row = f"{row_label} {i + 1}" if row_label else f"row {i + 1}"
    return f"{row}, {col}"


def _cell_slips(
    v: float | None, tol: float, found: Sequence[tuple[Distractor, Any, Any]]
) -> tuple[Slip, ...]:
    """Slips whose value for this cell differs from the answer, merged where they agree."""
    groups: list[tuple[float | None, str, list[str], list[str]]] = []
    for d, x, p in found:
        if is_masked_text(x):
            sv: float | None = None
        elif is_finite_number(x):
            sv = float(x)
        else:
            continue
        if sv is None and v is None:
            continue
        if sv is not None and v is not None and abs(sv - v) <= tol and _printed_within(p, v, tol):
            continue  # the slip does not show in this cell (nor in what a student writes)
        for g in groups:
            if (g[0] is None and sv is None) or (
                g[0] is not None and sv is not None and abs(g[0] - sv) <= tol / 2
            ):
                g[2].append(d.misconception)
                g[3].append(d.description)
                break
        else:
            groups.append((sv, str(p), [d.misconception], [d.description]))
    return tuple(Slip(tuple(m), tuple(ds), sv, p) for sv, p, m, ds in groups)


def _printed_within(printed: Any, v: float, tol: float) -> bool:
    """True when a slip's printed value (what a student writes) lies within ``tol`` of ``v``;
    a printed value that is not a number counts as within (nothing to tell apart)."""
    try:
        x = float(str(printed).replace("\u2212", "-"))
    except ValueError:
        return True
    return not math.isfinite(x) or abs(x - v) <= tol + SLACK * max(1.0, abs(v))
