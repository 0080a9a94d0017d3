"""Diagnostic model shared by every consumer (CLI, language server, API).

Implements the diagnostics shape of seed 004 §5 ("stable code, severity,
document path, source line/column, message, and the applicable node or edge
ID").  Positions are 1-based; columns count Unicode code points; ``end_column``
is exclusive (the LSP convention, converted to UTF-16 by the language server).
Pointers are RFC 6901 JSON pointers into the YAML document.
"""
from __future__ import annotations

import enum
from typing import Any

import attrs


class Severity(str, enum.Enum):
    """Severity of a finding; only ``error`` blocks publish (seed 004 §5)."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@attrs.frozen(order=True)
class Span:
    """A source range: 1-based lines, 1-based code-point columns, end exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def point(cls, line: int, column: int) -> "Span":
        return cls(line, column, line, column + 1)


@attrs.frozen
class Related:
    """A related location, e.g. the first of two duplicate keys."""

    message: str
    span: Span
    pointer: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "line": self.span.line,
            "column": self.span.column,
            "endLine": self.span.end_line,
            "endColumn": self.span.end_column,
            "pointer": self.pointer,
        }


@attrs.frozen
class TextEdit:
    """Replace ``span`` with ``new_text`` (same coordinates as diagnostics)."""

    span: Span
    new_text: str

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.span.line,
            "column": self.span.column,
            "endLine": self.span.end_line,
            "endColumn": self.span.end_column,
            "newText": self.new_text,
        }


@attrs.frozen
class Fix:
    """A suggested fix: a message and text edits (ruff-style)."""

    message: str
    edits: tuple[TextEdit, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"message": self.message, "edits": [e.to_json() for e in self.edits]}


@attrs.frozen
class Diagnostic:
    """One finding.

    ``code`` is ``LP`` + four digits (LP1xxx YAML, LP2xxx schema, LP3xxx types
    and expressions, LP4xxx graph, LP5xxx IR and budgets); ``name`` is its
    stable slug (see :mod:`loopc.codes`).
    """

    code: str
    name: str
    severity: Severity
    message: str
    span: Span
    pointer: str = ""
    node: str | None = None
    edge: str | None = None
    related: tuple[Related, ...] = ()
    fix: Fix | None = None

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def sort_key(self) -> tuple:
        return (self.span.line, self.span.column, self.code, self.message)

    def to_json(self) -> dict[str, Any]:
        """The ``loopc check --format json`` shape of one diagnostic."""
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "message": self.message,
            "line": self.span.line,
            "column": self.span.column,
            "endLine": self.span.end_line,
            "endColumn": self.span.end_column,
            "pointer": self.pointer,
            "node": self.node,
            "edge": self.edge,
            "related": [r.to_json() for r in self.related],
            "fix": self.fix.to_json() if self.fix else None,
        }
