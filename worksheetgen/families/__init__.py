"""The registry of question families, by the name a bank uses."""

from __future__ import annotations

from worksheetgen.families.base import Family

_CLASSES: dict[str, type[Family]] = {}


def register(cls: type[Family]) -> type[Family]:
    """Class decorator: make a family available to banks under ``cls.name``."""
    if cls.name in _CLASSES:
        raise ValueError(f"family {cls.name!r} registered twice")
    _CLASSES[cls.name] = cls
    return cls


def _load() -> dict[str, type[Family]]:
    # importing the modules runs their @register decorators
    from worksheetgen.families import (  # noqa: F401
        attention_tables,
        concept,
        cost,
        cross,
        heads,
        heatmap,
        identical_keys,
        multihead,
        projections,
        scale_effect,
        scaling,
        spot_bug,
    )

    return _CLASSES


FAMILIES = _load()
_INSTANCES: dict[str, Family] = {}


def get_family(name: str) -> Family:
    """The (stateless) family instance for ``name``."""
    if name not in _INSTANCES:
        _INSTANCES[name] = FAMILIES[name]()
    return _INSTANCES[name]
