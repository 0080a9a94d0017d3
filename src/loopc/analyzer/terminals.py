"""Terminal analysis and implicit failure routing (docs/reference.md#graph-rules,
docs/reference.md#failure-routes, docs/reference.md#ends; pass 6 of
docs/language.md#compiler-passes).

Every path ends at an explicit End or a lowered failure route: the graph
pass guarantees that every success/control port is routed, the loop pass
that no cycle exists outside a counted loop, and the scope-typing pass that
a succeeded End sits outside every scope (LP4101).  What remains is to
decide, for every omitted ``failed``/``timed_out`` port and for every
arrival at a failed End, which sink it lowers to:

* outside every fork, all_match and fan-out scope (a loop body included):
  ``fail_plan`` — the Run fails;
* inside a fork or all_match branch: ``fail_branch`` — the branch ends as
  failed and the owning join decides (``all``: the join takes its own
  failure route; ``any``: it fails only when no branch can succeed);
* inside a fan-out item body: ``item_failed`` — the item's failed terminal
  envelope is recorded and the other items continue.

The innermost parallel frame of the node's proven scope stack decides (a
loop frame is transparent: a failure in a loop body inside a branch fails
the branch).  A fan-out join's ``failed`` port never fires (it becomes ready
once every item is terminal): its sink is ``never``.
"""
from __future__ import annotations

from loopc.analyzer.context import Ctx
from loopc.analyzer.facts import FAIL_BRANCH, FAIL_PLAN, ITEM_FAILED, NEVER, Sink, Stack
from loopc.compiler.model import End, Join
from loopc.compiler.ports import OPTIONAL_PORTS, source_ports

_PLAN = Sink(FAIL_PLAN)


def sink_for(stack: Stack) -> Sink:
    """The failure sink of a token carrying ``stack`` (docs/reference.md#failure-routes)."""
    for f in reversed(stack):
        if f.kind == "fan_out":
            return Sink(ITEM_FAILED, f.owner, None, f.closer)
        if f.kind in ("fork", "all_match"):
            return Sink(FAIL_BRANCH, f.owner, f.branch, f.closer)
    return _PLAN


def failure_routes(ctx: Ctx, node_stacks: dict[str, Stack], edge_stacks: dict[str, Stack],
                   order: list[str]) -> tuple[dict[tuple[str, str], Sink], dict[str, Sink]]:
    """``(failure_routes, end_routes)`` for :class:`~loopc.analyzer.facts.Analysis`:
    the sink of every omitted optional port of a reachable node (keyed by
    ``(node, port)``, topological order) and of every edge into a failed End."""
    routes: dict[tuple[str, str], Sink] = {}
    ends: dict[str, Sink] = {}
    for nid in order:
        node = ctx.nodes[nid]
        routed = {e.from_port for e in ctx.out.get(nid, ())}
        for p in source_ports(node):
            if p not in OPTIONAL_PORTS or p in routed:
                continue
            c = node.config
            if isinstance(c, Join) and c.fan_out_id is not None:
                routes[(nid, p)] = Sink(NEVER)
            else:
                routes[(nid, p)] = sink_for(node_stacks.get(nid, ()))
        c = node.config
        if isinstance(c, End) and c.status == "failed":
            for e in ctx.inc.get(nid, ()):
                if e.id in edge_stacks:
                    ends[e.id] = sink_for(edge_stacks[e.id])
    return routes, ends
