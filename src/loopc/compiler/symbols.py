"""Symbol index of one checked plan: every definition ↔ every reference to it
(docs/api.md#symbol-index).

Built from the typed model (:class:`~loopc.compiler.model.Plan`), its YAML
source nodes (:mod:`loopc.compiler.sourcemap`), the scope map and, for
rename, the type pass's bindings; :attr:`loopc.CheckResult.symbols` builds
it on first use.  Three kinds of :class:`Symbol`:

* **node ids** — defined by a node's ``id``; referenced by ``entry``, edge
  ``from.node``/``to.node`` and a join's ``forkId``/``fanOutId``;
* **ports** — the authored ones (branch keys) are defined by a switch
  case's ``port``, the switch ``default`` and a fork's ``branches`` entries;
  the fixed ports of a node type (``completed``, ``failed``, ``in``,
  ``continue``, …) are defined by the language, and their
  :meth:`SymbolIndex.definition` is the node's ``id``.  Referenced by edge
  ``from.port``/``to.port`` and by ``branches.<key>`` paths in a join's
  ``merge``;
* **fields** — defined by a key of a contract: the Plan ``input``,
  ``output`` and ``state`` (Run state), a node's ``input``, a
  ``callbackOutput``, a join ``result``, a loop ``state``.  Referenced by
  path segments in ``ref:`` values, ``{{ }}`` templates, ``{expr: ...}``,
  switch ``when`` and wait ``condition`` expressions (``run.input.*``,
  ``run.state.*``, ``input.*``, ``output.*``, ``loop.state.*``,
  ``branches.<key>.*``, ``winner.value.*``) and by the keys of ``bind``,
  ``merge``, ``init`` and ``assign`` mappings.

Only names the plan declares are indexed: a path into language-defined
values (``item.*``, ``loop.iteration``, ``winner.key``, ``output.code`` of a
``failed`` port, ``output.decidedBy``, a callback's ``workScope``) and a
reference that resolves to nothing (a typo the checker reports) are not
occurrences.  Same-name pass-through (an edge without ``bind``, the entry
taking the Plan input) writes no name, so it is not an occurrence either;
:meth:`SymbolIndex.rename` keeps its meaning (see there).

Offsets are 0-based code-point offsets into the decoded text (BOM removed),
as in :class:`~loopc.diagnostics.Span`; every :class:`Occurrence` also
carries its ``Span`` (1-based lines, code-point columns).  Building never
raises: a model the index cannot read gives fewer occurrences.
"""

from __future__ import annotations

import bisect
import re
from typing import Any, Iterator, Mapping

import attrs

from loopc import value as _value
from loopc.compiler import sourcemap as SM
from loopc.compiler.model import (
    End,
    Expr,
    Fork,
    Join,
    ListValue,
    Literal,
    Loop,
    MapValue,
    Plan,
    Ref,
    SendMessage,
    SetVariable,
    Switch,
    Template,
    Wait,
)
from loopc.compiler.yamlnodes import YDocument, YMap, YNode, YScalar, YSeq
from loopc.diagnostics import Span, TextEdit

__all__ = ["IDENT", "Occurrence", "RenameError", "Symbol", "SymbolIndex", "config_values"]

#: What a renamed symbol's new name must match (docs/reference.md#identifiers).
IDENT = re.compile(r"[a-z][a-z0-9_]{0,63}")

#: Roles of occurrences.  Definitions: ``id`` (node), ``case``, ``default``,
#: ``branch`` (ports), ``contract`` (fields).  References: ``entry``,
#: ``edge`` (``from.node``/``to.node``), ``port`` (``from.port``/``to.port``),
#: ``forkId``, ``fanOutId``, ``ref``, ``template``, ``expr`` (``{expr: ...}``),
#: ``when`` (switch case), ``condition`` (wait), ``bind``, ``merge``,
#: ``init``, ``assign`` (mapping keys).
ROLES = frozenset(
    (
        "id",
        "case",
        "default",
        "branch",
        "contract",
        "entry",
        "edge",
        "port",
        "forkId",
        "fanOutId",
        "ref",
        "template",
        "expr",
        "when",
        "condition",
        "bind",
        "merge",
        "init",
        "assign",
    )
)


