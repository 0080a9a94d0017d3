"""One line index for a decoded source text: code-point offsets ↔ (line,
column) ↔ UTF-8 bytes ↔ UTF-16 code units, and back (docs/api.md#positions-loopclineindexlineindex).

Lines break exactly where loopc's YAML layer breaks them for positions
(:mod:`loopc.compiler.yamlload`): at ``"\\r\\n"``, ``"\\r"`` and ``"\\n"``.
NEL (U+0085), LINE SEPARATOR (U+2028) and PARAGRAPH SEPARATOR (U+2029) are
line breaks for libyaml's own scanner but *not* for positions: editors (and
the Language Server Protocol) do not break lines there, so loopc recomputes
such positions and counts these characters as ordinary column characters.

Coordinates:

* an *offset* is a 0-based code-point index into the decoded text (BOM
  removed) — what Python slicing uses (``text[start:end]``);
* a *position* is a 0-based ``(line, column)`` pair; the column is counted in
  one of three encodings, named as in the LSP ``PositionEncodingKind``:
  ``"utf-32"`` (code points, loopc's own unit), ``"utf-16"`` (code units, the
  LSP default) or ``"utf-8"`` (bytes).

Conversions never raise on out-of-range input; they clamp, as the LSP asks:
a line past the end is the end of the text, a column past the end of its line
is the end of the line (before its line break), a column inside a character
(the second unit of a surrogate pair, a byte inside a multi-byte sequence)
is the start of that character.  Round trips are exact for every offset that
is not inside a ``"\\r\\n"`` pair.

:class:`loopc.diagnostics.Span` stores 1-based lines and code-point columns
plus offsets; the language server converts with this index only at the
protocol edge.
"""
from __future__ import annotations

import bisect
import re
from typing import Literal

Encoding = Literal["utf-8", "utf-16", "utf-32"]
ENCODINGS: tuple[Encoding, ...] = ("utf-8", "utf-16", "utf-32")

LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""The line breaks of positions (LF, CRLF, CR), shared with the YAML layer."""


def _units(ch: str, encoding: str) -> int:
    o = ord(ch)
    if encoding == "utf-16":
        return 2 if o > 0xFFFF else 1
    if encoding == "utf-8":
        return 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
    return 1


def _width(s: str, encoding: str) -> int:
    """Length of ``s`` in ``encoding`` units (surrogates count as in
    ``surrogatepass``)."""
    if encoding == "utf-32" or s.isascii():
        return len(s)
    if encoding == "utf-16":
        return len(s) + sum(1 for ch in s if ord(ch) > 0xFFFF)
    return len(s.encode("utf-8", "surrogatepass"))


class LineIndex:
    """Line table of one text.  Building it is one regex scan; every query is
    a binary search plus work proportional to one line.

    ``LineIndex(text)``; ``line_count`` ≥ 1 (an empty text has one empty
    line; a text ending in a line break has an empty last line).
    """

    __slots__ = ("text", "starts", "_utf8_starts", "_utf16_starts")

    def __init__(self, text: str) -> None:
        self.text = text
        starts = [0]
        starts.extend(m.end() for m in LINE_BREAK.finditer(text))
        self.starts: list[int] = starts
        self._utf8_starts: list[int] | None = None
        self._utf16_starts: list[int] | None = None

    # -- lines ------------------------------------------------------------
    @property
    def line_count(self) -> int:
        return len(self.starts)

    def line_start(self, line: int) -> int:
        """Offset at which 0-based ``line`` starts (clamped)."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        return self.starts[line]

    def line_end(self, line: int, *, with_break: bool = False) -> int:
        """Offset just past the last character of ``line`` (before its line
        break unless ``with_break``)."""
        if line < 0:
            line = 0
        starts = self.starts
        if line >= len(starts) - 1:
            return len(self.text)
        nxt = starts[line + 1]
        if with_break:
            return nxt
        text = self.text
        if nxt >= 2 and text[nxt - 2 : nxt] == "\r\n":
            return nxt - 2
        return nxt - 1

    def line_text(self, line: int) -> str:
        """Text of 0-based ``line`` without its line break ('' past the end)."""
        if line < 0 or line >= len(self.starts):
            return ""
        return self.text[self.starts[line] : self.line_end(line)]

    def lines(self) -> list[str]:
        """Every line without its break (``len == line_count``)."""
        return [self.line_text(i) for i in range(len(self.starts))]

    # -- code points ------------------------------------------------------
    def position(self, offset: int, encoding: Encoding = "utf-32") -> tuple[int, int]:
        """0-based ``(line, column)`` of a code-point ``offset`` (clamped to
        ``[0, len(text)]``), the column counted in ``encoding`` units."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        if encoding == "utf-32":
            return line, offset - start
        return line, _width(self.text[start:offset], encoding)

    def offset(self, line: int, column: int, encoding: Encoding = "utf-32") -> int:
        """Code-point offset of the 0-based ``(line, column)``, the column
        counted in ``encoding`` units; clamps (see the module docstring)."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        start = self.starts[line]
        end = self.line_end(line)
        if column <= 0:
            return start
        if encoding == "utf-32":
            return min(start + column, end)
        text = self.text
        if text[start:end].isascii():
            return min(start + column, end)
        units = 0
        i = start
        while i < end:
            units += _units(text[i], encoding)
            if units > column:
                return i
            i += 1
            if units == column:
                return i
        return end

    # -- whole-text units ---------------------------------------------------
    def _unit_starts(self, encoding: Encoding) -> list[int]:
        if encoding == "utf-8":
            if self._utf8_starts is None:
                self._utf8_starts = self._accumulate("utf-8")
            return self._utf8_starts
        if self._utf16_starts is None:
            self._utf16_starts = self._accumulate("utf-16")
        return self._utf16_starts

    def _accumulate(self, encoding: Encoding) -> list[int]:
        out = [0]
        text, starts = self.text, self.starts
        for i in range(1, len(starts)):
            out.append(out[-1] + _width(text[starts[i - 1] : starts[i]], encoding))
        return out

    def unit_offset(self, offset: int, encoding: Encoding) -> int:
        """Offset in ``encoding`` units (UTF-8 bytes, UTF-16 code units or
        code points) from the start of the text, of code-point ``offset``."""
        if encoding == "utf-32":
            return max(0, min(offset, len(self.text)))
        line, col = self.position(offset, encoding)
        return self._unit_starts(encoding)[line] + col

    def from_unit_offset(self, units: int, encoding: Encoding) -> int:
        """Code-point offset of an offset in ``encoding`` units (clamped; a
        unit inside a character gives that character's start)."""
        if encoding == "utf-32":
            return max(0, min(units, len(self.text)))
        ustarts = self._unit_starts(encoding)
        if units <= 0:
            return 0
        line = bisect.bisect_right(ustarts, units) - 1
        col = units - ustarts[line]
        # a unit offset may land in a line break: offset() clamps to the line
        # end, so walk the break explicitly
        start = self.starts[line]
        end = self.line_end(line)
        width = _width(self.text[start:end], encoding)
        if col <= width:
            return self.offset(line, col, encoding)
        return min(end + (col - width), self.line_end(line, with_break=True))

    def utf8_offset(self, offset: int) -> int:
        """Byte offset in the UTF-8 encoding of the text of code-point ``offset``."""
        return self.unit_offset(offset, "utf-8")

    def from_utf8_offset(self, byte: int) -> int:
        return self.from_unit_offset(byte, "utf-8")

    def utf16_offset(self, offset: int) -> int:
        """UTF-16 code-unit offset of code-point ``offset``."""
        return self.unit_offset(offset, "utf-16")

    def from_utf16_offset(self, unit: int) -> int:
        return self.from_unit_offset(unit, "utf-16")

    def convert(self, line: int, column: int, source: Encoding, target: Encoding) -> tuple[int, int]:
        """Re-express a 0-based position from ``source`` to ``target`` column units."""
        return self.position(self.offset(line, column, source), target)
