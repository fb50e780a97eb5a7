"""The only place random generators are made, and what a course secret adds to them.

Each question of each sheet gets its own generator, derived from the sheet's identity
(``model.SheetIdentity``: seed, sheet id, course secret) and the question id through a stable
hash, so adding, removing or reordering questions or students never changes another variant.
A pool's picks for a sheet come from a generator of (identity, slot id) and a sheet's shuffled
order from one of the identity alone, each a stream of its own. Each generator's seed material
is the seed, the sheet id's hash, the name's (and the tag's), then the secret's part: the
streams every earlier version made from the same seed, sheet id and secret. Python's
``hash()`` is never used: it changes with PYTHONHASHSEED.

A course secret (``worksheetgen init``) enters every generator's seed material, so the seed,
the banks and the sheet ids alone reproduce nothing. The secret itself is never written
anywhere: key.json and the manifest hold its fingerprint, the sheets a short sheet code.
"""

from __future__ import annotations

import base64
import hashlib

import numpy as np

from worksheetgen.model import SheetIdentity


def stable_hash(text: str) -> int:
    """A 64-bit integer hash of ``text`` that is the same on every run and machine."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def secret_key(secret: bytes) -> bytes:
    """The 32-byte key every use of a secret of any length starts from."""
    return hashlib.blake2b(secret, digest_size=32, person=b"wsg-secret").digest()


def generator(identity: SheetIdentity, question_id: str) -> np.random.Generator:
    """The generator for one question of one sheet (with the course secret, when there is one;
    without one the generator is the one every earlier version made)."""
    entropy = [int(identity.seed), stable_hash(identity.sheet), stable_hash(question_id)]
    if identity.secret:
        key = secret_key(identity.secret)
        keyed = hashlib.blake2b(b"rng", digest_size=16, key=key).digest()
        entropy.append(int.from_bytes(keyed, "big"))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))


def _tagged(identity: SheetIdentity, name: str, tag: str) -> np.random.Generator:
    """A generator of its own stream (``tag``) for ``name`` on one sheet: never the same as
    any question's generator, whose seed material has no tag."""
    entropy = [int(identity.seed), stable_hash(identity.sheet), stable_hash(name), stable_hash(tag)]
    if identity.secret:
        key = secret_key(identity.secret)
        keyed = hashlib.blake2b(tag.encode(), digest_size=16, key=key).digest()
        entropy.append(int.from_bytes(keyed, "big"))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))


def pool_generator(identity: SheetIdentity, slot_id: str) -> np.random.Generator:
    """The generator that picks a pool's alternatives for one sheet, from (seed, secret,
    sheet id, slot id) alone: other students, questions and pools never change it."""
    return _tagged(identity, slot_id, "wsg-pool")


def order_generator(identity: SheetIdentity) -> np.random.Generator:
    """The generator that shuffles one sheet's question order (a stream of its own)."""
    return _tagged(identity, "", "wsg-order")


def sheet_code(identity: SheetIdentity) -> str:
    """The short code a sheet prints instead of the seed: eight letters and digits from
    (secret, seed, sheet id); the key, key.json and the manifest map it back."""
    key = secret_key(identity.secret) if identity.secret else b""
    text = f"{int(identity.seed)}\0{identity.sheet}".encode()
    digest = hashlib.blake2b(text, digest_size=5, key=key, person=b"wsg-sheet-code").digest()
    code = base64.b32encode(digest).decode("ascii")
    return f"{code[:4]}-{code[4:]}"


def secret_fingerprint(secret: bytes) -> str:
    """What key.json and the manifest keep of a secret: enough to tell two secrets apart,
    nothing to rebuild one from."""
    digest = hashlib.blake2b(b"fingerprint", digest_size=8, key=secret_key(secret)).hexdigest()
    return f"blake2b:{digest}"
