"""Graph neighbours and inline types (docs/editors.md#features):

* **call hierarchy** over the plan graph — incoming calls of a node are its
  upstream nodes (sources of edges into it), outgoing calls its downstream
  nodes, each with the ranges of the edge endpoints that connect them;
* **code lens** per node: ``2 upstream · 3 downstream · in fork `split`
  branch `legal``` (the innermost parallel or loop scope from the scope map);
* **inlay hints**: the resolved type after each ``ref:`` path (from the type
  pass) and, after each edge's target node, the contract the edge builds.

All read the check result of the current document version.
"""
from __future__ import annotations

from typing import Any

from lsprotocol import types as lsp

from loopc.compiler.yamlnodes import YMap, YScalar

MAX_HINT = 60


def _node_item(a: Any, node: Any) -> lsp.CallHierarchyItem | None:
    if not isinstance(node.src, YMap):
        return None
    rng = a.index.doc_range(node.src.start, node.src.end)
    idn = node.src.get("id")
    sel = a.index.doc_range(idn.start, idn.end) if idn is not None else rng
    return lsp.CallHierarchyItem(name=node.id, kind=lsp.SymbolKind.Function, uri=a.uri, range=rng,
                                 selection_range=sel, detail=node.type, data={"node": node.id})


def prepare(a: Any, node_id: str) -> list[lsp.CallHierarchyItem] | None:
    node = a.plan.nodes.get(node_id) if a.plan is not None else None
    item = _node_item(a, node) if node is not None else None
    return [item] if item is not None else None


def _end_range(a: Any, edge: Any, end: str) -> lsp.Range | None:
    m = edge.src.get(end) if isinstance(edge.src, YMap) else None
    n = m.get("node") if isinstance(m, YMap) else None
    return a.index.doc_range(n.start, n.end) if n is not None else None


def incoming(a: Any, node_id: str) -> list[lsp.CallHierarchyIncomingCall]:
    plan = a.plan
    groups: dict[str, list[lsp.Range]] = {}
    for e in plan.edges.values():
        if e.to_node == node_id and e.from_node in plan.nodes:
            r = _end_range(a, e, "from")
            groups.setdefault(e.from_node, []).extend([r] if r else [])
    out = []
    for nid, ranges in groups.items():
        item = _node_item(a, plan.nodes[nid])
        if item is not None:
            out.append(lsp.CallHierarchyIncomingCall(from_=item, from_ranges=ranges))
    return out


def outgoing(a: Any, node_id: str) -> list[lsp.CallHierarchyOutgoingCall]:
    plan = a.plan
    groups: dict[str, list[lsp.Range]] = {}
    for e in plan.edges.values():
        if e.from_node == node_id and e.to_node in plan.nodes:
            r = _end_range(a, e, "to")
            groups.setdefault(e.to_node, []).extend([r] if r else [])
    out = []
    for nid, ranges in groups.items():
        item = _node_item(a, plan.nodes[nid])
        if item is not None:
            out.append(lsp.CallHierarchyOutgoingCall(to=item, from_ranges=ranges))
    return out


def lens_title(a: Any, node_id: str) -> str:
    plan = a.plan
    up = {e.from_node for e in plan.edges.values() if e.to_node == node_id}
    down = {e.to_node for e in plan.edges.values() if e.from_node == node_id}
    parts = [f"{len(up)} upstream", f"{len(down)} downstream"]
    scopes = getattr(a.result, "scopes", None)
    stack = scopes.stack(node_id) if scopes is not None else ()
    if stack:
        s = stack[-1]
        kind = {"fork": "fork", "all_match": "all_match switch", "fan_out": "fan-out", "loop": "loop"}.get(s.kind, s.kind)
        where = f"in {kind} `{s.owner}`"
        if s.branch:
            where += f" branch `{s.branch}`"
        parts.append(where)
    return " · ".join(parts)


def code_lenses(a: Any) -> list[lsp.CodeLens]:
    out = []
    for node in a.plan.nodes.values():
        idn = node.src.get("id") if isinstance(node.src, YMap) else None
        if idn is None:
            continue
        out.append(lsp.CodeLens(range=a.index.doc_range(idn.start, idn.end),
                                command=lsp.Command(title=lens_title(a, node.id), command="")))
    return out


def _short(s: str) -> str:
    return s if len(s) <= MAX_HINT else s[: MAX_HINT - 1] + "…"


def inlay_hints(a: Any, rng: lsp.Range) -> list[lsp.InlayHint]:
    from loopc.compiler import types as T
    from loopc.compiler.model import Ref

    res = a.result
    types = getattr(res, "types", None)
    if types is None:
        return []
    lo, hi = a.index.offset(rng.start), a.index.offset(rng.end)
    out: list[lsp.InlayHint] = []

    def add(offset: int, label: str) -> None:
        if lo <= offset <= hi:
            out.append(lsp.InlayHint(position=a.index.position(offset), label=_short(label),
                                     kind=lsp.InlayHintKind.Type, padding_left=True))

    for obj, typed in types.values.items():
        if isinstance(obj, Ref) and isinstance(obj.src, YScalar):
            add(obj.src.end + a.index.shift, f": {T.describe(typed.type)}")
    for eid, contract in types.dest_contracts.items():
        edge = a.plan.edges.get(eid)
        m = edge.src.get("to") if edge is not None and isinstance(edge.src, YMap) else None
        n = m.get("node") if isinstance(m, YMap) else None
        if n is None:
            continue
        fields = ", ".join(f"{k}: {T.describe(T.type_of_field(fs))}" for k, fs in contract.items())
        add(n.end + a.index.shift, f"← {{{fields}}}")
    out.sort(key=lambda h: (h.position.line, h.position.character))
    return out
