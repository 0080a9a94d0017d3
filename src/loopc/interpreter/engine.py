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

import heapq
from decimal import Decimal
from typing import Any, Callable, Mapping

from loopc.interpreter.attempts import AttemptLayer
from loopc.interpreter.clock import format_instant
from loopc.interpreter.program import Program
from loopc.interpreter.runstate import (CHECKPOINT_VERSION, DEFAULT_BUDGET, MAX_WORK_ITEMS, TERMINAL_ITEM, Act,
                                        Budget, Frame, JournalDivergence, NoWorld, World, _Budget, _Fail,
                                        _item_of, _normalize_work_items, run_identity, scenario_run_id)
from loopc.interpreter.values import apply_defaults, contract_problems, is_scope
from loopc.kinds import tables as kind_tables
from loopc.kinds.base import attr_name

__all__ = ["Engine", "JournalDivergence", "World", "NoWorld", "Act", "TERMINAL_ITEM", "Budget", "DEFAULT_BUDGET",
           "CHECKPOINT_VERSION", "MAX_WORK_ITEMS", "Frame", "run_identity", "scenario_run_id"]

#: the approval config attribute whose presence puts ``comment`` in the
#: decision output (:attr:`loopc.kinds.Kind.conditional_outputs`)
_COMMENT_WHEN = attr_name(kind_tables().conditional_outputs["request_approval"]["comment"])


class Engine(AttemptLayer):
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

    # ------------------------------------------------------------------ arrivals
    def _arrive(self, nid: str, port: str, ctx: tuple, val: dict[str, Any], edge: str | None = None) -> None:
        node = self.p.nodes[nid]
        op = node.op
        arrival = ARRIVAL_HANDLERS.get(op)
        if arrival is not None:
            arrival(self, node, ctx, val, edge)
        elif port in _BACK_PORTS:  # a loop's continue/break: its body returns to it
            self._loop_return(node, port, ctx, val)
        else:
            a = self._activate(node, ctx, val)
            ACTIVATION_HANDLERS[op](self, a)



def _arrive_join(eng: Engine, node: Any, ctx: tuple, val: dict[str, Any], edge: str | None) -> None:
    eng._join_arrival(node, ctx, val)


def _arrive_end(eng: Engine, node: Any, ctx: tuple, val: dict[str, Any], edge: str | None) -> None:
    eng._end(node, ctx, val, edge)


#: Opcodes that act on arrival, without an activation: their handler.
ARRIVAL_HANDLERS: dict[str, Callable[[Engine, Any, tuple, dict[str, Any], str | None], None]] = {
    "join": _arrive_join,
    "end": _arrive_end,
}
ARRIVAL_OPS = tuple(ARRIVAL_HANDLERS)
#: Target ports through which a scope's body returns to its owner (Kind.back_ports).
_BACK_PORTS = kind_tables().back_ports


def _pass(eng: Engine, a: Act) -> None:
    """The generic handler of a kind of behaviour ``pass``
    (:data:`loopc.kinds.base.BEHAVIOURS`): complete at once on its one
    fixed source port with an empty output."""
    eng._complete(a, kind_tables().kinds[a.node.op].ports.fixed[0], {})


#: behaviour (:attr:`loopc.kinds.Kind.behaviour`) -> its generic activation handler.
BEHAVIOUR_HANDLERS: dict[str, Callable[[Engine, Act], None]] = {"pass": _pass}


def _activation_handlers() -> dict[str, Callable[[Engine, Act], None]]:
    """Every other registered kind's handler: the ``_op_<kind>`` method of
    the engine layer it belongs to, else the generic handler of its declared
    behaviour (:data:`BEHAVIOUR_HANDLERS`; docs/architecture.md#add-a-node-kind),
    looked up once here at import, so a kind with neither fails at once
    (``ImportError`` naming it), not when a Run first reaches it."""
    table: dict[str, Callable[[Engine, Act], None]] = {}
    missing = []
    for op, k in kind_tables().kinds.items():
        if op in ARRIVAL_HANDLERS:
            continue
        h = getattr(Engine, "_op_" + op, None)
        if h is None and k.behaviour is not None:
            h = BEHAVIOUR_HANDLERS.get(k.behaviour)
        if h is None:
            missing.append(op)
        else:
            table[op] = h
    if missing:
        raise ImportError(f"node kind(s) {missing} have no interpreter handler: define Engine._op_<kind> "
                          "on its engine layer or declare the kind's behaviour (docs/architecture.md#add-a-node-kind)")
    return table


#: opcode -> its activation handler, for every registered kind that does not
#: act on arrival (tests/test_kind_dispatch.py proves the two tables cover the registry).
ACTIVATION_HANDLERS: dict[str, Callable[[Engine, Act], None]] = _activation_handlers()
