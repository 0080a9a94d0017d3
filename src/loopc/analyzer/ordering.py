"""Happens-before through condition waits (docs/language.md#wait-orders,
docs/language.md#concurrency; issue 14).

A read or write of ``run.state.F`` in branch ``X`` of a fork or all_match
switch ``O`` is *ordered after* the writes of ``F`` in the branches of ``O``
that run concurrently with ``X`` — so it does not race with them — when:

1. it runs only after the ``completed`` port of a condition ``wait`` in
   ``X`` (every path from the entry to it passes that port);
2. that wait's condition is false while ``F`` holds its declared default,
   whatever the other values it reads (:func:`loopc.analyzer.conditions.false_when`);
3. ``F`` holds a value at which that condition is false when ``O`` opens
   and nothing outside ``O`` writes it while ``O`` is open: every writer of
   ``F`` that can run before ``O`` (a path leads from it to ``O``) lies
   outside ``O`` and assigns a scalar literal at which the condition is
   false too (a writer inside ``O`` reaching it through an earlier loop
   iteration does not qualify), and none runs concurrently with ``O``;
4. every writer of ``F`` in ``X`` itself runs only after such a wait;
5. at most one of the concurrent writers runs per activation of ``O``: no
   two of them are concurrent, none can reach another, and none lies in a
   loop or fan-out body inside ``O``.

Then the first write of ``F`` in an activation of ``O`` is a concurrent
writer; no qualifying wait completes before it (its condition is false
until then), and no concurrent write follows it.  Writers in a branch
exclusive with ``X`` (an all_match default beside a case) never run in the
same activation and are ignored.

"Can reach" follows the authored edges plus, for every node inside a
parallel scope, an edge to that scope's closing join (an omitted failure
route or a failed End ends the branch at the join); dominance uses the same
graph, with each condition wait's ``completed`` port as a node of its own
(networkx dominators, computed once, only when a race candidate has a wait
that could order it).  Everything is cached per (field, frame).
"""
from __future__ import annotations

from collections import deque
from typing import Any, Mapping

from loopc.analyzer.context import Ctx
from loopc.analyzer.facts import Effects, Stack
from loopc.compiler.model import Wait

#: Largest number of concurrent writers the rule examines (pairwise).
MAX_WRITERS = 16

_DONE = "completed"


def _condition(config: Any) -> Any:
    """A wait's condition expression, else ``None``."""
    return config.condition if isinstance(config, Wait) else None


def _walk(adj: Mapping[Any, list[Any]], start: Any, seen: set[Any]) -> set[Any]:
    """``seen`` plus every node reachable from ``start`` by one or more
    ``adj`` steps (breadth first); ``start`` itself only if it is in ``seen``
    or lies on a cycle."""
    q = deque([start])
    while q:
        for t in adj.get(q.popleft(), ()):
            if t not in seen:
                seen.add(t)
                q.append(t)
    return seen


def _subject(field: str) -> str:
    return f"run.state.{field}"


#: Why the rule does not order an access: the failing condition in words
#: and the node (a writer) that makes it fail, if one does.
Reason = tuple[str, "str | None"]
#: :meth:`Ordering.explain`: (wait, sentence, culprit node or ``None``,
#: the wait's condition holds at the field's default).
Explanation = tuple[str, str, "str | None", bool]


def _owner_desc(frame: Any) -> str:
    return f"fork `{frame.owner}`" if frame.kind == "fork" else f"all_match switch `{frame.owner}`"


