"""The declared artifact surface (docs/ir.md#strict-decoder-and-verify):
one description of every wire object with the version that introduced each
field, variant and enum value (``since``); node configs come from the
node-kind registry (:data:`CONFIGS`).  :data:`ARTIFACT` is the root,
:data:`DEFS` the named definitions.  Re-exported by :mod:`loopc.ir.surface`."""
from __future__ import annotations


from loopc.kinds import MAX_ATTEMPTS
from loopc.kinds import tables as _kind_tables
from loopc.kinds.spec import (
    BIND, CONTRACT, DIGEST, DURATION, FIELD_KEY, ID, PORT, TEXT, AnyJson, Arr, Bool, ByType, F, InstrArr,
    Int, MapOf, Null, Obj, Ref, Spec, Str, Tagged,
)
from loopc.kinds.spec import FAILURE_ACTIONS as _ACTIONS
from loopc.kinds.spec import FIELD_TYPES as _FIELD_TYPES
from loopc.kinds.spec import REF_ROOTS as _REF_ROOTS


#: FieldSchema types by the version that introduced them (oldest first).
FIELD_TYPES = dict(sorted(_FIELD_TYPES.items(), key=lambda kv: kv[1]))
TYPE_KINDS = {k: v for k, v in FIELD_TYPES.items() if k != "array"} | {"null": 1, "unknown": 1}

REF_ROOTS = _REF_ROOTS
BINARY_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "contains", "startsWith", "endsWith")
NARY_OPS = ("and", "or")
UNARY_OPS = ("not", "length")
INSTR_OPS = ("lit", "ref", "array", "object", "template") + BINARY_OPS + NARY_OPS + UNARY_OPS

#: Opcodes (and their ``since``) and retry-capable opcodes: from the node-kind registry.
_T = _kind_tables()
#: Opcode → the artifact version that introduced it (the registry's).
NODE_OPS = _T.node_ops
RETRY_OPS = tuple(op for op in NODE_OPS if op in _T.retry_capable)


def _enum_xor(d: dict) -> bool:
    return (d.get("type") == "enum") == ("values" in d)


def _array_xor(d: dict) -> bool:
    return (d.get("type") == "array") == ("items" in d)


FIELD_SCHEMA = Obj(
    {
        "type": F(Str(enum=FIELD_TYPES)),
        "required": F(Bool()),
        "default": F(AnyJson(), required=False),
        "values": F(Arr(TEXT, min_items=1), required=False),
        "items": F(Ref("FieldSchema"), required=False),
        "label": F(TEXT, required=False, annotation=True),
        "description": F(TEXT, required=False, annotation=True),
    },
    checks=(
        ("'values' is present exactly when type is enum", _enum_xor),
        ("'items' is present exactly when type is array", _array_xor),
    ),
    schema_extra={
        "allOf": [
            {"if": {"properties": {"type": {"const": "enum"}}}, "then": {"required": ["values"]},
             "else": {"not": {"required": ["values"]}}},
            {"if": {"properties": {"type": {"const": "array"}}}, "then": {"required": ["items"]},
             "else": {"not": {"required": ["items"]}}},
        ]
    },
)

#: Operand shapes per instruction op: (min operands, max operands or None).
INSTR_ARITY: dict[str, tuple[int, int | None]] = {
    **{op: (2, 2) for op in BINARY_OPS},
    **{op: (2, None) for op in NARY_OPS},
    **{op: (1, 1) for op in UNARY_OPS},
    "array": (1, None),
    "template": (0, None),
}
INSTR_SPEC = InstrArr(TYPE_KINDS, REF_ROOTS)

SCOPE_REF = Tagged(
    "kind",
    {
        "fork": (Obj({"owner": F(ID), "branch": F(PORT)}), 1),
        "all_match": (Obj({"owner": F(ID), "branch": F(PORT)}), 1),
        "fan_out": (Obj({"owner": F(ID)}), 4),
        "loop": (Obj({"owner": F(ID)}), 1),
    },
)

_NULLABLE_ID = ByType({"str": (ID, 1), "null": (Null(), 1)})

SCOPE_DECL = Tagged(
    "kind",
    {
        "fork": (Obj({"owner": F(ID), "branches": F(Arr(PORT, min_items=1)), "join": F(_NULLABLE_ID)}), 1),
        "all_match": (Obj({"owner": F(ID), "branches": F(Arr(PORT, min_items=1)), "join": F(_NULLABLE_ID)}), 1),
        "fan_out": (Obj({"owner": F(ID), "join": F(_NULLABLE_ID)}), 4),
        "loop": (Obj({"owner": F(ID)}), 1),
    },
)

