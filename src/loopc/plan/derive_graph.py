"""The forward graph of a plan and its bound proof (docs/plan.md#bounds):
lexicographic topological order without loop back edges, and the
activation, attempt, effect and state-write bounds per node.
"""

from __future__ import annotations

import heapq
from typing import Any, Iterable, Sequence

from loopc.ir.model import Edge, Node, Plan
from loopc.plan.builtin import WORK_ITEM_LIMIT
from loopc.plan.derive_model import _BACK_PORTS, _EXTERNAL_OPS, MAX_BOUND, Bounds, ResourceKey


class _Graph:
    def __init__(self, plan: Plan) -> None:
        self.nodes: dict[str, Node] = {n.id: n for n in plan.nodes}
        self.watches: dict[str, tuple[str, ...]] = {n.id: n.watches for n in plan.nodes}
        self.edges: dict[str, Edge] = {e.id: e for e in plan.edges}
        self.entry: str = plan.entry.node
        self.joins: dict[str, str | None] = {s.owner: s.join for s in plan.scopes}
        self.incoming: dict[str, list[Edge]] = {n: [] for n in self.nodes}
        for e in self.edges.values():
            if e.to_node in self.incoming:
                self.incoming[e.to_node].append(e)

    def forward_targets(self, n: Node) -> list[tuple[str, str | None]]:
        """``(port, target node or None)`` per source port; None for implicit
        routes and back edges (into a loop's continue/break)."""
        out: list[tuple[str, str | None]] = []
        for p in n.source_ports:
            e = self.edges.get(p.edge) if p.edge else None
            if e is None or e.to_port in _BACK_PORTS:
                out.append((p.name, None))
            else:
                out.append((p.name, e.to_node))
        return out

    def topo_order(self) -> list[str] | None:
        """Node ids in lexicographic topological order of the forward graph,
        or None when it has a cycle."""
        indeg = {n: 0 for n in self.nodes}
        succ: dict[str, list[str]] = {n: [] for n in self.nodes}
        for n in self.nodes.values():
            for _, t in self.forward_targets(n):
                if t is not None and t in indeg:
                    succ[n.id].append(t)
                    indeg[t] += 1
        heap = [k for k, d in indeg.items() if d == 0]
        heapq.heapify(heap)
        order: list[str] = []
        while heap:
            k = heapq.heappop(heap)
            order.append(k)
            for t in succ[k]:
                indeg[t] -= 1
                if indeg[t] == 0:
                    heapq.heappush(heap, t)
        return order if len(order) == len(self.nodes) else None


def _sat(v: int) -> int:
    return v if v <= MAX_BOUND else MAX_BOUND


# ---------------------------------------------------------------------------
# bounds
# ---------------------------------------------------------------------------

_Vec = tuple[int, int, int, int]
_ZERO: _Vec = (0, 0, 0, 0)


def _add(*vs: _Vec) -> _Vec:
    return (sum(v[0] for v in vs), sum(v[1] for v in vs), sum(v[2] for v in vs), sum(v[3] for v in vs))


def _max(vs: Sequence[_Vec]) -> _Vec:
    if not vs:
        return _ZERO
    return (max(v[0] for v in vs), max(v[1] for v in vs), max(v[2] for v in vs), max(v[3] for v in vs))


def _mul(k: int, v: _Vec) -> _Vec:
    return (k * v[0], k * v[1], k * v[2], k * v[3])


def _bounds(g: _Graph, order: list[str], resources: Iterable[ResourceKey]) -> Bounds:
    f: dict[str, _Vec] = {}
    proof: list[dict[str, Any]] = []
    fan_width = 0

    def at(t: str | None) -> _Vec:
        if t is None or t not in g.nodes or g.nodes[t].op == "join":
            return _ZERO  # joins are counted once, by their scope owner
        return f.get(t, _ZERO)

    def join_of(owner: str) -> _Vec:
        j = g.joins.get(owner)
        return f.get(j, _ZERO) if j is not None and j in g.nodes else _ZERO

    for nid in reversed(order):
        n = g.nodes[nid]
        attempts = n.retry.max_attempts if n.retry is not None else 1
        own: _Vec = (1, attempts, 1 if n.op in _EXTERNAL_OPS else 0, len(n.writes))
        targets = g.forward_targets(n)
        outs = [at(t) for _, t in targets]
        if n.op == "fork":
            v = _add(own, *outs, join_of(nid))
        elif n.op == "switch" and getattr(n.config, "mode", None) == "all_match":
            cases = {c.port for c in getattr(n.config, "cases", ())}
            case_sum = _add(*[at(t) for p, t in targets if p in cases])
            default = _max([at(t) for p, t in targets if p not in cases])
            v = _add(own, _max([case_sum, default]), join_of(nid))
        elif n.op == "fan_out":
            body = _max(outs)
            width = WORK_ITEM_LIMIT
            fan_width = max(fan_width, width)
            proof.append(
                {
                    "node": nid,
                    "kind": "fan_out",
                    "factor": width,
                    "maxConcurrency": getattr(n.config, "max_concurrency", None),
                }
            )
            v = _add(own, _mul(width, body), join_of(nid))
        elif n.op == "loop":
            iters = getattr(n.config, "iterations", 1)
            iters = iters if isinstance(iters, int) and iters >= 1 else 1
            proof.append({"node": nid, "kind": "loop", "factor": iters, "maxConcurrency": None})
            body = _max([at(t) for p, t in targets if p == "body"])
            done = _max([at(t) for p, t in targets if p != "body"])
            v = _add(own, _mul(iters, body), done)
        else:
            v = _add(own, _max(outs))
        f[nid] = v
    total = f.get(g.entry, _ZERO)
    sat = any(x > MAX_BOUND for x in total)
    classes = sorted({r.resource_class for r in resources}, key=lambda c: c.rank)
    return Bounds(
        _sat(total[0]),
        _sat(total[1]),
        _sat(total[2]),
        _sat(total[3]),
        fan_width,
        tuple(c.value for c in classes),
        tuple(sorted(proof, key=lambda p: p["node"])),
        sat,
    )