def _literal(value: Any) -> str | None:
    """``value`` (a scalar default) written as an expression literal, else ``None``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return None


def default_shown(value: Any) -> str:
    """`` `'pending'` `` after "its default" in a message ("" when not a scalar)."""
    lit = _literal(value)
    return f" `{lit}`" if lit is not None else ""


def false_at(field: str, default: Any) -> str | None:
    """A condition false while ``field`` holds the scalar ``default``."""
    if isinstance(default, bool):
        return f"{_subject(field)} == {'false' if default else 'true'}"
    lit = _literal(default)
    return f"{_subject(field)} != {lit}" if lit is not None else None


class Ordering:
    """Answers :meth:`ordered_frame` and :meth:`after_wait` for the race
    check (see the module docstring).  ``concurrent`` is the race check's
    stack relation."""

    def __init__(self, ctx: Ctx, node_stacks: Mapping[str, Stack], node_taint: Mapping[str, int | None],
                 node_eff: Mapping[str, Effects], defaults: Mapping[str, str], concurrent: Any) -> None:
        self.ctx = ctx
        self.ns = node_stacks
        self.nt = node_taint
        self.defaults = defaults
        self.concurrent = concurrent
        self.eff = node_eff
        self.writers: dict[str, list[str]] = {}
        for nid, eff in node_eff.items():
            for f in eff.writes:
                self.writers.setdefault(f, []).append(nid)
        self.waits = [nid for nid in ctx.ordered(node_eff) if _condition(ctx.nodes[nid].config) is not None]
        self._succ: dict[Any, list[Any]] | None = None
        self._idom: dict[Any, Any] | None = None
        self._pre: dict[str, set[Any]] = {}
        self._quals: dict[tuple[str, Any], tuple[frozenset[str] | None, Reason | None]] = {}
        self._false: dict[tuple[str, str, bool], bool] = {}

    # ------------------------------------------------------------------ graph
    def _graph(self) -> dict[Any, list[Any]]:
        """Successors over the reachable plan: authored edges (a condition
        wait's ``completed`` edges leave the node ``(wait, 'completed')``)
        plus node → closing join of its innermost parallel scope."""
        if self._succ is not None:
            return self._succ
        ctx = self.ctx
        waits = set(self.waits)
        succ: dict[Any, list[Any]] = {nid: [] for nid in ctx.reached}
        for e in ctx.edges:
            if e.from_node in waits and e.from_port == _DONE:
                v = (e.from_node, _DONE)
                if v not in succ:
                    succ[v] = []
                    succ[e.from_node].append(v)
                succ[v].append(e.to_node)
            else:
                succ[e.from_node].append(e.to_node)
        for nid, st in self.ns.items():
            for fr in reversed(st):
                if fr.kind in ("fork", "all_match", "fan_out"):
                    if fr.closer is not None and fr.closer in succ:
                        succ.setdefault(nid, []).append(fr.closer)
                    break
        self._succ = succ
        return succ

    def _reach_from(self, start: Any) -> set[Any]:
        return _walk(self._graph(), start, {start})

    def _precedes(self, owner: str) -> set[Any]:
        """Nodes from which a path leads to ``owner`` (``owner`` excluded
        unless it lies on a cycle)."""
        got = self._pre.get(owner)
        if got is not None:
            return got
        succ = self._graph()
        pred: dict[Any, list[Any]] = {}
        for n, ts in succ.items():
            for t in ts:
                pred.setdefault(t, []).append(n)
        seen = _walk(pred, owner, set())
        self._pre[owner] = seen
        return seen

    def _dominators(self) -> dict[Any, Any]:
        if self._idom is None:
            import networkx as nx  # lazily: only a plan with a wait-ordered candidate pays

            g = nx.DiGraph()
            succ = self._graph()
            g.add_nodes_from(succ)
            g.add_edges_from((n, t) for n, ts in succ.items() for t in ts)
            entry = self.ctx.plan.entry
            self._idom = dict(nx.immediate_dominators(g, entry)) if entry in g else {}
        return self._idom

    # ------------------------------------------------------------------- rule
    def _cond_at_default(self, wait: str, field: str, value: bool) -> bool:
        """Proved: the wait's condition is ``value`` (false, or true) while
        ``field`` holds its declared default, whatever the other values it
        reads (:func:`loopc.analyzer.conditions.false_when` of the condition,
        or of its negation)."""
        key = (wait, field, value)
        got = self._false.get(key)
        if got is not None:
            return got
        from loopc.analyzer.conditions import false_when

        ok = False
        fs = self.ctx.plan.state.get(field)
        f = self._formula(wait)
        if fs is not None and f is not None:
            default = fs.default if fs.has_default else None
            ok = false_when(f if not value else ("not", f), _subject(field), default)
        self._false[key] = ok
        return ok

    def _literal_write(self, writer: str, field: str) -> tuple[Any] | None:
        """``(value,)`` when set_variable ``writer`` assigns ``field`` a
        scalar literal (the value it holds afterwards is known), else ``None``."""
        from loopc.compiler.model import Literal, SetVariable

        cfg = self.ctx.nodes[writer].config
        v = cfg.assign.get(field) if isinstance(cfg, SetVariable) else None
        if isinstance(v, Literal) and (v.value is None or isinstance(v.value, (bool, int, float, str))):
            return (v.value,)
        return None

    def _cond_false_at(self, wait: str, field: str, value: Any) -> bool:
        """Proved: the wait's condition is false while ``field`` holds the
        scalar ``value``, whatever the other values it reads."""
        from loopc.analyzer.conditions import false_when

        f = self._formula(wait)
        return f is not None and false_when(f, _subject(field), value)

    def _formula(self, wait: str) -> Any:
        """The formula of the wait's condition, ``None`` when it has none or
        it does not parse."""
        from loopc.analyzer.conditions import condition_formula

        cond = _condition(self.ctx.nodes[wait].config)
        return condition_formula(cond.text) if cond is not None else None

    def _cond_false_at_default(self, wait: str, field: str) -> bool:
        return self._cond_at_default(wait, field, False)

    def cond_true_at_default(self, wait: str, field: str) -> bool:
        """Proved: the wait's condition holds while ``field`` has its
        default, whatever the other values it reads (LP4604)."""
        return self._cond_at_default(wait, field, True)

    def reaches(self, start: str, target: str) -> bool:
        """A path over the plan (see the module docstring) leads from node
        ``start`` to node ``target``."""
        return target in self._reach_from(start)

    def _dominated(self, node: str, waits: frozenset[str], stop: str) -> bool:
        """Every path from the entry to ``node`` passes the ``completed``
        port of one of ``waits`` (walking the dominator tree up to ``stop``)."""
        idom = self._dominators()
        n: Any = node
        while True:
            d = idom.get(n)
            if d is None or d == n or d == stop:
                return False
            if isinstance(d, tuple) and d[0] in waits:
                return True
            n = d

    def ordered_frame(self, field: str, frame: Any) -> frozenset[str] | None:
        """The qualifying waits of branch ``frame`` (a fork/all_match frame)
        when conditions 2–5 hold for ``field``, else ``None``."""
        return self._checked(field, frame)[0]

    def _checked(self, field: str, frame: Any) -> tuple[frozenset[str] | None, Reason | None]:
        key = (field, frame)
        got = self._quals.get(key)
        if got is None:
            got = self._quals[key] = self._check(field, frame)
        return got

    def _check(self, field: str, frame: Any) -> tuple[frozenset[str] | None, Reason | None]:
        """``(qualifying waits, None)`` when conditions 2–5 hold, else
        ``(None, why)``: the condition of the rule that fails, as a
        :data:`Reason` (``None`` when there is no wait to explain, or an
        earlier error already rejected a writer)."""
        ns, owner = self.ns, frame.owner
        if frame.kind not in ("fork", "all_match") or owner not in ns:
            return None, None
        waits = frozenset(w for w in self.waits
                          if self.nt.get(w) is None and frame in ns.get(w, ())
                          and field in self.eff[w].wait_reads and self._cond_false_at_default(w, field))
        if not waits:
            return None, None
        writers = self.writers.get(field, [])
        if any(self.nt.get(t) is not None or t not in ns for t in writers):
            return None, None
        scope = _owner_desc(frame)
        ost = ns[owner]
        depth = len(ost)
        pre = self._precedes(owner)
        exclusive = self.defaults.get(owner)
        conc: list[str] = []
        for t in writers:
            st = ns[t]
            if t in pre:  # may write before the scope opens
                inside = len(st) > depth and st[depth].owner == owner  # an earlier loop iteration
                value = None if inside else self._literal_write(t, field)
                kept = frozenset() if value is None else frozenset(
                    w for w in waits if self._cond_false_at(w, field, value[0]))
                if not kept:
                    if value is None:
                        why = ("so the field need not hold a value at which the wait's condition is "
                               "false when the wait starts")
                    else:
                        why = (f"and the wait's condition is not false at the value it writes "
                               f"(`{_literal(value[0])}`), so the wait may pass before the concurrent write")
                    return None, (f"set_variable `{t}` can write `{_subject(field)}` before {scope} "
                                  f"opens, {why}", t)
                waits = kept
            if self.concurrent(st, ost, self.defaults):  # or while it is open
                return None, (f"set_variable `{t}` can write `{_subject(field)}` from outside {scope} "
                              f"while it is open", t)
            if frame in st:
                if not self._dominated(t, waits, owner):
                    return None, (f"set_variable `{t}` writes `{_subject(field)}` in the waiting branch "
                                  f"without first passing the wait", t)
                continue
            if len(st) > depth and st[depth].owner == owner:
                other = st[depth].branch
                if frame.kind == "all_match" and exclusive in (other, frame.branch):
                    continue  # never in the same activation
                inner = next((f for f in st[depth + 1:] if f.kind in ("loop", "fan_out")), None)
                if inner is not None:
                    body = "loop" if inner.kind == "loop" else "fan_out"
                    return None, (f"set_variable `{t}` sits in the body of {body} `{inner.owner}` inside "
                                  f"{scope}, so it can write `{_subject(field)}` more than once", t)
                conc.append(t)
        if len(conc) > MAX_WRITERS:
            return None, (f"more than {MAX_WRITERS} set_variables write `{_subject(field)}` in the "
                          f"concurrent branches (the rule compares at most {MAX_WRITERS})", None)
        for i, a in enumerate(conc):
            reach = self._reach_from(a)
            for b in conc:
                if b == a:
                    continue
                if b in reach:
                    return None, (f"the concurrent writers are not mutually exclusive: set_variable `{b}` "
                                  f"can run after set_variable `{a}` in one activation of {scope}, so the "
                                  f"wait may pass between the two writes", b)
                if b in conc[:i] and self.concurrent(ns[a], ns[b], self.defaults):
                    return None, (f"the concurrent writers are not mutually exclusive: set_variables `{b}` "
                                  f"and `{a}` run concurrently in one activation of {scope}", a)
        return waits, None

    def explain(self, field: str, frame: Any, point: str, is_edge: bool) -> Explanation | None:
        """Why the waits of branch ``frame`` do not order the access at
        ``point`` (a node, or an edge's bind) after the concurrent writes of
        ``field``: ``(wait, the condition of the rule that fails, the node
        that makes it fail or ``None``, the condition holds at the default)``;
        ``None`` when no condition wait of the branch watching ``field``
        precedes the point (the rule does not apply) or nothing is known."""
        ns, owner = self.ns, frame.owner
        if frame.kind not in ("fork", "all_match") or owner not in ns:
            return None
        mine = [w for w in self.waits if self.nt.get(w) is None and frame in ns.get(w, ())]
        watching = [w for w in mine if field in self.eff[w].wait_reads]
        tail = f" does not order {'edge ' if is_edge else ''}`{point}` after the concurrent writes"
        node, edge = (None, point) if is_edge else (point, None)
        if not watching:
            # condition 2 at its plainest: the wait before the point watches other fields
            state = self.ctx.plan.state
            before = [w for w in mine if any(f in state for f in self.eff[w].wait_reads)
                      and self.after_wait(frozenset((w,)), owner, node=node, edge=edge)]
            if not before:
                return None
            w = before[0]
            seen = sorted(f for f in self.eff[w].wait_reads if f in state)
            reads = f"reads {', '.join(f'`{_subject(f)}`' for f in seen)}, not `{_subject(field)}`"
            good = false_at(field, self.default(field))
            return (w, f"wait `{w}`" + tail + f": its condition {reads}, and a wait orders only the "
                       f"accesses of a field its condition watches; wait for `{_subject(field)}` itself, "
                       f"with a condition that is false at its default" + (f", such as `{good}`" if good else ""),
                    None, False)
        after = [w for w in watching if self.after_wait(frozenset((w,)), owner, node=node, edge=edge)]
        if not after:
            start = self.ctx.edge_by_id[point].from_node if is_edge and point in self.ctx.edge_by_id else point
            for w in watching:
                if (w, _DONE) in self._graph() and start in self._reach_from((w, _DONE)):
                    return (w, f"wait `{w}`" + tail + f": `{start}` can also be reached without passing "
                               f"the wait's `completed` port (a `timed_out` or `failed` route joins its path)",
                            None, False)
            # the point itself breaks the rule: a write in the waiting branch before the wait
            _waits, why = self._checked(field, frame)
            if why is not None and why[1] == start and not is_edge:
                return (watching[0], f"wait `{watching[0]}`" + tail + f" because {why[0]}", why[1], False)
            return None
        qualifying = [w for w in after if self._cond_false_at_default(w, field)]
        if not qualifying:
            w = after[0]
            default = self.default(field)
            if self.cond_true_at_default(w, field):
                good = false_at(field, default)
                return (w, f"wait `{w}`" + tail + f" because its condition already holds while "
                           f"`{_subject(field)}` has its default{default_shown(default)}, so the wait may "
                           f"pass before the write; write a condition that is false at the default"
                           + (f", such as `{good}`" if good else ""), None, True)
            return (w, f"wait `{w}`" + tail + f" because loopc cannot prove its condition false while "
                       f"`{_subject(field)}` has its default{default_shown(default)}, so the wait may "
                       f"pass before the write", None, False)
        waits, why = self._checked(field, frame)
        if waits is not None or why is None:
            return None
        return (qualifying[0], f"wait `{qualifying[0]}`" + tail + f" because {why[0]}", why[1], False)

    def default(self, field: str) -> Any:
        """The declared default of Run-state ``field`` (``None`` when absent)."""
        fs = self.ctx.plan.state.get(field)
        return fs.default if fs is not None and fs.has_default else None

    def after_wait(self, waits: frozenset[str], owner: str, node: str | None = None,
                   edge: str | None = None) -> bool:
        """The point (a node, or an edge's bind) runs only after the
        ``completed`` port of one of ``waits``."""
        if edge is not None:
            e = self.ctx.edge_by_id.get(edge)
            if e is None:
                return False
            if e.from_node in waits and e.from_port == _DONE:
                return True
            node = e.from_node
        return node is not None and self._dominated(node, waits, owner)
