"""loopc diagnostics → protocol diagnostics (docs/editors.md#features).

One loopc :class:`~loopc.diagnostics.Diagnostic` becomes one protocol
``Diagnostic`` with the same code, severity, message and range as
``loopc check`` prints, its related locations, ``codeDescription.href`` to
the code's documentation and, in ``data``, its fix with the edits already in
protocol coordinates (the code-action handler reads them back unchanged).
Severity overrides from the client's settings apply here and nowhere else.
"""
from __future__ import annotations

from typing import Any, Mapping

from lsprotocol import types as lsp

from loopc.diagnostics import Diagnostic, Fix, Severity
from loopc.lsp.positions import EditorIndex

SOURCE = "loopc"

_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFO: lsp.DiagnosticSeverity.Information,
}
_OVERRIDE = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "info": lsp.DiagnosticSeverity.Information,
    "information": lsp.DiagnosticSeverity.Information,
    "hint": lsp.DiagnosticSeverity.Hint,
}


def code_href(code: str) -> str | None:
    """Documentation URL of ``code`` (:func:`loopc.codes.docs_url`: one
    configurable base for every consumer)."""
    from loopc import codes

    try:
        return codes.docs_url(code)
    except Exception:  # noqa: BLE001 - a broken registry gives no link, not a crash
        return None


def _span(obj: Any) -> Any:
    return getattr(obj, "span", None)


def fix_data(fix: Fix, index: EditorIndex) -> dict[str, Any]:
    """JSON-shaped fix: ``{message, safe, applicability, edits: [{range,
    newText}]}`` with
    protocol ranges in the negotiated encoding."""
    safe = fix.is_safe
    edits = []
    for e in fix.edits:
        r = index.span_range(_span(e))
        edits.append({
            "range": {"start": {"line": r.start.line, "character": r.start.character},
                      "end": {"line": r.end.line, "character": r.end.character}},
            "newText": e.new_text,
        })
    return {"message": fix.message, "safe": safe, "applicability": fix.applicability.value, "edits": edits}


def to_lsp(d: Diagnostic, index: EditorIndex, uri: str,
           overrides: Mapping[str, str] | None = None) -> lsp.Diagnostic | None:
    """Protocol form of ``d`` (``None`` when a setting turns the code off)."""
    severity = _SEVERITY.get(d.severity, lsp.DiagnosticSeverity.Error)
    if overrides:
        o = overrides.get(d.code) or overrides.get(d.name)
        if isinstance(o, str):
            if o.lower() in ("off", "none", "ignore"):
                return None
            severity = _OVERRIDE.get(o.lower(), severity)
    related = [
        lsp.DiagnosticRelatedInformation(
            location=lsp.Location(uri=uri, range=index.span_range(_span(r))), message=r.message)
        for r in d.related
    ]
    href = code_href(d.code)
    data: dict[str, Any] = {"name": d.name}
    if d.pointer:
        data["pointer"] = d.pointer
    if d.node:
        data["node"] = d.node
    if d.edge:
        data["edge"] = d.edge
    if d.fix is not None:
        data["fix"] = fix_data(d.fix, index)
    return lsp.Diagnostic(
        range=index.span_range(_span(d)),
        message=d.message,
        severity=severity,
        code=d.code,
        code_description=lsp.CodeDescription(href=href) if href else None,
        source=SOURCE,
        related_information=related or None,
        data=data,
    )
