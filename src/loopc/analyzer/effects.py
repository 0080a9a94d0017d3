"""Run-state effects and race analysis (docs/reference.md#run-state; pass 11
of docs/language.md#compiler-passes: Run-state reads and writes that can race).

Each node's and edge's read/write set over ``run.state.*`` is computed from
the model: ``set_variable`` assignments write; every ``{ref: run.state...}``
and every ``run.state...`` path inside an expression or template reads
(bindings, templates, switch conditions, config values, join merges, loop
init).  A ``wait.condition`` read is kept apart: waiting on a field that a
concurrent branch writes is the intended synchronization, not a race.
A read of ``run.state`` as a whole reads every field.

Two program points are concurrent when their proven scope stacks diverge at
sibling branches of one fork or all_match activation (or lie in one fan-out
item body, whose items run concurrently); an all_match default runs only
when no case matches, so it is concurrent with none of the cases.  Per state field, the points are
inserted into a trie keyed by their stacks; at every trie node, the children
that are different branches of one owner conflict when one holds a write
and another any access.  That is linear in the total size of the stacks.
An access ordered after the concurrent writes by a condition wait
(:mod:`loopc.analyzer.ordering`, docs/language.md#wait-orders) does not conflict with them.

Findings: LP4601 ``state.race`` (both racing points, both locations),
LP4602 ``state.cancellable_write`` (a write in a branch an ``any`` join may
cancel: it may or may not have happened), LP4406 ``fan_out.state_write``
(a write inside an item body), LP4603 ``wait.condition_static`` (warning:
nothing that runs while the wait waits can change its condition), LP4604
``wait.condition_true_at_default`` (warning: a concurrent branch writes the
watched field, but the condition already holds at its default).  A race
beside a wait says, in a related note, which condition of the wait rule
fails (:meth:`loopc.analyzer.ordering.Ordering.explain`).
"""
from __future__ import annotations

from typing import Any, Iterator, Mapping

from loopc import lazyre
from loopc import value as _value
from loopc.value import Value
from loopc.analyzer.context import Ctx
from loopc.analyzer.facts import NO_EFFECTS, Effects, Stack
from loopc.analyzer.scopes import describe
from loopc.compiler.model import (
    Expr, FieldSchema, Join, ListValue, Literal, MapValue, Node, Ref, SetVariable, Switch, Template, Wait,
)
from loopc.compiler.report import decl, expr_entity, presence
from loopc.compiler.yamlnodes import YMap, YScalar, span_in_scalar

ALL = "*"
_VALUE_TYPES = (Literal, Ref, Expr, Template, ListValue, MapValue)
_FALLBACK = lazyre.compile(r"(?<![\w.])run\s*\.\s*state\b(?:\s*\.\s*([A-Za-z_][A-Za-z0-9_]*))?")


def _paths_reads(paths: Iterator[Any]) -> set[str]:
    out: set[str] = set()
    for p in paths:
        if getattr(p, "root", None) == "run.state":
            segs = getattr(p, "segments", ())
            out.add(segs[0] if segs else ALL)
    return out


def _regex_reads(text: str) -> set[str]:
    return {m.group(1) or ALL for m in _FALLBACK.finditer(text)}


def expr_reads(text: str) -> set[str]:
    """State fields read by a bare expression (``ALL`` for ``run.state``).
    Falls back to a lexical scan when the text does not parse (the type
    pass reports the syntax error; the scan over-approximates)."""
    if "state" not in text:
        return set()  # cannot mention run.state: skip the parse
    from loopc.compiler.expr import parse_expression
    from loopc.compiler.expr.ast import Path, walk

    try:
        tree, errs = parse_expression(text)
    except Exception:  # noqa: BLE001 - never trust a parser on hostile input
        return _regex_reads(text)
    if tree is None or errs:
        return _regex_reads(text)
    return _paths_reads(n for n in walk(tree) if isinstance(n, Path))


def template_reads(text: str) -> set[str]:
    """State fields read by the ``{{ }}`` segments of a template."""
    if "{{" not in text or "state" not in text:
        return set()
    from loopc.compiler.expr import parse_template
    from loopc.compiler.expr.ast import Path, walk

    try:
        tree, errs = parse_template(text)
    except Exception:  # noqa: BLE001
        return _regex_reads(text)
    if tree is None or errs:
        return _regex_reads(text)
    out: set[str] = set()
    for it in tree.interps:
        out |= _paths_reads(n for n in walk(it.expr) if isinstance(n, Path))
    return out


