"""Definitions and references of one checked plan (docs/editors.md,
"Navigation and rename").

Built inside the language server on top of the check result's typed model
(:class:`loopc.compiler.model.Plan`, its YAML source nodes, the scope map);
it covers:

* **node ids** — defined by a node's ``id``; referenced by ``entry``, edge
  ``from.node``/``to.node``, a join's ``forkId``/``fanOutId``;
* **ports** — branch keys are defined by a switch case ``port``, its
  ``default`` and a fork's ``branches`` entries (the fixed ports of the other
  node types, ``completed``, ``failed``, …, have the node as definition);
  referenced by edge ``from.port`` (and ``to.port`` for a loop's
  ``continue``/``break``) and by ``branches.<key>`` paths in a join's merge;
* **fields** — defined by a key of a contract (Plan ``input``/``output``/
  ``state``, a node's ``input``, a ``callbackOutput``, a join ``result``, a
  loop ``state``); referenced by ``ref:`` paths, ``{{ }}`` templates and
  expressions (``run.input.*``, ``run.state.*``, ``input.*``, ``output.*``,
  ``loop.state.*``, ``branches.<key>.*``, ``winner.value.*``) and by the keys
  of ``bind``, ``merge``, ``init`` and ``assign`` mappings.

Symbols are tuples: ``("node", id)``, ``("port", node_id, port)``,
``("field", owner, name)`` with owner ``"plan.input"``, ``"plan.output"``,
``"plan.state"`` or ``"<node id>:<contract>"``.  Occurrences are code-point
offsets into the editor's text (:class:`~loopc.lsp.positions.EditorIndex`).  Same-name pass-through (an edge without
``bind``) is not an occurrence: renaming a field renames what is written.
"""
from __future__ import annotations

import re
from typing import Any, Iterator, Mapping

import attrs

from loopc.compiler.model import End, Expr, ListValue, Loop, MapValue, Ref, SendMessage, Template
from loopc.compiler.yamlnodes import YMap, YNode, YScalar, YSeq

Symbol = tuple[str, ...]
IDENT = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
FIXED_PORTS = frozenset(("completed", "failed", "timed_out", "approved", "rejected", "item", "body",
                         "done", "in", "continue", "break"))


@attrs.frozen
class Occurrence:
    """``symbol`` at ``[start, end)`` (code-point offsets); ``is_def`` for
    the defining occurrence."""

    symbol: Symbol
    start: int
    end: int
    is_def: bool = False


def _scalar_range(node: YNode | None) -> tuple[int, int] | None:
    """Offsets of a scalar's text, inside its quotes."""
    if not isinstance(node, YScalar):
        return None
    s, e = node.start, node.end
    if node.style in ("'", '"') and e - s >= 2:
        s, e = s + 1, e - 1
    return s, e


