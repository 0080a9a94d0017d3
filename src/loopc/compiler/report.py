"""Collects diagnostics for one source (seed 004 §5: "Diagnostics are an
aggregate list, not a first-error-only response").

Passes call :meth:`Reporter.report` with a code and a location: a
:class:`~loopc.compiler.yamlnodes.YNode` (its range and pointer are used), or
an explicit :class:`~loopc.diagnostics.Span` plus pointer.  Severity and slug
come from the code registry.
"""
from __future__ import annotations

from typing import Iterable, Sequence, Union

from loopc import codes
from loopc.compiler.yamlnodes import YNode
from loopc.diagnostics import Diagnostic, Fix, Related, Severity, Span

Location = Union[YNode, Span, None]


def span_of(at: Location) -> Span:
    if at is None:
        return Span(1, 1, 1, 2)
    if isinstance(at, Span):
        return at
    return at.span


class Reporter:
    """Accumulates the diagnostics of one check; ``bad_nodes``/``bad_edges``
    mirror ``Plan.malformed_nodes``/``malformed_edges`` (ids already reported
    as malformed, so later passes do not cascade)."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self.bad_nodes: set[str] = set()
        self.bad_edges: set[str] = set()

    def report(
        self,
        code: str,
        at: Location,
        message: str,
        *,
        pointer: str | None = None,
        node: str | None = None,
        edge: str | None = None,
        related: Iterable[tuple[str, Location]] = (),
        fix: Fix | None = None,
        severity: Severity | None = None,
    ) -> Diagnostic:
        """Record a diagnostic; ``related`` is ``(message, location)`` pairs."""
        entry = codes.get(code)
        if pointer is None:
            pointer = at.pointer if isinstance(at, YNode) else ""
        rel = tuple(
            Related(m, span_of(loc), loc.pointer if isinstance(loc, YNode) else "")
            for m, loc in related
        )
        d = Diagnostic(
            code=code,
            name=entry.name,
            severity=severity or entry.severity,
            message=message,
            span=span_of(at),
            pointer=pointer,
            node=node,
            edge=edge,
            related=rel,
            fix=fix,
        )
        self.diagnostics.append(d)
        return d

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)

    def sorted(self) -> Sequence[Diagnostic]:
        return sorted(self.diagnostics, key=Diagnostic.sort_key)
