"""Collects diagnostics for one source (seed 004 §5: "Diagnostics are an
aggregate list, not a first-error-only response").

Passes call :meth:`Reporter.report` with a code and a location: a
:class:`~loopc.compiler.yamlnodes.YNode` (its range and pointer are used), or
an explicit :class:`~loopc.diagnostics.Span` plus pointer, or ``None`` for a
finding about the whole source (it then has no position).  Severity and slug
come from the code registry.
"""
from __future__ import annotations

from typing import Iterable, Sequence, Union

import attrs

from loopc import codes
from loopc.codes.sections import section as code_section
from loopc.compiler.yamlnodes import YNode
from loopc.diagnostics import Diagnostic, Fix, Related, Severity, Span

Location = Union[YNode, Span, None]


def span_of(at: Location) -> Span | None:
    """The span of a location; ``None`` (no position) stays ``None``."""
    if at is None:
        return None
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
        section: str | None = None,
    ) -> Diagnostic:
        """Record a diagnostic; ``related`` is ``(message, location)`` pairs;
        ``section`` the reference anchor when where the finding is says more
        than its code (default: the code's section)."""
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
            section=section or code_section(code) or "",
        )
        self.diagnostics.append(d)
        return d

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)

    def sorted(self) -> Sequence[Diagnostic]:
        return sorted(self.diagnostics, key=Diagnostic.sort_key)


def finish(diags: Iterable[Diagnostic], text: str | None, path: str | None,
           index: object | None = None) -> tuple[Diagnostic, ...]:
    """The diagnostics a check returns: every span (of the diagnostic, its
    related locations and its fix edits) carries its code-point offsets into
    ``text``, every diagnostic its ``path``; duplicates (same code, range and
    message) removed; sorted by :meth:`Diagnostic.sort_key`; a diagnostic
    without a ``section`` gets its code's.

    ``index`` is a :class:`loopc.lineindex.LineIndex` of ``text`` (built when
    needed and not given).  Without ``text`` spans are left as they are.
    """
    out: list[Diagnostic] = []
    seen: set[tuple] = set()
    lines = index
    for d in diags:
        if text is not None and _needs_offsets(d):
            if lines is None:
                from loopc.lineindex import LineIndex

                lines = LineIndex(text)
            d = _locate(d, lines)
        if d.path != path:
            d = attrs.evolve(d, path=path)
        if not d.section:
            sec = code_section(d.code)
            if sec:
                d = attrs.evolve(d, section=sec)
        s = d.span
        k = (d.code, None if s is None else (s.line, s.column, s.end_line, s.end_column), d.message)
        if k not in seen:
            seen.add(k)
            out.append(d)
    out.sort(key=Diagnostic.sort_key)
    return tuple(out)


def _unlocated(span: Span | None) -> bool:
    return span is not None and (span.start is None or span.end is None)


def _needs_offsets(d: Diagnostic) -> bool:
    return (_unlocated(d.span) or any(_unlocated(r.span) for r in d.related)
            or (d.fix is not None and any(_unlocated(e.span) for e in d.fix.edits)))


def _locate(d: Diagnostic, index: object) -> Diagnostic:
    span = d.span.located(index) if d.span is not None else None
    related = tuple(attrs.evolve(r, span=r.span.located(index)) if r.span is not None and _unlocated(r.span) else r
                    for r in d.related)
    fix = d.fix
    if fix is not None and any(_unlocated(e.span) for e in fix.edits):
        fix = attrs.evolve(fix, edits=tuple(attrs.evolve(e, span=e.span.located(index))
                                            for e in fix.edits))
    return attrs.evolve(d, span=span, related=related, fix=fix)
