"""Positions of the strict YAML layer (:mod:`loopc.compiler.yamlload`):
libyaml's marks as editor (LSP) line/column — 0-based lines broken at LF,
CRLF and CR only, code-point columns (docs/reference.md#source-file) — and
as 1-based :class:`~loopc.diagnostics.Span` points.  Pure functions; never
raise on a mark without a position (0, 0 then).
"""
from __future__ import annotations

from typing import Any

from loopc.compiler.yamlnodes import YDocument
from loopc.diagnostics import Span


def _text_position(text: str, index: int) -> tuple[int, int]:
    """0-based editor (LSP) line/column of ``text[index]``; a leading BOM is
    not counted (it is not part of the decoded source)."""
    skip = 1 if text.startswith("\ufeff") else 0
    return YDocument(text[skip:index], None).position(max(0, index - skip))


def _mark_span(mark: Any, where: Any = None) -> Span:
    if where is not None and mark is not None:
        line, col = where(mark)
    else:
        line = getattr(mark, "line", 0) or 0
        col = getattr(mark, "column", 0) or 0
    return Span.point(line + 1, col + 1)


# libyaml also breaks lines at NEL, LS and PS; editors (LSP) break only at
# LF, CRLF and CR.  Sources containing one of these get positions recomputed
# from the code-point index (libyaml's ``mark.index`` counts code points).
_YAML_ONLY_BREAKS = ("\x85", "\u2028", "\u2029")


def _positioner(text: str) -> Any:
    """``where(mark) -> (line0, col0)`` in editor (LSP) line terms.

    libyaml's own line/column are kept when they agree with the editor's
    view (the common case, no extra cost); they are recomputed from
    ``mark.index`` when the text holds a YAML-only line break, and for marks
    at the end of input (libyaml puts those on a virtual line after the last
    one when the text has no final newline).
    """
    n = len(text)
    exotic = any(b in text for b in _YAML_ONLY_BREAKS)
    locator = YDocument(text, None)
    position = locator.position
    end_position: list[tuple[int, int]] = []

    def where(mark: Any) -> tuple[int, int]:
        idx = getattr(mark, "index", None)
        if not isinstance(idx, int) or idx < 0:
            return (getattr(mark, "line", 0) or 0, getattr(mark, "column", 0) or 0)
        if exotic:
            return position(min(idx, n))
        if idx >= n:
            # the end of input (every collection still open there ends at
            # it): counted once, without building the whole line table
            if not end_position:
                end_position.append(_end_position(text))
            return end_position[0]
        return mark.line, mark.column

    return where


def _end_position(text: str) -> tuple[int, int]:
    """0-based editor (LSP) line/column of ``len(text)`` for a text without
    YAML-only line breaks: the same as ``YDocument(text).position(len(text))``
    (line breaks are LF, CRLF and CR)."""
    crlf = text.count("\r\n")
    line = text.count("\n") + text.count("\r") - crlf
    last = max(text.rfind("\n"), text.rfind("\r"))
    return line, len(text) - (last + 1)
