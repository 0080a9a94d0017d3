"""The scope-typing rules on owners and back edges (:mod:`loopc.analyzer.scopes`):
a join's owner (LP4301/LP4311/LP4312), a fork's or all_match switch's
closing join (LP4308–LP4310), a loop's ``continue``/``break`` edges and a
loop entered only through them (LP4502, LP4504); the upper rule layer of
:class:`~loopc.analyzer.scopes.ScopeTyping`."""
from __future__ import annotations

from typing import Iterable

from loopc.analyzer.scope_frames import PARALLEL, Arrival, describe, reliable_at, token_place
from loopc.analyzer.scope_reports import ScopeReports
from loopc.compiler.model import Join, Loop, Node
from loopc.compiler.report import node_entity, scope_entity
from loopc.compiler.scopemap import Scope, owner_kind
from loopc.compiler.yamlnodes import YMap
from loopc.diagnostics import Applicability, Fix, TextEdit
from loopc.kinds import tables as _kind_tables
from loopc.kinds.base import an_owner

#: source key of a closing node (a join's forkId/fanOutId) -> the scopes its owner may open (Kind.closes)
_CLOSES = _kind_tables().closes


class ScopeOwners(ScopeReports):
    """Owner and back-edge rules of the scope-typing pass."""

    # ----------------------------------------------------------- join owners
    def check_owners(self) -> None:
        """``forkId`` must name a reachable fork or all_match switch and
        ``fanOutId`` a fan_out (LP4301 / LP4311 / LP4312)."""
        ctx = self.ctx
        for jid in ctx.ordered(ctx.reached):
            j = ctx.nodes[jid]
            c = j.config
            if not isinstance(c, Join) or not c.owner:
                continue
            key = "forkId" if c.fork_id is not None else "fanOutId"
            at = ctx.config_at(j, key)
            owner = ctx.nodes.get(c.owner)
            if owner is None:
                if ctx.r.tainted(node_entity(c.owner)):
                    continue
                from loopc.compiler.graph import suggest

                cands = [n for n in ctx.reached if owner_kind(ctx.nodes[n]) in _CLOSES[key]]
                s = suggest(c.owner, cands)
                if s:
                    self.implicate(s)  # its missing join is this typo, not LP4308
                ctx.report("LP4312", at,
                           f"join `{jid}` names owner `{c.owner}` in `{key}`, but no node has that id"
                           + (f"; did you mean `{s}`?" if s else ""),
                           node=jid, fix=Fix(f"replace with `{s}`", (TextEdit(at.span, s),), Applicability.UNSAFE)
                           if s and at else None)
                continue
            if c.owner not in ctx.reached:
                continue  # the graph pass reports the unreachable owner
            kind = owner_kind(owner)
            if kind is not None and kind in _CLOSES[key]:
                self.owner_ok[jid] = kind
                continue
            right = next((k for k, scopes in _CLOSES.items() if kind in scopes), None)
            if kind is not None and right is not None:
                kn = c.src.key_node(key) if isinstance(c.src, YMap) else None
                fix = (Fix(f"use `{right}`", (TextEdit(kn.span, right),), Applicability.SAFE)
                       if kn is not None else None)
                what = an_owner(kind)
                ctx.report("LP4311", kn or at,
                           f"join `{jid}` names {what} `{c.owner}` with `{key}`; a join closing {what} "
                           f"names it with `{right}`", node=jid,
                           related=[(f"`{c.owner}` is {what}", ctx.node_at(owner))], fix=fix)
            else:
                detail = ("a first_match switch chooses one port and opens no parallel scope"
                          if owner.type == "switch" else f"a {owner.type} opens no parallel scope")
                ctx.report("LP4301", at,
                           f"join `{jid}` names `{c.owner}` as its owner, but {detail}; `{key}` must name "
                           + " or ".join(an_owner(k) for k in _CLOSES[key]),
                           node=jid, related=[(f"`{c.owner}` is declared here", ctx.node_at(owner))])
            self.implicate(c.owner)

    def root(self, node: Node) -> int:
        """A reachable node other than the entry with no forward arrival is
        reached only through cut cycle edges (LP4501, already reported) or
        is a loop entered only through its own ``continue``/``break``: no
        iteration of it exists for those back edges (LP4504).  Its stack is
        unknown (taint 0)."""
        ctx = self.ctx
        if isinstance(node.config, Loop):
            for e in ctx.inc.get(node.id, ()):
                if e.id in ctx.back_edges:
                    self.implicate(node.id)
                    ctx.report(
                        "LP4504", ctx.edge_to(e),
                        f"edge `{e.id}` leads to loop `{node.id}` port `{e.to_port}`, but `{node.id}` is "
                        f"never entered through its `in` port, so no iteration of it exists for this edge "
                        f"to end",
                        edge=e.id, node=node.id, related=[(f"loop `{node.id}`", ctx.node_at(node))])
        return 0

    # ----------------------------------------------------------- back edges
    def check_back_edges(self) -> None:
        """Edges into ``continue``/``break`` come from the loop's own body
        and leave no inner scope open (docs/reference.md#loops)."""
        ctx = self.ctx
        for e in ctx.edges:
            if e.id not in ctx.back_edges or e.id not in self.edge_stacks:
                continue
            st, taint = self.edge_stacks[e.id], self.edge_taint[e.id]
            a = Arrival(e, st, taint)
            loop_id = e.to_node
            idx = None
            for i in range(len(st) - 1, -1, -1):
                if st[i].owner == loop_id and st[i].kind == "loop":
                    idx = i
                    break
            if idx is None:
                if taint is not None:
                    continue
                self.implicate(loop_id)
                ctx.report(
                    "LP4504", ctx.edge_to(e),
                    f"edge `{e.id}` leads to loop `{loop_id}` port `{e.to_port}` from outside the "
                    f"loop's body ({token_place(st)}); only a path that started at "
                    f"`{loop_id}` port `body` can continue or break that loop",
                    edge=e.id, node=loop_id,
                    related=[(f"loop `{loop_id}`", ctx.node_at(loop_id))])
                continue
            above = st[idx + 1:]
            if not above or not reliable_at(a, idx + 1):
                continue
            inner = above[0]
            self.implicate(loop_id, inner.owner)
            self.implicate_frames(above)  # every scope the iteration's end leaves open
            what = ("unjoined parallel work" if inner.kind in PARALLEL else "another open loop")
            close = (f"close it at join `{inner.closer}` first" if inner.kind in PARALLEL and inner.closer
                     else f"end that loop's iteration at `{inner.owner}` first" if inner.kind == "loop"
                     else f"close `{inner.owner}` with a join first")
            ctx.report(
                "LP4502", ctx.edge_to(e),
                f"edge `{e.id}` ends an iteration of loop `{loop_id}` (port `{e.to_port}`) from inside "
                f"{describe(inner)}, leaving {what} behind (a break or continue cannot "
                f"leave another open scope); {close}",
                edge=e.id, node=loop_id,
                related=[(f"{describe(inner)} opens here",
                          ctx.port_at(ctx.nodes[inner.owner], inner.branch) if inner.branch
                          else ctx.node_at(inner.owner))])

    # --------------------------------------------------------- owner checks
    def check_scope_owners(self) -> None:
        """Every fork / all_match switch has exactly one closing join
        (fan-outs: :mod:`loopc.analyzer.fanout`); an ``all`` join whose
        branch can never arrive is flagged (warning)."""
        ctx = self.ctx
        for nid in self.order:
            node = ctx.nodes[nid]
            kind = owner_kind(node)
            if kind is None or kind == "loop":
                continue
            joins = ctx.joins_of.get(nid, [])
            valid = [j for j in joins if j in self.owner_ok and j not in self.misdirected]
            if kind == "fan_out":
                continue  # fanout.check_fan_outs
            if not valid and not joins:
                if self.implicated(nid):
                    continue
                what = "fork" if kind == "fork" else "all_match switch"
                ctx.report(
                    "LP4308", ctx.node_at(node),
                    f"{what} `{nid}` has no closing join: its branches run in parallel and must "
                    f"meet again in a join with `forkId: {nid}`", node=nid)
                continue
            if len(valid) > 1:
                first = ctx.nodes[valid[0]]
                for j in valid[1:]:
                    ctx.report(
                        "LP4309", ctx.config_at(ctx.nodes[j], "forkId"),
                        f"join `{j}` closes `{nid}`, which join `{valid[0]}` already closes; a fork or "
                        f"all_match switch has exactly one join, so scopes nest properly: "
                        f"remove this join or point it at the scope it should close",
                        node=j, related=[(f"first join of `{nid}`", ctx.config_at(first, "forkId"))])
                self.implicate(nid)
            if not valid or self.implicated(nid):
                continue
            jn = ctx.nodes[valid[0]]
            assert isinstance(jn.config, Join)
            if jn.config.mode != "all":
                continue
            ports = list(self.branch_keys(node))
            arrived = self.arrived.get(nid, set())
            missing = [p for p in ports if p not in arrived]
            for p in missing:
                ctx.report(
                    "LP4310", ctx.port_at(node, p),
                    f"{describe(Scope(kind, nid, p))} never reaches join `{jn.id}`: every path from "
                    f"it ends in a failure, so the `all` join "
                    + ("can never complete when this port matches" if kind == "all_match"
                       else "can never complete")
                    + " and always takes its failure route", key=(nid, p), node=nid,
                    needs=[scope_entity(nid, p)],
                    related=[(f"join `{jn.id}`", ctx.node_at(jn))])

    @staticmethod
    def branch_keys(node: Node) -> Iterable[str]:
        from loopc.compiler.ports import branch_ports

        return branch_ports(node)
