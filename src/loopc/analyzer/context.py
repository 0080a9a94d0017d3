"""Shared graph context for the analyses (passes 6–12 of docs/language.md#compiler-passes).

:class:`Ctx` indexes the well-formed, reachable part of a :class:`Plan`
once: valid edges (both endpoints are well-formed nodes and both ports exist
for their node types), in/out adjacency in authored order, the loop back
edges (edges into a loop's ``continue``/``break`` ports), the joins naming
each owner, and location helpers so every analysis reports at the same
precise ranges.  Everything here is linear in nodes + edges.

The driver only runs the analyzer when graph basics succeeded, but the
analyzer must never crash on what still gets through (several edges on one
port, unrouted ports, unreachable nodes — each already reported): those are
tolerated, and unreachable nodes are simply not analysed.
"""
from __future__ import annotations

from collections import deque
from typing import Iterable

from loopc import kinds
from loopc.compiler.model import Edge, Fork, Join, Loop, Node, Plan, Switch
from loopc.compiler.ports import must_route, source_ports, target_ports
from loopc.compiler.report import Entity, Location, Reporter, decl_path
from loopc.compiler.schema import EDGE_KEYS
from loopc.compiler.scopemap import owner_kind
from loopc.compiler.spelling import suggest
from loopc.compiler.yamlnodes import YMap, YNode, YScalar, YSeq
from loopc.diagnostics import Fix

LOOP_BACK_PORTS = kinds.tables().back_ports
#: Every graph finding depends on the ``edges`` section: when it was reported
#: wrong (misspelt, not a list) the graph is unknown, so nothing is derived.
_EDGES = decl_path("edges")


def _sub(m: YNode | None, *keys: str) -> YNode | None:
    for k in keys:
        if not isinstance(m, YMap):
            return None
        m = m.get(k)
    return m


class Ctx:
    """Indexed view of a plan for the analyses; also the single place the
    analyses report through (the reporter's policy: one diagnostic per code
    and culprit, none about a rejected or tainted entity)."""

    def __init__(self, plan: Plan, reporter: Reporter) -> None:
        self.plan = plan
        self.r = reporter
        self.nodes = plan.nodes
        self.index = {nid: i for i, nid in enumerate(plan.nodes)}
        self.edge_index = {eid: i for i, eid in enumerate(plan.edges)}
        valid: list[Edge] = []
        set_aside = reporter.tainted_names("edge")  # the edges whose edge_entity is tainted
        for e in plan.edges.values():
            a, b = plan.nodes.get(e.from_node), plan.nodes.get(e.to_node)
            if a is None or b is None or e.id in set_aside:
                continue  # an edge an earlier pass set aside (LP4004, LP4008) is not analysed
            if e.from_port not in source_ports(a) or e.to_port not in target_ports(b):
                continue
            valid.append(e)
        out: dict[str, list[Edge]] = {}
        for e in valid:
            out.setdefault(e.from_node, []).append(e)
        # a join is activated by its owner's activation, so it
        # is reachable with its owner even when no branch edge reaches it
        activates: dict[str, list[str]] = {}
        for nid, n in plan.nodes.items():
            if isinstance(n.config, Join) and n.config.owner in plan.nodes:
                activates.setdefault(n.config.owner, []).append(nid)
        # reachability from the entry over valid edges
        reached: set[str] = set()
        if plan.entry in plan.nodes:
            reached.add(plan.entry)
            q = deque([plan.entry])
            while q:
                cur = q.popleft()
                for t in [e.to_node for e in out.get(cur, ())] + activates.get(cur, []):
                    if t not in reached:
                        reached.add(t)
                        q.append(t)
        self.reached = reached
        self.edges: list[Edge] = [e for e in valid if e.from_node in reached]
        self.edge_by_id = {e.id: e for e in self.edges}
        self.out: dict[str, list[Edge]] = {}
        self.inc: dict[str, list[Edge]] = {}
        for e in self.edges:
            self.out.setdefault(e.from_node, []).append(e)
            self.inc.setdefault(e.to_node, []).append(e)
        self.back_edges: frozenset[str] = frozenset(
            e.id for e in self.edges
            if e.to_port in LOOP_BACK_PORTS and isinstance(plan.nodes[e.to_node].config, Loop))
        # joins per owner (reachable joins, authored order)
        self.joins_of: dict[str, list[str]] = {}
        for nid in self.ordered(reached):
            c = plan.nodes[nid].config
            if isinstance(c, Join) and c.owner:
                self.joins_of.setdefault(c.owner, []).append(nid)
        self.errors = 0
        self._set_aside: list[tuple[str, str | None]] | None | bool = False

    # -- ordering ------------------------------------------------------------
    @property
    def set_aside(self) -> list[tuple[str, str | None]] | None:
        """Sources of the edges the analyses do not see (:func:`set_aside_sources`,
        computed once); ``None`` when one cannot be read."""
        got = self._set_aside
        if got is False:
            got = self._set_aside = set_aside_sources(self.plan, self.r)
        return got  # type: ignore[return-value]

    def closes_fan_out(self, join: Join) -> bool:
        """Does ``join`` close a fan_out?  Decided by its owner's kind when
        the owner opens a scope (a join naming it with the wrong key is one
        LP4311, fixed by renaming the key), else by the key it uses."""
        kind = owner_kind(self.nodes.get(join.owner)) if join.owner else None
        if kind in ("fork", "all_match", "fan_out"):
            return kind == "fan_out"
        return join.fan_out_id is not None

    def ordered(self, ids: Iterable[str]) -> list[str]:
        """Node ids in authored order."""
        idx = self.index
        return sorted(ids, key=lambda i: idx.get(i, 1 << 30))

    # -- locations -----------------------------------------------------------
    def node_at(self, n: Node | str) -> YNode | None:
        node = self.nodes.get(n) if isinstance(n, str) else n
        if node is None:
            return None
        return _sub(node.src, "id") or node.src

    def type_at(self, n: Node) -> YNode | None:
        return _sub(n.src, "type") or self.node_at(n)

    def edge_to(self, e: Edge) -> YNode | None:
        """The ``to`` endpoint of ``e`` (where a culprit arrival is shown)."""
        return _sub(e.src, "to") or _sub(e.src, "id") or e.src

    def edge_from(self, e: Edge) -> YNode | None:
        return _sub(e.src, "from") or _sub(e.src, "id") or e.src

    def config_at(self, n: Node, *keys: str) -> YNode | None:
        """``keys`` below the node's config mapping, else the node id."""
        c = getattr(n.config, "src", None)
        v = _sub(c, *keys) if keys else c
        return v or self.node_at(n)

    def port_at(self, n: Node, port: str) -> YNode | None:
        """Where a source port of ``n`` is declared (fork branch key,
        switch case ``port``/``default``), else the node id."""
        c = n.config
        if isinstance(c, Fork):
            seq = _sub(c.src, "branches")
            for item in getattr(seq, "items", ()):
                if getattr(item, "value", None) == port:
                    return item
        if isinstance(c, Switch):
            for case in c.cases:
                if case.port == port:
                    return _sub(case.src, "port") or case.src
            if c.default == port:
                return _sub(c.src, "default")
        return self.node_at(n)

    # -- reporting -----------------------------------------------------------
    def report(self, code: str, at: Location, message: str, *, key: tuple = (),
               node: str | None = None, edge: str | None = None,
               related: Iterable[tuple[str, Location]] = (), fix: Fix | None = None,
               needs: Iterable[Entity] = (), taints: Iterable[Entity] = ()) -> bool:
        """Report through the reporter's policy (:mod:`loopc.compiler.report`)
        with the identity ``(code, key)`` (``key`` defaults to the culprit
        node/edge); ``needs``/``taints`` as for :meth:`Reporter.report` (every
        finding also needs the ``edges`` section).
        Returns True when a diagnostic was emitted."""
        rel = [(m, loc) for m, loc in related if loc is not None]
        d = self.r.report(code, at, message, node=node, edge=edge, related=rel, fix=fix,
                          needs=(*needs, _EDGES), taints=taints, key=("analyzer",) + (key or (node, edge)))
        if d is None:
            return False
        if d.severity.value == "error":
            self.errors += 1
        return True


