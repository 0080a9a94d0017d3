"""Navigation, rename and the document outline (docs/editors.md#features),
over the check result's symbol index (:attr:`loopc.CheckResult.symbols`,
offsets into the checked text): go to definition, find references, rename
edits, the node under the cursor and the domain outline (contracts, nodes
with their source ports, edges).  Plain data in editor offsets.
"""

from __future__ import annotations

from typing import Any

import attrs

from loopc.compiler.symbols import Occurrence, RenameError, Symbol, SymbolIndex
from loopc.ide.document import Document, Range

__all__ = [
    "OutlineSymbol",
    "TextEdit",
    "RenameError",
    "occurrence_at",
    "definition",
    "references",
    "prepare_rename",
    "rename",
    "node_at",
    "document_symbols",
]


@attrs.frozen
class TextEdit:
    """Replace editor ``range`` with ``new_text``."""

    range: Range
    new_text: str


@attrs.frozen
class OutlineSymbol:
    """One outline entry: ``kind`` is a symbol-kind name of the LSP
    (``Namespace``, ``Field``, ``Function``, ``EnumMember``, ``Event``);
    ``children`` is ``None`` for a leaf."""

    name: str
    kind: str
    range: Range
    selection: Range
    detail: str | None = None
    children: tuple[OutlineSymbol, ...] | None = None


def occurrence_at(doc: Document, offset: int) -> tuple[SymbolIndex, Occurrence] | None:
    """The symbol index and the occurrence at editor ``offset``, or ``None``."""
    if doc.plan is None:
        return None
    si: SymbolIndex = doc.result.symbols
    occ = si.occurrence_at(doc.checked_offset(offset))
    return (si, occ) if occ is not None else None


def _range(doc: Document, o: Occurrence) -> Range:
    return doc.doc_range(o.start, o.end)


def definition(doc: Document, offset: int) -> Range | None:
    """The declaration of the symbol at ``offset``, or ``None``."""
    hit = occurrence_at(doc, offset)
    if hit is None:
        return None
    si, occ = hit
    d = si.definition(occ.symbol)
    return _range(doc, d) if d is not None else None


def references(doc: Document, offset: int, include_decl: bool) -> list[Range] | None:
    """Every occurrence of the symbol at ``offset`` (with its declaration
    when ``include_decl``), or ``None`` when there is none."""
    hit = occurrence_at(doc, offset)
    if hit is None:
        return None
    si, occ = hit
    out = [_range(doc, o) for o in si.references(occ.symbol, include_definition=include_decl)]
    return out or None


def prepare_rename(doc: Document, offset: int) -> tuple[Range, str] | None:
    """The range and current name of a renamable symbol at ``offset``, or
    ``None`` (no symbol, or the index refuses to rename it)."""
    hit = occurrence_at(doc, offset)
    if hit is None:
        return None
    si, occ = hit
    if si.rename_refusal(occ.symbol) is not None:
        return None
    return _range(doc, occ), occ.symbol.name


def rename(doc: Document, offset: int, new_name: str) -> list[TextEdit] | None:
    """The edits renaming the symbol at ``offset`` to ``new_name``
    (:meth:`SymbolIndex.rename`), ``None`` when there is no symbol there.
    Raises :class:`RenameError` when the index refuses."""
    hit = occurrence_at(doc, offset)
    if hit is None:
        return None
    si, occ = hit
    return [TextEdit(doc.span_range(e.span), e.new_text) for e in si.rename(occ.symbol, new_name)]


def node_at(doc: Document, offset: int) -> str | None:
    """The id of the node whose symbol is at ``offset``, or ``None``."""
    hit = occurrence_at(doc, offset)
    if hit is None or hit[1].symbol.kind != "node":
        return None
    return hit[1].symbol.name


def _kv_range(doc: Document, holder: Any, key: str) -> tuple[Range, Range] | None:
    from loopc.compiler.yamlnodes import YMap

    if not isinstance(holder, YMap):
        return None
    kn = holder.key_node(key)
    v = holder.get(key)
    if kn is None or v is None:
        return None
    end = max(v.end, kn.end)
    return doc.doc_range(kn.start, end), doc.doc_range(kn.start, kn.end)


def document_symbols(doc: Document) -> list[OutlineSymbol]:
    """The outline: ``input``/``output``/``state`` with their fields,
    ``nodes`` with each node's source ports, ``edges`` (empty without a plan)."""
    from loopc.compiler import types as T
    from loopc.compiler.ports import source_ports
    from loopc.compiler.yamlnodes import YMap

    plan = doc.plan
    if plan is None or not isinstance(plan.src, YMap):
        return []
    si = doc.result.symbols
    out: list[OutlineSymbol] = []
    for key in ("input", "output", "state"):
        r = _kv_range(doc, plan.src, key)
        if r is None:
            continue
        holder = plan.src.get(key)
        kids = []
        for name, fs in getattr(plan, key).items():
            fr = _kv_range(doc, holder, name)
            if fr is None:
                continue
            kids.append(OutlineSymbol(name, "Field", fr[0], fr[1], T.describe(T.type_of_field(fs))))
        out.append(OutlineSymbol(key, "Namespace", r[0], r[1], f"{len(kids)} field(s)", tuple(kids)))
    nr = _kv_range(doc, plan.src, "nodes")
    if nr is not None:
        kids = []
        for node in plan.nodes.values():
            if not isinstance(node.src, YMap):
                continue
            rng = doc.doc_range(node.src.start, node.src.end)
            idn = node.src.get("id")
            sel = doc.doc_range(idn.start, idn.end) if idn is not None else rng
            ports = []
            for p in source_ports(node):
                d = next((o for o in si.references(Symbol.port(node.id, p)) if o.is_definition), None)
                psel = doc.doc_range(d.start, d.end) if d is not None else sel
                ports.append(OutlineSymbol(p, "EnumMember", psel, psel, "port"))
            kids.append(OutlineSymbol(node.id, "Function", rng, sel, node.type, tuple(ports)))
        out.append(OutlineSymbol("nodes", "Namespace", nr[0], nr[1], f"{len(kids)} node(s)", tuple(kids)))
    er = _kv_range(doc, plan.src, "edges")
    if er is not None:
        kids = []
        for edge in plan.edges.values():
            if not isinstance(edge.src, YMap):
                continue
            rng = doc.doc_range(edge.src.start, edge.src.end)
            idn = edge.src.get("id")
            sel = doc.doc_range(idn.start, idn.end) if idn is not None else rng
            to = edge.to_node + ("" if edge.to_port == "in" else f".{edge.to_port}")
            kids.append(OutlineSymbol(edge.id, "Event", rng, sel, f"{edge.from_node}.{edge.from_port} → {to}"))
        out.append(OutlineSymbol("edges", "Namespace", er[0], er[1], f"{len(kids)} edge(s)", tuple(kids)))
    return out
