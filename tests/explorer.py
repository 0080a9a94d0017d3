"""Exhaustive token-game explorer: the test oracle for the analyzer (issue 3).

Runs a plan's *control structure* — never its data — under the runtime
lineage semantics of seed 004 §4.6–§4.9 and §7.3/§8, independently of the
analyzer's static scope typing:

* a token is ``(node, target port, lineage)``; the lineage is the stack of
  activation frames ``(owner, key)`` it was created under — a fork branch
  key, an all_match port, a fan-out item index or a loop iteration number;
  an activation is identified by ``(owner, parent lineage)``;
* action ports are chosen nondeterministically (every source port of the
  node); a first_match switch takes any one port; an all_match switch any
  non-empty subset of its cases, or its default alone; a fan_out 0, 1 or 2
  items; a loop runs ``min(iterations, 2)`` iterations;
* a join correlates an arrival with the innermost frame of its owner in the
  arrival's lineage, and counts it per join node and owner activation (the
  seed's correlation key); ``all`` completes when every activated branch
  arrived at it and fails at the first branch failure (cancelling the
  rest); ``any`` completes at the first success (cancelling the rest) and
  fails when every branch failed; a fan-out join completes when every item
  is terminal.  An ``all`` or fan-out join that completes while work of its
  owner's activation is still live, and a ``continue``/``break`` that ends
  an iteration while work inside it is live, strand that work (§4.8: "a
  break or final continue cannot leave unjoined parallel work");
* an omitted ``failed``/``timed_out`` port, or a failed End, fails the
  innermost fork/all_match branch (the owner's join decides), records the
  innermost fan-out item as failed, or — outside every parallel frame —
  fails the Run (cancelling everything);
* a token waiting in a join counter, and an open loop iteration, are *live
  work*: quiescence with live work is a deadlock.

Bad states (any one makes the plan unsound):

``deadlock`` (no token moves, live work parked), ``unterminated`` (no token
left and the Run neither succeeded nor failed), ``stranded`` (a succeeded End
reached while another token, a parked arrival, an open scope — or its own
lineage — is still live; or a join / loop iteration closing over live work),
``double_arrival`` (a branch, item or iteration
arrives twice), ``orphan_arrival`` (a join or ``continue``/``break`` reached
by a token that carries no activation of its owner), ``late_arrival`` (the
owner activation already closed), ``unsafe_merge`` (one ordinary node visited
by two sibling branches of one fork/all_match activation — the seed's
"exact activation identity"), ``duplicate_activation``, ``nested_fan_out``,
``nonterminating`` (a reachable cycle in the state graph, or a scope
re-activated inside its own activation: a cycle outside counted loops),
``race`` (see below).

Run state is modelled as data: each state field holds its declared default,
a ``set_variable`` step writes its literal values (anything else writes an
unknown value); a condition ``wait`` that reads Run state can take
``completed`` only when its condition holds (three-valued: unknown counts as
may-hold), or has held after some write since it started waiting — the
write and the wait it releases commit together.  A ``race`` is a state in
which two tokens can each take a step, one writing a field the other's step
reads or writes (node configuration, the binds of the edge it takes, a
join's merge when the arrival completes it; a wait's condition is not a
read).  Steps that touch Run state are never reduced by the partial-order
reduction below.

Not modelled (they are naming or order rules, not behaviour): first_match
condition order (LP42xx), the ``forkId`` / ``fanOutId`` key matching the
owner kind (LP4311), writes an ``any`` join may cancel (LP4602).

Exploration is a depth-first search over states with duplicate detection
and a state cap (hitting it gives ``inconclusive`` — never a pass). Partial
order reduction: a token whose next step is local (ordinary action whose
every port is routed, switch, fork, fan_out, loop entry) is fired alone,
before anything else; such steps commute with every other token's steps
(their only interaction — cancellation — removes the token whether or not
it moved, and the visit history used for ``unsafe_merge`` is an
order-independent set); likewise a join arrival or loop ``continue``/
``break`` that closes nothing while other work of that activation is live,
and a failure that only ends its own branch.  ``por=False`` explores every
interleaving; a test checks both agree.

Also here, for the hypothesis tests: plan generators (well-nested and
deliberately broken) and the front-end pipeline used to feed them to the
analyzer.
"""
from __future__ import annotations

import itertools
import json
import random
import re
from typing import Any, Callable, Iterator

import attrs

from loopc import value
from loopc.compiler.model import (
    End, Expr, FanOut, FieldSchema, Fork, Join, Literal, Loop, Plan, Ref, SetVariable, Switch, Template, Wait,
)
from loopc.compiler.ports import OPTIONAL_PORTS, source_ports

PARALLEL = ("fork", "all_match", "fan_out")


@attrs.frozen
class Bad:
    kind: str
    detail: str


@attrs.frozen
class Result:
    """``verdict`` ∈ ``ok`` / ``bad`` / ``inconclusive``; ``bad`` lists the
    distinct bad-state kinds found (first detail of each)."""

    verdict: str
    bad: tuple[Bad, ...]
    states: int

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(b.kind for b in self.bad)


@attrs.frozen
class State:
    tokens: tuple
    records: tuple
    visits: frozenset
    status: str  # run | ok | failed
    data: tuple = ()  # Run state: sorted (field, value) pairs


def innermost(lin: tuple, match: Callable[[str], bool]) -> int | None:
    """Index of the innermost (last) frame ``(owner, branch)`` of lineage
    ``lin`` whose owner ``match`` accepts, else ``None``."""
    return next((i for i in range(len(lin) - 1, -1, -1) if match(lin[i][0])), None)


def arrived(ok: tuple) -> set:
    """Branch keys that arrived at any join of the activation."""
    return {b for _, b in ok}


def at(ok: tuple, join: str) -> set:
    """Branch keys that arrived at ``join`` (join counters are keyed by join
    node and owner activation, seed 004 §4.7)."""
    return {b for j, b in ok if j == join}


