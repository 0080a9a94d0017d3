"""Activations of the reference engine (docs/language.md#identities-and-lineage):
starting and finishing one, completing it through a port, evaluating the
bindings of the edge it leaves by (the expression environment of a context)
and releasing an Agent lease it holds.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from loopc.interpreter.journal import RunJournal
from loopc.interpreter.program import ProgramNode
from loopc.interpreter.runstate import Act, _Budget, _Fail, _item_of
from loopc.interpreter.values import apply_defaults, check_contract
from loopc.ir.evaluator import EvaluationError, evaluate, render
from loopc.kinds import tables as kind_tables

#: kinds that accept ``retry`` (:attr:`loopc.kinds.Kind.retry`)
_RETRY_CAPABLE = kind_tables().retry_capable


class ActivationLayer(RunJournal):
    """Activation lifecycle and evaluation over :class:`RunJournal`."""

    if TYPE_CHECKING:  # failure routes (:class:`loopc.interpreter.scopes.ScopeLayer`)
        def _route(self, implicit: Any, ctx: tuple, err: Mapping[str, Any]) -> None: ...

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

