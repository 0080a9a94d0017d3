"""Artifact and compiler envelope versions (docs/ir.md#envelope-and-versions:
readers first, each version kept as it was).

``loop.plan.artifact/vN`` for N in :data:`VERSIONS`; the compiler envelope
``loop.plan.compiler/vN`` always carries the same N.  The emitted version is
the lowest one whose closed surface accepts the lowered artifact, i.e. the
highest version whose feature the plan uses (see :mod:`loopc.ir.surface`,
where every field, variant and enum value carries the version that introduced
it).  What each version introduced is listed in docs/ir.md#envelope-and-versions,
a table generated from those declarations (``python tools/regen.py``).

:data:`VERSIONS` is derived: 1 to the newest ``since`` that the node-kind
registry (:mod:`loopc.kinds`: opcodes, config fields, union variants, enum
values, FieldSchema types) or the reference roots and failure actions below
declare, so a field introduced at a new version brings the version with it
(docs/architecture.md#add-one-field-to-one-node-kind).
"""
from __future__ import annotations

import re
from typing import Any

from loopc.kinds import tables as _kind_tables
from loopc.kinds.base import attr_name
from loopc.kinds.spec import CONTRACT, FIELD_TYPES, Arr, ByType, F, InstrArr, MapOf, Obj, Spec, Str, Tagged, TypeDesc

__all__ = [
    "LATEST", "VERSIONS", "SOURCE_API_VERSION", "artifact_version", "compiler_version",
    "parse_artifact_version", "parse_compiler_version",
]

#: Reference roots and failure actions newer than v1 (the rest of the
#: artifact surface is declared by the registry).
_ROOT_V = {"item": 4, "items": 4}
_ACTION_V = {"fail_item": 4, "never": 4}


def _newest(spec: Spec | F) -> int:
    """The newest ``since`` inside a wire spec (iterative)."""
    v = 1
    todo: list[Spec | F] = [spec]
    while todo:
        s = todo.pop()
        if isinstance(s, F):
            v = max(v, s.since)
            todo.append(s.spec)
        elif isinstance(s, Obj):
            todo.extend(s.fields.values())
        elif isinstance(s, Tagged):
            for obj, since in s.variants.values():
                v = max(v, since)
                todo.append(obj)
            todo.extend(s.common.values())
        elif isinstance(s, ByType):
            for alt, since in s.alts.values():
                v = max(v, since)
                todo.append(alt)
        elif isinstance(s, (Arr, MapOf)):
            todo.append(s.items if isinstance(s, Arr) else s.values)
        elif isinstance(s, Str) and s.enum:
            v = max(v, *s.enum.values())
        elif isinstance(s, (InstrArr, TypeDesc)):
            v = max(v, *s.kinds.values())
    return v


def _latest() -> int:
    return max(
        max(FIELD_TYPES.values()), max(_ROOT_V.values()), max(_ACTION_V.values()),
        *(max(k.since, _newest(k.wire)) for k in _kind_tables().kinds.values()),
    )


VERSIONS = tuple(range(1, _latest() + 1))
LATEST = VERSIONS[-1]
SOURCE_API_VERSION = "loop.plan/v1"
ARTIFACT_PREFIX = "loop.plan.artifact/v"
COMPILER_PREFIX = "loop.plan.compiler/v"

_ART_RE = re.compile(r"loop\.plan\.artifact/v([1-9][0-9]*)\Z")
_COMP_RE = re.compile(r"loop\.plan\.compiler/v([1-9][0-9]*)\Z")


def artifact_version(n: int) -> str:
    """``loop.plan.artifact/v<n>``."""
    return f"{ARTIFACT_PREFIX}{n}"


def compiler_version(n: int) -> str:
    """``loop.plan.compiler/v<n>``."""
    return f"{COMPILER_PREFIX}{n}"


def parse_artifact_version(s: object) -> int | None:
    """N of ``loop.plan.artifact/vN`` when N is a known version, else ``None``."""
    if isinstance(s, str):
        m = _ART_RE.match(s)
        if m and int(m.group(1)) in VERSIONS:
            return int(m.group(1))
    return None


def parse_compiler_version(s: object) -> int | None:
    """N of ``loop.plan.compiler/vN`` when N is a known version, else ``None``."""
    if isinstance(s, str):
        m = _COMP_RE.match(s)
        if m and int(m.group(1)) in VERSIONS:
            return int(m.group(1))
    return None


# ---------------------------------------------------------------------------
# Fast version selection for the compiler
# ---------------------------------------------------------------------------

_FIELD_TYPE_V = {t: v for t, v in FIELD_TYPES.items() if v > 1}
_KIND_V = _FIELD_TYPE_V


