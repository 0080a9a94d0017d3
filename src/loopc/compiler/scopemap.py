"""The scope model (where each context is legal, docs/reference.md#references;
docs/reference.md#parallel-scopes, docs/reference.md#fan-out-bodies, docs/reference.md#loops): which
fork/all_match branch, fan-out item body and counted-loop body each node and
edge belongs to, and which scopes the plan declares.

This is loopc's one scope model.  The pipeline builds it once per check
(:func:`build_scope_map`) and passes the same :class:`ScopeMap` to the type
pass (context legality of ``item.*``, ``loop.*``), the analyzer (whose
scope-typing proof uses its frames, owners and closers and, on a plan it
accepts, proves these stacks sound), the artifact budget (scope records per
node and edge) and lowering (each node's and edge's ``scope`` and the
artifact's scope declarations).  What the analyzer derives on top of it
(failure routes, effects, soundness) is in :class:`loopc.analyzer.Analysis`,
keyed by the same node and edge ids.

Membership is forward reach from the opening port (fork branch port,
``all_match`` switch port, fan_out ``item``, loop ``body``) up to the closing
join (the join whose ``forkId``/``fanOutId`` names the owner) or, for loops,
the edges into the loop's ``continue``/``break`` ports.  The opening node and
the closing join are outside the scope; the edges into the closing join (and
into ``continue``/``break``) are inside.  A failed End is a terminal of each
arriving edge (it may be shared by several scopes): its own stack is the
common prefix of its arrivals' stacks.

Where regions overlap without nesting, the affected nodes are listed in
``ambiguous`` and context checks stay silent: the analyzer names that defect.
A failed End reached with different stacks is listed there too.

Algorithm (:func:`build_scope_map`): one breadth-first worklist from the
entry.  Leaving a node with stack ``s`` through an opening port gives the
edge (and its target) ``s + (scope,)``; an edge into a join pops back to
just outside the innermost scope that join closes; an edge into a loop's
``continue``/``break`` keeps its stack and stops (that is the body's back
edge).  A node keeps the first stack it receives.  A second, different stack
marks it ambiguous and is propagated once, so whatever inherits the conflict
is marked too; a third is not propagated.  Every node and edge is therefore
processed at most twice: O((nodes + edges) · depth), no recursion, and the
result depends only on authored order.

A join closes every scope its ``forkId``/``fanOutId`` names, whichever key
names it (a mismatched key is the analyzer's finding); ``Scope.closer`` is
the first such join in authored order (:attr:`ScopeMap.closers`).  A join
never closes a loop.

Nodes the entry cannot reach (the graph pass reports them), and nodes behind
a node the schema pass rejected or an edge leaving a scope owner through a
port it does not have (which scope it opens is unknown), get a best-effort
stack from a second sweep seeded at their roots; they are listed in ``unreached`` and
:meth:`ScopeMap.context_known` is false for them.  Where the second sweep
gives a reached node or edge another stack (an unreachable scope owner
whose scope a reached edge enters: the graph pass names that edge), it is
ambiguous as well.
"""
from __future__ import annotations

from collections import deque
from typing import Mapping

from loopc.value import Value, field
from loopc import kinds
from loopc.kinds.base import SCOPES, attr_name
from loopc.compiler.model import CONFIG_CLASSES, Edge, End, Join, Loop, Node, Plan
from loopc.compiler.ports import branch_ports, source_ports

#: The scope kinds, in :data:`loopc.kinds.base.SCOPES` order (every one but ``none``).
SCOPE_KINDS = tuple(s for s in SCOPES if s != "none")
#: config class → its kind (the scope it opens is the kind's :attr:`~loopc.kinds.Kind.scope`)
_KIND_OF_CONFIG = {cls: kinds.tables().kinds[t] for t, cls in CONFIG_CLASSES.items()}
#: The scopes a node closes by naming their owner (Kind.closes: a join); a loop is never joined.
_JOINED = frozenset(s for scopes in kinds.tables().closes.values() for s in scopes)
#: config class of a kind that opens a scope -> (the scope, (attribute, value)
#: it opens it only with or None, its body ports, its authored-ports
#: attribute, whether a join closes it), read off the kinds once (opening_scope is per edge)
_OPENERS: dict[type, tuple[str, tuple[str, str] | None, tuple[str, ...], str, bool]] = {
    cls: (
        k.scope,
        (attr_name(k.scope_when[0]), k.scope_when[1]) if k.scope_when is not None else None,
        k.body_ports,
        k.ports.authored or "",
        k.scope in _JOINED,
    )
    for cls, k in _KIND_OF_CONFIG.items()
    if k.scope != "none"
}
#: Target ports of a loop that close one iteration of its body.
LOOP_CLOSING_PORTS = kinds.tables().back_ports


