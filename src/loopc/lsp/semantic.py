"""Semantic tokens at the protocol edge (docs/editors.md#features): the
tokens :func:`loopc.ide.semantic.semantic_tokens` finds, encoded as the LSP's
relative 5-integer ``data`` array in the negotiated position encoding."""
from __future__ import annotations

from typing import Any

from loopc.ide import semantic as _sem
from loopc.ide.document import Document

#: the legend's token types (:data:`loopc.ide.semantic.TOKEN_TYPES`)
TOKEN_TYPES = list(_sem.TOKEN_TYPES)
_T = {name: i for i, name in enumerate(TOKEN_TYPES)}


def semantic_tokens(result: Any, index: Any) -> list[int]:
    """The ``data`` array of a full ``textDocument/semanticTokens`` answer
    for the check ``result`` of the text of ``index`` (an
    :class:`~loopc.lsp.positions.EditorIndex`)."""
    data: list[int] = []
    pl = pc = 0
    for tok in _sem.semantic_tokens(Document(index.text, result, index.lines)):
        start = index.position(tok.start)
        end = index.position(tok.end)
        line, ch = start.line, start.character
        data.extend((line - pl, ch - pc if line == pl else ch, end.character - ch, _T[tok.type], 0))
        pl, pc = line, ch
    return data
