"""The question families, by the name a bank uses: ``FAMILIES`` and ``get_family``.

Families are found through the ``worksheetgen.families`` entry points (see
``worksheetgen.families.registry``), the bundled ones and any an installed package adds.
"""

from __future__ import annotations

from worksheetgen.families.base import Family
from worksheetgen.families.registry import Registry

__all__ = ["FAMILIES", "Family", "get_family"]

#: family classes by name (read from the entry points on first use)
FAMILIES = Registry()
_INSTANCES: dict[str, Family] = {}


def get_family(name: str) -> Family:
    """The (stateless) family instance for ``name``."""
    if name not in _INSTANCES:
        _INSTANCES[name] = FAMILIES[name]()
    return _INSTANCES[name]
