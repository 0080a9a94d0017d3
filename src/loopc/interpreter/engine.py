"""The reference interpreter's engine: one deterministic, journaled loop over
a verified artifact (docs/language.md#run-semantics, docs/conformance.md).

Shape (in the spirit of a step-journaled flow engine): a FIFO ready queue of
*arrivals* (a token entering a node port) and internal tasks (deliver an
effect); the loop pops one entry, executes it and commits its records as
one **step** of the journal.  Outside inputs (a callback, a decision, a
clock advance, a cancel) are steps of their own; a timer firing is a step.
After every input the loop runs to quiescence.  Resume is the same loop
re-entered over the committed journal: every step it would write is
compared with the committed one and skipped, and outside answers (delivery
outcomes) are read back from the journal, so there is no separate recovery
code path.

Identities are Run-relative counters (``act_N``, ``eff_N``, ``tmr_N``,
``msg_N``, ``thr_N``) and semantic keys (effect idempotency key
``<run>:<activation>:<attempt>``, item id ``<fan_out activation>/<key>``).
The engine never reads a clock: instants come from inputs (the Run start,
``advance`` targets) and from timers it scheduled.  Containers are
insertion-ordered dicts and lists only; nothing iterates a set.
"""
from __future__ import annotations

import hashlib
import heapq
from collections import deque
from decimal import Decimal
from typing import Any, Callable, Mapping

import attrs

from loopc.interpreter.choice import select_one
from loopc.interpreter.clock import duration_seconds, format_instant
from loopc.interpreter.program import Program, ProgramNode
from loopc.limits import duration_problem
from loopc.interpreter.values import (WORK_ITEM_KEYS, apply_defaults, check_contract, check_value,
                                      contract_problems, is_id, is_scope)
from loopc.ir.evaluator import EvaluationError, evaluate, render
from loopc.kinds import tables as kind_tables
from loopc.kinds.base import attr_name

__all__ = ["Engine", "JournalDivergence", "World", "NoWorld", "Act", "TERMINAL_ITEM", "Budget", "DEFAULT_BUDGET",
           "CHECKPOINT_VERSION"]

Frame = tuple  # (kind, owner, owner activation id, key)
TERMINAL_ITEM = ("succeeded", "failed", "timed_out", "blocked", "cancelled")
MAX_WORK_ITEMS = 256
#: the approval config attribute whose presence puts ``comment`` in the
#: decision output (:attr:`loopc.kinds.Kind.conditional_outputs`)
#: kinds that accept ``retry`` (:attr:`loopc.kinds.Kind.retry`)
_RETRY_CAPABLE = kind_tables().retry_capable
#: opcode → its effect class; an external one (message, approval) is the journal's effectKind
_EFFECT_CLASS = {op: k.effect_class for op, k in kind_tables().kinds.items()}
_COMMENT_WHEN = attr_name(kind_tables().conditional_outputs["request_approval"]["comment"])


@attrs.frozen
class Budget:
    """What one Run may use (docs/conformance.md#budgets): at most
    ``activations`` node activations, ``records`` journal records and
    ``steps`` committed steps.  Memory is bounded through these counts (a
    record holds values of bounded size).  Going over fails the Run with
    ``runtime.budget_exceeded``; every limit is a positive integer."""

    activations: int = 1_000_000
    records: int = 10_000_000
    steps: int = 10_000_000

    def __attrs_post_init__(self) -> None:
        for name in ("activations", "records", "steps"):
            v = getattr(self, name)
            if type(v) is not int or v < 1:
                raise ValueError(f"budget {name} must be a positive integer, not {v!r}")


DEFAULT_BUDGET = Budget()


class JournalDivergence(Exception):
    """Resume or replay produced a step that differs from the committed one."""


class World:
    """The outside world the engine talks to: delivery outcomes.  Answers
    depend only on the node and the Run-wide ordinal of the delivery, so a
    stateless world answers the same after a crash.  ``key`` is the
    effect's identity key (``effect.reserved``'s ``key``), the same on every
    submission of that effect: the world's dedupe key
    (docs/conformance.md#effect-identity)."""

    def deliver(self, node: str, ordinal: int, effect: str, key: str = "") -> bool:  # noqa: ARG002
        return True

    def transport_fault(self, node: str, ordinal: int, effect: str) -> bool:  # noqa: ARG002
        return False


class NoWorld(World):
    """Replay with the world removed: any question is an error."""

    def deliver(self, node: str, ordinal: int, effect: str, key: str = "") -> bool:
        raise JournalDivergence(f"replay asked the world to deliver {effect} ({node}); the journal has no answer")

    def transport_fault(self, node: str, ordinal: int, effect: str) -> bool:
        raise JournalDivergence(f"replay asked the world about a transmission of {effect}")


class _JournalWorld(World):
    """Answers from committed records first, then from ``fallback``."""

    def __init__(self, steps: list[list[dict[str, Any]]], fallback: World) -> None:
        self.delivered: dict[str, bool] = {}
        self.transport: dict[tuple[str, int], bool] = {}
        for step in steps:
            for r in step:
                k = r["kind"]
                if k == "effect.delivered":
                    self.delivered[r["effect"]] = True
                elif k == "effect.failed":
                    self.delivered[r["effect"]] = False
                elif k == "effect.transport_retry":
                    self.transport[(r["effect"], r["transmission"])] = True
        self.fallback = fallback
        self.last_answered: dict[str, int] = {}

    def deliver(self, node: str, ordinal: int, effect: str, key: str = "") -> bool:
        if effect in self.delivered:
            return self.delivered[effect]
        return self.fallback.deliver(node, ordinal, effect, key)

    def transport_fault(self, node: str, ordinal: int, effect: str) -> bool:
        key = (effect, ordinal)
        if key in self.transport:
            return True
        if effect in self.delivered:
            return False
        return self.fallback.transport_fault(node, ordinal, effect)


class Act:
    """One node activation (docs/language.md#identities-and-lineage)."""

    __slots__ = ("id", "node", "seq", "ctx", "input", "status", "attempt", "effect", "agent", "lease",
                 "timers", "request", "deliveries", "kind")

    def __init__(self, aid: str, node: ProgramNode, seq: int, ctx: tuple, inp: Mapping[str, Any]) -> None:
        self.id = aid
        self.node = node
        self.seq = seq
        self.ctx = ctx
        self.input = inp
        self.status = "running"  # running queued delivering awaiting watching retry done cancelled
        self.attempt = 0
        self.effect: str | None = None
        self.agent: str | None = None
        self.lease = False
        self.timers: list[str] = []
        self.request: dict[str, Any] = {}
        self.deliveries = 0
        self.kind = node.op


class _Group:
    __slots__ = ("owner", "owner_act", "kind", "branches", "arrivals", "failed", "closed", "join", "join_act",
                 "ctx", "mode")

    def __init__(self, owner: str, owner_act: str, kind: str, branches: list[str], join: str | None,
                 join_act: str | None, ctx: tuple, mode: str) -> None:
        self.owner, self.owner_act, self.kind, self.branches = owner, owner_act, kind, branches
        self.arrivals: dict[str, Any] = {}
        self.failed: dict[str, Any] = {}
        self.closed = False
        self.join, self.join_act, self.ctx, self.mode = join, join_act, ctx, mode


class _FanOut:
    __slots__ = ("owner", "act", "join", "join_act", "ctx", "items", "order", "status", "env", "envelopes",
                 "in_flight", "max", "closed", "input")

    def __init__(self, owner: str, act: str, join: str | None, join_act: str | None, ctx: tuple,
                 items: list[dict[str, Any]], maxc: int, inp: Mapping[str, Any]) -> None:
        self.owner, self.act, self.join, self.join_act, self.ctx = owner, act, join, join_act, ctx
        self.input = inp  # the fan_out activation's input (that activation is finished)
        self.items = {it["key"]: it for it in items}
        self.order = [it["key"] for it in items]
        self.status = {k: "pending" for k in self.order}
        self.env: dict[str, dict[str, Any]] = {}
        self.envelopes: dict[str, dict[str, Any]] = {}
        self.in_flight: list[str] = []
        self.max = maxc
        self.closed = False


