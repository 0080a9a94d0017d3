"""JSON Schema of the ``loop.plan/v1`` source (syntax sheet §1–§5), vendored
as ``docs/schema/loop.plan.source.v1.schema.json`` so that editors running
yaml-language-server get completion and structural validation without
loopc's own language server.

Draft-07 (the draft yaml-language-server supports best).  The schema is
structural only: closed mappings, key names, value shapes, node-type
discrimination and literal bounds.  Types of expressions, references,
graph rules and budgets are loopc's job (``loopc check``).

Use it with a modeline in a plan file::

    # yaml-language-server: $schema=../docs/schema/loop.plan.source.v1.schema.json

(the modeline is a comment, so it must come after the two header lines).
"""
from __future__ import annotations

from typing import Any

IDENT = r"^[a-z][a-z0-9_]{0,63}$"
DURATION = r"^P(?:[0-9]+D)?(?:T(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+(?:\.[0-9]+)?S)?)?$"
FIELD_TYPES = [
    "string", "enum", "number", "boolean", "duration", "datetime", "object", "array", "scope",
    "channel", "member", "agent", "work_items", "responder",
]


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/definitions/{name}"}


def _obj(props: dict[str, Any], required: list[str] | None = None, desc: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    if desc:
        out["description"] = desc
    return out


def _d(schema: dict[str, Any], desc: str) -> dict[str, Any]:
    return {**schema, "description": desc}


def source_schema() -> dict[str, Any]:
    """The source JSON Schema as a Python dict (deterministic)."""
    ident = {"type": "string", "pattern": IDENT}
    template = _d({"type": "string"}, "A template: text with `{{ expression }}` interpolations.")
    expression = _d({"type": "string"}, "A bounded expression (no `{{ }}`), e.g. `input.severity == 'high'`.")
    value = _ref("ValueExpr")
    retry = _obj({
        "maxAttempts": {"type": "integer", "minimum": 1, "maximum": 100},
        "backoff": {"type": "string", "pattern": DURATION},
    }, ["maxAttempts", "backoff"], "Retry policy; omitted means {maxAttempts: 1, backoff: PT1S}.")
    send = _obj({
        "target": _d({"type": "string"}, "Target string: #slug, dm:@handle, task:<id>, team:@handle (template)."),
        "scope": _d(value, "Destination scope (ValueExpr resolving to a scope)."),
        "text": template,
        "completion": {"enum": ["sent", "callback"]},
        "startThread": _d({"type": "boolean"}, "sent only: open a child Thread on a Channel root."),
        "responder": _d(value, "callback only: the Agent (agent- or responder-typed) that answers."),
        "callbackOutput": _ref("Contract"),
        "workScope": _d({"anyOf": [{"type": "null"}, value]}, "callback only; null lets the Agent choose."),
        "relatedScopes": {"anyOf": [{"type": "array", "items": value, "maxItems": 64}, value]},
        "workItems": _obj({"allowedResponders": value}, ["allowedResponders"]),
    }, ["text", "completion"])
    send["oneOf"] = [{"required": ["target"]}, {"required": ["scope"]}]
    wait = _obj({
        "condition": expression,
        "duration": _d(value, "A pure timer (ISO 8601 duration)."),
        "timeout": _d(value, "Optional deadline for a condition; enables the timed_out port."),
    })
    wait["oneOf"] = [{"required": ["condition"]}, {"required": ["duration"]}]
    configs: dict[str, tuple[str, dict[str, Any]]] = {
        "send_message": ("sendMessage", send),
        "set_variable": ("setVariable", _obj({
            "assign": {"type": "object", "propertyNames": {"pattern": IDENT}, "additionalProperties": value},
        }, ["assign"])),
        "wait": ("wait", wait),
        "request_approval": ("requestApproval", _obj({
            "assignee": template, "summary": template,
            "feedbackScope": _d(value, "Optional scope where a decision comment is posted."),
        }, ["assignee", "summary"])),
        "switch": ("switch", _obj({
            "mode": {"enum": ["first_match", "all_match"]},
            "cases": {"type": "array", "minItems": 1,
                      "items": _obj({"port": ident, "when": expression}, ["port", "when"])},
            "default": ident,
        }, ["mode", "cases", "default"])),
        "fork": ("fork", _obj({
            "branches": {"type": "array", "minItems": 2, "uniqueItems": True, "items": ident},
        }, ["branches"])),
        "join": ("join", {**_obj({
            "forkId": ident, "fanOutId": ident, "mode": {"enum": ["all", "any"]},
            "result": _ref("Contract"),
            "merge": {"type": "object", "additionalProperties": value},
        }, ["mode", "result", "merge"]), "oneOf": [{"required": ["forkId"]}, {"required": ["fanOutId"]}]}),
        "fan_out": ("fanOut", _obj({
            "items": value,
            "maxConcurrency": {"type": "integer", "minimum": 1, "maximum": 64},
            "failureMode": {"const": "collect"},
        }, ["items"])),
        "loop": ("loop", _obj({
            "mode": {"const": "counted"},
            "iterations": {"type": "integer", "minimum": 1, "maximum": 10000},
            "state": _ref("Contract"),
            "init": {"type": "object", "additionalProperties": value},
        }, ["mode", "iterations", "state", "init"])),
        "end": ("end", _obj({
            "status": {"enum": ["succeeded", "failed"]},
            "code": {"type": "string", "pattern": r"^[a-z][a-z0-9_.]{0,63}$"},
            "detail": template,
        }, ["status"])),
    }
    common = {
        "id": ident,
        "type": {"enum": list(configs)},
        "label": {"type": "string"},
        "description": {"type": "string"},
        "input": _ref("Contract"),
        "retry": retry,
    }
    node_props = dict(common)
    branches = []
    for t, (key, cfg) in configs.items():
        node_props[key] = cfg
        allowed = ["id", "type", "label", "description", "input", key]
        if t in ("send_message", "wait", "request_approval"):
            allowed.append("retry")
        branches.append({
            "if": {"properties": {"type": {"const": t}}, "required": ["type"]},
            "then": {"required": [key], "propertyNames": {"enum": allowed}},
        })
    node = {"type": "object", "properties": node_props, "additionalProperties": False,
            "required": ["id", "type"], "allOf": branches}
    endpoint_from = _obj({"node": ident, "port": ident}, ["node", "port"])
    endpoint_to = _obj({"node": ident, "port": {"enum": ["in", "continue", "break"]}}, ["node"])
    edge = _obj({
        "id": ident, "from": endpoint_from, "to": endpoint_to,
        "bind": {"type": "object", "propertyNames": {"pattern": IDENT}, "additionalProperties": value},
        "label": {"type": "string"},
    }, ["id", "from", "to"])
    field_schema = _obj({
        "type": {"enum": FIELD_TYPES},
        "required": {"type": "boolean"},
        "default": {},
        "values": {"type": "array", "minItems": 1, "uniqueItems": True, "items": {"type": "string"}},
        "items": _ref("FieldSchema"),
        "label": {"type": "string"},
        "description": {"type": "string"},
    }, ["type"])
    field_schema["allOf"] = [
        {"if": {"properties": {"type": {"const": "enum"}}}, "then": {"required": ["values"]}},
        {"if": {"properties": {"type": {"const": "array"}}}, "then": {"required": ["items"]}},
    ]
    value_expr = {
        "description": "A ValueExpr: a literal, a list/map constructor, {ref: path}, {expr: \"...\"}, "
                       "{literal: value} or a template string.",
        "anyOf": [
            {"type": ["string", "number", "boolean", "null"]},
            {"type": "array", "items": _ref("ValueExpr")},
            _obj({"ref": {"type": "string"}}, ["ref"]),
            _obj({"expr": {"type": "string"}}, ["expr"]),
            _obj({"literal": {}}, ["literal"]),
            {"type": "object", "not": {"anyOf": [{"required": ["ref"]}, {"required": ["expr"]},
                                                  {"required": ["literal"]}],
                                       "maxProperties": 1},
             "additionalProperties": _ref("ValueExpr")},
        ],
    }
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "https://loopc.dev/schema/loop.plan.source.v1.schema.json",
        "title": "loop.plan/v1 source",
        "description": "Structural schema of a loop.plan/v1 PlanVersion (see docs/reference.md). Generated by "
                       "`python -m loopc.ir.golden --update`; loopc check is the authority.",
        "type": "object",
        "additionalProperties": False,
        "required": ["apiVersion", "kind", "input", "output", "entry", "nodes", "edges"],
        "properties": {
            "apiVersion": {"const": "loop.plan/v1"},
            "kind": {"const": "PlanVersion"},
            "input": _d(_ref("Contract"), "Plan input contract."),
            "output": _d(_ref("Contract"), "Plan output contract."),
            "state": _d(_ref("Contract"), "Typed Run state; every field has a default."),
            "entry": _d(ident, "Id of the entry node."),
            "nodes": {"type": "array", "items": _ref("Node")},
            "edges": {"type": "array", "items": _ref("Edge")},
        },
        "definitions": {
            "Contract": {"type": "object", "propertyNames": {"pattern": IDENT},
                         "additionalProperties": _ref("FieldSchema")},
            "FieldSchema": field_schema,
            "ValueExpr": value_expr,
            "Node": node,
            "Edge": edge,
        },
    }
