"""Diagnostic model shared by every consumer (CLI, language server, API).

Implements the diagnostics shape of docs/api.md#diagnostic (stable code,
severity, document path, source line/column and offsets, message, the
applicable node or edge id, a fix with its applicability, a documentation
URL).  Positions are 1-based; columns count Unicode code points; ``end_column``
is exclusive (the LSP convention, converted to UTF-16 by the language server
with :class:`loopc.lineindex.LineIndex`).  ``Span.start``/``Span.end`` are
0-based code-point offsets into the decoded text (what Python slicing uses).
A finding without a source position has ``span=None`` (never a fake span).
Pointers are RFC 6901 JSON pointers into the YAML document.
"""
from __future__ import annotations

import enum
import functools
from typing import Any

from loopc.value import Value, field


DOCS_URL_FALLBACK = "https://github.com/loopc/loopc/blob/main/docs"
"""Documentation base used when the installed distribution's metadata has no
``Documentation`` entry in ``[project.urls]`` (e.g. running from a bare
checkout); keep it equal to the one in ``pyproject.toml``."""


DOCS_URL_ENV = "LOOPC_DOCS_URL"
"""Environment variable that overrides the documentation base (a fork or a
mirror of the docs); read once, on first use."""


@functools.lru_cache(maxsize=1)
def docs_base_url() -> str:
    """The one configurable documentation base: ``$LOOPC_DOCS_URL`` when set
    (an override, e.g. for a fork), else the ``Documentation`` URL of
    ``[project.urls]`` in ``pyproject.toml``, read from the installed
    distribution's metadata (``Project-URL: Documentation, ...``), else
    :data:`DOCS_URL_FALLBACK`.  No trailing slash.  Until a docs site
    exists the base is the repository's ``docs`` folder on GitHub
    (docs/language.md#documentation-urls)."""
    import os

    override = os.environ.get(DOCS_URL_ENV, "").strip()
    if override:
        return override.rstrip("/")
    try:
        from importlib.metadata import PackageNotFoundError, metadata

        try:
            urls = metadata("loopc").get_all("Project-URL") or []
        except PackageNotFoundError:
            urls = []
        for entry in urls:
            label, _, url = entry.partition(",")
            if label.strip().lower() in ("documentation", "docs") and url.strip():
                return url.strip().rstrip("/")
    except Exception:  # noqa: BLE001 - broken metadata must not break a check
        pass
    return DOCS_URL_FALLBACK.rstrip("/")


def docs_url(code: str) -> str:
    """Stable documentation URL of ``code``:
    ``{docs_base_url()}/diagnostics.md#{code lower-cased}``; the anchor is an
    explicit ``<a id="lp1001">`` in the generated docs/diagnostics.md, so it
    does not change when a title does.  Unknown codes get the same shape."""
    return f"{docs_base_url()}/diagnostics.md#{code.lower()}"


