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
from typing import Iterable

import attrs

from loopc.analyzer.context import Ctx
from loopc.analyzer.facts import Stack
from loopc.compiler.model import Edge, End, Join, Loop, Node, Switch
from loopc.compiler.report import node_entity, scope_entity
from loopc.compiler.scopemap import Scope, ScopeMap, opening_scope, owner_kind
from loopc.compiler.yamlnodes import YMap, YScalar
from loopc.diagnostics import Applicability, Fix, TextEdit

PARALLEL = ("fork", "all_match", "fan_out")
#: Bound on breadth-first "is this node after the scope?" searches per
#: analysis (each is O(nodes + edges)); beyond it a disagreement is read as a
#: leak.  Only ever reached on plans with that many distinct scope defects.
MAX_AFTER_SEARCHES = 64


def describe(f: Scope) -> str:
    """Human text for a frame: ``branch `legal` of fork `split``` etc."""
    if f.kind == "fork":
        return f"branch `{f.branch}` of fork `{f.owner}`"
    if f.kind == "all_match":
        return f"port `{f.branch}` of all_match switch `{f.owner}`"
    if f.kind == "fan_out":
        return f"the item body of fan_out `{f.owner}`"
    return f"the body of loop `{f.owner}`"


def stack_text(st: Stack) -> str:
    return " › ".join(describe(f) for f in st) if st else "outside every scope"


def token_place(st: Stack) -> str:
    """Where a token with stack ``st`` is, as a clause: ``the token is in
    branch `a` of fork `f` › …`` or ``the token is outside every scope``."""
    return f"the token is in {stack_text(st)}" if st else "the token is outside every scope"


@attrs.define
class Arrival:
    """A token arriving over ``edge`` with ``stack``; frames at index ≥
    ``taint`` are unreliable (``None``: all reliable)."""

    edge: Edge
    stack: Stack
    taint: int | None


def _reliable(a: Arrival, depth: int) -> bool:
    """True when frames up to and including index ``depth`` are reliable."""
    return a.taint is None or a.taint > depth


def _min_taint(*ts: int | None) -> int | None:
    vals = [t for t in ts if t is not None]
    return min(vals) if vals else None


