"""Graph neighbours and inline types (docs/editors.md#features), as plain data:

* **call hierarchy** over the plan graph — incoming calls of a node are its
  upstream nodes (sources of edges into it), outgoing calls its downstream
  nodes, each with the ranges of the edge endpoints that connect them;
* **code lens** per node: ``2 upstream · 3 downstream · in fork `split`
  branch `legal``` (the innermost parallel or loop scope from the scope map);
* **inlay hints**: the resolved type after each ``ref:`` path (from the type
  pass) and, after each edge's target node, the contract the edge builds.

All read the check result of one :class:`~loopc.ide.document.Document`;
ranges and offsets are editor code-point offsets.
"""

from __future__ import annotations

from typing import Any

import attrs

from loopc.compiler.yamlnodes import YMap, YScalar
from loopc.ide.document import Document, Range

#: longest inlay hint label, in code points (longer ones end with ``…``)
MAX_HINT = 60


@attrs.frozen
class NodeItem:
    """A node as a call-hierarchy item: its id, kind, the range of its
    mapping and of its ``id`` value."""

    node: str
    type: str
    range: Range
    selection: Range


@attrs.frozen
class Call:
    """A neighbour of a node and the ranges (edge endpoints, in the node's
    document) that connect them."""

    item: NodeItem
    ranges: tuple[Range, ...]


@attrs.frozen
class Lens:
    """A code lens: ``title`` shown above ``range`` (a node's ``id``)."""

    range: Range
    title: str


@attrs.frozen
class InlayHint:
    """A type hint shown at editor ``offset``."""

    offset: int
    label: str


def node_item(doc: Document, node: Any) -> NodeItem | None:
    """The call-hierarchy item of ``node`` (``None`` when it has no source mapping)."""
    if not isinstance(node.src, YMap):
        return None
    rng = doc.doc_range(node.src.start, node.src.end)
    idn = node.src.get("id")
    sel = doc.doc_range(idn.start, idn.end) if idn is not None else rng
    return NodeItem(node.id, node.type, rng, sel)


def prepare(doc: Document, node_id: str) -> NodeItem | None:
    """The item of node ``node_id``, or ``None`` (no plan, no such node)."""
    plan = doc.plan
    node = plan.nodes.get(node_id) if plan is not None else None
    return node_item(doc, node) if node is not None else None


def _end_range(doc: Document, edge: Any, end: str) -> Range | None:
    m = edge.src.get(end) if isinstance(edge.src, YMap) else None
    n = m.get("node") if isinstance(m, YMap) else None
    return doc.doc_range(n.start, n.end) if n is not None else None


def _calls(doc: Document, node_id: str, incoming: bool) -> list[Call]:
    plan = doc.plan
    groups: dict[str, list[Range]] = {}
    for e in plan.edges.values():
        near, far = (e.to_node, e.from_node) if incoming else (e.from_node, e.to_node)
        if near == node_id and far in plan.nodes:
            r = _end_range(doc, e, "from" if incoming else "to")
            groups.setdefault(far, []).extend([r] if r else [])
    out = []
    for nid, ranges in groups.items():
        item = node_item(doc, plan.nodes[nid])
        if item is not None:
            out.append(Call(item, tuple(ranges)))
    return out


def incoming(doc: Document, node_id: str) -> list[Call]:
    """Upstream nodes of ``node_id`` (plan required), each with the ranges
    of the ``from.node`` values of the edges into it."""
    return _calls(doc, node_id, True)


def outgoing(doc: Document, node_id: str) -> list[Call]:
    """Downstream nodes of ``node_id`` (plan required), each with the ranges
    of the ``to.node`` values of the edges out of it."""
    return _calls(doc, node_id, False)


def lens_title(doc: Document, node_id: str) -> str:
    """``N upstream · M downstream`` and the innermost scope of ``node_id``."""
    plan = doc.plan
    up = {e.from_node for e in plan.edges.values() if e.to_node == node_id}
    down = {e.to_node for e in plan.edges.values() if e.from_node == node_id}
    parts = [f"{len(up)} upstream", f"{len(down)} downstream"]
    scopes = getattr(doc.result, "scopes", None)
    stack = scopes.stack(node_id) if scopes is not None else ()
    if stack:
        s = stack[-1]
        kind = {"fork": "fork", "all_match": "all_match switch", "fan_out": "fan-out", "loop": "loop"}.get(
            s.kind, s.kind
        )
        where = f"in {kind} `{s.owner}`"
        if s.branch:
            where += f" branch `{s.branch}`"
        parts.append(where)
    return " · ".join(parts)


def code_lenses(doc: Document) -> list[Lens]:
    """One lens per node with an ``id`` (plan required), in plan order."""
    out = []
    for node in doc.plan.nodes.values():
        idn = node.src.get("id") if isinstance(node.src, YMap) else None
        if idn is None:
            continue
        out.append(Lens(doc.doc_range(idn.start, idn.end), lens_title(doc, node.id)))
    return out


def _short(s: str) -> str:
    return s if len(s) <= MAX_HINT else s[: MAX_HINT - 1] + "…"


def inlay_hints(doc: Document, lo: int, hi: int) -> list[InlayHint]:
    """Type hints at editor offsets in ``[lo, hi]`` (plan required), in
    document order."""
    from loopc.compiler import types as T
    from loopc.compiler.model import Ref

    types = getattr(doc.result, "types", None)
    if types is None:
        return []
    out: list[InlayHint] = []

    def add(offset: int, label: str) -> None:
        if lo <= offset <= hi:
            out.append(InlayHint(offset, _short(label)))

    for obj, typed in types.values.items():
        if isinstance(obj, Ref) and isinstance(obj.src, YScalar):
            add(obj.src.end + doc.shift, f": {T.describe(typed.type)}")
    for eid, contract in types.dest_contracts.items():
        edge = doc.plan.edges.get(eid)
        m = edge.src.get("to") if edge is not None and isinstance(edge.src, YMap) else None
        n = m.get("node") if isinstance(m, YMap) else None
        if n is None:
            continue
        fields = ", ".join(f"{k}: {T.describe(T.type_of_field(fs))}" for k, fs in contract.items())
        add(n.end + doc.shift, f"← {{{fields}}}")
    out.sort(key=lambda h: h.offset)
    return out
