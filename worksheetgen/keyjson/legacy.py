"""Keys of version 1, from builds before key.json held everything ``grade`` and ``export`` use.

Such a key leaves a question titled by its family with ``"title": null``, and the earliest
ones have no ``"carries"``: the reader then asks the installed family for its title and its
carried-forward steps, as the build that wrote the key did. This module is the only place
the reader asks the families anything, and only for a key of ``LEGACY_VERSION``: a key of
the current version (``keyjson.write.KEY_VERSION``) states its titles and steps and is read
without the families, so it grades and exports without the plugin that made it. A family
this installation does not know gives its name as the title and no carried steps.

May import: families and the shared modules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from worksheetgen.families import FAMILIES, get_family

#: the version of key.json whose titles and carried steps may be left to the family's code
LEGACY_VERSION = 1


def family_title(family: str) -> str:
    """The family's own title, when the family is known to this installation."""
    cls = FAMILIES.get(family)
    return cls.title if cls is not None else family


def family_carries(family: str, given: Mapping[str, Any], asked: Sequence[str]) -> list[Any]:
    """The family's carried-forward steps for a variant drawn with ``given`` whose parts ask
    ``asked``, as a build would write them (none for a family this installation lacks)."""
    return get_family(family).carries_for(given, asked) if family in FAMILIES else []
