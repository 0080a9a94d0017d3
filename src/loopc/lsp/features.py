"""The editor features beyond diagnostics (docs/editors.md): completion,
hover, go to definition, find references, rename, document symbols and code
actions.  Each handler converts the protocol position to an offset, asks the
analysis of the current document version, and converts the answer back; a
handler that fails answers nothing (and logs), never an error response; a
request refused on purpose (an invalid rename) is a ``ResponseError`` with
the reason."""
from __future__ import annotations

from typing import Any

from lsprotocol import types as lsp

from loopc.compiler.symbols import Occurrence, RenameError, Symbol, SymbolIndex
from loopc.diagnostics import value_text
from loopc.lsp.analysis import Analysis

FIX_ALL_KIND = "source.fixAll.loopc"


def symbols_of(a: Analysis) -> SymbolIndex:
    """The check result's symbol index (:attr:`loopc.CheckResult.symbols`;
    offsets into the checked text, which is the editor's minus a BOM)."""
    return a.result.symbols


# ---------------------------------------------------------------------------
# descriptions (hover)
# ---------------------------------------------------------------------------

def _contract_md(contract: Any) -> str:
    from loopc.compiler import types as T

    if not contract:
        return "  *(none)*"
    rows = []
    for name, fs in contract.items():
        flags = []
        if fs.required:
            flags.append("required")
        if fs.has_default:
            flags.append("default")
        rows.append(f"  - `{name}`: {T.describe(T.type_of_field(fs))}" + (f" ({', '.join(flags)})" if flags else ""))
    return "\n".join(rows)


def _owner_contract(plan: Any, owner: str) -> tuple[str, Any]:
    from loopc.compiler.ports import effective_input

    if owner.startswith("plan."):
        what = owner.split(".", 1)[1]
        return f"the Plan {what}", getattr(plan, what, None)
    nid, _, which = owner.partition(":")
    node = plan.nodes.get(nid)
    if node is None:
        return owner, None
    cfg = node.config
    if which == "input":
        return f"the input of '{nid}'", effective_input(node, plan.output)
    if which == "callbackOutput":
        return f"the callback output of '{nid}'", getattr(cfg, "callback_output", None)
    if which == "result":
        return f"the result of join '{nid}'", getattr(cfg, "result", None)
    if which == "state":
        return f"the state of loop '{nid}'", getattr(cfg, "state", None)
    return owner, None


def describe_symbol(plan: Any, sym: Symbol) -> str | None:
    """Markdown hover text of a symbol."""
    from loopc.compiler import types as T
    from loopc.compiler.ports import output_contract, source_ports, target_ports

    if sym.kind == "node":
        node = plan.nodes.get(sym.name)
        if node is None:
            return None
        lines = [f"**node `{node.id}`** — `{node.type}`"]
        if node.label:
            lines.append(f"\n{node.label}")
        if node.description:
            lines.append(f"\n{node.description}")
        from loopc.compiler.ports import effective_input

        lines.append("\ninput:\n" + _contract_md(effective_input(node, plan.output)))
        outs = []
        for p in source_ports(node):
            oc = output_contract(node, p)
            fields = ", ".join(f"`{k}`: {T.describe(T.type_of_field(v))}" for k, v in (oc or {}).items())
            outs.append(f"  - `{p}`" + (f" → {{{fields}}}" if fields else ""))
        lines.append("\nsource ports:\n" + ("\n".join(outs) if outs else "  *(none)*"))
        lines.append("\ntarget ports: " + ", ".join(f"`{p}`" for p in target_ports(node)))
        return "\n".join(lines)
    if sym.kind == "port":
        node = plan.nodes.get(sym.owner)
        if node is None:
            return None
        port = sym.name
        if port in source_ports(node):
            oc = output_contract(node, port)
            body = "\n\n`output.*`:\n" + _contract_md(oc) if oc is not None else "\n\ncarries nothing under `output.*`"
            return f"**port `{port}`** — source port of `{node.type}` node `{node.id}`{body}"
        if port in target_ports(node):
            return f"**port `{port}`** — target port of `{node.type}` node `{node.id}`"
        return None
    if sym.kind == "field":
        where, contract = _owner_contract(plan, sym.owner)
        fs = (contract or {}).get(sym.name) if contract is not None else None
        if fs is None:
            return f"**field `{sym.name}`** of {where}"
        flags = []
        if fs.required:
            flags.append("required")
        if fs.has_default:
            flags.append(f"default `{value_text(fs.default)}`")
        text = f"**field `{sym.name}`**: {T.describe(T.type_of_field(fs))}" + (f" ({', '.join(flags)})" if flags else "")
        text += f"\n\nof {where}"
        if fs.description:
            text += f"\n\n{fs.description}"
        return text
    return None


