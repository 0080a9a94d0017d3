"""Counted-loop and strongly-connected-component ownership (docs/reference.md#loops,
pass 10 of docs/language.md#compiler-passes).

"Cycles exist only inside an explicit counted loop scope ... Back-edges and
self-loops outside an explicit loop scope are compile errors."  A loop's
own back edges are the edges into its ``continue``/``break`` ports; they are
removed first.  Every cycle that remains is outside every loop: the strongly
connected components of what is left (networkx, linear; imported only
when Kahn's topological sort finds a cycle) are searched
depth-first from the node the entry reaches first, and each edge that closes
a cycle (an edge to a node on the DFS stack, or a self-loop) is reported as
LP4501 ``loop.cycle_outside_loop`` with the cycle it closes, then cut, so the
rest of the analyzer works on an acyclic graph.

That a back edge into ``continue``/``break`` really comes from its loop's
body, and leaves no inner scope open, is a scope fact: the scope-typing pass
(:mod:`loopc.analyzer.scopes`) checks it (LP4502–LP4504).  The required
``continue`` edge itself is a graph basic (LP4008).
"""
from __future__ import annotations

import heapq

from loopc.analyzer.context import Ctx
from loopc.compiler.model import Loop
from loopc.compiler.yamlnodes import YMap
from loopc.diagnostics import Applicability, Fix, TextEdit


def _cycle_text(path: list[str]) -> str:
    if len(path) > 8:
        path = path[:4] + ["…"] + path[-3:]
    return " → ".join(f"`{p}`" if p != "…" else p for p in path)


def find_cycles(ctx: Ctx) -> tuple[set[str], list[str]]:
    """Report cycles outside loops and return ``(cut, order)``: the edge ids
    cut to make the forward graph acyclic (loop back edges are never
    forward edges), and the reachable node ids in a topological order of
    the remaining forward graph (ties broken by authored order).

    docs/reference.md#loops; networkx SCCs plus one iterative DFS per non-trivial
    component: O(nodes + edges)."""
    back = ctx.back_edges
    fwd = [e for e in ctx.edges if e.id not in back]
    out_fwd: dict[str, list] = {}
    for fe in fwd:
        out_fwd.setdefault(fe.from_node, []).append(fe)
    cut: set[str] = set()
    order = _topo(ctx, fwd, out_fwd, cut)
    if len(order) == len(ctx.reached):
        return cut, order  # acyclic: the common case needs no SCCs
    import networkx as nx  # lazily: only a plan with a cycle pays the import

    g = nx.DiGraph()
    g.add_nodes_from(ctx.reached)
    g.add_edges_from((e.from_node, e.to_node) for e in fwd)
    # breadth-first discovery order from the entry, to start each DFS where
    # the entry first reaches the component
    disc = {n: i for i, n in enumerate(_bfs(ctx))}
    comps = [c for c in nx.strongly_connected_components(g)
             if len(c) > 1 or any(e.to_node == e.from_node for e in out_fwd.get(next(iter(c)), ()))]
    comps.sort(key=lambda c: min(disc.get(n, 1 << 30) for n in c))
    for comp in comps:
        start = min(comp, key=lambda n: disc.get(n, 1 << 30))
        on_stack: dict[str, int] = {start: 0}
        path = [start]
        visited = {start}
        iters = [iter(out_fwd.get(start, ()))]
        while iters:
            e = next(iters[-1], None)
            if e is None:
                iters.pop()
                n = path.pop()
                del on_stack[n]
                continue
            t = e.to_node
            if t not in comp:
                continue
            if t in on_stack:
                cut.add(e.id)
                _report_cycle(ctx, e, path[on_stack[t]:] + [t])
            elif t not in visited:
                visited.add(t)
                on_stack[t] = len(path)
                path.append(t)
                iters.append(iter(out_fwd.get(t, ())))
    return cut, _topo(ctx, fwd, out_fwd, cut)


def _topo(ctx: Ctx, fwd: list, out_fwd: dict[str, list], cut: set[str]) -> list[str]:
    """Kahn's algorithm over the forward edges minus ``cut``, ties broken by
    authored order; shorter than ``ctx.reached`` when a cycle remains."""
    indeg = {n: 0 for n in ctx.reached}
    for e in fwd:
        if e.id not in cut:
            indeg[e.to_node] += 1
    idx = ctx.index
    heap = [(idx[n], n) for n, d in indeg.items() if d == 0]
    heapq.heapify(heap)
    order: list[str] = []
    while heap:
        _, n = heapq.heappop(heap)
        order.append(n)
        for e in out_fwd.get(n, ()):
            if e.id in cut:
                continue
            indeg[e.to_node] -= 1
            if indeg[e.to_node] == 0:
                heapq.heappush(heap, (idx[e.to_node], e.to_node))
    return order


def _bfs(ctx: Ctx) -> list[str]:
    from collections import deque

    if ctx.plan.entry not in ctx.reached:
        return []
    seen = {ctx.plan.entry}
    order = [ctx.plan.entry]
    q = deque(order)
    while q:
        n = q.popleft()
        for e in ctx.out.get(n, ()):
            if e.to_node not in seen:
                seen.add(e.to_node)
                order.append(e.to_node)
                q.append(e.to_node)
    return order


def _report_cycle(ctx: Ctx, e, cycle: list[str]) -> None:
    target = ctx.nodes[e.to_node]
    hint, fix = "", None
    if isinstance(target.config, Loop):
        hint = (f"; to run the body of loop `{target.id}` again, route this edge to its "
                f"`continue` port")
        to = e.src.get("to") if isinstance(e.src, YMap) else None
        if isinstance(to, YMap) and to.flow and "port" not in to:
            fix = Fix(f"route to port `continue` of `{target.id}`",
                      (TextEdit(to.span, f"{{node: {target.id}, port: continue}}"),),
                      Applicability.UNSAFE)  # changes which port the edge enters
    elif e.from_node == e.to_node:
        hint = "; a node cannot lead back to itself outside a counted loop"
    msg = (f"edge `{e.id}` closes a cycle outside every counted loop: {_cycle_text(cycle)}; "
           f"cycles are allowed only through a loop's `continue`/`break` ports{hint}")
    ctx.report("LP4501", ctx.edge_to(e), msg, edge=e.id, node=e.to_node,
               related=[(f"the cycle re-enters `{e.to_node}` here", ctx.node_at(e.to_node))], fix=fix)