_DISPOSITIONS = {
    "fail_plan": (Obj({}), _ACTIONS["fail_plan"]),
    "fail_branch": (Obj({"owner": F(ID), "branch": F(PORT), "join": F(_NULLABLE_ID)}), _ACTIONS["fail_branch"]),
    "fail_item": (Obj({"owner": F(ID), "join": F(_NULLABLE_ID)}), _ACTIONS["fail_item"]),
}
#: What an arrival at a failed End does (on the arriving edge).
DISPOSITION = Tagged("action", _DISPOSITIONS)
#: The lowered route of an omitted ``failed``/``timed_out`` port; ``never``
#: marks a fan-out join's ``failed`` port, which never fires.
IMPLICIT_ROUTE = Tagged(
    "action", {**_DISPOSITIONS, "never": (Obj({}), _ACTIONS["never"])},
    common={"status": F(Str(enum={"failed": 1, "timed_out": 1}))},
)

SOURCE_PORT = Obj(
    {
        "name": F(PORT),
        "output": F(ByType({"dict": (CONTRACT, 1), "null": (Null(), 1)})),
        "edge": F(ID, required=False),
        "implicit": F(Ref("ImplicitRoute"), required=False),
    },
    checks=(("a source port has exactly one of 'edge' and 'implicit'",
             lambda d: ("edge" in d) != ("implicit" in d)),),
    schema_extra={"oneOf": [{"required": ["edge"]}, {"required": ["implicit"]}]},
)
TARGET_PORT = Obj({
    "name": F(Str(enum={"in": 1, "continue": 1, "break": 1})),
    "edges": F(Arr(ID)),
})
PORTS = Obj({"source": F(Arr(Ref("SourcePort"))), "target": F(Arr(Ref("TargetPort"), min_items=1))})
STATE_FIELDS = Arr(Str(pattern=r"^[a-z][a-z0-9_]{0,63}$"))
NODE_EFFECTS = Obj({"reads": F(STATE_FIELDS), "writes": F(STATE_FIELDS), "watches": F(STATE_FIELDS)})
EDGE_EFFECTS = Obj({"reads": F(STATE_FIELDS)})
RETRY = Obj({"maxAttempts": F(Int(1, MAX_ATTEMPTS)), "backoff": F(DURATION)})


#: Wire config object of every opcode, declared by its kind (:mod:`loopc.kinds`).
CONFIGS: dict[str, Obj] = {op: k.wire for op, k in _T.kinds.items()}


CONFIG_NAMES = {op: "Config_" + op for op in CONFIGS}


def _node_variant(op: str) -> Obj:
    fields = {
        "id": F(ID),
        "label": F(TEXT, required=False, annotation=True),
        "description": F(TEXT, required=False, annotation=True),
        "input": F(CONTRACT),
        "ports": F(Ref("Ports")),
        "scope": F(Arr(Ref("ScopeRef"))),
        "effects": F(Ref("NodeEffects")),
        "config": F(Ref(CONFIG_NAMES[op])),
    }
    if op in RETRY_OPS:
        fields["retry"] = F(Ref("Retry"))
    return Obj(fields)


NODE = Tagged("op", {op: (_node_variant(op), since) for op, since in NODE_OPS.items()})

ENDPOINT = Obj({"node": F(ID), "port": F(PORT)})
EDGE = Obj({
    "id": F(ID),
    "label": F(TEXT, required=False, annotation=True),
    "from": F(ENDPOINT),
    "to": F(ENDPOINT),
    "bind": F(BIND),
    "scope": F(Arr(Ref("ScopeRef"))),
    "effects": F(EDGE_EFFECTS),
    "disposition": F(Ref("Disposition"), required=False),
})

PLAN = Obj({
    "input": F(CONTRACT),
    "output": F(CONTRACT),
    "state": F(CONTRACT),
    "entry": F(Obj({"node": F(ID), "bind": F(BIND)})),
    "nodes": F(Arr(Ref("Node"), min_items=1)),
    "edges": F(Arr(Ref("Edge"))),
    "scopes": F(Arr(Ref("ScopeDecl"))),
})

ARTIFACT = Obj({
    "artifactVersion": F(Str(pattern=r"^loop\.plan\.artifact/v[1-9][0-9]*$")),
    "compilerVersion": F(Str(pattern=r"^loop\.plan\.compiler/v[1-9][0-9]*$")),
    "sourceVersion": F(Str(enum={"loop.plan/v1": 1})),
    "digest": F(DIGEST),
    "plan": F(PLAN),
})

DEFS: dict[str, Spec] = {
    "Instr": INSTR_SPEC,
    "Contract": MapOf(Ref("FieldSchema"), key_pattern=FIELD_KEY),
    "FieldSchema": FIELD_SCHEMA,
    "Node": NODE,
    "Edge": EDGE,
    "Ports": PORTS,
    "SourcePort": SOURCE_PORT,
    "TargetPort": TARGET_PORT,
    "ImplicitRoute": IMPLICIT_ROUTE,
    "Disposition": DISPOSITION,
    "ScopeRef": SCOPE_REF,
    "ScopeDecl": SCOPE_DECL,
    "NodeEffects": NODE_EFFECTS,
    "Retry": RETRY,
    **{CONFIG_NAMES[op]: cfg for op, cfg in CONFIGS.items()},
}
