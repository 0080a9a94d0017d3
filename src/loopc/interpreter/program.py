"""The executable form of a verified artifact: per-node and per-edge tables
built once from the typed IR views (:mod:`loopc.ir.model`), so the engine
never re-reads artifact JSON or expression text (docs/conformance.md
"What the interpreter executes").
"""
from __future__ import annotations

from typing import Any, Mapping

import attrs

__all__ = ["Program", "ProgramNode", "load_program", "ProgramError"]


class ProgramError(Exception):
    """The artifact is not executable (it failed verification)."""


@attrs.define(slots=True, eq=False)
class ProgramNode:
    """One node: ``ports`` maps a source-port name to ``(edge id | None,
    implicit route | None, output contract | None)``."""

    id: str
    op: str
    input: Mapping[str, Any]
    config: Mapping[str, Any]
    ports: dict[str, tuple[str | None, Mapping[str, Any] | None, Mapping[str, Any] | None]]
    port_order: tuple[str, ...]
    scope: tuple[Any, ...]
    max_attempts: int
    backoff: str
    result: Mapping[str, Any] | None = None  # join result contract
    loop_state: Mapping[str, Any] | None = None  # loop state contract
    callback_output: Mapping[str, Any] | None = None


@attrs.define(slots=True, eq=False)
class ProgramEdge:
    id: str
    src: str
    port: str
    dst: str
    dst_port: str
    bind: tuple[tuple[str, Any], ...]
    disposition: Mapping[str, Any] | None


@attrs.define(slots=True, eq=False)
class Program:
    """``nodes``/``edges`` by id; ``scopes`` by owner id
    (``{"kind", "owner", "branches"?, "join"}``)."""

    digest: str
    version: int
    entry: str
    entry_bind: tuple[tuple[str, Any], ...]
    input: Mapping[str, Any]
    output: Mapping[str, Any]
    state: Mapping[str, Any]
    nodes: dict[str, ProgramNode]
    edges: dict[str, ProgramEdge]
    scopes: dict[str, Mapping[str, Any]]
    artifact: Any = None


def load_program(artifact: Any) -> Program:
    """Build the tables from a decoded, verified
    :class:`loopc.ir.model.Artifact`.  Instruction trees of edge binds are
    the typed model's; configs, implicit routes, dispositions and scope
    declarations are still taken in their wire form (``artifact.to_json()``)
    until the engine reads the typed configs."""
    from loopc.ir.model import contract_view

    plan = artifact.to_json()["plan"]
    raw_nodes = {n["id"]: n for n in plan["nodes"]}
    nodes: dict[str, ProgramNode] = {}
    for n in artifact.plan.nodes:
        raw = raw_nodes[n.id]
        raw_ports = {p["name"]: p for p in raw["ports"]["source"]}
        ports = {p.name: (p.edge, raw_ports[p.name].get("implicit"), p.output) for p in n.source_ports}
        cfg = raw["config"]
        nodes[n.id] = ProgramNode(
            n.id, n.op, n.input, cfg, ports, tuple(p.name for p in n.source_ports), n.scope,
            n.retry.max_attempts if n.retry else 1, n.retry.backoff if n.retry else "PT1S",
            contract_view(cfg.get("result")) if n.op == "join" else None,
            contract_view(cfg.get("state")) if n.op == "loop" else None,
            contract_view(cfg.get("callbackOutput")) if n.op == "send_message" and "callbackOutput" in cfg else None)
    raw_edges = {e["id"]: e for e in plan["edges"]}
    edges: dict[str, ProgramEdge] = {}
    for e in artifact.plan.edges:
        edges[e.id] = ProgramEdge(e.id, e.from_node, e.from_port, e.to_node, e.to_port,
                                  tuple(sorted(e.bind.items())), raw_edges[e.id].get("disposition"))
    scopes = {s["owner"]: s for s in plan["scopes"]}
    return Program(artifact.digest, artifact.version, plan["entry"]["node"],
                   tuple(sorted(artifact.plan.entry.bind.items())), contract_view(plan["input"]),
                   contract_view(plan["output"]), contract_view(plan["state"]), nodes, edges, scopes, artifact)
