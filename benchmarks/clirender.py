"""Render a check result as ``loopc check`` does, text and JSON, with the
streaming CLI renderers (docs/api.md "Output formats"): what the hostile corpus
(``hostile.py``) measures and the fuzz target (``fuzz.py``) checks never
raises.  loopc is imported on first use, so a benchmark child process can
time its import baseline first."""
from __future__ import annotations

import io
from typing import Any


def render(res: Any, path: str) -> tuple[str, str]:
    """``(text, json)``: ``res`` (a :class:`loopc.CheckResult`) rendered for
    the file name ``path`` as the text report (with source excerpts when the
    document was read) and as the one-file JSON report."""
    from loopc.cli.formats import FileReport
    from loopc.cli.formats import json as json_format
    from loopc.cli.formats.text import source_lines, write_text

    text = io.StringIO()
    lines = source_lines(res.document.text) if res.document is not None else None
    write_text(text, path, res.diagnostics, lines)
    js = io.StringIO()
    json_format.write([FileReport(path, res.diagnostics, suppressed=res.suppressed,
                                  errors=res.error_count, warnings=res.warning_count)], js)
    return text.getvalue(), js.getvalue()