def set_aside_sources(plan: Plan, reporter: Reporter) -> list[tuple[str, str | None]] | None:
    """``(node, port)`` sources of the authored edges the analyzer does not
    see: rejected by the schema pass, or in the model but set aside by the
    graph pass (tainted).  A rejected edge whose ``from`` is missing is read
    through the misspelt key standing in for it (``form:``).  ``None`` when a
    source cannot be read (or the ``edges`` section itself was rejected).
    A must-route port with no edge at all (LP4005) is an edge missing, so it
    is listed too."""
    routed = {(e.from_node, e.from_port) for e in plan.edges.values()}
    set_aside = reporter.tainted_names("edge")  # the edges whose edge_entity is tainted
    out: list[tuple[str, str | None]] = (
        [(e.from_node, e.from_port) for e in plan.edges.values() if e.id in set_aside] if set_aside else [])
    out += [(n.id, p) for n in plan.nodes.values() for p in source_ports(n)
            if (n.id, p) not in routed and must_route(n, p)]
    if not isinstance(plan.src, YMap):
        return out
    seq = plan.src.get("edges")
    if reporter.tainted(decl_path("edges")) or (seq is not None and not isinstance(seq, YSeq)):
        return None
    if seq is None or not plan.malformed_edges and len(seq.items) == len(plan.edges):
        return out
    kept = {id(e.src) for e in plan.edges.values() if e.src is not None}
    for m in seq.items:
        if id(m) in kept:
            continue
        if not isinstance(m, YMap):
            return None
        src = m.get("from")
        if src is None:
            src = next((v for k, v in m.entries() if k not in EDGE_KEYS and suggest(k, EDGE_KEYS) == "from"),
                       None)
        node = src.get("node") if isinstance(src, YMap) else None
        port = src.get("port") if isinstance(src, YMap) else None
        if not isinstance(node, YScalar) or node.value.__class__ is not str:
            return None
        out.append((node.value, port.value if isinstance(port, YScalar) and port.value.__class__ is str
                    else None))
    return out