def value_reads(v: Any) -> set[str]:
    """State fields read by a ValueExpr (iterative; literals read nothing)."""
    out: set[str] = set()
    todo = [v]
    while todo:
        x = todo.pop()
        if isinstance(x, Ref):
            if len(x.path) >= 2 and x.path[0] == "run" and x.path[1] == "state":
                out.add(x.path[2] if len(x.path) > 2 else ALL)
        elif isinstance(x, Expr):
            out |= expr_reads(x.text)
        elif isinstance(x, Template):
            out |= template_reads(x.text)
        elif isinstance(x, ListValue):
            todo.extend(x.items)
        elif isinstance(x, MapValue):
            todo.extend(x.entries.values())
    return out


def _node_values(node: Node) -> list[Any]:
    """The ValueExprs of a node's configuration that can read Run state, in
    source order (a wait's condition included)."""
    c = node.config
    if isinstance(c, Wait):
        vals: list[Any] = [v for v in (c.condition, c.duration, c.timeout) if v is not None]
    elif isinstance(c, SetVariable):
        vals = list(c.assign.values())
    else:
        vals = list(_config_values(c))
    return sorted(vals, key=lambda v: getattr(getattr(v, "src", None), "start", 0) or 0)


def _path_offsets(text: str, field: str, template: bool) -> tuple[int, int] | None:
    """Offsets of the first ``run.state.<field>`` path (or ``run.state``
    itself) in an expression or template text, or ``None``."""
    from loopc.compiler.expr import parse_expression, parse_template
    from loopc.compiler.expr.ast import Path, walk

    try:
        if template:
            tpl, errs = parse_template(text)
            exprs = [it.expr for it in tpl.interps] if tpl is not None and not errs else []
        else:
            tree, errs = parse_expression(text)
            exprs = [tree] if tree is not None and not errs else []
    except Exception:  # noqa: BLE001 - never trust a parser on hostile input
        exprs = []
    best: tuple[int, int] | None = None
    for e in exprs:
        for n in walk(e):
            if isinstance(n, Path) and n.root == "run.state" and (not n.segments or n.segments[0] == field):
                if best is None or n.start < best[0]:
                    best = (n.start, n.end)
    if best is None:
        for m in _FALLBACK.finditer(text):
            if m.group(1) in (None, field):
                return m.start(), m.end()
    return best


def read_at(values: list[Any], field: str) -> Any:
    """Where ``values`` (ValueExprs) read ``run.state.<field>``: the
    ``run.state.<field>`` path inside the first expression or template that
    reads it (its exact span when the scalar maps one to one onto its
    source, else the scalar), or the ``{ref: ...}`` scalar; ``None`` when
    none reads it."""
    todo = list(reversed(values))
    while todo:
        x = todo.pop()
        if isinstance(x, Ref):
            if (len(x.path) >= 2 and x.path[0] == "run" and x.path[1] == "state"
                    and (len(x.path) == 2 or x.path[2] == field) and x.src is not None):
                return x.src
        elif isinstance(x, (Expr, Template)):
            if field not in (reads := (expr_reads(x.text) if isinstance(x, Expr) else template_reads(x.text))) \
                    and ALL not in reads:
                continue
            src = x.src
            if not isinstance(src, YScalar):
                return src
            off = _path_offsets(x.text, field, isinstance(x, Template))
            if off is None or x.text != src.raw:
                return src
            return span_in_scalar(src, *off)
        elif isinstance(x, ListValue):
            todo.extend(reversed(x.items))
        elif isinstance(x, MapValue):
            todo.extend(reversed(list(x.entries.values())))
    return None


#: value class → its field names except ``src`` (``None``: not a value
#: class, :mod:`loopc.value`).  A pure memo bounded by the number of model classes.
_ATTR_NAMES: dict[type, tuple[str, ...] | None] = {}


def _attr_names(cls: type) -> tuple[str, ...] | None:
    try:
        return _ATTR_NAMES[cls]
    except KeyError:
        pass
    names = tuple(f.name for f in _value.fields(cls) if f.name != "src") if _value.is_value(cls) else None
    if len(_ATTR_NAMES) < 512:
        _ATTR_NAMES[cls] = names
    return names


