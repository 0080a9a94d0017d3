"""Graph basics: entry, endpoints, ports, routing and reachability
(docs/reference.md#graph-rules; pass 3 of docs/language.md#compiler-passes, every name resolves,
and the entry/reachability/routing half of pass 6).

:func:`check_graph` reports, each defect once:

* LP4001 ``graph.entry_missing`` — ``entry`` names no node;
* LP4002 ``graph.dangling_node`` — an edge endpoint names no node (once per
  missing id, at the first edge naming it, the others related; the
  did-you-mean only for a node that fits every such edge);
* LP4003 ``graph.unknown_port`` — ``from.port`` is not a source port of that
  node type (this includes ``timed_out`` on a wait without ``timeout`` and any
  edge leaving an End), or ``to.port`` is not a target port;
* LP4004 ``graph.port_multiple_edges`` — a second edge leaves one source port
  (ambiguous ordinary branching);
* LP4005 ``graph.port_unrouted`` — a success/control port has no edge;
* LP4006 ``graph.unreachable`` — a node cannot be reached from the entry
  (one that no edge touches is "not connected", and not also LP4005/LP4008);
* LP4007 ``graph.no_succeeded_end`` — no succeeded End is reachable;
* LP4008 ``graph.continue_unrouted`` — a loop has no edge into ``continue``.

Cycles, scope soundness and terminal analysis belong to the analyzer.

Cascade rules ("one defect, one diagnostic"): endpoints naming a node the
schema pass rejected (``plan.malformed_nodes``) are silent; edges the schema
pass rejected still count, from their raw YAML endpoints, as routing their
source port and as reaching their target; a node with an unknown outgoing
port is not also reported for unrouted ports (likewise ``continue`` for a
loop with an unknown incoming port); a node reached only through an edge
with a dangling endpoint (the source does not exist, or the target is a typo
for it) is not reported unreachable, and the port of a typo'd source node is
not reported unrouted.  All loops are iterative and linear in
nodes + edges.
"""
from __future__ import annotations

from collections import deque
from typing import Iterable

from loopc.compiler.model import Edge, End, Join, Node, Plan
from loopc.compiler.ports import must_route, source_ports, target_ports
from loopc.compiler.report import Reporter, decl_path, edge_entity
from loopc.compiler.schema import FROM_KEYS, stand_in
from loopc.compiler.sourcemap import port_node
from loopc.compiler.scopemap import LOOP_CLOSING_PORTS, Scope, build_scope_map, opening_scope, owner_kind
from loopc.compiler.spelling import suggest as _spelling_suggest
from loopc.compiler.yamlnodes import YMap, YNode, YScalar, YSeq
from loopc.diagnostics import Applicability, Fix, TextEdit

__all__ = ["check_graph", "suggest"]


def suggest(word: str, candidates: Iterable[str]) -> str | None:
    """Closest candidate to ``word`` for a "did you mean" hint, or ``None``:
    the one rule of :func:`loopc.compiler.spelling.suggest` (node ids, ports,
    scopes and fields named the way keys and values are).

    Deterministic: ties resolve to the lexicographically smallest candidate.
    """
    if not isinstance(word, str) or not word:
        return None
    pool = sorted(set(c for c in candidates if isinstance(c, str) and c))
    return _spelling_suggest(word, pool) if pool else None


def _hint(word: str, candidates: Iterable[str]) -> tuple[str, str | None]:
    s = suggest(word, candidates)
    return (f"; did you mean `{s}`?" if s else ""), s


def _fix(at: YNode | None, replacement: str | None) -> Fix | None:
    if replacement is None or not isinstance(at, YScalar):
        return None
    return Fix(f"replace with `{replacement}`", (TextEdit(at.span, replacement),), Applicability.UNSAFE)


def _sub(m: YNode | None, *keys: str) -> YNode | None:
    """Walk ``keys`` down nested mappings; ``None`` when a step is missing."""
    for k in keys:
        if not isinstance(m, YMap):
            return None
        m = m.get(k)
    return m


def _str_at(m: YNode | None, *keys: str) -> str | None:
    v = _sub(m, *keys)
    if isinstance(v, YScalar) and isinstance(v.value, str):
        return v.value
    return None


def _ports_text(ports: Iterable[str]) -> str:
    ps = [f"`{p}`" for p in ports]
    return ", ".join(ps) if ps else "none"


