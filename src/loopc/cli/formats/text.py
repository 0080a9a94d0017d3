"""``--format text`` (the default): compiler-style text for people.

``path:line:col: severity[code] message``, the source line with a caret
underline, notes for related locations, ``help:`` for a fix and the culprit
node or edge; a finding without a position prints ``path: severity[code]
message`` alone.  The summary line goes to standard error.
"""
from __future__ import annotations

import unicodedata
from typing import Sequence

from loopc.cli.formats import FileReport, Format, summary
from loopc.diagnostics import Diagnostic


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
        if d.span is None:
            out.append(f"{path}: {d.severity.value}[{d.code}] {d.message}")
        else:
            out.append(f"{path}:{d.span.line}:{d.span.column}: {d.severity.value}[{d.code}] {d.message}")
        where = []
        if d.node:
            where.append(f"node '{d.node}'")
        if d.edge:
            where.append(f"edge '{d.edge}'")
        if d.span is not None and lines is not None and 1 <= d.span.line <= len(lines):
            src = lines[d.span.line - 1]
            end = d.span.end_column if d.span.end_line == d.span.line else len(src) + 1
            end = min(max(end, d.span.column + 1), len(src) + 2)
            out.append(f"  {d.span.line:>4} | {src}")
            out.append(f"       | {_caret_line(src, d.span.column, end)}")
        for r in d.related:
            where_r = f"{path}:{r.span.line}:{r.span.column}" if r.span is not None else path
            out.append(f"  note: {where_r}: {r.message}")
        if d.fix is not None:
            out.append(f"  help: {d.fix.message}")
        if where:
            out.append(f"  in {', '.join(where)}")
    return "\n".join(out)


def source_lines(text: str | None) -> list[str] | None:
    """The lines of ``text`` as positions count them (LF, CRLF, CR; not NEL,
    U+2028 or U+2029, which :meth:`str.splitlines` would also split at); like
    ``splitlines`` no empty last line after a final line break."""
    if text is None:
        return None
    from loopc.lineindex import LineIndex

    lines = LineIndex(text).lines()
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def render(reports: Sequence[FileReport]) -> str:
    """Every file with diagnostics, one block each."""
    blocks = [format_text(r.path, r.diagnostics, source_lines(r.text))
              for r in reports if r.diagnostics]
    return "".join(b + "\n" for b in blocks)


def render_stderr(reports: Sequence[FileReport]) -> str:
    """``loopc: PATH: error`` for each unreadable path, then the summary line."""
    s = summary(reports)
    unreadable = "".join(f"loopc: {r.path}: {r.error}\n" for r in reports if r.error is not None)
    return unreadable + f"checked {s['files']} file(s): {s['errors']} error(s), {s['warnings']} warning(s)\n"


FORMAT = Format(name="text", help="compiler-style text with source excerpts (default)",
                render=render, render_stderr=render_stderr)
