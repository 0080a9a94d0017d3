"""Protocol-edge position conversion for the language server (docs/editors.md#features:
position encoding).

All column arithmetic is :class:`loopc.lineindex.LineIndex` (LF, CRLF and CR
line breaks, exactly as loopc's positions and the LSP count them); this
module only turns its answers into :mod:`lsprotocol` ``Position``/``Range``
objects in the negotiated encoding (UTF-16 code units by default, UTF-8
bytes or UTF-32 code points when negotiated).

Offsets here are code-point offsets into the *editor's* text.  The checked
text is the same minus a leading BOM, if any (``check_source`` strips it);
``shift`` (0 or 1) converts a checked-text offset (a ``Span.start``, a YAML
node's ``start``) to an editor offset — :meth:`EditorIndex.doc_range` does it.
Out-of-range input is clamped, never raised on (a client may send positions
past the end while the user types).
"""
from __future__ import annotations

from typing import Any

from lsprotocol import types as lsp

from loopc.diagnostics import Span
from loopc.ide.document import Range, span_offsets
from loopc.lineindex import LineIndex

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"


def choose_encoding(offered: list[str] | None) -> str:
    """The position encoding to use: UTF-8 where the client offers it, else
    UTF-16, which every client must support."""
    if offered and UTF8 in offered:
        return UTF8
    return UTF16


class EditorIndex:
    """Conversions for one editor text in one ``encoding``: protocol
    positions ↔ code-point offsets, loopc spans → protocol ranges."""

    __slots__ = ("text", "encoding", "lines", "shift")

    def __init__(self, text: str, encoding: str = UTF16) -> None:
        self.text = text
        self.encoding: Any = encoding if encoding in (UTF8, UTF16, UTF32) else UTF16
        self.lines = LineIndex(text)
        self.shift = 1 if text.startswith("\ufeff") else 0

    def line_text(self, line0: int) -> str:
        return self.lines.line_text(line0)

    # -- offsets -------------------------------------------------------------
    def offset(self, pos: lsp.Position) -> int:
        """Code-point offset of a protocol position (clamped)."""
        return self.lines.offset(pos.line, pos.character, self.encoding)

    def line_col(self, offset: int) -> tuple[int, int]:
        """0-based (line, code-point column) of an offset."""
        return self.lines.position(offset)

    def position(self, offset: int) -> lsp.Position:
        line, col = self.lines.position(offset, self.encoding)
        return lsp.Position(line=line, character=col)

    def offsets_range(self, start: int, end: int) -> lsp.Range:
        """Protocol range of editor offsets ``[start, end)``."""
        s = self.position(start)
        e = self.position(max(start, end))
        return lsp.Range(start=s, end=e)

    def doc_range(self, start: int, end: int) -> lsp.Range:
        """Protocol range of checked-text offsets ``[start, end)``."""
        return self.offsets_range(start + self.shift, end + self.shift)

    # -- spans -----------------------------------------------------------------
    def span_offsets(self, span: Span) -> tuple[int, int]:
        """Editor offsets ``[start, end)`` of a loopc span
        (:func:`loopc.ide.document.span_offsets`)."""
        return span_offsets(self.lines, self.shift, span)

    def range(self, r: Range) -> lsp.Range:
        """Protocol range of a :class:`loopc.ide.Range` (editor offsets)."""
        return self.offsets_range(r.start, r.end)

    def span_range(self, span: Span | None) -> lsp.Range:
        """Protocol range of a loopc span; ``None`` (a finding about the
        whole source) is the start of the document."""
        if span is None:
            z = lsp.Position(line=0, character=0)
            return lsp.Range(start=z, end=z)
        s, e = self.span_offsets(span)
        return self.offsets_range(s, e)