def _config_values(obj: Any) -> Iterator[Any]:
    """Every ValueExpr held by a node configuration (value objects walked
    generically, contracts and ``src`` skipped)."""
    todo = [obj]
    while todo:
        x = todo.pop()
        if isinstance(x, _VALUE_TYPES):
            yield x
        elif isinstance(x, FieldSchema) or x is None or isinstance(x, (str, int, float, bool)):
            continue
        elif (names := _attr_names(type(x))) is not None:
            for name in names:
                todo.append(getattr(x, name))
        elif isinstance(x, Mapping):
            todo.extend(x.values())
        elif isinstance(x, (tuple, list)):
            todo.extend(x)


def _expand(fields: set[str], state: Mapping[str, Any]) -> frozenset[str]:
    if ALL in fields:
        fields = (fields - {ALL}) | set(state)
    return frozenset(fields)


def node_effects(node: Node, state: Mapping[str, Any]) -> Effects:
    """Run-state effects of one node (docs/reference.md#node-set-variable)."""
    c = node.config
    reads: set[str] = set()
    waits: set[str] = set()
    writes: set[str] = set()
    if isinstance(c, Wait):
        if c.condition is not None:
            waits |= expr_reads(c.condition.text)
        for v in (c.duration, c.timeout):
            if v is not None:
                reads |= value_reads(v)
    elif isinstance(c, SetVariable):
        writes |= set(c.assign)
        for v in c.assign.values():
            reads |= value_reads(v)
    else:
        for v in _config_values(c):
            reads |= value_reads(v)
    return Effects(_expand(reads, state), frozenset(writes), _expand(waits, state))


def edge_effects(bind: Mapping[str, Any] | None, state: Mapping[str, Any]) -> Effects:
    if not bind:
        return NO_EFFECTS
    reads: set[str] = set()
    for v in bind.values():
        reads |= value_reads(v)
    return Effects(_expand(reads, state)) if reads else NO_EFFECTS


class _Point(Value, frozen=False):
    id: str
    is_edge: bool
    stack: Stack
    write: bool
    order: int


def concurrent(a: Stack, b: Stack, defaults: Mapping[str, str]) -> bool:
    """True when points with stacks ``a`` and ``b`` can run at the same time:
    they diverge at sibling branches of one fork/all_match activation, or
    share a fan-out item body (items run concurrently).  An all_match
    default (``defaults``: switch id → default port) runs only when no case
    matches, so it is never concurrent with a case branch."""
    c = 0
    while c < len(a) and c < len(b) and a[c] == b[c]:
        if a[c].kind == "fan_out":
            return True
        c += 1
    if c < len(a) and c < len(b):
        fa, fb = a[c], b[c]
        if fa.owner != fb.owner or fa.branch == fb.branch:
            return False
        if fa.kind == "all_match":
            return defaults.get(fa.owner) not in (fa.branch, fb.branch)
        return fa.kind == "fork"
    return False


