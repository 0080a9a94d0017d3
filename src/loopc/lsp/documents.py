"""The server's copy of each open document, kept identical to the editor's
(docs/editors.md#document-sync).

The Language Server Protocol breaks lines at ``"\\n"``, ``"\\r\\n"`` and
``"\\r"`` only; an incremental ``didChange`` addresses its range in those
lines.  pygls 2's ``TextDocument`` splits with :meth:`str.splitlines`, which
also breaks at NEL (U+0085), LINE SEPARATOR (U+2028), PARAGRAPH SEPARATOR
(U+2029), ``\\v``, ``\\f`` and ``\\x1c``–``\\x1e``: after such a character
every later edit lands on the wrong line and the server's text diverges from
the editor's.  :class:`LoopcTextDocument` applies edits with
:class:`loopc.lineindex.LineIndex` (the protocol's three line breaks, columns
in the negotiated encoding, out-of-range positions clamped as the protocol
says) and exposes the same line model through ``lines``;
:class:`LoopcWorkspace` creates such documents.
"""
from __future__ import annotations

import re
from typing import Any, Optional, Sequence

from lsprotocol import types as lsp
from pygls.workspace import TextDocument, Workspace

from loopc.lineindex import LineIndex

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def protocol_lines(text: str) -> tuple[str, ...]:
    """``text`` split after each ``"\\r\\n"``, ``"\\r"`` or ``"\\n"`` (the
    breaks kept, like ``splitlines(True)``), and nowhere else."""
    return tuple(m.group(0) for m in _LINES.finditer(text) if m.group(0))


def apply_change(text: str, change: Any, encoding: str) -> str:
    """``text`` after one ``TextDocumentContentChangeEvent``: a partial change
    replaces its range (line/character in ``encoding`` units, clamped: a line
    past the end is the end of the text, a character past the end of its
    line is the end of the line) with ``change.text``; a whole-document
    change is its text."""
    if not isinstance(change, lsp.TextDocumentContentChangePartial):
        return change.text
    idx = LineIndex(text)
    enc: Any = encoding if encoding in ("utf-8", "utf-16", "utf-32") else "utf-16"
    r = change.range
    start = idx.offset(r.start.line, r.start.character, enc)
    end = idx.offset(r.end.line, r.end.character, enc)
    if end < start:
        start, end = end, start
    return text[:start] + change.text + text[end:]


class LoopcTextDocument(TextDocument):
    """A pygls ``TextDocument`` with the protocol's line model (see the
    module docstring); ``encoding`` is the negotiated position encoding."""

    def __init__(self, *args: Any, encoding: str = "utf-16", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.encoding = encoding

    def _apply_incremental_change(self, change: lsp.TextDocumentContentChangePartial) -> None:
        self._source = apply_change(self.source, change, self.encoding)

    @property
    def lines(self) -> Sequence[str]:
        return protocol_lines(self.source)


class LoopcWorkspace(Workspace):
    """pygls's ``Workspace`` whose text documents are :class:`LoopcTextDocument`."""

    def __init__(self, *args: Any, encoding: str = "utf-16", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.encoding = encoding

    def _create_text_document(self, doc_uri: str, source: Optional[str] = None, version: Optional[int] = None,
                              language_id: Optional[str] = None) -> TextDocument:
        return LoopcTextDocument(doc_uri, source=source, version=version, language_id=language_id,
                                 sync_kind=self._sync_kind, position_codec=self._position_codec,
                                 encoding=self.encoding)

    @classmethod
    def replacing(cls, ws: Workspace, encoding: str) -> "LoopcWorkspace":
        """A :class:`LoopcWorkspace` with the root, sync kind, folders and
        position encoding of ``ws`` (which pygls created on ``initialize``,
        before any document is open)."""
        new = cls(ws.root_uri, ws._sync_kind, list(ws.folders.values()), ws.position_encoding,
                  encoding=encoding)
        return new
