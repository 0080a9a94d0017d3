"""The executable form of a verified artifact: per-node and per-edge tables
built once from the typed IR views (:mod:`loopc.ir.model`), so the engine
never re-reads artifact JSON or expression text (docs/conformance.md#what-the-interpreter-executes).
"""
from __future__ import annotations

from typing import Any, Mapping

import attrs

__all__ = ["Program", "ProgramNode", "load_program", "ProgramError"]


class ProgramError(Exception):
    """The artifact is not executable (it failed verification)."""


@attrs.define(slots=True, eq=False)
class ProgramNode:
    """One node: ``config`` the typed config class of its opcode;
    ``ports`` maps a source-port name to ``(edge id | None, implicit route
    (:class:`~loopc.ir.model.Disposition`) | None, output contract | None)``."""

    id: str
    op: str
    input: Mapping[str, Any]
    config: Any
    ports: dict[str, tuple[str | None, Any, Mapping[str, Any] | None]]
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
    disposition: Any  # loopc.ir.model.Disposition | None


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
    scopes: dict[str, Any]  # owner -> loopc.ir.model.ScopeDecl
    artifact: Any = None


def load_program(artifact: Any) -> Program:
    """Build the tables from a decoded, verified
    :class:`loopc.ir.model.Artifact` (the typed IR model): configs are the
    per-opcode config classes, instructions typed trees, implicit routes and
    dispositions :class:`~loopc.ir.model.Disposition`, scope declarations
    :class:`~loopc.ir.model.ScopeDecl`.  No wire JSON is read."""
    plan = artifact.plan
    nodes: dict[str, ProgramNode] = {}
    for n in plan.nodes:
        ports = {p.name: (p.edge, p.implicit, p.output) for p in n.source_ports}
        cfg = n.config
        op = n.op
        nodes[n.id] = ProgramNode(
            n.id, op, n.input, cfg, ports, tuple(p.name for p in n.source_ports), n.scope,
            n.retry.max_attempts if n.retry else 1, n.retry.backoff if n.retry else "PT1S",
            cfg.result if op == "join" else None,
            cfg.state if op == "loop" else None,
            cfg.callback_output if op == "send_message" else None)
    edges: dict[str, ProgramEdge] = {}
    for e in plan.edges:
        edges[e.id] = ProgramEdge(e.id, e.from_node, e.from_port, e.to_node, e.to_port,
                                  tuple(sorted(e.bind.items())), e.disposition)
    scopes = {s.owner: s for s in plan.scopes}
    return Program(artifact.digest, artifact.version, plan.entry.node, tuple(sorted(plan.entry.bind.items())),
                   plan.input, plan.output, plan.state, nodes, edges, scopes, artifact)
