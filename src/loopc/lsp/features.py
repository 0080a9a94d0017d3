"""The editor features beyond diagnostics (docs/editors.md): completion,
hover, go to definition, find references, rename, document symbols, call
hierarchy, code lens, inlay hints, semantic tokens and code actions.  The
semantics are :mod:`loopc.ide` (plain data over the check result); each
handler here converts the protocol position to an offset, asks
:mod:`loopc.ide` about the analysis of the current document version, and
converts the answer back; a handler that fails answers nothing (and logs),
never an error response; a request refused on purpose (an invalid rename)
is a ``ResponseError`` with the reason."""
from __future__ import annotations

from typing import Any

from lsprotocol import types as lsp

from loopc.ide import hover as _hover
from loopc.ide import symbols as _sym
from loopc.ide.symbols import RenameError
from loopc.lsp.analysis import Analysis

FIX_ALL_KIND = "source.fixAll.loopc"


def _contains(r: lsp.Range, p: lsp.Position) -> bool:
    return (r.start.line, r.start.character) <= (p.line, p.character) <= (r.end.line, r.end.character)


def hover(a: Analysis, pos: lsp.Position) -> lsp.Hover | None:
    """:func:`loopc.ide.hover.hover` at ``pos``, with the codes of the
    diagnostics shown there."""
    codes = [d.code for d in a.diagnostics if _contains(d.range, pos)]
    h = _hover.hover(a.doc, a.index.offset(pos), codes)
    if h is None:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=h.markdown),
                     range=a.index.range(h.range) if h.range is not None else None)


# ---------------------------------------------------------------------------
# navigation and rename
# ---------------------------------------------------------------------------

def _loc(a: Analysis, r: Any) -> lsp.Location:
    return lsp.Location(uri=a.uri, range=a.index.range(r))


def definition(a: Analysis, pos: lsp.Position) -> list[lsp.Location] | None:
    r = _sym.definition(a.doc, a.index.offset(pos))
    return [_loc(a, r)] if r is not None else None


def references(a: Analysis, pos: lsp.Position, include_decl: bool) -> list[lsp.Location] | None:
    rs = _sym.references(a.doc, a.index.offset(pos), include_decl)
    return [_loc(a, r) for r in rs] if rs else None


def prepare_rename(a: Analysis, pos: lsp.Position) -> Any:
    hit = _sym.prepare_rename(a.doc, a.index.offset(pos))
    if hit is None:
        return None
    return lsp.PrepareRenamePlaceholder(range=a.index.range(hit[0]), placeholder=hit[1])


def rename(a: Analysis, pos: lsp.Position, new_name: str, *,
           document_changes: bool = False) -> lsp.WorkspaceEdit | None:
    """The index's rename edits (:func:`loopc.ide.symbols.rename`) as one
    workspace edit — ``documentChanges`` with the document's version when
    the client supports them (``document_changes``), so it can refuse an
    edit of a text that changed meanwhile; else ``changes``.
    :class:`RenameError` when the index refuses."""
    plain = _sym.rename(a.doc, a.index.offset(pos), new_name)
    if plain is None:
        return None
    edits = [lsp.TextEdit(range=a.index.range(e.range), new_text=e.new_text) for e in plain]
    if document_changes:
        doc = lsp.OptionalVersionedTextDocumentIdentifier(uri=a.uri, version=a.version)
        return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=doc, edits=list(edits))])
    return lsp.WorkspaceEdit(changes={a.uri: edits})


# ---------------------------------------------------------------------------
# document symbols (the domain outline)
# ---------------------------------------------------------------------------

def _outline(a: Analysis, s: _sym.OutlineSymbol) -> lsp.DocumentSymbol:
    kids = [_outline(a, c) for c in s.children] if s.children is not None else None
    return lsp.DocumentSymbol(name=s.name, kind=lsp.SymbolKind[s.kind], range=a.index.range(s.range),
                              selection_range=a.index.range(s.selection), detail=s.detail, children=kids)


def document_symbols(a: Analysis) -> list[lsp.DocumentSymbol]:
    return [_outline(a, s) for s in _sym.document_symbols(a.doc)]


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
    from loopc.lsp.errors import Refused

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
        return _sym.node_at(a.doc, a.index.offset(pos))

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
