"""Scope typing: fork/join pairing and nesting, dynamic fan-out boundaries,
loop-body boundaries (docs/reference.md#parallel-scopes, docs/reference.md#fan-out-bodies,
docs/reference.md#loops; passes 8–10 of docs/language.md#compiler-passes).

One linear pass pushes the stack of open fork / all_match / fan-out / loop
scopes along the graph in topological order (loop back edges and cycles
outside loops removed):

* leaving a fork branch port, an all_match port, a fan_out ``item`` port or
  a loop ``body`` port pushes that scope's frame onto the edge's stack;
* an edge into a join pops the frame of the join's owner (and must carry it
  on top: that is the whole fork/join contract);
* a loop's ``done`` edge carries the loop node's own stack; edges into
  ``continue``/``break`` must carry the loop's frame on top;
* every other node must receive the same stack on all incoming edges — the
  points where incoming stacks disagree are exactly the unsound merges.

Because every join names its owner, each disagreement names its culprit
edge and the scope it leaks from or into:

=====================  =============================================  ======
where                  what                                           code
=====================  =============================================  ======
join, no owner frame   arrival from outside the owner's scope         LP4302
join, inner open       two branches of an inner scope reach it        LP4303
join, inner open       one inner branch bypasses its own join         LP4304
merge, same owner      sibling branches merge without the join        LP4306
merge, other owners    overlapping, improperly nested scopes          LP4305
merge, longer stack    a branch leaks out past its join               LP4304
merge, shorter stack   an edge enters a branch from outside           LP4307
fan-out, leak/ingress  open item path / external body ingress         LP4404/LP4403
loop, leak             the body escapes without continue/break        LP4503
continue/break         leaves an inner scope open                     LP4502
continue/break         comes from outside the loop's body             LP4504
succeeded End          inside any scope                               LP4101
join owner             not a fork/all_match/fan_out, wrong key, none  LP4301/LP4311/LP4312
fork / all_match       no join, two joins                             LP4308/LP4309
``all`` join           a branch can never arrive (warning)            LP4310
loop entered only      through its own continue/break                 LP4504
=====================  =============================================  ======

A failed End is a terminal evaluated per arriving edge (it may be shared
by several scopes; :mod:`loopc.analyzer.terminals` lowers each arrival),
so its incoming stacks need not agree; its own stack is their common
prefix.

Whether a longer-vs-shorter disagreement is a leak or an ingress is decided
by where the merge node sits: after the scope's exit (reachable from its
closing join / the loop's ``done``) it is a leak, otherwise an ingress.  A
node whose stack was disputed is *tainted* above the disagreement depth, and
later checks that depend on tainted frames stay silent (one defect, one
diagnostic); taint clears when a join pops below it.  Nodes are visited once
and each edge once: O((nodes + edges) · depth).
"""
from __future__ import annotations

from collections import deque

from loopc.analyzer.context import Ctx
from loopc.analyzer.facts import Stack
from loopc.analyzer.scope_frames import (
    MAX_AFTER_SEARCHES, PARALLEL, Arrival, describe, min_taint, reliable_at, stack_text, token_place,
)
from loopc.analyzer.scope_owners import ScopeOwners
from loopc.compiler.model import End, Join, Node
from loopc.compiler.scopemap import Scope, ScopeMap, opening_scope
from loopc.kinds import tables as _kind_tables

__all__ = [
    "MAX_AFTER_SEARCHES", "PARALLEL", "Arrival", "ScopeTyping", "describe", "stack_text", "token_place",
    "type_scopes",
]


