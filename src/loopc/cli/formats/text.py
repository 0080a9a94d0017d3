"""``--format text`` (the default): compiler-style text for people.

``path:line:col: severity[code] message``, the source line with a caret
underline, notes for related locations, ``help:`` for a fix and the culprit
node or edge; a finding without a position prints ``path: severity[code]
message`` alone.  The summary line goes to standard error.

Linear and streaming (docs/language.md#command-line-output): each
diagnostic is written as it is formatted (:func:`write_text`), and its
excerpt shows at most :data:`EXCERPT_WIDTH` code points of its line (a
window around the column; ``…`` marks what is cut), so the work per
diagnostic is bounded whatever the line's length.  Display widths come from
wcwidth by grapheme cluster (CJK and emoji take two columns, a ZWJ sequence
is one cluster; wcwidth is imported only for a line that is not ASCII); tabs are kept.  Lines split where positions split them
(LF, CRLF, CR); NEL, U+2028 and U+2029 inside a line show as ``<U+2028>``
(and the first ``#`` of ``##[`` as ``<U+0023>``, so no excerpt holds a CI
runner's command prefix);
file names, messages and node ids are escaped (:mod:`loopc.cli.textsafe`).
"""
from __future__ import annotations

import io
from typing import IO, Iterable, Sequence

from loopc import lazyre
from loopc.cli.formats import FileReport, Format, summary
from loopc.cli.textsafe import UNSAFE, escape_text
from loopc.diagnostics import Diagnostic

#: Longest excerpt shown for one diagnostic, in code points of its line.
EXCERPT_WIDTH = 160
#: Code points shown before the column when a long line is windowed.
EXCERPT_LEAD = 60

# excerpt tokens: a tab (kept), one unsafe character (or the first ``#`` of
# ``##[``, a CI runner's legacy command prefix), a run of safe text
_UNSAFE_NO_TAB = UNSAFE.replace("\x00-\x1f", "\x00-\x08\x0a-\x1f")
# (compiled on first use: a clean check shows no excerpt)
_TOKEN = lazyre.compile(f"(\t)|([{_UNSAFE_NO_TAB}]|#(?=#\\[))|((?:[^{UNSAFE}#]|#(?!#\\[))+)")


def _shown_unsafe(ch: str) -> str:
    return f"<U+{ord(ch):04X}>"


#: How far back (in code points) a window edge looks for the start of the
#: grapheme cluster it falls in; keeps the work per diagnostic bounded.
_CLUSTER_LOOKBACK = 32


def _cluster_start(src: str, i: int) -> int:
    """Start of the grapheme cluster holding ``src[i]`` (``i`` itself at
    either end of ``src``), looking back at most :data:`_CLUSTER_LOOKBACK`
    code points."""
    if i <= 0 or i >= len(src):
        return max(0, min(i, len(src)))
    pair = src[i - 1:i + 1]
    if pair.isascii() and pair != "\r\n":
        return i  # two ASCII code points other than CR LF are two clusters (UAX #29)
    from wcwidth import grapheme_boundary_before

    base = max(0, i - _CLUSTER_LOOKBACK)
    return base + grapheme_boundary_before(src[base:i + 1], i + 1 - base)


def _cluster_end(src: str, i: int) -> int:
    """End of the grapheme cluster holding ``src[i - 1]`` (``i`` when it
    is a boundary), looking ahead at most :data:`_CLUSTER_LOOKBACK`."""
    if i <= 0 or i >= len(src):
        return max(0, min(i, len(src)))
    pair = src[i - 1:i + 1]
    if pair.isascii() and pair != "\r\n":
        return i
    from wcwidth import iter_graphemes

    start = _cluster_start(src, i - 1)
    first = next(iter_graphemes(src, start, min(len(src), i + _CLUSTER_LOOKBACK)), "")
    return max(i, start + len(first))


def _piece(text: str, blank: bool) -> str:
    """Display form of an excerpt piece; ``blank``: the same width in
    spaces (tabs kept), for the caret line."""
    out: list[str] = []
    for m in _TOKEN.finditer(text):
        tab, bad, run = m.groups()
        if tab is not None:
            out.append("\t")
        elif bad is not None:
            shown = _shown_unsafe(bad)
            out.append(" " * len(shown) if blank else shown)
        else:
            out.append(" " * _run_width(run) if blank else run)
    return "".join(out)


def _run_width(run: str) -> int:
    """Display width of a run of safe text: :func:`wcwidth.wcswidth`, which
    measures whole grapheme clusters (a combining mark adds nothing, a ZWJ
    emoji sequence or an East Asian wide character takes two columns)."""
    if run.isascii():
        return len(run)
    from wcwidth import wcswidth

    return max(0, wcswidth(run))


def _width(text: str) -> int:
    """Display width of an excerpt piece (a tab counts one)."""
    n = 0
    for m in _TOKEN.finditer(text):
        tab, bad, run = m.groups()
        if tab is not None:
            n += 1
        elif bad is not None:
            n += len(_shown_unsafe(bad))
        else:
            n += _run_width(run)
    return n


