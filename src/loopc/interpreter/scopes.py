"""Scopes of the reference engine (docs/language.md#run-semantics): fork and
all_match groups and their joins, fan-outs of WorkItems, loops, End nodes,
failure routes (implicit and dispositions) and cancellation of what a
closed scope or a failed Run leaves open.
"""
from __future__ import annotations

from collections import deque
from typing import Any, Callable, Mapping

from loopc.interpreter.activations import ActivationLayer
from loopc.interpreter.program import ProgramNode
from loopc.interpreter.runstate import (TERMINAL_ITEM, Act, Frame, _Fail, _FanOut, _Group, _Loop,
                                        _normalize_work_items, _truthy)
from loopc.interpreter.values import check_contract


class ScopeLayer(ActivationLayer):
    """Groups, fan-outs, loops, End and failure routing over :class:`ActivationLayer`."""

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