class _Found(Exception):
    def __init__(self, bad: Bad) -> None:
        self.bad = bad


class _World:
    """Mutable successor under construction."""

    def __init__(self, ex: "Explorer", st: State) -> None:
        self.ex = ex
        self.tokens = list(st.tokens)
        self.records = dict(st.records)
        self.visits = set(st.visits)
        self.status = st.status
        self.data = dict(st.data)
        self.acc: set[tuple[str, bool]] = set()  # Run-state accesses of this step: (field, is_write)

    def freeze(self) -> State:
        return State(tuple(sorted(self.tokens)), tuple(sorted(self.records.items(), key=lambda kv: kv[0])),
                     frozenset(self.visits), self.status, tuple(sorted(self.data.items(), key=repr)))

    def read(self, fields) -> None:
        self.acc.update((f, False) for f in fields)

    def write(self, values: dict) -> None:
        """Commit a set_variable's writes and release every condition wait
        whose condition may now hold (the write and the resumed wait commit
        together: a released wait completes even if a later write makes the
        condition false again)."""
        self.acc.update((f, True) for f in values)
        self.data.update(values)
        ex = self.ex
        for k, (tn, tp, tl) in enumerate(self.tokens):
            if tp == "in" and tn in ex.cond_waits and ex.holds(tn, self.data) is not False:
                self.tokens[k] = (tn, "in*", tl)

    def bad(self, kind: str, detail: str) -> None:
        raise _Found(Bad(kind, detail))

    # -- moving tokens -------------------------------------------------------
    def emit(self, node: str, port: str, lin: tuple) -> None:
        ex = self.ex
        tgt = ex.out.get((node, port))
        self.read(ex.edge_reads.get((node, port), ()))
        if tgt is None:
            if port in OPTIONAL_PORTS:
                self.fail(lin)
                return
            self.bad("unrouted", f"{node}.{port}")
        tn, tp = tgt
        if tn in ex.merge_nodes and tp == "in":
            for (vn, vl) in self.visits:
                if vn != tn:
                    continue
                if vl == lin:
                    self.bad("duplicate_activation", f"{tn} twice with lineage {lin}")
                c = 0
                while c < len(vl) and c < len(lin) and vl[c] == lin[c]:
                    c += 1
                if (c < len(vl) and c < len(lin) and vl[c][0] == lin[c][0]
                        and ex.okind.get(lin[c][0]) in ("fork", "all_match")):
                    self.bad("unsafe_merge", f"{tn} visited by {vl[c]} and {lin[c]}")
            self.visits.add((tn, lin))
        self.tokens.append((tn, tp, lin))

    def cancel(self, prefix: tuple) -> None:
        """Remove every token and activation record under ``prefix``."""
        n = len(prefix)
        self.tokens = [t for t in self.tokens if t[2][:n] != prefix]
        for k in [k for k in self.records if k[1][:n] == prefix]:
            del self.records[k]

    def cancel_owner(self, owner: str, parent: tuple) -> None:
        n = len(parent)
        self.tokens = [t for t in self.tokens
                       if not (t[2][:n] == parent and len(t[2]) > n and t[2][n][0] == owner)]
        for k in [k for k in self.records
                  if k[1][:n] == parent and len(k[1]) > n and k[1][n][0] == owner]:
            del self.records[k]

    def fail(self, lin: tuple) -> None:
        ex = self.ex
        idx = innermost(lin, lambda o: ex.okind.get(o) in PARALLEL)
        if idx is None:
            self.status = "failed"
            self.tokens = []
            self.records = {}
            return
        owner, branch = lin[idx]
        parent = lin[:idx]
        key = (owner, parent)
        rec = self.records.get(key)
        if rec is None:
            self.bad("late_arrival", f"failure in closed activation of {owner}")
        self.cancel(lin[:idx + 1])
        _, expected, ok, failed = rec
        if branch in arrived(ok) or branch in failed:
            self.bad("double_arrival", f"{owner}/{branch} fails after arriving")
        failed = tuple(sorted(failed + (branch,)))
        self.records[key] = ("par", expected, ok, failed)
        kind = ex.okind[owner]
        join = ex.join_of.get(owner)
        if kind == "fan_out":
            if join is not None and at(ok, join) | set(failed) >= set(expected):
                self.complete(join, owner, parent)
            return
        if join is None:
            return
        mode = ex.nodes[join].config.mode
        if mode == "all" or set(failed) >= set(expected):
            self.join_failed(join, owner, parent)

    def live_under(self, owner: str, parent: tuple) -> bool:
        n = len(parent)

        def under(lin: tuple) -> bool:
            return len(lin) > n and lin[n][0] == owner and lin[:n] == parent

        return any(under(t[2]) for t in self.tokens) or any(under(k[1]) for k in self.records)

    def complete(self, join: str, owner: str, parent: tuple, *, cancels: bool = False) -> None:
        """Fire a join's ``completed``.  Only an ``any`` join cancels the
        rest of its owner's activation; an ``all`` or fan-out join that
        completes while work of that activation is still live strands it."""
        if not cancels and self.live_under(owner, parent):
            self.bad("stranded", f"join {join} completes while work of {owner}'s activation is live")
        self.cancel_owner(owner, parent)
        self.records.pop((owner, parent), None)
        self.read(self.ex.reads.get(join, ()))  # the merge is evaluated when the join completes
        self.emit(join, "completed", parent)

    def join_failed(self, join: str, owner: str, parent: tuple) -> None:
        self.cancel_owner(owner, parent)
        self.records.pop((owner, parent), None)
        self.emit(join, "failed", parent)


