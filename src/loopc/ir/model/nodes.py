"""Nodes and edges of the typed IR model (docs/ir.md#nodes,
docs/ir.md#edges):
:class:`Node` (with :class:`SourcePort` / :class:`TargetPort`),
:class:`Edge`, and their JSON codec.  Re-exported by :mod:`loopc.ir.model`."""
from __future__ import annotations

from typing import Any, Mapping, TypeVar

import attrs

from loopc.ir.model.configs import Config, config_from_json
from loopc.ir.model.contracts import FieldSchema, _bind_from, contract_from_json
from loopc.ir.model.instrs import Instr
from loopc.ir.model.scopes import (
    Disposition, EdgeEffects, NodeEffects, Retry, ScopeRef, _disp_from, _scope_from,
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