def describe_code(code: str) -> str | None:
    from loopc import codes

    try:
        c = codes.get(code)
    except KeyError:
        return None
    expl = c.explanation.strip().split("\n\n", 1)[0]
    return f"**{c.code}** `{c.name}` ({c.severity.value}): {c.title}\n\n{expl}"


def _contains(r: lsp.Range, p: lsp.Position) -> bool:
    return (r.start.line, r.start.character) <= (p.line, p.character) <= (r.end.line, r.end.character)


def _ref_type_at(a: Analysis, offset: int) -> tuple[str, lsp.Range] | None:
    """The resolved type of the ``ref:`` path under the cursor, from the type
    pass (covers paths with no declaration in the plan: ``item.*``,
    ``loop.iteration``, ``output.code``, ``winner.key``, ``items``)."""
    from loopc.compiler import types as T
    from loopc.compiler.model import Ref
    from loopc.compiler.yamlnodes import YScalar

    types = getattr(a.result, "types", None)
    if types is None:
        return None
    doc_off = offset - a.index.shift
    for obj, typed in types.values.items():
        src = getattr(obj, "src", None)
        if isinstance(obj, Ref) and isinstance(src, YScalar) and src.start <= doc_off <= src.end:
            return f"`{obj.text}`: {T.describe(typed.type)}", a.index.doc_range(src.start, src.end)
    return None


def hover(a: Analysis, pos: lsp.Position) -> lsp.Hover | None:
    parts: list[str] = []
    rng: lsp.Range | None = None
    if a.plan is not None:
        occ = symbols_of(a).occurrence_at(a.index.offset(pos) - a.index.shift)
        if occ is not None:
            text = describe_symbol(a.plan, occ.symbol)
            if text:
                parts.append(text)
                rng = a.index.doc_range(occ.start, occ.end)
    if not parts and a.plan is not None:
        ref = _ref_type_at(a, a.index.offset(pos))
        if ref is not None:
            parts.append(ref[0])
            rng = ref[1]
    seen = set()
    for d in a.diagnostics:
        if _contains(d.range, pos) and d.code not in seen:
            seen.add(str(d.code))
            text = describe_code(str(d.code))
            if text:
                parts.append(text)
    if not parts:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)),
                     range=rng)


# ---------------------------------------------------------------------------
# navigation and rename
# ---------------------------------------------------------------------------

def occurrence_at(a: Analysis, pos: lsp.Position) -> tuple[SymbolIndex, Occurrence] | None:
    if a.plan is None:
        return None
    si = symbols_of(a)
    occ = si.occurrence_at(a.index.offset(pos) - a.index.shift)
    return (si, occ) if occ is not None else None


def _loc(a: Analysis, o: Occurrence) -> lsp.Location:
    return lsp.Location(uri=a.uri, range=a.index.doc_range(o.start, o.end))


def definition(a: Analysis, pos: lsp.Position) -> list[lsp.Location] | None:
    hit = occurrence_at(a, pos)
    if hit is None:
        return None
    si, occ = hit
    d = si.definition(occ.symbol)
    return [_loc(a, d)] if d is not None else None


def references(a: Analysis, pos: lsp.Position, include_decl: bool) -> list[lsp.Location] | None:
    hit = occurrence_at(a, pos)
    if hit is None:
        return None
    si, occ = hit
    sym = occ.symbol
    out = [_loc(a, o) for o in si.references(sym, include_definition=include_decl)]
    return out or None


def prepare_rename(a: Analysis, pos: lsp.Position) -> Any:
    hit = occurrence_at(a, pos)
    if hit is None:
        return None
    si, occ = hit
    if si.rename_refusal(occ.symbol) is not None:
        return None
    return lsp.PrepareRenamePlaceholder(range=a.index.doc_range(occ.start, occ.end), placeholder=occ.symbol.name)