class Explorer:
    """Explore one plan; see the module docstring.  ``plan`` must pass the
    graph basics (every success/control port routed once, every node
    reachable)."""

    def __init__(self, plan: Plan, *, max_states: int = 20000, max_items: int = 2,
                 max_iterations: int = 2, por: bool = True) -> None:
        self.plan = plan
        self.nodes = plan.nodes
        self.max_states = max_states
        self.max_items = max_items
        self.max_iterations = max_iterations
        self.por = por
        self.out: dict[tuple[str, str], tuple[str, str]] = {}
        indeg: dict[str, int] = {}
        for e in plan.edges.values():
            self.out.setdefault((e.from_node, e.from_port), (e.to_node, e.to_port))
            if e.to_port == "in":
                indeg[e.to_node] = indeg.get(e.to_node, 0) + 1
        self.okind: dict[str, str] = {}
        self.join_of: dict[str, str] = {}
        for n in plan.nodes.values():
            c = n.config
            if isinstance(c, Fork):
                self.okind[n.id] = "fork"
            elif isinstance(c, Switch) and c.mode == "all_match":
                self.okind[n.id] = "all_match"
            elif isinstance(c, FanOut):
                self.okind[n.id] = "fan_out"
            elif isinstance(c, Loop):
                self.okind[n.id] = "loop"
            elif isinstance(c, Join) and c.owner:
                self.join_of.setdefault(c.owner, n.id)
        self.merge_nodes = frozenset(
            nid for nid, d in indeg.items()
            if d >= 2 and nid in plan.nodes and not isinstance(plan.nodes[nid].config, (Join, End)))
        # Run state (data, not control): what each step reads and writes
        fields = tuple(plan.state)
        self.init_data = tuple(sorted(((f, fs.default if fs.has_default else None)
                                       for f, fs in plan.state.items()), key=repr))
        self.reads: dict[str, frozenset] = {}
        self.writes: dict[str, dict] = {}
        self.cond_waits: dict[str, Any] = {}
        for n in plan.nodes.values():
            c = n.config
            if isinstance(c, SetVariable):
                self.writes[n.id] = {f: (v.value if isinstance(v, Literal) else UNKNOWN) for f, v in c.assign.items()}
                r = state_reads(list(c.assign.values()), fields)
            elif isinstance(c, Wait):
                r = state_reads([c.duration, c.timeout], fields)
                if c.condition is not None and state_reads([c.condition], fields):
                    self.cond_waits[n.id] = _parse(c.condition.text)
            else:
                r = state_reads([c], fields)
            if r:
                self.reads[n.id] = r
        self.edge_reads: dict[tuple[str, str], frozenset] = {}
        for e in plan.edges.values():
            if (e.from_node, e.from_port) not in self.edge_reads:
                r = state_reads(list((e.bind or {}).values()), fields)
                if r:
                    self.edge_reads[(e.from_node, e.from_port)] = r
        self.touch = (frozenset(self.reads) | frozenset(self.writes) | frozenset(self.cond_waits)
                      | frozenset(n for n, _ in self.edge_reads))
        self.racy = bool(self.writes) and bool(self.touch)

    def holds(self, wait: str, data: dict) -> bool | None:
        """Three-valued truth of a condition wait's condition."""
        return _truth(self.cond_waits[wait], data)

    # -- transitions ---------------------------------------------------------
    def local(self, st: State, i: int) -> bool:
        """True when token ``i``'s next step commutes with every other
        token's steps (see the module docstring)."""
        node, port, lin = st.tokens[i]
        n = self.nodes[node]
        c = n.config
        if node in self.touch:
            return False  # a Run-state access commutes with nothing that touches the field
        if self.racy and (isinstance(c, (End, Join))
                          or not isinstance(c, (Fork, Switch, FanOut, Loop))
                          and not all((node, p) in self.out for p in source_ports(n))):
            return False  # closing a join evaluates its merge
        if isinstance(c, (Fork, Switch, FanOut)):
            return True
        if isinstance(c, End):
            return c.status == "failed" and self.fail_local(st, i, lin)
        if isinstance(c, Loop):
            if port == "in":
                return True
            idx = innermost(lin, lambda o: o == node)
            if idx is None:
                return True  # orphan: bad at once
            recs = dict(st.records)
            rec = recs.get((node, lin[:idx]))
            if rec is None or rec[1] != lin[idx][1]:
                return True  # bad at once
            return True  # ends the iteration, or is bad at once when work inside it is live
        if isinstance(c, Join):
            owner = c.owner
            idx = innermost(lin, lambda o: o == owner)
            if idx is None or self.okind.get(owner) not in PARALLEL:
                return True
            recs = dict(st.records)
            rec = recs.get((owner, lin[:idx]))
            if rec is None:
                return True
            _, expected, ok, failed = rec
            b = lin[idx][1]
            if b in arrived(ok) or b in failed:
                return True
            if self.okind[owner] == "fan_out":
                completing = at(ok, node) | set(failed) | {b} >= set(expected)
            elif c.mode == "all":
                completing = at(ok, node) | {b} >= set(expected)
            else:
                completing = True
            return not completing or self.quiet(st, i, owner, lin[:idx])
        return all((node, p) in self.out or self.fail_local(st, i, lin) for p in source_ports(n))

    def fail_local(self, st: State, i: int, lin: tuple) -> bool:
        """Does a failure of token ``i`` commute with every other step?  It
        does when it cancels nothing but its own branch's record entry and
        does not close the owner's activation while siblings are live."""
        idx = innermost(lin, lambda o: self.okind.get(o) in PARALLEL)
        if idx is None:
            return len(st.tokens) == 1 and not st.records
        owner, b = lin[idx]
        parent = lin[:idx]
        rec = dict(st.records).get((owner, parent))
        if rec is None:
            return True
        _, expected, ok, failed = rec
        if b in arrived(ok) or b in failed:
            return True
        if not self.quiet(st, i, owner, parent, branch=b):
            return False
        kind = self.okind[owner]
        join = self.join_of.get(owner)
        if kind == "fan_out":
            closing = join is not None and at(ok, join) | set(failed) | {b} >= set(expected)
        elif join is None:
            closing = False
        elif self.nodes[join].config.mode == "all":
            closing = True
        else:
            closing = set(failed) | {b} >= set(expected)
        return not closing or self.quiet(st, i, owner, parent)

    @staticmethod
    def quiet(st: State, i: int, owner: str, parent: tuple, branch: Any = None) -> bool:
        """No token (other than ``i``) and no record lives under an
        activation of ``owner`` at ``parent`` (under one ``branch`` of it
        when given)."""
        n = len(parent)

        def under(lin: tuple) -> bool:
            return (len(lin) > n and lin[n][0] == owner and lin[:n] == parent
                    and (branch is None or lin[n][1] == branch))

        for j, t in enumerate(st.tokens):
            if j != i and under(t[2]):
                return False
        for k, _ in st.records:
            if under(k[1]):
                return False
        return True

    def step(self, st: State, i: int) -> Iterator[State | Bad]:
        """The successors of firing token ``i`` (one per enabled choice)."""
        for r, _acc in self._steps(st, i):
            yield r

    def _steps(self, st: State, i: int) -> Iterator[tuple[State | Bad, frozenset]]:
        """Like :meth:`step`, each successor with the Run-state accesses the
        step made (``(field, is_write)`` pairs)."""
        tok = st.tokens[i]
        rest = st.tokens[:i] + st.tokens[i + 1:]
        node, port, lin = tok
        n = self.nodes[node]
        c = n.config

        def world() -> _World:
            w = _World(self, st)
            w.tokens = list(rest)
            return w

        def run(fn) -> tuple[State | Bad, frozenset]:
            w = world()
            if not isinstance(c, Join):  # a join reads its merge when it completes
                w.read(self.reads.get(node, ()))
            try:
                fn(w)
            except _Found as f:
                return f.bad, frozenset(w.acc)
            return w.freeze(), frozenset(w.acc)

        if isinstance(c, End):
            if c.status == "succeeded":
                if lin or rest or st.records:
                    what = (f"lineage {lin}" if lin else f"{len(rest)} live token(s)" if rest
                            else f"open activations {[k for k, _ in st.records]}")
                    yield Bad("stranded", f"succeeded End {node} with {what}"), frozenset()
                    return

                def finish(w: _World) -> None:
                    w.status = "ok"
                yield run(finish)
            else:
                yield run(lambda w: w.fail(lin))
            return
        if isinstance(c, Join):
            yield run(lambda w: self.arrive_join(w, n, lin))
            return
        if isinstance(c, Fork):
            yield run(lambda w: self.activate(w, node, lin, c.branches))
            return
        if isinstance(c, Switch):
            if c.mode == "first_match":
                for p in c.ports:
                    yield run(lambda w, p=p: w.emit(node, p, lin))
            else:
                cases = [cs.port for cs in c.cases]
                choices = [(c.default,)]
                for k in range(1, len(cases) + 1):
                    choices.extend(itertools.combinations(cases, k))
                for ch in choices:
                    yield run(lambda w, ch=ch: self.activate(w, node, lin, ch))
            return
        if isinstance(c, FanOut):
            for k in range(self.max_items + 1):
                yield run(lambda w, k=k: self.fan_out(w, node, lin, k))
            return
        if isinstance(c, Loop):
            yield run(lambda w: self.loop(w, node, port, lin, c.iterations))
            return
        writes = self.writes.get(node)
        for p in source_ports(n):
            if p == "completed" and node in self.cond_waits and port != "in*" \
                    and self.holds(node, dict(st.data)) is False:
                continue  # the condition does not hold: the wait waits
            if p == "completed" and writes is not None:
                yield run(lambda w, p=p: (w.write(writes), w.emit(node, p, lin)))
            else:
                yield run(lambda w, p=p: w.emit(node, p, lin))

    @staticmethod
    def reenter(w: _World, owner: str, lin: tuple) -> None:
        """Static scopes nest as a tree, so no lineage holds one owner twice;
        an owner re-activated inside its own activation means a cycle
        outside every loop (each turn would nest one level deeper)."""
        if any(f[0] == owner for f in lin):
            w.bad("nonterminating", f"{owner} re-activated inside its own activation {lin}")

    def activate(self, w: _World, owner: str, lin: tuple, branches) -> None:
        self.reenter(w, owner, lin)
        key = (owner, lin)
        if key in w.records:
            w.bad("duplicate_activation", f"{owner} activated twice under {lin}")
        w.records[key] = ("par", tuple(sorted(branches)), (), ())
        for b in branches:
            w.emit(owner, b, lin + ((owner, b),))

    def fan_out(self, w: _World, owner: str, lin: tuple, k: int) -> None:
        self.reenter(w, owner, lin)
        if any(self.okind.get(f[0]) == "fan_out" for f in lin):
            w.bad("nested_fan_out", f"{owner} inside {lin}")
        key = (owner, lin)
        if key in w.records:
            w.bad("duplicate_activation", f"{owner} activated twice under {lin}")
        join = self.join_of.get(owner)
        if k == 0:
            if join is None:
                w.records[key] = ("par", (), (), ())  # never closed: live forever
            else:
                w.emit(join, "completed", lin)
            return
        w.records[key] = ("par", tuple(range(k)), (), ())
        for i in range(k):
            w.emit(owner, "item", lin + ((owner, i),))

    def loop(self, w: _World, loop: str, port: str, lin: tuple, iterations: int) -> None:
        cap = min(iterations, self.max_iterations)
        if port == "in":
            self.reenter(w, loop, lin)
            key = (loop, lin)
            if key in w.records:
                w.bad("duplicate_activation", f"loop {loop} twice under {lin}")
            w.records[key] = ("loop", 1)
            w.emit(loop, "body", lin + ((loop, 1),))
            return
        idx = innermost(lin, lambda o: o == loop)
        if idx is None:
            w.bad("orphan_arrival", f"{loop}.{port} without an iteration of {loop}")
        parent = lin[:idx]
        key = (loop, parent)
        rec = w.records.get(key)
        if rec is None:
            w.bad("late_arrival", f"{loop}.{port} after the loop closed")
        it = lin[idx][1]
        if rec[1] != it:
            w.bad("double_arrival", f"{loop}.{port} twice in iteration {it}")
        if w.live_under(loop, parent):
            w.bad("stranded", f"{loop}.{port} ends iteration {it} while work inside it is live")
        if port == "continue" and it < cap:
            w.records[key] = ("loop", it + 1)
            w.emit(loop, "body", parent + ((loop, it + 1),))
        else:
            del w.records[key]
            w.emit(loop, "done", parent)

    def arrive_join(self, w: _World, j, lin: tuple) -> None:
        c = j.config
        owner = c.owner
        idx = innermost(lin, lambda o: o == owner)
        if idx is None or self.okind.get(owner) not in PARALLEL:
            w.bad("orphan_arrival", f"join {j.id} reached without an activation of {owner}")
        parent = lin[:idx]
        key = (owner, parent)
        rec = w.records.get(key)
        if rec is None:
            w.bad("late_arrival", f"join {j.id} after {owner}'s activation closed")
        _, expected, ok, failed = rec
        branch = lin[idx][1]
        if branch in arrived(ok) or branch in failed:
            w.bad("double_arrival", f"{owner}/{branch} arrives twice (now at {j.id})")
        ok = tuple(sorted(ok + ((j.id, branch),), key=str))
        w.records[key] = ("par", expected, ok, failed)
        if self.okind[owner] == "fan_out":
            if at(ok, j.id) | set(failed) >= set(expected):
                w.complete(j.id, owner, parent)
        elif c.mode == "any":
            w.complete(j.id, owner, parent, cancels=True)
        elif at(ok, j.id) >= set(expected):
            w.complete(j.id, owner, parent)

    # -- search ----------------------------------------------------------------
    def race(self, st: State) -> Bad | None:
        """A Run-state race: two tokens can each take a step now, one writes
        a field and the other reads or writes it — the outcome depends on
        which goes first.  (A wait's condition is not a read: the write
        and the wait it releases commit together.)"""
        acc: list[tuple[str, set, set]] = []
        for i, (node, _p, _l) in enumerate(st.tokens):
            if node not in self.touch and not isinstance(self.nodes[node].config, (End, Join)) \
                    and all((node, p) in self.out for p in source_ports(self.nodes[node])):
                continue
            rd: set = set()
            wr: set = set()
            for _r, a in self._steps(st, i):
                for f, is_w in a:
                    (wr if is_w else rd).add(f)
            if rd or wr:
                acc.append((node, rd, wr))
        for k, (n1, r1, w1) in enumerate(acc):
            for n2, r2, w2 in acc[k + 1:]:
                hit = (w1 & (r2 | w2)) or (w2 & r1)
                if hit:
                    return Bad("race", f"{n1} and {n2} access run.state.{min(hit)} concurrently")
        return None

    def successors(self, st: State) -> Iterator[State | Bad]:
        toks = st.tokens
        if self.racy:
            race = self.race(st)
            if race is not None:
                yield race
        if self.por:
            for i in range(len(toks)):
                if self.local(st, i):
                    yield from self.step(st, i)
                    return
        for i in range(len(toks)):
            yield from self.step(st, i)

    def run(self) -> Result:
        """Explore every reachable state (see the module docstring)."""
        start = State(((self.plan.entry, "in", ()),), (), frozenset(), "run", self.init_data)
        found: dict[str, Bad] = {}
        color: dict[State, int] = {start: 0}  # 0 on stack, 1 done
        stack = [(start, self.successors(start))]
        count = 1
        while stack:
            st, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                color[st] = 1
                if st.status == "run" and not st.tokens:
                    kind = "deadlock" if st.records else "unterminated"
                    found.setdefault(kind, Bad(kind, f"quiescent with {[k for k, _ in st.records]}"))
                continue
            if isinstance(nxt, Bad):
                found.setdefault(nxt.kind, nxt)
                continue
            c = color.get(nxt)
            if c == 0:
                found.setdefault("nonterminating", Bad("nonterminating", "a state repeats"))
                continue
            if c == 1:
                continue
            count += 1
            if count > self.max_states:
                return Result("inconclusive", tuple(found.values()), count)
            color[nxt] = 0
            if nxt.status != "run":
                color[nxt] = 1
                continue
            stack.append((nxt, self.successors(nxt)))
        return Result("bad" if found else "ok", tuple(sorted(found.values(), key=lambda b: b.kind)), count)