class SymbolIndex:
    """All occurrences of one plan; queries by offset and by symbol."""

    def __init__(self, result: Any, index: Any) -> None:
        self.result = result
        self.index = index  # EditorIndex (offsets are editor offsets)
        self.occurrences: list[Occurrence] = []
        self.by_symbol: dict[Symbol, list[Occurrence]] = {}
        plan = getattr(result, "plan", None)
        if plan is not None:
            try:
                self._build(plan)
            except Exception:  # noqa: BLE001 - a partial index is still useful
                pass
        for o in self.occurrences:
            self.by_symbol.setdefault(o.symbol, []).append(o)
        self.occurrences.sort(key=lambda o: (o.start, -o.end))

    # -- queries -----------------------------------------------------------------
    def at(self, offset: int) -> Occurrence | None:
        """The (innermost) occurrence covering ``offset`` (end inclusive, so a
        cursor right after a name finds it)."""
        best: Occurrence | None = None
        for o in self.occurrences:
            if o.start > offset:
                break
            if o.start <= offset <= o.end and (best is None or o.end - o.start <= best.end - best.start):
                best = o
        return best

    def definition(self, sym: Symbol) -> Occurrence | None:
        for o in self.by_symbol.get(sym, ()):
            if o.is_def:
                return o
        if sym[0] == "port" and len(sym) == 3:
            return self.definition(("node", sym[1]))
        return None

    def references(self, sym: Symbol, include_def: bool = True) -> list[Occurrence]:
        return [o for o in self.by_symbol.get(sym, ()) if include_def or not o.is_def]

    def renamable(self, sym: Symbol) -> str | None:
        """``None`` when ``sym`` can be renamed, else why not."""
        if sym[0] == "port" and sym[2] in FIXED_PORTS and not any(
                o.is_def for o in self.by_symbol.get(sym, ())):
            return f"`{sym[2]}` is a fixed port of its node type"
        if not any(o.is_def for o in self.by_symbol.get(sym, ())):
            return "this name is defined by the language, not by the plan"
        return None

    # -- building ------------------------------------------------------------------
    def _add(self, sym: Symbol, node: YNode | None, is_def: bool = False) -> None:
        r = _scalar_range(node)
        if r is not None:
            shift = self.index.shift
            self.occurrences.append(Occurrence(sym, r[0] + shift, r[1] + shift, is_def))

    def _contract_defs(self, owner: str, holder: YNode | None) -> None:
        if isinstance(holder, YMap):
            for name, kn, _v in holder.pairs():
                self._add(("field", owner, name), kn, True)

    def _build(self, plan: Any) -> None:
        self.plan = plan
        self.scopes = getattr(self.result, "scopes", None)
        self.doc = getattr(self.result, "document", None)
        src = plan.src if isinstance(plan.src, YMap) else None
        if src is not None:
            for key in ("input", "output", "state"):
                self._contract_defs(f"plan.{key}", src.get(key))
            entry = src.get("entry")
            if isinstance(entry, YScalar) and entry.value in plan.nodes:
                self._add(("node", str(entry.value)), entry)
        for node in plan.nodes.values():
            self._node(node)
        for edge in plan.edges.values():
            self._edge(edge)

    def _node(self, node: Any) -> None:
        nsrc = node.src if isinstance(node.src, YMap) else None
        if nsrc is None:
            return
        nid = node.id
        self._add(("node", nid), nsrc.get("id"), True)
        self._contract_defs(f"{nid}:input", nsrc.get("input"))
        cfg_key = {"send_message": "sendMessage", "set_variable": "setVariable", "wait": "wait",
                   "request_approval": "requestApproval", "switch": "switch", "fork": "fork", "join": "join",
                   "fan_out": "fanOut", "loop": "loop", "end": "end"}.get(node.type, "")
        csrc = nsrc.get(cfg_key)
        csrc = csrc if isinstance(csrc, YMap) else None
        cfg = node.config
        t = node.type
        if csrc is not None:
            if t == "send_message":
                self._contract_defs(f"{nid}:callbackOutput", csrc.get("callbackOutput"))
            elif t == "join":
                self._contract_defs(f"{nid}:result", csrc.get("result"))
                for k in ("forkId", "fanOutId"):
                    v = csrc.get(k)
                    if isinstance(v, YScalar) and isinstance(v.value, str):
                        self._add(("node", v.value), v)
                merge = csrc.get("merge")
                if isinstance(merge, YMap):
                    for name, kn, _v in merge.pairs():
                        self._add(("field", f"{nid}:result", name), kn)
            elif t == "loop":
                self._contract_defs(f"{nid}:state", csrc.get("state"))
                init = csrc.get("init")
                if isinstance(init, YMap):
                    for name, kn, _v in init.pairs():
                        self._add(("field", f"{nid}:state", name), kn)
            elif t == "set_variable":
                assign = csrc.get("assign")
                if isinstance(assign, YMap):
                    for name, kn, _v in assign.pairs():
                        self._add(("field", "plan.state", name), kn)
            elif t == "switch":
                cases = csrc.get("cases")
                if isinstance(cases, YSeq):
                    for c in cases.items:
                        if isinstance(c, YMap):
                            p = c.get("port")
                            if isinstance(p, YScalar) and isinstance(p.value, str):
                                self._add(("port", nid, p.value), p, True)
                d = csrc.get("default")
                if isinstance(d, YScalar) and isinstance(d.value, str):
                    self._add(("port", nid, d.value), d, True)
            elif t == "fork":
                br = csrc.get("branches")
                if isinstance(br, YSeq):
                    for b in br.items:
                        if isinstance(b, YScalar) and isinstance(b.value, str):
                            self._add(("port", nid, b.value), b, True)
        # references inside the configuration
        for value, kind in _config_values(cfg):
            self._value(value, kind, node=node, edge=None)

    def _edge(self, edge: Any) -> None:
        esrc = edge.src if isinstance(edge.src, YMap) else None
        if esrc is None:
            return
        plan = self.plan
        for end, nid, port in (("from", edge.from_node, edge.from_port), ("to", edge.to_node, edge.to_port)):
            m = esrc.get(end)
            if not isinstance(m, YMap):
                continue
            if nid in plan.nodes:
                self._add(("node", nid), m.get("node"))
                p = m.get("port")
                if p is not None:
                    self._add(("port", nid, port), p)
        dst = plan.nodes.get(edge.to_node)
        bind = esrc.get("bind")
        if isinstance(bind, YMap) and dst is not None:
            owner = self._dest_owner(dst, edge.to_port)
            if owner is not None:
                for name, kn, _v in bind.pairs():
                    self._add(("field", owner, name), kn)
        if edge.bind:
            for v in edge.bind.values():
                self._value(v, "bind", node=None, edge=edge)

    def _dest_owner(self, dst: Any, port: str) -> str | None:
        if port in ("continue", "break") and isinstance(dst.config, Loop):
            return f"{dst.id}:state"
        if port != "in":
            return None
        if isinstance(dst.config, End) and dst.config.status == "succeeded":
            return "plan.output"
        return f"{dst.id}:input"

    # -- paths -----------------------------------------------------------------------
    def _value(self, value: Any, kind: str, *, node: Any, edge: Any) -> None:
        from loopc.compiler.expr import ast as A
        from loopc.compiler.expr.parser import parse_expression, parse_path, parse_template

        stack = [value]
        while stack:
            v = stack.pop()
            if v is None:
                continue
            if isinstance(v, ListValue):
                stack.extend(v.items)
                continue
            if isinstance(v, MapValue):
                stack.extend(v.entries.values())
                continue
            if isinstance(v, (list, tuple)):
                stack.extend(v)
                continue
            scalar = getattr(v, "src", None)
            if not isinstance(scalar, YScalar):
                continue
            paths: list[Any] = []
            if isinstance(v, Ref):
                p, errs = parse_path(v.text)
                if p is not None:
                    paths.append(p)
            elif isinstance(v, Expr):
                e, errs = parse_expression(v.text)
                if e is not None:
                    paths.extend(n for n in A.walk(e) if isinstance(n, A.Path))
            elif isinstance(v, Template):
                if "{{" not in v.text:
                    continue
                t, errs = parse_template(v.text)
                if t is not None:
                    for it in t.interps:
                        paths.extend(n for n in A.walk(it.expr) if isinstance(n, A.Path))
            for p in paths:
                self._path(p, scalar, node=node, edge=edge, kind=kind)

    def _span_offsets(self, scalar: YScalar, s: int, e: int) -> tuple[int, int] | None:
        from loopc.compiler.scalarpos import value_span

        if self.doc is None:
            return None
        sp = value_span(self.doc, scalar, s, e)
        return self.index.span_offsets(sp)

    def _path(self, p: Any, scalar: YScalar, *, node: Any, edge: Any, kind: str) -> None:
        names = tuple(p.root.split(".")) + tuple(p.segments)
        if len(p.name_starts) != len(names):
            return
        nroot = len(names) - len(p.segments)
        segs = p.segments
        targets = self._resolve(p.root, segs, node=node, edge=edge, kind=kind)
        for i, sym in targets:
            k = nroot + i
            r = self._span_offsets(scalar, p.name_starts[k], p.name_starts[k] + len(names[k]))
            if r is not None:
                self.occurrences.append(Occurrence(sym, r[0], r[1]))

    def _resolve(self, root: str, segs: tuple[str, ...], *, node: Any, edge: Any,
                 kind: str) -> Iterator[tuple[int, Symbol]]:
        """(segment index, symbol) for the named declarations a path reads."""
        from loopc.compiler.model import FanOut, Fork, Join, Switch

        plan = self.plan
        if not segs:
            return
        first = segs[0]
        if root == "run.input":
            yield 0, ("field", "plan.input", first)
        elif root == "run.state":
            yield 0, ("field", "plan.state", first)
        elif root == "input":
            n = node if edge is None else plan.nodes.get(edge.from_node)
            if n is not None:
                if isinstance(n.config, End) and n.config.status == "succeeded":
                    yield 0, ("field", "plan.output", first)
                else:
                    yield 0, ("field", f"{n.id}:input", first)
        elif root == "output" and edge is not None:
            src = plan.nodes.get(edge.from_node)
            if src is None:
                return
            port = edge.from_port
            if isinstance(src.config, SendMessage) and port == "completed" and src.config.completion == "callback":
                yield 0, ("field", f"{src.id}:callbackOutput", first)
            elif isinstance(src.config, Join) and port == "completed":
                yield 0, ("field", f"{src.id}:result", first)
            elif isinstance(src.config, Loop) and port == "done":
                yield 0, ("field", f"{src.id}:state", first)
            elif isinstance(src.config, (Switch, Fork)):
                yield 0, ("field", f"{src.id}:input", first)
        elif root == "loop" and first == "state" and len(segs) > 1:
            owner = self._loop_of(node, edge)
            if owner is not None:
                yield 1, ("field", f"{owner}:state", segs[1])
        elif root in ("branches", "winner") and node is not None and isinstance(node.config, Join):
            owner = node.config.fork_id
            if root == "branches":
                if owner:
                    yield 0, ("port", owner, first)
                if len(segs) > 1:
                    yield 1, ("field", f"{node.id}:input", segs[1])
            elif first == "value" and len(segs) > 1:
                yield 1, ("field", f"{node.id}:input", segs[1])
        del FanOut

    def _loop_of(self, node: Any, edge: Any) -> str | None:
        plan = self.plan
        if edge is not None:
            src = plan.nodes.get(edge.from_node)
            if src is not None and isinstance(src.config, Loop) and edge.from_port == "body":
                return src.id
            if self.scopes is not None:
                return self.scopes.loop_of(edge.id, edge=True)
            return None
        if node is not None and self.scopes is not None:
            return self.scopes.loop_of(node.id)
        return None


def _config_values(cfg: Any) -> Iterator[tuple[Any, str]]:
    """Every ValueExpr, Expr and Template of a node configuration."""
    for a in attrs.fields(type(cfg)):
        if a.name == "src":
            continue
        v = getattr(cfg, a.name)
        if v is None or isinstance(v, (str, int, float, bool)):
            continue
        if a.name in ("callback_output", "result", "state"):
            continue  # contracts, not values
        if isinstance(v, Mapping):
            for x in v.values():
                yield x, a.name
        elif isinstance(v, tuple):
            for x in v:
                if hasattr(x, "when"):  # switch cases
                    yield x.when, "when"
                else:
                    yield x, a.name
        else:
            yield v, a.name
