"""Syntax-error reporting of the strict YAML layer
(:mod:`loopc.compiler.yamlload`; docs/reference.md#source-file): what a
libyaml parse or reader error means to an author — an unclosed bracket or
quote, an indentation slip (the causes of :mod:`loopc.compiler.yamlindent`,
with its bounded re-parses), a tab or an invisible character in the
indentation — reported as LP1001 diagnostics with their fixes
(the codes of :mod:`loopc.codes.yaml`).  Called once the composer stopped;
never raises on bad input.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from loopc import lazyre
from loopc.compiler.report import Reporter
from loopc.compiler.yamlnodes import YDocument, YMap, YNode, YScalar, YSeq
from loopc.compiler.yamlpos import _mark_span
from loopc.diagnostics import Span
from loopc.lineindex import LINE_BREAK


# Characters that look like indentation but are not YAML whitespace: the
# parser reads them as text.  Space separators other than U+0020, the
# zero-width characters and the Mongolian vowel separator.
_INVISIBLE = frozenset(
    "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u202f\u205f\u3000\u200b\u200c\u200d\u2060\ufeff\u180e"
)
_INDENT_CHARS = _INVISIBLE | {" ", "\t"}
_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff\u180e")


def char_name(ch: str) -> str:
    """``a tab``, ``a no-break space (U+00A0)``, ``an en space (U+2002)``:
    the character named for a message."""
    if ch == "\t":
        return "a tab"
    import unicodedata

    name = unicodedata.name(ch, f"character U+{ord(ch):04X}").lower()
    article = "an" if name[0] in "aeiou" else "a"
    return f"{article} {name} (U+{ord(ch):04X})"


def _line_start(text: str, index: int, column: int) -> int:
    """Index of the first code point of the line holding ``text[index]``
    (``column`` is libyaml's column of that index)."""
    return max(0, index - column)


def _in_indentation(text: str, index: int, column: int) -> bool:
    """Whether only spaces and ``- `` indicators precede ``text[index]`` on its line."""
    head = text[_line_start(text, index, column):index]
    return head.replace("- ", "  ").strip(" ") == "" and (not head or head[-1] in " -")


def _indent_culprit(text: str, start: int) -> int | None:
    """Index of the first tab or invisible character in the indentation of
    the line starting at ``start`` (the run of spaces, ``- `` indicators and
    such characters before its content), or ``None``."""
    i, n = start, len(text)
    while i < n:
        ch = text[i]
        if ch == " " or (ch == "-" and i + 1 < n and text[i + 1] == " "):
            i += 1
            continue
        if ch in _INDENT_CHARS:
            return i
        return None
    return None


def _culprit_before(text: str, start: int, end: int, verbatim: list[tuple[int, int]]) -> int | None:
    """The last tab or invisible character in the indentation of a line
    starting in ``start..end``, outside quoted and block scalars (whose line
    starts are content), or ``None``."""
    best = None
    for m in _INDENT_CULPRIT.finditer(text, start, end):
        i = m.start(1)
        if not any(a <= i < b for a, b in verbatim):
            best = i
    return best


# a tab or invisible character in a line's indentation (compiled on first use: only a YAML error looks)
_INDENT_CULPRIT = lazyre.compile("(?:^|(?<=[\\n\\r]))(?:[ ]|- )*([\\t" + "".join(sorted(_INVISIBLE)) + "])", re.M)


def _invisible_message(text: str, i: int, line: int) -> tuple[str, str]:
    """(message, replacement) for the tab or invisible character at ``text[i]``."""
    ch = text[i]
    what = char_name(ch)
    if ch == "\t":
        return (f"line {line} is indented with {what}: YAML indents with spaces only; "
                "replace the tab with spaces", "  ")
    fix = "" if ch in _ZERO_WIDTH else " "
    return (f"line {line} is indented with {what}, which is invisible but is not a space: YAML "
            f"indents with spaces only and reads it as text; "
            + ("delete it" if not fix else "replace it with a space"), fix)


def _report_invisible(text: str, i: int, where: Any, reporter: Reporter,
                      related: list[tuple[str, Any]] | None = None) -> None:
    """LP1001 at the tab or invisible character ``text[i]`` in indentation.
    An invisible character comes with a fix that keeps what the author
    sees: a space for a visible-width one, nothing for a zero-width one (a
    tab's width depends on the editor: no fix)."""
    from loopc.diagnostics import Applicability, Fix, TextEdit

    line0, col0 = where(_Mark(text, i))
    msg, repl = _invisible_message(text, i, line0 + 1)
    span = Span(line0 + 1, col0 + 1, line0 + 1, col0 + 2)
    # Replacing an invisible character by what the author sees keeps the
    # meaning they read: safe to apply unattended.
    fix = None if text[i] == "\t" else Fix(
        "replace it with a space" if repl else "delete it", (TextEdit(span, repl),), Applicability.SAFE)
    reporter.report("LP1001", span, msg, related=related or [], fix=fix)


class _Mark:
    """A libyaml-like mark (``index``, ``line``, ``column``) computed for a
    code-point index, for :func:`_positioner`'s ``where``."""

    def __init__(self, text: str, index: int) -> None:
        line, col = YDocument(text, None).position(index)
        self.index, self.line, self.column = index, line, col


_CLOSERS = {"{": "}", "[": "]"}


def _token_at(text: str, i: int) -> str:
    """The word at ``text[i]`` for a message (up to a separator, at most 40
    code points)."""
    m = re.compile(r"[^\s:,\[\]{}#]{1,40}").match(text, i)
    return m.group() if m else text[i:i + 1]


# at most this many candidate repairs are re-parsed to tell a cause
# (the error path only; each is one libyaml pass over the text)
_MAX_REPARSES = 4


def _reparse_stop(text: str) -> int | None:
    """Where libyaml gives up on ``text`` (a code-point index), or ``None``
    when the whole stream parses: a candidate repair is tested with it."""
    from loopc.compiler.yamlindent import reparse_stop

    stop = reparse_stop(text)
    return None if stop is None else stop[1]


def _progress(stop: int | None, delta: int) -> float:
    """How far a repaired text parses, in the original text's indices
    (``delta``: code points the repair added before the original stop)."""
    return float("inf") if stop is None else stop - delta


def _multiline_quoted(text: str, before: int) -> list[tuple[int, int, str]]:
    """(start, end, quote) of each quoted scalar token that spans lines and
    starts before ``text[before]``, in order: libyaml's scanner reads past a
    parse error, so the tokens up to it are known."""
    from ruamel.yaml.cyaml import CParser
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.tokens import ScalarToken

    parser = CParser(text)
    out = []
    try:
        while True:
            tok = parser.get_token()
            if tok is None or tok.start_mark.index >= before:
                break
            if tok.__class__ is ScalarToken and tok.style in ('"', "'") \
                    and tok.end_mark.line != tok.start_mark.line:
                out.append((tok.start_mark.index, tok.end_mark.index, tok.style))
    except YAMLError:
        pass
    return out


def _line_end(text: str, i: int) -> int:
    """Index of the line break ending the line that holds ``text[i]`` (or ``len(text)``)."""
    m = LINE_BREAK.search(text, i)
    return m.start() if m else len(text)


def _unclosed_quote(text: str, pi: int) -> tuple[int, int, str, int, bool] | None:
    """The quoted scalar left open on its line that makes the parser give
    up at ``text[pi]``: (quote index, index of the quote that closed it
    instead, quote, where closing it on its own line goes, whether the text
    then parses).  The cause is told by re-parsing: the string is closed on
    the line it opens (at the line's end, or before a flow `}`, `]` or `,`
    there) and the repair must get the parser past ``pi``; ``None`` when no
    such repair does."""
    tries = 0
    for start, end, q in reversed(_multiline_quoted(text, pi)[-2:]):
        eol = _line_end(text, start)
        rest = text[start + 1:eol]
        spots = [start + 1 + len(rest.rstrip(" "))]
        spots += [start + 1 + k for k in range(len(rest) - 1, -1, -1) if rest[k] in "}],"][:2]
        best: tuple[float, int] | None = None
        for spot in spots:
            if tries >= _MAX_REPARSES:
                break
            tries += 1
            got = _progress(_reparse_stop(text[:spot] + q + text[spot:]), 1)
            if got > pi and (best is None or got > best[0]):
                best = (got, spot)
            if got == float("inf"):
                break
        if best is not None:
            return start, end - 1, q, best[1], best[0] == float("inf")
    return None


def _report_parse_error(exc: Any, text: str, where: Any, open_nodes: list[YNode],
                        closed: YNode | None, pending: YScalar | None, verbatim: list[tuple[int, int]],
                        reporter: Reporter, judge: Callable[[str], bool] | None = None) -> None:
    """LP1001 for a libyaml parser or scanner error, at the cause where it
    can be told: a tab or invisible character in indentation, the `{`, `[`
    or quote that is never closed, the key that lines up with no open
    block; the place where the parser gave up is the related location."""
    pm = getattr(exc, "problem_mark", None)
    cm = getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or (str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    context = getattr(exc, "context", None) or ""
    span_at = lambda mark: _mark_span(mark, where)  # noqa: E731
    if pm is None:
        reporter.report("LP1001", _reader_error_span(exc, text), f"YAML syntax error: {problem}")
        return
    n = len(text)
    pi = min(max(0, pm.index), n)
    pline = where(pm)[0] + 1
    gave_up = ("the parser gave up here", span_at(pm))
    ch = text[pi] if pi < n else ""
    scanning_text = "quoted scalar" in context or "block scalar" in context
    # 0. a quoted string left open on its line: the parser reads on to the
    #    next quote of the same kind and gives up after it, lines later
    #    (told by re-parsing with the string closed on its own line)
    if not (cm is not None and "quoted scalar" in context and "end of stream" in problem):
        open_quote = _unclosed_quote(text, pi)
        if open_quote is not None:
            _report_open_quote(text, where, open_quote, gave_up, reporter)
            return
    # 1. a tab or an invisible character in indentation
    if not scanning_text:
        culprit = _indent_culprit(text, _line_start(text, pm.index, pm.column))
        if culprit is None and "tab" not in problem:
            since = _line_start(text, cm.index, cm.column) if cm is not None and cm.index <= pi else 0
            culprit = _culprit_before(text, since, pi, verbatim)
        if culprit is not None and (text[culprit] != "\t" or "tab" in problem or ch == "\t"):
            cline = where(_Mark(text, culprit))[0] + 1
            _report_invisible(text, culprit, where, reporter,
                              related=[gave_up] if cline != pline else None)
            return
    # 2. a flow collection never closed, closed by the wrong bracket, or
    #    missing a comma
    flow_open = next((x for x in reversed(open_nodes) if isinstance(x, (YMap, YSeq)) and x.flow), None)
    if not (cm is not None and "flow" in context and 0 <= cm.index < n and text[cm.index] in _CLOSERS) \
            and flow_open is not None and 0 <= flow_open.start < n and text[flow_open.start] in _CLOSERS:
        cm = _Mark(text, flow_open.start)
        context = "while parsing a flow collection"
    if cm is not None and "flow" in context and 0 <= cm.index < n and text[cm.index] in _CLOSERS:
        opener = text[cm.index]
        closer = _CLOSERS[opener]
        kind = "mapping" if opener == "{" else "sequence"
        oline, ocol = where(cm)
        if ch in "}]" and ch and ch != closer:
            reporter.report(
                "LP1001", span_at(cm),
                f"this `{opener}` is never closed: the `{ch}` at line {pline}, column "
                f"{where(pm)[1] + 1} comes before its `{closer}`",
                related=[(f"`{ch}` found here", span_at(pm))])
            return
        p_indent = _indent_width(text, _line_start(text, pm.index, pm.column))
        o_indent = _indent_width(text, _line_start(text, cm.index, cm.column))
        if pi >= n or text[pi:].strip() == "":
            reporter.report(
                "LP1001", span_at(cm),
                f"this `{opener}` is never closed: the file ends before its `{closer}`",
                related=[("the file ends here", span_at(pm))])
            return
        if pline > oline + 1 and p_indent <= o_indent:
            tok = _token_at(text, _line_start(text, pm.index, pm.column) + p_indent)
            reporter.report(
                "LP1001", span_at(cm),
                f"this `{opener}` is never closed: the flow {kind} it opens on line {oline + 1} "
                f"runs on to line {pline}, where `{tok}` cannot continue it; close it with `{closer}`",
                related=[gave_up])
            return
        reporter.report(
            "LP1001", span_at(pm),
            f"a `,` or `{closer}` is expected here, in the flow {kind} opened at line {oline + 1}, "
            f"column {ocol + 1}: its entries are separated by `,`; one is missing, or the `{opener}` "
            f"is never closed",
            related=[(f"the flow {kind} opens here", span_at(cm))])
        return
    # 3. an unclosed quoted string
    if cm is not None and "quoted scalar" in context and "end of stream" in problem:
        q = text[cm.index] if 0 <= cm.index < n else '"'
        reporter.report(
            "LP1001", span_at(cm),
            f"this `{q}` is never closed: the quoted string runs to the end of the file; close it "
            f"with `{q}`",
            related=[("the file ends here", span_at(pm))])
        return
    # 4. a closing bracket with nothing open, a key that lines up with no block
    if "block" in context and ("expected key" in problem or "'-' indicator" in problem):
        if ch in "}]" and ch:
            reporter.report("LP1001", span_at(pm), f"unexpected `{ch}`: no flow collection is open here")
            return
        col = where(pm)[1] + 1
        cause = _indent_cause(text, pm, open_nodes, closed, verbatim, judge)
        tok = _token_at(text, pi)
        cols = _open_block_columns(open_nodes + ([closed] if closed is not None else []))
        same = [c for c in cols if c[0] == col and isinstance(c[3], YSeq)]
        if cause is not None:
            if ch == "-" and "expected key" in problem:
                head = (f"the `- ` item on line {pline} is at column {col}, where the mapping around it "
                        f"expects a `key: value` entry")
            elif same:
                head = f"`{tok}` on line {pline} is at column {col}, where the list's `- ` items start"
            else:
                what = "the `- ` item" if ch == "-" else f"`{tok}`"
                head = f"{what} on line {pline} is indented to column {col}, which lines up with no open block"
            _report_indent(cause, head, pline, gave_up, reporter,
                           tail=" to continue the item above, or start a new item with `- `"
                           if same and not (ch == "-") and all(c.col + 1 > col for c in cause.choices) else "")
            return
        if ch == "-" and "expected key" in problem:
            reporter.report(
                "LP1001", span_at(pm),
                f"a `- ` list item at line {pline}, column {col}, where the mapping around it expects "
                f"a `key: value` entry: put the list under a key, indented",
                related=[("the mapping starts here", span_at(cm))] if cm is not None else [])
            return
        if same:
            deeper = [c for c in cols if c[0] > col]
            cont = (f"indent it to column {deeper[0][0]} (like {deeper[0][1]} on line {deeper[0][2]}) to "
                    f"continue the item above, or " if deeper else "")
            reporter.report(
                "LP1001", span_at(pm),
                f"`{tok}` on line {pline} is at column {col}, where the list's `- ` items start: "
                f"{cont}start a new item with `- `",
                related=[(f"{label} {'are' if label.startswith('the ') else 'is'} at column {c}", node)
                         for c, label, _ln, node in (deeper[:1] + same)])
            return
        below = [c for c in cols if c[0] < col]
        above = [c for c in cols if c[0] > col]
        options = [c for c in (above[:1] + below[-1:])]
        if options:
            choices = " or ".join(f"column {c} (like {label} on line {ln})" for c, label, ln, _n in options)
            reporter.report(
                "LP1001", span_at(pm),
                f"`{tok}` on line {pline} is indented to column {col}, which lines up with no open "
                f"block: indent it to {choices}",
                related=[(f"{label} {'are' if label.startswith('the ') else 'is'} at column {c}", node)
                         for c, label, _ln, node in options])
            return
    # 5. a `: ` the parser cannot take as a mapping
    if "mapping values are not allowed" in problem:
        ls = _line_start(text, pm.index, pm.column)
        line_text = text[ls:pi]
        key = pending if pending is not None else _last_key(open_nodes)
        if ": " in line_text.lstrip(" -") or line_text.rstrip().endswith(":"):
            reporter.report(
                "LP1001", span_at(pm),
                f"a second `: ` on line {pline}: a plain value cannot hold `: `; quote the value "
                f"(`'...'`) or move the nested mapping to its own lines",
                related=[])
            return
        if key is not None and _indent_width(text, ls) > key.col:
            ti = ls + _indent_width(text, ls)
            tok = _token_at(text, ti)
            cause = _indent_cause(text, pm, open_nodes, closed, verbatim, judge)
            if cause is not None:
                head = (f"`{tok}` on line {pline} is indented deeper than `{key.raw}` (line {key.line + 1}), "
                        f"so it reads as the rest of `{key.raw}`'s value, and a value cannot turn into a "
                        f"mapping there")
                _report_indent(cause, head, pline, gave_up, reporter,
                               lead=f"line it up with `{key.raw}` (column {key.col + 1})"
                               if [c.col for c in cause.choices] == [key.col] else None)
                return
            reporter.report(
                "LP1001", span_at(_Mark(text, ti)),
                f"`{tok}` on line {pline} is indented deeper than `{key.raw}` (line {key.line + 1}), "
                f"so it reads as the rest of `{key.raw}`'s value, and a value cannot turn into a "
                f"mapping there: line it up with `{key.raw}` (column {key.col + 1})",
                related=[(f"`{key.raw}` is here", key)])
            return
    # 6. a key without `:`
    if cm is not None and "simple key" in context and "':'" in problem:
        tok = _token_at(text, min(max(0, cm.index), n - 1)) if n else ""
        key = _last_key(open_nodes)
        if key is not None and cm.column != key.col and cm.line != pm.line \
                and _in_indentation(text, cm.index, cm.column):
            # not at its block's column: a line dedented out of the value it
            # continues, not a key that lost its `:`
            cause = _indent_cause(text, cm, open_nodes, closed, verbatim, judge)
            if cause is not None:
                kline = where(cm)[0] + 1
                head = (f"`{tok}` on line {kline} is indented to column {where(cm)[1] + 1}, where it "
                        f"neither continues the value above nor starts a `key: value` entry")
                _report_indent(cause, head, kline, gave_up, reporter)
                return
        reporter.report(
            "LP1001", span_at(cm),
            f"`{tok}` on line {where(cm)[0] + 1} is not followed by `:`: in a mapping each entry "
            f"is `key: value`",
            related=[gave_up])
        return
    # anything else: libyaml's words, with where the construct began
    msg = f"YAML syntax error: {problem}"
    related = []
    if context:
        msg += f" ({context})"
        thing = context.split(" ", 2)[-1] if context.startswith("while ") else context
        if cm is not None and (cm.line, cm.column) != (pm.line, pm.column):
            related.append((f"{thing} starts here", span_at(cm)))
    reporter.report("LP1001", span_at(pm), msg, related=related)


def _indent_cause(text: str, pm: Any, open_nodes: list[YNode], closed: YNode | None,
                  verbatim: list[tuple[int, int]], judge: Callable[[str], bool] | None = None) -> Any:
    """The mis-indented line behind an indentation error stopped at ``pm``
    (:func:`loopc.compiler.yamlindent.find_cause`), or ``None``."""
    from loopc.compiler.yamlindent import find_cause

    return find_cause(text, pm.line, open_nodes, closed, verbatim, judge)


def _report_indent(cause: Any, head: str, pline: int, gave_up: tuple[str, Span], reporter: Reporter,
                   *, tail: str = "", lead: str | None = None) -> None:
    """LP1001 at the mis-indented line ``cause`` names (a
    :class:`loopc.compiler.yamlindent.Cause`): ``head`` says what the
    parser's stop line is when the cause is that line; the columns that
    re-parsing showed to work are named; the fix re-indents the line (and
    its block when that had to move with it), safe when it is the one
    re-indentation tried that parses; the parser's stop is related when
    the cause is an earlier line."""
    from loopc.compiler.yamlindent import describe, related
    from loopc.diagnostics import Applicability, Fix, TextEdit

    line = cause.line + 1
    what = "the `- ` item" if cause.item else f"`{cause.token}`"
    advice = lead or f"indent it to {describe(cause.choices)}{tail}"
    if line == pline:
        msg = f"{head}: {advice}"
        rel = related(cause.choices)
    else:
        msg = (f"{what} on line {line} is indented to column {cause.col + 1}, out of line with the block "
               f"it belongs to, so the parser gives up on line {pline}: {advice}")
        rel = [gave_up] + related(cause.choices)
    fix = None
    if cause.edits:
        col = cause.choices[0].col + 1
        fix = Fix(f"indent {what} to column {col}" + (" with its block" if len(cause.edits) > 1 else ""),
                  tuple(TextEdit(Span(ln + 1, 1, ln + 1, old + 1), " " * new) for ln, old, new in cause.edits),
                  Applicability.SAFE if cause.safe else Applicability.UNSAFE)
    reporter.report("LP1001", Span.point(line, cause.col + 1), msg, related=rel, fix=fix)


def _report_open_quote(text: str, where: Any, found: tuple[int, int, str, int, bool],
                       gave_up: tuple[str, Span], reporter: Reporter) -> None:
    """LP1001 at a quote never closed on its line (:func:`_unclosed_quote`);
    the fix closes it where re-parsing showed the text then parses."""
    from loopc.diagnostics import Fix, TextEdit

    start, closer, q, spot, parses = found
    qline, qcol = where(_Mark(text, start))
    cline, ccol = where(_Mark(text, closer))
    sline, scol = where(_Mark(text, spot))
    msg = (f"this `{q}` is never closed on line {qline + 1}: the quoted string runs on to the next `{q}`, "
           f"on line {cline + 1}, and the parser gives up after it; close the string with `{q}` on "
           f"line {qline + 1}")
    fix = None
    if parses:
        at = Span(sline + 1, scol + 1, sline + 1, scol + 1)
        fix = Fix(f"close the string with `{q}`", (TextEdit(at, q),))
    reporter.report("LP1001", Span.point(qline + 1, qcol + 1), msg,
                    related=[(f"the next `{q}` is here", Span.point(cline + 1, ccol + 1)), gave_up], fix=fix)


def _indent_width(text: str, start: int) -> int:
    """Leading spaces (and ``- `` indicators) of the line at ``start``."""
    i, n = start, len(text)
    while i < n and (text[i] == " " or (text[i] == "-" and i + 1 < n and text[i + 1] == " ")):
        i += 1
    return i - start


def _open_block_columns(open_nodes: list[YNode]) -> list[tuple[int, str, int, YNode]]:
    """(1-based column, label, line, node) of each open block collection's
    entries, innermost last, sorted by column: a mapping's keys, a
    sequence's ``-``."""
    out: dict[int, tuple[int, str, int, YNode]] = {}
    for node in open_nodes:
        k = node.last_key() if isinstance(node, YMap) and not node.flow else None
        if k is not None:
            out[k.col + 1] = (k.col + 1, f"`{k.raw}`", k.line + 1, k)
        elif isinstance(node, YSeq) and not node.flow:
            out[node.col + 1] = (node.col + 1, "the `-` items", node.line + 1, node)
    return [out[c] for c in sorted(out)]


def _last_key(open_nodes: list[YNode]) -> YScalar | None:
    for node in reversed(open_nodes):
        if isinstance(node, YMap) and not node.flow and node.kv:
            return node.last_key()
    return None


# characters YAML 1.2 does not allow in a stream (the complement of c-printable);
# compiled on the first reader error only (the class takes ~4 ms to compile:
# start-up of ``loopc check``)
_NON_PRINTABLE = "[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"


def _reader_error_span(exc: Exception, text: str) -> Span | None:
    """Where a reader error (a character YAML does not allow) is: the
    reported position when there is one, else the first such character;
    ``None`` only when neither is known."""
    pos = getattr(exc, "position", None)
    if not (isinstance(pos, int) and 0 <= pos <= len(text)):
        bad = re.search(_NON_PRINTABLE, text)
        pos = bad.start() if bad is not None else None
    if pos is None:
        return None
    line, col = YDocument(text, None).position(pos)
    return Span.point(line + 1, col + 1)
