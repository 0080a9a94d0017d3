"""SHA-256 for the result cache without OpenSSL's start-up cost
(docs/ci.md#the-result-cache, docs/architecture.md#value-classes).

``import hashlib`` loads OpenSSL's ``_hashlib`` and initialises it: about
3 ms of the ~60 ms that ``loopc check FILE`` takes, spent on hashing a few
kilobytes (the cache key of one file and its entry's digest).  CPython also
ships its own SHA-256 (``_sha2`` from 3.12, ``_sha256`` before), which
imports in about 0.15 ms but hashes about five times slower than OpenSSL
with the processor's SHA instructions.  :func:`sha256` therefore hashes a
run's first :data:`BUILTIN_BYTES` with the built-in implementation and
everything after them with hashlib's (a tree of plans pays the import once
and hashes at OpenSSL's speed); once anything has imported hashlib it is
used from the start.  SHA-256 is SHA-256: the digests are the same whichever
implementation computes them (``tests/test_hashing.py``).
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["BUILTIN_BYTES", "sha256"]

#: Bytes passed to :func:`sha256` in one process that the built-in
#: implementation hashes before hashlib's takes over (1 MiB).
BUILTIN_BYTES = 1 << 20

_hashed = 0
_builtin: Any = None  # the built-in constructor once looked up; False: there is none


def _find_builtin() -> Any:
    for name in ("_sha2", "_sha256") if sys.version_info >= (3, 12) else ("_sha256", "_sha2"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        constructor = getattr(module, "sha256", None)
        if constructor is not None:
            return constructor
    return False


def sha256(data: bytes = b"") -> Any:
    """A new SHA-256 hash object over ``data`` (bytes), with
    ``hashlib.sha256``'s interface (``update``, ``digest``, ``hexdigest``,
    ``copy``, ``name``, ``digest_size``): CPython's built-in implementation
    for the process's first :data:`BUILTIN_BYTES` (counted on ``data``; an
    ``update`` is not counted) unless hashlib is already imported, hashlib's
    after.  Raises :class:`TypeError` for ``data`` that is not bytes-like,
    as hashlib does."""
    global _hashed, _builtin
    if _hashed < BUILTIN_BYTES and "hashlib" not in sys.modules:
        if _builtin is None:
            _builtin = _find_builtin()
        if _builtin:
            _hashed += len(data)
            return _builtin(data)
    import hashlib

    return hashlib.sha256(data)