@attrs.frozen(order=True)
class Symbol:
    """A named declaration.

    * ``kind`` — ``"node"``, ``"port"`` or ``"field"``;
    * ``owner`` — ``""`` for a node; the node id for a port; for a field the
      contract that declares it: ``"plan.input"``, ``"plan.output"``,
      ``"plan.state"`` (Run state), or ``"<node id>:input"``,
      ``"<node id>:callbackOutput"``, ``"<node id>:result"`` (join),
      ``"<node id>:state"`` (loop);
    * ``name`` — the declared name.

    Symbols are values (equal when their fields are); they name a
    declaration of one version of a plan text.
    """

    kind: str
    owner: str
    name: str

    @classmethod
    def node(cls, node_id: str) -> "Symbol":
        """The node ``node_id``."""
        return cls("node", "", node_id)

    @classmethod
    def port(cls, node_id: str, port: str) -> "Symbol":
        """Port ``port`` of node ``node_id``."""
        return cls("port", node_id, port)

    @classmethod
    def field(cls, owner: str, name: str) -> "Symbol":
        """Field ``name`` of the contract ``owner`` (see :class:`Symbol` for owners)."""
        return cls("field", owner, name)

    def __str__(self) -> str:
        if self.kind == "node":
            return f"node {self.name}"
        if self.kind == "port":
            return f"port {self.owner}.{self.name}"
        return f"field {self.owner}.{self.name}"


@attrs.frozen
class Occurrence:
    """One written name: ``symbol`` at code-point offsets ``[start, end)``
    of the decoded text (``text[start:end]`` is the name as written, inside
    any quotes; escapes in a double-quoted scalar are part of it), ``span``
    the same range with lines and columns, ``role`` one of :data:`ROLES`,
    ``is_definition`` for the declaring occurrence."""

    symbol: Symbol
    start: int
    end: int
    span: Span
    role: str
    is_definition: bool = False


class RenameError(ValueError):
    """:meth:`SymbolIndex.rename` refuses; the message says why."""


# ---------------------------------------------------------------------------
# Contracts and their owners
# ---------------------------------------------------------------------------


def input_owner(node: Any) -> str:
    """Owner of a node's activation input: a succeeded End takes the Plan output."""
    if isinstance(node.config, End) and node.config.status == "succeeded":
        return "plan.output"
    return f"{node.id}:input"


def output_owner(node: Any, port: str) -> str | None:
    """Owner of the plan-declared contract a source port carries under
    ``output.*`` (``None``: nothing, or only language-defined fields)."""
    c = node.config
    if isinstance(c, SendMessage):
        return f"{node.id}:callbackOutput" if port == "completed" and c.completion == "callback" else None
    if isinstance(c, Join):
        return f"{node.id}:result" if port == "completed" else None
    if isinstance(c, Loop):
        return f"{node.id}:state" if port == "done" else None
    if isinstance(c, (Switch, Fork)):
        return f"{node.id}:input" if port in c_ports(c) else None
    return None


def c_ports(c: Any) -> tuple[str, ...]:
    return c.ports if isinstance(c, Switch) else c.branches


def dest_owner(dst: Any, port: str) -> str | None:
    """Owner of the contract an edge into ``dst``.``port`` builds."""
    if port in ("continue", "break") and isinstance(dst.config, Loop):
        return f"{dst.id}:state"
    if port != "in":
        return None
    return input_owner(dst)


def config_values(cfg: Any) -> Iterator[tuple[Any, str]]:
    """(value, attribute name) for every ValueExpr, ``Expr`` and
    ``Template`` of a node configuration (mapping values of ``assign``,
    ``merge``, ``init``; each switch case's ``when`` as ``"when"``);
    contracts are skipped."""
    for a in _value.fields(type(cfg)):
        if a.name in ("src", "callback_output", "result", "state"):
            continue
        v = getattr(cfg, a.name)
        if v is None or isinstance(v, (str, int, float, bool)):
            continue
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


# ---------------------------------------------------------------------------
# The index
# ---------------------------------------------------------------------------


