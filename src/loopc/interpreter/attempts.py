"""Attempts of the reference engine's effectful and timed nodes
(docs/language.md#run-semantics, docs/conformance.md#effect-identity):
state writes and the waits they wake, an attempt's request and effect
reservation, Agent leases and queues, delivery with transport retries,
node retries and timers.
"""
from __future__ import annotations

import heapq
from collections import deque
from decimal import Decimal
from typing import Any, Mapping

from loopc.interpreter.choice import select_one
from loopc.interpreter.clock import duration_seconds, format_instant
from loopc.interpreter.runstate import Act, _Fail, _truthy
from loopc.interpreter.scopes import ScopeLayer
from loopc.interpreter.values import check_value, is_id, is_scope
from loopc.ir.evaluator import EvaluationError, evaluate
from loopc.kinds import tables as kind_tables
from loopc.kinds.base import attr_name
from loopc.kinds.spec import Ref
from loopc.limits import duration_problem

#: opcode → its effect class; an external one (message, approval) is the journal's effectKind
_EFFECT_CLASS = {op: k.effect_class for op, k in kind_tables().kinds.items()}

#: a declared field ``type`` → (the run-time test its value must pass, what a failure says)
_REQUEST_CHECKS = {"scope": (is_scope, "not a valid scope")}


def declared_request(op: str) -> tuple[tuple[str, str, str, str | None], ...] | None:
    """How an effect request of opcode ``op`` is built from its config when
    the kind declares no custom field (docs/conformance.md#detail-and-reason-formats): one
    ``(wire name, config attribute, how, declared type)`` per wire field, in
    declaration order — ``how`` is ``"text"`` (an instruction rendered as
    text: ``render=True``), ``"value"`` (an instruction evaluated) or
    ``"literal"`` (a literal wire value, carried as it is).  Every declared
    field reaches the request, so a new one is never dropped.  ``None`` for
    a kind with custom fields (``send_message``: its request has cross-field
    rules of its own)."""
    kind = kind_tables().kinds[op]
    if any(f.custom for f in kind.source.values()):
        return None
    out = []
    for wire, f in kind.wire.fields.items():
        src = kind.source.get(wire)
        if not (isinstance(f.spec, Ref) and f.spec.name == "Instr"):
            how = "literal"
        else:
            how = "text" if src is not None and src.render else "value"
        out.append((wire, attr_name(wire), how, src.type if src else None))
    return tuple(out)


#: opcode → its derived request fields (:func:`declared_request`), for the external kinds that have one
_DECLARED_REQUESTS = {
    op: fields
    for op, k in kind_tables().kinds.items()
    if k.effect_class in ("message", "approval") and (fields := declared_request(op)) is not None
}


class AttemptLayer(ScopeLayer):
    """Attempts, effects, deliveries, leases and timers over :class:`ScopeLayer`."""

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
        declared = _DECLARED_REQUESTS.get(op)
        if declared is not None:
            for wire, attr, how, typ in declared:
                instr = getattr(cfg, attr)
                if instr is None:
                    continue
                where = f"{op} '{nid}' {wire}"
                if how == "literal":
                    req[wire] = instr
                    continue
                v = self._text(instr, env, where) if how == "text" else self._eval(instr, env, where)
                check = _REQUEST_CHECKS.get(typ or "")
                if check is not None and not check[0](v):
                    raise _Fail({"code": "runtime.input_invalid", "detail": f"{where}: {check[1]}"})
                req[wire] = v
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

