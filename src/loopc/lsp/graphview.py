"""Call hierarchy, code lens and inlay hints at the protocol edge
(docs/editors.md#features): :mod:`loopc.ide.graph`'s plain results as
:mod:`lsprotocol` objects.  ``a`` is the current
:class:`~loopc.lsp.analysis.Analysis` of an analysed plan."""
from __future__ import annotations

from typing import Any

from lsprotocol import types as lsp

from loopc.ide import graph as G


def _item(a: Any, it: G.NodeItem) -> lsp.CallHierarchyItem:
    return lsp.CallHierarchyItem(name=it.node, kind=lsp.SymbolKind.Function, uri=a.uri, range=a.index.range(it.range),
                                 selection_range=a.index.range(it.selection), detail=it.type, data={"node": it.node})


def prepare(a: Any, node_id: str) -> list[lsp.CallHierarchyItem] | None:
    it = G.prepare(a.doc, node_id)
    return [_item(a, it)] if it is not None else None


def incoming(a: Any, node_id: str) -> list[lsp.CallHierarchyIncomingCall]:
    return [lsp.CallHierarchyIncomingCall(from_=_item(a, c.item), from_ranges=[a.index.range(r) for r in c.ranges])
            for c in G.incoming(a.doc, node_id)]


def outgoing(a: Any, node_id: str) -> list[lsp.CallHierarchyOutgoingCall]:
    return [lsp.CallHierarchyOutgoingCall(to=_item(a, c.item), from_ranges=[a.index.range(r) for r in c.ranges])
            for c in G.outgoing(a.doc, node_id)]


def code_lenses(a: Any) -> list[lsp.CodeLens]:
    return [lsp.CodeLens(range=a.index.range(x.range), command=lsp.Command(title=x.title, command=""))
            for x in G.code_lenses(a.doc)]


def inlay_hints(a: Any, rng: lsp.Range) -> list[lsp.InlayHint]:
    lo, hi = a.index.offset(rng.start), a.index.offset(rng.end)
    return [lsp.InlayHint(position=a.index.position(h.offset), label=h.label, kind=lsp.InlayHintKind.Type,
                          padding_left=True)
            for h in G.inlay_hints(a.doc, lo, hi)]