class SymbolIndex:
    """Every :class:`Occurrence` of one plan, queried by offset and by symbol.

    ``SymbolIndex(document, plan, scopes=None, types=None)``; ``plan`` may
    be ``None`` (an empty index).  ``types`` (the type pass's
    :class:`~loopc.compiler.typecheck.TypeInfo`) lets :meth:`rename` keep
    same-name pass-through; without it a field rename only renames what is
    written.
    """

    def __init__(self, document: YDocument | None, plan: Plan | None, scopes: Any = None, types: Any = None) -> None:
        self.document = document
        self.plan = plan
        self.scopes = scopes
        self.types = types
        self._occ: list[Occurrence] = []
        if plan is not None and document is not None:
            self._p: Plan = plan
            self._d: YDocument = document
            try:
                self._build(plan)
            except Exception:  # noqa: BLE001 - a partial index is still useful
                pass
        self._occ.sort(key=lambda o: (o.start, -o.end))
        self.occurrences: tuple[Occurrence, ...] = tuple(self._occ)
        self._starts = [o.start for o in self.occurrences]
        self._by_symbol: dict[Symbol, list[Occurrence]] = {}
        for o in self.occurrences:
            self._by_symbol.setdefault(o.symbol, []).append(o)

    # -- queries ---------------------------------------------------------------
    def symbols(self) -> tuple[Symbol, ...]:
        """Every symbol with at least one occurrence, sorted."""
        return tuple(sorted(self._by_symbol))

    def occurrence_at(self, offset: int) -> Occurrence | None:
        """The occurrence covering code-point ``offset``: one with
        ``start <= offset < end``, else one ending exactly at ``offset`` (a
        cursor just after a name); ``None`` when there is none."""
        i = bisect.bisect_right(self._starts, offset)
        touching = None
        for o in reversed(self.occurrences[max(0, i - 8) : i]):
            if o.start <= offset < o.end:
                return o
            if o.end == offset and touching is None:
                touching = o
        return touching

    def symbol_at(self, offset: int) -> Symbol | None:
        """The symbol of :meth:`occurrence_at`."""
        o = self.occurrence_at(offset)
        return o.symbol if o is not None else None

    def definition(self, symbol: Symbol) -> Occurrence | None:
        """The declaring occurrence of ``symbol``; for a fixed port of a node
        type, the node's ``id``.  ``None`` when the plan declares nothing
        for it."""
        for o in self._by_symbol.get(symbol, ()):
            if o.is_definition:
                return o
        if symbol.kind == "port":
            return self.definition(Symbol.node(symbol.owner))
        return None

    def references(self, symbol: Symbol, *, include_definition: bool = True) -> tuple[Occurrence, ...]:
        """Every occurrence of ``symbol`` in text order (the definition too,
        unless ``include_definition`` is false)."""
        return tuple(o for o in self._by_symbol.get(symbol, ()) if include_definition or not o.is_definition)

    # -- rename ------------------------------------------------------------------
    def rename_refusal(self, symbol: Symbol, new_name: str | None = None) -> str | None:
        """``None`` when :meth:`rename` would accept ``symbol`` (and
        ``new_name``, when given), else the reason it refuses."""
        occ = self._by_symbol.get(symbol)
        if not occ:
            return f"{symbol} does not occur in this plan"
        if not any(o.is_definition for o in occ):
            if symbol.kind == "port":
                return f"`{symbol.name}` is a fixed port of its node type"
            return f"`{symbol.name}` is defined by the language, not by the plan"
        if new_name is None or new_name == symbol.name:
            return None
        if not IDENT.fullmatch(new_name):
            return (
                f"`{new_name}` is not a valid name (a lower-case letter, then lower-case letters, "
                "digits or `_`; at most 64)"
            )
        return self._clash(symbol, new_name)

    def rename(self, symbol: Symbol, new_name: str) -> tuple[TextEdit, ...]:
        """The edits that rename ``symbol`` to ``new_name``, sorted by
        offset and non-overlapping; each :class:`~loopc.diagnostics.TextEdit`
        has a located ``Span`` (``start``/``end`` code-point offsets, lines,
        columns).  Apply them from the last to the first.

        Every occurrence is renamed.  Same-name pass-through keeps its
        meaning: an edge without ``bind`` whose implicit bindings the rename
        would change gets an explicit ``bind`` listing them (one inserted
        line, or ``, bind: {...}`` in a flow mapping); a field the entry
        node takes from the Plan input by name is renamed on both sides.
        Renaming to the current name gives no edits.  Raises
        :class:`RenameError` for a symbol that does not occur or that the
        language defines (fixed ports, compiler-owned fields), a new name
        that is not an identifier, or one that is taken (an existing node
        id, a port of the same node, a field of an affected contract).
        """
        why = self.rename_refusal(symbol, new_name)
        if why is not None:
            raise RenameError(why)
        if new_name == symbol.name:
            return ()
        group = self._group(symbol)
        edits: dict[tuple[int, int], str] = {}
        for sym in group:
            for o in self._by_symbol.get(sym, ()):
                edits[(o.start, o.end)] = new_name
        if symbol.kind == "field":
            for at, text in self._passthrough_binds(group, new_name):
                edits[(at, at)] = text
        out = []
        index = self.document.index if self.document is not None else None
        for (s, e), text in sorted(edits.items()):
            out.append(TextEdit(_span(index, s, e), text))
        return tuple(out)

    def _group(self, symbol: Symbol) -> list[Symbol]:
        """The symbols renamed together: a field the entry takes from the
        Plan input by name is renamed on both sides."""
        group = [symbol]
        plan = self.plan
        if symbol.kind != "field" or plan is None:
            return group
        entry = plan.nodes.get(plan.entry)
        if entry is None:
            return group
        ei = input_owner(entry)
        for a, b in (("plan.input", ei), (ei, "plan.input")):
            if symbol.owner == a and a != b and symbol.name in self._contract(b):
                other = Symbol.field(b, symbol.name)
                if other in self._by_symbol:
                    group.append(other)
        return group

    def _clash(self, symbol: Symbol, new: str) -> str | None:
        plan = self.plan
        if plan is None:
            return None
        if symbol.kind == "node":
            if new in plan.nodes or new in plan.malformed_nodes:
                return f"a node `{new}` already exists"
            return None
        if symbol.kind == "port":
            from loopc.compiler.ports import source_ports, target_ports

            node = plan.nodes.get(symbol.owner)
            if node is not None and (new in source_ports(node) or new in target_ports(node)):
                return f"node `{symbol.owner}` already has a port `{new}`"
            return None
        for s in self._group(symbol):
            holder = self._holder(s.owner)
            if new in self._contract(s.owner) or (isinstance(holder, YMap) and new in holder):
                return f"{_describe_owner(s.owner)} already has a field `{new}`"
        entry = plan.nodes.get(plan.entry)
        if entry is not None:
            ei = input_owner(entry)
            for a, b in (("plan.input", ei), (ei, "plan.input")):
                if symbol.owner == a and a != b and symbol.name not in self._contract(b) and new in self._contract(b):
                    return (
                        f"the entry node '{entry.id}' takes the Plan input by name and "
                        f"{_describe_owner(b)} has a field `{new}`"
                    )
        return None

    def _passthrough_binds(self, group: list[Symbol], new: str) -> Iterator[tuple[int, str]]:
        """(offset, inserted text) making explicit every edge pass-through
        whose implicit bindings the rename of ``group`` would change."""
        plan, types = self.plan, self.types
        if plan is None or types is None or self.document is None:
            return
        renamed = {(s.owner, s.name) for s in group}

        def r(owner: str | None, name: str) -> str:
            return new if (owner, name) in renamed else name

        owners = {s.owner for s in group}
        for edge in plan.edges.values():
            if edge.bind is not None or edge.id not in types.edge_bindings:
                continue
            src, dst = plan.nodes.get(edge.from_node), plan.nodes.get(edge.to_node)
            if src is None or dst is None:
                continue
            so, do = output_owner(src, edge.from_port), dest_owner(dst, edge.to_port)
            if so not in owners and do not in owners:
                continue
            from loopc.compiler.ports import output_contract

            src_names = list(self._contract(so)) if so is not None else list(output_contract(src, edge.from_port) or {})
            dst_names = list(types.dest_contracts.get(edge.id, self._contract(do)))
            bound = [b.field for b in types.edge_bindings[edge.id] if b.implicit]
            before = [(r(do, n), r(so, n)) for n in bound]
            new_src = {r(so, n) for n in src_names}
            after = [(d, d) for d in (r(do, n) for n in dst_names) if d in new_src]
            if sorted(before) == sorted(after):
                continue
            body = ", ".join(f"{d}: {{ref: output.{s}}}" for d, s in before)
            at = _insert_key(self.document, edge.src, "bind", "{" + body + "}")
            if at is not None:
                yield at

    # -- contracts ---------------------------------------------------------------
    def _contract(self, owner: str | None) -> Mapping[str, Any]:
        plan = self.plan
        if owner is None or plan is None:
            return {}
        if owner.startswith("plan."):
            return getattr(plan, owner[5:], None) or {}
        nid, _, which = owner.partition(":")
        node = plan.nodes.get(nid)
        if node is None:
            return {}
        if which == "input":
            return node.input or {}
        attr = {"callbackOutput": "callback_output", "result": "result", "state": "state"}.get(which)
        return (getattr(node.config, attr, None) or {}) if attr else {}

    def _holder(self, owner: str) -> YNode | None:
        """The YAML mapping of a contract."""
        plan = self.plan
        if plan is None:
            return None
        if owner.startswith("plan."):
            return SM.yaml_node(plan, owner[5:])
        nid, _, which = owner.partition(":")
        node = plan.nodes.get(nid)
        if node is None:
            return None
        if which == "input":
            return SM.yaml_node(node, "input")
        attr = {"callbackOutput": "callback_output", "result": "result", "state": "state"}.get(which)
        try:
            return SM.yaml_node(node.config, attr) if attr else None
        except ValueError:
            return None

    # -- building ------------------------------------------------------------------
    def _add(self, sym: Symbol, node: YNode | None, role: str, is_def: bool = False) -> None:
        if not isinstance(node, YScalar):
            return
        s, e = node.start, node.end
        if node.style in ("'", '"') and e - s >= 2:
            s, e = s + 1, e - 1
        elif node.style in ("|", ">"):
            return  # a name is never a block scalar
        self._occ.append(Occurrence(sym, s, e, _span(self._d.index, s, e), role, is_def))

    def _contract_defs(self, owner: str) -> None:
        holder = self._holder(owner)
        declared = self._contract(owner)
        if isinstance(holder, YMap):
            for name, kn, _v in holder.pairs():
                if name in declared:
                    self._add(Symbol.field(owner, name), kn, "contract", True)

    def _keys(self, owner: str | None, holder: YNode | None, role: str) -> None:
        if owner is None or not isinstance(holder, YMap):
            return
        declared = self._contract(owner)
        for name, kn, _v in holder.pairs():
            if name in declared:
                self._add(Symbol.field(owner, name), kn, role)

    def _build(self, plan: Plan) -> None:
        for key in ("input", "output", "state"):
            self._contract_defs(f"plan.{key}")
        entry = SM.yaml_node(plan, "entry")
        if isinstance(entry, YScalar) and entry.value in plan.nodes:
            self._add(Symbol.node(str(entry.value)), entry, "entry")
        for node in plan.nodes.values():
            self._node(node)
        for edge in plan.edges.values():
            self._edge(edge)

    def _node(self, node: Any) -> None:
        if not isinstance(node.src, YMap):
            return
        nid, cfg = node.id, node.config
        self._add(Symbol.node(nid), SM.yaml_node(node, "id"), "id", True)
        if node.input is not None:
            self._contract_defs(f"{nid}:input")
        if isinstance(cfg.src, YMap):
            if isinstance(cfg, SendMessage):
                self._contract_defs(f"{nid}:callbackOutput")
            elif isinstance(cfg, Join):
                self._contract_defs(f"{nid}:result")
                for attr, role in (("fork_id", "forkId"), ("fan_out_id", "fanOutId")):
                    v = SM.yaml_node(cfg, attr)
                    if isinstance(v, YScalar) and v.value in self._p.nodes:
                        self._add(Symbol.node(str(v.value)), v, role)
                self._keys(f"{nid}:result", SM.yaml_node(cfg, "merge"), "merge")
            elif isinstance(cfg, Loop):
                self._contract_defs(f"{nid}:state")
                self._keys(f"{nid}:state", SM.yaml_node(cfg, "init"), "init")
            elif isinstance(cfg, SetVariable):
                self._keys("plan.state", SM.yaml_node(cfg, "assign"), "assign")
            elif isinstance(cfg, Switch):
                for case in cfg.cases:
                    if isinstance(case.src, YMap):
                        self._add(Symbol.port(nid, case.port), SM.yaml_node(case, "port"), "case", True)
                self._add(Symbol.port(nid, cfg.default), SM.yaml_node(cfg, "default"), "default", True)
            elif isinstance(cfg, Fork):
                br = SM.yaml_node(cfg, "branches")
                if isinstance(br, YSeq):
                    for b in br.items:
                        if isinstance(b, YScalar) and b.value in cfg.branches:
                            self._add(Symbol.port(nid, str(b.value)), b, "branch", True)
        for value, attr in config_values(cfg):
            role = "when" if attr == "when" else "condition" if isinstance(cfg, Wait) and attr == "condition" else ""
            self._value(value, role, node=node, edge=None, merge=isinstance(cfg, Join) and attr == "merge")

    def _edge(self, edge: Any) -> None:
        if not isinstance(edge.src, YMap):
            return
        from loopc.compiler.ports import source_ports, target_ports

        plan = self._p
        for nid, port, nattr, pattr, ports in (
            (edge.from_node, edge.from_port, "from_node", "from_port", source_ports),
            (edge.to_node, edge.to_port, "to_node", "to_port", target_ports),
        ):
            node = plan.nodes.get(nid)
            if node is None:
                continue
            self._add(Symbol.node(nid), SM.yaml_node(edge, nattr), "edge")
            if port in ports(node):
                self._add(Symbol.port(nid, port), SM.yaml_node(edge, pattr), "port")
        dst = plan.nodes.get(edge.to_node)
        if dst is not None:
            self._keys(dest_owner(dst, edge.to_port), SM.yaml_node(edge, "bind"), "bind")
        if edge.bind:
            for v in edge.bind.values():
                self._value(v, "", node=None, edge=edge, merge=False)

    # -- paths -----------------------------------------------------------------------
    def _value(self, value: Any, role: str, *, node: Any, edge: Any, merge: bool) -> None:
        from loopc.compiler.expr import ast as A
        from loopc.compiler.expr.parser import parse_expression, parse_path, parse_template

        stack = [value]
        while stack:
            v = stack.pop()
            if v is None or isinstance(v, Literal):
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
                p, _errs = parse_path(v.text)
                if p is not None:
                    paths.append(p)
                vrole = "ref"
            elif isinstance(v, Expr):
                e, _errs = parse_expression(v.text)
                if e is not None:
                    paths.extend(n for n in A.walk(e) if isinstance(n, A.Path))
                vrole = role or "expr"
            elif isinstance(v, Template):
                if "{{" not in v.text:
                    continue
                t, _errs = parse_template(v.text)
                if t is not None:
                    for it in t.interps:
                        paths.extend(n for n in A.walk(it.expr) if isinstance(n, A.Path))
                vrole = "template"
            else:
                continue
            for p in paths:
                self._path(p, scalar, vrole, node=node, edge=edge, merge=merge)

    def _path(self, p: Any, scalar: YScalar, role: str, *, node: Any, edge: Any, merge: bool) -> None:
        from loopc.compiler.scalarpos import cached_map

        names = tuple(p.root.split(".")) + tuple(p.segments)
        if len(p.name_starts) != len(names):
            return
        nroot = len(names) - len(p.segments)
        m: Any = None
        for i, sym in self._resolve(p.root, tuple(p.segments), node=node, edge=edge, merge=merge):
            k = nroot + i
            a, b = p.name_starts[k], p.name_starts[k] + len(names[k])
            if m is None:
                m = _verbatim_base(self._d.text, scalar)
                if m is None:
                    m = cached_map(self._d, scalar)
                    if m is None:
                        return
            if isinstance(m, int):  # the value is written verbatim from offset m
                if not (0 <= a < b <= len(scalar.raw)):
                    continue
                s, e = m + a, m + b
            else:
                if not (0 <= a < b <= len(m.starts)):
                    continue
                s, e = m.starts[a], m.ends[b - 1]
            self._occ.append(Occurrence(sym, s, e, _span(self._d.index, s, e), role))

    def _field(self, owner: str | None, name: str) -> Symbol | None:
        if owner is not None and name in self._contract(owner):
            return Symbol.field(owner, name)
        return None

    def _resolve(
        self, root: str, segs: tuple[str, ...], *, node: Any, edge: Any, merge: bool
    ) -> Iterator[tuple[int, Symbol]]:
        """(segment index, symbol) for the declared names a path reads,
        resolved in the reference context of its location
        (:class:`loopc.compiler.typecheck_context.ContextBuilder`)."""
        plan = self._p
        if not segs:
            return
        first = segs[0]
        sym: Symbol | None = None
        if root == "run.input":
            sym = self._field("plan.input", first)
        elif root == "run.state":
            sym = self._field("plan.state", first)
        elif merge:
            cfg = node.config
            if root == "branches" and cfg.fork_id is not None and cfg.mode == "all":
                owner = plan.nodes.get(cfg.fork_id)
                if owner is not None and isinstance(owner.config, (Fork, Switch)) and first in c_ports(owner.config):
                    yield 0, Symbol.port(owner.id, first)
                    if len(segs) > 1:
                        s1 = self._field(f"{node.id}:input", segs[1])
                        if s1 is not None:
                            yield 1, s1
            elif (
                root == "winner"
                and cfg.fork_id is not None
                and cfg.mode == "any"
                and first == "value"
                and len(segs) > 1
            ):
                s1 = self._field(f"{node.id}:input", segs[1])
                if s1 is not None:
                    yield 1, s1
            return
        elif root == "input":
            if edge is not None:
                src = plan.nodes.get(edge.from_node)
                if src is not None and not isinstance(src.config, Join):
                    sym = self._field(input_owner(src), first)
            elif node is not None:
                sym = self._field(input_owner(node), first)
        elif root == "output" and edge is not None:
            src = plan.nodes.get(edge.from_node)
            if src is not None:
                sym = self._field(output_owner(src, edge.from_port), first)
        elif root == "loop" and first == "state" and len(segs) > 1:
            loop_id = self._loop_of(node, edge)
            s1 = self._field(f"{loop_id}:state", segs[1]) if loop_id is not None else None
            if s1 is not None:
                yield 1, s1
            return
        if sym is not None:
            yield 0, sym

    def _loop_of(self, node: Any, edge: Any) -> str | None:
        plan = self._p
        if edge is not None:
            src = plan.nodes.get(edge.from_node)
            if src is not None and isinstance(src.config, Loop) and edge.from_port == "body":
                return src.id
            return self.scopes.loop_of(edge.id, edge=True) if self.scopes is not None else None
        if node is not None and self.scopes is not None:
            return self.scopes.loop_of(node.id)
        return None


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _verbatim_base(text: str, scalar: YScalar) -> int | None:
    """Offset at which ``scalar``'s value is written character for character
    (a one-line plain or quoted scalar without escapes), else ``None`` (then
    :func:`loopc.compiler.scalarpos.cached_map` maps each character)."""
    if scalar.style in ("|", ">") or scalar.line != scalar.end_line:
        return None
    base = scalar.start + (1 if scalar.style in ("'", '"') else 0)
    raw = scalar.raw
    return base if text.startswith(raw, base) and "\\" not in raw and "''" not in raw else None


