"""JSON Schema generation from the artifact surface: :func:`json_schema`
(the vendored ``docs/schema/loop.plan.artifact.vN.schema.json``,
docs/ir.md#goldens-and-schemas) and :func:`iter_specs`.  Re-exported by
:mod:`loopc.ir.surface`."""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from loopc.ir.surface.declarations import ARTIFACT, DEFS, INSTR_ARITY, INSTR_OPS
from loopc.ir.versions import VERSIONS
from loopc.kinds.spec import (
    AnyJson, Arr, Bool, ByType, F, InstrArr,
    Int, MapOf, Null, Obj, Ref, Spec, Str, Tagged, TypeDesc,
)


def _schema(s: Spec, version: int) -> Any:
    if isinstance(s, Ref):
        return {"$ref": f"#/$defs/{s.name}"}
    if isinstance(s, Str):
        out: dict[str, Any] = {"type": "string"}
        if s.enum is not None:
            vals = [k for k, sv in s.enum.items() if sv <= version]
            out = {"enum": vals} if len(vals) != 1 else {"const": vals[0]}
        if s.pattern is not None:
            out["pattern"] = s.pattern
        return out
    if isinstance(s, Int):
        out = {"type": "integer"}
        if s.minimum is not None:
            out["minimum"] = s.minimum
        if s.maximum is not None:
            out["maximum"] = s.maximum
        return out
    if isinstance(s, Bool):
        return {"const": s.const} if s.const is not None else {"type": "boolean"}
    if isinstance(s, Null):
        return {"type": "null"}
    if isinstance(s, AnyJson):
        return {}
    if isinstance(s, Arr):
        out = {"type": "array", "items": _schema(s.items, version)}
        if s.min_items:
            out["minItems"] = s.min_items
        if s.max_items is not None:
            out["maxItems"] = s.max_items
        return out
    if isinstance(s, MapOf):
        out = {"type": "object", "additionalProperties": _schema(s.values, version)}
        if s.key_pattern:
            out["propertyNames"] = {"pattern": s.key_pattern}
        return out
    if isinstance(s, Obj):
        return _obj_schema(s.fields, s, version)
    if isinstance(s, Tagged):
        tags = [k for k, (_, sv) in s.variants.items() if sv <= version]
        branches = []
        for k in tags:
            obj, _ = s.variants[k]
            fields = dict(s.common)
            fields.update(obj.fields)
            fields[s.tag] = F(Str(enum={k: 1}))
            branches.append({
                "if": {"properties": {s.tag: {"const": k}}, "required": [s.tag]},
                "then": _obj_schema(fields, obj, version),
            })
        return {
            "type": "object",
            "required": [s.tag],
            "properties": {s.tag: {"enum": tags}},
            "allOf": branches,
        }
    if isinstance(s, ByType):
        alts = []
        for k, (sub, sv) in s.alts.items():
            if sv <= version:
                sch = _schema(sub, version)
                if isinstance(sub, Ref):
                    sch = {"allOf": [sch], "type": {"list": "array", "dict": "object",
                                                    "null": "null", "str": "string"}[k]}
                alts.append(sch)
        return alts[0] if len(alts) == 1 else {"oneOf": alts}
    if isinstance(s, TypeDesc):
        return _typedesc_schema(s.kinds, version)
    if isinstance(s, InstrArr):
        return _instr_schema(s, version)
    raise AssertionError(s)  # pragma: no cover


def _typedesc_schema(kinds: Mapping[str, int], version: int) -> dict[str, Any]:
    ks = sorted(k for k, sv in kinds.items() if sv <= version)
    return {"type": "string", "pattern": r"^(array<)*(" + "|".join(ks) + r")>*$"}


def _instr_schema(s: InstrArr, version: int) -> dict[str, Any]:
    me = {"$ref": "#/$defs/Instr"}
    roots = [k for k, sv in s.roots.items() if sv <= version]

    def when(ops: Iterable[str], then: dict[str, Any]) -> dict[str, Any]:
        ops = list(ops)
        cond = {"const": ops[0]} if len(ops) == 1 else {"enum": ops}
        return {"if": {"prefixItems": [cond]}, "then": then}

    def operands(lo: int, hi: int | None, item: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"prefixItems": [{}, {}], "items": item, "minItems": 2 + lo}
        if hi is not None:
            out["maxItems"] = 2 + hi
        return out

    branches = [
        when(["lit"], {"minItems": 3, "maxItems": 3}),
        when(["ref"], {"prefixItems": [{}, {}, {"enum": roots}], "items": {"type": "string"}, "minItems": 3}),
        when(["object"], {"prefixItems": [{}, {}], "items": {"anyOf": [{"type": "string"}, me]},
                          "minItems": 4}),
    ]
    groups: dict[tuple[int, int | None], list[str]] = {}
    for op, ar in INSTR_ARITY.items():
        groups.setdefault(ar, []).append(op)
    for (lo, hi), ops in groups.items():
        branches.append(when(ops, operands(lo, hi, me)))
    return {
        "type": "array",
        "minItems": 2,
        "prefixItems": [{"enum": list(INSTR_OPS)}, _typedesc_schema(s.kinds, version)],
        "allOf": branches,
    }


def _obj_schema(fields: Mapping[str, F], obj: Obj, version: int) -> dict[str, Any]:
    props = {k: _schema(f.spec, version) for k, f in fields.items() if f.since <= version}
    req = [k for k, f in fields.items() if f.required and f.since <= version]
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if req:
        out["required"] = req
    if obj.schema_extra:
        extra = _filter_extra(obj.schema_extra, set(props))
        out.update(extra)
    return out


def _filter_extra(extra: Mapping[str, Any], present: set[str]) -> dict[str, Any]:
    """Drop ``oneOf`` alternatives that name fields absent in this version."""
    out = dict(extra)
    one = out.get("oneOf")
    if one is not None:
        kept = [alt for alt in one if set(alt.get("required", ())) <= present]
        if len(kept) == 1:
            del out["oneOf"]
            out.setdefault("allOf", [])
            out["allOf"] = list(out["allOf"]) + [kept[0]]
        else:
            out["oneOf"] = kept
    return out


def json_schema(version: int) -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of ``loop.plan.artifact/v<version>``.
    Cross-field rules of :mod:`loopc.ir.decoder` (sorted ids, references) are
    documented in docs/ir.md but not expressed here."""
    if version not in VERSIONS:
        raise ValueError(f"unknown artifact version {version}")
    top = _schema(ARTIFACT, version)
    top["properties"]["artifactVersion"] = {"const": f"loop.plan.artifact/v{version}"}
    top["properties"]["compilerVersion"] = {"const": f"loop.plan.compiler/v{version}"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://loopc.dev/schema/loop.plan.artifact.v{version}.schema.json",
        "title": f"loop.plan.artifact/v{version}",
        "description": "Compiled loop.plan/v1 artifact (see docs/ir.md). Generated by "
                       "`python tools/regen.py`; do not edit.",
        **top,
        "$defs": {name: _schema(spec, version) for name, spec in DEFS.items()},
    }


def iter_specs() -> Iterable[tuple[str, Spec]]:
    """(name, spec) of the named definitions (for coverage tests)."""
    return DEFS.items()
