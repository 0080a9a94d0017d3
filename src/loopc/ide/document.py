"""The document the editor features read (docs/editors.md#features), and the
plain-data range they answer in.

Positions in :mod:`loopc.ide` are **code-point offsets into the editor's
text** — encoding-neutral: the language server (:mod:`loopc.lsp`) turns them
into protocol positions in the negotiated encoding (UTF-16 code units, UTF-8
bytes or UTF-32 code points), another front end may use them as they are.
The checked text is the editor's minus a leading BOM, if any
(``check_source`` strips it); :attr:`Document.shift` (0 or 1) converts a
checked-text offset (a ``Span.start``, a YAML node's ``start``) to an editor
offset.
"""

from __future__ import annotations

from typing import Any

import attrs

from loopc.diagnostics import Span
from loopc.lineindex import LineIndex


@attrs.frozen
class Range:
    """Editor code-point offsets ``[start, end)``; ``end >= start`` is not
    enforced (the protocol edge clamps)."""

    start: int
    end: int


def span_offsets(lines: LineIndex, shift: int, span: Span) -> tuple[int, int]:
    """Editor offsets ``[start, end)`` of a loopc span over a text whose
    checked form is ``shift`` (0 or 1) code points shorter (a BOM).  A span
    with offsets uses them; one with only 1-based line/column uses those
    (column 1 of line 1 is after the BOM).  Out-of-range positions clamp."""
    if span.start is not None and span.end is not None:
        return span.start + shift, span.end + shift

    def off(line1: int, col1: int) -> int:
        col = col1 - 1 + (shift if line1 == 1 else 0)
        return lines.offset(line1 - 1, col)

    s = off(span.line, span.column)
    return s, max(s, off(span.end_line, span.end_column))


@attrs.frozen(eq=False)
class Document:
    """One editor text and the check result of it (``result``: a
    :class:`loopc.CheckResult`, or ``None`` — not a plan, over budget).
    ``lines`` is the text's :class:`~loopc.lineindex.LineIndex` (built when
    not given)."""

    text: str
    result: Any = None
    lines: LineIndex = attrs.field(default=attrs.Factory(lambda self: LineIndex(self.text), takes_self=True))

    @property
    def shift(self) -> int:
        """1 when the editor text starts with a BOM the checker stripped, else 0."""
        return 1 if self.text.startswith("\ufeff") else 0

    @property
    def plan(self) -> Any:
        """The plan model of the check result, or ``None``."""
        return getattr(self.result, "plan", None)

    def doc_range(self, start: int, end: int) -> Range:
        """Editor range of checked-text offsets ``[start, end)``."""
        return Range(start + self.shift, end + self.shift)

    def span_range(self, span: Span | None) -> Range:
        """Editor range of a loopc span; ``None`` (a finding about the whole
        source) is the start of the document."""
        if span is None:
            return Range(0, 0)
        return Range(*span_offsets(self.lines, self.shift, span))

    def checked_offset(self, offset: int) -> int:
        """The checked-text offset of an editor offset."""
        return offset - self.shift
