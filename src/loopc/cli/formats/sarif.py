"""``--format sarif``: SARIF 2.1.0 (OASIS) for code-scanning services.

One run whose driver lists every rule that occurs (id, slug, title,
explanation, ``helpUri`` from :func:`loopc.codes.docs_url`, default level);
one result per diagnostic with its physical location (1-based lines and
columns; ``columnKind`` is ``unicodeCodePoints``, end column exclusive as
SARIF defines it), related locations, ``partialFingerprints``
(``loopc/v1``: code + node/edge id + pointer, so they survive line moves)
and its fix.  A path that could not be read is a failed tool execution
notification located at that file (``executionSuccessful`` false).
The tests validate the output against the official 2.1.0 schema.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from loopc.cli.formats import FileReport, Format
from loopc.cli.formats._common import fingerprint, uri
from loopc.diagnostics import Diagnostic, Severity, Span

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _region(span: Span | None) -> dict[str, Any] | None:
    if span is None:
        return None
    r: dict[str, Any] = {
        "startLine": span.line,
        "startColumn": span.column,
        "endLine": span.end_line,
        "endColumn": span.end_column,
    }
    if span.start is not None and span.end is not None:
        r["charOffset"] = span.start
        r["charLength"] = max(0, span.end - span.start)
    return r


def _location(path: str, span: Span | None, message: str | None = None) -> dict[str, Any]:
    phys: dict[str, Any] = {"artifactLocation": {"uri": uri(path)}}
    reg = _region(span)
    if reg is not None:
        phys["region"] = reg
    loc: dict[str, Any] = {"physicalLocation": phys}
    if message:
        loc["message"] = {"text": message}
    return loc


def _result(path: str, d: Diagnostic, rule_index: int) -> dict[str, Any]:
    res: dict[str, Any] = {
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": _LEVEL.get(d.severity, "warning"),
        "message": {"text": d.message},
        "locations": [_location(path, d.span)],
        "partialFingerprints": {"loopc/v1": fingerprint(d)},
    }
    logical = []
    if d.node:
        logical.append({"name": d.node, "kind": "node"})
    if d.edge:
        logical.append({"name": d.edge, "kind": "edge"})
    if logical:
        res["locations"][0]["logicalLocations"] = logical
    if d.related:
        res["relatedLocations"] = [{**_location(path, r.span, r.message), "id": i} for i, r in enumerate(d.related)]
    if d.fix is not None and d.fix.edits:
        res["fixes"] = [
            {
                "description": {"text": d.fix.message},
                "artifactChanges": [
                    {
                        "artifactLocation": {"uri": uri(path)},
                        "replacements": [
                            {"deletedRegion": _region(e.span), "insertedContent": {"text": e.new_text}}
                            for e in d.fix.edits
                        ],
                    }
                ],
            }
        ]
    return res


def render(reports: Sequence[FileReport]) -> str:
    """The SARIF log (one trailing newline)."""
    import loopc
    from loopc import codes

    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    results = []
    notifications = []
    for r in reports:
        if r.error is not None:
            notifications.append(
                {
                    "level": "error",
                    "message": {"text": r.error},
                    "locations": [_location(r.path, None)],
                    "descriptor": {"id": "loopc.unreadable"},
                }
            )
            continue
        for d in r.diagnostics:
            if d.code not in index:
                index[d.code] = len(rules)
                try:
                    c = codes.get(d.code)
                    title, text, sev = c.title, c.explanation, c.severity
                except KeyError:
                    title, text, sev = d.name, d.name, d.severity
                rules.append(
                    {
                        "id": d.code,
                        "name": d.name,
                        "shortDescription": {"text": title},
                        "fullDescription": {"text": text},
                        "helpUri": codes.docs_url(d.code),
                        "help": {"text": f"{title}. See {codes.docs_url(d.code)}"},
                        "defaultConfiguration": {"level": _LEVEL.get(sev, "warning")},
                    }
                )
            results.append(_result(r.path, d, index[d.code]))
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "loopc",
                        "version": loopc.__version__,
                        "informationUri": codes.docs_base_url(),
                        "rules": rules,
                    }
                },
                "invocations": [
                    {"executionSuccessful": not notifications, "toolExecutionNotifications": notifications}
                ],
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    from loopc.cli.textsafe import json_text

    return json_text(json.dumps(log, indent=2, ensure_ascii=False)) + "\n"  # no `##[` as written


FORMAT = Format(name="sarif", help="SARIF 2.1.0 log (code scanning, e.g. GitHub)", render=render)