class _Unknown:
    """A Run-state value written from data (not a literal)."""

    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN = _Unknown()
_STATE = re.compile(r"(?<![\w.])run\s*\.\s*state\b(?:\s*\.\s*([A-Za-z_][A-Za-z0-9_]*))?")


def state_reads(values: list, fields: tuple) -> frozenset:
    """Run-state fields mentioned by ValueExprs or configuration objects
    (any ``{ref: run.state...}``, any ``run.state...`` in expression or
    template text; ``run.state`` alone reads every field)."""
    out: set = set()
    todo = list(values)
    while todo:
        x = todo.pop()
        if x is None or isinstance(x, (bool, int, float, FieldSchema)):
            continue
        if isinstance(x, Ref):
            if x.path[:2] == ("run", "state"):
                out.update(x.path[2:3] or fields)
        elif isinstance(x, (Expr, Template)):
            for m in _STATE.finditer(x.text):
                out.update((m.group(1),) if m.group(1) else fields)
        elif isinstance(x, str):
            continue
        elif isinstance(x, dict) or hasattr(x, "items") and callable(x.items):
            todo.extend(x.values())
        elif isinstance(x, (list, tuple)):
            todo.extend(x)
        elif value.is_value(type(x)):
            todo.extend(getattr(x, a.name) for a in value.fields(type(x)) if a.name != "src")
        elif attrs.has(type(x)):
            todo.extend(getattr(x, a.name) for a in attrs.fields(type(x)) if a.name != "src")
    return frozenset(out)


