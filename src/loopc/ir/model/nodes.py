"""Nodes and edges of the typed IR model (docs/ir.md#nodes,
docs/ir.md#edges):
:class:`Node` (with :class:`SourcePort` / :class:`TargetPort`),
:class:`Edge`, and their JSON codec.  Re-exported by :mod:`loopc.ir.model`."""
from __future__ import annotations

from typing import Any, Mapping, TypeVar

import attrs

from loopc.ir.model.configs import Config, config_from_json, config_to_json
from loopc.ir.model.contracts import FieldSchema, _bind_from, _bind_to, contract_from_json, contract_to_json
from loopc.ir.model.instrs import Instr
from loopc.ir.model.scopes import (
    Disposition, EdgeEffects, NodeEffects, Retry, ScopeRef, _disp_from, _disp_to, _scope_from, _scope_to,
)


_E = TypeVar("_E")


@attrs.frozen
class SourcePort:
    """A source port: ``output`` is ``None`` for ``item``/``body``; exactly
    one of ``edge`` (outgoing edge id) and ``implicit`` (the lowered route of
    an omitted ``failed``/``timed_out`` port)."""

    name: str
    output: dict[str, FieldSchema] | None
    edge: str | None = None
    implicit: Disposition | None = None


@attrs.frozen
class TargetPort:
    """A target port (``in``; ``continue``/``break`` on loops) and the
    sorted ids of the edges entering it."""

    name: str
    edges: tuple[str, ...] = ()


@attrs.frozen
class Node:
    """A node; ``op`` is ``config.OP``."""

    id: str
    input: dict[str, FieldSchema]
    source_ports: tuple[SourcePort, ...]
    target_ports: tuple[TargetPort, ...]
    scope: tuple[ScopeRef, ...]
    effects: NodeEffects
    config: Config
    retry: Retry | None = None
    label: str | None = None
    description: str | None = None

    @property
    def op(self) -> str:
        return self.config.OP

    @property
    def reads(self) -> tuple[str, ...]:
        return self.effects.reads

    @property
    def writes(self) -> tuple[str, ...]:
        return self.effects.writes

    @property
    def watches(self) -> tuple[str, ...]:
        return self.effects.watches

    def port(self, name: str) -> SourcePort:
        """Source port ``name``; ``KeyError`` when absent."""
        for p in self.source_ports:
            if p.name == name:
                return p
        raise KeyError(name)

    def target_port(self, name: str) -> TargetPort:
        for p in self.target_ports:
            if p.name == name:
                return p
        raise KeyError(name)


def node_from_json(n: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> Node:
    """Node JSON (validated) → :class:`Node` (``memo`` as in :func:`contract_from_json`)."""
    ports = n["ports"]
    src = []
    for p in ports["source"]:
        out = p["output"]
        imp = p.get("implicit")
        src.append(SourcePort(p["name"], None if out is None else contract_from_json(out, memo), p.get("edge"),
                              None if imp is None else _disp_from(imp, memo)))
    tgt = tuple(TargetPort(t["name"], tuple(t["edges"])) for t in ports["target"])
    eff = n["effects"]
    r = n.get("retry")
    return Node(
        n["id"], contract_from_json(n["input"], memo), tuple(src), tgt, _scope_from(n["scope"], memo),
        _effects_from(NodeEffects, (tuple(eff["reads"]), tuple(eff["writes"]), tuple(eff["watches"])), memo),
        config_from_json(n["op"], n["config"], memo),
        Retry(int(r["maxAttempts"]), r["backoff"]) if r is not None else None, n.get("label"), n.get("description"))


def _effects_from(cls: type[_E], lists: tuple[tuple[str, ...], ...], memo: dict[Any, Any] | None) -> _E:
    """:class:`NodeEffects` / :class:`EdgeEffects`, equal ones shared under ``memo``."""
    if memo is None:
        return cls(*lists)
    key = (cls, *lists)
    got = memo.get(key)
    if got is None:
        got = memo[key] = cls(*lists)
    return got


def node_to_json(n: Node, memo: dict[int, Any] | None = None) -> dict[str, Any]:
    """:class:`Node` → wire JSON (``memo`` as in :func:`instr_to_json`)."""
    if memo is None:
        memo = {}
    get = memo.get
    src = []
    for p in n.source_ports:
        o = p.output
        if o is not None:
            o = get(id(o)) or contract_to_json(o, memo)
        d: dict[str, Any] = {"name": p.name, "output": o}
        if p.edge is not None:
            d["edge"] = p.edge
        if p.implicit is not None:
            d["implicit"] = _disp_to(p.implicit, memo)
        src.append(d)
    eff = n.effects
    effects = get(id(eff))
    if effects is None:
        effects = memo[id(eff)] = {"reads": list(eff.reads), "writes": list(eff.writes), "watches": list(eff.watches)}
    out: dict[str, Any] = {
        "id": n.id,
        "op": n.op,
        "input": get(id(n.input)) or contract_to_json(n.input, memo),
        "ports": {"source": src, "target": [{"name": t.name, "edges": list(t.edges)} for t in n.target_ports]},
        "scope": get(id(n.scope)) or _scope_to(n.scope, memo),
        "effects": effects,
        "config": config_to_json(n.config, memo),
    }
    if n.retry is not None:
        out["retry"] = {"maxAttempts": n.retry.max_attempts, "backoff": n.retry.backoff}
    if n.label is not None:
        out["label"] = n.label
    if n.description is not None:
        out["description"] = n.description
    return out


@attrs.frozen
class Edge:
    """An edge ``from_node.from_port → to_node.to_port``; ``bind`` builds the
    destination contract (field → instruction); ``disposition`` exactly when
    ``to_node`` is a failed End."""

    id: str
    from_node: str
    from_port: str
    to_node: str
    to_port: str
    bind: dict[str, Instr]
    scope: tuple[ScopeRef, ...]
    effects: EdgeEffects = EdgeEffects()
    disposition: Disposition | None = None
    label: str | None = None

    @property
    def reads(self) -> tuple[str, ...]:
        return self.effects.reads


def edge_from_json(e: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> Edge:
    """Edge JSON (validated) → :class:`Edge` (``memo`` as in :func:`contract_from_json`)."""
    d = e.get("disposition")
    f, t = e["from"], e["to"]
    return Edge(e["id"], f["node"], f["port"], t["node"], t["port"], _bind_from(e["bind"], memo),
                _scope_from(e["scope"], memo), _effects_from(EdgeEffects, (tuple(e["effects"]["reads"]),), memo),
                None if d is None else _disp_from(d, memo), e.get("label"))


def edge_to_json(e: Edge, memo: dict[int, Any] | None = None) -> dict[str, Any]:
    """:class:`Edge` → wire JSON (``memo`` as in :func:`instr_to_json`)."""
    if memo is None:
        memo = {}
    get = memo.get
    eff = e.effects
    effects = get(id(eff))
    if effects is None:
        effects = memo[id(eff)] = {"reads": list(eff.reads)}
    out: dict[str, Any] = {
        "id": e.id,
        "from": {"node": e.from_node, "port": e.from_port},
        "to": {"node": e.to_node, "port": e.to_port},
        "bind": _bind_to(e.bind, memo) if e.bind else {},
        "scope": get(id(e.scope)) or _scope_to(e.scope, memo),
        "effects": effects,
    }
    if e.disposition is not None:
        out["disposition"] = _disp_to(e.disposition, memo)
    if e.label is not None:
        out["label"] = e.label
    return out
