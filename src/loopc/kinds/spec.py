"""Spec vocabulary of the artifact wire surface (docs/ir.md) and its shared
atoms.  The bottom of the node-kind registry: :mod:`loopc.kinds` describes
each node kind's wire config with these classes, and :mod:`loopc.ir.surface`
interprets them (strict decoder shape check, version selection, the vendored
artifact JSON Schemas).

Every :class:`F` (field), :class:`Tagged` variant and :class:`Str` enum value
records ``since``, the artifact version that introduced it.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

import attrs

from loopc import limits as _limits

__all__ = [
    "Spec",
    "Str",
    "Int",
    "Bool",
    "Null",
    "AnyJson",
    "Arr",
    "MapOf",
    "F",
    "Obj",
    "Tagged",
    "ByType",
    "Ref",
    "InstrArr",
    "TypeDesc",
    "ID",
    "PORT",
    "FIELD_KEY",
    "DURATION",
    "DIGEST",
    "TEXT",
    "INSTR",
    "CONTRACT",
    "BIND",
    "ERROR_CODE",
    "FIELD_TYPES",
    "compiled",
]

# ---------------------------------------------------------------------------
# Spec vocabulary
# ---------------------------------------------------------------------------


class Spec:
    """Base of the spec vocabulary."""


@attrs.frozen
class Str(Spec):
    """A string; ``enum`` maps allowed values to the version introducing them.
    ``check`` (optional) says why a string that matches ``pattern`` is still
    out of bounds, or ``None``: the bounds the compiler applies to the same
    value (a duration's length and total, :func:`loopc.limits.duration_problem`),
    so the verifier accepts exactly what a compiler can emit."""

    pattern: str | None = None
    enum: Mapping[str, int] | None = None
    max_len: int | None = None
    check: Callable[[str], "str | None"] | None = None

    @property
    def regex(self) -> "re.Pattern[str] | None":
        return _compiled(self.pattern) if self.pattern else None


@attrs.frozen
class Int(Spec):
    minimum: int | None = None
    maximum: int | None = None


@attrs.frozen
class Bool(Spec):
    const: bool | None = None


@attrs.frozen
class Null(Spec):
    pass


@attrs.frozen
class AnyJson(Spec):
    """Any JSON value (literal values, defaults)."""


@attrs.frozen
class Arr(Spec):
    items: Spec
    min_items: int = 0
    max_items: int | None = None


@attrs.frozen
class MapOf(Spec):
    """An object with free keys matching ``key_pattern`` and uniform values."""

    values: Spec
    key_pattern: str | None = None


@attrs.frozen
class F:
    """A field of an :class:`Obj`."""

    spec: Spec
    required: bool = True
    since: int = 1
    #: authoring-only (``label``/``description``): kept in the artifact,
    #: excluded from the semantic digest (docs/ir.md#semantic-digest).
    annotation: bool = False


@attrs.frozen
class Obj(Spec):
    """A closed object.  ``checks`` are ``(message, predicate(obj) -> bool)``
    pairs for simple cross-field rules (also emitted into the JSON Schema via
    ``schema_extra``)."""

    fields: Mapping[str, F]
    checks: tuple[tuple[str, Callable[[dict], bool]], ...] = ()
    schema_extra: Mapping[str, Any] | None = None


@attrs.frozen
class Tagged(Spec):
    """A union of closed objects discriminated by the string field ``tag``;
    ``variants`` maps tag value → (Obj without the tag field, since)."""

    tag: str
    variants: Mapping[str, tuple[Obj, int]]
    common: Mapping[str, F] = attrs.field(factory=dict)


@attrs.frozen
class ByType(Spec):
    """A union discriminated by JSON type: ``{"list": spec, "dict": spec,
    "null": spec, "str": spec}``; ``since`` per alternative."""

    alts: Mapping[str, tuple[Spec, int]]


@attrs.frozen
class Ref(Spec):
    name: str


@attrs.frozen
class InstrArr(Spec):
    """A positional instruction ``[op, type, operands...]`` (see
    :mod:`loopc.ir.instr`); ``roots`` maps reference roots to their version."""

    kinds: Mapping[str, int]
    roots: Mapping[str, int]


@attrs.frozen
class TypeDesc(Spec):
    """A static type descriptor string: ``kind`` or ``array<T>``."""

    kinds: Mapping[str, int]


_RE_CACHE: dict[str, "re.Pattern[str]"] = {}


def _compiled(p: str) -> "re.Pattern[str]":
    r = _RE_CACHE.get(p)
    if r is None:
        r = _RE_CACHE[p] = re.compile(p)
    return r


# ---------------------------------------------------------------------------
# Shared atoms
# ---------------------------------------------------------------------------

ID = Str(pattern=r"^[a-z][a-z0-9_]{0,63}$")
PORT = Str(pattern=r"^[a-z][a-z0-9_]{0,63}$")
FIELD_KEY = r"^[a-z][A-Za-z0-9_]{0,63}$"
#: An ISO 8601 duration within the compiler's bounds (at most 64 characters,
#: 9 fraction digits, 3,650 days: :mod:`loopc.limits`, the one source).
DURATION = Str(
    pattern=r"^P(?:[0-9]+D)?(?:T(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+(?:\.[0-9]+)?S)?)?$", check=_limits.duration_problem
)
DIGEST = Str(pattern=r"^sha256:[0-9a-f]{64}$")
TEXT = Str()
#: FieldSchema types (docs/reference.md#types) in the order messages list
#: them, each with the artifact version that introduced it.
FIELD_TYPES: dict[str, int] = {
    "string": 1,
    "enum": 1,
    "number": 1,
    "boolean": 1,
    "duration": 1,
    "datetime": 1,
    "object": 1,
    "array": 1,
    "scope": 2,
    "channel": 1,
    "member": 1,
    "agent": 1,
    "work_items": 4,
    "responder": 4,
}
#: A stable error code of a failed End (``review_rejected``).
ERROR_CODE = r"^[a-z][a-z0-9_.]{0,63}$"
INSTR = Ref("Instr")
CONTRACT = Ref("Contract")
BIND = MapOf(INSTR, key_pattern=FIELD_KEY)

compiled = _compiled