def _parse(text: str) -> Any:
    from loopc.compiler.expr import parse_expression

    tree, errs = parse_expression(text)
    return None if errs else tree


def _truth(tree: Any, data: dict) -> bool | None:
    """Three-valued evaluation of a condition over Run state (``None``:
    unknown — anything but literal comparisons of ``run.state`` fields and
    boolean connectives, or an unknown value)."""
    from loopc.compiler.expr.ast import And, Compare, Lit, Not, Or, Path

    def val(n: Any) -> Any:
        if isinstance(n, Lit):
            return n.value
        if isinstance(n, Path) and n.root == "run.state" and len(n.segments) == 1:
            v = data.get(n.segments[0], UNKNOWN)
            return v
        return UNKNOWN

    def ev(n: Any) -> bool | None:
        if isinstance(n, Not):
            v = ev(n.operand)
            return None if v is None else not v
        if isinstance(n, And):
            vs = [ev(k) for k in n.operands]
            return False if False in vs else (None if None in vs else True)
        if isinstance(n, Or):
            vs = [ev(k) for k in n.operands]
            return True if True in vs else (None if None in vs else False)
        if isinstance(n, Compare) and n.op in ("==", "!="):
            a, b = val(n.left), val(n.right)
            if a is UNKNOWN or b is UNKNOWN or isinstance(a, bool) != isinstance(b, bool):
                return None
            return (a == b) == (n.op == "==")
        v = val(n)
        return v if isinstance(v, bool) else None

    return None if tree is None else ev(tree)


