"""JSON Schema (2020-12) of the catalog file, generated from the descriptor
enums (docs/schema/loop.plan.catalog.v1.schema.json; written by
``python tools/regen.py``).  The schema states shapes and
value sets; the conflict policy and consistency rules are loopc's."""

from __future__ import annotations

from typing import Any

from loopc.plan.builtin import ACTION_TYPES
from loopc.plan.catalog import CATALOG_VERSION
from loopc.plan.descriptor import (
    CONTRACT_VERSION,
    EffectOwnerKind,
    ExecutionClass,
    FanoutKind,
    KeyComponent,
    LockPlanKind,
    OutputDurability,
    PrincipalMode,
    ReadContract,
    Reauthorization,
    ReplayPolicy,
    ResourceClass,
    TransactionPolicy,
    UniquenessScope,
)

_NAME = {
    "type": "string",
    "pattern": r"^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,199}(/[A-Za-z0-9][A-Za-z0-9._:@+-]{0,199}){0,15}$",
}


def _enum(cls: Any) -> dict[str, Any]:
    return {"enum": [m.value for m in cls]}


def _obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": required if required is not None else list(props),
        "properties": props,
    }


def capabilities_schema() -> dict[str, Any]:
    return _obj(
        {
            "ExecutionClass": _enum(ExecutionClass),
            "TransactionPolicy": _enum(TransactionPolicy),
            "ReplayPolicy": _enum(ReplayPolicy),
            "FanoutBound": _obj(
                {
                    "kind": _enum(FanoutKind),
                    "maximum": {"type": ["integer", "null"], "minimum": 1, "maximum": 2**53 - 1},
                }
            ),
            "ReadContract": _enum(ReadContract),
            "LockPlanContract": _obj(
                {
                    "kind": _enum(LockPlanKind),
                    "resourceClasses": {"type": "array", "uniqueItems": True, "items": _enum(ResourceClass)},
                }
            ),
            "EffectOwner": _obj({"kind": _enum(EffectOwnerKind), "owner": {"anyOf": [_NAME, {"type": "null"}]}}),
            "IdempotencyPolicy": _obj(
                {
                    "keyShape": {"type": "array", "uniqueItems": True, "items": _enum(KeyComponent)},
                    "scope": _enum(UniquenessScope),
                }
            ),
            "OutputDurability": _enum(OutputDurability),
            "SecurityPolicy": _obj({"principal": _enum(PrincipalMode), "reauthorization": _enum(Reauthorization)}),
            "MinimumCapabilityVersion": _obj(
                {"contract": _NAME, "generation": {"type": "integer", "minimum": 1, "maximum": 1_000_000}}
            ),
        }
    )


def catalog_schema() -> dict[str, Any]:
    """The catalog file schema (docs/plan.md#catalog-file)."""
    action = {"enum": list(ACTION_TYPES)}
    caps = {"$ref": "#/$defs/capabilities"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "loop.plan.catalog.v1.schema.json",
        "title": "loopc capability catalog (loop.plan.catalog/v1)",
        **_obj(
            {
                "catalogVersion": {"const": CATALOG_VERSION},
                "contractVersion": {"const": CONTRACT_VERSION},
                "binding": _obj({"org": _NAME, "installation": _NAME, "runtimeCapability": _NAME, "generation": _NAME}),
                "descriptors": {
                    "type": "array",
                    "maxItems": 1024,
                    "items": _obj(
                        {
                            "action": action,
                            "owner": _NAME,
                            "capabilities": caps,
                            "reasons": {
                                "type": "object",
                                "additionalProperties": False,
                                "properties": {
                                    k: {"type": "string", "maxLength": 2000}
                                    for k in capabilities_schema()["properties"]
                                },
                            },
                        },
                        ["action", "owner", "capabilities"],
                    ),
                },
                "bindings": {
                    "type": "array",
                    "maxItems": 1024,
                    "items": _obj(
                        {
                            "action": action,
                            "owner": _NAME,
                            "handler": _NAME,
                            "implementationVersion": _NAME,
                            "capabilities": caps,
                        },
                        ["action", "owner", "handler", "implementationVersion"],
                    ),
                },
            }
        ),
        "$defs": {"capabilities": capabilities_schema()},
    }