class _RawEdge:
    """Endpoints of an edge the schema pass rejected, read from its YAML
    (``None`` where the YAML does not say)."""

    __slots__ = ("from_node", "from_port", "to_node", "to_port")

    def __init__(self, m: YMap) -> None:
        frm, to = _sub(m, "from"), _sub(m, "to")
        self.from_node = _str_at(_endpoint_key(frm, "node"))
        self.from_port = _str_at(_endpoint_key(frm, "port"))
        self.to_node = _str_at(_endpoint_key(to, "node"))
        port = _endpoint_key(to, "port")
        self.to_port = _str_at(port) if port is not None else "in"


def _endpoint_key(m: YNode | None, key: str) -> YNode | None:
    """The ``key`` of an endpoint mapping, or the value of the misspelt key
    LP2007 read as it (``prot: continue`` routes ``continue``)."""
    if not isinstance(m, YMap):
        return None
    return m.get(key) or stand_in(m, key, FROM_KEYS)


def _raw_rejected_edges(plan: Plan, reporter: Reporter) -> list[_RawEdge]:
    """Raw endpoints of every authored edge that is not a well-formed
    :class:`Edge` of ``plan`` (rejected, id-less, or a duplicate id).  When
    the ``edges`` section itself was reported wrong (not a list, or a
    misspelt key standing in for it: tainted on ``reporter``), one
    endpoint-less entry stands for "unknown edges"; an absent ``edges``
    key means no edges (routing is checked as for ``edges: []``)."""
    if not isinstance(plan.src, YMap):
        return []
    seq = plan.src.get("edges")
    if reporter.tainted(decl_path("edges")) or (seq is not None and not isinstance(seq, YSeq)):
        return [_RawEdge(YMap(0, 0, 0, True))]
    if seq is None:
        return []
    kept = {id(e.src) for e in plan.edges.values() if e.src is not None}
    return [_RawEdge(m) if isinstance(m, YMap) else _RawEdge(YMap(0, 0, 0, True))
            for m in seq.items if id(m) not in kept]