def explore(plan: Plan, **kw: Any) -> Result:
    """Explore ``plan`` (see :class:`Explorer`)."""
    return Explorer(plan, **kw).run()


# ---------------------------------------------------------------------------
# Front end for tests
# ---------------------------------------------------------------------------

@attrs.frozen
class Front:
    plan: Any
    diagnostics: tuple
    graph_ok: bool
    analysis: Any
    scopes: Any = None

    @property
    def codes(self) -> list[str]:
        return [d.code for d in self.diagnostics]

    @property
    def errors(self) -> list[str]:
        return [d.code for d in self.diagnostics if d.severity.value == "error"]


def front(src: str, *, types: bool = False) -> Front:
    """yaml → schema → graph → scope map → (types) → analyzer, without the
    driver (so analyzer tests do not depend on other passes' progress)."""
    from loopc import analyzer
    from loopc.compiler import graph, schema, scopemap, yamlload
    from loopc.compiler.report import Reporter

    r = Reporter()
    doc = yamlload.load(src, r)
    plan = schema.build_plan(doc, r) if doc is not None and doc.root is not None else None
    an = None
    sm = None
    ok = False
    if plan is not None:
        ok = bool(graph.check_graph(plan, r))
        sm = scopemap.build_scope_map(plan)
        if types:
            from loopc.compiler import typecheck

            typecheck.check_types(plan, sm, r)
        if ok:
            an = analyzer.analyze(plan, sm, r)
    return Front(plan, tuple(r.sorted()), ok, an, sm)


def proof_stacks(plan: Plan, scopes: Any) -> tuple[dict, dict]:
    """(node stacks, edge stacks) the analyzer's scope-typing proof arrives
    at on ``plan`` (run again with a throwaway reporter): on every plan the
    analyzer accepts they must equal the scope map's."""
    from loopc.analyzer.context import Ctx
    from loopc.analyzer.loops import find_cycles
    from loopc.analyzer.scopes import type_scopes
    from loopc.compiler.report import Reporter

    ctx = Ctx(plan, Reporter())
    cut, order = find_cycles(ctx)
    typing = type_scopes(ctx, scopes, cut, order)
    return dict(typing.node_stacks), {e.id: typing.edge_stacks[e.id] for e in ctx.edges if e.id in typing.edge_stacks}


# ---------------------------------------------------------------------------
# Plan generators (random.Random-driven; hypothesis supplies the Random)
# ---------------------------------------------------------------------------

HEADER = "apiVersion: loop.plan/v1\nkind: PlanVersion\n"


def emit_yaml(nodes: list[dict], edges: list[dict], entry: str, state: dict | None = None) -> str:
    """A plan source from node/edge dicts (JSON flow style is YAML)."""
    lines = [HEADER.rstrip("\n"),
             'input: {"approver": {"type": "member", "required": true}, "flag": {"type": "boolean"}}',
             "output: {}"] + ([f"state: {json.dumps(state)}"] if state else []) + [f"entry: {entry}", "nodes:"]
    lines += ["  - " + json.dumps(n) for n in nodes]
    lines.append("edges:" if edges else "edges: []")
    lines += ["  - " + json.dumps(e) for e in edges]
    return "\n".join(lines) + "\n"


