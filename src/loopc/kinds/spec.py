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
from typing import Any, Callable, ClassVar, Mapping

from loopc import limits as _limits
from loopc.value import ValueBase, declare

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
    "REF_ROOTS",
    "FAILURE_ACTIONS",
    "compiled",
]

# ---------------------------------------------------------------------------
# Spec vocabulary
# ---------------------------------------------------------------------------


class Spec:
    """Base of the spec vocabulary."""


class _Value(ValueBase):
    """The vocabulary's base: each class writes its own ``__slots__`` and
    ``__init__`` and lists its fields in ``__match_args__`` (the ``__init__``
    order); :func:`loopc.value.declare` makes it a value class over them —
    immutable (assignment raises :class:`attrs.exceptions.FrozenInstanceError`),
    equal when of the same class with equal fields, hashed by them (a field
    holding a mapping makes the value unhashable), ``Name(field=value, ...)``
    repr, pickled by its fields, copied with changes by :meth:`evolve`
    (docs/architecture.md#value-classes)."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        pass

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # not ValueBase's (which reads annotations and defaults): the fields are __match_args__
        declare(cls, cls.__match_args__)


_set = object.__setattr__


class Str(_Value, Spec):
    """A string; ``enum`` maps allowed values to the version introducing them.
    ``check`` (optional) says why a string that matches ``pattern`` is still
    out of bounds, or ``None``: the bounds the compiler applies to the same
    value (a duration's length and total, :func:`loopc.limits.duration_problem`),
    so the verifier accepts exactly what a compiler can emit."""

    __slots__ = __match_args__ = ("pattern", "enum", "max_len", "check")
    pattern: str | None
    enum: Mapping[str, int] | None
    max_len: int | None
    check: Callable[[str], "str | None"] | None

    def __init__(
        self,
        pattern: str | None = None,
        enum: Mapping[str, int] | None = None,
        max_len: int | None = None,
        check: Callable[[str], "str | None"] | None = None,
    ) -> None:
        _set(self, "pattern", pattern)
        _set(self, "enum", enum)
        _set(self, "max_len", max_len)
        _set(self, "check", check)

    @property
    def regex(self) -> "re.Pattern[str] | None":
        return _compiled(self.pattern) if self.pattern else None


class Int(_Value, Spec):
    __slots__ = __match_args__ = ("minimum", "maximum")
    minimum: int | None
    maximum: int | None

    def __init__(self, minimum: int | None = None, maximum: int | None = None) -> None:
        _set(self, "minimum", minimum)
        _set(self, "maximum", maximum)


class Bool(_Value, Spec):
    __slots__ = __match_args__ = ("const",)
    const: bool | None

    def __init__(self, const: bool | None = None) -> None:
        _set(self, "const", const)


class Null(_Value, Spec):
    __slots__ = ()


class AnyJson(_Value, Spec):
    """Any JSON value (literal values, defaults)."""

    __slots__ = ()


class Arr(_Value, Spec):
    __slots__ = __match_args__ = ("items", "min_items", "max_items")
    items: Spec
    min_items: int
    max_items: int | None

    def __init__(self, items: Spec, min_items: int = 0, max_items: int | None = None) -> None:
        _set(self, "items", items)
        _set(self, "min_items", min_items)
        _set(self, "max_items", max_items)


class MapOf(_Value, Spec):
    """An object with free keys matching ``key_pattern`` and uniform values."""

    __slots__ = __match_args__ = ("values", "key_pattern")
    values: Spec
    key_pattern: str | None

    def __init__(self, values: Spec, key_pattern: str | None = None) -> None:
        _set(self, "values", values)
        _set(self, "key_pattern", key_pattern)


class F(_Value):
    """A field of an :class:`Obj`."""

    __slots__ = ("spec", "required", "since", "annotation")  # __weakref__: ValueBase's
    __match_args__ = ("spec", "required", "since", "annotation")
    spec: Spec
    required: bool
    since: int
    #: authoring-only (``label``/``description``): kept in the artifact,
    #: excluded from the semantic digest (docs/ir.md#semantic-digest).
    annotation: bool

    def __init__(self, spec: Spec, required: bool = True, since: int = 1, annotation: bool = False) -> None:
        _set(self, "spec", spec)
        _set(self, "required", required)
        _set(self, "since", since)
        _set(self, "annotation", annotation)


class Obj(_Value, Spec):
    """A closed object.  ``checks`` are ``(message, predicate(obj) -> bool)``
    pairs for simple cross-field rules (also emitted into the JSON Schema via
    ``schema_extra``)."""

    __slots__ = __match_args__ = ("fields", "checks", "schema_extra")
    fields: Mapping[str, F]
    checks: tuple[tuple[str, Callable[[dict], bool]], ...]
    schema_extra: Mapping[str, Any] | None

    def __init__(
        self,
        fields: Mapping[str, F],
        checks: tuple[tuple[str, Callable[[dict], bool]], ...] = (),
        schema_extra: Mapping[str, Any] | None = None,
    ) -> None:
        _set(self, "fields", fields)
        _set(self, "checks", checks)
        _set(self, "schema_extra", schema_extra)


class Tagged(_Value, Spec):
    """A union of closed objects discriminated by the string field ``tag``;
    ``variants`` maps tag value → (Obj without the tag field, since)."""

    __slots__ = __match_args__ = ("tag", "variants", "common")
    tag: str
    variants: Mapping[str, tuple[Obj, int]]
    common: Mapping[str, F]

    def __init__(
        self, tag: str, variants: Mapping[str, tuple[Obj, int]], common: Mapping[str, F] | None = None
    ) -> None:
        _set(self, "tag", tag)
        _set(self, "variants", variants)
        _set(self, "common", {} if common is None else common)


class ByType(_Value, Spec):
    """A union discriminated by JSON type: ``{"list": spec, "dict": spec,
    "null": spec, "str": spec}``; ``since`` per alternative."""

    __slots__ = __match_args__ = ("alts",)
    alts: Mapping[str, tuple[Spec, int]]

    def __init__(self, alts: Mapping[str, tuple[Spec, int]]) -> None:
        _set(self, "alts", alts)


class Ref(_Value, Spec):
    __slots__ = __match_args__ = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        _set(self, "name", name)


class InstrArr(_Value, Spec):
    """A positional instruction ``[op, type, operands...]`` (see
    :mod:`loopc.ir.instr`); ``roots`` maps reference roots to their version."""

    __slots__ = __match_args__ = ("kinds", "roots")
    kinds: Mapping[str, int]
    roots: Mapping[str, int]

    def __init__(self, kinds: Mapping[str, int], roots: Mapping[str, int]) -> None:
        _set(self, "kinds", kinds)
        _set(self, "roots", roots)


class TypeDesc(_Value, Spec):
    """A static type descriptor string: ``kind`` or ``array<T>``."""

    __slots__ = __match_args__ = ("kinds",)
    kinds: Mapping[str, int]

    def __init__(self, kinds: Mapping[str, int]) -> None:
        _set(self, "kinds", kinds)


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
#: Reference roots of ``ref`` instructions, each with the artifact version
#: that introduced it (docs/ir.md#instructions).
REF_ROOTS: dict[str, int] = {
    "run.input": 1,
    "run.state": 1,
    "input": 1,
    "output": 1,
    "branches": 1,
    "winner": 1,
    "loop": 1,
    "item": 4,
    "items": 4,
}
#: Failure routes (a failed End's disposition, an omitted port's implicit
#: route; ``never`` only the latter), each with the version that introduced it.
FAILURE_ACTIONS: dict[str, int] = {"fail_plan": 1, "fail_branch": 1, "fail_item": 4, "never": 4}
#: A stable error code of a failed End (``review_rejected``).
ERROR_CODE = r"^[a-z][a-z0-9_.]{0,63}$"
INSTR = Ref("Instr")
CONTRACT = Ref("Contract")
BIND = MapOf(INSTR, key_pattern=FIELD_KEY)

compiled = _compiled