class _Check:
    def __init__(self, plan: Plan, reporter: Reporter) -> None:
        self.plan = plan
        self.r = reporter
        self.nodes = plan.nodes
        self.malformed = plan.malformed_nodes
        self.ok = True

    # -- locations ---------------------------------------------------------
    def node_at(self, node: Node) -> YNode | None:
        return _sub(node.src, "id") or node.src

    def end_at(self, e: Edge, side: str, key: str) -> YNode | None:
        """The ``from``/``to`` ``node``/``port`` value of ``e`` (or the
        closest enclosing node that exists)."""
        m = _sub(e.src, side)
        v = _sub(m, key)
        return v or m or e.src

    # -- passes ------------------------------------------------------------
    def run(self) -> bool:
        entry_ok = self.check_entry()
        valid = self.check_edges()
        self.check_multiplicity(valid)
        raw = _raw_rejected_edges(self.plan, self.r)
        self.check_routing(raw)
        reported: set[str] = set()
        if entry_ok:
            reported = self.check_reachability(raw)
        self.report_isolated_ports(reported)
        return self.ok and entry_ok

    def check_entry(self) -> bool:
        plan = self.plan
        if plan.entry in self.nodes:
            return True
        at = _sub(plan.src, "entry")
        if plan.entry in self.malformed:
            return False  # the schema pass reported that node
        if plan.src is not None and (not isinstance(at, YScalar) or not isinstance(at.value, str)
                                     or not at.value or not isinstance(_sub(plan.src, "nodes"), YSeq)):
            return False  # the schema pass reported the `entry` or `nodes` key itself
        hint, s = _hint(plan.entry, self.nodes)
        self.r.report(
            "LP4001", at, f"entry `{plan.entry}` names no node{hint}",
            fix=_fix(at, s),
        )
        return False

    def check_edges(self) -> list[Edge]:
        """Endpoint and port resolution; returns edges with valid source
        endpoints (node and port), whatever their target."""
        with_source: list[Edge] = []
        self.bad_out_port: set[str] = set()   # nodes with an unknown outgoing port
        self.bad_in_port: set[str] = set()    # nodes with an unknown incoming port
        self.excused: set[str] = set()        # probable targets of dangling edges
        self.assumed_routed: set[tuple[str, str]] = set()  # probable sources of dangling edges
        self.dangling: dict[str, list[tuple[Edge, str]]] = {}  # missing id -> (edge, side), in order
        nodes = self.nodes
        for e in self.plan.edges.values():
            src_ok = self.check_endpoint(e, "from")
            dst_ok = self.check_endpoint(e, "to")
            if src_ok:
                n = nodes[e.from_node]
                ports = source_ports(n)
                if e.from_port not in ports:
                    self.bad_out_port.add(n.id)
                    self.unknown_port(e, n, "from", e.from_port, ports)
                else:
                    with_source.append(e)
            elif e.from_node not in self.malformed and e.to_node in nodes:
                self.excused.add(e.to_node)
            if dst_ok:
                n = nodes[e.to_node]
                ports = target_ports(n)
                if e.to_port not in ports:
                    self.bad_in_port.add(n.id)
                    self.unknown_port(e, n, "to", e.to_port, ports)
        for name, uses in self.dangling.items():
            self.report_dangling(name, uses)
        return with_source

    def check_endpoint(self, e: Edge, side: str) -> bool:
        """Whether ``e``'s ``side`` names a node; a name no node has is
        recorded in :attr:`dangling` (reported once per name, by
        :meth:`report_dangling`), a malformed node's name is silent."""
        name = e.from_node if side == "from" else e.to_node
        if name in self.nodes:
            return True
        self.ok = False
        if name not in self.malformed:
            self.dangling.setdefault(name, []).append((e, side))
        return False

    def report_dangling(self, name: str, uses: list[tuple[Edge, str]]) -> None:
        """One LP4002 for the missing node ``name``, whatever the number of
        edges naming it (a deleted or misspelt node is one defect): at the
        first endpoint naming it, the others as related locations; the
        did-you-mean and its fix (every endpoint renamed) only for a node
        that fits every one of those edges (:meth:`fitting`)."""
        # only a near name is worth checking for fit (most dangling names have none)
        hint, s = _hint(name, self.fitting(name, uses)) if suggest(name, self.nodes) else ("", None)
        e, side = uses[0]
        if side == "to" and name == "end" and s is None:
            hint = ("; there is no magic `end` target: route the edge to an End node "
                    "(`type: end`, `end: {status: succeeded}` or `failed`)")
        for u, u_side in uses:
            if s is None:
                break
            if u_side == "to":
                self.excused.add(s)  # do not also call the intended target unreachable
            else:
                self.assumed_routed.add((s, u.from_port))  # nor its port unrouted
        ats = [self.end_at(u, u_side, "node") for u, u_side in uses]
        edges = {u.id for u, _ in uses}
        count = f"; {len(edges)} edges name it" if len(edges) > 1 else ""
        scalars = [at for at in ats if isinstance(at, YScalar)]
        fix = None
        if s is not None and len(scalars) == len(ats):
            fix = Fix(f"replace with `{s}`", tuple(TextEdit(at.span, s) for at in scalars), Applicability.UNSAFE)
        self.r.report(
            "LP4002", ats[0],
            f"edge `{e.id}` {_VERB[side]} `{name}`, which is not a node{count}{hint}",
            edge=e.id, fix=fix,
            related=[(f"edge `{u.id}` {_ALSO[u_side]}", at) for (u, u_side), at in zip(uses[1:], ats[1:])],
        )

    def fitting(self, name: str, uses: list[tuple[Edge, str]]) -> list[str]:
        """The nodes a did-you-mean for the missing node ``name`` may offer:
        those that fit every edge naming it (``uses``): each source port one
        of theirs and not already routed by another edge, each target port
        one of theirs, and not the other end of such an edge (no edge from a
        node to itself).  A deleted node's edges, into and out of it, fit no
        End (an End is never offered where an edge leaves it)."""
        outs = {e.from_port for e, side in uses if side == "from"}
        ins = {e.to_port for e, side in uses if side == "to"}
        ends = {e.to_node if side == "from" else e.from_node for e, side in uses}
        routed = {(e.from_node, e.from_port) for e in self.plan.edges.values()} if outs else set()
        return [nid for nid, n in self.nodes.items()
                if nid not in ends and outs <= set(source_ports(n)) and ins <= set(target_ports(n))
                and not any((nid, p) in routed for p in outs)]  # a used port takes no second edge

    def unknown_port(self, e: Edge, n: Node, side: str, port: str, ports: tuple[str, ...]) -> None:
        self.ok = False
        at = self.end_at(e, side, "port")
        hint, s = _hint(port, ports)
        if side == "from":
            if isinstance(n.config, End):
                msg = (f"edge `{e.id}` leaves End `{n.id}`, but an End has no source ports: "
                       f"a path stops at its End")
                s = None
            elif port == "timed_out" and n.type == "wait":
                msg = (f"wait `{n.id}` has no `timed_out` port: `timed_out` exists only on a wait "
                       f"with a `timeout`; its source ports are {_ports_text(ports)}")
            elif port == "timed_out":
                msg = (f"{n.type} `{n.id}` has no `timed_out` port: only a wait with a `timeout` "
                       f"can time out; its source ports are {_ports_text(ports)}")
            else:
                msg = (f"`{port}` is not a source port of {n.type} `{n.id}`; its source ports are "
                       f"{_ports_text(ports)}{hint}")
        else:
            msg = (f"`{port}` is not a target port of {n.type} `{n.id}`; its target ports are "
                   f"{_ports_text(ports)}{hint}")
        self.r.report("LP4003", at, msg, edge=e.id, node=n.id, fix=_fix(at, s))

    def check_multiplicity(self, with_source: list[Edge]) -> None:
        first: dict[tuple[str, str], Edge] = {}
        for e in with_source:
            key = (e.from_node, e.from_port)
            prev = first.get(key)
            if prev is None:
                first[key] = e
                continue
            self.r.report(
                "LP4004", self.end_at(e, "from", "port"),
                f"port `{e.from_port}` of `{e.from_node}` already has edge `{prev.id}`; a source port "
                f"takes at most one edge (use a switch or fork for choice or parallelism)",
                edge=e.id, node=e.from_node,
                related=[(f"first edge `{prev.id}` from this port", self.end_at(prev, "from", "port"))],
                taints=[edge_entity(e.id)],  # set aside: later passes see the port's first edge only
            )

    def check_routing(self, raw: list[_RawEdge]) -> None:
        self.unrouted: list[str] = []  # a node per port reported unrouted (LP4005)
        routed: set[tuple[str, str]] = set(self.assumed_routed)
        continued: set[str] = set()
        for e in self.plan.edges.values():
            routed.add((e.from_node, e.from_port))
            if e.to_port == "continue":
                continued.add(e.to_node)
        blind_out = blind_in = False
        for re_ in raw:
            if re_.from_node is None or re_.from_port is None:
                blind_out = True
            else:
                routed.add((re_.from_node, re_.from_port))
            if re_.to_node is None or re_.to_port is None:
                blind_in = True
            elif re_.to_port == "continue":
                continued.add(re_.to_node)
        unrouted: list[tuple[Node, str]] = []
        open_loops: list[Node] = []
        self.isolated = {} if blind_out or blind_in else self.unconnected(raw)
        for n in self.nodes.values():
            if n.id in self.isolated:
                continue  # one defect: reported as not connected (LP4006), or its ports after all
            if not blind_out and n.id not in self.bad_out_port:
                seen: set[str] = set()
                for p in source_ports(n):
                    if p in seen or not must_route(n, p) or (n.id, p) in routed:
                        continue
                    seen.add(p)
                    unrouted.append((n, p))
            if (n.type == "loop" and not blind_in and n.id not in self.bad_in_port
                    and n.id not in continued):
                open_loops.append(n)
        # a loop without its `continue` edge whose body has an unrouted port
        # (or an edge back into `in`, or into a succeeded End) is one missing
        # edge: reported once, as LP4008
        exits: dict[tuple[str, str], Node] = {}
        for loop in open_loops:
            body = self.body_of(loop)
            back = next((e for e in self.plan.edges.values()
                         if e.to_node == loop.id and e.to_port == "in" and e.from_node in body), None)
            if back is not None:
                self.misrouted_continue(loop, back)
                continue
            end = self.exit_to_end(loop, body)
            if end is not None:
                self.misrouted_continue(loop, end, self.nodes[end.to_node])
                continue
            ex = next(((m, p) for m, p in unrouted if m.id in body and (m.id, p) not in exits), None)
            if ex is not None:
                exits[(ex[0].id, ex[1])] = loop
                m, p = ex
                self.unrouted.append(m.id)
                self.r.report(
                    "LP4008", self.node_at(m),
                    f"loop `{loop.id}` has no edge into its required `continue` port, and port `{p}` of "
                    f"{m.type} `{m.id}` in its body has no edge: route it to `{loop.id}` port `continue` "
                    f"(or `break` to leave early)",
                    node=loop.id, related=[(f"loop `{loop.id}`", self.node_at(loop))],
                )
                continue
            self.r.report(
                "LP4008", self.node_at(loop),
                f"loop `{loop.id}` has no edge into its required `continue` port; the body's exit "
                f"must lead back to `{loop.id}` port `continue` (or `break` to leave early)",
                node=loop.id,
            )
        for n, p in unrouted:
            if (n.id, p) in exits:
                continue
            self.unrouted.append(n.id)
            self.port_unrouted(n, p)

    def port_unrouted(self, n: Node, p: str) -> None:
        declared = port_node(n, p)
        self.r.report(
            "LP4005", declared or self.node_at(n),
            f"port `{p}` of {n.type} `{n.id}` has no edge; a success or control port "
            f"must be routed (a missing edge never completes a Run)",
            node=n.id,
            related=[(f"{n.type} `{n.id}`", self.node_at(n))] if declared is not None else (),
        )

    def unconnected(self, raw: list[_RawEdge]) -> dict[str, Node]:
        """Nodes with ports to route that no edge touches, in or out (the
        entry, a join its owner activates, and the probable meaning of a
        dangling endpoint excepted): a node left unconnected is one defect,
        reported by :meth:`check_reachability` as LP4006, not also as an
        unrouted port (LP4005) or a loop without ``continue`` (LP4008)."""
        touched: set[str | None] = {self.plan.entry, *self.excused, *(nid for nid, _ in self.assumed_routed)}
        for e in self.plan.edges.values():
            touched.update((e.from_node, e.to_node))
        for re_ in raw:
            touched.update((re_.from_node, re_.to_node))
        known = set(self.nodes) | set(self.malformed)
        return {n.id: n for n in self.nodes.values()
                if n.id not in touched and source_ports(n) and not isinstance(n.config, End)
                and not (isinstance(n.config, Join) and n.config.owner in known)}

    def report_isolated_ports(self, reported: set[str]) -> None:
        """The unrouted ports (LP4005) and missing ``continue`` (LP4008) of
        the unconnected nodes not reported as such (the reachability check
        did not run, or took one for the probable target of another
        missing edge)."""
        for n in self.isolated.values():
            if n.id in reported:
                continue
            seen: set[str] = set()
            for p in source_ports(n):
                if p not in seen and must_route(n, p) and n.id not in self.bad_out_port:
                    seen.add(p)
                    self.port_unrouted(n, p)
            if n.type == "loop" and n.id not in self.bad_in_port:
                self.r.report(
                    "LP4008", self.node_at(n),
                    f"loop `{n.id}` has no edge into its required `continue` port; the body's exit "
                    f"must lead back to `{n.id}` port `continue` (or `break` to leave early)",
                    node=n.id,
                )

    def orphaned(self, reached: set[str], adj: dict[str, list[str]], entered: set[str]) -> set[str]:
        """Nodes whose unreachability is the other end of an unrouted port
        (LP4005) on a reached node, or of an edge that goes the wrong way
        (:meth:`misdirected`, reported by the analyzer at that edge): when
        there are no more orphan heads (unreached nodes no edge leads to,
        other than the scope owners in ``entered``) than such ports and
        edges, each head is the probable target of a missing or rerouted
        edge — one defect, reported at the port or edge — so neither it nor
        what it leads to is reported unreachable."""
        heads = _orphans(self.nodes, reached, adj) - entered
        if not heads:
            return set()
        ports = sum(1 for n in self.unrouted if n in reached)
        if len(heads) > ports and not heads & set(self.isolated):  # an unconnected node is no rerouted edge's
            ports += self.misdirected(reached)
        return heads if len(heads) <= ports else set()

    def misdirected(self, reached: set[str]) -> int:
        """How many edges among the reached nodes the analyzer reports as
        going the wrong way (0 when it does not run: a graph defect already
        reported): one per cycle outside every loop (LP4501), one per edge
        into a loop's ``continue``/``break`` from outside its body (LP4504),
        one per edge into a succeeded End from inside a scope (LP4101: a
        branch routed past its join to the End).
        Over the edges the analyzer sees (not those set aside here)."""
        if not self.ok:
            return 0
        edges = [e for e in self.plan.edges.values()
                 if e.from_node in reached and e.to_node in reached and not self.r.tainted(edge_entity(e.id))]
        back = [e for e in edges if e.to_port in LOOP_CLOSING_PORTS and self.nodes[e.to_node].type == "loop"]
        n = 0
        bodies: dict[str, set[str]] = {}
        for e in back:
            body = bodies.get(e.to_node)
            if body is None:
                body = bodies[e.to_node] = self.body_of(self.nodes[e.to_node])
            n += e.from_node not in body
        back_ids = {e.id for e in back}
        fwd = [e for e in edges if e.id not in back_ids]
        if _has_cycle(reached, fwd):
            import networkx as nx  # lazily: only a plan with a cycle and an orphan pays the import

            g = nx.DiGraph()
            g.add_edges_from((e.from_node, e.to_node) for e in fwd)
            n += sum(1 for c in nx.strongly_connected_components(g)
                     if len(c) > 1 or g.has_edge(next(iter(c)), next(iter(c))))
        into_end = [e for e in fwd if isinstance((t := self.nodes[e.to_node].config), End)
                    and t.status == "succeeded"]
        if into_end:
            stacks = build_scope_map(self.plan)  # only a plan with an orphan pays it
            n += sum(1 for e in into_end if stacks.stack(e.id, edge=True))
        return n

    def entered_scopes(self, reached: set[str], adj: dict[str, list[str]], raw: list[_RawEdge]) -> set[str]:
        """Scope owners cut off because an edge enters their scope instead
        of them: an unreached fork, all_match switch, fan_out or loop that no
        edge leads to (or a loop reached only through its own
        ``continue``/``break``), whose opening port leads to a node a reached
        node's edge enters from outside (the edge that used to lead to the
        owner, rerouted into its scope).  That edge is reported (LP4307,
        LP4403 for an item body) and set aside, and the unreached owners
        returned: neither they nor what only they lead to is also
        unreachable (LP4006).  With the edge set aside, the analyzer does not
        reach the owner's scope through it (no LP4504 for a loop's back
        edges)."""
        heads = _orphans(self.nodes, reached, adj)
        # a loop reached only through its own `continue`/`break` is never entered either
        entered = {e.to_node for e in self.plan.edges.values() if e.to_port not in LOOP_CLOSING_PORTS}
        entered.update(r.to_node for r in raw if r.to_node is not None and r.to_port not in LOOP_CLOSING_PORTS)
        owners = [n for n in self.nodes.values() if owner_kind(n) is not None and (
            n.id in heads or n.type == "loop" and n.id in reached and n.id != self.plan.entry
            and n.id not in entered)]
        if not owners:
            return set()
        out: dict[str, list[Edge]] = {}
        into: dict[str, list[Edge]] = {}
        for e in self.plan.edges.values():
            out.setdefault(e.from_node, []).append(e)
            if e.from_node in reached:
                into.setdefault(e.to_node, []).append(e)
        found: set[str] = set()
        for owner in owners:
            inside = self.body_of(owner) if owner.id in reached else set()
            for opening in out.get(owner.id, ()):
                sc = opening_scope(owner, opening.from_port, {})
                if sc is None:
                    continue
                entering = [e for e in into.get(opening.to_node, ())
                            if e.from_node not in inside and e.from_node != owner.id]
                if entering:
                    self.scope_ingress(owner, sc, opening, entering[0])
                    if owner.id not in reached:
                        found.add(owner.id)
                    break
        return found

    def scope_ingress(self, owner: Node, sc: Scope, opening: Edge, e: Edge) -> None:
        """An edge ``e`` from a reached node into ``opening.to_node``, a node
        of ``owner``'s scope ``sc``, while no edge leads to ``owner``."""
        where = {"fork": f"branch `{sc.branch}` of fork", "all_match": f"port `{sc.branch}` of all_match switch",
                 "fan_out": "the item body of fan_out", "loop": "the body of loop"}[sc.kind]
        port = "body" if sc.kind == "loop" else "item" if sc.kind == "fan_out" else sc.branch
        to = _sub(e.src, "to")
        at = _sub(to, "node")
        fix = None
        if isinstance(at, YScalar) and e.to_port == "in":
            fix = Fix(f"route `{e.id}` to `{owner.id}`", (TextEdit(at.span, owner.id),), Applicability.UNSAFE)
        self.r.report(
            "LP4403" if sc.kind == "fan_out" else "LP4307", to or e.src,
            f"edge `{e.id}` enters {where} `{owner.id}` at `{e.to_node}` from outside the scope, and no "
            f"edge leads to `{owner.id}`: a scope is entered only through `{owner.id}` port `{port}`, so "
            f"`{owner.id}` never runs and {'the loop' if sc.kind == 'loop' else 'its join'} never correlates "
            f"the token; did you mean to route `{e.id}` to `{owner.id}`?",
            edge=e.id, node=e.to_node, fix=fix,
            taints=[edge_entity(e.id)],  # set aside: what it binds is for the owner, not this node
            related=[(f"`{e.to_node}` is inside the scope: `{owner.id}` port `{port}` leads to it over "
                      f"`{opening.id}`", self.end_at(opening, "to", "node")),
                     (f"`{owner.id}` opens the scope", self.node_at(owner))],
        )

    def body_of(self, loop: Node) -> set[str]:
        """Nodes ``loop``'s ``body`` port leads to without passing ``loop``
        (over the model's edges; computed only for a loop missing its
        ``continue`` edge)."""
        out: dict[str, list[str]] = {}
        for e in self.plan.edges.values():
            out.setdefault(e.from_node, []).append(e.to_node)
        seen: set[str] = set()
        todo = [e.to_node for e in self.plan.edges.values() if e.from_node == loop.id and e.from_port == "body"]
        while todo:
            nid = todo.pop()
            if nid in seen or nid == loop.id:
                continue
            seen.add(nid)
            todo.extend(out.get(nid, ()))
        return seen

    def exit_to_end(self, loop: Node, body: set[str]) -> Edge | None:
        """The first edge from ``loop``'s body (a node its ``body`` port
        leads to, not one after its ``done`` port) into a succeeded End:
        for a loop without its ``continue`` edge, the body's exit."""
        succeeded = {n.id for n in self.nodes.values() if isinstance(n.config, End) and n.config.status == "succeeded"}
        exits = [e for e in self.plan.edges.values()
                 if e.from_node in body and e.to_node in succeeded and e.from_node not in succeeded]
        if not exits:
            return None
        after: set[str] = set()
        todo = [e.to_node for e in self.plan.edges.values() if e.from_node == loop.id and e.from_port == "done"]
        out: dict[str, list[str]] = {}
        for e in self.plan.edges.values():
            out.setdefault(e.from_node, []).append(e.to_node)
        while todo:
            nid = todo.pop()
            if nid not in after:
                after.add(nid)
                todo.extend(out.get(nid, ()))
        return next((e for e in exits if e.from_node not in after), None)

    def misrouted_continue(self, loop: Node, e: Edge, end: Node | None = None) -> None:
        """LP4008 at the body's exit ``e``: an edge from the body into
        ``loop``'s ``in`` port (instead of ``continue``), or into the
        succeeded End ``end``; the edge is set aside (its cycle through
        ``in``, or the End inside the loop's body, LP4101, is this defect,
        not a second one)."""
        to = _sub(e.src, "to")
        port = _sub(to, "port")
        fix = None
        if end is not None:
            why = (f"succeeded End `{end.id}`, which would finish the Run inside the loop instead of "
                   f"running its next iteration")
        else:
            why = "port `in`, which starts the loop again instead of running its next iteration"
        if isinstance(port, YScalar) and end is None:
            fix = Fix(f"route to port `continue` of `{loop.id}`", (TextEdit(port.span, "continue"),),
                      Applicability.UNSAFE)  # changes which port the edge enters
        elif isinstance(to, YMap) and to.flow:
            fix = Fix(f"route to port `continue` of `{loop.id}`",
                      (TextEdit(to.span, f"{{node: {loop.id}, port: continue}}"),), Applicability.UNSAFE)
        self.r.report(
            "LP4008", port or _sub(to, "node") or e.src,
            f"loop `{loop.id}` has no edge into its required `continue` port; edge `{e.id}` leaves its "
            f"body for {why}: route it to `{loop.id}` port `continue`",
            node=loop.id, edge=e.id, fix=fix, taints=[edge_entity(e.id)],
            related=[(f"loop `{loop.id}`", self.node_at(loop))],
        )

    def check_reachability(self, raw: list[_RawEdge]) -> set[str]:
        """LP4006 for each node not reachable from the entry (an unconnected
        one, :meth:`unconnected`, said to be not connected), LP4007 when no
        succeeded End is; returns the unconnected nodes it reported."""
        isolated: set[str] = set()
        known = set(self.nodes) | set(self.malformed)
        adj: dict[str, list[str]] = {}
        blind = False
        for e in self.plan.edges.values():
            if e.from_node in known and e.to_node in known:
                adj.setdefault(e.from_node, []).append(e.to_node)
        for re_ in raw:
            if re_.to_node is None:
                blind = True
            elif re_.from_node is None or re_.from_node not in known:
                if re_.to_node in self.nodes:
                    self.excused.add(re_.to_node)
            elif re_.to_node in known:
                adj.setdefault(re_.from_node, []).append(re_.to_node)
        if blind:
            return isolated  # a rejected edge with no readable target: reachability is unknown
        # a join is activated by its owner's activation (runtime lineage,
        # docs/reference.md#parallel-scopes): even when no branch edge reaches it (every
        # branch ends in
        # a failed End, or a branch wrongly ends in a succeeded End), it is
        # reachable; the analyzer names what is wrong with the branches
        for n in self.nodes.values():
            if isinstance(n.config, Join) and n.config.owner in known:
                adj.setdefault(n.config.owner, []).append(n.id)
        reached = _reach([self.plan.entry], adj)
        entered = self.entered_scopes(reached, adj, raw)
        cut_off = entered | self.orphaned(reached, adj, entered)
        excused = _reach(sorted(self.excused - reached | cut_off), adj, skip=reached)
        succeeded_ends = [n for n in self.nodes.values()
                          if isinstance(n.config, End) and n.config.status == "succeeded"]
        reached_success = any(n.id in reached for n in succeeded_ends)
        for n in self.nodes.values():
            if n.id in reached or n.id in excused:
                continue
            tail = ""
            if isinstance(n.config, End) and n.config.status == "succeeded" and not reached_success:
                tail = "; no succeeded End is reachable"
            if n.id in self.isolated:
                isolated.add(n.id)
                msg = (f"{n.type} `{n.id}` is not connected: no edge leads to it or leaves it "
                       f"(connect it to the graph, or delete it)")
            else:
                msg = f"{n.type} `{n.id}` is not reachable from the entry `{self.plan.entry}`{tail}"
            self.r.report("LP4006", self.node_at(n), msg, node=n.id)
        if reached_success:
            return isolated
        if excused or any(m in reached for m in self.malformed):
            return isolated  # the End may sit behind a defect already reported
        if any(e.from_node in reached for uses in self.dangling.values() for e, side in uses if side == "to"):
            return isolated  # ... or be the missing node a reached edge leads to (LP4002)
        if any(n.id not in reached for n in succeeded_ends):
            return isolated  # reported on the unreachable succeeded End itself
        at = _sub(self.plan.src, "entry") or self.plan.src
        self.r.report(
            "LP4007", at,
            f"no succeeded End is reachable from the entry `{self.plan.entry}`; every Plan needs "
            f"a path to an End with `status: succeeded`",
            node=self.plan.entry,
        )
        return isolated


