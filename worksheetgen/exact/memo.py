"""Results remembered by the identity of the objects they were computed from.

A class build computes the same thing from the same objects many times: the slips of a
variant share the correct calculation's tables, every weight of a softmax row divides by the
same row sum. Such objects are not all hashable (lists) or cheap to hash (nested forms), so
entries are keyed by ``id``. Each entry holds on to its inputs, so an id is never reused while
it is a key; the memo is cleared when full, so memory stays flat.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any


class IdentityMemo:
    """A bounded memo keyed by the identities of some objects (and plain hashable tags)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._entries: dict[tuple, tuple[Any, tuple]] = {}

    def get(self, inputs: tuple, tags: tuple[Hashable, ...], make: Callable[[], Any]) -> Any:
        """The result for ``inputs`` and ``tags``: remembered, or ``make()`` remembered now."""
        key = (*map(id, inputs), *tags)
        hit = self._entries.get(key)
        if hit is not None:
            return hit[0]
        if len(self._entries) >= self.limit:
            self._entries.clear()
        out = make()
        self._entries[key] = (out, inputs)
        return out

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