def rename(a: Analysis, pos: lsp.Position, new_name: str, *,
           document_changes: bool = False) -> lsp.WorkspaceEdit | None:
    """The index's rename edits (:meth:`SymbolIndex.rename`) as one
    workspace edit — ``documentChanges`` with the document's version when
    the client supports them (``document_changes``), so it can refuse an
    edit of a text that changed meanwhile; else ``changes``.
    :class:`RenameError` when the index refuses."""
    hit = occurrence_at(a, pos)
    if hit is None:
        return None
    si, occ = hit
    edits = [lsp.TextEdit(range=a.index.span_range(e.span), new_text=e.new_text)
             for e in si.rename(occ.symbol, new_name)]
    if document_changes:
        doc = lsp.OptionalVersionedTextDocumentIdentifier(uri=a.uri, version=a.version)
        return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=doc, edits=list(edits))])
    return lsp.WorkspaceEdit(changes={a.uri: edits})


# ---------------------------------------------------------------------------
# document symbols (the domain outline)
# ---------------------------------------------------------------------------

def _kv_range(a: Analysis, holder: Any, key: str) -> tuple[lsp.Range, lsp.Range] | None:
    from loopc.compiler.yamlnodes import YMap

    if not isinstance(holder, YMap):
        return None
    kn = holder.key_node(key)
    v = holder.get(key)
    if kn is None or v is None:
        return None
    end = max(v.end, kn.end)
    return a.index.doc_range(kn.start, end), a.index.doc_range(kn.start, kn.end)


def document_symbols(a: Analysis) -> list[lsp.DocumentSymbol]:
    from loopc.compiler import types as T
    from loopc.compiler.ports import source_ports
    from loopc.compiler.yamlnodes import YMap

    plan = a.plan
    if plan is None or not isinstance(plan.src, YMap):
        return []
    si = symbols_of(a)
    K = lsp.SymbolKind
    out: list[lsp.DocumentSymbol] = []
    for key in ("input", "output", "state"):
        r = _kv_range(a, plan.src, key)
        if r is None:
            continue
        holder = plan.src.get(key)
        kids = []
        for name, fs in getattr(plan, key).items():
            fr = _kv_range(a, holder, name)
            if fr is None:
                continue
            kids.append(lsp.DocumentSymbol(name=name, kind=K.Field, range=fr[0], selection_range=fr[1],
                                           detail=T.describe(T.type_of_field(fs))))
        out.append(lsp.DocumentSymbol(name=key, kind=K.Namespace, range=r[0], selection_range=r[1],
                                      detail=f"{len(kids)} field(s)", children=kids))
    nr = _kv_range(a, plan.src, "nodes")
    if nr is not None:
        kids = []
        for node in plan.nodes.values():
            if not isinstance(node.src, YMap):
                continue
            rng = a.index.doc_range(node.src.start, node.src.end)
            idn = node.src.get("id")
            sel = a.index.doc_range(idn.start, idn.end) if idn is not None else rng
            ports = []
            for p in source_ports(node):
                d = next((o for o in si.references(Symbol.port(node.id, p)) if o.is_definition), None)
                psel = a.index.doc_range(d.start, d.end) if d is not None else sel
                ports.append(lsp.DocumentSymbol(name=p, kind=K.EnumMember, range=psel, selection_range=psel,
                                                detail="port"))
            kids.append(lsp.DocumentSymbol(name=node.id, kind=K.Function, range=rng, selection_range=sel,
                                           detail=node.type, children=ports))
        out.append(lsp.DocumentSymbol(name="nodes", kind=K.Namespace, range=nr[0], selection_range=nr[1],
                                      detail=f"{len(kids)} node(s)", children=kids))
    er = _kv_range(a, plan.src, "edges")
    if er is not None:
        kids = []
        for edge in plan.edges.values():
            if not isinstance(edge.src, YMap):
                continue
            rng = a.index.doc_range(edge.src.start, edge.src.end)
            idn = edge.src.get("id")
            sel = a.index.doc_range(idn.start, idn.end) if idn is not None else rng
            to = edge.to_node + ("" if edge.to_port == "in" else f".{edge.to_port}")
            kids.append(lsp.DocumentSymbol(name=edge.id, kind=K.Event, range=rng, selection_range=sel,
                                           detail=f"{edge.from_node}.{edge.from_port} → {to}"))
        out.append(lsp.DocumentSymbol(name="edges", kind=K.Namespace, range=er[0], selection_range=er[1],
                                      detail=f"{len(kids)} edge(s)", children=kids))
    return out


