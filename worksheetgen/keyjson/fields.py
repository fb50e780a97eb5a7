"""Field checks of the key reader: each raises one ``KeyFileError`` naming the
file and the JSON path of the field (``sheets[0].questions[2].kinds.A``).

May import: the shared modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from worksheetgen.errors import KeyFileError, shorten
from worksheetgen.keyjson.views import is_finite_number
from worksheetgen.textrules import id_problem


class FieldReader:
    """Field checks that raise one ``KeyFileError`` naming the file and the JSON path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, message: str) -> KeyFileError:
        return KeyFileError(message, file=self.source, field=where)

    def obj(self, x: Any, where: str) -> dict[str, Any]:
        if not isinstance(x, dict):
            raise self.fail(where, f"expected an object, got {kind_of(x)}")
        return x

    def lst(self, x: Any, where: str) -> list[Any]:
        if not isinstance(x, list):
            raise self.fail(where, f"expected a list, got {kind_of(x)}")
        return x

    def text(self, x: Any, where: str, *, empty: bool = True) -> str:
        if not isinstance(x, str) or (not empty and not x.strip()):
            raise self.fail(
                where, f"expected {'a' if empty else 'a non-empty'} string, got {kind_of(x)}"
            )
        return x

    def ident(self, x: Any, where: str) -> str:
        """An id or a name matched against what a person types: one line, printable, no
        white space around it (``worksheetgen.textrules``)."""
        text = self.text(x, where, empty=False)
        bad = id_problem(text)
        if bad is not None:
            raise self.fail(
                where,
                f"expected an id of printable characters without white "
                f"space around it, got {kind_of(text)} ({bad})",
            )
        return text

    def num(self, x: Any, where: str) -> float:
        if not is_finite_number(x):
            raise self.fail(where, f"expected a finite number, got {kind_of(x)}")
        return float(x)

    def get(self, d: Mapping[str, Any], key: str, where: str) -> Any:
        if key not in d:
            raise self.fail(f"{where}.{key}", "expected a value, got nothing (missing)")
        return d[key]


def kind_of(x: Any) -> str:
    if x is None:
        return "null"
    if isinstance(x, bool):
        return f"{str(x).lower()}"
    if isinstance(x, int) and abs(x) >= 10**40:
        return f"an integer of {len(str(abs(x)))} digits"
    if isinstance(x, int | float):
        return repr(x)
    if isinstance(x, str):
        return repr(shorten(x))
    if isinstance(x, list):
        return f"a list of {len(x)}"
    if isinstance(x, dict):
        return "an object"
    return type(x).__name__
