"""Render diagnostics for the command line: compiler-style text and the JSON
contract of ``loopc check --format json`` (issue 2, kept exactly)."""
from __future__ import annotations

import json
import unicodedata
from typing import Iterable, Sequence

from loopc.diagnostics import Diagnostic, Severity


def _display_width(text: str) -> int:
    """Terminal columns of ``text``: East Asian wide/fullwidth characters
    (CJK, most emoji) take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _caret_line(source_line: str, col: int, end_col: int) -> str:
    """Underline code points ``col..end_col`` (1-based, end exclusive) of
    ``source_line`` as a terminal shows it: tabs are kept, wide characters
    count two columns."""
    prefix = "".join(
        "\t" if ch == "\t" else " " * _display_width(ch) for ch in source_line[: col - 1]
    )
    width = max(1, _display_width(source_line[col - 1 : end_col - 1]))
    return prefix + "^" + "~" * (width - 1)


def format_text(path: str, diags: Sequence[Diagnostic], lines: Sequence[str] | None) -> str:
    """``path:line:col: severity[code] message`` plus the source line and a
    caret underline (multi-line ranges underline to the end of the first line)."""
    out: list[str] = []
    for d in diags:
        out.append(f"{path}:{d.span.line}:{d.span.column}: {d.severity.value}[{d.code}] {d.message}")
        where = []
        if d.node:
            where.append(f"node '{d.node}'")
        if d.edge:
            where.append(f"edge '{d.edge}'")
        if lines is not None and 1 <= d.span.line <= len(lines):
            src = lines[d.span.line - 1]
            end = d.span.end_column if d.span.end_line == d.span.line else len(src) + 1
            end = min(max(end, d.span.column + 1), len(src) + 2)
            out.append(f"  {d.span.line:>4} | {src}")
            out.append(f"       | {_caret_line(src, d.span.column, end)}")
        for r in d.related:
            out.append(f"  note: {path}:{r.span.line}:{r.span.column}: {r.message}")
        if d.fix is not None:
            out.append(f"  help: {d.fix.message}")
        if where:
            out.append(f"  in {', '.join(where)}")
    return "\n".join(out)


def summary(files: Iterable[tuple[str, Sequence[Diagnostic]]]) -> dict[str, int]:
    n = errors = warnings = 0
    for _, diags in files:
        n += 1
        errors += sum(1 for d in diags if d.severity is Severity.ERROR)
        warnings += sum(1 for d in diags if d.severity is Severity.WARNING)
    return {"files": n, "errors": errors, "warnings": warnings}


def format_json(files: Sequence[tuple[str, Sequence[Diagnostic]]]) -> str:
    """The JSON document of ``loopc check --format json``."""
    doc = {
        "files": [
            {"path": path, "diagnostics": [d.to_json() for d in diags]}
            for path, diags in files
        ],
        "summary": summary(files),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)
