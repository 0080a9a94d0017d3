"""Type descriptors of the typed IR model (docs/ir.md#type-descriptors):
:class:`TypeDesc` and its interned constructors :func:`type_desc_of` and
:func:`parse_type_desc`.  Re-exported by :mod:`loopc.ir.model`."""
from __future__ import annotations

import attrs


@attrs.frozen(cache_hash=True)
class TypeDesc:
    """A static type descriptor: ``kind`` (``string``, ``enum``, ``scope``,
    ``object``, ``null``, ``unknown`` …) under ``depth`` levels of
    ``array<…>``.  ``str(t)`` is the wire form (``array<array<string>>``)."""

    kind: str
    depth: int = 0

    @property
    def is_array(self) -> bool:
        return self.depth > 0

    @property
    def element(self) -> "TypeDesc":
        """The element type of an array descriptor (``unknown`` otherwise)."""
        return type_desc_of(self.kind, self.depth - 1) if self.depth else type_desc_of("unknown")

    @property
    def wire(self) -> str:
        return "array<" * self.depth + self.kind + ">" * self.depth

    def __str__(self) -> str:
        return self.wire


_DESC_BY_WIRE: dict[str, TypeDesc] = {}
_DESC_BY_KEY: dict[tuple[str, int], TypeDesc] = {}


def type_desc_of(kind: str, depth: int = 0) -> TypeDesc:
    """The (interned) :class:`TypeDesc` ``kind`` under ``depth`` arrays."""
    key = (kind, depth)
    t = _DESC_BY_KEY.get(key)
    if t is None:
        t = _DESC_BY_KEY[key] = TypeDesc(kind, depth)
    return t


def parse_type_desc(s: str) -> TypeDesc:
    """Wire descriptor string → :class:`TypeDesc` (interned)."""
    t = _DESC_BY_WIRE.get(s)
    if t is None:
        depth = 0
        inner = s
        while inner.startswith("array<") and inner.endswith(">"):
            inner = inner[6:-1]
            depth += 1
        t = type_desc_of(inner, depth)
        if len(_DESC_BY_WIRE) < 4096:
            _DESC_BY_WIRE[s] = t
    return t
