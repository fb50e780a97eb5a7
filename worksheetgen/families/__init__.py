"""The registry of question families, by the name a bank uses."""

from __future__ import annotations

from worksheetgen.families.base import Family
from worksheetgen.families.registry import CLASSES, register

__all__ = ["FAMILIES", "Family", "get_family", "register"]


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

    return CLASSES


FAMILIES = _load()
_INSTANCES: dict[str, Family] = {}


def get_family(name: str) -> Family:
    """The (stateless) family instance for ``name``."""
    if name not in _INSTANCES:
        _INSTANCES[name] = FAMILIES[name]()
    return _INSTANCES[name]