class PlanGen:
    """Random well-nested plans: every construct of seed 004 §4.5–§4.9 in
    properly nested form (CPS construction from the final succeeded End
    backwards), failures omitted or routed to failed Ends (shared across
    scopes), no Run-state access (races are data, not control)."""

    def __init__(self, rng: random.Random, budget: int = 14, fan_out: bool = True, state: bool = False) -> None:
        self.rng = rng
        self.budget = budget
        self.fan = fan_out
        self.state = state  # Run-state accesses of one field `d` (see :func:`with_state`)
        self.nodes: list[dict] = []
        self.edges: list[dict] = []
        self.k = 0
        self.fail_ends: list[str] = []

    def new(self, prefix: str, typ: str, **cfg: Any) -> str:
        self.k += 1
        nid = f"{prefix}{self.k}"
        n = {"id": nid, "type": typ}
        n.update(cfg)
        self.nodes.append(n)
        return nid

    def edge(self, frm: str, port: str, to: tuple[str, str]) -> None:
        e = {"id": f"e{len(self.edges) + 1}", "from": {"node": frm, "port": port}, "to": {"node": to[0]}}
        if to[1] != "in":
            e["to"]["port"] = to[1]
        self.edges.append(e)

    def fail_end(self) -> tuple[str, str]:
        if self.fail_ends and self.rng.random() < 0.6:
            return (self.rng.choice(self.fail_ends), "in")
        nid = self.new("fail", "end", end={"status": "failed", "code": "failed"})
        self.fail_ends.append(nid)
        return (nid, "in")

    def maybe_fail(self, nid: str, port: str) -> None:
        if self.rng.random() < 0.4:
            self.edge(nid, port, self.fail_end())

    def block(self, cont: tuple[str, str], depth: int, in_fan: bool) -> tuple[str, str]:
        target = cont
        for _ in range(self.rng.choice((1, 1, 2))):
            target = self.construct(target, depth, in_fan)
        return target

    def construct(self, target: tuple[str, str], depth: int, in_fan: bool) -> tuple[str, str]:
        rng = self.rng
        kinds = ["action"] * 3
        if depth < 3 and len(self.nodes) < self.budget:
            kinds += ["switch", "fork", "all_match", "loop"] + (["fan_out"] if self.fan and not in_fan else [])
        if self.state and depth < 3 and len(self.nodes) < self.budget:
            kinds += ["handshake"] * 2
        kind = rng.choice(kinds)
        if kind == "handshake":
            return self.handshake(target, depth, in_fan)
        if kind == "action":
            a = rng.choice(("send", "wait", "approval") + (("set", "set", "wait_state", "read") if self.state else ()))
            if a in ("set", "wait_state", "read"):
                return self.state_action(a, target)
            if a == "send":
                nid = self.new("s", "send_message",
                               sendMessage={"target": "#ops", "text": "x", "completion": "sent"})
                self.edge(nid, "completed", target)
                self.maybe_fail(nid, "failed")
            elif a == "wait":
                if rng.random() < 0.5:
                    nid = self.new("w", "wait", wait={"duration": "PT1M"})
                else:
                    nid = self.new("w", "wait", wait={"condition": "run.input.flag == true", "timeout": "P1D"})
                    if rng.random() < 0.5:
                        self.edge(nid, "timed_out", target if rng.random() < 0.5 else self.fail_end())
                self.edge(nid, "completed", target)
                self.maybe_fail(nid, "failed")
            else:
                nid = self.new("a", "request_approval",
                               requestApproval={"assignee": "{{ run.input.approver }}", "summary": "ok?"})
                self.edge(nid, "approved", target)
                self.edge(nid, "rejected", target if rng.random() < 0.5 else self.fail_end())
                self.maybe_fail(nid, "failed")
            return (nid, "in")
        if kind == "switch":
            ports = ["p", "q"][: rng.choice((1, 2))]
            nid = self.new("sw", "switch", switch={
                "mode": "first_match",
                "cases": [{"port": p, "when": f"run.input.flag == {str(i == 0).lower()}"} for i, p in enumerate(ports)],
                "default": "d"})
            keep = rng.choice(ports + ["d"])  # at least one port continues
            for p in ports + ["d"]:
                if p != keep and rng.random() < 0.25:
                    self.edge(nid, p, self.fail_end())
                else:
                    self.edge(nid, p, self.block(target, depth + 1, in_fan))
            return (nid, "in")
        if kind in ("fork", "all_match"):
            if kind == "fork":
                ports = ["a", "b", "c"][: rng.choice((2, 2, 3))]
                nid = self.new("f", "fork", fork={"branches": ports})
            else:
                cases = ["p", "q"][: rng.choice((1, 2))]
                ports = cases + ["d"]
                nid = self.new("m", "switch", switch={
                    "mode": "all_match",
                    "cases": [{"port": p, "when": "run.input.flag == true"} for p in cases],
                    "default": "d"})
            mode = rng.choice(("all", "any"))
            j = self.new("j", "join", join={"forkId": nid, "mode": mode, "result": {}, "merge": {}})
            self.edge(j, "completed", target)
            self.maybe_fail(j, "failed")
            keep = rng.choice(ports)  # at least one branch reaches the join
            for p in ports:
                if p != keep and rng.random() < 0.15:
                    self.edge(nid, p, self.fail_end())
                else:
                    self.edge(nid, p, self.block((j, "in"), depth + 1, in_fan))
            return (nid, "in")
        if kind == "fan_out":
            nid = self.new("fo", "fan_out", input={"work_items": {"type": "work_items", "required": True}},
                           fanOut={"items": {"ref": "input.work_items"}})
            j = self.new("j", "join", join={"fanOutId": nid, "mode": "all", "result": {}, "merge": {}})
            self.edge(j, "completed", target)
            self.edge(nid, "item", self.block((j, "in"), depth + 1, True))
            return (nid, "in")
        # loop
        nid = self.new("l", "loop", loop={"mode": "counted", "iterations": rng.choice((1, 2, 3))})
        self.edge(nid, "done", target)
        cont = (nid, "continue")
        if rng.random() < 0.4:
            sw = self.new("sw", "switch", switch={
                "mode": "first_match", "cases": [{"port": "stop", "when": "run.input.flag == true"}],
                "default": "again"})
            self.edge(sw, "stop", (nid, "break"))
            self.edge(sw, "again", cont)
            cont = (sw, "in")
        self.edge(nid, "body", self.block(cont, depth + 1, in_fan))
        return (nid, "in")

    def state_action(self, a: str, target: tuple[str, str]) -> tuple[str, str]:
        rng = self.rng
        if a == "set":
            nid = self.new("v", "set_variable", setVariable={"assign": {"d": rng.choice(STATE_VALUES)}})
        elif a == "read":
            nid = self.new("r", "send_message",
                           sendMessage={"target": "#ops", "text": "d={{ run.state.d }}", "completion": "sent"})
        else:
            wait: dict = {"condition": rng.choice(STATE_CONDITIONS)}
            if rng.random() < 0.6:
                wait["timeout"] = "P1D"
            nid = self.new("w", "wait", wait=wait)
            if "timeout" in wait and rng.random() < 0.3:
                self.edge(nid, "timed_out", target if rng.random() < 0.3 else self.fail_end())
        self.edge(nid, "completed", target)
        if a != "set":
            self.maybe_fail(nid, "failed")
        return (nid, "in")

    def handshake(self, target: tuple[str, str], depth: int, in_fan: bool) -> tuple[str, str]:
        """The writer/waiter shape: fork [watch, act]; ``watch`` waits on
        ``run.state.d`` and goes on (reading it, maybe), ``act`` is any
        block (writes, approvals with a writer per decision, ...)."""
        rng = self.rng
        nid = self.new("f", "fork", fork={"branches": ["watch", "act"]})
        j = self.new("j", "join", join={"forkId": nid, "mode": "all", "result": {}, "merge": {}})
        self.edge(j, "completed", target)
        after = self.block((j, "in"), depth + 1, in_fan) if rng.random() < 0.5 else (j, "in")
        if rng.random() < 0.7:
            after = self.state_action("read", after)
        self.edge(nid, "watch", self.state_action("wait_state", after))
        if rng.random() < 0.5:
            ask = self.new("a", "request_approval",
                           requestApproval={"assignee": "{{ run.input.approver }}", "summary": "ok?"})
            for port in ("approved", "rejected"):
                self.edge(ask, port, self.state_action("set", (j, "in")) if rng.random() < 0.8 else (j, "in"))
            self.edge(nid, "act", (ask, "in"))
        else:
            self.edge(nid, "act", self.block((j, "in"), depth + 1, in_fan))
        return (nid, "in")

    def build(self) -> tuple[list[dict], list[dict], str]:
        done = self.new("done", "end", end={"status": "succeeded"})
        entry = self.block((done, "in"), 0, False)
        return self.nodes, self.edges, entry[0]