class _Loop:
    __slots__ = ("act", "node", "iteration", "n", "state", "ctx", "closed", "traversals")

    def __init__(self, act: str, node: str, n: int, state: dict[str, Any], ctx: tuple) -> None:
        self.act, self.node, self.n, self.state, self.ctx = act, node, n, state, ctx
        self.iteration = 1
        self.closed = False
        self.traversals = 1


def run_identity(digest: str, input_bytes: bytes) -> str:
    """Run id from the artifact digest and the canonical Plan input."""
    h = hashlib.sha256(digest.encode("ascii") + b"\x00" + input_bytes).hexdigest()
    return "run_" + h[:16]


def scenario_run_id(digest: str, input_bytes: bytes, scenario: str) -> str:
    """A scenario's Run id (docs/conformance.md#run-ids): ``run_`` and the
    first 16 hex digits of SHA-256 over the UTF-8 bytes of the artifact
    digest, a NUL, the canonical Plan input (defaults applied), a NUL and
    the scenario's name (its file name without the extension; a name that
    is not valid Unicode contributes its original bytes)."""
    h = hashlib.sha256(digest.encode("ascii") + b"\x00" + input_bytes + b"\x00" + scenario.encode("utf-8", "surrogateescape"))
    return "run_" + h.hexdigest()[:16]


