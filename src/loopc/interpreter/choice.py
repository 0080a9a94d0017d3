"""The engine's one choice, language-neutral (docs/conformance.md#selectone-the-pick).

A ``{selectOne: [agents]}`` responder is resolved per attempt by
:func:`select_one`: SHA-256 over the UTF-8 bytes of the attempt's effect key
``<run>:<activation>:<attempt>`` (e.g. ``run_35a161f14a1fa3ae:act_4:1``), the
32-byte digest read as one unsigned big-endian integer, modulo the pool size;
the pick is ``pool[index]``.  No language runtime's random generator is
involved, so any runtime reproduces the pick in a few lines.
"""
from __future__ import annotations

import hashlib
from typing import Sequence, TypeVar

__all__ = ["pick_index", "select_one"]

T = TypeVar("T")


def pick_index(key: str, size: int) -> int:
    """``int.from_bytes(sha256(key.encode("utf-8")), "big") % size``.

    ``key`` the effect key ``<run>:<activation>:<attempt>``; ``size`` ≥ 1
    (``ValueError`` otherwise).  Result in ``0 .. size-1``."""
    if size < 1:
        raise ValueError("a selectOne pool has at least one member")
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest(), "big") % size


def select_one(key: str, pool: Sequence[T]) -> T:
    """The member of ``pool`` (non-empty, authored order) picked for the
    attempt whose effect key is ``key``."""
    return pool[pick_index(key, len(pool))]
