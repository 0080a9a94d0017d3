"""Domain-separated SHA-256 digests of the execution-plan back end
(docs/plan.md#digests).

Every digest is ``"sha256:" + hex(SHA-256(TAG || 0x00 || JCS(value)))``:
``TAG`` an ASCII domain name (one per kind of value, below), one zero byte,
then the RFC 8785 canonical bytes of ``value`` — the same construction as
the artifact's semantic digest, with other tags, so no two kinds of value
can ever share a digest.
"""

from __future__ import annotations

import hashlib
from typing import Any

from loopc.ir.canonical import canonical_bytes

DIGEST_ALGORITHM = "loop.plan.digest/v1"
"""The digest-algorithm version committed into every binding fingerprint."""

TAG_DESCRIPTOR = b"loop.plan.capability-descriptor/v1"
TAG_BINDING = b"loop.plan.binding-fingerprint/v1"
TAG_ENTRY = b"loop.plan.catalog-entry/v1"
TAG_SCOPE = b"loop.plan.runtime-work-binding/v1"
TAG_CATALOG = b"loop.plan.catalog/v1"
TAG_PAYLOAD = b"loop.plan.payload/v1"
TAG_IDENTITY = b"loop.plan.identity/v1"


def tagged_digest(tag: bytes, value: Any) -> str:
    """``sha256:<64 hex>`` of ``tag || 0x00 || JCS(value)``; ``value`` is JSON
    data (dicts, lists, strings, integers within ±(2^53−1), booleans, None).
    Raises :class:`loopc.ir.canonical.CanonicalizationError` for non-JSON data."""
    h = hashlib.sha256(tag + b"\x00")
    h.update(canonical_bytes(value))
    return "sha256:" + h.hexdigest()
