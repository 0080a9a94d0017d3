"""The scope-typing findings that name a token in the wrong scope
(:mod:`loopc.analyzer.scopes`; LP4302–LP4307, LP4309/LP4402 for a
misdirected join, LP4403/LP4404, LP4503): one method per message, the
middle layer of :class:`~loopc.analyzer.scopes.ScopeTyping`."""
from __future__ import annotations

from loopc.analyzer.scope_frames import Arrival, ScopeState, describe, token_place
from loopc.analyzer.facts import Stack
from loopc.compiler.model import Join, Node, Switch
from loopc.compiler.scopemap import Scope
from loopc.compiler.yamlnodes import YScalar
from loopc.diagnostics import Applicability, Fix, TextEdit
from loopc.kinds.base import SCOPE_OWNERS


class ScopeReports(ScopeState):
    """Reports of the scope-typing pass."""

    def report_misdirected_join(self, join: Node, arrivals: list[Arrival], meant: Scope) -> tuple[Stack, int | None]:
        """LP4309 (LP4402 for a fan_out's join) at the owner of a join that closes the wrong scope
        (:meth:`meant_owner`), with the fix naming the scope its arrivals come
        from; the join is then read as closing that scope, so neither its
        arrivals (LP4302) nor the scope's missing join (LP4308, LP4401) is a second
        finding."""
        ctx = self.ctx
        c = join.config
        assert isinstance(c, Join)
        owner = c.owner
        key = "forkId" if c.fork_id is not None else "fanOutId"
        self.misdirected[join.id] = meant.owner
        self.implicate(owner, meant.owner)
        first = next(j for j in ctx.joins_of[owner] if j != join.id and j in self.owner_ok)
        at = ctx.config_at(join, key)
        what = SCOPE_OWNERS[meant.kind]
        from_what = (f"the item body of fan_out `{meant.owner}`" if meant.kind == "fan_out"
                     else f"the branches of {what} `{meant.owner}`")
        fix = (Fix(f"replace with `{meant.owner}`", (TextEdit(at.span, meant.owner),), Applicability.UNSAFE)
               if isinstance(at, YScalar) else None)
        fan = self.owner_ok[join.id] == "fan_out"
        ctx.report(
            "LP4402" if fan else "LP4309", at,
            f"join `{join.id}` closes {'fan_out ' if fan else ''}`{owner}`, which join `{first}` already "
            f"closes; every arrival at "
            f"`{join.id}` comes from {from_what}, which has no join of its own: "
            f"did you mean `{key}: {meant.owner}`?",
            node=join.id, fix=fix,
            related=[(f"join `{first}` closes `{owner}`", ctx.config_at(ctx.nodes[first], key)),
                     (f"`{meant.owner}` opens the scope", ctx.node_at(meant.owner))])
        st = arrivals[0].stack
        return st[:-1], None

    def report_cross_scope(self, join: Node, a: Arrival, okind: str) -> None:
        ctx = self.ctx
        c = join.config
        assert isinstance(c, Join)
        owner = c.owner
        key = "forkId" if c.fork_id is not None else "fanOutId"
        what = SCOPE_OWNERS[okind]
        ctx.report(
            "LP4302", ctx.edge_to(a.edge),
            f"edge `{a.edge.id}` reaches join `{join.id}` from outside the scope of its owner, {what} "
            f"`{owner}` ({token_place(a.stack)}); a join correlates arrivals by the owner's "
            f"activation, so this one could never be matched and the join could wait forever",
            node=join.id, edge=a.edge.id,
            related=[(f"the join names `{owner}` here", ctx.config_at(join, key)),
                     (f"{what} `{owner}`", ctx.node_at(owner))])

    def report_bypass(self, join: Node | None, a: Arrival, f: Scope, *, merge_node: Node | None = None) -> None:
        """A branch of fork/all_match ``f.owner`` leaves its scope without
        passing its closing join (into an outer ``join``, or to a node after
        the scope)."""
        ctx = self.ctx
        culprit = join or merge_node
        where = (f"reaches join `{join.id}` of an enclosing scope" if join is not None
                 else f"leaves the scope at `{merge_node.id}`")  # type: ignore[union-attr]
        closer = f.closer
        tail = (f"join `{closer}` {'(mode all) would wait for it forever' if self.join_mode(closer) == 'all' else 'never sees it arrive'}"
                if closer else f"`{f.owner}` has no join")
        ctx.report(
            "LP4304", ctx.edge_to(a.edge),
            f"{describe(f)} {where} over edge `{a.edge.id}` without passing its own join: {tail}, "
            f"and the token escapes the scope while its siblings are still live; route the branch to "
            + (f"`{closer}`" if closer else f"a join with `forkId: {f.owner}`"),
            key=(a.edge.id,), node=culprit.id if culprit else None, edge=a.edge.id,
            related=[(f"{describe(f)} opens here", ctx.port_at(ctx.nodes[f.owner], f.branch)
                      if f.branch else ctx.node_at(f.owner))]
            + ([(f"the join of `{f.owner}`", ctx.node_at(closer))] if closer else []))

    def join_mode(self, jid: str | None) -> str | None:
        n = self.ctx.nodes.get(jid) if jid else None
        return n.config.mode if n is not None and isinstance(n.config, Join) else None

    def report_sibling_merge(self, node: Node, a1: Arrival, a2: Arrival, f1: Scope, f2: Scope) -> None:
        ctx = self.ctx
        closer = f1.closer
        owner = ctx.nodes.get(f1.owner)
        default = owner.config.default if owner is not None and isinstance(owner.config, Switch) else None
        if f1.kind == "all_match" and default in (f1.branch, f2.branch):
            why = (f"the default runs only when no case matches, but `{node.id}` would still belong to "
                   f"two branches of `{f1.owner}`, so neither its failure route nor the join's branch "
                   f"key is defined")
        else:
            why = (f"`{node.id}` would hold two tokens of one `{f1.owner}` activation "
                   f"(a branch arrives once, and only at its join)")
        ctx.report(
            "LP4306", ctx.edge_to(a2.edge),
            f"{describe(f2)} (edge `{a2.edge.id}`) and {describe(f1)} (edge `{a1.edge.id}`) merge into "
            f"{node.type} `{node.id}` without a join: {why}; merge parallel branches only in "
            + (f"join `{closer}`" if closer else f"a join with `forkId: {f1.owner}`"),
            key=(node.id, f1.owner), node=node.id, edge=a2.edge.id,
            related=[(f"{describe(f1)} arrives here", ctx.edge_to(a1.edge)),
                     (f"`{f1.owner}` opens the branches", ctx.node_at(f1.owner))])

    def report_overlap(self, node: Node, a1: Arrival, a2: Arrival, f1: Scope, f2: Scope) -> None:
        ctx = self.ctx
        ctx.report(
            "LP4305", ctx.edge_to(a2.edge),
            f"{node.type} `{node.id}` is reached from inside {describe(f1)} (edge `{a1.edge.id}`) and "
            f"from inside {describe(f2)} (edge `{a2.edge.id}`): the two scopes overlap instead of "
            f"nesting; close each scope with "
            f"its own join before the paths meet",
            key=(node.id,), node=node.id, edge=a2.edge.id,
            related=[(f"{describe(f1)} arrives here", ctx.edge_to(a1.edge)),
                     (f"`{f1.owner}` opens its scope", ctx.node_at(f1.owner)),
                     (f"`{f2.owner}` opens its scope", ctx.node_at(f2.owner))])

    def report_leak(self, node: Node, a: Arrival, f: Scope, *, into_join: bool) -> None:
        """``a`` carries frame ``f`` past the end of its scope."""
        ctx = self.ctx
        if f.kind in ("fork", "all_match"):
            self.report_bypass(node if into_join else None, a, f, merge_node=None if into_join else node)
            return
        where = (f"reaches join `{node.id}` of an enclosing scope" if into_join
                 else f"reaches `{node.id}` (after the scope)")
        if f.kind == "fan_out":
            closer = f.closer
            ctx.report(
                "LP4404", ctx.edge_to(a.edge),
                f"an item path of fan_out `{f.owner}` {where} over edge `{a.edge.id}` without passing "
                f"the fan-out join: every item path must end at "
                + (f"join `{closer}`" if closer else "the fan-out's join")
                + " or a failure terminal",
                key=(a.edge.id,), node=node.id, edge=a.edge.id,
                related=[(f"fan_out `{f.owner}`", ctx.node_at(f.owner))]
                + ([(f"its join `{closer}`", ctx.node_at(closer))] if closer else []))
            return
        ctx.report(
            "LP4503", ctx.edge_to(a.edge),
            f"a path in the body of loop `{f.owner}` {where} over edge `{a.edge.id}` without passing "
            f"the loop's `continue` or `break` port: the loop activation would stay open; "
            f"end the iteration at `{f.owner}` port `continue` or "
            f"`break`",
            key=(a.edge.id,), node=node.id, edge=a.edge.id,
            related=[(f"loop `{f.owner}`", ctx.node_at(f.owner))])

    def report_ingress(self, node: Node, outside: Arrival, inside: Arrival, f: Scope) -> None:
        ctx = self.ctx
        if f.kind == "fan_out":
            ctx.report(
                "LP4403", ctx.edge_to(outside.edge),
                f"edge `{outside.edge.id}` enters the item body of fan_out `{f.owner}` at `{node.id}` "
                f"from outside it ({token_place(outside.stack)}); an item body is entered "
                f"only through `{f.owner}` port `item`",
                key=(outside.edge.id,), node=node.id, edge=outside.edge.id,
                related=[(f"`{node.id}` is in the item body: reached from it over `{inside.edge.id}`",
                          ctx.edge_to(inside.edge)),
                         (f"fan_out `{f.owner}`", ctx.node_at(f.owner))])
            return
        entry = (f"`{f.owner}` port `{f.branch}`" if f.kind != "loop" else f"loop `{f.owner}` port `body`")
        ctx.report(
            "LP4307", ctx.edge_to(outside.edge),
            f"edge `{outside.edge.id}` enters {describe(f)} at `{node.id}` from outside the scope "
            f"({token_place(outside.stack)}); a scope is entered only through {entry}, "
            f"otherwise its join or loop never correlates the token",
            key=(outside.edge.id,), node=node.id, edge=outside.edge.id,
            related=[(f"`{node.id}` is inside {describe(f)}: reached from it over `{inside.edge.id}`",
                      ctx.edge_to(inside.edge)),
                     (f"`{f.owner}` opens the scope", ctx.node_at(f.owner))])