# ---------------------------------------------------------------------------
# code actions
# ---------------------------------------------------------------------------

def _edits_of(fix: dict[str, Any]) -> list[lsp.TextEdit]:
    out = []
    for e in fix.get("edits", []):
        r = e["range"]
        out.append(lsp.TextEdit(
            range=lsp.Range(start=lsp.Position(line=r["start"]["line"], character=r["start"]["character"]),
                            end=lsp.Position(line=r["end"]["line"], character=r["end"]["character"])),
            new_text=e["newText"]))
    return out


def _fix_of(d: lsp.Diagnostic) -> dict[str, Any] | None:
    data = d.data
    if isinstance(data, dict) and isinstance(data.get("fix"), dict) and d.source == "loopc":
        return data["fix"]
    return None


def _range_key(r: lsp.Range) -> tuple[int, int, int, int]:
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def code_actions(a: Analysis, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    only = params.context.only
    want_quick = not only or any(str(k).startswith("quickfix") for k in only)
    want_all = not only or any(FIX_ALL_KIND.startswith(str(k)) or str(k) == FIX_ALL_KIND for k in only)
    out: list[lsp.CodeAction] = []
    if want_quick:
        # every fix, safe or not, is a quick fix; a diagnostic the client sent
        # back without its `data` is matched to ours by code and range
        ours = {(str(d.code), _range_key(d.range)): d for d in a.diagnostics if _fix_of(d) is not None}
        for d in params.context.diagnostics:
            fix = _fix_of(d) or _fix_of(ours.get((str(d.code), _range_key(d.range)), d))
            if fix is None or not fix.get("edits"):
                continue
            out.append(lsp.CodeAction(
                title=fix["message"], kind=lsp.CodeActionKind.QuickFix, diagnostics=[d],
                is_preferred=bool(fix.get("safe")),
                edit=lsp.WorkspaceEdit(changes={a.uri: _edits_of(fix)})))
    if want_all:
        edits: list[lsp.TextEdit] = []
        taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
        for d in a.diagnostics:
            fix = _fix_of(d)
            if fix is None or not fix.get("safe"):
                continue
            es = _edits_of(fix)
            spans = [((e.range.start.line, e.range.start.character), (e.range.end.line, e.range.end.character))
                     for e in es]
            if any(not (e2 <= s1 or s2 >= e1) for s1, e1 in spans for s2, e2 in taken):
                continue  # overlapping fixes: apply one, the next check offers the other
            taken.extend(spans)
            edits.extend(es)
        if edits:
            out.append(lsp.CodeAction(title="loopc: apply all safe fixes", kind=FIX_ALL_KIND,
                                      edit=lsp.WorkspaceEdit(changes={a.uri: edits})))
    return out


# ---------------------------------------------------------------------------
# registration
# ---------------------------------------------------------------------------

def register(server: Any) -> None:
    """Register every feature handler on ``server`` (a LoopcServer): each is
    ``fn(ls, a, params)`` over the current analysis ``a`` of an analysed
    plan, registered with :meth:`LoopcServer.document_feature` (awaited off
    the message loop; a failure answers the default and is logged)."""
    from loopc.lsp import completion as C
    from loopc.lsp import graphview as GV
    from loopc.lsp import semantic as SEM
    from loopc.lsp.server import Refused

    feature = server.document_feature

    @feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=C.TRIGGER_CHARACTERS),
             what="completion")
    def on_completion(ls: Any, a: Analysis, params: lsp.CompletionParams) -> Any:
        items = C.complete(a.text, a.index, ls.model(a.uri), params.position, ls.last_good.get(a.uri),
                           replace_support=ls.supports("text_document.completion.completion_item.insert_replace_support"))
        return lsp.CompletionList(is_incomplete=False, items=items)

    @feature(lsp.TEXT_DOCUMENT_HOVER, what="hover")
    def on_hover(ls: Any, a: Analysis, params: lsp.HoverParams) -> Any:
        return hover(a, params.position)

    @feature(lsp.TEXT_DOCUMENT_DEFINITION, what="definition")
    def on_definition(ls: Any, a: Analysis, params: lsp.DefinitionParams) -> Any:
        return definition(a, params.position)

    @feature(lsp.TEXT_DOCUMENT_REFERENCES, what="references")
    def on_references(ls: Any, a: Analysis, params: lsp.ReferenceParams) -> Any:
        return references(a, params.position, params.context.include_declaration)

    @feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME, what="prepareRename")
    def on_prepare_rename(ls: Any, a: Analysis, params: lsp.PrepareRenameParams) -> Any:
        return prepare_rename(a, params.position)

    @feature(lsp.TEXT_DOCUMENT_RENAME, lsp.RenameOptions(prepare_provider=True), what="rename")
    def on_rename(ls: Any, a: Analysis, params: lsp.RenameParams) -> Any:
        try:
            return rename(a, params.position, params.new_name,
                          document_changes=ls.supports("workspace.workspace_edit.document_changes"))
        except RenameError as exc:
            raise Refused(str(exc)) from None

    @feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL, what="documentSymbol")
    def on_symbols(ls: Any, a: Analysis, params: lsp.DocumentSymbolParams) -> Any:
        return document_symbols(a)

    def node_at(a: Analysis, pos: lsp.Position) -> str | None:
        hit = occurrence_at(a, pos)
        if hit is None or hit[1].symbol.kind != "node":
            return None
        return hit[1].symbol.name

    @feature(lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY, what="callHierarchy")
    def on_prepare_call_hierarchy(ls: Any, a: Analysis, params: lsp.CallHierarchyPrepareParams) -> Any:
        nid = node_at(a, params.position)
        return GV.prepare(a, nid) if nid is not None else None

    def _item_node(a: Analysis, item: lsp.CallHierarchyItem) -> str | None:
        nid = item.data.get("node") if isinstance(item.data, dict) else item.name
        if a.plan is None or nid not in a.plan.nodes:
            return None
        return nid

    @feature(lsp.CALL_HIERARCHY_INCOMING_CALLS, what="callHierarchy", uri_of=lambda p: p.item.uri)
    def on_incoming(ls: Any, a: Analysis, params: lsp.CallHierarchyIncomingCallsParams) -> Any:
        nid = _item_node(a, params.item)
        return GV.incoming(a, nid) if nid is not None else None

    @feature(lsp.CALL_HIERARCHY_OUTGOING_CALLS, what="callHierarchy", uri_of=lambda p: p.item.uri)
    def on_outgoing(ls: Any, a: Analysis, params: lsp.CallHierarchyOutgoingCallsParams) -> Any:
        nid = _item_node(a, params.item)
        return GV.outgoing(a, nid) if nid is not None else None

    @feature(lsp.TEXT_DOCUMENT_CODE_LENS, what="codeLens")
    def on_code_lens(ls: Any, a: Analysis, params: lsp.CodeLensParams) -> Any:
        return GV.code_lenses(a) if a.plan is not None else None

    @feature(lsp.TEXT_DOCUMENT_INLAY_HINT, what="inlayHint")
    def on_inlay_hint(ls: Any, a: Analysis, params: lsp.InlayHintParams) -> Any:
        return GV.inlay_hints(a, params.range) if a.plan is not None else None

    @feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL,
             lsp.SemanticTokensLegend(token_types=SEM.TOKEN_TYPES, token_modifiers=[]),
             what="semanticTokens", default=lsp.SemanticTokens(data=[]))
    def on_semantic_tokens(ls: Any, a: Analysis, params: lsp.SemanticTokensParams) -> Any:
        if a.plan is None:
            return lsp.SemanticTokens(data=[])
        return lsp.SemanticTokens(data=a.cached("semantic", lambda: SEM.semantic_tokens(a.result, a.index)))

    @feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
             lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL_KIND]),
             what="codeAction")
    def on_code_action(ls: Any, a: Analysis, params: lsp.CodeActionParams) -> Any:
        return code_actions(a, params)
