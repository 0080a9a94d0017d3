"""Typed, read-only views of an artifact's nodes and edges (issue 4 "typed
attrs views of nodes/edges"), for runtimes and the reference interpreter.

Views are thin frozen attrs objects built from the artifact JSON on demand;
instruction trees and configs stay plain JSON mappings (evaluate them with
:func:`loopc.ir.evaluator.evaluate`).  Field names follow docs/ir.md.
"""
from __future__ import annotations

from typing import Any, Mapping

import attrs

__all__ = [
    "FieldView", "PortView", "TargetPortView", "ScopeRefView", "RetryView", "NodeView", "EdgeView",
    "field_view", "contract_view", "node_view", "edge_view",
]


@attrs.frozen
class FieldView:
    """One FieldSchema: ``default`` is :data:`NO_DEFAULT` when absent."""

    type: str
    required: bool
    default: Any
    values: tuple[str, ...] | None
    items: "FieldView | None"
    label: str | None
    description: str | None

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


def field_view(d: Mapping[str, Any]) -> FieldView:
    """FieldSchema JSON → :class:`FieldView` (iterative over ``items``)."""
    chain = []
    cur: Any = d
    while isinstance(cur, Mapping):
        chain.append(cur)
        cur = cur.get("items")
    out: FieldView | None = None
    for f in reversed(chain):
        out = FieldView(
            f["type"], bool(f["required"]), f.get("default", NO_DEFAULT),
            tuple(f["values"]) if "values" in f else None, out if "items" in f else None,
            f.get("label"), f.get("description"))
    assert out is not None
    return out


def contract_view(c: Mapping[str, Any] | None) -> dict[str, FieldView]:
    """Contract JSON → ``{name: FieldView}`` in sorted name order."""
    return {k: field_view(c[k]) for k in sorted(c or {})}


@attrs.frozen
class PortView:
    """A source port: ``output`` is ``None`` for ``item``/``body``; exactly
    one of ``edge`` (outgoing edge id) and ``implicit`` (lowered failure
    route JSON: ``{status, action, owner?, branch?, join?}``)."""

    name: str
    output: Mapping[str, FieldView] | None
    edge: str | None
    implicit: Mapping[str, Any] | None


@attrs.frozen
class TargetPortView:
    name: str
    edges: tuple[str, ...]


@attrs.frozen
class ScopeRefView:
    """One entry of a scope stack (outermost first)."""

    kind: str
    owner: str
    branch: str | None = None


@attrs.frozen
class RetryView:
    max_attempts: int
    backoff: str


@attrs.frozen
class NodeView:
    """A node: ``op`` is the opcode; ``config`` the op-specific JSON."""

    id: str
    op: str
    input: Mapping[str, FieldView]
    source_ports: tuple[PortView, ...]
    target_ports: tuple[TargetPortView, ...]
    scope: tuple[ScopeRefView, ...]
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    config: Mapping[str, Any]
    retry: RetryView | None
    label: str | None
    description: str | None

    def port(self, name: str) -> PortView:
        """Source port ``name``; ``KeyError`` when absent."""
        for p in self.source_ports:
            if p.name == name:
                return p
        raise KeyError(name)


@attrs.frozen
class EdgeView:
    id: str
    from_node: str
    from_port: str
    to_node: str
    to_port: str
    bind: Mapping[str, Any]
    scope: tuple[ScopeRefView, ...]
    reads: tuple[str, ...]
    label: str | None


def _scope(lst: Any) -> tuple[ScopeRefView, ...]:
    return tuple(ScopeRefView(s["kind"], s["owner"], s.get("branch")) for s in lst)


def node_view(n: Mapping[str, Any]) -> NodeView:
    """Node JSON (as in a decoded artifact) → :class:`NodeView`."""
    ports = n["ports"]
    src = tuple(
        PortView(p["name"], None if p["output"] is None else contract_view(p["output"]),
                 p.get("edge"), p.get("implicit"))
        for p in ports["source"])
    tgt = tuple(TargetPortView(t["name"], tuple(t["edges"])) for t in ports["target"])
    r = n.get("retry")
    return NodeView(
        n["id"], n["op"], contract_view(n["input"]), src, tgt, _scope(n["scope"]),
        tuple(n["effects"]["reads"]), tuple(n["effects"]["writes"]), n["config"],
        RetryView(r["maxAttempts"], r["backoff"]) if r else None, n.get("label"), n.get("description"))


def edge_view(e: Mapping[str, Any]) -> EdgeView:
    """Edge JSON → :class:`EdgeView`."""
    return EdgeView(
        e["id"], e["from"]["node"], e["from"]["port"], e["to"]["node"], e["to"]["port"], e["bind"],
        _scope(e["scope"]), tuple(e["effects"]["reads"]), e.get("label"))