class Scope(Value):
    """One open scope: ``kind`` ∈ SCOPE_KINDS, ``owner`` the opening node id,
    ``branch`` the branch/port key (fork, all_match) or None, ``closer`` the
    closing join id (None for loops or when no join names the owner)."""

    kind: str
    owner: str
    branch: str | None = None
    closer: str | None = None


Stack = tuple[Scope, ...]


class ScopeOwner(Value):
    """A scope the plan declares: ``kind`` ∈ SCOPE_KINDS, ``owner`` the
    opening node id, ``branches`` its fork branch keys / all_match ports in
    authored order (``()`` for fan-out and loop), ``closer`` its first
    closing join (``None`` for a loop, or when no join names it)."""

    kind: str
    owner: str
    branches: tuple[str, ...] = ()
    closer: str | None = None


def owner_kind(node: Node | None) -> str | None:
    """Scope kind a node opens: ``fork``, ``all_match``, ``fan_out``,
    ``loop`` or ``None`` (a first_match switch opens none)."""
    if node is None:
        return None
    c = node.config
    k = _KIND_OF_CONFIG.get(c.__class__)
    return k.opened_scope(c) if k is not None else None


class ScopeMap(Value):
    """``node_scopes``/``edge_scopes`` map ids to their scope stack, outermost
    first.  Ids in ``ambiguous`` (nodes) and ``ambiguous_edges`` have no single
    consistent stack; ids in ``unreached`` (nodes) / ``unreached_edges`` are
    not reachable from the entry through well-formed nodes and carry only a
    best-effort stack.  Every node and edge of the plan has an entry.
    ``closers`` maps an owner id to its first closing join (authored order;
    any join naming it, reachable or not) and ``owners`` every fork,
    all_match switch, fan_out and loop of the plan to its
    :class:`ScopeOwner`, in authored order."""

    node_scopes: Mapping[str, tuple[Scope, ...]]
    edge_scopes: Mapping[str, tuple[Scope, ...]]
    ambiguous: frozenset[str] = frozenset()
    ambiguous_edges: frozenset[str] = frozenset()
    unreached: frozenset[str] = frozenset()
    unreached_edges: frozenset[str] = frozenset()
    closers: Mapping[str, str] = field(factory=dict)
    owners: Mapping[str, ScopeOwner] = field(factory=dict)

    def innermost(self, element_id: str, kind: str, *, edge: bool = False) -> Scope | None:
        """Innermost enclosing scope of ``kind`` for a node (or edge) id."""
        stack = (self.edge_scopes if edge else self.node_scopes).get(element_id, ())
        for s in reversed(stack):
            if s.kind == kind:
                return s
        return None

    def stack(self, element_id: str, *, edge: bool = False) -> tuple[Scope, ...]:
        """Scope stack of a node (or edge), outermost first; ``()`` if unknown."""
        return (self.edge_scopes if edge else self.node_scopes).get(element_id, ())

    def is_ambiguous(self, element_id: str, *, edge: bool = False) -> bool:
        """True when the node (or edge) was reached with two different stacks."""
        return element_id in (self.ambiguous_edges if edge else self.ambiguous)

    def context_known(self, element_id: str, *, edge: bool = False) -> bool:
        """True when the stack is exact: reached from the entry, not ambiguous.
        Context-legality checks should stay silent when this is false."""
        if edge:
            return (element_id in self.edge_scopes and element_id not in self.ambiguous_edges
                    and element_id not in self.unreached_edges)
        return (element_id in self.node_scopes and element_id not in self.ambiguous
                and element_id not in self.unreached)

    def loop_of(self, element_id: str, *, edge: bool = False) -> str | None:
        """Id of the innermost counted loop whose body holds the node (edge)."""
        s = self.innermost(element_id, "loop", edge=edge)
        return s.owner if s else None

    def fan_out_of(self, element_id: str, *, edge: bool = False) -> str | None:
        """Id of the innermost fan_out whose item body holds the node (edge)."""
        s = self.innermost(element_id, "fan_out", edge=edge)
        return s.owner if s else None

    def parallel_of(self, element_id: str, *, edge: bool = False) -> Scope | None:
        """Innermost fork, all_match or fan-out scope of the node (edge)."""
        for s in reversed(self.stack(element_id, edge=edge)):
            if s.kind != "loop":
                return s
        return None

    def members(self, owner: str, branch: str | None = None, *, edges: bool = False) -> tuple[str, ...]:
        """Node (or edge) ids inside any scope opened by ``owner`` (restricted
        to one ``branch`` when given), in map order.  O(size of the map)."""
        table = self.edge_scopes if edges else self.node_scopes
        out = []
        for i, st in table.items():
            for s in st:
                if s.owner == owner and (branch is None or s.branch == branch):
                    out.append(i)
                    break
        return tuple(out)