_VERB = {"from": "starts at", "to": "leads to"}
_ALSO = {"from": "also starts at it", "to": "also leads to it"}


def _orphans(nodes: Iterable[str], reached: set[str], adj: dict[str, list[str]]) -> set[str]:
    """The unreached ``nodes`` no edge leads to: the heads of what is cut off."""
    targets = {t for ts in adj.values() for t in ts}
    return {n for n in nodes if n not in reached and n not in targets}


def _has_cycle(nodes: set[str], edges: list[Edge]) -> bool:
    """Does the graph of ``edges`` over ``nodes`` have a cycle (Kahn)?"""
    indeg = dict.fromkeys(nodes, 0)
    out: dict[str, list[str]] = {}
    for e in edges:
        indeg[e.to_node] += 1
        out.setdefault(e.from_node, []).append(e.to_node)
    todo = [n for n, d in indeg.items() if d == 0]
    seen = 0
    while todo:
        n = todo.pop()
        seen += 1
        for t in out.get(n, ()):
            indeg[t] -= 1
            if indeg[t] == 0:
                todo.append(t)
    return seen < len(indeg)


def _reach(seeds: list[str], adj: dict[str, list[str]], skip: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """Node ids reachable from ``seeds`` (breadth-first, iterative)."""
    seen = {s for s in seeds if s not in skip}
    q = deque(seen)
    while q:
        n = q.popleft()
        for t in adj.get(n, ()):
            if t not in seen and t not in skip:
                seen.add(t)
                q.append(t)
    return seen


def check_graph(plan: Plan, reporter: Reporter) -> bool:
    """Graph basics of docs/reference.md#graph-rules, passes 3 and 6 (entry, endpoints,
    ports, one edge per source port, routing of success/control ports,
    reachability, a reachable succeeded End).

    Reports LP4001–LP4008 on ``reporter``; never raises on a well-typed
    :class:`Plan`.  Returns ``True`` when the graph is sound enough for the
    analyzer: the entry exists and every edge of ``plan.edges`` has existing,
    well-formed endpoints and ports (an endpoint naming a malformed node
    makes it ``False`` without a diagnostic).  Multiple edges per port,
    unrouted ports and unreachable nodes do not make it ``False``.
    """
    return _Check(plan, reporter).run()
