"""Port tables and per-port output contracts (docs/reference.md#nodes).

Shared by the type pass (edge ``output.*`` typing), graph passes (routing),
the analyzer and lowering.
"""
from __future__ import annotations

from typing import Any, Callable

from loopc import kinds
from loopc.kinds.base import attr_name
from loopc.compiler.model import (
    CONFIG_CLASSES, MISSING, Contract, End, FieldSchema, Fork, Node,
    RequestApproval, SendMessage, Switch,
)

#: Ports that may be left unrouted (their omission is lowered as a failure route).
OPTIONAL_PORTS = kinds.OPTIONAL_PORTS

FAILED_OUTPUT: Contract = {
    "code": FieldSchema("string", required=True),
    "detail": FieldSchema("string", required=True),
}
THREAD_OUTPUT: Contract = {
    "messageId": FieldSchema("string", required=True),
    "threadScope": FieldSchema("scope", required=True),
}


_tables = kinds.tables


def source_ports(node: Node) -> tuple[str, ...]:
    """Source ports of ``node`` in canonical order (the table of docs/reference.md#nodes), as its
    kind declares them (:mod:`loopc.kinds`)."""
    t = _tables()
    fixed = t.fixed_ports.get(node.type)
    if fixed is not None:
        return fixed
    p = t.ports.get(node.type)
    return p.of_model(node.config) if p is not None else ()


def target_ports(node: Node) -> tuple[str, ...]:
    """Target ports: ``in`` for every node; a loop adds ``continue``/``break``."""
    return _tables().target_ports.get(node.type, ("in",))


def must_route(node: Node, port: str) -> bool:
    """True when ``port`` must have an outgoing edge (docs/reference.md#graph-rules)."""
    return port not in OPTIONAL_PORTS


def branch_ports(node: Node) -> tuple[str, ...]:
    """Ports that open parallel branches: fork branches, all_match ports."""
    c = node.config
    if isinstance(c, Fork):
        return c.branches
    if isinstance(c, Switch) and c.mode == "all_match":
        return c.ports
    return ()


def send_message_completed(c: SendMessage) -> Contract:
    if c.completion == "callback":
        out: dict[str, FieldSchema] = dict(c.callback_output or {})
        if c.work_scope is not MISSING:
            out["workScope"] = FieldSchema("scope", required=True)
        if c.has_work_items:
            out["workItems"] = FieldSchema("work_items", required=True)
        return out
    if c.start_thread:
        return dict(THREAD_OUTPUT)
    return {}


def approval_output(c: RequestApproval) -> Contract:
    out = {"decidedBy": FieldSchema("member", required=True)}
    # the kind's conditional outputs (``comment`` iff ``feedbackScope``)
    for field, key in _tables().conditional_outputs["request_approval"].items():
        if getattr(c, attr_name(key)) is not None:
            out[field] = FieldSchema("string", required=True)
    return out


#: node type -> the function computing what its ports carry, for every kind
#: whose ports carry ``own`` (:attr:`loopc.kinds.Ports.carries`;
#: tests/test_kind_dispatch.py proves it complete)
_OWN_OUTPUTS: dict[str, Callable[[Any], Contract]] = {
    "send_message": send_message_completed,
    "request_approval": approval_output,
}


def output_contract(node: Node, port: str) -> Contract | None:
    """The ``output.*`` contract carried by ``port`` of ``node``, as its kind
    declares (:attr:`loopc.kinds.Ports.carries`).

    Returns ``None`` for ports that carry nothing under ``output.*``
    (``fan_out.item``, ``loop.body``) and for unknown ports.
    """
    c = node.config
    t = _tables()
    if port == "failed" and node.type in t.fails:
        return dict(FAILED_OUTPUT)
    kind = t.kinds.get(node.type)
    if kind is None or c.__class__ is not CONFIG_CLASSES.get(node.type):
        return None
    p = kind.ports
    if p.authored is not None:
        what = p.carries.get("*") if port in source_ports(node) else None
    else:
        what = p.carries.get(port)
        if what is not None and port in p.conditional and port not in source_ports(node):
            what = None
    if what is None:
        return None
    if what == "empty":
        return {}
    if what == "input":
        return dict(node.input_contract)
    if what == "contract":
        return dict(getattr(c, attr_name(kind.contract_field or "")))
    return _OWN_OUTPUTS[node.type](c)


def effective_input(node: Node, plan_output: Contract) -> Contract:
    """The node's activation input contract; a succeeded End takes the Plan output."""
    if isinstance(node.config, End) and node.config.status == "succeeded":
        return plan_output
    return node.input_contract
