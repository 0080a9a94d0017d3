"""Lowering: checked model → canonical artifact (seed 004 §5 pass 13; issue 4).

Input is a clean :class:`~loopc.compiler.driver.CheckResult` (plan, scope
map, type info, analysis); output is the artifact as plain JSON data (see
docs/ir.md for every field).  Principles:

* explicit, not a copy of the source: normalized typed contracts; nodes with
  an opcode, frozen config (retry default ``{maxAttempts: 1, backoff:
  PT1S}``, ``fanOut.maxConcurrency`` default 4) and a port table whose every
  source port names its outgoing edge or its lowered implicit failure route;
  edges with explicit bindings (same-name pass-through expanded);
* expressions and templates as typed instruction trees (:mod:`loopc.ir.instr`);
* scope metadata (each node's and edge's scope stack, one declaration per
  fork / all_match switch / fan-out / loop) and Run-state read/write effects;
* nodes, edges and scopes sorted by id; every other list in authored order;
  durations, datetimes and all other strings verbatim;
* a feature of artifact version N appears only when the plan uses it, so a
  plan keeps the bytes it had under the oldest envelope that can hold it.

The envelope (``artifactVersion``, ``compilerVersion``, ``digest``) is filled
by :func:`loopc.ir.api.compile_checked`.
"""
from __future__ import annotations

from typing import Any, Mapping

from loopc.compiler import ports as P
from loopc.compiler.model import (
    MISSING, RETRY_CAPABLE, End, FanOut, FieldSchema, Fork, Join, Loop, Node, Plan, RequestApproval,
    SendMessage, SetVariable, Switch, Wait,
)
from loopc.compiler.types import type_of_field
from loopc.ir.exprs import lower_typed
from loopc.ir.instr import LoweringError, normalize_json, ref_instr, type_desc

__all__ = ["LoweringError", "lower_plan", "DEFAULT_RETRY", "DEFAULT_MAX_CONCURRENCY"]

DEFAULT_RETRY = {"maxAttempts": 1, "backoff": "PT1S"}
DEFAULT_MAX_CONCURRENCY = 4


# ---------------------------------------------------------------------------
# Contracts
# ---------------------------------------------------------------------------

def lower_field(fs: FieldSchema) -> dict[str, Any]:
    """FieldSchema → ``{type, required, default?, values?, items?, label?,
    description?}``; ``required`` is always written.  Iterative over
    ``items`` chains."""
    chain: list[FieldSchema] = []
    cur: FieldSchema | None = fs
    while cur is not None:
        chain.append(cur)
        cur = cur.items if cur.type == "array" else None
    out: dict[str, Any] | None = None
    for f in reversed(chain):
        d: dict[str, Any] = {"type": f.type, "required": bool(f.required)}
        if f.default is not MISSING:
            d["default"] = normalize_json(f.default)
        if f.type == "enum":
            d["values"] = list(f.values or ())
        if f.type == "array":
            d["items"] = out if out is not None else {"type": "object", "required": False}
        if f.label is not None:
            d["label"] = f.label
        if f.description is not None:
            d["description"] = f.description
        out = d
    assert out is not None
    return out


def lower_contract(c: Mapping[str, FieldSchema] | None) -> dict[str, Any]:
    """Contract (field → FieldSchema) → JSON object (keys sorted on output)."""
    return {k: lower_field(v) for k, v in (c or {}).items()}


# ---------------------------------------------------------------------------
# The lowering
# ---------------------------------------------------------------------------

