"""Artifact and compiler envelope versions (docs/ir.md#envelope-and-versions:
readers first, each version kept as it was).

``loop.plan.artifact/vN`` for N in :data:`VERSIONS`; the compiler envelope
``loop.plan.compiler/vN`` always carries the same N.  The emitted version is
the lowest one whose closed surface accepts the lowered artifact, i.e. the
highest version whose feature the plan uses (see :mod:`loopc.ir.surface`,
where every field, variant and enum value carries the version that introduced
it).  It is counted where the artifact is read or written, from those
declarations: the surface walk counts what it reads
(:func:`loopc.ir.surface.required_version`), the encoder what it writes
(:func:`loopc.ir.model.encode_plan`), :func:`loopc.ir.instr.scan_instrs`
the instruction trees (with :func:`desc_version` and the roots below).  What each version introduced is listed in docs/ir.md#envelope-and-versions,
a table generated from those declarations (``python tools/regen.py``).

:data:`VERSIONS` is derived: 1 to the newest ``since`` that the node-kind
registry (:mod:`loopc.kinds`: opcodes, config fields, union variants, enum
values, FieldSchema types) or the reference roots and failure actions below
declare, so a field introduced at a new version brings the version with it
(docs/architecture.md#add-one-field-to-one-node-kind).
"""
from __future__ import annotations

import re

from loopc.kinds import tables as _kind_tables
from loopc.kinds.spec import (
    FAILURE_ACTIONS, FIELD_TYPES, REF_ROOTS, Arr, ByType, F, InstrArr, MapOf, Obj, Spec, Str, Tagged, TypeDesc,
)

__all__ = [
    "LATEST", "VERSIONS", "SOURCE_API_VERSION", "artifact_version", "compiler_version",
    "parse_artifact_version", "parse_compiler_version",
]

#: Reference roots and failure actions newer than v1 (declared with the
#: spec vocabulary, :mod:`loopc.kinds.spec`, like the rest of the surface).
_ROOT_V = {r: v for r, v in REF_ROOTS.items() if v > 1}
_ACTION_V = {a: v for a, v in FAILURE_ACTIONS.items() if v > 1}


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
# Instruction trees (loopc.ir.instr.scan_instrs): type descriptors and roots
# ---------------------------------------------------------------------------

_KIND_V = {t: v for t, v in FIELD_TYPES.items() if v > 1}


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