def _span(index: Any, start: int, end: int) -> Span:
    """Located span of offsets ``[start, end)``."""
    if index is None:
        return Span(1, 1, 1, 1, start, end)
    sl, sc = index.position(start)
    el, ec = index.position(end)
    return Span(sl + 1, sc + 1, el + 1, ec + 1, start, end)


def _describe_owner(owner: str) -> str:
    if owner.startswith("plan."):
        what = owner[5:]
        return "the Run state" if what == "state" else f"the Plan {what}"
    nid, _, which = owner.partition(":")
    return {
        "input": f"the input of '{nid}'",
        "callbackOutput": f"the callback output of '{nid}'",
        "result": f"the result of join '{nid}'",
        "state": f"the state of loop '{nid}'",
    }.get(which, owner)


def _insert_key(doc: YDocument, holder: Any, key: str, value: str) -> tuple[int, str] | None:
    """(offset, text) inserting ``key: value`` into the mapping ``holder``:
    before the closing brace of a flow mapping; in a block mapping, on a new
    line after the first pair written on one line (so a trailing comment
    stays on its line), at the pairs' indentation."""
    if not isinstance(holder, YMap) or not holder.kv:
        return None
    text = doc.text
    if holder.flow:
        close = holder.end - 1
        if not (0 <= close < len(text)) or text[close] != "}":
            return None
        j = close - 1
        while j > holder.start and text[j] in " \t\r\n":
            j -= 1
        sep = " " if text[j] in ",{" else ", "
        return close, f"{sep}{key}: {value}"
    index = doc.index
    nl = "\r\n" if "\r\n" in text else "\r" if "\r" in text and "\n" not in text else "\n"
    indent = " " * holder.col
    pairs = sorted(((kn, v) for _k, kn, v in holder.pairs()), key=lambda p: p[0].start)
    for kn, v in pairs:
        one_line = v.line == kn.line == v.end_line and (
            (isinstance(v, YScalar) and v.style not in ("|", ">")) or (isinstance(v, (YMap, YSeq)) and v.flow)
        )
        if one_line:
            return index.line_end(v.end_line), f"{nl}{indent}{key}: {value}"
    first = pairs[0][0]
    return first.start, f"{key}: {value}{nl}{indent}"