def excerpt(src: str, col: int, end_col: int) -> tuple[str, str]:
    """(shown line, caret line) underlining code points ``col..end_col``
    (1-based, end exclusive) of ``src``.  Columns are display columns of
    whole grapheme clusters: the caret starts under the cluster that holds
    ``col`` and underlines every cluster the range touches.  Lines longer
    than :data:`EXCERPT_WIDTH` are windowed around ``col`` (the window's
    edges never split a cluster); the work is bounded by the window, not
    the line."""
    n = len(src)
    col = max(1, min(col, n + 1))
    end_col = max(col + 1, min(end_col, n + 2))
    lo, hi = 0, n
    if n > EXCERPT_WIDTH:
        lo = _cluster_start(src, max(0, min(col - 1 - EXCERPT_LEAD, n - EXCERPT_WIDTH)))
        hi = _cluster_end(src, min(n, lo + EXCERPT_WIDTH))
    head = "…" if lo > 0 else ""
    tail = "…" if hi < n else ""
    shown = head + _piece(src[lo:hi], False) + tail
    first = max(lo, _cluster_start(src, col - 1))
    last = max(first, min(hi, _cluster_end(src, min(end_col - 1, hi))))
    prefix = (" " if head else "") + _piece(src[lo:first], True)
    width = max(1, _width(src[first:last]))
    return shown, prefix + "^" + "~" * (width - 1)


def _caret_line(source_line: str, col: int, end_col: int) -> str:
    """The caret underline of :func:`excerpt` alone."""
    return excerpt(source_line, col, end_col)[1]


def _plain(text: str, style: str) -> str:
    return text


def write_text(
    out: IO[str], path: str, diags: Iterable[Diagnostic], lines: Sequence[str] | None, *, color: bool = False
) -> int:
    """Write each diagnostic (``path:line:col: severity[code] message``, the
    source line and a caret underline — multi-line ranges underline to the
    end of the first line) to ``out`` as it is formatted; returns how many.
    ``lines`` are the source's lines (:func:`source_lines`) or ``None``.
    ``color``: the location, ``severity[code]``, caret, ``note:`` and
    ``help:`` in ANSI colours (:mod:`loopc.cli.color`); without it the text
    has no escape codes."""
    shown_path = escape_text(path)
    paint = _plain
    if color:
        from loopc.cli.color import paint
    count = 0
    for d in diags:
        count += 1
        span = d.span
        msg = escape_text(d.message)
        sev = d.severity.value
        label = paint(f"{sev}[{d.code}]", sev)
        if span is None:
            parts = [f"{paint(shown_path + ':', 'path')} {label} {msg}"]
        else:
            parts = [f"{paint(f'{shown_path}:{span.line}:{span.column}:', 'path')} {label} {msg}"]
            if lines is not None and 1 <= span.line <= len(lines):
                src = lines[span.line - 1]
                end = span.end_column if span.end_line == span.line else len(src) + 1
                shown, caret = excerpt(src, span.column, end)
                bar = paint("|", "gutter")
                parts.append(f"  {paint(f'{span.line:>4}', 'gutter')} {bar} {shown}")
                lead = len(caret) - len(caret.lstrip(" \t"))
                parts.append(f"       {bar} {caret[:lead]}{paint(caret[lead:], sev)}")
        for r in d.related:
            where_r = f"{shown_path}:{r.span.line}:{r.span.column}" if r.span is not None else shown_path
            parts.append(f"  {paint('note:', 'note')} {where_r}: {escape_text(r.message)}")
        if d.fix is not None:
            parts.append(f"  {paint('help:', 'help')} {escape_text(d.fix.message)}")
        where = []
        if d.node:
            where.append(f"node '{escape_text(d.node)}'")
        if d.edge:
            where.append(f"edge '{escape_text(d.edge)}'")
        if where:
            parts.append(f"  in {', '.join(where)}")
        out.write("\n".join(parts) + "\n")
    return count


def format_text(
    path: str, diags: Sequence[Diagnostic], lines: Sequence[str] | None, *, color: bool = False
) -> str:
    """:func:`write_text` into a string (without the final newline)."""
    buf = io.StringIO()
    write_text(buf, path, diags, lines, color=color)
    return buf.getvalue()[:-1]


def source_lines(text: str | None) -> list[str] | None:
    """The lines of ``text`` as positions count them (LF, CRLF, CR; not NEL,
    U+2028 or U+2029, which :meth:`str.splitlines` would also split at); like
    ``splitlines`` no empty last line after a final line break."""
    if text is None:
        return None
    from loopc.lineindex import LINE_BREAK

    lines = LINE_BREAK.split(text)  # == LineIndex(text).lines(), in one C call
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def write(reports: Iterable[FileReport], out: IO[str], *, color: bool = False) -> None:
    """Stream every file with diagnostics, one block each (:func:`render`'s
    bytes; with ``color``, in colour: :func:`write_text`)."""
    for r in reports:
        if r.diagnostics:
            write_text(out, r.path, r.diagnostics, source_lines(r.text), color=color)


def render(reports: Sequence[FileReport]) -> str:
    """Every file with diagnostics, one block each."""
    buf = io.StringIO()
    write(reports, buf)
    return buf.getvalue()


def render_stderr(reports: Sequence[FileReport]) -> str:
    """``loopc: PATH: error`` for each unreadable path, then the summary line."""
    s = summary(reports)
    unreadable = "".join(f"loopc: {escape_text(r.path)}: {r.error}\n" for r in reports if r.error is not None)
    return unreadable + f"checked {s['files']} file(s): {s['errors']} error(s), {s['warnings']} warning(s)\n"


FORMAT = Format(name="text", help="compiler-style text with source excerpts (default)",
                render=render, render_stderr=render_stderr, write=write, color=True)
