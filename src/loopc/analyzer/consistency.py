"""Cross-field and cross-edge consistency (pass 12, docs/language.md#compiler-passes:
timeouts, retries, callbacks and their ports agree; docs/reference.md#retry,
docs/reference.md#node-send-message, docs/reference.md#node-wait).

Most of pass 12 is local to one node and lives in the front end: a
``timed_out`` edge from a wait without ``timeout`` is an unknown port
(LP4003), ``timeout``/``retry`` where the schema has no such key and the
callback-only ``sendMessage`` fields are schema/type rules.  What needs the
graph is reported here:

* LP4701 ``join.fan_out_failed_route`` (warning): an edge leaves the
  ``failed`` port of a fan-out join, which never fires — the join becomes
  ready once every item is terminal, failed items included;
* LP4702 ``callback.work_items_unconsumed`` (warning): a callback declares
  ``workItems`` but no ``fan_out`` can follow it, so the WorkItems it
  returns are never dispatched.
"""
from __future__ import annotations

from collections import deque

from loopc.analyzer.context import Ctx
from loopc.compiler.model import FanOut, Join, SendMessage
from loopc.compiler.yamlnodes import YMap

#: Bound on the number of per-callback reachability searches (each linear).
MAX_SEARCHES = 32


def check_consistency(ctx: Ctx, order: list[str]) -> None:
    """Report LP4701 and LP4702 (pass 12, docs/language.md#compiler-passes)."""
    searches = 0
    for nid in order:
        node = ctx.nodes[nid]
        c = node.config
        if isinstance(c, Join) and ctx.closes_fan_out(c):
            for e in ctx.out.get(nid, ()):
                if e.from_port == "failed":
                    ctx.report(
                        "LP4701", ctx.edge_from(e),
                        f"edge `{e.id}` leaves the `failed` port of fan-out join `{nid}`, which never "
                        f"fires: a fan-out join becomes ready once every item is terminal and exposes "
                        f"failed items in `items`; inspect `items` after `completed` "
                        f"instead", edge=e.id, node=nid)
        elif isinstance(c, SendMessage) and c.completion == "callback" and c.has_work_items:
            if searches >= MAX_SEARCHES:
                continue
            searches += 1
            if not _reaches_fan_out(ctx, nid):
                at = (c.src.key_node("workItems") if isinstance(c.src, YMap) else None) or ctx.node_at(node)
                ctx.report(
                    "LP4702", at,
                    f"callback `{nid}` declares `workItems`, but no fan_out follows it: the WorkItems "
                    f"its responder returns are never dispatched; bind "
                    f"`output.workItems` into a fan_out's `items`, or drop `workItems`", node=nid)


def _reaches_fan_out(ctx: Ctx, start: str) -> bool:
    """Does a path from ``start``'s ``completed`` port reach a fan_out?  Also
    true when the path meets an edge the analyses do not see (rejected, set
    aside or missing: :attr:`Ctx.set_aside`, already reported), which may be
    the one that leads there."""
    aside = ctx.set_aside
    if aside is None:
        return True
    cut_ports = set(aside)
    cut_nodes = {n for n, _p in aside}
    if (start, "completed") in cut_ports or (start, None) in cut_ports:
        return True
    seen = {start}
    q = deque([start])
    while q:
        n = q.popleft()
        if n != start and n in cut_nodes:
            return True
        for e in ctx.out.get(n, ()):
            if n == start and e.from_port != "completed":
                continue
            t = e.to_node
            if t in seen:
                continue
            if isinstance(ctx.nodes[t].config, FanOut):
                return True
            seen.add(t)
            q.append(t)
    return False
