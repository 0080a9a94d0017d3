"""Completion (docs/editors.md#features).

Where the cursor is comes from the text (:mod:`loopc.ide.cursor`, so
half-typed YAML completes); what to offer comes from the language's own
tables and the latest plan model of the document:

* keys by schema position — the closed key sets of the node-kind registry
  (:mod:`loopc.kinds`) and of the schema pass (:mod:`loopc.compiler.schema`),
  the node's config key by its ``type``,
  ``bind``/``merge``/``init``/``assign`` keys from the contract they build;
* values — node types, FieldSchema types, enum-valued keys (``completion``,
  ``mode``, ``status``, ``failureMode``, booleans), durations, node ids
  (``entry``, edge endpoints), owners (``forkId``: forks and all_match
  switches, ``fanOutId``: fan-outs), the valid ports of the chosen node and
  direction;
* references — inside ``ref:``, ``{{ }}`` templates and bare expressions
  (``when``, ``condition``, ``expr``): the reference roots legal at the
  cursor and the fields of the typed value before the last dot, with types,
  from the same context rules the type checker applies
  (:class:`loopc.compiler.typecheck_context.ContextBuilder`).

Shapes: :func:`complete` returns a list of :class:`CompletionItem` (plain
data in editor code-point offsets: the partial word before the cursor and
the whole word around it), which the language server converts.  The key
tables (booleans, durations, contracts, expressions) are derived from the
declarations (:mod:`loopc.ide.keys`).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

import attrs

from loopc import kinds
from loopc.compiler import schema as S
from loopc.compiler.model import FIELD_TYPES
from loopc.ide import keys as _keys
from loopc.ide.cursor import Cursor, _flow_pairs, cursor_at
from loopc.ide.document import Range
from loopc.lineindex import LineIndex

#: characters after which a front end should ask for completion
TRIGGER_CHARACTERS = (".", ":", "{")

DURATIONS = ("PT30S", "PT1M", "PT5M", "PT10M", "PT30M", "PT1H", "PT12H", "P1D", "P7D")
_PATH_TAIL = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*$|$")


_WORD_TAIL = re.compile(r"[A-Za-z0-9_\-]*")
_SEGMENT_TAIL = re.compile(r"[A-Za-z0-9_]*")


@attrs.frozen
class Edit:
    """Where a completion goes: ``insert`` is the partial word before the
    cursor, ``replace`` the whole word around it (``doc|ument_url``: all of
    ``document_url``), both in editor offsets."""

    insert: Range
    replace: Range


@attrs.frozen
class CompletionItem:
    """One completion: ``label``; ``kind`` a completion-item-kind name of
    the LSP (``Property``, ``Value``, ``EnumMember``, ``Reference``,
    ``Module``, ``Field``); ``detail``; ``new_text`` the text to put at
    ``edit``; ``sort`` the sort key (``None``: by label)."""

    label: str
    kind: str
    detail: str | None
    edit: Edit
    new_text: str
    sort: str | None = None


def _item(
    label: str, kind: str, detail: str | None, rng: Edit, new_text: str | None = None, sort: str | None = None
) -> CompletionItem:
    return CompletionItem(label, kind, detail, rng, new_text if new_text is not None else label, sort)


def _strip_dashes(path: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(p for p in path if p != "-")


def _levels(cur: Cursor) -> list[dict[str, str]]:
    return [cur.siblings, *cur.item_siblings]


def _node_item(cur: Cursor) -> dict[str, str] | None:
    """Keys of the node mapping the cursor is in (or under)."""
    path = cur.path
    if len(path) < 2 or path[0] != "nodes":
        return None
    depth = len(path) - 2  # levels between the node item and the cursor's mapping
    levels = _levels(cur)
    return levels[depth] if depth < len(levels) else None


def _edge_item(cur: Cursor) -> dict[str, str] | None:
    path = cur.path
    if len(path) < 2 or path[0] != "edges":
        return None
    depth = len(path) - 2
    levels = _levels(cur)
    return levels[depth] if depth < len(levels) else None


def _flow(value: str) -> dict[str, str]:
    v = value.strip()
    if v.startswith("{"):
        return _flow_pairs(v[1:].split("}", 1)[0])
    return {}


class Completer:
    """One completion request over one editor text (``lines``: its line
    index) and the check results to read the plan from: ``result`` (the
    latest) and ``fallback`` (an older one, or ``None``)."""

    def __init__(self, text: str, lines: LineIndex, result: Any, fallback: Any = None) -> None:
        self.text = text
        self.lines = lines
        self.result: Any = result
        self.plan: Any = getattr(self.result, "plan", None)
        fb = fallback
        #: results to look nodes and edges up in: the current model, then the
        #: last one that had them (an edit in progress can drop a node)
        self.results: list[Any] = [r for r in (self.result, fb) if getattr(r, "plan", None) is not None]
        if self.plan is None and self.results:
            self.result = self.results[0]
            self.plan = self.result.plan

    def _node(self, ident: str) -> Any:
        hit = self._lookup("node", ident)
        return hit[1] if hit is not None else None

    def _lookup(self, kind: str, ident: str) -> tuple[Any, Any] | None:
        for r in self.results:
            table = r.plan.nodes if kind == "node" else r.plan.edges
            if ident in table:
                return r, table[ident]
        return None

    # -- entry point -----------------------------------------------------------
    def complete(self, offset: int) -> list[CompletionItem]:
        line0, col0 = self.lines.position(offset)
        cur = cursor_at(self.text, line0, col0)
        if cur.key is not None and (ref := self._ref_prefix(cur)) is not None:
            return self.references(cur, ref, offset)
        start = offset - len(cur.prefix)
        end = self._word_end(offset, _WORD_TAIL)
        rng = self._edit(start, offset, end)
        pad = " " if cur.after_colon else ""
        if cur.key is None:
            colon = self.text[end : end + 64].lstrip(" \t").startswith(":")  # the key's colon is there already
            return [
                _item(k, "Property", d, rng, k if colon else f"{k}: " if not c else f"{k}:", sort=f"{i:03}")
                for i, (k, d, c) in enumerate(self.keys(cur))
            ]
        return [_item(v, kind, d, rng, pad + v, sort=f"{i:03}") for i, (v, kind, d) in enumerate(self.values(cur))]

    def _word_end(self, offset: int, tail: re.Pattern[str]) -> int:
        """End of the word the cursor is in (its characters after ``offset``,
        on the same line)."""
        m = tail.match(self.text, offset)
        return m.end() if m is not None else offset

    def _edit(self, start: int, cursor: int, end: int) -> Edit:
        return Edit(Range(start, cursor), Range(start, end))

    # -- keys ------------------------------------------------------------------
    def keys(self, cur: Cursor) -> list[tuple[str, str | None, bool]]:
        """(key, detail, opens a block) for the mapping at the cursor, minus
        keys already present."""
        path = _strip_dashes(cur.path)
        raw = cur.path
        present = set(cur.siblings)
        out: list[tuple[str, str | None, bool]] = []

        def add(keys: Iterable[str], detail: str | None = None, block: frozenset[str] = frozenset()) -> None:
            for k in keys:
                if k not in present and k not in {o[0] for o in out}:
                    out.append((k, detail, k in block))

        if not path:
            order = ("apiVersion", "kind", "input", "output", "state", "entry", "nodes", "edges")
            add(order, "plan key", frozenset(("input", "output", "state", "nodes", "edges")))
        elif len(path) == 2 and path[0] in ("input", "output", "state"):
            add(sorted(S.FIELD_KEYS), "FieldSchema key")
        elif path == ("nodes",) and raw[-1] == "-":
            t = cur.siblings.get("type")
            add(S.NODE_KEYS, "node key", frozenset(("input", "retry")))
            tables = kinds.tables()
            node_config_keys = tables.node_config_keys
            if t is not None and t in node_config_keys:
                add([node_config_keys[t]], f"configuration of a {t} node", frozenset([node_config_keys[t]]))
                if t not in tables.retry_capable:
                    out[:] = [o for o in out if o[0] != "retry"]
            else:
                add(node_config_keys.values(), "node configuration key", frozenset(node_config_keys.values()))
        elif len(path) >= 2 and path[0] == "nodes":
            last = path[-1]
            parent = path[-2] if len(path) >= 2 else ""
            if last == "retry":
                add(sorted(S.RETRY_KEYS), "retry key")
            elif last in kinds.tables().config_keys and len(path) == 2:
                add(sorted(kinds.tables().config_keys[last]), f"{last} key")
            elif last == "cases" and raw[-1] == "-":
                add(("port", "when"), "switch case key")
            elif last == "workItems":
                add(sorted(S.WORK_ITEMS_KEYS), "workItems key")
            elif parent in _keys.contract_keys() or (parent == "state" and "loop" in path):
                add(sorted(S.FIELD_KEYS), "FieldSchema key")
            elif last in ("merge", "init", "assign"):
                for name, detail in self.contract_fields(cur, last):
                    add([name], detail)
            elif last == "items" and parent in _keys.contract_keys():
                add(sorted(S.FIELD_KEYS), "FieldSchema key")
        elif path == ("edges",) and raw[-1] == "-":
            add(("id", "from", "to", "bind", "label"), "edge key")
        elif len(path) == 2 and path[0] == "edges" and path[1] in ("from", "to"):
            add(("node", "port"), f"edge `{path[1]}` key")
        elif len(path) == 2 and path[0] == "edges" and path[1] == "bind":
            for name, detail in self.contract_fields(cur, "bind"):
                add([name], detail)
        return out

    def contract_fields(self, cur: Cursor, what: str) -> list[tuple[str, str]]:
        """Fields of the contract a ``bind``/``merge``/``init``/``assign``
        mapping builds."""
        from loopc.compiler import types as T
        from loopc.compiler.ports import effective_input

        plan = self.plan
        if plan is None:
            return []
        contract: Any = None
        if what == "assign":
            contract = plan.state
        elif what == "bind":
            e = _edge_item(cur) or {}
            to = _flow(e.get("to", ""))
            node = self._node(to.get("node", ""))
            if node is not None:
                port = to.get("port", "in") or "in"
                if port in ("continue", "break") and node.type == "loop":
                    contract = node.config.state
                else:
                    contract = effective_input(node, plan.output)
        else:
            n = _node_item(cur) or {}
            node = self._node(n.get("id", ""))
            if node is not None:
                if what == "merge" and node.type == "join":
                    contract = node.config.result
                elif what == "init" and node.type == "loop":
                    contract = node.config.state
        if not contract:
            return []
        out = []
        for name, fs in contract.items():
            req = "required " if fs.required and not fs.has_default else ""
            out.append((name, f"{req}{T.describe(T.type_of_field(fs))}"))
        return out

    # -- values ----------------------------------------------------------------
    def values(self, cur: Cursor) -> list[tuple[str, str, str | None]]:
        path = _strip_dashes(cur.path)
        key = cur.key
        V, E, R = "Value", "EnumMember", "Reference"
        if not path:
            if key == "apiVersion":
                return [(S.API_VERSION, V, None)]
            if key == "kind":
                return [(S.KIND, V, None)]
            if key == "entry":
                return self.node_ids()
            return []
        if key == "type":
            if path == ("nodes",):
                return [(t, E, f"config key `{k}`") for t, k in kinds.tables().node_config_keys.items()]
            return [(t, E, "field type") for t in FIELD_TYPES]
        if key in _keys.bool_keys():
            return [("true", V, None), ("false", V, None)]
        last = path[-1]
        enums = kinds.tables().enums
        if path[0] == "nodes" and last in enums and key is not None and key in enums[last]:
            return [(v, E, None) for v in enums[last][key]]
        if (last, key) in _keys.duration_keys():
            return [(d, V, "ISO 8601 duration") for d in DURATIONS]
        closes = kinds.tables().closes.get(key) if key is not None else None
        if closes is not None:  # forkId / fanOutId: the owners of the scopes it may close (Kind.closes)
            ks = kinds.tables().kinds
            return [
                (n.id, R, n.type)
                for n in self.nodes()
                if (k := ks.get(n.type)) is not None and k.opened_scope(n.config) in closes
            ]
        if path[0] == "edges" and last in ("from", "to") and key == "node":
            return self.node_ids()
        if path[0] == "edges" and last in ("from", "to") and key == "port":
            return self.ports(cur, last)
        return []

    def nodes(self) -> list[Any]:
        return list(self.plan.nodes.values()) if self.plan is not None else []

    def node_ids(self) -> list[tuple[str, str, str | None]]:
        return [(n.id, "Reference", n.type) for n in self.nodes()]

    def ports(self, cur: Cursor, end: str) -> list[tuple[str, str, str | None]]:
        from loopc.compiler.ports import source_ports, target_ports

        if self.plan is None:
            return []
        node = self._node(cur.siblings.get("node", ""))
        if node is None:
            return []
        ports = source_ports(node) if end == "from" else target_ports(node)
        return [(p, "EnumMember", f"{'source' if end == 'from' else 'target'} port of '{node.id}'") for p in ports]

    # -- references ----------------------------------------------------------------
    def _ref_prefix(self, cur: Cursor) -> str | None:
        """The partial reference path before the cursor, or ``None`` when
        the cursor is not in a reference position."""
        v = cur.value_text
        if cur.key == "ref":
            return _PATH_TAIL.search(v).group(0)  # type: ignore[union-attr]
        if "{{" in v and "}}" not in v[v.rfind("{{") :]:
            return _PATH_TAIL.search(v).group(0)  # type: ignore[union-attr]
        if cur.key in _keys.expr_keys():
            return _PATH_TAIL.search(v).group(0)  # type: ignore[union-attr]
        return None

    def context(self, cur: Cursor) -> Any:
        from loopc.compiler.typecheck_context import ContextBuilder

        path = _strip_dashes(cur.path)
        if path and path[0] == "nodes":
            n = _node_item(cur) or {}
            hit = self._lookup("node", n.get("id", ""))
            if hit is None:
                return None
            res, node = hit
            cb = ContextBuilder(res.plan, res.scopes)
            if node.type == "wait" and cur.key == "condition":
                return cb.wait_condition(node)
            if node.type == "join" and "merge" in path:
                return cb.join_merge(node)
            return cb.node_config(node)
        if path and path[0] == "edges":
            e = _edge_item(cur) or {}
            hit = self._lookup("edge", e.get("id", ""))
            if hit is None:
                return None
            res, edge = hit
            cb = ContextBuilder(res.plan, res.scopes)
            src = res.plan.nodes.get(edge.from_node)
            if src is None:
                return None
            return cb.edge_bind(edge, src)
        return None

    def references(self, cur: Cursor, partial: str, offset: int) -> list[CompletionItem]:
        ctx = self.context(cur)
        if ctx is None:
            return []
        segs = partial.split(".")
        last = segs[-1]
        rng = self._edit(offset - len(last), offset, self._word_end(offset, _SEGMENT_TAIL))
        from loopc.compiler import types as T

        if len(segs) == 1:
            out = []
            for root, t in ctx.roots.items():
                out.append(_item(root, "Module", T.describe(t), rng))
            return out
        head = segs[:-1]
        t = ctx.roots.get(head[0])
        for s in head[1:]:
            if t is None:
                break
            t = t.field(s)
        if t is None or not t.is_typed_object:
            return []
        return [_item(name, "Field", T.describe(ft), rng) for name, ft in t.fields or ()]


def complete(
    text: str, offset: int, result: Any, fallback: Any = None, *, lines: LineIndex | None = None
) -> list[CompletionItem]:
    """Completion items at editor code-point ``offset`` of ``text`` (see the
    module docstring); ``result`` is the check result with the latest plan
    model (``None``: none), ``fallback`` an older one; ``lines`` the text's
    line index when the caller has one.  Never raises on half-typed text."""
    return Completer(text, lines if lines is not None else LineIndex(text), result, fallback).complete(offset)
