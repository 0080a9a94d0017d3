"""Lowering: checked model → canonical artifact (pass 13, docs/ir.md; issue 4).

Input is a clean :class:`~loopc.pipeline.CheckResult` (plan, the scope
model, type info, analysis); output is the typed IR model
(:class:`loopc.ir.model.Plan`, the same classes :func:`loopc.ir.decode`
returns; :func:`loopc.ir.model.encode` is the one encoder; every field in
docs/ir.md).  Principles:

* explicit, not a copy of the source: normalized typed contracts; nodes with
  an opcode, frozen config (retry default ``{maxAttempts: 1, backoff:
  PT1S}``, ``fanOut.maxConcurrency`` default 4) and a port table whose every
  source port names its outgoing edge or its lowered implicit failure route;
  edges with explicit bindings (same-name pass-through expanded);
* expressions and templates as typed instruction trees (:mod:`loopc.ir.exprs`);
* scope metadata (each node's and edge's scope stack, one declaration per
  fork / all_match switch / fan-out / loop), read from the check's one scope
  model (:class:`~loopc.compiler.scopemap.ScopeMap`, proven by the analyzer
  on a plan without errors), and Run-state read/write effects;
* nodes, edges and scopes sorted by id; every other list in authored order;
  durations, datetimes and all other strings verbatim;
* a feature of artifact version N appears only when the plan uses it, so a
  plan keeps the bytes it had under the oldest envelope that can hold it.

The envelope (version, digest) is added by
:func:`loopc.pipeline.compile_checked`.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from loopc.compiler import ports as P
from loopc.compiler.model import (
    MISSING, RETRY_CAPABLE, End, FieldSchema, Fork, Join, Loop, Node, Plan, SendMessage, SetVariable, Switch,
)
from loopc.ir.exprs import lower_typed
from loopc.ir.instr import LoweringError, normalize_json
from loopc.ir.model import (
    CONFIG_CLASSES, NO_DEFAULT, Disposition, Edge, EdgeEffects, Entry, Instr, NodeEffects, RelatedScopes,
    Retry, ScopeDecl, ScopeRef, SourcePort, SwitchCase, TargetPort, WorkItems, WorkScope,
)
from loopc.ir.model import FieldSchema as IRField
from loopc.ir.model import Node as IRNode
from loopc.ir.model import Plan as IRPlan
from loopc.kinds import KINDS
from loopc.kinds import fan_out as _fan_out

__all__ = ["LoweringError", "lower_plan", "DEFAULT_RETRY", "DEFAULT_MAX_CONCURRENCY"]

DEFAULT_RETRY = {"maxAttempts": 1, "backoff": "PT1S"}
_DEFAULT_RETRY = Retry(1, "PT1S")
_NO_EDGE_EFFECTS = EdgeEffects()  # shared: most edges read no Run state
_NO_NODE_EFFECTS = NodeEffects()  # shared: most nodes neither read, write nor watch Run state
DEFAULT_MAX_CONCURRENCY = _fan_out.DEFAULT_MAX_CONCURRENCY  # declared by the kind


# ---------------------------------------------------------------------------
# Contracts
# ---------------------------------------------------------------------------

def lower_field(fs: FieldSchema) -> IRField:
    """Checked FieldSchema → IR :class:`~loopc.ir.model.FieldSchema`
    (``required`` always set; an array without ``items`` gets an optional
    ``object`` element).  Iterative over ``items`` chains."""
    chain: list[FieldSchema] = []
    cur: FieldSchema | None = fs
    while cur is not None:
        chain.append(cur)
        cur = cur.items if cur.type == "array" else None
    out: IRField | None = None
    for f in reversed(chain):
        items = None
        if f.type == "array":
            items = out if out is not None else IRField("object", False)
        out = IRField(
            f.type, bool(f.required),
            normalize_json(f.default) if f.default is not MISSING else NO_DEFAULT,
            tuple(f.values or ()) if f.type == "enum" else None, items, f.label, f.description)
    assert out is not None
    return out


def lower_contract(c: Mapping[str, FieldSchema] | None) -> dict[str, IRField]:
    """Contract (field → FieldSchema) → ``{name: FieldSchema}`` in sorted name order."""
    c = c or {}
    return {k: lower_field(c[k]) for k in sorted(c)}


# ---------------------------------------------------------------------------
# The lowering
# ---------------------------------------------------------------------------

class _Lowerer:
    def __init__(self, check: Any) -> None:
        self.plan: Plan = check.plan
        self.scopes = check.scopes
        self.types = check.types
        self.analysis = check.analysis
        self.contract_cache: dict[int, tuple[Any, dict[str, IRField]]] = {}
        self.port_cache: dict[tuple[Any, ...], tuple[Any, dict[str, IRField]]] = {}
        self.edges_from: dict[tuple[str, str], str] = {}
        self.edges_to: dict[tuple[str, str], list[str]] = {}
        self.leaves: dict[Any, Instr] = {}  # equal leaf instructions shared (lower_typed)
        self.stacks: dict[tuple[Any, ...], tuple[ScopeRef, ...]] = {}
        self.stack_of: dict[int, tuple[Any, tuple[ScopeRef, ...]]] = {}

    # -- helpers ---------------------------------------------------------------
    def contract(self, c: Mapping[str, FieldSchema] | None) -> dict[str, IRField]:
        """Lowered contract; equal model contracts share one lowered object
        (the model is immutable, so sharing is invisible)."""
        if not c:
            return {}
        key = id(c)
        got = self.contract_cache.get(key)
        if got is None:
            # keep ``c`` alive so its id cannot be reused by another object
            got = self.contract_cache[key] = (c, lower_contract(c))
        return got[1]

    def value(self, obj: Any) -> Instr:
        typed = self.types.typed(obj) if self.types is not None else None
        if typed is None:
            raise LoweringError(f"no typed form for {type(obj).__name__} at "
                                f"{getattr(getattr(obj, 'src', None), 'pointer', '?')}")
        return lower_typed(typed, self.leaves)

    def opt(self, obj: Any) -> Instr | None:
        return None if obj is None else self.value(obj)

    def scope_stack(self, element_id: str, *, edge: bool = False) -> tuple[ScopeRef, ...]:
        """The scope stack of a node or edge from the scope model, outermost first."""
        scopes = self.scopes
        stacks = (scopes.edge_scopes if edge else scopes.node_scopes) if scopes is not None else {}
        if element_id not in stacks:
            raise LoweringError(f"the scope map has no scope stack for {'edge' if edge else 'node'} "
                                f"'{element_id}'")
        frames = stacks[element_id]
        seen = self.stack_of.get(id(frames))  # the scope map shares its stacks
        if seen is not None:
            return seen[1]
        key = tuple((s.kind, s.owner, s.branch if s.kind in ("fork", "all_match") else None) for s in frames)
        got = self.stacks.get(key)
        if got is None:  # equal stacks are one shared tuple (frozen, so sharing is invisible)
            got = self.stacks[key] = tuple(ScopeRef(*k) for k in key)
        self.stack_of[id(frames)] = (frames, got)  # ``frames`` kept alive: its id is not reused
        return got

    @staticmethod
    def sink(sink: Any, status: str | None = None) -> Disposition:
        """Analyzer :class:`~loopc.analyzer.facts.Sink` → :class:`Disposition`
        (docs/reference.md#failure-routes)."""
        kind = sink.kind
        if kind == "fail_plan":
            return Disposition("fail_plan", status=status)
        if kind == "fail_branch":
            return Disposition("fail_branch", sink.owner, sink.branch, sink.join, status)
        if kind == "item_failed":
            return Disposition("fail_item", sink.owner, None, sink.join, status)
        if kind == "never":
            return Disposition("never", status=status)
        raise LoweringError(f"unknown failure sink '{kind}'")

    # -- plan ----------------------------------------------------------------
    def run(self) -> IRPlan:
        plan = self.plan
        for e in plan.edges.values():
            self.edges_from.setdefault((e.from_node, e.from_port), e.id)
            self.edges_to.setdefault((e.to_node, e.to_port), []).append(e.id)
        entry_bind = {b.field: lower_typed(b.value, self.leaves) for b in self.types.entry_bindings}
        nodes = tuple(self.node(plan.nodes[k]) for k in sorted(plan.nodes))
        edges = tuple(self.edge(plan.edges[k]) for k in sorted(plan.edges))
        return IRPlan(
            self.contract(plan.input), self.contract(plan.output), self.contract(plan.state),
            Entry(plan.entry, {k: entry_bind[k] for k in sorted(entry_bind)}), nodes, edges, self.scope_decls())

    def scope_decls(self) -> tuple[ScopeDecl, ...]:
        """One declaration per fork / all_match switch / fan-out / loop, from
        the scope model's owners, sorted by owner id."""
        owners = self.scopes.owners if self.scopes is not None else {}
        out = []
        for owner in sorted(owners):
            f = owners[owner]
            out.append(ScopeDecl(f.kind, owner, f.branches if f.kind in ("fork", "all_match") else None,
                                 f.closer if f.kind != "loop" else None))
        return tuple(out)

    # -- nodes -----------------------------------------------------------------
    def node(self, n: Node) -> IRNode:
        config = self.config(n)
        eff = self.analysis.effects_of(n.id)
        retry = None
        if n.type in RETRY_CAPABLE:
            r = n.retry
            retry = Retry(int(r.max_attempts), r.backoff) if r is not None else _DEFAULT_RETRY
        source, target = self.ports(n)
        return IRNode(
            n.id, self.contract(P.effective_input(n, self.plan.output)), source, target, self.scope_stack(n.id),
            NodeEffects(tuple(sorted(eff.reads)), tuple(sorted(eff.writes)), tuple(sorted(eff.wait_reads)))
            if eff.reads or eff.writes or eff.wait_reads else _NO_NODE_EFFECTS,
            config, retry, n.label, n.description)

    def ports(self, n: Node) -> tuple[tuple[SourcePort, ...], tuple[TargetPort, ...]]:
        source = []
        ports = P.source_ports(n)
        # a switch's or fork's every port carries the node's input contract
        # (ports.output_contract): lower it once, not a copy per port
        same = self.contract(n.input_contract) if isinstance(n.config, (Switch, Fork)) else None
        for port in ports:
            if same is not None:
                output: dict[str, IRField] | None = same
            else:
                out = P.output_contract(n, port)
                output = None if out is None else self.contract_fresh(out)
            eid = self.edges_from.get((n.id, port))
            if eid is not None:
                source.append(SourcePort(port, output, eid))
            elif port in P.OPTIONAL_PORTS:
                sink = self.analysis.failure_routes.get((n.id, port))
                if sink is None:
                    raise LoweringError(f"the analyzer lowered no failure route for port '{port}' of '{n.id}'")
                source.append(SourcePort(port, output, None, self.sink(sink, port)))
            else:
                raise LoweringError(f"port '{port}' of node '{n.id}' is not routed")
        target = tuple(TargetPort(port, tuple(sorted(self.edges_to.get((n.id, port), ()))))
                       for port in P.target_ports(n))
        return tuple(source), target

    def contract_fresh(self, c: Mapping[str, FieldSchema]) -> dict[str, IRField]:
        """Port output contracts are often built fresh by :mod:`ports`; cache
        them by the identity of their FieldSchemas instead."""
        if not c:
            return {}
        key = tuple(id(v) for v in c.values()) + tuple(c)
        got = self.port_cache.get(key)
        if got is None:
            got = self.port_cache[key] = (c, lower_contract(c))
        return got[1]

    def bind(self, m: Mapping[str, Any]) -> dict[str, Instr]:
        return {k: self.value(m[k]) for k in sorted(m)}

    def config(self, n: Node) -> Any:
        """Lowered config of node ``n`` (docs/ir.md#node-configs): every
        generic field of its kind (:attr:`loopc.kinds.Kind.generic_fields`)
        under its wire name — a value, template or expression as its
        instruction tree, a literal as is (the field's ``default`` when
        omitted) — and the kind's own fields from :data:`_CUSTOM`."""
        c = n.config
        k = KINDS.get(n.type)
        cls = CONFIG_CLASSES.get(n.type)
        if k is None or cls is None:
            raise LoweringError(f"unknown node config {type(c).__name__}")
        kw: dict[str, Any] = {}
        for _key, attr, f in k.generic_fields:
            x = getattr(c, attr)
            if f.form == "literal":
                kw[attr] = f.default if x is None else x
            else:
                kw[attr] = None if x is None else self.value(x)
        custom = _CUSTOM.get(n.type)
        if custom is not None:
            kw.update(custom(self, c))
        return cls(**kw)

    # -- edges -----------------------------------------------------------------
    def edge(self, e: Any) -> Edge:
        bindings = self.types.edge_bindings.get(e.id) if self.types is not None else None
        if bindings is None:
            raise LoweringError(f"no bindings for edge '{e.id}'")
        leaves = self.leaves
        bind = {b.field: b.value for b in bindings}  # the last binding of a field wins, as before
        eff = self.analysis.edge_effects.get(e.id)
        sink = self.analysis.end_routes.get(e.id)
        reads = tuple(sorted(eff.reads)) if eff is not None else ()
        return Edge(
            e.id, e.from_node, e.from_port, e.to_node, e.to_port,
            {k: lower_typed(bind[k], leaves) for k in sorted(bind)},
            self.scope_stack(e.id, edge=True), EdgeEffects(reads) if reads else _NO_EDGE_EFFECTS,
            self.sink(sink) if sink is not None else None, e.label)


# ---------------------------------------------------------------------------
# The kinds' own (cross-field) config fields; generic fields need nothing here
# ---------------------------------------------------------------------------

def _send_message(lw: _Lowerer, c: SendMessage) -> dict[str, Any]:
    v, opt = lw.value, lw.opt
    callback = c.completion == "callback"
    work_scope = related = work_items = None
    if callback and c.work_scope is not MISSING:
        work_scope = WorkScope("agent") if c.work_scope is None else WorkScope("fixed", v(c.work_scope))
        rs = c.related_scopes
        if rs is None:
            related = RelatedScopes("list", ())
        elif isinstance(rs, (tuple, list)):
            related = RelatedScopes("list", tuple(v(x) for x in rs))
        else:
            related = RelatedScopes("value", None, v(rs))
    if callback and c.has_work_items and c.allowed_responders is not None:
        work_items = WorkItems(v(c.allowed_responders))
    return dict(
        target=opt(c.target), scope=opt(c.scope),
        start_thread=bool(c.start_thread and c.completion == "sent"),
        callback_output=lw.contract(c.callback_output) if callback else None,
        responder=opt(c.responder) if callback else None,
        work_scope=work_scope, related_scopes=related, work_items=work_items)


def _set_variable(lw: _Lowerer, c: SetVariable) -> dict[str, Any]:
    return {"assign": lw.bind(c.assign)}


def _switch(lw: _Lowerer, c: Switch) -> dict[str, Any]:
    return {"cases": tuple(SwitchCase(case.port, lw.value(case.when)) for case in c.cases), "default": c.default}


def _fork(lw: _Lowerer, c: Fork) -> dict[str, Any]:
    return {"branches": tuple(c.branches)}


def _join(lw: _Lowerer, c: Join) -> dict[str, Any]:
    return {"fork_id": c.fork_id, "fan_out_id": c.fan_out_id, "result": lw.contract(c.result),
            "merge": lw.bind(c.merge)}


def _loop(lw: _Lowerer, c: Loop) -> dict[str, Any]:
    return {"state": lw.contract(c.state), "init": lw.bind(c.init)}


def _end(lw: _Lowerer, c: End) -> dict[str, Any]:
    failed = c.status == "failed"
    return {"code": c.code if failed else None, "detail": lw.opt(c.detail) if failed else None}


#: node type -> its kind's own config fields (functions, not bound methods: no cycles)
_CUSTOM: dict[str, Callable[[Any, Any], dict[str, Any]]] = {
    "send_message": _send_message,
    "set_variable": _set_variable,
    "switch": _switch,
    "fork": _fork,
    "join": _join,
    "loop": _loop,
    "end": _end,
}


def lower_plan(check: Any) -> IRPlan:
    """Lower a clean check result to the typed IR :class:`~loopc.ir.model.Plan`
    (the envelope — version, digest — is added by
    :func:`loopc.pipeline.compile_checked`).

    Raises :class:`~loopc.ir.instr.LoweringError` when information lowering
    needs is missing (a pass did not run, an expression was not typed); the
    caller turns it into LP5010.  Pass 13 (docs/language.md#compiler-passes).
    """
    if check.plan is None or check.scopes is None or check.types is None or check.analysis is None:
        raise LoweringError("the plan was not fully checked (scope map, type information or analysis missing)")
    return _Lowerer(check).run()