def value_text(value: Any) -> str:
    """A data value as a plan author writes it, for messages, hover and
    ``loopc explain`` (JSON/YAML spelling, never Python's): ``true``,
    ``false``, ``null``; numbers as JSON writes them; a string YAML
    single-quoted (``'pending'``, a ``'`` doubled); lists and mappings as
    JSON flow (``["a", 1]``, ``{"k": true}``).  Never raises: anything else
    is its ``str``."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, (list, tuple, dict)):
        import json

        try:
            return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        except (TypeError, ValueError):
            return str(value)
    return str(value)


class Severity(str, enum.Enum):
    """Severity of a finding; only ``error`` blocks publish (docs/api.md#diagnostic)."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Span(Value, order=True):
    """A source range: 1-based lines, 1-based code-point columns, end
    exclusive; ``start``/``end`` are the same range as 0-based code-point
    offsets into the decoded text (``None`` until located: the pass driver
    fills them in for every diagnostic it returns).  Ordering uses the
    line/column fields only."""

    line: int
    column: int
    end_line: int
    end_column: int
    start: int | None = field(default=None, order=False)
    end: int | None = field(default=None, order=False)

    @classmethod
    def point(cls, line: int, column: int) -> "Span":
        """A one-character span at 1-based ``line``/``column`` (code points)."""
        return cls(line, column, line, column + 1)

    def located(self, index: Any) -> "Span":
        """This span with ``start``/``end`` computed from ``index`` (a
        :class:`loopc.lineindex.LineIndex` of the text the span points
        into); unchanged when both are already set."""
        if self.start is not None and self.end is not None:
            return self
        start = index.offset(self.line - 1, self.column - 1)
        end = max(start, index.offset(self.end_line - 1, self.end_column - 1))
        # the constructor, not evolve(): a check locates every diagnostic
        return Span(self.line, self.column, self.end_line, self.end_column, start, end)

    def to_json(self) -> dict[str, Any]:
        """``line``/``column``/``endLine``/``endColumn`` of the JSON output."""
        return {"line": self.line, "column": self.column,
                "endLine": self.end_line, "endColumn": self.end_column}


_NO_POSITION = {"line": None, "column": None, "endLine": None, "endColumn": None}


def _span_json(span: Span | None) -> dict[str, Any]:
    return _NO_POSITION.copy() if span is None else span.to_json()


class Applicability(str, enum.Enum):
    """Whether a :class:`Fix` may be applied without review (ruff's terms).

    ``SAFE``: the edit keeps the author's meaning (a rewrite of the same
    thing in its canonical spelling), so ``--fix``-style tools may apply it
    unattended.  ``UNSAFE``: the edit is a guess (a did-you-mean
    replacement) or changes behaviour; offer it, let a person decide.
    """

    SAFE = "safe"
    UNSAFE = "unsafe"


class Related(Value):
    """A related location, e.g. the first of two duplicate keys."""

    message: str
    span: Span | None
    pointer: str = ""

    def to_json(self) -> dict[str, Any]:
        """``{message, line, column, endLine, endColumn, pointer}`` (positions
        ``null`` without a span), as in ``loopc check --format json``."""
        return {"message": self.message, **_span_json(self.span), "pointer": self.pointer}


class TextEdit(Value):
    """Replace ``span`` with ``new_text`` (same coordinates as diagnostics)."""

    span: Span
    new_text: str

    def to_json(self) -> dict[str, Any]:
        """The span's ``line``/``column``/``endLine``/``endColumn`` plus ``newText``."""
        return {**self.span.to_json(), "newText": self.new_text}


class Fix(Value):
    """A suggested fix: a message, text edits (ruff-style) and whether it is
    safe to apply unattended (:class:`Applicability`; unsafe unless the
    reporting rule says otherwise)."""

    message: str
    edits: tuple[TextEdit, ...] = ()
    applicability: Applicability = Applicability.UNSAFE

    @property
    def is_safe(self) -> bool:
        """True when the fix may be applied without review (``loopc check --fix``)."""
        return self.applicability is Applicability.SAFE

    def to_json(self) -> dict[str, Any]:
        """``{message, edits: [TextEdit.to_json()...], applicability}``."""
        return {"message": self.message, "edits": [e.to_json() for e in self.edits],
                "applicability": self.applicability.value}


class Diagnostic(Value):
    """One finding.

    ``code`` is ``LP`` + four digits (LP1xxx YAML, LP2xxx schema, LP3xxx types
    and expressions, LP4xxx graph, LP5xxx IR and budgets); ``name`` is its
    stable slug (see :mod:`loopc.codes`).  ``span`` is ``None`` for a
    finding about the whole source (too large, empty, an internal error).
    ``path`` is the file the diagnostic is about (the ``path`` given to
    ``check_source``; ``None`` for anonymous text).  ``section`` is the
    anchor of the docs/reference.md section whose rule this finding breaks
    (``node-join`` for a key missing from a join's configuration): the
    code's own section unless where the finding is says more; empty when
    none is known.
    """

    code: str
    name: str
    severity: Severity
    message: str
    span: Span | None
    pointer: str = ""
    node: str | None = None
    edge: str | None = None
    related: tuple[Related, ...] = ()
    fix: Fix | None = None
    path: str | None = None
    section: str = ""

    @property
    def is_error(self) -> bool:
        """True for ``error`` severity: the plan cannot compile."""
        return self.severity is Severity.ERROR

    @property
    def url(self) -> str:
        """Stable documentation URL of this diagnostic's code (:func:`docs_url`)."""
        return docs_url(self.code)

    @property
    def reference_url(self) -> str | None:
        """Documentation URL of the rule this finding breaks,
        ``{docs_base_url()}/reference.md#{section}``, or ``None`` without a
        section."""
        return f"{docs_base_url()}/reference.md#{self.section}" if self.section else None

    def sort_key(self) -> tuple:
        """Positionless findings first, then by (line, column, code, message)."""
        s = self.span
        if s is None:
            return (0, 0, self.code, self.message)
        return (s.line, s.column, self.code, self.message)

    def to_json(self) -> dict[str, Any]:
        """The ``loopc check --format json`` shape of one diagnostic
        (positions are ``null`` when ``span`` is ``None``)."""
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "message": self.message,
            **_span_json(self.span),
            "pointer": self.pointer,
            "node": self.node,
            "edge": self.edge,
            "related": [r.to_json() for r in self.related],
            "fix": self.fix.to_json() if self.fix else None,
            "url": self.url,
        }
