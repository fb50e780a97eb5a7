"""The only place random generators are made.

Each question of each sheet gets its own generator, derived from (seed, sheet id, question id)
through a stable hash, so adding, removing or reordering questions or students never changes
another variant. Python's ``hash()`` is never used: it changes with PYTHONHASHSEED.
"""

from __future__ import annotations

import hashlib

import numpy as np


def stable_hash(text: str) -> int:
    """A 64-bit integer hash of ``text`` that is the same on every run and machine."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def generator(seed: int, sheet_id: str, question_id: str) -> np.random.Generator:
    """The generator for one question of one sheet."""
    entropy = [int(seed), stable_hash(sheet_id), stable_hash(question_id)]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))
