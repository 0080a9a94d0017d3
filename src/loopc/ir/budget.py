"""The artifact budget (docs/reference.md#budgets,
docs/ir.md#artifact-budget).

Two stages:

1. :func:`project` — before lowering, a saturating projection of what the
   artifact will materialize: every contract copy (a node's input on the node
   and on each switch/fork port, callback/join/loop contracts on the config
   and on their port, the Plan output on every succeeded End, the
   ``{code, detail}`` contract of every ``failed`` port...), every binding and
   expression instruction (one per pass-through binding, one per expression
   node, template segment and constructor), every runtime port and scope
   record.  Copies are counted by multiplication — a contract's size is
   computed once and multiplied by its number of copies — so the projection
   never enumerates fields × ports.  Limits: 16,384 schema fields, 32,768
   expression instructions, 131,072 IR units, 64 MiB of conservatively
   estimated bytes (every retained string at worst-case JSON escaping, 6
   bytes per UTF-8 byte, plus generous structural overhead).
2. :func:`final_gates` — on the completed artifact: canonical JSON ≤ 8 MiB,
   envelope nesting ≤ 256, expression nesting ≤ 128.

Both return diagnostics (codes LP5001–LP5007, slugs
``resource.artifact_budget.*``); an over-budget plan produces no artifact.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from loopc.value import Value
from loopc.compiler import ports as P
from loopc.compiler import typecheck as TC
from loopc.compiler.expr import ast as A
from loopc.compiler.scopemap import ScopeMap
from loopc.compiler.typecheck import TypeInfo
from loopc.compiler.model import (
    MISSING, End, FieldSchema, Join, Loop, Node, Plan, SendMessage, SetVariable, Switch,
)
from loopc.kinds import KINDS

__all__ = ["Limits", "LIMITS", "Projection", "project", "final_gates", "budget_diagnostics", "check_budget"]

#: Saturation cap of every counter (far above any limit).
CAP = 1 << 62


class Limits(Value):
    """Budget limits (docs/reference.md#budgets); tests may pass smaller ones."""

    schema_fields: int = 16_384
    instructions: int = 32_768
    ir_units: int = 131_072
    bytes: int = 64 * 1024 * 1024
    artifact_bytes: int = 8 * 1024 * 1024
    envelope_nesting: int = 256
    expression_nesting: int = 128


LIMITS = Limits()


def _add(a: int, b: int) -> int:
    s = a + b
    return s if s < CAP else CAP


def _mul(a: int, b: int) -> int:
    if a == 0 or b == 0:
        return 0
    return a * b if a < CAP // b else CAP


# Structural overhead per unit (bytes), generous upper bounds of the JSON
# around the strings of one object of that kind in the artifact.
FIELD_OVERHEAD = 96
INSTR_OVERHEAD = 96
PORT_OVERHEAD = 128
NODE_OVERHEAD = 512
EDGE_OVERHEAD = 256
SCOPE_OVERHEAD = 128
ENVELOPE_OVERHEAD = 1024


def _str_bytes(s: str) -> int:
    """Worst case JSON bytes of a string: every UTF-8 byte (at most 4 per
    code point) escaped as \\u00XX (6 bytes), plus quotes."""
    return (6 if s.isascii() else 24) * len(s) + 2


def _json_bytes(v: Any) -> tuple[int, int]:
    """(values, worst-case bytes) of a JSON-like literal.  Iterative."""
    n = 0
    b = 0
    stack = [v]
    while stack:
        x = stack.pop()
        n += 1
        if isinstance(x, str):
            b += _str_bytes(x)
        elif isinstance(x, Mapping):
            b += 2
            for k, y in x.items():
                b += _str_bytes(str(k)) + 2
                stack.append(y)
        elif isinstance(x, (list, tuple)):
            b += 2
            for y in x:
                b += 1
                stack.append(y)
        else:
            b += 32
    return n, b


class Projection(Value):
    """Projected totals; ``top`` names the node/edge contributing most to each
    measure (for the diagnostic's position)."""

    schema_fields: int
    instructions: int
    ir_units: int
    bytes: int
    top: Mapping[str, tuple[str, str, int]]  # measure -> (kind, id, amount)


class _Projector:
    def __init__(self, check: Any) -> None:
        self.plan = check.plan
        self.types = check.types
        self.scopes = check.scopes
        self.contract_memo: dict[int, tuple[Any, int, int]] = {}
        self.fields = 0
        self.instrs = 0
        self.units = 0
        self.bytes = ENVELOPE_OVERHEAD
        self.top: dict[str, tuple[str, str, int]] = {}

    # -- contracts ----------------------------------------------------------
    def contract(self, c: Mapping[str, FieldSchema] | None) -> tuple[int, int]:
        """(fields, worst-case bytes) of one copy of contract ``c``."""
        if not c:
            return 0, 2
        got = self.contract_memo.get(id(c))
        if got is not None:
            return got[1], got[2]
        nf = 0
        nb = 2
        for name, fs in c.items():
            nb = _add(nb, _str_bytes(name) + 1)
            cur: FieldSchema | None = fs
            while cur is not None:
                nf += 1
                nb = _add(nb, FIELD_OVERHEAD + len(cur.type))
                if cur.default is not MISSING:
                    nb = _add(nb, _json_bytes(cur.default)[1])
                for s in cur.values or ():
                    nb = _add(nb, _str_bytes(s) + 1)
                if cur.label is not None:
                    nb = _add(nb, _str_bytes(cur.label) + 16)
                if cur.description is not None:
                    nb = _add(nb, _str_bytes(cur.description) + 16)
                cur = cur.items if cur.type == "array" else None
        self.contract_memo[id(c)] = (c, nf, nb)
        return nf, nb

    # -- values ---------------------------------------------------------------
    def typed_size(self, typed: Any) -> tuple[int, int]:
        """(instructions, worst-case bytes) of one typed form (before constant
        folding, so an upper bound).  Iterative.  (:func:`_str_bytes` is
        inlined: this runs for every typed value of the plan.)"""
        n = 0
        b = 0
        stack = [typed]
        pop = stack.pop
        push = stack.append
        while stack:
            t = pop()
            cls = t.__class__
            n += 1
            b += INSTR_OVERHEAD
            if cls is A.Path:
                r = t.root
                b += (6 if r.isascii() else 24) * len(r) + 2
                for g in t.segments:
                    b += (6 if g.isascii() else 24) * len(g) + 3
            elif cls is TC.TypedLiteral:
                b += _json_bytes(t.value)[1]
            elif cls is TC.TypedList:
                stack.extend(t.items)
            elif cls is TC.TypedMap:
                for k, x in t.entries:
                    b += (6 if k.isascii() else 24) * len(k) + 3
                    push(x)
            elif cls is TC.TypedTemplate:
                for p in t.ast.parts:
                    if isinstance(p, str):
                        n += 1
                        b += INSTR_OVERHEAD + (6 if p.isascii() else 24) * len(p) + 2
                    else:
                        push(p.expr)
            elif cls is A.Lit:
                b += _json_bytes(t.value)[1]
            else:
                stack.extend(A.children(t))
        return n, b

    def value(self, obj: Any) -> tuple[int, int]:
        typed = self.types.typed(obj) if self.types is not None else None
        if typed is None:
            return 1, INSTR_OVERHEAD
        return self.typed_size(typed)

    # -- accounting -----------------------------------------------------------
    def charge(self, kind: str, ident: str, fields: int, instrs: int, units: int, nbytes: int) -> None:
        self.fields = _add(self.fields, fields)
        self.instrs = _add(self.instrs, instrs)
        self.units = _add(self.units, _add(units, _add(fields, instrs)))
        self.bytes = _add(self.bytes, nbytes)
        top = self.top
        # unrolled over the four measures (one call per node and edge)
        cur = top.get("schema_fields")
        if cur is None or fields > cur[2]:
            top["schema_fields"] = (kind, ident, fields)
        cur = top.get("instructions")
        if cur is None or instrs > cur[2]:
            top["instructions"] = (kind, ident, instrs)
        amount = units + fields + instrs
        cur = top.get("ir_units")
        if cur is None or amount > cur[2]:
            top["ir_units"] = (kind, ident, amount)
        cur = top.get("bytes")
        if cur is None or nbytes > cur[2]:
            top["bytes"] = (kind, ident, nbytes)

    def run(self) -> Projection:
        plan = self.plan
        f = b = 0
        for c in (plan.input, plan.output, plan.state):
            cf, cb = self.contract(c)
            f, b = _add(f, cf), _add(b, cb)
        ni = nb2 = 0
        for fb in getattr(self.types, "entry_bindings", ()) or ():
            i, ib = self.typed_size(fb.value)
            ni, nb2 = _add(ni, i), _add(nb2, ib + _str_bytes(fb.field))
        self.charge("plan", "", f, ni, 4, _add(b, nb2))
        for node in plan.nodes.values():
            self.node(node)
        for edge in plan.edges.values():
            self.edge(edge)
        return Projection(self.fields, self.instrs, self.units, self.bytes, dict(self.top))

    def node(self, n: Node) -> None:
        c = n.config
        fields = 0
        nbytes = NODE_OVERHEAD + 2 * _str_bytes(n.id) + len(n.type)
        if n.label is not None:
            nbytes += _str_bytes(n.label)
        if n.description is not None:
            nbytes += _str_bytes(n.description)
        inp = P.effective_input(n, self.plan.output)
        in_f, in_b = self.contract(inp)
        fields += in_f
        nbytes += in_b
        kind = KINDS.get(n.type)
        # ports: a kind whose author declares its ports (switch, fork) copies
        # the input onto every port (multiplied, not enumerated)
        authored = kind.ports.authored if kind is not None else None
        if authored is not None:
            names = getattr(c, authored)
            k = len(names)
            fields = _add(fields, _mul(k, in_f))
            nbytes = _add(nbytes, _mul(k, in_b + PORT_OVERHEAD))
            nbytes = _add(nbytes, sum(2 * _str_bytes(p) for p in names))
            nports = k
        else:
            port_names = P.source_ports(n)
            nports = len(port_names)
            for port in port_names:
                out = P.output_contract(n, port)
                of, ob = self.contract_uncached(out)
                fields = _add(fields, of)
                nbytes = _add(nbytes, ob + PORT_OVERHEAD + _str_bytes(port) + 64)
        nports += len(P.target_ports(n))
        scope_depth = len(self.scopes.stack(n.id)) if self.scopes is not None else 0
        units = 1 + nports + scope_depth
        nbytes += _mul(scope_depth, SCOPE_OVERHEAD)
        instrs = 0
        # every generic value, template and expression of the kind (loopc.kinds.Kind.generic_fields)
        values: list[Any] = (
            [getattr(c, attr) for _key, attr, f in kind.generic_fields if f.form != "literal"] if kind else [])
        custom = _CUSTOM.get(n.type)
        if custom is not None:
            more, fields, nbytes, units = custom(self, c, fields, nbytes, units)
            values += more
        if kind is not None and kind.scope != "none":
            units += 1  # scope declaration
            nbytes += SCOPE_OVERHEAD
        for v in values:
            if v is None:
                continue
            i, ib = self.value(v)
            instrs = _add(instrs, i)
            nbytes = _add(nbytes, ib)
        self.charge("node", n.id, fields, instrs, units, nbytes)

    def contract_uncached(self, c: Mapping[str, FieldSchema] | None) -> tuple[int, int]:
        """Size of a contract built fresh by :mod:`ports` (not memoized by id)."""
        if not c:
            return 0, 2
        memo = self.contract_memo
        self.contract_memo = {}
        try:
            return self.contract(c)
        finally:
            self.contract_memo = memo

    def edge(self, e: Any) -> None:
        i, fn, tn, fp, tp = e.id, e.from_node, e.to_node, e.from_port, e.to_port
        if i.isascii() and fn.isascii() and tn.isascii() and fp.isascii() and tp.isascii():
            # _str_bytes of each, three copies of the id and two of the rest
            nbytes = EDGE_OVERHEAD + 6 * (3 * len(i) + 2 * (len(fn) + len(tn) + len(fp) + len(tp))) + 22
        else:
            nbytes = EDGE_OVERHEAD + _str_bytes(i) * 3 + _str_bytes(fn) * 2 + _str_bytes(tn) * 2
            nbytes += _str_bytes(fp) * 2 + _str_bytes(tp) * 2
        if e.label is not None:
            nbytes += _str_bytes(e.label)
        instrs = 0
        bindings = self.types.edge_bindings.get(e.id, ()) if self.types is not None else ()
        for fb in bindings:
            i, ib = self.typed_size(fb.value)
            instrs = _add(instrs, i)
            nbytes = _add(nbytes, ib + _str_bytes(fb.field))
        scope_depth = len(self.scopes.stack(e.id, edge=True)) if self.scopes is not None else 0
        nbytes += _mul(scope_depth, SCOPE_OVERHEAD)
        self.charge("edge", e.id, 0, instrs, 1 + scope_depth, nbytes)


class Checked(Value):
    """The pass results the projection reads (a
    :class:`loopc.pipeline.CheckResult` has the same three attributes)."""

    plan: Plan | None
    scopes: ScopeMap | None
    types: TypeInfo | None


# ---------------------------------------------------------------------------
# The kinds' own (custom) config fields; generic fields need nothing here.
# Each returns (the values it holds, fields, bytes, units) after adding its own.
# ---------------------------------------------------------------------------

_Acc = tuple[list[Any], int, int, int]


def _send_message(pj: Any, c: SendMessage, fields: int, nbytes: int, units: int) -> _Acc:
    values: list[Any] = [c.target, c.scope, c.responder, c.allowed_responders]
    if c.work_scope is not MISSING and c.work_scope is not None:
        values.append(c.work_scope)
    rs = c.related_scopes
    if isinstance(rs, (tuple, list)):
        values += list(rs)
    elif rs is not None:
        values.append(rs)
    cf, cb = pj.contract(c.callback_output)
    return values, _add(fields, cf), _add(nbytes, cb), units


def _set_variable(pj: Any, c: SetVariable, fields: int, nbytes: int, units: int) -> _Acc:
    return (list(c.assign.values()), fields, nbytes + sum(2 * _str_bytes(k) for k in c.assign),
            units + len(c.assign))


def _switch(pj: Any, c: Switch, fields: int, nbytes: int, units: int) -> _Acc:
    return [case.when for case in c.cases], fields, nbytes, units


def _join(pj: Any, c: Join, fields: int, nbytes: int, units: int) -> _Acc:
    nbytes += sum(_str_bytes(k) for k in c.merge)
    cf, cb = pj.contract(c.result)
    return list(c.merge.values()), _add(fields, cf), _add(nbytes, cb), units


def _loop(pj: Any, c: Loop, fields: int, nbytes: int, units: int) -> _Acc:
    nbytes += sum(_str_bytes(k) for k in c.init)
    cf, cb = pj.contract(c.state)
    return list(c.init.values()), _add(fields, cf), _add(nbytes, cb), units


def _end(pj: Any, c: End, fields: int, nbytes: int, units: int) -> _Acc:
    if c.code:
        nbytes += _str_bytes(c.code)
    return [c.detail], fields, nbytes, units + 1  # + its disposition record


#: node type -> the budget of its kind's own fields, for every kind with a
#: custom field that holds values (tests/test_kind_dispatch.py proves it complete)
_CUSTOM: dict[str, Callable[[Any, Any, int, int, int], _Acc]] = {
    "send_message": _send_message,
    "set_variable": _set_variable,
    "switch": _switch,
    "join": _join,
    "loop": _loop,
    "end": _end,
}


def project(check: Any) -> Projection:
    """Saturating pre-lowering projection of a checked plan (docs/ir.md#artifact-budget)."""
    return _Projector(check).run()


def _fmt(n: int) -> str:
    return f"{n:,}" if n < CAP else "more than 2^62"


def budget_diagnostics(check: Any, proj: Projection, reporter: Any, limits: Limits = LIMITS) -> bool:
    """Report LP5001–LP5004 for measures of ``proj`` over ``limits``; returns
    true when the projection is within budget.  Each diagnostic sits on the
    node or edge contributing most to that measure."""
    ok = True
    rows = (
        ("LP5001", "schema_fields", proj.schema_fields, limits.schema_fields, "schema fields"),
        ("LP5002", "instructions", proj.instructions, limits.instructions, "expression instructions"),
        ("LP5003", "ir_units", proj.ir_units, limits.ir_units, "IR units"),
        ("LP5004", "bytes", proj.bytes, limits.bytes, "bytes of worst-case materialized data"),
    )
    for code, measure, value, limit, what in rows:
        if value <= limit:
            continue
        ok = False
        kind, ident, amount = proj.top.get(measure, ("plan", "", 0))
        at: Any = check.plan.src if check.plan is not None else None
        node = edge = None
        if kind == "node" and ident in check.plan.nodes:
            at = check.plan.nodes[ident].src or at
            node = ident
        elif kind == "edge" and ident in check.plan.edges:
            at = check.plan.edges[ident].src or at
            edge = ident
        where = f"; the largest contribution, {_fmt(amount)}, comes from {kind} '{ident}'" if ident else ""
        reporter.report(
            code, _head(at),
            f"the compiled artifact would hold {_fmt(value)} {what}, over the budget of {limit:,} "
            f"{where}",
            node=node, edge=edge)
    return ok


def _head(at: Any) -> Any:
    """Report on a mapping's first key (``id:``) rather than the whole block."""
    from loopc.compiler.yamlnodes import YMap

    if isinstance(at, YMap):
        kn = at.key_node("id")
        if kn is not None:
            return kn
    return at


def final_gates(depth: int, nbytes: int, max_expr_depth: tuple[int, Any], reporter: Any,
                check: Any, limits: Limits = LIMITS) -> bool:
    """Report LP5005–LP5007 on a completed artifact: canonical size
    ``nbytes``, envelope nesting ``depth`` (:func:`loopc.ir.canonical.scan`),
    and ``max_expr_depth`` = (depth, (kind, id)) of the deepest instruction
    tree (:func:`loopc.ir.instr.scan_instrs`).  Returns true when every gate
    passes."""
    ok = True
    root = check.plan.src if check.plan is not None else None
    if nbytes > limits.artifact_bytes:
        ok = False
        reporter.report("LP5005", root, f"the canonical artifact is {nbytes:,} bytes, over the 8 MiB gate "
                                        f"({limits.artifact_bytes:,} bytes)")
    if depth > limits.envelope_nesting:
        ok = False
        reporter.report("LP5006", root, f"the artifact nests {depth} levels deep, over the gate of "
                                        f"{limits.envelope_nesting}")
    edepth, where = max_expr_depth
    if edepth > limits.expression_nesting:
        ok = False
        at = root
        node = edge = None
        if where is not None:
            kind, ident = where
            if kind == "node" and ident in check.plan.nodes:
                at, node = _head(check.plan.nodes[ident].src) or root, ident
            elif kind == "edge" and ident in check.plan.edges:
                at, edge = _head(check.plan.edges[ident].src) or root, ident
        reporter.report("LP5007", at, f"a compiled expression is nested {edepth} levels deep, over the gate "
                                      f"of {limits.expression_nesting}", node=node, edge=edge)
    return ok


def check_budget(plan: Plan, scopes: ScopeMap | None, types: TypeInfo | None, reporter: Any,
                 limits: Limits = LIMITS) -> bool:
    """The pre-lowering projection as a check pass: report LP5001–LP5004 on
    ``reporter`` and return true when within budget.  ``scopes`` is the
    check's one scope model (scope records per node and edge).  For a driver that wants
    validation to report the same budget diagnostics as compile (validation and
    compile report one budget, docs/ir.md#artifact-budget); the final gates need the artifact and stay in
    compile."""
    check = Checked(plan, scopes, types)
    return budget_diagnostics(check, project(check), reporter, limits)
