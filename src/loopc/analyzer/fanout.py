"""Dynamic WorkItem fan-out scopes (docs/reference.md#node-fan-out,
docs/reference.md#fan-out-bodies; pass 9 of docs/language.md#compiler-passes: item bodies,
``item.*`` context and nesting).

The compiler proves, for every ``fan_out``:

* one entry — the item body is entered only from the ``item`` port, and
  no external edge enters it (LP4403, found by the scope-typing pass where
  an outside stack meets the body's stack);
* closed boundaries — every item path ends at the closing join or at a
  failure terminal that records the item's failed envelope (LP4404 for a
  path that leaves the body, also found by scope typing; failures lower to
  ``item_failed`` in :mod:`loopc.analyzer.terminals`);
* exactly one closing join (LP4401 none, LP4402 more than one); its
  ``mode: all`` is the schema's rule (LP2061);
* no fan_out inside another fan-out's item body (LP4405);
* no Run-state write in the body (LP4406, :mod:`loopc.analyzer.effects`).

``item.*`` and ``items`` legality is the type pass's context rule (it uses
the structural scope map) and is not repeated here.
"""
from __future__ import annotations

from loopc.analyzer.context import Ctx
from loopc.analyzer.scopes import ScopeTyping
from loopc.compiler.scopemap import owner_kind


def check_fan_outs(ctx: Ctx, typing: ScopeTyping) -> None:
    """Report LP4401, LP4402 and LP4405 for every reachable fan_out."""
    for nid in typing.order:
        node = ctx.nodes[nid]
        if owner_kind(node) != "fan_out":
            continue
        st, taint = typing.node_stacks.get(nid, ()), typing.node_taint.get(nid)
        reliable = st if taint is None else st[:taint]
        outer = next((f for f in reversed(reliable) if f.kind == "fan_out"), None)
        if outer is not None:
            typing.implicate(nid)
            ctx.report(
                "LP4405", ctx.type_at(node),
                f"fan_out `{nid}` sits inside the item body of fan_out `{outer.owner}`; loop.plan/v1 "
                f"rejects a fan_out nested in another fan_out: run the inner batch "
                f"after the outer join instead",
                node=nid, related=[(f"outer fan_out `{outer.owner}`", ctx.node_at(outer.owner))])
        joins = ctx.joins_of.get(nid, [])
        valid = [j for j in joins if j in typing.owner_ok and j not in typing.misdirected]
        if not joins:
            if not typing.implicated(nid):
                ctx.report(
                    "LP4401", ctx.node_at(node),
                    f"fan_out `{nid}` has no closing join: every fan_out is closed by exactly one join "
                    f"with `fanOutId: {nid}` and `mode: all`, which collects the items' terminal "
                    f"envelopes", node=nid)
            continue
        if len(valid) > 1:
            first = ctx.nodes[valid[0]]
            for j in valid[1:]:
                ctx.report(
                    "LP4402", ctx.config_at(ctx.nodes[j], "fanOutId"),
                    f"join `{j}` closes fan_out `{nid}`, which join `{valid[0]}` already closes; every "
                    f"fan_out has exactly one closing join",
                    node=j, related=[(f"first join of `{nid}`", ctx.config_at(first, "fanOutId"))])
