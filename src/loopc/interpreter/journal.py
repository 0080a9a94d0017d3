"""The engine's Run state and its journal (docs/conformance.md#crash-resume-and-replay):
:class:`RunJournal` holds everything a Run is (activations, scopes, timers,
leases, counters), writes records into the current step and commits steps
(compared with the committed journal on resume), and takes a checkpoint of
that state or loads one.  The scheduling loop is :class:`loopc.interpreter.engine.Engine`.
"""
from __future__ import annotations

import heapq
from collections import deque
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Callable, Mapping, cast

from loopc.interpreter.clock import format_instant
from loopc.interpreter.program import Program
from loopc.interpreter.runstate import (CHECKPOINT_VERSION, DEFAULT_BUDGET, Act, Budget, JournalDivergence, World,
                                        _Budget, _ctx_in, _ctx_out, _FanOut, _first_difference, _Group,
                                        _JournalWorld, _Loop, _task_in, _task_out)

if TYPE_CHECKING:
    from loopc.interpreter.engine import Engine


class RunJournal:
    """The state of one Run and its journal writer (the base of
    :class:`loopc.interpreter.engine.Engine`, which documents the
    constructor's arguments)."""

    def __init__(self, program: Program, world: World | None = None, *,
                 expected: list[list[dict[str, Any]]] | None = None,
                 on_step: Callable[["Engine"], None] | None = None, budget: Budget = DEFAULT_BUDGET) -> None:
        self.p = program
        self.budget = budget
        self._over_budget = False
        self.expected = expected or []
        self.world: World = _JournalWorld(self.expected, world or World()) if self.expected else (world or World())
        self.on_step = on_step
        self.steps: list[list[dict[str, Any]]] = []
        self.base = 0  # steps committed before this engine's memory (restored from a checkpoint)
        self._cur: list[dict[str, Any]] = []
        self._seq = 0
        self.now = Decimal(0)
        self._now_text = format_instant(self.now)
        self.run_id = ""
        self.input: Mapping[str, Any] = {}
        self.state: dict[str, Any] = {}
        self.versions: dict[str, int] = {}
        self.status = "waiting"
        self.output: Any = None
        self.error: Any = None
        self.final: tuple[str, Any] | None = None
        self.ready: deque[tuple[Any, ...]] = deque()
        self.acts: dict[str, Act] = {}  # live activations only: a finished one is dropped
        self.open: dict[str, Act] = {}
        self.latest: dict[str, Act] = {}  # node -> its latest activation (find_open's reasons)
        self.latest_item: dict[tuple[str, str], Act] = {}  # (node, item key) -> latest activation
        self.attempt_counts: dict[str, int] = {}  # node -> attempts started (1 per activation without retry)
        self.visits: dict[str, int] = {}
        self.groups: dict[tuple[str, ...], _Group] = {}
        self.fanouts: dict[str, _FanOut] = {}
        self.loops: dict[str, _Loop] = {}
        self.timers: list[tuple[Decimal, int, str]] = []
        self.timer_info: dict[str, list[Any]] = {}
        self.leases: dict[str, str] = {}  # agent -> holding activation
        self.queues: dict[str, deque[str]] = {}
        self.node_deliveries: dict[str, int] = {}
        self.counters = {"act": 0, "eff": 0, "tmr": 0, "msg": 0, "thr": 0}
        self.watching: dict[str, Act] = {}
        self.effects: dict[str, tuple[str, int]] = {}  # effect -> (act, attempt)

    # ------------------------------------------------------------------ journal
    def _next(self, kind: str) -> str:
        self.counters[kind] += 1
        return f"{kind}_{self.counters[kind]}"

    def _rec(self, kind: str, **fields: Any) -> None:
        if self._seq + len(self._cur) >= self.budget.records and not self._over_budget:
            raise _Budget(f"the Run would write journal record {self.budget.records + 1:,}, over its budget of "
                          f"{self.budget.records:,} records")
        r = {"kind": kind, "at": self._now_text}
        r.update(fields)
        self._cur.append(r)

    def _commit(self) -> None:
        recs = self._cur
        if not recs:
            return
        idx = len(self.steps)
        step = self.base + idx + 1
        if step > self.budget.steps and not self._over_budget:
            raise _Budget(f"the Run would commit step {step:,}, over its budget of {self.budget.steps:,} steps")
        self._cur = []
        for r in recs:
            self._seq += 1
            r["seq"] = self._seq
            r["step"] = step
        if idx < len(self.expected) and self.expected[idx] != recs:
            raise JournalDivergence(_first_difference(self.expected[idx], recs, step))
        self.steps.append(recs)
        if self.on_step is not None:
            self.on_step(cast("Engine", self))  # a RunJournal is only ever an Engine's base

    def records(self) -> list[dict[str, Any]]:
        """The journal as a flat, sequence-ordered list of records (those
        this engine committed or re-executed: after a restore, the steps
        since its checkpoint)."""
        return [r for s in self.steps for r in s]

    def _set_now(self, t: Decimal) -> None:
        if t != self.now:
            self.now = t
            self._now_text = format_instant(t)

    @property
    def terminal(self) -> bool:
        return self.status in ("succeeded", "failed", "cancelled")

    @property
    def live(self) -> bool:
        return bool(self.open or self.ready)

    # ------------------------------------------------------------------ checkpoints
    def checkpoint(self) -> dict[str, Any]:
        """The engine state between steps, as plain JSON data (a
        *checkpoint*; docs/conformance.md#crash-resume-and-replay): what
        :meth:`restore` needs to continue the Run without re-executing the
        journal before it.  Its size is the live state of the Run (open
        activations, scopes, timers, queues), not its history: finished
        activations are not kept (only each node's latest, for the reasons
        an outside event is refused).  Raises ``ValueError`` in the middle
        of a step."""
        if self._cur:
            raise ValueError("a checkpoint is taken between steps")
        acts: dict[str, Act] = {}
        for a in (*self.acts.values(), *self.latest.values(), *self.latest_item.values()):
            acts.setdefault(a.id, a)
        return {
            "checkpoint": CHECKPOINT_VERSION, "digest": self.p.digest, "steps": self.base + len(self.steps),
            "seq": self._seq, "now": str(self.now), "run": self.run_id, "input": self.input, "state": self.state,
            "versions": self.versions, "status": self.status, "output": self.output, "error": self.error,
            "final": list(self.final) if self.final is not None else None, "overBudget": self._over_budget,
            "ready": [_task_out(t) for t in self.ready],
            "acts": [[a.id, a.node.id, a.seq, _ctx_out(a.ctx), a.input, a.status, a.attempt, a.effect, a.agent,
                      a.lease, a.timers, a.request, a.deliveries, a.kind] for a in acts.values()],
            "live": list(self.acts), "open": list(self.open), "watching": list(self.watching),
            "latest": {n: a.id for n, a in self.latest.items()},
            "latestItem": [[n, k, a.id] for (n, k), a in self.latest_item.items()],
            "attempts": self.attempt_counts, "visits": self.visits,
            "groups": [[list(key), [g.owner, g.owner_act, g.kind, g.branches, g.arrivals, g.failed, g.closed, g.join,
                                    g.join_act, _ctx_out(g.ctx), g.mode]] for key, g in self.groups.items()],
            "fanouts": [[fo.owner, fo.act, fo.join, fo.join_act, _ctx_out(fo.ctx), list(fo.items.values()), fo.order,
                         fo.status, fo.env, fo.envelopes, fo.in_flight, fo.max, fo.closed, fo.input]
                        for fo in self.fanouts.values()],
            "loops": [[lp.act, lp.node, lp.iteration, lp.n, lp.state, _ctx_out(lp.ctx), lp.closed, lp.traversals]
                      for lp in self.loops.values()],
            "timers": [[str(due), n, tid] for due, n, tid in self.timers
                       if tid in self.timer_info and self.timer_info[tid][3]],
            "timerInfo": {tid: info for tid, info in self.timer_info.items() if info[3]},
            "leases": self.leases, "queues": {k: list(q) for k, q in self.queues.items()},
            "deliveries": self.node_deliveries, "counters": self.counters,
            "effects": {e: list(v) for e, v in self.effects.items()},
        }


    def _load(self, ck: Mapping[str, Any]) -> None:
        nodes = self.p.nodes
        self.base, self._seq = int(ck["steps"]), int(ck["seq"])
        self._set_now(Decimal(ck["now"]))
        self.run_id, self.input, self.state, self.versions = ck["run"], ck["input"], ck["state"], ck["versions"]
        self.status, self.output, self.error = ck["status"], ck["output"], ck["error"]
        self.final = tuple(ck["final"]) if ck["final"] is not None else None
        self._over_budget = bool(ck["overBudget"])
        self.ready = deque(_task_in(t) for t in ck["ready"])
        table: dict[str, Act] = {}
        for (aid, node, seq, ctx, inp, status, attempt, effect, agent, lease, timers, request, deliveries,
             kind) in ck["acts"]:
            a = Act(aid, nodes[node], seq, _ctx_in(ctx), inp)
            a.status, a.attempt, a.effect, a.agent, a.lease = status, attempt, effect, agent, lease
            a.timers, a.request, a.deliveries, a.kind = timers, request, deliveries, kind
            table[aid] = a
        self.acts = {aid: table[aid] for aid in ck["live"]}
        self.open = {aid: table[aid] for aid in ck["open"]}
        self.watching = {aid: table[aid] for aid in ck["watching"]}
        self.latest = {n: table[aid] for n, aid in ck["latest"].items()}
        self.latest_item = {(n, k): table[aid] for n, k, aid in ck["latestItem"]}
        self.attempt_counts, self.visits = ck["attempts"], ck["visits"]
        self.groups = {}
        for key, (owner, owner_act, kind, branches, arrivals, failed, closed, join, join_act, ctx,
                  mode) in ck["groups"]:
            g = _Group(owner, owner_act, kind, branches, join, join_act, _ctx_in(ctx), mode)
            g.arrivals, g.failed, g.closed = arrivals, failed, closed
            self.groups[tuple(key)] = g
        self.fanouts = {}
        for (owner, act, join, join_act, ctx, items, order, status, env, envelopes, in_flight, maxc, closed,
             inp) in ck["fanouts"]:
            fo = _FanOut(owner, act, join, join_act, _ctx_in(ctx), items, maxc, inp)
            fo.order, fo.status, fo.env, fo.envelopes = order, status, env, envelopes
            fo.in_flight, fo.closed = in_flight, closed
            self.fanouts[act] = fo
        self.loops = {}
        for act, node, iteration, n, state, ctx, closed, traversals in ck["loops"]:
            lp = _Loop(act, node, n, state, _ctx_in(ctx))
            lp.iteration, lp.closed, lp.traversals = iteration, closed, traversals
            self.loops[act] = lp
        self.timers = [(Decimal(due), n, tid) for due, n, tid in ck["timers"]]
        heapq.heapify(self.timers)
        self.timer_info = ck["timerInfo"]
        self.leases = ck["leases"]
        self.queues = {k: deque(q) for k, q in ck["queues"].items()}
        self.node_deliveries, self.counters = ck["deliveries"], ck["counters"]
        self.effects = {e: (v[0], v[1]) for e, v in ck["effects"].items()}