def well_nested(rng: random.Random, budget: int = 14) -> str:
    """A random well-nested plan source."""
    nodes, edges, entry = PlanGen(rng, budget).build()
    return emit_yaml(nodes, edges, entry)


STATE_VALUES = ("approved", "rejected", "pending")
STATE_CONDITIONS = ("run.state.d != 'pending'", "run.state.d == 'approved'", "run.state.d == 'pending'",
                    "run.state.d != 'pending' && run.input.flag == true")


def with_state(rng: random.Random, budget: int = 12) -> str:
    """A random well-nested plan whose actions also write, wait on and read
    the Run-state field ``d`` (default chosen at random), with writer/waiter
    forks: structurally sound, racy or not."""
    gen = PlanGen(rng, budget, state=True)
    nodes, edges, entry = gen.build()
    text = json.dumps(nodes)
    state = {"d": {"type": "string", "default": rng.choice(("pending", "pending", "approved"))}} \
        if "run.state.d" in text or '"set_variable"' in text else None
    return emit_yaml(nodes, edges, entry, state)


MUTATIONS = ("retarget", "add_failure_edge", "swap_owner", "drop_join", "flip_switch", "to_done",
             "to_loop_port")


def broken(rng: random.Random, budget: int = 12) -> tuple[str, list[str]]:
    """A well-nested plan with 1–2 random structural mutations; returns the
    source and the mutation names.  The result may fail graph basics (the
    caller filters on that)."""
    nodes, edges, entry = PlanGen(rng, budget).build()
    ids = [n["id"] for n in nodes]
    applied = []
    for _ in range(rng.choice((1, 1, 2))):
        m = rng.choice(MUTATIONS)
        applied.append(m)
        if m == "retarget" and edges:
            e = rng.choice(edges)
            e["to"] = {"node": rng.choice(ids)}
        elif m == "add_failure_edge":
            routed = {(e["from"]["node"], e["from"]["port"]) for e in edges}
            free = [(n["id"], "failed") for n in nodes
                    if n["type"] in ("send_message", "wait", "request_approval", "join")
                    and (n["id"], "failed") not in routed]
            if free:
                src, port = rng.choice(free)
                edges.append({"id": f"x{len(edges)}", "from": {"node": src, "port": port},
                              "to": {"node": rng.choice(ids)}})
        elif m == "swap_owner":
            joins = [n for n in nodes if n["type"] == "join"]
            owners = [n["id"] for n in nodes if n["type"] in ("fork", "switch", "fan_out")]
            if joins and owners:
                j = rng.choice(joins)
                key = "forkId" if "forkId" in j["join"] else "fanOutId"
                j["join"][key] = rng.choice(owners)
        elif m == "drop_join":
            joins = [n for n in nodes if n["type"] == "join"]
            if joins:
                j = rng.choice(joins)
                outs = [e for e in edges if e["from"]["node"] == j["id"] and e["from"]["port"] == "completed"]
                if outs:
                    tgt = outs[0]["to"]
                    for e in edges:
                        if e["to"]["node"] == j["id"]:
                            e["to"] = dict(tgt)
                    edges[:] = [e for e in edges if e["from"]["node"] != j["id"]]
                    nodes.remove(j)
                    ids.remove(j["id"])
        elif m == "flip_switch":
            sws = [n for n in nodes if n["type"] == "switch"]
            if sws:
                s = rng.choice(sws)
                s["switch"]["mode"] = "all_match" if s["switch"]["mode"] == "first_match" else "first_match"
        elif m == "to_done" and edges:
            e = rng.choice(edges)
            e["to"] = {"node": "done1" if "done1" in ids else ids[0]}
        elif m == "to_loop_port":
            loops = [n["id"] for n in nodes if n["type"] == "loop"]
            if loops and edges:
                e = rng.choice(edges)
                e["to"] = {"node": rng.choice(loops), "port": rng.choice(("continue", "break"))}
    return emit_yaml(nodes, edges, entry), applied


def sound_front(src: str) -> Front | None:
    """The front end's result when the plan passes schema and graph basics
    with no diagnostic at all (what the oracle tests compare), else None."""
    f = front(src)
    if f.plan is None or not f.graph_ok:
        return None
    if any(d.code < "LP41" for d in f.diagnostics):
        return None
    return f