class EffectAnalysis:
    """Computes effects for every reachable node and edge and reports the
    conflicts (see module docstring)."""

    def __init__(self, ctx: Ctx, node_stacks: dict[str, Stack], node_taint: dict[str, int | None],
                 edge_stacks: dict[str, Stack], edge_taint: dict[str, int | None], order: list[str]) -> None:
        self.ctx = ctx
        self.ns, self.nt, self.es, self.et = node_stacks, node_taint, edge_stacks, edge_taint
        self.order = order
        self.node_eff: dict[str, Effects] = {}
        self.edge_eff: dict[str, Effects] = {}
        self.defaults = {n.id: n.config.default for n in ctx.nodes.values()
                         if isinstance(n.config, Switch) and n.config.mode == "all_match"}
        self._order: Any = None

    def run(self) -> None:
        ctx = self.ctx
        state = ctx.plan.state
        for nid in self.order:
            eff = node_effects(ctx.nodes[nid], state)
            if not eff.empty:
                self.node_eff[nid] = eff
        for e in ctx.edges:
            eff = edge_effects(e.bind, state)
            if not eff.empty:
                self.edge_eff[e.id] = eff
        self.check_writes()
        self.check_races()
        self.check_waits()
        self.check_wait_defaults()

    # ---------------------------------------------------------------- writes
    def check_writes(self) -> None:
        """Writes inside a fan-out body, and writes an ``any`` join may cancel."""
        ctx = self.ctx
        for nid, eff in self.node_eff.items():
            if not eff.writes or self.nt.get(nid) is not None:
                continue
            node = ctx.nodes[nid]
            st = self.ns.get(nid, ())
            fo = next((f for f in reversed(st) if f.kind == "fan_out"), None)
            fields = ", ".join(f"`{f}`" for f in sorted(eff.writes))
            if fo is not None:
                ctx.report(
                    "LP4406", self._assign_at(node),
                    f"set_variable `{nid}` writes Run state ({fields}) inside the item body of fan_out "
                    f"`{fo.owner}`; its items run concurrently, so the writes would race: "
                    f"carry the value to the fan-out join and write it after the join",
                    node=nid, related=[(f"fan_out `{fo.owner}`", ctx.node_at(fo.owner))])
                continue
            for f in reversed(st):
                if f.kind not in ("fork", "all_match") or not f.closer:
                    continue
                j = ctx.nodes.get(f.closer)
                if j is None or not isinstance(j.config, Join) or j.config.mode != "any":
                    continue
                ctx.report(
                    "LP4602", self._assign_at(node),
                    f"set_variable `{nid}` writes Run state ({fields}) in {describe(f)}, whose `any` join "
                    f"`{j.id}` cancels the losing branches: after the join the write may or may not "
                    f"have happened; write after the join, from "
                    f"`winner.*`", node=nid,
                    related=[(f"`any` join `{j.id}`", ctx.config_at(j, "mode"))])
                break

    def _assign_at(self, node: Node):
        c = node.config
        if isinstance(c, SetVariable) and isinstance(c.src, YMap):
            a = c.src.get("assign")
            if isinstance(a, YMap) and a.kv:
                return a.first_key()
            return c.src.key_node("assign") or self.ctx.node_at(node)
        return self.ctx.node_at(node)

    def _field_at(self, p: _Point, field: str):
        ctx = self.ctx
        if p.is_edge:
            e = ctx.edge_by_id[p.id]
            at = read_at(list((e.bind or {}).values()), field) if not p.write else None
            if at is not None:
                return at
            b = e.src.get("bind") if isinstance(e.src, YMap) else None
            return b or ctx.edge_to(e)
        node = ctx.nodes[p.id]
        c = node.config
        if p.write and isinstance(c, SetVariable) and isinstance(c.src, YMap):
            a = c.src.get("assign")
            if isinstance(a, YMap) and a.key_node(field) is not None:
                return a.key_node(field)
        if not p.write:
            at = read_at(_node_values(node), field)
            if at is not None:
                return at
        return ctx.node_at(node)

    # ----------------------------------------------------------------- races
    def check_races(self) -> None:
        ctx = self.ctx
        points: dict[str, list[_Point]] = {}
        n = 0
        for nid in self.order:
            eff = self.node_eff.get(nid)
            if eff is None or self.nt.get(nid) is not None:
                continue
            st = self.ns.get(nid, ())
            if any(f.kind == "fan_out" for f in st) and eff.writes:
                eff = Effects(eff.reads, frozenset(), eff.wait_reads)  # reported as LP4406
            for f in sorted(eff.writes):
                points.setdefault(f, []).append(_Point(nid, False, st, True, n))
                n += 1
            for f in sorted(eff.reads - eff.writes):
                points.setdefault(f, []).append(_Point(nid, False, st, False, n))
                n += 1
        for e in ctx.edges:
            eff = self.edge_eff.get(e.id)
            if eff is None or self.et.get(e.id) is not None or e.id not in self.es:
                continue
            for f in sorted(eff.reads):
                points.setdefault(f, []).append(_Point(e.id, True, self.es[e.id], False, n))
                n += 1
        reported: set[tuple[str, str]] = set()
        for field in sorted(points):
            pts = points[field]
            if not any(p.write for p in pts) or len(pts) < 2:
                continue
            self._field_races(field, pts, reported)

    def _field_races(self, field: str, pts: list[_Point], reported: set) -> None:
        # trie over stacks; node = [children dict]; points sit at the node of
        # their stack (or at its fan-out boundary: items are reads only, the
        # writes are LP4406, so nothing below conflicts)
        root: list = [{}]
        at: dict[int, list[_Point]] = {}
        for p in pts:
            t = root
            for f in p.stack:
                if f.kind == "fan_out":
                    break
                t = t[0].setdefault(f, [{}])
            at.setdefault(id(t), []).append(p)
        # iterative post-order; per subtree: its writers, first access, first read
        summary: dict[int, tuple[list[_Point], _Point | None, _Point | None]] = {}
        stack: list[tuple[list, bool]] = [(root, False)]
        while stack:
            t, done = stack.pop()
            if not done:
                stack.append((t, True))
                for k in t[0].values():
                    stack.append((k, False))
                continue
            own = sorted(at.get(id(t), []), key=lambda p: p.order)
            writers = [p for p in own if p.write]
            first = own[0] if own else None
            first_read = next((p for p in own if not p.write), None)
            groups: dict[str, list[tuple[Any, list]]] = {}
            for f, k in t[0].items():
                w, a, r = summary[id(k)]
                writers = writers + w
                if a is not None and (first is None or a.order < first.order):
                    first = a
                if r is not None and (first_read is None or r.order < first_read.order):
                    first_read = r
                if f.kind == "fork" or f.kind == "all_match" and f.branch != self.defaults.get(f.owner):
                    groups.setdefault(f.owner, []).append((f, k))  # an all_match default is exclusive
            summary[id(t)] = (writers, first, first_read)
            for kids in groups.values():
                if len(kids) >= 2:
                    self._group_races(field, [self._kid(field, f, k, summary, at) for f, k in kids], reported)

    def _kid(self, field: str, f: Any, k: list, summary: dict, at: dict) -> tuple:
        """One branch of a race group: ``(frame, writers, exempt ids, first
        non-exempt write, first non-exempt access, first non-exempt read)``;
        a point is exempt when it is ordered after the writes of the
        concurrent branches (:mod:`loopc.analyzer.ordering`)."""
        w, a, r = summary[id(k)]
        waits = self._ordering().ordered_frame(field, f) if w or a is not None else None
        if waits is None:
            return (f, w, frozenset(), min(w, key=lambda p: p.order) if w else None, a, r)
        sub: list[_Point] = []
        todo = [k]
        while todo:
            t = todo.pop()
            sub.extend(at.get(id(t), ()))
            todo.extend(t[0].values())
        order = self._ordering()
        ex = frozenset(p.order for p in sub if (order.after_wait(waits, f.owner, edge=p.id) if p.is_edge
                                                else order.after_wait(waits, f.owner, node=p.id)))
        live = sorted((p for p in sub if p.order not in ex), key=lambda p: p.order)
        return (f, w, ex, next((p for p in live if p.write), None), live[0] if live else None,
                next((p for p in live if not p.write), None))

    def _ordering(self) -> Any:
        if self._order is None:
            from loopc.analyzer.ordering import Ordering

            self._order = Ordering(self.ctx, self.ns, self.nt, self.node_eff, self.defaults, concurrent)
        return self._order

    def _group_races(self, field: str, kids: list[tuple], reported: set) -> None:
        """Report each writer of one branch against the first conflicting
        access of a sibling branch (a write preferred, else the earliest
        access), skipping pairs a wait orders."""
        for f, w, ex, _fw, _fa, _fr in kids:
            for wp in sorted(w, key=lambda p: p.order):
                waited = wp.order in ex  # then only reads of a sibling branch can race with it
                best = None
                for g, _w2, _ex2, fw2, fa2, fr2 in kids:
                    if g is f:
                        continue
                    cand = fr2 if waited else (fw2 or fa2)
                    if cand is not None and (best is None or cand.order < best[1].order):
                        best = (g, cand)
                if best is None:
                    continue
                g, other = best
                pair = tuple(sorted((wp.id, other.id)))
                if pair in reported or (wp.id, field) in reported:
                    continue
                reported.add(pair)
                w, fw, other, fo, whys = self._race_sides(field, wp, f, other, g)
                if (w.id, field) in reported:
                    continue
                reported.add((w.id, field))
                self._report_race(field, w, fw, other, fo, whys)

    def _race_sides(self, field: str, w: _Point, fw, other: _Point, fo) -> tuple:
        """``(writer, its frame, other point, its frame, explanations)`` of one
        race: for a race beside a wait, which condition of the wait rule fails
        (docs/language.md#wait-orders; :meth:`Ordering.explain`).  Of two
        writers, the one that breaks the rule (a write in the waiting branch
        before its wait) is where the defect is: it comes first."""
        whys: list = []
        for p, frame in ((other, fo), (w, fw)):
            why = self._ordering().explain(field, frame, p.id, p.is_edge)
            if why is not None and all(why[1] != x[1] for x in whys):
                whys.append(why)
        if other.write and any(why[2] == other.id for why in whys):
            return other, fo, w, fw, whys
        return w, fw, other, fo, whys

    def _report_race(self, field: str, w: _Point, fw, other: _Point, fo, whys: list) -> None:
        ctx = self.ctx
        kind = "writes" if other.write else "reads"
        what = "edge" if other.is_edge else ctx.nodes[other.id].type
        related = [(f"{what} `{other.id}` {kind} `run.state.{field}` here", self._field_at(other, field))]
        taints = []
        fs = ctx.plan.state.get(field)
        # beside a wait, whether the race is real rests on the field's default
        needs = list(presence(fs.src)) if whys and fs is not None else []
        for wait, text, culprit, holds in whys:
            wnode = ctx.nodes[wait]
            cond_at = ctx.config_at(wnode, "condition")
            if cond_at is not None:
                needs.append(expr_entity(cond_at.pointer))  # a rejected condition orders nothing known
            at = cond_at if culprit is None or culprit == w.id else self._write_at(culprit, field)
            related.append((text, at))
            if holds and cond_at is not None:
                taints.append(decl(cond_at.pointer))  # LP4604 at that condition would say it again
        ctx.report(
            "LP4601", self._field_at(w, field),
            f"set_variable `{w.id}` writes `run.state.{field}` in {describe(fw)} while {what} "
            f"`{other.id}` {kind} it in {describe(fo)}: the branches run concurrently, so the result "
            f"depends on arrival order; write it once after join "
            + (f"`{fw.closer}`" if fw.closer else f"of `{fw.owner}`")
            + ", or make the branches write different fields",
            key=(w.id, other.id, field), node=w.id, related=related, taints=taints, needs=needs)

    def _write_at(self, nid: str, field: str):
        """Where set_variable ``nid`` assigns ``field`` (its ``assign`` key)."""
        return self._field_at(_Point(nid, False, self.ns.get(nid, ()), True, -1), field)

    # ----------------------------------------------------------------- waits
    def _condition_waits(self) -> Iterator[tuple[str, Any, Wait]]:
        """``(node id, node, Wait config)`` of every untainted wait with a
        condition, in plan order (what check_waits and check_wait_defaults judge)."""
        for nid in self.order:
            node = self.ctx.nodes[nid]
            c = node.config
            if isinstance(c, Wait) and c.condition is not None and self.nt.get(nid) is None:
                at = self.ctx.config_at(node, "condition")
                r = self.ctx.r
                if at is None or not (r.any_tainted and r.tainted(expr_entity(at.pointer))):
                    yield nid, node, c  # a rejected condition says nothing to reason about

    def check_waits(self) -> None:
        """A ``wait.condition`` whose fields nothing concurrent writes can
        never change while the wait waits (warning, docs/reference.md#run-state).
        Not judged while an edge is set aside or missing (already reported):
        the writers it leads to are unknown."""
        ctx = self.ctx
        if ctx.set_aside != [] or ctx.r.tainted_names("writes"):
            return  # an edge or an assignment set aside: not every write is known
        writers: dict[str, list[str]] = {}
        for nid, eff in self.node_eff.items():
            for f in eff.writes:
                writers.setdefault(f, []).append(nid)
        for nid, node, c in self._condition_waits():
            eff = self.node_eff.get(nid, NO_EFFECTS)
            st = self.ns.get(nid, ())
            live = False
            for f in eff.wait_reads:
                for w in writers.get(f, ()):
                    if self.nt.get(w) is None and concurrent(st, self.ns.get(w, ()), self.defaults):
                        live = True
                        break
                if live:
                    break
            if live:
                continue
            # the condition is fixed once the wait starts: what it does then
            # depends on that value, never on a write the wait could see
            otherwise = ("it takes its `timed_out` route when the timeout expires" if c.timeout is not None
                         else "it waits forever (it has no `timeout`)")
            outcome = (f"the condition keeps the value it has when `{nid}` starts waiting: if that "
                       f"value is true the wait passes at once, otherwise {otherwise}")
            if eff.wait_reads:
                reads = sorted(eff.wait_reads)
                one = len(reads) == 1
                watched = ", ".join(f"`run.state.{f}`" for f in reads)
                ws = sorted({w for f in reads for w in writers.get(f, ())})
                if ws:
                    who = ", ".join(f"`{w}`" for w in ws)
                    why = (f"wait `{nid}` watches {watched}; set_variable {who} "
                           f"write{'s' if len(ws) == 1 else ''} {'it' if one else 'them'}, but never "
                           f"while the wait waits")
                else:
                    why = (f"wait `{nid}` watches {watched}, and no set_variable writes "
                           f"{'it' if one else 'them'}")
                hint = (f"to wait for a change, write {'it' if one else 'one of them'} in a branch "
                        f"that runs concurrently with `{nid}`")
            else:
                why = f"the condition of wait `{nid}` reads no Run state"
                hint = ("to wait for a change, make the condition read a Run-state field that a "
                        "concurrent branch writes")
            ctx.report(
                "LP4603", ctx.config_at(node, "condition"),
                f"{why}, so {outcome}; {hint}",
                node=nid)

    def check_wait_defaults(self) -> None:
        """LP4604 (warning): a condition wait watches a field that a
        concurrent branch writes, but its condition already holds at the
        field's default, and the field has its default when the wait starts
        (no other writer can run before it): the wait may pass before the
        write, so it neither waits for it nor orders anything after it
        (docs/language.md#wait-orders).  Silent when a
        race (LP4601) already says so at this condition."""
        ctx = self.ctx
        writers: dict[str, list[str]] = {}
        for nid in self.order:
            eff = self.node_eff.get(nid)
            if eff is not None and self.nt.get(nid) is None:
                for f in eff.writes:
                    writers.setdefault(f, []).append(nid)
        in_item = {w: any(f.kind == "fan_out" for f in self.ns.get(w, ())) for ws in writers.values() for w in ws}
        for nid, node, c in self._condition_waits():
            st = self.ns.get(nid, ())
            together: dict[str, bool] = {}  # writer -> concurrent with this wait
            for field in sorted(self.node_eff.get(nid, NO_EFFECTS).wait_reads):
                conc: list[str] = []  # writers concurrent with the wait
                other: list[str] = []
                for w in writers.get(field, ()):
                    if in_item[w]:
                        continue  # LP4406
                    if w not in together:
                        together[w] = concurrent(st, self.ns.get(w, ()), self.defaults)
                    (conc if together[w] else other).append(w)
                if not conc:
                    continue
                order = self._ordering()
                if not order.cond_true_at_default(nid, field):
                    continue
                if any(order.reaches(w, nid) for w in other):
                    continue  # the field need not hold its default when the wait starts
                from loopc.analyzer.ordering import default_shown, false_at

                default = order.default(field)
                good = false_at(field, default)
                t = conc[0]
                tst = self.ns.get(t, ())
                frame = next((f for f, g in zip(tst, st) if f != g), tst[-1] if tst else None)
                where = f" in {describe(frame)}" if frame is not None else ""
                cond_at = ctx.config_at(node, "condition")
                ctx.report(
                    "LP4604", cond_at,
                    f"the condition of wait `{nid}` already holds while `run.state.{field}` has its "
                    f"default{default_shown(default)}, so the wait can pass at once, before set_variable "
                    f"`{t}` writes the field in a concurrent branch: it neither waits for that write nor "
                    f"orders what follows it after the write; write a condition that is false at the "
                    f"default" + (f", such as `{good}`" if good else ""),
                    node=nid, needs=[*([decl(cond_at.pointer)] if cond_at is not None else ()),
                                     *presence(ctx.plan.state[field].src if field in ctx.plan.state else None)],
                    related=[(f"set_variable `{t}` writes `run.state.{field}` here{where}, concurrently "
                              f"with wait `{nid}`", self._write_at(t, field))])
                break