class ScopeTyping(ScopeOwners):
    """Runs the pass over the structural :class:`ScopeMap` ``scopes`` (its
    frames, owners and closers); results in ``node_stacks``/``node_taint``
    and ``edge_stacks``/``edge_taint`` (the proof's stacks: on a plan the pass
    accepts they equal the map's).  Scopes already named by a diagnostic are
    tainted on the reporter (:meth:`implicate`), so findings derived from
    them — a missing join, a branch that never arrives — stay silent (one
    defect, one diagnostic).  After a defect the proof continues with the
    stack that names no second diagnostic (the inside of a scope after an
    ingress, the outside after a leak), which is why it keeps its own stacks
    rather than the map's first-arrival ones."""

    # ------------------------------------------------------------------ run
    def run(self) -> None:
        ctx = self.ctx
        self.implicate_set_aside()
        self.check_owners()
        for nid in self.order:
            node = ctx.nodes[nid]
            arrivals = self.arrivals(nid)
            st: Stack
            taint: int | None
            if not arrivals:
                st, taint = (), (None if nid == ctx.plan.entry else self.root(node))
            elif isinstance(node.config, End):
                st, taint = self.end_arrivals(node, arrivals)
            elif nid in self.owner_ok:
                st, taint = self.join_arrivals(node, arrivals)
            elif isinstance(node.config, Join):
                st, taint = self.opaque_join(arrivals)
            else:
                st, taint = self.merge(node, arrivals)
            self.node_stacks[nid] = st
            self.node_taint[nid] = taint
            for e in ctx.out.get(nid, ()):
                f = self.opening(node, e.from_port)
                self.edge_stacks[e.id] = st + (f,) if f is not None else st
                self.edge_taint[e.id] = taint
        self.check_back_edges()
        self.check_scope_owners()

    def arrivals(self, nid: str) -> list[Arrival]:
        ctx = self.ctx
        out = []
        for e in ctx.inc.get(nid, ()):
            if e.id in ctx.back_edges or e.id in self.cut or e.id not in self.edge_stacks:
                continue
            out.append(Arrival(e, self.edge_stacks[e.id], self.edge_taint[e.id]))
        pos, eidx = self.pos, ctx.edge_index
        out.sort(key=lambda a: (pos.get(a.edge.from_node, 0), eidx[a.edge.id]))
        return out

    def opening(self, node: Node, port: str) -> Scope | None:
        return opening_scope(node, port, self.closers)

    # ----------------------------------------------------------------- ends
    def end_arrivals(self, node: Node, arrivals: list[Arrival]) -> tuple[Stack, int | None]:
        """A failed End is a per-arrival terminal (its scoped meaning is the
        failure sink of each arriving edge); a succeeded End is legal only
        outside every scope (docs/reference.md#parallel-scopes)."""
        ctx = self.ctx
        c = node.config
        if isinstance(c, End) and c.status == "succeeded":
            for a in arrivals:
                if not a.stack:
                    continue
                depth = 0 if a.taint is None else a.taint
                reliable = a.stack if a.taint is None else a.stack[:depth]
                if not reliable:
                    continue
                inner = reliable[-1]
                if inner.kind != "loop" and not ctx.joins_of.get(inner.owner):
                    continue  # the owner has no join: LP4308 / LP4401 name the defect
                self.implicate(inner.owner)
                self.implicate_frames(reliable)  # finishing the Run here leaves every scope
                exit_hint = (f"route it to join `{inner.closer}`" if inner.kind != "loop" and inner.closer
                             else f"route it to loop `{inner.owner}` port `continue` or `break`"
                             if inner.kind == "loop" else "close the scope with a join")
                ctx.report(
                    "LP4101", ctx.edge_to(a.edge),
                    f"succeeded End `{node.id}` is reached inside {describe(inner)} (over edge "
                    f"`{a.edge.id}`); a succeeded End is legal only outside every fork, all_match, "
                    f"fan-out and loop scope, because finishing the Run there would strand the "
                    f"scope's other work: {exit_hint}",
                    key=(node.id, inner.owner), node=node.id, edge=a.edge.id,
                    related=[(f"{describe(inner)} opens here", ctx.port_at(ctx.nodes[inner.owner], inner.branch)
                              if inner.branch else ctx.node_at(inner.owner))])
        # the End's own stack: the scopes every arrival is inside (a failed
        # End may be shared by several scopes; its meaning is per arrival)
        first = arrivals[0]
        common = len(first.stack)
        for a in arrivals[1:]:
            k = 0
            while k < common and k < len(a.stack) and a.stack[k] == first.stack[k]:
                k += 1
            common = k
        taint = min_taint(*(a.taint for a in arrivals))
        return first.stack[:common], (taint if taint is not None and taint < common else None)

    # ---------------------------------------------------------------- joins
    def join_arrivals(self, node: Node, arrivals: list[Arrival]) -> tuple[Stack, int | None]:
        """Every arrival at a join must carry its owner's frame on top
        (docs/reference.md#parallel-scopes: no cross-scope joins, no
        branch arriving twice, proper nesting)."""
        ctx = self.ctx
        c = node.config
        assert isinstance(c, Join)
        owner = c.owner
        okind = self.owner_ok[node.id]
        meant = self.meant_owner(node, arrivals)
        if meant is not None:
            return self.report_misdirected_join(node, arrivals, meant)
        result: tuple[Stack, int | None] | None = None
        inner: dict[str, list[tuple[Arrival, Scope]]] = {}
        branches = self.arrived.setdefault(owner, set())
        for a in arrivals:
            st = a.stack
            idx = None
            for i in range(len(st) - 1, -1, -1):
                if st[i].owner == owner and st[i].kind != "loop":
                    idx = i
                    break
            if idx is None:
                if a.taint is not None:
                    self.implicate(owner)
                    continue
                self.implicate(owner)
                # the token leaves every frame it is in beyond the owner's own
                # stack: a branch that never reaches its join is this defect
                outside = self.node_stacks.get(owner, ())
                k = 0
                while k < len(outside) and k < len(st) and outside[k] == st[k]:
                    k += 1
                self.implicate_frames(st[k:])
                self.report_cross_scope(node, a, okind)
                continue
            if result is None:
                t = a.taint if (a.taint is not None and a.taint < idx) else None
                result = (st[:idx], t)
            if not reliable_at(a, idx):
                self.implicate(owner)
                continue
            branches.add(st[idx].branch)
            above = st[idx + 1:]
            if not above:
                continue
            e0 = above[0]
            if not reliable_at(a, idx + 1):
                continue
            self.implicate(e0.owner)
            self.implicate(owner)
            self.implicate_frames(above)  # every scope the token leaves here
            if e0.kind == "loop":
                self.report_leak(node, a, e0, into_join=True)
            elif e0.kind == "fan_out":
                self.report_leak(node, a, e0, into_join=True)
            else:
                inner.setdefault(e0.owner, []).append((a, e0))
        for iown, lst in inner.items():
            brs = []
            for a, f in lst:
                if f.branch not in brs:
                    brs.append(f.branch)
            owner_frame_text = describe(lst[0][0].stack[[i for i, f in enumerate(lst[0][0].stack)
                                                           if f.owner == owner][-1]])
            if len(brs) >= 2:
                a1, f1 = lst[0]
                a2, f2 = next((a, f) for a, f in lst if f.branch != f1.branch)
                ctx.report(
                    "LP4303", ctx.edge_to(a2.edge),
                    f"{owner_frame_text} can arrive at join `{node.id}` more than once: {describe(f1)} "
                    f"(edge `{a1.edge.id}`) and {describe(f2)} (edge `{a2.edge.id}`) both reach it "
                    f"directly, but a branch arrives exactly once per activation; "
                    + (f"close `{iown}` with its join `{f1.closer}` first"
                       if f1.closer else f"close `{iown}` with its own join first"),
                    key=(node.id, iown), node=node.id, edge=a2.edge.id,
                    related=[(f"first arrival from {describe(f1)}", ctx.edge_to(a1.edge)),
                             (f"`{iown}` opens inside {owner_frame_text}", ctx.node_at(iown))])
            else:
                a1, f1 = lst[0]
                self.report_bypass(node, a1, f1)
        if result is None:
            first = arrivals[0]
            return first.stack, 0
        return result

    def meant_owner(self, join: Node, arrivals: list[Arrival]) -> Scope | None:
        """The scope a join naming the wrong owner was meant to close: its
        owner already has another join (LP4309), and every arrival comes
        straight from a branch (the innermost frame) of one other scope of the kind its key names that has no join
        of its own.  ``None`` when the join is not such a copy."""
        ctx = self.ctx
        c = join.config
        assert isinstance(c, Join)
        owner = c.owner
        if not any(j != join.id and j in self.owner_ok for j in ctx.joins_of.get(owner, ())):
            return None
        kinds = next(scopes for scopes in _kind_tables().closes.values() if self.owner_ok[join.id] in scopes)
        meant: Scope | None = None
        for a in arrivals:
            st = a.stack
            if a.taint is not None or not st:
                return None
            inner = st[-1]
            if inner.kind not in kinds or inner.owner == owner or ctx.joins_of.get(inner.owner):
                return None
            if meant is not None and inner.owner != meant.owner:
                return None
            meant = inner
        return meant

    def opaque_join(self, arrivals: list[Arrival]) -> tuple[Stack, int | None]:
        """A join whose owner is invalid (already reported): no arrival
        checks; it continues with the arrivals' common stack prefix, and
        frames from there on are unreliable (no cascades downstream).  The
        scope each arrival is innermost in most likely meant this join as
        its closer: its missing join or branches are follow-ons of the
        owner defect (LP4301/LP4311/LP4312), so it is implicated."""
        for a in arrivals:
            reliable = a.stack if a.taint is None else a.stack[:a.taint]
            inner = next((f for f in reversed(reliable) if f.kind in PARALLEL), None)
            if inner is not None:
                self.implicate(inner.owner)
        first = arrivals[0]
        if all(a.stack == first.stack for a in arrivals):
            # the join most likely closes the innermost parallel scope of
            # its arrivals: from that frame on, the stack is unknown (a
            # succeeded End after it is no second finding)
            inner_at = next((i for i in range(len(first.stack) - 1, -1, -1)
                             if first.stack[i].kind in PARALLEL), None)
            return first.stack, min_taint(inner_at, *(a.taint for a in arrivals))
        c = len(first.stack)
        for a in arrivals[1:]:
            k = 0
            while k < c and k < len(a.stack) and a.stack[k] == first.stack[k]:
                k += 1
            c = k
        return first.stack[:c], min_taint(c, *(a.taint for a in arrivals))

    # --------------------------------------------------------------- merges
    def merge(self, node: Node, arrivals: list[Arrival]) -> tuple[Stack, int | None]:
        """An ordinary node (or a loop's ``in``) must receive one stack."""
        chosen = arrivals[0]
        taint = chosen.taint
        for a in arrivals[1:]:
            if a.stack == chosen.stack:
                taint = min_taint(taint, a.taint)
                continue
            s1, s2 = chosen.stack, a.stack
            c = 0
            while c < len(s1) and c < len(s2) and s1[c] == s2[c]:
                c += 1
            if not (reliable_at(chosen, c) and reliable_at(a, c)) or (taint is not None and taint <= c):
                taint = min_taint(taint, c)
                continue
            if c < len(s1) and c < len(s2):
                f1, f2 = s1[c], s2[c]
                self.implicate(f1.owner, f2.owner)
                if f1.owner == f2.owner:
                    self.report_sibling_merge(node, chosen, a, f1, f2)
                else:
                    self.report_overlap(node, chosen, a, f1, f2)
                taint = c
                continue
            # one stack extends the other: leak (node after the scope) or ingress
            if len(s1) > len(s2):
                long_, short = chosen, a
            else:
                long_, short = a, chosen
            e0 = long_.stack[c]
            self.implicate(e0.owner)
            if self.is_after(e0, node.id):
                self.implicate_frames(long_.stack[c:])  # every scope the token leaves here
                self.report_leak(node, long_, e0, into_join=False)
                chosen, taint = short, short.taint
            else:
                self.report_ingress(node, short, long_, e0)
                chosen, taint = long_, long_.taint
        return chosen.stack, taint

    def is_after(self, f: Scope, nid: str) -> bool:
        """Is ``nid`` reachable from the exit of ``f``'s scope (the closing
        join's ports, or the loop's ``done`` port)?"""
        key = f.owner
        seen = self._after.get(key)
        if seen is None:
            if self._searches >= MAX_AFTER_SEARCHES:
                return True
            self._searches += 1
            ctx = self.ctx
            if f.kind == "loop":
                starts = [e.to_node for e in ctx.out.get(f.owner, ()) if e.from_port == "done"]
            else:
                starts = [e.to_node for j in ctx.joins_of.get(f.owner, ()) for e in ctx.out.get(j, ())]
            seen = set(starts)
            q = deque(starts)
            while q:
                n = q.popleft()
                for e in ctx.out.get(n, ()):
                    if e.id in ctx.back_edges or e.id in self.cut:
                        continue
                    if e.to_node not in seen:
                        seen.add(e.to_node)
                        q.append(e.to_node)
            self._after[key] = seen
        return nid in seen

def type_scopes(ctx: Ctx, scopes: ScopeMap, cut: set[str], order: list[str]) -> ScopeTyping:
    """Run the scope-typing pass (passes 8–10 of docs/language.md#compiler-passes) over
    the structural map ``scopes`` and report its findings on ``ctx``;
    returns the pass with its proof stacks."""
    st = ScopeTyping(ctx, scopes, cut, order)
    st.run()
    return st
