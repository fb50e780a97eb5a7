"""The families known by name: what ``@register`` adds, read by ``worksheetgen.families``."""

from __future__ import annotations

from worksheetgen.families.base import Family

CLASSES: dict[str, type[Family]] = {}


def register(cls: type[Family]) -> type[Family]:
    """Class decorator: make a family available to banks under ``cls.name``."""
    if cls.name in CLASSES:
        raise ValueError(f"family {cls.name!r} registered twice")
    CLASSES[cls.name] = cls
    return cls
