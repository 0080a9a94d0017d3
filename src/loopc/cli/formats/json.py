"""``--format json``: the JSON contract of ``loopc check --format json``.

``{"files": [{"path", "diagnostics": [Diagnostic.to_json(), ...]}, ...],
"summary": {"files", "errors", "warnings"}}``, indent 2, UTF-8 kept as is.
A file that could not be read has ``"error": "<message>"`` and no diagnostics.
"""
from __future__ import annotations

import json
from typing import Sequence

from loopc.cli.formats import FileReport, Format, summary


def render(reports: Sequence[FileReport]) -> str:
    """The JSON document (one trailing newline)."""
    doc = {
        "files": [
            {"path": r.path, "diagnostics": [d.to_json() for d in r.diagnostics],
             **({"error": r.error} if r.error is not None else {})}
            for r in reports
        ],
        "summary": summary(reports),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


FORMAT = Format(name="json", help="one JSON document for all files", render=render)