class Engine:
    """Execute one Run of ``program``.

    Inputs (each one step, then the loop runs to quiescence):
    :meth:`start`, :meth:`callback`, :meth:`decide`, :meth:`advance`,
    :meth:`cancel`.  Queries: :attr:`status`, :attr:`output`,
    :attr:`error`, :attr:`state`, :meth:`find_open`, :meth:`records`.

    ``expected`` holds committed steps (resume/replay): each new step must
    equal the committed one at its index, else :class:`JournalDivergence`.
    ``on_step(engine)`` is called after every committed step (the invariant
    monitor hooks in here).  ``budget`` bounds the Run (:class:`Budget`).

    No input raises on run-time data: an expression that fails, a value of
    the wrong wire form or an exceeded budget becomes the documented Run
    failure (docs/language.md#runtime-produced-codes); only
    :class:`JournalDivergence` (resume) and errors of ``on_step`` propagate.
    """

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
            self.on_step(self)

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

    @classmethod
    def restore(cls, program: Program, ck: Mapping[str, Any], world: World | None = None, *,
                expected: list[list[dict[str, Any]]] | None = None,
                on_step: Callable[["Engine"], None] | None = None, budget: Budget = DEFAULT_BUDGET) -> "Engine":
        """An engine in the state of checkpoint ``ck`` (:meth:`checkpoint`,
        possibly through JSON text).  ``expected`` are the committed steps
        after the checkpoint: re-executing them is compared record by
        record, as in a resume.  Raises :class:`JournalDivergence` when
        ``ck`` is not a checkpoint of this artifact."""
        if not isinstance(ck, Mapping) or ck.get("checkpoint") != CHECKPOINT_VERSION \
                or ck.get("digest") != program.digest:
            raise JournalDivergence("the checkpoint is not one of this artifact's Runs")
        eng = cls(program, world, expected=expected, on_step=on_step, budget=budget)
        try:
            eng._load(ck)
        except (KeyError, IndexError, TypeError, ValueError, ArithmeticError) as exc:
            raise JournalDivergence(f"the checkpoint is damaged: {type(exc).__name__}: {exc}") from None
        return eng

    def _load(self, ck: Mapping[str, Any]) -> None:
        nodes = self.p.nodes
        self.base, self._seq = int(ck["steps"]), int(ck["seq"])
        self._set_now(Decimal(ck["now"]))
        self.run_id, self.input, self.state, self.versions = ck["run"], ck["input"], ck["state"], ck["versions"]
        self.status, self.output, self.error = ck["status"], ck["output"], ck["error"]
        self.final = tuple(ck["final"]) if ck["final"] is not None else None  # type: ignore[assignment]
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

    # ------------------------------------------------------------------ failures
    def _input(self, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        """Apply one outside input; an exceeded budget fails the Run
        (``runtime.budget_exceeded``, journaled in the step it stopped)."""
        try:
            return fn(*args, **kw)
        except _Budget as b:
            self._over_budget = True
            self._fail_run({"code": "runtime.budget_exceeded", "detail": str(b)})
            self._commit()
            return None

    def _guard(self, ctx: tuple, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn``; a run-time data error (:class:`_Fail`) fails the
        innermost parallel frame of the context it arose in (the emitting
        node's for an edge binding, else ``ctx``), or the Run."""
        try:
            fn(*args)
        except _Fail as f:
            self._settle(f, ctx)

    def _settle(self, f: "_Fail", ctx: tuple) -> None:
        """Fail the frame of ``f``; a failure while routing that failure (a
        failed join's edge binding that fails too) fails the next frame out.
        Each round is strictly further out or a sibling WorkItem, so this
        ends; the bound is a backstop that fails the Run."""
        err, at = f.err, f.ctx if f.ctx is not None else ctx
        for _ in range(1 + len(self.acts) + len(self.ready)):
            try:
                self._fail_ctx(at, err)
                return
            except _Fail as g:
                err, at = g.err, g.ctx if g.ctx is not None else ()
        self._fail_run(err)

    # ------------------------------------------------------------------ inputs
    def start(self, plan_input: Mapping[str, Any], at: Decimal = Decimal(0), run_id: str | None = None) -> None:
        """Start the Run (step 1: ``run.started``) and run to quiescence.
        ``run_id`` is the Run's id (the host's; a scenario's is
        :func:`scenario_run_id`); without one it derives from the artifact
        digest and the canonical Plan input (defaults applied)."""
        self._input(self._start, plan_input, at, run_id)

    def _start(self, plan_input: Mapping[str, Any], at: Decimal, run_id: str | None = None) -> None:
        from loopc.ir.canonical import canonical_bytes

        self._set_now(at)
        self.input = apply_defaults(plan_input, self.p.input)
        self.run_id = run_id if run_id is not None else run_identity(self.p.digest, canonical_bytes(self.input))
        self.state = {k: f.default for k, f in self.p.state.items() if f.has_default}
        self.versions = {k: 0 for k in self.state}
        self._rec("run.started", run=self.run_id, digest=self.p.digest, input=dict(self.input), state=dict(self.state))
        env = {"run.input": self.input, "run.state": self.state}
        entry = self.p.nodes[self.p.entry]
        try:
            val = self._bind(self.p.entry_bind, env, entry.input, "entry", check=entry.op != "end")
        except _Fail as f:
            self._fail_run(f.err)
        else:
            self.ready.append(("arrive", entry.id, "in", (), val))
        self._commit()
        self._run()

    def find_open(self, node: str, item: str | None, attempt: int | None,
                  kinds: tuple[str, ...]) -> tuple[Act | None, str | None]:
        """The activation an outside event addresses, or ``(None, reason)``.
        Oldest open first; with ``attempt``, the latest activation of the
        node (or item) must be at that attempt."""
        if node not in self.p.nodes:
            return None, f"no node '{node}'"
        if self.terminal:
            return None, f"the Run is {self.status}"
        last = self.latest_item.get((node, item)) if item is not None else self.latest.get(node)
        if last is None:
            return None, (f"no activation of '{node}' for item '{item}'" if item is not None
                          else f"'{node}' has not been activated")
        if attempt is not None:
            a = last
            if not self._addressable(a, kinds):
                return None, f"{a.id} of '{node}' is not awaiting this ({a.status})"
            if a.attempt != attempt:
                return None, f"attempt {attempt} of {a.id} is superseded (current attempt {a.attempt})"
            return a, None
        for a in self.open.values():  # activation order
            if a.node.id == node and (item is None or _item_of(a) == item) and self._addressable(a, kinds):
                return a, None
        if last.id not in self.open and self._addressable(last, kinds):
            return last, None
        return None, f"no open {'callback' if 'awaiting' in kinds else 'request'} on '{node}' ({last.id} is {last.status})"

    def _addressable(self, a: Act, kinds: tuple[str, ...]) -> bool:
        """An outside event may address only an open activation (a late,
        cancelled or completed one is refused)."""
        return a.status in kinds

    def check_callback(self, act: Act, output: Any, fail: Any, work_items: Any) -> str | None:
        """Why a callback would be refused (``None`` = acceptable)."""
        if not self._callback_acceptable(act):
            return f"{act.id} is {act.status}"
        if act.node.op != "send_message" or act.node.config.completion != "callback":
            return f"'{act.node.id}' does not take callbacks"
        if fail is not None:  # the scenario format guarantees these shapes; the API and protocol do not
            if not (isinstance(fail, dict) and isinstance(fail.get("code"), str)
                    and isinstance(fail.get("detail", ""), str)):
                return "fail must be {code, detail} with string values"
            return None
        if output is not None and not isinstance(output, dict):
            return "output must be an object"
        cfg = act.node.config
        out = dict(output or {})
        contract = dict(act.node.callback_output or {})
        ws = cfg.work_scope
        if ws is not None and ws.mode == "agent":
            if not is_scope(out.get("workScope")):
                return "the callback must return workScope (a scope): this node lets the Agent choose it"
        elif "workScope" in out:
            return "workScope is fixed by the node; the callback cannot set it"
        out.pop("workScope", None)
        problems = contract_problems(out, contract, "output")  # the first, with a did-you-mean
        if problems:
            return problems[0][1]
        if cfg.work_items is not None:
            if work_items is None:
                return "the callback must return workItems"
            _, why = _normalize_work_items(work_items, act.request.get("allowedResponders"))
            if why:
                return why
        elif work_items is not None:
            return f"'{act.node.id}' does not take workItems"
        return None

    def callback(self, act: Act, attempt: int, *, output: Any = None, fail: Any = None, work_items: Any = None,
                 event: int | None = None) -> None:
        """Complete (or fail) the callback of ``act`` at ``attempt``; the
        caller checked :meth:`check_callback` first."""
        self._input(self._callback, act, attempt, output, fail, work_items, event)

    def _callback(self, act: Act, attempt: int, output: Any, fail: Any, work_items: Any, event: int | None) -> None:
        if fail is not None:
            err = {"code": str(fail.get("code", "callback.failed")), "detail": str(fail.get("detail", ""))}
            self._rec("callback.failed", act=act.id, attempt=attempt, error=err, event=event)
            self._guard(act.ctx, self._callback_failed, act, err)
        else:
            out = dict(output or {})
            self._rec("callback.accepted", act=act.id, attempt=attempt, output=dict(out), event=event,
                      **({"workItems": work_items} if work_items is not None else {}))
            ws = act.node.config.work_scope
            if ws is not None and ws.mode == "fixed":
                out["workScope"] = act.request.get("workScope")
            if work_items is not None:
                out["workItems"], _ = _normalize_work_items(work_items, act.request.get("allowedResponders"))
            self._guard(act.ctx, self._complete, act, "completed", out)
        self._commit()
        self._run()

    def decide(self, act: Act, attempt: int, approved: bool, by: str, comment: str | None,
               event: int | None = None) -> None:
        """Record the one decision of an approval activation."""
        self._input(self._decide, act, attempt, approved, by, comment, event)

    def _callback_failed(self, act: Act, err: Mapping[str, Any]) -> None:
        self._attempt_failed(act, err["code"], err["detail"], final_code=None)

    def _decide(self, act: Act, attempt: int, approved: bool, by: str, comment: str | None,
                event: int | None) -> None:
        out: dict[str, Any] = {"decidedBy": by}
        if getattr(act.node.config, _COMMENT_WHEN) is not None:  # the kind's conditional output
            out["comment"] = comment or ""
        self._rec("decision.recorded", act=act.id, attempt=attempt, decision="approved" if approved else "rejected",
                  by=by, comment=comment, event=event)
        self._guard(act.ctx, self._complete, act, "approved" if approved else "rejected", out)
        self._commit()
        self._run()

    def advance(self, to: Decimal, by: str, event: int | None = None) -> None:
        """Move the Run's clock to ``to``; due timers fire in (due, scheduled)
        order, each as one step followed by quiescence."""
        self._input(self._advance, to, by, event)

    def _advance(self, to: Decimal, by: str, event: int | None) -> None:
        if self.terminal:
            self._set_now(max(to, self.now))
            return
        self._rec("clock.advanced", to=format_instant(to), by=by, event=event)
        self._commit()
        while self.timers and not self.terminal:
            due, _, tid = self.timers[0]
            if due > to:
                break
            heapq.heappop(self.timers)
            info = self.timer_info.get(tid)
            if info is None or not info[3]:
                continue
            self._set_now(due)
            act = self.acts.get(info[0])
            self._guard(act.ctx if act is not None else (), self._fire, tid, info)
            self._commit()
            self._run()
        self._set_now(max(to, self.now))

    def cancel(self, event: int | None = None) -> bool:
        """Cancel the Run (idempotent): returns ``False`` when it was already
        terminal (nothing is recorded then)."""
        return bool(self._input(self._cancel, event) is not False)

    def _cancel(self, event: int | None) -> bool:
        if self.terminal:
            return False
        self._rec("run.cancelled", event=event)
        self._cancel_where(lambda ctx: True, "run cancelled")
        self.ready.clear()
        self.status = "cancelled"
        self._commit()
        return True

    # ------------------------------------------------------------------ loop
    def _run(self) -> None:
        ready = self.ready
        while ready and not self.terminal:
            task = ready.popleft()
            if task[0] == "arrive":
                self._guard(task[3], self._arrive, *task[1:])
            else:
                act = self.acts.get(task[1])
                self._guard(act.ctx if act is not None else (), self._deliver, task[1], task[2])
            self._commit()
        self._maybe_complete()
        self._commit()

    def _maybe_complete(self) -> None:
        if self.terminal or self.final is None or self.live:
            return
        status, value = self.final
        if status == "succeeded":
            self.status, self.output = "succeeded", value
            self._rec("run.completed", status="succeeded", output=value)

    def _fail_run(self, err: Mapping[str, Any]) -> None:
        if self.terminal:
            return
        self._cancel_where(lambda ctx: True, "run failed")
        self.ready.clear()
        self.status, self.error = "failed", dict(err)
        self._rec("run.completed", status="failed", error=dict(err))

    # ------------------------------------------------------------------ activations
    def _activate(self, node: ProgramNode, ctx: tuple, inp: Mapping[str, Any]) -> Act:
        if self.counters["act"] >= self.budget.activations and not self._over_budget:
            raise _Budget(f"the Run would start activation {self.budget.activations + 1:,} ('{node.id}'), over its "
                          f"budget of {self.budget.activations:,} activations")
        aid = self._next("act")
        a = Act(aid, node, self.counters["act"], ctx, inp)
        self.acts[aid] = a
        self.open[aid] = a
        self.latest[node.id] = a
        item = _item_of(a)
        if item is not None:
            self.latest_item[(node.id, item)] = a
        if node.op not in _RETRY_CAPABLE:  # attempts of a retry-capable kind are counted per attempt
            self.attempt_counts[node.id] = self.attempt_counts.get(node.id, 0) + 1
        self.visits[node.id] = self.visits.get(node.id, 0) + 1
        self._rec("activation.started", act=aid, node=node.id, input=inp, lineage=[list(f) for f in ctx])
        return a

    def _finish(self, a: Act, status: str) -> None:
        a.status = status
        self.open.pop(a.id, None)
        self.acts.pop(a.id, None)
        if a.effect is not None:
            self.effects.pop(a.effect, None)
        self.watching.pop(a.id, None)
        for t in a.timers:
            info = self.timer_info.get(t)
            if info is not None:
                info[3] = False
        a.timers = []
        if a.lease:
            self._release_lease(a)

    def _complete(self, a: Act, port: str, output: Any) -> None:
        self._rec("activation.completed", act=a.id, node=a.node.id, port=port, output=output)
        self._finish(a, "done")
        self._emit(a.node, port, a.ctx, a.input, output)

    def _emit(self, node: ProgramNode, port: str, ctx: tuple, inp: Mapping[str, Any], output: Any,
              *, env_extra: Mapping[str, Any] | None = None) -> None:
        edge_id, implicit, _ = node.ports[port]
        if edge_id is None:
            err = output if isinstance(output, dict) and "code" in output else {
                "code": "wait.timed_out" if port == "timed_out" else f"{node.op}.{port}",
                "detail": f"wait '{node.id}' timed out" if port == "timed_out" else f"'{node.id}' took its {port} port"}
            self._route(implicit, ctx, {"code": err["code"], "detail": err.get("detail", "")})
            return
        e = self.p.edges[edge_id]
        env = self._env(ctx, inp, output or {})
        if env_extra:
            env.update(env_extra)
        dst = self.p.nodes[e.dst]
        contract = dst.loop_state if e.dst_port in ("continue", "break") else dst.input
        # a succeeded End validates the Plan output itself (run.output_invalid)
        val = self._bind(e.bind, env, contract, f"edge '{e.id}'", check=dst.op != "end", ctx=ctx)
        self.ready.append(("arrive", e.dst, e.dst_port, ctx, val, e.id))

    def _bind(self, bind: tuple[tuple[str, Any], ...], env: Mapping[str, Any], contract: Mapping[str, Any] | None,
              where: str, *, check: bool = True, ctx: tuple | None = None) -> dict[str, Any]:
        """Evaluate a binding; a failure is a :class:`_Fail` carrying
        ``ctx``, the context the binding is evaluated in (an edge's source
        node, a join's owner scope), when given."""
        out: dict[str, Any] = {}
        try:
            for k, instr in bind:
                v = evaluate(instr, env)
                if v is not None:
                    out[k] = v
        except EvaluationError as exc:
            raise _Fail({"code": "runtime.evaluation_failed", "detail": f"{where}: {exc}"}, ctx) from None
        if contract is not None:
            out = apply_defaults(out, contract)
            r = check_contract(out, contract, "input", closed=False) if check else None
            if r:
                raise _Fail({"code": "runtime.input_invalid", "detail": f"{where}: {r}"}, ctx)
        return out

    def _env(self, ctx: tuple, inp: Mapping[str, Any], output: Any) -> dict[str, Any]:
        env: dict[str, Any] = {"run.input": self.input, "run.state": self.state, "input": inp, "output": output}
        have_loop = have_item = False
        for f in reversed(ctx):
            if f[0] == "loop" and not have_loop:
                lp = self.loops[f[2]]
                env["loop"] = {"iteration": f[3], "state": lp.state}
                have_loop = True
            elif f[0] == "fan_out" and not have_item:
                env["item"] = self.fanouts[f[2]].env.get(f[3])
                have_item = True
        return env

    def _eval(self, instr: Any, env: Mapping[str, Any], where: str) -> Any:
        try:
            return evaluate(instr, env)
        except EvaluationError as exc:
            raise _Fail({"code": "runtime.evaluation_failed", "detail": f"{where}: {exc}"}) from None

    def _text(self, instr: Any, env: Mapping[str, Any], where: str) -> str:
        """A value where text is expected (message text, summary, End detail),
        rendered as a template part (docs/ir.md#rendering-values-as-text)."""
        try:
            return render(evaluate(instr, env))
        except EvaluationError as exc:
            raise _Fail({"code": "runtime.evaluation_failed", "detail": f"{where}: {exc}"}) from None

    # ------------------------------------------------------------------ arrivals
    def _arrive(self, nid: str, port: str, ctx: tuple, val: dict[str, Any], edge: str | None = None) -> None:
        node = self.p.nodes[nid]
        op = node.op
        if op == "join":
            self._join_arrival(node, ctx, val)
        elif op == "loop" and port != "in":
            self._loop_return(node, port, ctx, val)
        elif op == "end":
            self._end(node, ctx, val, edge)
        else:
            a = self._activate(node, ctx, val)
            ACTIVATION_HANDLERS[op](self, a)

    def _op_switch(self, a: Act) -> None:
        cfg = a.node.config
        env = self._env(a.ctx, a.input, {})
        matched: list[str] = []
        for case in cfg.cases:
            if _truthy(self._eval(case.when, env, f"switch '{a.node.id}' case '{case.port}'")):
                matched.append(case.port)
                if cfg.mode == "first_match":
                    break
        if not matched:
            matched = [cfg.default]
        if cfg.mode == "first_match":
            self._complete(a, matched[0], a.input)
            return
        self._finish(a, "done")
        self._rec("activation.completed", act=a.id, node=a.node.id, ports=matched, output=a.input)
        self._open_group(a, "all_match", matched)

    def _op_fork(self, a: Act) -> None:
        branches = list(a.node.config.branches)
        self._finish(a, "done")
        self._rec("activation.completed", act=a.id, node=a.node.id, ports=branches, output=a.input)
        self._open_group(a, "fork", branches)

    def _open_group(self, a: Act, kind: str, branches: list[str]) -> None:
        decl = self.p.scopes.get(a.node.id)
        join = decl.join if decl is not None else None
        join_act = None
        mode = "all"
        if join is not None:
            jn = self.p.nodes[join]
            mode = jn.config.mode
            ja = self._activate(jn, a.ctx, {})
            ja.status = "joining"
            join_act = ja.id
        g = _Group(a.node.id, a.id, kind, branches, join, join_act, a.ctx, mode)
        self.groups[self._group_key(join or a.node.id, a.id)] = g
        self._rec("scope.opened", scopeKind=kind, owner=a.node.id, act=a.id, branches=branches, join=join_act)
        for b in branches:
            self._emit(a.node, b, a.ctx + ((kind, a.node.id, a.id, b),), a.input, a.input)

    def _group_key(self, join: str, owner_act: str) -> tuple[str, ...]:
        """Join correlation key: (join node, owner activation) — the Run is
        implicit (one engine per Run)."""
        return (join, owner_act)

    def _frame_for(self, ctx: tuple, owner: str) -> tuple[int, Frame | None]:
        for i in range(len(ctx) - 1, -1, -1):
            if ctx[i][1] == owner:
                return i, ctx[i]
        return -1, None

    def _join_arrival(self, node: ProgramNode, ctx: tuple, val: dict[str, Any]) -> None:
        cfg = node.config
        owner = cfg.owner
        _, fr = self._frame_for(ctx, owner)
        if fr is None:
            raise _Fail({"code": "runtime.orphan_arrival", "detail": f"an arrival at '{node.id}' carries no '{owner}' lineage"})
        if fr[0] == "fan_out":
            self._item_terminal(self.fanouts[fr[2]], fr[3], "succeeded", val, None)
            return
        g = self.groups[self._group_key(node.id, fr[2])]  # created when the owner activated
        b = fr[3]
        if g.closed:
            self._rec("join.refused", act=g.join_act, branch=b, reason="closed")
            return
        if b in g.arrivals or b in g.failed:
            self._rec("join.refused", act=g.join_act, branch=b, reason="duplicate")
            return
        g.arrivals[b] = val
        self._rec("join.arrived", act=g.join_act, branch=b, outcome="succeeded", value=val)
        if g.mode == "any":
            self._close_group(g, "completed", {"winner": {"key": b, "value": val}}, cancel=True)
        elif all(x in g.arrivals for x in g.branches):
            self._close_group(g, "completed", {"branches": {x: g.arrivals[x] for x in g.branches}}, cancel=False)

    def _fail_branch(self, fr: Frame, err: Mapping[str, Any]) -> None:
        owner = fr[1]
        decl = self.p.scopes.get(owner)
        join = decl.join if decl is not None else None
        g = self.groups.get(self._group_key(join or owner, fr[2]))
        if g is None or g.closed:
            return
        b = fr[3]
        g.failed[b] = dict(err)
        self._rec("join.arrived", act=g.join_act, branch=b, outcome="failed", error=dict(err))
        # the failed branch's own remaining work ends with it
        self._cancel_where(lambda ctx: fr in ctx, f"branch '{b}' failed")
        if join is None:
            g.closed = True
            self._cancel_where(lambda ctx: any(f[2] == g.owner_act for f in ctx), "sibling branch failed")
            self._fail_ctx(g.ctx, err)
            return
        if g.mode == "any":
            if self._any_failed(g):
                details = "; ".join(f"{x}: {g.failed[x]['code']}" for x in g.branches if x in g.failed)
                self._close_group(g, "failed", None, cancel=True, err={
                    "code": "join.no_branch_succeeded",
                    "detail": f"no branch of '{owner}' succeeded ({details})"})
        else:
            self._close_group(g, "failed", None, cancel=True, err=dict(err))

    def _any_failed(self, g: _Group) -> bool:
        """An ``any`` join fails only when no branch can succeed any more."""
        return all(x in g.failed for x in g.branches)

    def _close_group(self, g: _Group, port: str, env_extra: Mapping[str, Any] | None, *, cancel: bool,
                     err: Mapping[str, Any] | None = None) -> None:
        g.closed = True
        if cancel:
            # an arrival already queued for this join is not cancelled: it
            # reaches the closed join in its own step and is refused there
            self._cancel_where(lambda ctx: any(f[2] == g.owner_act for f in ctx), f"join '{g.join}' closed",
                               spare=g.join)
        ja = self.acts[g.join_act] if g.join_act else None
        jn = self.p.nodes[g.join] if g.join else None
        if ja is None or jn is None:
            return
        if port == "failed":
            self._finish(ja, "done")
            self._rec("activation.completed", act=ja.id, node=jn.id, port="failed", output=dict(err or {}))
            self._emit(jn, "failed", g.ctx, {}, dict(err or {}))
            return
        result = self._merge(jn, g.ctx, env_extra or {})
        self._finish(ja, "done")
        self._rec("activation.completed", act=ja.id, node=jn.id, port="completed", output=result)
        self._emit(jn, "completed", g.ctx, {}, result)

    def _merge(self, jn: ProgramNode, ctx: tuple, extra: Mapping[str, Any]) -> dict[str, Any]:
        env = self._env(ctx, {}, {})
        env.update(extra)
        return self._bind(tuple(sorted(jn.config.merge.items())), env, jn.result,
                          f"join '{jn.id}' merge", ctx=ctx)

    # ------------------------------------------------------------------ failure routes
    def _route(self, implicit: Any, ctx: tuple, err: Mapping[str, Any]) -> None:
        action = implicit.action if implicit is not None else "fail_plan"
        owner = implicit.owner if implicit is not None else None
        status = implicit.status if implicit is not None else None
        self._rec("route.implicit", action=action, owner=owner, status=status,
                  error=dict(err))
        if action == "never":
            return
        if action == "fail_plan":
            self._fail_run(err)
            return
        _, fr = self._frame_for(ctx, owner or "")
        if fr is None:
            self._fail_ctx(ctx, err)
        elif action == "fail_item":
            self._fail_item(fr, err, "timed_out" if status == "timed_out" else "failed")
        else:
            self._fail_branch(fr, err)

    def _fail_ctx(self, ctx: tuple, err: Mapping[str, Any]) -> None:
        """A failure the artifact did not route (a run-time data error): it
        fails the innermost parallel frame, else the Run."""
        for f in reversed(ctx):
            if f[0] in ("fork", "all_match"):
                self._fail_branch(f, err)
                return
            if f[0] == "fan_out":
                self._fail_item(f, err, "failed")
                return
        self._fail_run(err)

    # ------------------------------------------------------------------ End
    def _end(self, node: ProgramNode, ctx: tuple, val: dict[str, Any], edge: str | None) -> None:
        a = self._activate(node, ctx, val)
        cfg = node.config
        self._finish(a, "done")
        if cfg.status == "succeeded":
            r = check_contract(val, self.p.output, "output")
            if r:
                err = {"code": "run.output_invalid", "detail": f"the Plan output is invalid: {r}"}
                self._rec("activation.completed", act=a.id, node=node.id, port=None, status="failed", error=err)
                self._fail_run(err)
                return
            self._rec("activation.completed", act=a.id, node=node.id, port=None, status="succeeded", output=val)
            self.final = ("succeeded", val)
            return
        detail = ""
        if cfg.detail is not None:
            detail = self._text(cfg.detail, self._env(ctx, val, {}), f"end '{node.id}' detail")
        err = {"code": cfg.code or "", "detail": detail}
        self._rec("activation.completed", act=a.id, node=node.id, port=None, status="failed", error=err)
        disp = self.p.edges[edge].disposition if edge else None
        self._route_disposition(disp, ctx, err)

    def _route_disposition(self, disp: Any, ctx: tuple, err: Mapping[str, Any]) -> None:
        action = disp.action if disp is not None else "fail_plan"
        if action == "fail_plan":
            self._fail_run(err)
            return
        _, fr = self._frame_for(ctx, (disp.owner if disp is not None else None) or "")
        if fr is None:
            self._fail_ctx(ctx, err)
        elif action == "fail_item":
            self._fail_item(fr, err, "failed")
        else:
            self._fail_branch(fr, err)

    # ------------------------------------------------------------------ fan-out
    def _op_fan_out(self, a: Act) -> None:
        cfg = a.node.config
        raw = self._eval(cfg.items, self._env(a.ctx, a.input, {}), f"fan_out '{a.node.id}' items")
        items, why = _normalize_work_items(raw if raw is not None else [], None)
        if why:
            raise _Fail({"code": "runtime.input_invalid", "detail": f"fan_out '{a.node.id}' items: {why}"})
        decl = self.p.scopes.get(a.node.id)
        join = decl.join if decl is not None else None
        join_act = None
        if join is not None:
            ja = self._activate(self.p.nodes[join], a.ctx, {})
            ja.status = "joining"
            join_act = ja.id
        self._finish(a, "done")
        fo = _FanOut(a.node.id, a.id, join, join_act, a.ctx, items, int(cfg.max_concurrency), a.input)
        self.fanouts[a.id] = fo
        self._rec("activation.completed", act=a.id, node=a.node.id, port="item", output=None)
        self._rec("scope.opened", scopeKind="fan_out", owner=a.node.id, act=a.id,
                  items=[{"id": f"{a.id}/{k}", "key": k, "dependsOn": fo.items[k]["dependsOn"]} for k in fo.order],
                  maxConcurrency=fo.max, join=join_act)
        self._schedule(fo)

    def _schedule(self, fo: _FanOut) -> None:
        if fo.closed:
            return
        changed = True
        while changed:
            changed = False
            for k in fo.order:
                if fo.status[k] != "pending":
                    continue
                deps = fo.items[k]["dependsOn"]
                sts = [fo.status[d] for d in deps]
                if any(s in ("failed", "timed_out", "blocked", "cancelled") for s in sts):
                    if all(s in TERMINAL_ITEM for s in sts):
                        self._item_record(fo, k, "blocked", None, None, self._blocked_by(fo, deps))
                        changed = True
                    continue
                if all(s == "succeeded" for s in sts) and len(fo.in_flight) < fo.max:
                    self._start_item(fo, k)
                    changed = True
        self._maybe_close_fanout(fo)

    def _blocked_by(self, fo: _FanOut, deps: list[str]) -> list[str]:
        """Source-ordered root blockers: an unsuccessful dependency names
        itself, a blocked one contributes its own ``blockedBy``."""
        roots: list[str] = []
        for d in deps:
            if fo.status[d] == "blocked":
                roots.extend(fo.envelopes[d]["blockedBy"])
            elif fo.status[d] != "succeeded":
                roots.append(d)
        pos = {x: i for i, x in enumerate(fo.order)}
        return sorted(dict.fromkeys(roots), key=pos.__getitem__)

    def _start_item(self, fo: _FanOut, k: str) -> None:
        it = fo.items[k]
        fo.status[k] = "running"
        fo.in_flight.append(k)
        deps = {d: fo.envelopes[d] for d in it["dependsOn"]}
        fo.env[k] = {**it, "dependencies": deps}
        self._rec("item.started", item=f"{fo.act}/{k}", key=k)
        node = self.p.nodes[fo.owner]
        self._emit(node, "item", fo.ctx + (("fan_out", fo.owner, fo.act, k),), fo.input, {})

    def _item_record(self, fo: _FanOut, k: str, status: str, value: Any, error: Any, blocked_by: list[str]) -> None:
        fo.status[k] = status
        env = {"key": k, "status": status, "value": value, "error": error, "blockedBy": blocked_by}
        fo.envelopes[k] = env
        self._rec("item.terminal", item=f"{fo.act}/{k}", key=k, status=status, value=value, error=error,
                  blockedBy=blocked_by)

    def _item_terminal(self, fo: _FanOut, k: str, status: str, value: Any, error: Any) -> None:
        if fo.closed or fo.status.get(k) != "running":
            self._rec("item.refused", item=f"{fo.act}/{k}", status=status)
            return
        self._item_record(fo, k, status, value, error, [])
        self._release_slot(fo, k, status)
        self._schedule(fo)

    def _release_slot(self, fo: _FanOut, k: str, status: str) -> None:  # noqa: ARG002
        """A slot frees only when the item's lineage ends (any terminal status)."""
        if k in fo.in_flight:
            fo.in_flight.remove(k)

    def _fail_item(self, fr: Frame, err: Mapping[str, Any], status: str) -> None:
        fo = self.fanouts.get(fr[2])
        if fo is None:
            return
        self._cancel_where(lambda ctx: fr in ctx, f"item '{fr[3]}' {status}")
        self._item_terminal(fo, fr[3], status, None, {"code": err["code"], "detail": err.get("detail", "")})

    def _maybe_close_fanout(self, fo: _FanOut) -> None:
        if fo.closed or not all(fo.status[k] in TERMINAL_ITEM for k in fo.order):
            return
        fo.closed = True
        if fo.join is None or fo.join_act is None:
            return
        jn = self.p.nodes[fo.join]
        ja = self.acts[fo.join_act]
        result = self._merge(jn, fo.ctx, {"items": [fo.envelopes[k] for k in fo.order]})
        self._finish(ja, "done")
        self._rec("activation.completed", act=ja.id, node=jn.id, port="completed", output=result)
        self._emit(jn, "completed", fo.ctx, {}, result)

    # ------------------------------------------------------------------ loop
    def _op_loop(self, a: Act) -> None:
        cfg = a.node.config
        env = self._env(a.ctx, a.input, {})
        state = self._bind(tuple(sorted(cfg.init.items())), env, a.node.loop_state,
                           f"loop '{a.node.id}' init")
        a.status = "looping"
        lp = _Loop(a.id, a.node.id, int(cfg.iterations), state, a.ctx)
        self.loops[a.id] = lp
        self._rec("loop.iteration", act=a.id, iteration=1, state=state)
        self._emit(a.node, "body", a.ctx + (("loop", a.node.id, a.id, 1),), a.input, {})

    def _loop_return(self, node: ProgramNode, port: str, ctx: tuple, val: dict[str, Any]) -> None:
        _, fr = self._frame_for(ctx, node.id)
        if fr is None or fr[2] not in self.loops:
            raise _Fail({"code": "runtime.orphan_arrival", "detail": f"'{port}' of '{node.id}' outside its loop"})
        lp = self.loops[fr[2]]
        if lp.closed or fr[3] != lp.iteration:
            self._rec("loop.refused", act=lp.act, iteration=fr[3], port=port)
            return
        lp.state = val
        a = self.acts[lp.act]
        if port == "continue" and lp.iteration < lp.n:
            lp.iteration += 1
            lp.traversals += 1
            self._rec("loop.iteration", act=lp.act, iteration=lp.iteration, state=val)
            self._emit(node, "body", lp.ctx + (("loop", node.id, lp.act, lp.iteration),), a.input, {})
            return
        lp.closed = True
        self._rec("loop.exited", act=lp.act, iteration=lp.iteration, via=port, state=val)
        self._complete(a, "done", val)

    # ------------------------------------------------------------------ set_variable / wait
    def _op_set_variable(self, a: Act) -> None:
        env = self._env(a.ctx, a.input, {})
        assign = a.node.config.assign
        values = {f: self._eval(assign[f], env, f"set_variable '{a.node.id}' {f}") for f in sorted(assign)}
        for f, v in values.items():
            spec = self.p.state.get(f)
            if spec is not None and v is not None:
                r = check_value(v, spec, f"run.state.{f}")
                if r:
                    raise _Fail({"code": "runtime.input_invalid", "detail": f"set_variable '{a.node.id}' {f}: {r}"})
            before = self.state.get(f)
            ver = self.versions.get(f, 0) + 1
            self.versions[f] = ver
            self.state = {**self.state, f: v}
            self._rec("state.written", act=a.id, field=f, before=before, after=v, version=ver)
        self._complete(a, "completed", {})
        self._wake_waits()

    def _wake_waits(self) -> None:
        for w in list(self.watching.values()):
            if w.status != "watching":
                continue
            env = self._env(w.ctx, w.input, {})
            try:
                ok = _truthy(evaluate(w.node.config.condition, env))
            except EvaluationError:
                continue
            if ok:
                self._complete(w, "completed", {})

    def _op_wait(self, a: Act) -> None:
        self._start_attempt(a)

    def _op_send_message(self, a: Act) -> None:
        self._start_attempt(a)

    def _op_request_approval(self, a: Act) -> None:
        self._start_attempt(a)

    def _start_attempt(self, a: Act) -> None:
        a.attempt += 1
        self.attempt_counts[a.node.id] = self.attempt_counts.get(a.node.id, 0) + 1
        self._rec("attempt.started", act=a.id, attempt=a.attempt)
        cfg = a.node.config
        env = self._env(a.ctx, a.input, {})
        try:
            if a.node.op == "wait":
                self._start_wait(a, cfg, env)
                return
            req = self._request(a, cfg, env)
        except _Fail as f:
            if f.ctx is not None:  # an edge after the wait completed: not this attempt's failure
                raise
            self._attempt_failed(a, f.err["code"], f.err["detail"], final_code=None)
            return
        a.request = req
        eff = self._next("eff")
        if a.effect is not None:
            self.effects.pop(a.effect, None)
        a.effect = eff
        self.effects[eff] = (a.id, a.attempt)
        self._rec("effect.reserved", act=a.id, attempt=a.attempt, effect=eff,
                  key=self.effect_key(a),
                  effectKind=_EFFECT_CLASS[a.node.op], request=req)
        agent = req.get("responder")
        if a.node.op == "send_message" and cfg.completion == "callback" and isinstance(agent, str):
            if a.lease and a.agent != agent:
                # a retry's selectOne picked another Agent: the lease moves
                self._release_lease(a)
            a.agent = agent
            if a.lease:
                pass
            elif agent not in self.leases:
                self.leases[agent] = a.id
                a.lease = True
                self._rec("agent.leased", act=a.id, agent=agent)
            else:
                q = self.queues.setdefault(agent, deque())
                q.append(a.id)
                a.status = "queued"
                self._rec("agent.queued", act=a.id, agent=agent, position=len(q))
                return
        a.status = "delivering"
        self.ready.append(("deliver", a.id, a.attempt))

    def _request(self, a: Act, cfg: Any, env: Mapping[str, Any]) -> dict[str, Any]:
        nid = a.node.id
        op = a.node.op
        req: dict[str, Any] = {}
        if a.node.op == "request_approval":
            req["assignee"] = self._eval(cfg.assignee, env, f"{op} '{nid}' assignee")
            req["summary"] = self._text(cfg.summary, env, f"{op} '{nid}' summary")
            if cfg.feedback_scope is not None:
                fs = self._eval(cfg.feedback_scope, env, f"{op} '{nid}' feedbackScope")
                if not is_scope(fs):
                    raise _Fail({"code": "runtime.input_invalid", "detail": f"{op} '{nid}' feedbackScope: not a valid scope"})
                req["feedbackScope"] = fs
            return req
        req["text"] = self._text(cfg.text, env, f"{op} '{nid}' text")
        if cfg.target is not None:
            req["target"] = self._eval(cfg.target, env, f"{op} '{nid}' target")
        else:
            sc = self._eval(cfg.scope, env, f"{op} '{nid}' scope")
            if not is_scope(sc):
                raise _Fail({"code": "runtime.input_invalid", "detail": f"{op} '{nid}' scope: not a valid scope"})
            req["scope"] = sc
        if cfg.responder is not None:
            r = self._eval(cfg.responder, env, f"{op} '{nid}' responder")
            if isinstance(r, dict) and isinstance(r.get("selectOne"), list) and r["selectOne"]:
                pool = list(r["selectOne"])
                req["responderPool"] = pool
                r = select_one(f"{self.run_id}:{a.id}:{a.attempt}", pool)
            if not is_id(r):
                raise _Fail({"code": "runtime.input_invalid", "detail": f"{op} '{nid}' responder: not a valid agent"})
            req["responder"] = r
        ws = cfg.work_scope
        if ws is not None:
            if ws.mode == "fixed":
                req["workScope"] = self._eval(ws.scope, env, f"{op} '{nid}' workScope")
            else:
                req["workScope"] = None
            rs = cfg.related_scopes
            if rs is not None and rs.form == "value":
                vals = self._eval(rs.value, env, f"{op} '{nid}' relatedScopes") or []
            else:
                vals = [self._eval(i, env, f"{op} '{nid}' relatedScopes") for i in (rs.items if rs is not None else None) or ()]
            seen: dict[str, Any] = {}
            for s in vals:
                if s is not None:
                    seen.setdefault(f"{s.get('kind')}:{s.get('scopeId')}" if isinstance(s, dict) else str(s), s)
            req["relatedScopes"] = list(seen.values())
        if cfg.work_items is not None:
            req["allowedResponders"] = self._eval(cfg.work_items.allowed_responders, env,
                                                  f"{op} '{nid}' allowedResponders")
        return req

    def _start_wait(self, a: Act, cfg: Any, env: Mapping[str, Any]) -> None:
        nid = a.node.id
        if cfg.duration is not None:
            d = self._eval(cfg.duration, env, f"wait '{nid}' duration")
            self._timer(a, "wait", self._seconds(d, f"wait '{nid}' duration"))
            a.status = "waiting"
            return
        ok = _truthy(self._eval(cfg.condition, env, f"wait '{nid}' condition"))
        if ok:
            self._complete(a, "completed", {})
            return
        a.status = "watching"
        self.watching[a.id] = a
        if cfg.timeout is not None and not any(self.timer_info[t][1] == "timeout" for t in a.timers):
            d = self._eval(cfg.timeout, env, f"wait '{nid}' timeout")
            self._timer(a, "timeout", self._seconds(d, f"wait '{nid}' timeout"))

    def _seconds(self, d: Any, where: str) -> Decimal:
        why = duration_problem(d) if isinstance(d, str) else None
        if why is not None:  # a computed duration past the language's bounds: no timer beyond year 9999
            from loopc.ir.evaluator import _show

            raise _Fail({"code": "runtime.input_invalid", "detail": f"{where}: {_show(d)} is not a duration ({why})"})
        try:
            return duration_seconds(d)
        except EvaluationError as exc:
            raise _Fail({"code": "runtime.input_invalid", "detail": f"{where}: {exc}"}) from None

    def _timer(self, a: Act, kind: str, after: Decimal) -> None:
        tid = self._next("tmr")
        due = self.now + after
        self.timer_info[tid] = [a.id, kind, a.attempt, True]
        a.timers.append(tid)
        heapq.heappush(self.timers, (due, self.counters["tmr"], tid))
        self._rec("timer.scheduled", timer=tid, act=a.id, timerKind=kind, attempt=a.attempt, due=format_instant(due))

    def _fire(self, tid: str, info: list[Any]) -> None:
        aid, kind, attempt, _ = info
        info[3] = False
        a = self.acts[aid]
        if tid in a.timers:
            a.timers.remove(tid)
        self._rec("timer.fired", timer=tid, act=aid, timerKind=kind, attempt=attempt)
        if kind == "retry":
            self._retry(a)
        elif kind == "wait":
            self._complete(a, "completed", {})
        else:
            self._complete(a, "timed_out", {})

    def _retry(self, a: Act) -> None:
        """A node retry: a new attempt under the same activation."""
        self._start_attempt(a)

    # ------------------------------------------------------------------ delivery
    def _deliver(self, aid: str, attempt: int) -> None:
        a = self.acts.get(aid)
        if a is None or a.status != "delivering" or a.attempt != attempt:
            return
        nid = a.node.id
        eff = self._transport_effect(a)
        t = 0
        while True:
            t += 1
            if t > 32 or not self.world.transport_fault(nid, t, eff):
                break
            self._rec("effect.transport_retry", effect=eff, act=a.id, attempt=a.attempt, transmission=t)
            eff = self._transport_effect(a)
        n = self.node_deliveries.get(nid, 0) + 1
        self.node_deliveries[nid] = n
        ok = self.world.deliver(nid, n, eff, self.effect_key(a))
        if not ok:
            self._rec("effect.failed", effect=eff, act=a.id, attempt=a.attempt,
                      error={"code": "delivery.failed", "detail": f"delivery {n} of '{nid}' failed"})
            self._attempt_failed(a, "delivery.failed", f"delivery of attempt {a.attempt} of '{nid}' failed",
                                 final_code="delivery.exhausted")
            return
        extra: dict[str, Any] = {}
        if a.node.op == "send_message":
            extra["messageId"] = self._next("msg")
        self._rec("effect.delivered", effect=eff, act=a.id, attempt=a.attempt, **extra)
        cfg = a.node.config
        if a.node.op == "send_message" and cfg.completion == "sent":
            out: dict[str, Any] = {}
            if cfg.start_thread:
                out = {"messageId": extra["messageId"], "threadScope": {"kind": "thread", "scopeId": self._next("thr")}}
            self._complete(a, "completed", out)
        else:
            a.status = "awaiting"

    def effect_key(self, a: Act) -> str:
        """The identity key of the current attempt's effect:
        ``<run>:<activation>:<attempt>`` (docs/conformance.md#effect-identity)."""
        return f"{self.run_id}:{a.id}:{a.attempt}"

    def _transport_effect(self, a: Act) -> str:
        """Transport retries reuse the attempt's durable effect identity."""
        assert a.effect is not None
        return a.effect

    def _attempt_failed(self, a: Act, code: str, detail: str, *, final_code: str | None) -> None:
        self._rec("attempt.failed", act=a.id, attempt=a.attempt, error={"code": code, "detail": detail})
        if a.attempt < a.node.max_attempts:
            a.status = "retry"
            self._timer(a, "retry", duration_seconds(a.node.backoff))
            return
        if final_code is not None:
            code = final_code
            detail = f"'{a.node.id}' failed at delivery on all {a.node.max_attempts} attempt(s)"
        self._complete(a, "failed", {"code": code, "detail": detail})

    def _callback_acceptable(self, a: Act) -> bool:
        """Only an awaiting, current attempt takes a result."""
        return a.status == "awaiting"

    def _release_lease(self, a: Act) -> None:
        a.lease = False
        agent = a.agent
        if agent is None or self.leases.get(agent) != a.id:
            return
        del self.leases[agent]
        self._rec("agent.released", act=a.id, agent=agent)
        q = self.queues.get(agent)
        while q:
            nxt = self.acts.get(q.popleft())
            if nxt is None or nxt.status != "queued":
                continue
            self.leases[agent] = nxt.id
            nxt.lease = True
            nxt.status = "delivering"
            self._rec("agent.leased", act=nxt.id, agent=agent)
            self.ready.append(("deliver", nxt.id, nxt.attempt))
            break

    # ------------------------------------------------------------------ cancellation
    def _cancel_where(self, pred: Callable[[tuple], bool], reason: str, *, spare: str | None = None) -> None:
        """Cancel every queued task and open activation whose lineage
        satisfies ``pred`` (queued arrivals at node ``spare`` stay queued)."""
        keep: deque[tuple[Any, ...]] = deque()
        for t in self.ready:
            if t[0] == "arrive":
                ctx = t[3]
            else:
                owner = self.acts.get(t[1])
                ctx = owner.ctx if owner is not None else ()  # a finished activation's delivery is a no-op
            if not pred(ctx) or (spare is not None and t[0] == "arrive" and t[1] == spare):
                keep.append(t)
        self.ready.clear()
        self.ready.extend(keep)
        doomed = [a for a in self.open.values() if pred(a.ctx)]
        for a in doomed:  # a released lease never passes to an activation cancelled with it
            a.status = "cancelling"
        for a in doomed:
            self._finish(a, "cancelled")
            self._rec("activation.cancelled", act=a.id, node=a.node.id, reason=reason)
        for g in self.groups.values():
            if not g.closed and pred(g.ctx):
                g.closed = True
        for lp in self.loops.values():
            if not lp.closed and pred(lp.ctx):
                lp.closed = True
        for fo in self.fanouts.values():
            if not fo.closed and pred(fo.ctx):
                for k in fo.order:
                    if fo.status[k] not in TERMINAL_ITEM:
                        self._item_record(fo, k, "cancelled", None, None, [])
                fo.in_flight = []
                fo.closed = True


#: Opcode → the handler of an activation of a node of that kind.  ``join`` and
#: ``end`` (:data:`ARRIVAL_OPS`) act on arrival in :meth:`Engine._arrive` and
#: are never activated; tests/test_kind_dispatch.py proves the two cover the
#: registry (:mod:`loopc.kinds`), so a kind without a handler fails at test time.
ACTIVATION_HANDLERS: dict[str, Callable[[Engine, Act], None]] = {
    "send_message": Engine._op_send_message,
    "set_variable": Engine._op_set_variable,
    "wait": Engine._op_wait,
    "request_approval": Engine._op_request_approval,
    "switch": Engine._op_switch,
    "fork": Engine._op_fork,
    "fan_out": Engine._op_fan_out,
    "loop": Engine._op_loop,
}
#: Opcodes handled on arrival, without an activation.
ARRIVAL_OPS = ("join", "end")


class _Fail(Exception):
    """A run-time data error: ``err`` the ``{code, detail}``; ``ctx`` the
    context it arose in when that is not the current task's."""

    def __init__(self, err: Mapping[str, Any], ctx: tuple | None = None) -> None:
        super().__init__(err.get("detail"))
        self.err = dict(err)
        self.ctx = ctx


class _Budget(Exception):
    """The Run is over its :class:`Budget` (the message is the detail)."""


#: Version of the :meth:`Engine.checkpoint` shape.
CHECKPOINT_VERSION = 1


def _ctx_out(ctx: tuple) -> list[list[Any]]:
    return [list(f) for f in ctx]


def _ctx_in(ctx: list[list[Any]]) -> tuple:
    return tuple(tuple(f) for f in ctx)


def _task_out(t: tuple[Any, ...]) -> list[Any]:
    if t[0] == "arrive":
        return ["arrive", t[1], t[2], _ctx_out(t[3]), *t[4:]]
    return list(t)


def _task_in(t: list[Any]) -> tuple[Any, ...]:
    if t[0] == "arrive":
        return ("arrive", t[1], t[2], _ctx_in(t[3]), *t[4:])
    return tuple(t)


def _truthy(v: Any) -> bool:
    return v is True


def _item_of(a: Act) -> str | None:
    for f in reversed(a.ctx):
        if f[0] == "fan_out":
            return f[3]
    return None


def _normalize_work_items(raw: Any, allowed: Any) -> tuple[list[dict[str, Any]], str | None]:
    """Validate a WorkItem batch as one closed DAG (docs/language.md#fan-out); returns
    ``(items, None)`` or ``([], reason)``."""
    if not isinstance(raw, list):
        return [], "workItems must be a list"
    if len(raw) > MAX_WORK_ITEMS:
        return [], f"at most {MAX_WORK_ITEMS} WorkItems"
    out: list[dict[str, Any]] = []
    keys: dict[str, int] = {}
    allowed_list = list(allowed) if isinstance(allowed, list) else None
    for i, it in enumerate(raw):
        w = f"workItems[{i}]"
        if not isinstance(it, dict):
            return [], f"{w} must be an object"
        for k in it:
            if k not in WORK_ITEM_KEYS:
                return [], f"{w} has no field '{k}'"
        key = it.get("key")
        if not isinstance(key, str) or not key or len(key) > 64:
            return [], f"{w}.key must be a non-empty string of at most 64 characters"
        if key in keys:
            return [], f"{w}.key '{key}' is a duplicate"
        keys[key] = i
        inst = it.get("instruction")
        if not isinstance(inst, str):
            return [], f"{w}.instruction must be a string"
        deps = it.get("dependsOn", [])
        if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
            return [], f"{w}.dependsOn must be a list of keys"
        resp = it.get("responder")
        pool = resp.get("selectOne") if isinstance(resp, dict) else [resp]
        if not isinstance(pool, list):
            pool = []
        if not (is_id(resp) or (isinstance(resp, dict) and list(resp) == ["selectOne"] and isinstance(pool, list)
                                and pool and all(is_id(x) for x in pool))):
            return [], f"{w}.responder must be an agent or {{selectOne: [agents]}}"
        if allowed_list is not None and any(x not in allowed_list for x in pool):
            return [], f"{w}.responder is not one of the allowed responders"
        ws = it.get("workScope")
        if ws is not None and not is_scope(ws):
            return [], f"{w}.workScope must be a scope"
        rel = it.get("relatedScopes", [])
        if not isinstance(rel, list) or len(rel) > 64 or not all(is_scope(s) for s in rel):
            return [], f"{w}.relatedScopes must be a list of at most 64 scopes"
        out.append({"key": key, "dependsOn": list(dict.fromkeys(deps)), "workScope": ws,
                    "relatedScopes": list(rel), "responder": resp, "instruction": inst})
    for i, it in enumerate(out):
        for d in it["dependsOn"]:
            if d not in keys:
                return [], f"workItems[{i}].dependsOn names an unknown key '{d}'"
            if d == it["key"]:
                return [], f"workItems[{i}] depends on itself"
    # acyclic: Kahn over source order
    indeg = {it["key"]: len(it["dependsOn"]) for it in out}
    users: dict[str, list[str]] = {it["key"]: [] for it in out}
    for it in out:
        for d in it["dependsOn"]:
            users[d].append(it["key"])
    todo = [k for k in indeg if indeg[k] == 0]
    seen = 0
    while todo:
        k = todo.pop()
        seen += 1
        for u in users[k]:
            indeg[u] -= 1
            if indeg[u] == 0:
                todo.append(u)
    if seen != len(out):
        return [], "workItems dependencies form a cycle"
    return out, None


def _first_difference(want: list[dict[str, Any]], got: list[dict[str, Any]], step: int) -> str:
    for i in range(max(len(want), len(got))):
        w = want[i] if i < len(want) else None
        g = got[i] if i < len(got) else None
        if w != g:
            return f"step {step}, record {i + 1}: committed {w!r}, re-executed {g!r}"
    return f"step {step} differs"