def _op_table() -> dict[str, tuple[int, dict[str, int], dict[str, tuple[str, dict[str, int]]],
                                   dict[str, Any], tuple[str, ...]]]:
    """Per opcode, read off its kind's wire surface (:mod:`loopc.kinds`): the
    opcode's version, config fields newer than v1, tagged fields (tag name,
    variant → version), enum fields with newer values, contract fields."""
    out = {}
    for op, k in _kind_tables().kinds.items():
        newer: dict[str, int] = {}
        tagged: dict[str, tuple[str, dict[str, int]]] = {}
        enums: dict[str, Any] = {}
        contracts: list[str] = []
        for name, f in k.wire.fields.items():
            if f.since > 1:
                newer[name] = f.since
            sp = f.spec
            if isinstance(sp, Tagged):
                tagged[name] = (sp.tag, {t: since for t, (_, since) in sp.variants.items()})
            elif isinstance(sp, Str) and sp.enum and max(sp.enum.values()) > 1:
                enums[name] = sp.enum
            elif sp == CONTRACT:
                contracts.append(name)
        out[op] = (k.since, newer, tagged, enums, tuple(contracts))
    return out


_OPS = _op_table()


def desc_version(desc: str, cache: dict[str, int] | None = None) -> int:
    """Version a type descriptor needs (``array<scope>`` → 2)."""
    if cache is not None:
        got = cache.get(desc)
        if got is not None:
            return got
    leaf = desc
    while leaf.startswith("array<"):
        leaf = leaf[6:-1]
    v = _KIND_V.get(leaf, 1)
    if cache is not None:
        cache[desc] = v
    return v


def _contract_version(c: Any) -> int:
    v = 1
    for fs in c.values():
        cur = fs
        while cur is not None:
            fv = _FIELD_TYPE_V.get(cur.type, 1)
            if fv > v:
                v = fv
            cur = cur.items
    return v


_MODEL_OPS: dict[str, tuple[int, list[tuple[str, bool, int | None, Any, Any, bool]]]] = {}


def _model_op(op: str) -> tuple[int, list[tuple[str, bool, int | None, Any, Any, bool]]]:
    """``_OPS[op]`` read onto the typed config class's members: the opcode's
    version and, per member that can raise it, (attribute, required, version
    of the field when newer than v1, (tag attribute, variant versions) of a
    tagged field, enum versions, whether it is a contract).  The members are
    the kind's wire fields named by :func:`loopc.kinds.base.attr_name`, as
    :mod:`loopc.ir.model` derives its config classes from the same
    declarations, so this module never imports the model (which imports it)."""
    got = _MODEL_OPS.get(op)
    if got is None:
        since, newer, tagged, enums, contracts = _OPS[op]
        rows = []
        for wire, f in _kind_tables().kinds[op].wire.fields.items():
            tag = tagged.get(wire)
            row = (attr_name(wire), f.required, newer.get(wire),
                   None if tag is None else (attr_name(tag[0]), tag[1]), enums.get(wire), wire in contracts)
            if any(x is not None and x is not False for x in row[2:]):
                rows.append(row)
        got = _MODEL_OPS[op] = (since, rows)
    return got


def structural_version(plan: Any) -> int:
    """Version needed by everything in a lowered plan (the typed
    :class:`loopc.ir.model.Plan`) except instruction trees (see
    :func:`loopc.ir.instr.scan_instrs`): contract types, opcodes and config
    fields as the encoder writes them, dispositions.  Must agree with
    :func:`loopc.ir.surface.required_version` (tested on every golden)."""
    v = max(_contract_version(plan.input), _contract_version(plan.output),
            _contract_version(plan.state))
    for n in plan.nodes:
        c = n.config
        since, rows = _model_op(c.OP)
        if since > v:
            v = since
        if n.input:
            v = max(v, _contract_version(n.input))
        for p in n.source_ports:
            if p.output:
                v = max(v, _contract_version(p.output))
            if p.implicit is not None:
                v = max(v, _ACTION_V.get(p.implicit.action, 1))
        for name, required, fv, tag, enum, contract in rows:
            x = getattr(c, name)
            if not required and (x is None or x is False):
                continue  # not written (model.config_to_json)
            if fv is not None and fv > v:
                v = fv
            if x is None:
                continue
            if tag is not None:
                v = max(v, tag[1].get(getattr(x, tag[0]), 1))
            if enum is not None:
                v = max(v, enum.get(x, 1))
            if contract:
                v = max(v, _contract_version(x))
    for e in plan.edges:
        d = e.disposition
        if d is not None:
            v = max(v, _ACTION_V.get(d.action, 1))
    return v