class _Lowerer:
    def __init__(self, check: Any) -> None:
        self.plan: Plan = check.plan
        self.scopes = check.scopes
        self.types = check.types
        self.analysis = check.analysis
        self.contract_cache: dict[int, tuple[Any, dict[str, Any]]] = {}
        self.port_cache: dict[tuple[Any, ...], tuple[Any, dict[str, Any]]] = {}
        self.edges_from: dict[tuple[str, str], str] = {}
        self.edges_to: dict[tuple[str, str], list[str]] = {}

    # -- helpers ---------------------------------------------------------------
    def contract(self, c: Mapping[str, FieldSchema] | None) -> dict[str, Any]:
        """Lowered contract; equal model contracts share one lowered object
        (copies are identical, so sharing is invisible in the bytes)."""
        if not c:
            return {}
        key = id(c)
        got = self.contract_cache.get(key)
        if got is None:
            # keep ``c`` alive so its id cannot be reused by another object
            got = self.contract_cache[key] = (c, lower_contract(c))
        return got[1]

    def value(self, obj: Any) -> list[Any]:
        typed = self.types.typed(obj) if self.types is not None else None
        if typed is None:
            raise LoweringError(f"no typed form for {type(obj).__name__} at "
                                f"{getattr(getattr(obj, 'src', None), 'pointer', '?')}")
        return lower_typed(typed)

    def scope_stack(self, element_id: str, *, edge: bool = False) -> list[dict[str, Any]]:
        """The analyzer's proven scope stack of a node or edge, outermost first."""
        stacks = self.analysis.edge_stacks if edge else self.analysis.node_stacks
        if element_id not in stacks:
            raise LoweringError(f"the analyzer has no scope stack for {'edge' if edge else 'node'} "
                                f"'{element_id}'")
        out = []
        for s in stacks[element_id]:
            d: dict[str, Any] = {"kind": s.kind, "owner": s.owner}
            if s.kind in ("fork", "all_match"):
                d["branch"] = s.branch
            out.append(d)
        return out

    @staticmethod
    def sink(sink: Any) -> dict[str, Any]:
        """Analyzer :class:`~loopc.analyzer.facts.Sink` → disposition JSON
        (syntax sheet §6; seed 004 §4.7)."""
        kind = sink.kind
        if kind == "fail_plan":
            return {"action": "fail_plan"}
        if kind == "fail_branch":
            return {"action": "fail_branch", "owner": sink.owner, "branch": sink.branch, "join": sink.join}
        if kind == "item_failed":
            return {"action": "fail_item", "owner": sink.owner, "join": sink.join}
        if kind == "never":
            return {"action": "never"}
        raise LoweringError(f"unknown failure sink '{kind}'")

    # -- plan ----------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        plan = self.plan
        for e in plan.edges.values():
            self.edges_from.setdefault((e.from_node, e.from_port), e.id)
            self.edges_to.setdefault((e.to_node, e.to_port), []).append(e.id)
        entry_bind = {b.field: lower_typed(b.value) for b in self.types.entry_bindings}
        nodes = [self.node(plan.nodes[k]) for k in sorted(plan.nodes)]
        edges = [self.edge(plan.edges[k]) for k in sorted(plan.edges)]
        return {
            "artifactVersion": None,
            "compilerVersion": None,
            "sourceVersion": "loop.plan/v1",
            "digest": None,
            "plan": {
                "input": self.contract(plan.input),
                "output": self.contract(plan.output),
                "state": self.contract(plan.state),
                "entry": {"node": plan.entry, "bind": entry_bind},
                "nodes": nodes,
                "edges": edges,
                "scopes": self.scope_decls(),
            },
        }

    def scope_decls(self) -> list[dict[str, Any]]:
        """One declaration per fork / all_match switch / fan-out / loop, from
        the analyzer's scope facts, sorted by owner id."""
        out = []
        facts = self.analysis.scopes
        for owner in sorted(facts):
            f = facts[owner]
            d: dict[str, Any] = {"kind": f.kind, "owner": owner}
            if f.kind in ("fork", "all_match"):
                d["branches"] = list(f.branches)
            if f.kind != "loop":
                d["join"] = f.join
            out.append(d)
        return out

    # -- nodes -----------------------------------------------------------------
    def node(self, n: Node) -> dict[str, Any]:
        config = self.config(n)
        eff = self.analysis.effects_of(n.id)
        d: dict[str, Any] = {
            "id": n.id,
            "op": n.type,
            "input": self.contract(P.effective_input(n, self.plan.output)),
            "ports": self.ports(n),
            "scope": self.scope_stack(n.id),
            "effects": {"reads": sorted(eff.reads), "writes": sorted(eff.writes),
                        "watches": sorted(eff.wait_reads)},
            "config": config,
        }
        if n.type in RETRY_CAPABLE:
            r = n.retry
            d["retry"] = ({"maxAttempts": int(r.max_attempts), "backoff": r.backoff}
                          if r is not None else dict(DEFAULT_RETRY))
        if n.label is not None:
            d["label"] = n.label
        if n.description is not None:
            d["description"] = n.description
        return d

    def ports(self, n: Node) -> dict[str, Any]:
        source = []
        for port in P.source_ports(n):
            out = P.output_contract(n, port)
            entry: dict[str, Any] = {"name": port, "output": None if out is None else self.contract_fresh(out)}
            eid = self.edges_from.get((n.id, port))
            if eid is not None:
                entry["edge"] = eid
            elif port in P.OPTIONAL_PORTS:
                sink = self.analysis.failure_routes.get((n.id, port))
                if sink is None:
                    raise LoweringError(f"the analyzer lowered no failure route for port '{port}' of '{n.id}'")
                entry["implicit"] = {"status": port, **self.sink(sink)}
            else:
                raise LoweringError(f"port '{port}' of node '{n.id}' is not routed")
            source.append(entry)
        target = [{"name": port, "edges": sorted(self.edges_to.get((n.id, port), ()))}
                  for port in P.target_ports(n)]
        return {"source": source, "target": target}

    def contract_fresh(self, c: Mapping[str, FieldSchema]) -> dict[str, Any]:
        """Port output contracts are often built fresh by :mod:`ports`; cache
        them by the identity of their FieldSchemas instead."""
        if not c:
            return {}
        key = tuple(id(v) for v in c.values()) + tuple(c)
        got = self.port_cache.get(key)
        if got is None:
            got = self.port_cache[key] = (c, lower_contract(c))
        return got[1]

    def config(self, n: Node) -> dict[str, Any]:
        """Lowered config of node ``n`` (docs/ir.md §Node configs)."""
        c = n.config
        v = self.value

        def put(d: dict[str, Any], key: str, obj: Any) -> None:
            d[key] = v(obj)

        d: dict[str, Any] = {}
        if isinstance(c, SendMessage):
            d["completion"] = c.completion
            put(d, "text", c.text)
            if c.target is not None:
                put(d, "target", c.target)
            if c.scope is not None:
                put(d, "scope", c.scope)
            if c.start_thread and c.completion == "sent":
                d["startThread"] = True
            if c.completion == "callback":
                d["callbackOutput"] = self.contract(c.callback_output)
                if c.responder is not None:
                    put(d, "responder", c.responder)
                if c.work_scope is not MISSING:
                    if c.work_scope is None:
                        d["workScope"] = {"mode": "agent"}
                    else:
                        ws: dict[str, Any] = {"mode": "fixed"}
                        put(ws, "scope", c.work_scope)
                        d["workScope"] = ws
                    rs = c.related_scopes
                    if rs is None:
                        d["relatedScopes"] = {"form": "list", "items": []}
                    elif isinstance(rs, (tuple, list)):
                        d["relatedScopes"] = {"form": "list", "items": [v(x) for x in rs]}
                    else:
                        d["relatedScopes"] = {"form": "value", "value": v(rs)}
                if c.has_work_items and c.allowed_responders is not None:
                    wi: dict[str, Any] = {}
                    put(wi, "allowedResponders", c.allowed_responders)
                    d["workItems"] = wi
        elif isinstance(c, SetVariable):
            d["assign"] = {k: v(x) for k, x in c.assign.items()}
        elif isinstance(c, Wait):
            if c.condition is not None:
                put(d, "condition", c.condition)
            if c.duration is not None:
                put(d, "duration", c.duration)
            if c.timeout is not None:
                put(d, "timeout", c.timeout)
        elif isinstance(c, RequestApproval):
            put(d, "assignee", c.assignee)
            put(d, "summary", c.summary)
            if c.feedback_scope is not None:
                put(d, "feedbackScope", c.feedback_scope)
        elif isinstance(c, Switch):
            cases = [{"port": case.port, "when": v(case.when)} for case in c.cases]
            d.update(mode=c.mode, cases=cases, default=c.default)
        elif isinstance(c, Fork):
            d["branches"] = list(c.branches)
        elif isinstance(c, Join):
            d["mode"] = c.mode
            if c.fork_id is not None:
                d["forkId"] = c.fork_id
            if c.fan_out_id is not None:
                d["fanOutId"] = c.fan_out_id
            d["result"] = self.contract(c.result)
            d["merge"] = {k: v(x) for k, x in c.merge.items()}
        elif isinstance(c, FanOut):
            put(d, "items", c.items)
            d["maxConcurrency"] = int(c.max_concurrency) if c.max_concurrency is not None else DEFAULT_MAX_CONCURRENCY
            d["failureMode"] = c.failure_mode
        elif isinstance(c, Loop):
            d.update(mode=c.mode, iterations=int(c.iterations), state=self.contract(c.state))
            d["init"] = {k: v(x) for k, x in c.init.items()}
        elif isinstance(c, End):
            d["status"] = c.status
            if c.status == "failed":
                d["code"] = c.code
                if c.detail is not None:
                    put(d, "detail", c.detail)
        else:
            raise LoweringError(f"unknown node config {type(c).__name__}")
        return d

    # -- edges -----------------------------------------------------------------
    def edge(self, e: Any) -> dict[str, Any]:
        bindings = self.types.edge_bindings.get(e.id) if self.types is not None else None
        if bindings is None:
            raise LoweringError(f"no bindings for edge '{e.id}'")
        bind = {b.field: lower_typed(b.value) for b in bindings}
        eff = self.analysis.edge_effects.get(e.id)
        d: dict[str, Any] = {
            "id": e.id,
            "from": {"node": e.from_node, "port": e.from_port},
            "to": {"node": e.to_node, "port": e.to_port},
            "bind": bind,
            "scope": self.scope_stack(e.id, edge=True),
            "effects": {"reads": sorted(eff.reads) if eff is not None else []},
        }
        sink = self.analysis.end_routes.get(e.id)
        if sink is not None:
            d["disposition"] = self.sink(sink)
        if e.label is not None:
            d["label"] = e.label
        return d


def lower_plan(check: Any) -> dict[str, Any]:
    """Lower a clean check result to the artifact JSON data (envelope fields
    ``artifactVersion``/``compilerVersion``/``digest`` left ``None``).

    Raises :class:`~loopc.ir.instr.LoweringError` when information lowering
    needs is missing (a pass did not run, an expression was not typed); the
    caller turns it into LP5010.  Seed 004 §5 pass 13.
    """
    if check.plan is None or check.types is None or check.analysis is None:
        raise LoweringError("the plan was not fully checked (type information or analysis missing)")
    return _Lowerer(check).run()


def entry_ref(field: str, fs: FieldSchema) -> list[Any]:
    """``run.input.<field>`` reference instruction (used by tests)."""
    return ref_instr("run.input", (field,), type_desc(type_of_field(fs)))