class ScopeTyping:
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

    def __init__(self, ctx: Ctx, scopes: ScopeMap, cut: set[str], order: list[str]) -> None:
        self.ctx = ctx
        self.scopes = scopes
        self.closers = scopes.closers
        self.cut = cut
        self.order = order
        self.pos = {n: i for i, n in enumerate(order)}
        self.node_stacks: dict[str, Stack] = {}
        self.node_taint: dict[str, int | None] = {}
        self.edge_stacks: dict[str, Stack] = {}
        self.edge_taint: dict[str, int | None] = {}
        self.owner_ok: dict[str, str] = {}  # join id -> owner kind when valid
        self._after: dict[str, set[str]] = {}
        self._searches = 0
        self.arrived: dict[str, set[str | None]] = {}  # owner -> branch keys that reach a join
        self.misdirected: dict[str, str] = {}  # join id -> the owner it was meant to close (LP4309)

    # ------------------------------------------------------- the reporter's taint
    def implicate(self, *owners: str) -> None:
        """Scopes of ``owners`` are already named by a diagnostic (or their
        arrivals are unreliable because of one): findings derived from them
        are follow-ons (reporter taint)."""
        self.ctx.r.taint(*(scope_entity(o) for o in owners))

    def implicate_frames(self, frames: Iterable[Scope]) -> None:
        """A token leaves ``frames`` wrongly (already reported): each
        branch it leaves never reaching its join is a follow-on."""
        self.ctx.r.taint(*(scope_entity(f.owner, f.branch) for f in frames))

    def implicate_set_aside(self) -> None:
        """An edge an earlier pass set aside (the schema pass rejected it, or
        the graph pass reported it: LP4004, LP4008) is not analysed, so the
        branch it leaves may look as if it never reached its join: every
        fork/all_match branch its source is in, or that it opens, is
        implicated.  When a rejected edge's source cannot be read, every
        branch is."""
        sources = self.ctx.set_aside
        if sources is None:
            self.ctx.r.taint(*(scope_entity(o.owner, b) for o in self.scopes.owners.values()
                               for b in o.branches))
            return
        for nid, port in sources:
            self.implicate_frames(f for f in self.scopes.stack(nid) if f.branch is not None)
            if port is not None:
                self.ctx.r.taint(scope_entity(nid, port))

    def implicated(self, owner: str) -> bool:
        return self.ctx.r.tainted(scope_entity(owner))

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

                cands = [n for n in ctx.reached if owner_kind(ctx.nodes[n]) in (
                    ("fork", "all_match") if key == "forkId" else ("fan_out",))]
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
            if kind is not None and (key == "forkId" and kind in ("fork", "all_match")
                                     or key == "fanOutId" and kind == "fan_out"):
                self.owner_ok[jid] = kind
                continue
            if kind in ("fork", "all_match", "fan_out"):
                right = "fanOutId" if kind == "fan_out" else "forkId"
                kn = c.src.key_node(key) if isinstance(c.src, YMap) else None
                fix = (Fix(f"use `{right}`", (TextEdit(kn.span, right),), Applicability.SAFE)
                       if kn is not None else None)
                what = "a fan_out" if kind == "fan_out" else (
                    "a fork" if kind == "fork" else "an all_match switch")
                ctx.report("LP4311", kn or at,
                           f"join `{jid}` names {what} `{c.owner}` with `{key}`; a join closing {what} "
                           f"names it with `{right}`", node=jid,
                           related=[(f"`{c.owner}` is {what}", ctx.node_at(owner))], fix=fix)
            else:
                detail = ("a first_match switch chooses one port and opens no parallel scope"
                          if owner.type == "switch" else f"a {owner.type} opens no parallel scope")
                ctx.report("LP4301", at,
                           f"join `{jid}` names `{c.owner}` as its owner, but {detail}; `{key}` must name "
                           + ("a fork or an all_match switch" if key == "forkId" else "a fan_out"),
                           node=jid, related=[(f"`{c.owner}` is declared here", ctx.node_at(owner))])
            self.implicate(c.owner)

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
        taint = _min_taint(*(a.taint for a in arrivals))
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
            if not _reliable(a, idx):
                self.implicate(owner)
                continue
            branches.add(st[idx].branch)
            above = st[idx + 1:]
            if not above:
                continue
            e0 = above[0]
            if not _reliable(a, idx + 1):
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
        kinds = ("fan_out",) if self.owner_ok[join.id] == "fan_out" else ("fork", "all_match")
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
        what = {"fork": "fork", "all_match": "all_match switch", "fan_out": "fan_out"}[meant.kind]
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
            return first.stack, _min_taint(inner_at, *(a.taint for a in arrivals))
        c = len(first.stack)
        for a in arrivals[1:]:
            k = 0
            while k < c and k < len(a.stack) and a.stack[k] == first.stack[k]:
                k += 1
            c = k
        return first.stack[:c], _min_taint(c, *(a.taint for a in arrivals))

    def report_cross_scope(self, join: Node, a: Arrival, okind: str) -> None:
        ctx = self.ctx
        c = join.config
        assert isinstance(c, Join)
        owner = c.owner
        key = "forkId" if c.fork_id is not None else "fanOutId"
        what = {"fork": "fork", "all_match": "all_match switch", "fan_out": "fan_out"}[okind]
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

    # --------------------------------------------------------------- merges
    def merge(self, node: Node, arrivals: list[Arrival]) -> tuple[Stack, int | None]:
        """An ordinary node (or a loop's ``in``) must receive one stack."""
        chosen = arrivals[0]
        taint = chosen.taint
        for a in arrivals[1:]:
            if a.stack == chosen.stack:
                taint = _min_taint(taint, a.taint)
                continue
            s1, s2 = chosen.stack, a.stack
            c = 0
            while c < len(s1) and c < len(s2) and s1[c] == s2[c]:
                c += 1
            if not (_reliable(chosen, c) and _reliable(a, c)) or (taint is not None and taint <= c):
                taint = _min_taint(taint, c)
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
            if not above or not _reliable(a, idx + 1):
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


def type_scopes(ctx: Ctx, scopes: ScopeMap, cut: set[str], order: list[str]) -> ScopeTyping:
    """Run the scope-typing pass (passes 8–10 of docs/language.md#compiler-passes) over
    the structural map ``scopes`` and report its findings on ``ctx``;
    returns the pass with its proof stacks."""
    st = ScopeTyping(ctx, scopes, cut, order)
    st.run()
    return st
