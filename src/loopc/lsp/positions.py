"""Protocol-edge position conversion for the language server (docs/editors.md,
"Position encodings").

loopc positions are 1-based lines and 1-based code-point columns (end
exclusive), lines split at LF, CRLF and CR only — exactly what the LSP does
(docs/language.md, "Line breaks for positions").  The protocol counts columns
in the negotiated encoding: UTF-16 code units (the default), UTF-8 bytes or
UTF-32 code points.  :class:`LineIndex` converts between the three for one
text; nothing else in the server does arithmetic on columns.

Shapes: ``Position``/``Range`` are :mod:`lsprotocol.types` objects with
0-based lines and columns in the negotiated unit; offsets are code-point
indexes into the text (what Python slicing uses).  Out-of-range input is
clamped, never raised on (a client may send positions past the end while the
user types).
"""
from __future__ import annotations

import bisect
import re

from lsprotocol import types as lsp

from loopc.diagnostics import Span

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def choose_encoding(offered: list[str] | None) -> str:
    """The position encoding to use: UTF-8 where the client offers it
    (columns are then cheap to compute and match most editors' own model),
    else UTF-16, which every client must support."""
    if offered and UTF8 in offered:
        return UTF8
    return UTF16


def _units(text: str, encoding: str) -> int:
    """Length of ``text`` in the unit of ``encoding``."""
    if encoding == UTF32 or text.isascii():
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _code_points(line: str, units: int, encoding: str) -> int:
    """Code-point index in ``line`` of a column of ``units`` in ``encoding``
    (a column inside a multi-unit character rounds down to its start)."""
    if units <= 0:
        return 0
    if encoding == UTF32 or line.isascii():
        return min(units, len(line))
    n = 0
    for i, ch in enumerate(line):
        c = ord(ch)
        if encoding == UTF8:
            w = 1 if c < 0x80 else 2 if c < 0x800 else 3 if c < 0x10000 else 4
        else:
            w = 2 if c >= 0x10000 else 1
        if n + w > units:
            return i
        n += w
        if n == units:
            return i + 1
    return len(line)


class LineIndex:
    """Line starts of one text and conversions between code-point offsets,
    loopc :class:`~loopc.diagnostics.Span` coordinates and protocol
    positions in ``encoding``."""

    __slots__ = ("text", "encoding", "starts")

    def __init__(self, text: str, encoding: str = UTF16) -> None:
        self.text = text
        self.encoding = encoding
        starts = [0]
        starts.extend(m.end() for m in _LINE_BREAK.finditer(text))
        self.starts = starts

    # -- lines ---------------------------------------------------------------
    def line_count(self) -> int:
        return len(self.starts)

    def line_text(self, line0: int) -> str:
        """Text of 0-based line ``line0`` without its line break ('' past the end)."""
        if line0 < 0 or line0 >= len(self.starts):
            return ""
        s = self.starts[line0]
        e = self.starts[line0 + 1] if line0 + 1 < len(self.starts) else len(self.text)
        return self.text[s:e].rstrip("\r\n")

    # -- offsets ---------------------------------------------------------------
    def offset(self, pos: lsp.Position) -> int:
        """Code-point offset of a protocol position (clamped to the text and
        to the end of its line)."""
        line = max(0, pos.line)
        if line >= len(self.starts):
            return len(self.text)
        lt = self.line_text(line)
        return self.starts[line] + _code_points(lt, pos.character, self.encoding)

    def line_col(self, offset: int) -> tuple[int, int]:
        """0-based (line, code-point column) of an offset."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        return line, offset - self.starts[line]

    def position(self, offset: int) -> lsp.Position:
        """Protocol position of a code-point offset."""
        line, col = self.line_col(offset)
        return self._pos(line, col)

    def _pos(self, line0: int, col0: int) -> lsp.Position:
        if line0 >= len(self.starts):
            line0 = len(self.starts) - 1
            col0 = len(self.line_text(line0))
        lt = self.line_text(line0)
        col0 = max(0, min(col0, len(lt)))
        return lsp.Position(line=line0, character=_units(lt[:col0], self.encoding))

    # -- spans -----------------------------------------------------------------
    def span_range(self, span: Span | None) -> lsp.Range:
        """Protocol range of a loopc span (1-based, code points, end
        exclusive); ``None`` (no position) is the start of the document."""
        if span is None:
            z = lsp.Position(line=0, character=0)
            return lsp.Range(start=z, end=z)
        start = self._pos(span.line - 1, span.column - 1)
        end = self._pos(span.end_line - 1, span.end_column - 1)
        if (end.line, end.character) < (start.line, start.character):
            end = start
        return lsp.Range(start=start, end=end)

    def offsets_range(self, start: int, end: int) -> lsp.Range:
        return lsp.Range(start=self.position(start), end=self.position(end))

    def span_offsets(self, span: Span) -> tuple[int, int]:
        """Code-point offsets ``[start, end)`` of a loopc span."""
        def off(line1: int, col1: int) -> int:
            line0 = line1 - 1
            if line0 >= len(self.starts):
                return len(self.text)
            if line0 < 0:
                return 0
            return self.starts[line0] + max(0, min(col1 - 1, len(self.line_text(line0))))
        return off(span.line, span.column), off(span.end_line, span.end_column)

    def range_offsets(self, rng: lsp.Range) -> tuple[int, int]:
        return self.offset(rng.start), self.offset(rng.end)