def opening_scope(node: Node, port: str, closers: Mapping[str, str]) -> Scope | None:
    """The scope frame opened by leaving ``node`` through source ``port``, if
    any (``closers``: :attr:`ScopeMap.closers`).  The one rule for opening a
    scope: the map's builder and the analyzer's scope typing both use it."""
    c = node.config
    o = _OPENERS.get(c.__class__)
    if o is None:
        return None
    scope, when, body, authored, joined = o
    if when is not None and getattr(c, when[0], None) != when[1]:
        return None
    if body:
        if port not in body:
            return None
        branch = None
    elif port in getattr(c, authored):
        branch = port
    else:
        return None
    return Scope(scope, node.id, branch, closers.get(node.id) if joined else None)


class _Builder:
    def __init__(self, plan: Plan) -> None:
        self.nodes = plan.nodes
        self.edges = plan.edges
        self.rejected = plan.malformed_nodes
        self.out: dict[str, list[Edge]] = {}
        for e in plan.edges.values():
            self.out.setdefault(e.from_node, []).append(e)
        # join id -> owner id; owner id -> first join naming it (authored order)
        self.join_owner: dict[str, str] = {}
        self.closers: dict[str, str] = {}
        for n in plan.nodes.values():
            if isinstance(n.config, Join):
                owner = n.config.owner
                if owner:
                    self.join_owner[n.id] = owner
                    self.closers.setdefault(owner, n.id)
        self.node_scopes: dict[str, Stack] = {}
        self.alt: dict[str, Stack] = {}  # second distinct stack (propagated once)
        self.edge_scopes: dict[str, Stack] = {}
        self.edge_alt: dict[str, Stack] = {}
        self.ambiguous: set[str] = set()
        self.ambiguous_edges: set[str] = set()
        self.failed_ends = frozenset(
            n.id for n in plan.nodes.values() if isinstance(n.config, End) and n.config.status == "failed")
        self.queue: deque[tuple[str, Stack]] = deque()
        self.sweep = False  # second sweep: best effort, ambiguity only where the first one reached
        self.reached: frozenset[str] = frozenset()  # what the first sweep reached
        self.reached_edges: frozenset[str] = frozenset()

    # -- assignment --------------------------------------------------------
    def give_node(self, nid: str, st: Stack) -> None:
        prev = self.node_scopes.get(nid)
        if prev is None:
            self.node_scopes[nid] = st
            self.queue.append((nid, st))
        elif prev == st or self.sweep and nid not in self.reached:
            return
        else:
            self.ambiguous.add(nid)
            if nid in self.failed_ends:  # a terminal of each arrival: the scopes they all share
                k = 0
                while k < len(prev) and k < len(st) and prev[k] == st[k]:
                    k += 1
                self.node_scopes[nid] = prev[:k]
            if nid not in self.alt:
                self.alt[nid] = st
                self.queue.append((nid, st))

    def give_edge(self, eid: str, st: Stack) -> None:
        prev = self.edge_scopes.get(eid)
        if prev is None:
            self.edge_scopes[eid] = st
        elif prev != st and (not self.sweep or eid in self.reached_edges):
            self.ambiguous_edges.add(eid)
            self.edge_alt.setdefault(eid, st)

    # -- propagation -------------------------------------------------------
    def target_stack(self, e: Edge, est: Stack) -> Stack | None:
        """Stack given to ``e``'s target, or None when the edge does not
        propagate (target unknown, or a loop back edge)."""
        t = self.nodes.get(e.to_node)
        if t is None:
            # a node the schema pass rejected is a sink until the sweep;
            # a dangling id is nothing at all
            return est if e.to_node in self.rejected else None
        if isinstance(t.config, Loop) and e.to_port in LOOP_CLOSING_PORTS:
            return None
        owner = self.join_owner.get(t.id)
        if owner is not None:
            for i in range(len(est) - 1, -1, -1):
                s = est[i]
                if s.owner == owner and s.kind != "loop":
                    return est[:i]
        return est

    def drain(self) -> None:
        nodes, out, closers = self.nodes, self.out, self.closers
        q = self.queue
        while q:
            nid, st = q.popleft()
            node = nodes.get(nid)
            if node is None and not self.sweep:
                continue  # a node the schema pass rejected: a sink until the sweep
            ports = source_ports(node) if node is not None and owner_kind(node) is not None else None
            for e in out.get(nid, ()):
                if ports is not None and not self.sweep and e.from_port not in ports:
                    continue  # which scope a misspelt port of an owner opens is unknown (LP4003)
                # a rejected node passes its stack through unchanged (best effort)
                sc = opening_scope(node, e.from_port, closers) if node is not None else None
                est = st + (sc,) if sc is not None else st
                self.give_edge(e.id, est)
                tst = self.target_stack(e, est)
                if tst is not None:
                    self.give_node(e.to_node, tst)

    def build(self, entry: str) -> ScopeMap:
        if entry in self.nodes:
            self.give_node(entry, ())
            self.drain()
        reached_nodes = set(self.node_scopes) & set(self.nodes)
        reached_edges = set(self.edge_scopes)
        # Second sweep: best-effort stacks for everything else; a reached
        # node or edge it gives another stack (an unreached owner whose
        # scope a reached edge enters) is ambiguous
        self.reached, self.reached_edges = frozenset(self.node_scopes), frozenset(reached_edges)
        self.sweep = True
        for nid in [n for n in self.node_scopes if n not in self.nodes]:  # pass through rejected nodes with their stack
            self.queue.append((nid, self.node_scopes[nid]))
        self.drain()
        indeg: dict[str, int] = {}
        for e in self.edges.values():
            t = self.nodes.get(e.to_node)
            if t is not None and not (isinstance(t.config, Loop) and e.to_port in LOOP_CLOSING_PORTS) \
                    and e.from_node != e.to_node:
                indeg[e.to_node] = indeg.get(e.to_node, 0) + 1
        for nid in self.nodes:
            if nid not in self.node_scopes and not indeg.get(nid):
                self.give_node(nid, ())
                self.drain()
        for nid in self.nodes:
            if nid not in self.node_scopes:
                self.give_node(nid, ())
                self.drain()
        for eid in self.edges:
            if eid not in self.edge_scopes:
                self.edge_scopes[eid] = ()
        node_scopes = {nid: self.node_scopes[nid] for nid in self.nodes}
        return ScopeMap(
            node_scopes=node_scopes,
            edge_scopes={eid: self.edge_scopes[eid] for eid in self.edges},
            ambiguous=frozenset(self.ambiguous & set(self.nodes)),
            ambiguous_edges=frozenset(self.ambiguous_edges),
            unreached=frozenset(n for n in self.nodes if n not in reached_nodes),
            unreached_edges=frozenset(e for e in self.edges if e not in reached_edges),
            closers=self.closers,
            owners=self.owners(),
        )

    def owners(self) -> dict[str, ScopeOwner]:
        out: dict[str, ScopeOwner] = {}
        for n in self.nodes.values():
            kind = owner_kind(n)
            if kind is not None:
                out[n.id] = ScopeOwner(kind, n.id, tuple(branch_ports(n)),
                                       self.closers.get(n.id) if kind != "loop" else None)
        return out


def build_scope_map(plan: Plan) -> ScopeMap:
    """Structural scope map of ``plan`` (context legality of docs/reference.md#references;
    fork/all_match scopes of docs/reference.md#parallel-scopes, item bodies of
    docs/reference.md#fan-out-bodies, loop bodies of docs/reference.md#loops).

    Returns a :class:`ScopeMap` with a stack for every node and edge of
    ``plan``; overlapping regions go to ``ambiguous`` (no diagnostic — the
    analyzer reports them).  Never raises on a well-typed :class:`Plan`,
    whatever its graph defects (dangling endpoints, cycles outside loops,
    joins without owners, owners without joins).
    """
    return _Builder(plan).build(plan.entry)
