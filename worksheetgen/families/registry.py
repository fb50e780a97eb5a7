"""The families known by name, found through the ``worksheetgen.families`` entry points.

Each entry point maps the name a bank uses to a ``Family`` subclass (``"module:Class"``);
worksheetgen's own families are registered the same way in its pyproject.toml. The classes
are imported once, on first use (``--help`` imports none of them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from worksheetgen import plugins
from worksheetgen.families.base import Family


def family_problem(obj: Any, name: str | None = None) -> str | None:
    """What keeps ``obj`` from being the family called ``name`` (any name when None), or None."""
    if not isinstance(obj, type) or not issubclass(obj, Family):
        return f"expected a subclass of worksheetgen.families.Family, got {obj!r}"
    own = getattr(obj, "name", None)
    if not isinstance(own, str) or not own:
        return f"expected a class attribute name (a non-empty string), got {own!r}"
    if name is not None and own != name:
        return f"expected the class's name to be {name!r} (its entry point), got {own!r}"
    return None


def _adopt(obj: Any, name: str) -> type[Family]:
    """The family class an entry point names, checked."""
    problem = family_problem(obj, name)
    if problem is not None:
        raise plugins.Unfit(problem)
    cls: type[Family] = obj
    return cls


class Registry(Mapping[str, type[Family]]):
    """Family classes by name, read from the entry points the first time they are needed."""

    def __init__(self) -> None:
        self._classes: dict[str, type[Family]] | None = None

    def _loaded(self) -> dict[str, type[Family]]:
        if self._classes is None:
            self._classes = plugins.load(plugins.FAMILIES, _adopt)
        return self._classes

    def __getitem__(self, name: str) -> type[Family]:
        return self._loaded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())

    def __contains__(self, name: object) -> bool:
        return name in self._loaded()
