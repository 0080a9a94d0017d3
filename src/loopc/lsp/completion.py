"""Completion at the protocol edge (docs/editors.md#features):
:func:`loopc.ide.completion.complete`'s plain items as ``CompletionItem``
objects whose edit replaces the word at the cursor."""
from __future__ import annotations

from typing import Any

from lsprotocol import types as lsp

from loopc.ide import completion as _c

TRIGGER_CHARACTERS = list(_c.TRIGGER_CHARACTERS)


class Edit:
    """Where a completion goes: ``insert`` is the partial word before the
    cursor, ``replace`` the whole word around it (``doc|ument_url``: all of
    ``document_url``).  ``replace_support``: the client takes an
    ``InsertReplaceEdit`` (it lets the user choose); otherwise the item's
    ``TextEdit`` replaces the whole word, which the protocol allows (a
    single-line range containing the cursor)."""

    __slots__ = ("insert", "replace", "replace_support")

    def __init__(self, insert: lsp.Range, replace: lsp.Range, replace_support: bool) -> None:
        self.insert = insert
        self.replace = replace
        self.replace_support = replace_support

    def of(self, new_text: str) -> lsp.TextEdit | lsp.InsertReplaceEdit:
        if self.replace_support:
            return lsp.InsertReplaceEdit(new_text=new_text, insert=self.insert, replace=self.replace)
        return lsp.TextEdit(range=self.replace, new_text=new_text)


def complete(text: str, index: Any, model: Any, pos: lsp.Position, fallback: Any = None, *,
             replace_support: bool = False) -> list[lsp.CompletionItem]:
    """Completion items at ``pos`` of ``text`` (``index``: its
    :class:`~loopc.lsp.positions.EditorIndex`); ``model`` is the analysis
    with the latest plan model, ``fallback`` an older one; each item's edit
    replaces the whole word at the cursor (``InsertReplaceEdit`` when
    ``replace_support``, see :class:`Edit`)."""
    items = _c.complete(text, index.offset(pos), getattr(model, "result", None), getattr(fallback, "result", None),
                        lines=index.lines if index.text is text else None)
    edits: dict[Any, Edit] = {}
    out = []
    for it in items:
        e = edits.get(it.edit)
        if e is None:
            e = edits[it.edit] = Edit(index.range(it.edit.insert), index.range(it.edit.replace), replace_support)
        out.append(lsp.CompletionItem(label=it.label, kind=lsp.CompletionItemKind[it.kind], detail=it.detail,
                                      sort_text=it.sort, text_edit=e.of(it.new_text)))
    return out
