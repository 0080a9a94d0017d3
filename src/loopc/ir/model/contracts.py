"""Contracts of the typed IR model (docs/ir.md#contracts-and-fieldschemas): :class:`FieldSchema`
(``NO_DEFAULT`` when the wire field has no default), a *Contract* as a
``dict[str, FieldSchema]`` in key order, and their JSON codec, plus the
binding maps (field -> instruction) entries and edges carry.  Re-exported by
:mod:`loopc.ir.model`."""
from __future__ import annotations

from typing import Any, ClassVar, Mapping

import attrs

from loopc.ir.model.instrs import Instr, instr_from_json


class _NoDefault:
    _inst: "ClassVar[_NoDefault | None]" = None

    def __new__(cls) -> "_NoDefault":
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __reduce__(self) -> str:
        return "NO_DEFAULT"


#: ``FieldSchema.default`` when the wire field has no ``default`` member.
NO_DEFAULT: Any = _NoDefault()


@attrs.frozen
class FieldSchema:
    """One FieldSchema: ``type`` a field type (``string`` … ``array``);
    ``default`` :data:`NO_DEFAULT` when absent; ``values`` exactly for
    ``enum``; ``items`` exactly for ``array``."""

    type: str
    required: bool = False
    default: Any = NO_DEFAULT
    values: tuple[str, ...] | None = None
    items: "FieldSchema | None" = None
    label: str | None = None
    description: str | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


#: A contract: field name → :class:`FieldSchema`, keys in sorted order.
Contract = dict


#: Default values a decoded FieldSchema may share with an equal one (with
#: the value's type: ``1 == True`` but they are different defaults).
_SHARED_DEFAULTS = frozenset({str, int, bool, _NoDefault, type(None)})


def field_from_json(d: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> FieldSchema:
    """FieldSchema JSON → :class:`FieldSchema` (iterative over ``items``).
    ``memo`` (one decoding's): equal FieldSchemas with scalar defaults are
    one object, as lowering shares them."""
    chain = []
    cur: Any = d
    while type(cur) is dict:
        chain.append(cur)
        cur = cur.get("items")
    out: FieldSchema | None = None
    for f in reversed(chain):
        vals = f.get("values")
        default = f.get("default", NO_DEFAULT)
        # ``items`` by identity: it is itself shared (or held by what is)
        key = ("field", f["type"], f["required"], type(default), default, None if vals is None else tuple(vals),
               None if out is None or "items" not in f else id(out), f.get("label"), f.get("description"))
        got = None if memo is None or key[3] not in _SHARED_DEFAULTS else memo.get(key)
        if got is None:
            got = FieldSchema(key[1], key[2], default, key[5], out if "items" in f else None, key[7], key[8])
            if memo is not None and key[3] in _SHARED_DEFAULTS:
                memo[key] = got
        out = got
    assert out is not None
    return out


def contract_from_json(c: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> dict[str, FieldSchema]:
    """Contract JSON → ``{name: FieldSchema}`` in sorted name order.  With
    ``memo`` (as :func:`field_from_json`) equal contracts are one (read-only)
    dict."""
    if memo is None:
        return {k: field_from_json(c[k]) for k in sorted(c)}
    fields = [(k, field_from_json(c[k], memo)) for k in sorted(c)]
    key = ("contract", *[(k, id(f)) for k, f in fields])
    got = memo.get(key)
    if got is None:
        got = memo[key] = dict(fields)
    return got


def _bind_from(d: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> dict[str, Instr]:
    return {k: instr_from_json(d[k], memo) for k in sorted(d)}
