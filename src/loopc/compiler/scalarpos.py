"""Exact source positions inside YAML scalars (positions of
docs/reference.md#source-file for diagnostics inside expressions and templates).

An expression error is found at an offset into a scalar's *value*
(``YScalar.raw``: after unquoting, escape processing, line folding and block
indentation removal).  :func:`value_span` maps a value range back to the
source range that produced it.

How: the raw source slice ``doc.text[scalar.start:scalar.end]`` is rescanned
reproducing libyaml's value construction character by character (plain and
flow-quoted scalars: ``yaml_parser_scan_plain_scalar`` /
``yaml_parser_scan_flow_scalar``; block scalars:
``yaml_parser_scan_block_scalar`` with its indentation and chomping rules),
recording for every value character the source range it came from: an
ordinary character maps to itself, an escape (``\\u00e9``, ``''``) to the
whole escape, a folded space or kept line break to the line break that made
it.  The rebuilt value is compared with ``scalar.raw``; if they differ (an
exotic construct this emulation does not model) the scalar's own span is
returned instead — never a wrong position, never an exception.

Columns are code points, as everywhere in loopc (CJK and emoji count one).
"""
from __future__ import annotations

from typing import Sequence

from loopc.value import Value
from loopc.compiler.yamlnodes import YDocument, YScalar
from loopc.diagnostics import Span
from loopc.lineindex import LineIndex

_BREAKS = frozenset("\r\n\x85\u2028\u2029")
_BLANKS = frozenset(" \t")
_DQ_ESCAPES = {
    "0": "\0", "a": "\x07", "b": "\x08", "t": "\t", "\t": "\t", "n": "\n", "v": "\x0b",
    "f": "\x0c", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "'": "'", "\\": "\\",
    "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029",
}
_HEX_LEN = {"x": 2, "u": 4, "U": 8}


class _Mismatch(Exception):
    """The emulation cannot reproduce the value (fall back to the node span)."""


class ScalarMap(Value):
    """Source ranges of every value character of one scalar.

    ``starts[i]``/``ends[i]`` are indexes into ``doc.text`` (end exclusive) of
    the source text that produced value character ``i``; ``index`` is the
    document's :class:`~loopc.lineindex.LineIndex` (not the document: the
    document caches its maps, and a map pointing back at it would be a
    reference cycle).
    """

    index: LineIndex
    scalar: YScalar
    starts: Sequence[int]
    ends: Sequence[int]

    def span(self, start: int, end: int) -> Span:
        """Source span of value offsets ``[start, end)`` (clamped to the
        value; ``start == end`` gives a one-character point span there)."""
        n = len(self.starts)
        if n == 0:
            return self.scalar.span
        start = max(0, min(start, n))
        end = max(start, min(end, n))
        pos = self.index.position
        if start == end:
            idx = self.starts[start] if start < n else self.ends[n - 1]
            line, col = pos(idx)
            return Span.point(line + 1, col + 1)
        s_line, s_col = pos(self.starts[start])
        e_line, e_col = pos(self.ends[end - 1])
        return Span(s_line + 1, s_col + 1, e_line + 1, e_col + 1)


def map_scalar(doc: YDocument, scalar: YScalar) -> ScalarMap | None:
    """Build the :class:`ScalarMap` of ``scalar``, or ``None`` if its value
    cannot be reproduced from the source (callers then use the node span).
    Linear in the scalar's source length (a block scalar may try up to
    three indentation levels, whatever its indentation).  A flow scalar
    whose source body is its value (no escape, no line folding, the usual
    case) maps by arithmetic: ``range`` objects, no per-character lists (a
    1 MiB quoted scalar would otherwise take ~200 MB)."""
    try:
        text = doc.text
        a, b = scalar.start, scalar.end
        if not (0 <= a <= b <= len(text)):
            return None
        style = scalar.style
        if style in ("|", ">"):
            got = _block(text, a, b, scalar.raw, _parent_indent(scalar))
        elif style == "'" or style == '"':
            if b - a < 2 or text[a] != style or text[b - 1] != style:
                return None
            if text[a + 1:b - 1] == scalar.raw:  # no escape, no folding: value offset k is source a + 1 + k
                return ScalarMap(doc.index, scalar, range(a + 1, b - 1), range(a + 2, b))
            got = _flow(text, a + 1, b - 1, style)
        elif style == "":
            if text[a:b] == scalar.raw:
                return ScalarMap(doc.index, scalar, range(a, b), range(a + 1, b + 1))
            got = _flow(text, a, b, "")
        else:
            return None
        if got is None:
            return None
        chars, starts, ends = got
        if "".join(chars) != scalar.raw:
            return None
        return ScalarMap(doc.index, scalar, starts, ends)
    except (_Mismatch, IndexError, ValueError):
        return None


def value_span(doc: YDocument, scalar: YScalar, start: int, end: int) -> Span:
    """Exact source span of value offsets ``[start, end)`` of ``scalar``
    (code points into ``scalar.raw``, end exclusive; ``start == end`` marks a
    point).  Falls back to the scalar's span when the value cannot be mapped.
    Never raises."""
    m = cached_map(doc, scalar)
    if m is None:
        return scalar.span
    return m.span(start, end)


def cached_map(doc: YDocument, scalar: YScalar) -> ScalarMap | None:
    """:func:`map_scalar`, memoised on ``doc`` (a template with thousands of
    diagnostics maps its scalar once, not once per diagnostic)."""
    cache = getattr(doc, "scalar_maps", None)
    if cache is None:
        return map_scalar(doc, scalar)
    hit = cache.get(id(scalar))
    if hit is not None and hit[0] is scalar:
        return hit[1]
    m = map_scalar(doc, scalar)
    cache[id(scalar)] = (scalar, m)
    return m


# ---------------------------------------------------------------------------
# Flow scalars (plain, single- and double-quoted)
# ---------------------------------------------------------------------------

def _break_end(text: str, i: int) -> int:
    """End of the line break starting at ``i`` (CRLF is one break)."""
    if text[i] == "\r" and i + 1 < len(text) and text[i + 1] == "\n":
        return i + 2
    return i + 1


def _flow(text: str, a: int, b: int, style: str) -> tuple[list[str], list[int], list[int]]:
    """Emulate libyaml's flow-scalar construction on ``text[a:b]`` (the body
    between the quotes, or the whole plain scalar)."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []

    def emit(c: str, s: int, e: int) -> None:
        chars.append(c)
        starts.append(s)
        ends.append(e)

    single = style == "'"
    double = style == '"'
    i = a
    while True:
        leading_blanks = False
        # consume non-blank characters
        while i < b:
            c = text[i]
            if c in _BLANKS or c in _BREAKS:
                break
            if single and c == "'":
                if i + 1 < b and text[i + 1] == "'":
                    emit("'", i, i + 2)
                    i += 2
                    continue
                raise _Mismatch
            if double and c == "\\":
                nxt = text[i + 1] if i + 1 < b else ""
                if nxt and nxt in _BREAKS:
                    i = _break_end(text, i + 1)
                    leading_blanks = True
                    break
                if nxt in _DQ_ESCAPES:
                    emit(_DQ_ESCAPES[nxt], i, i + 2)
                    i += 2
                    continue
                if nxt in _HEX_LEN:
                    k = _HEX_LEN[nxt]
                    digits = text[i + 2:i + 2 + k]
                    cp = int(digits, 16)  # ValueError → mismatch
                    if len(digits) != k:
                        raise _Mismatch
                    emit(chr(cp), i, i + 2 + k)
                    i += 2 + k
                    continue
                raise _Mismatch
            emit(c, i, i + 1)
            i += 1
        if i >= b:
            break
        # consume blanks and line breaks
        whitespaces: list[tuple[str, int]] = []
        leading_break: tuple[str, int, int] | None = None
        trailing: list[tuple[str, int, int]] = []
        while i < b:
            c = text[i]
            if c in _BLANKS:
                if not leading_blanks:
                    whitespaces.append((c, i))
                i += 1
            elif c in _BREAKS:
                e = _break_end(text, i)
                ch = c if c in "\u2028\u2029" else "\n"
                if not leading_blanks:
                    whitespaces = []
                    leading_break = (ch, i, e)
                    leading_blanks = True
                else:
                    trailing.append((ch, i, e))
                i = e
            else:
                break
        # join whitespace or fold line breaks
        if leading_blanks:
            if leading_break is not None and leading_break[0] == "\n":
                if not trailing:
                    emit(" ", leading_break[1], leading_break[2])
                else:
                    for ch, s, e in trailing:
                        emit(ch, s, e)
            else:
                if leading_break is not None:
                    emit(*leading_break)
                for ch, s, e in trailing:
                    emit(ch, s, e)
        else:
            for ch, s in whitespaces:
                emit(ch, s, s + 1)
    return chars, starts, ends


# ---------------------------------------------------------------------------
# Block scalars (literal | and folded >)
# ---------------------------------------------------------------------------

def _parent_indent(scalar: YScalar) -> int:
    """libyaml's ``parser->indent`` when it scans ``scalar``: the column of
    the enclosing block collection (its first key or ``-``), -1 at the root
    (a block scalar cannot sit in a flow collection)."""
    parent = scalar.parent
    if parent is None:
        return -1
    return parent.col


def _block(text: str, a: int, b: int, raw: str,
           parent_indent: int = -1) -> tuple[list[str], list[int], list[int]] | None:
    """Emulate libyaml's block-scalar construction on ``text[a:b]``.

    The content indentation is the parent's indentation plus the
    indentation indicator (``|2``), or auto-detected from the first
    non-empty line with the parent's indentation + 1 as its floor (libyaml's
    ``yaml_parser_scan_block_scalar``).  ``parent_indent`` comes from the
    tree (:func:`_parent_indent`); one or two alternatives are tried when it
    does not reproduce ``raw`` — a bounded number of linear passes, never one
    per column of indentation.
    """
    i = a
    literal = text[i] == "|"
    i += 1
    chomping = 0
    increment = 0
    if i < b and text[i] in "+-":
        chomping = 1 if text[i] == "+" else -1
        i += 1
        if i < b and text[i].isdigit():
            increment = int(text[i])
            i += 1
    elif i < b and text[i].isdigit():
        increment = int(text[i])
        i += 1
        if i < b and text[i] in "+-":
            chomping = 1 if text[i] == "+" else -1
            i += 1
    while i < b and text[i] in _BLANKS:
        i += 1
    if i < b and text[i] == "#":
        while i < b and text[i] not in _BREAKS:
            i += 1
    if i < b and text[i] in _BREAKS:
        i = _break_end(text, i)
    body = i
    tried: set[tuple[int, int]] = set()
    if increment:
        bases = (parent_indent, parent_indent - 1, parent_indent + 1)
        attempts = [(max(0, p) + increment if p >= 0 else increment, 1) for p in bases]
    else:
        attempts = [(0, max(1, parent_indent + 1)), (0, 1)]
    for indent, floor in attempts:
        if (indent, floor) in tried:
            continue
        tried.add((indent, floor))
        got = _block_body(text, body, b, literal, chomping, indent, floor)
        if got is not None and "".join(got[0]) == raw:
            return got
    return None


def _block_body(text: str, i: int, b: int, literal: bool, chomping: int,
                indent: int, floor: int = 1) -> tuple[list[str], list[int], list[int]] | None:
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []

    def emit(c: str, s: int, e: int) -> None:
        chars.append(c)
        starts.append(s)
        ends.append(e)

    line_start = i

    def scan_breaks(i: int, indent: int, breaks: list[tuple[str, int, int]]) -> tuple[int, int, int] | None:
        nonlocal line_start
        max_indent = 0
        while True:
            while i < b and (not indent or i - line_start < indent) and text[i] == " ":
                i += 1
            max_indent = max(max_indent, i - line_start)
            if i < b and (not indent or i - line_start < indent) and text[i] == "\t":
                return None
            if not (i < b and text[i] in _BREAKS):
                break
            e = _break_end(text, i)
            breaks.append(("\n" if text[i] not in "\u2028\u2029" else text[i], i, e))
            i = e
            line_start = i
        if not indent:
            indent = max(max_indent, floor, 1)
        return i, indent, max_indent

    trailing: list[tuple[str, int, int]] = []
    r = scan_breaks(i, indent, trailing)
    if r is None:
        return None
    i, indent, _ = r
    leading_break: tuple[str, int, int] | None = None
    leading_blank = False
    while i < b and i - line_start == indent:
        trailing_blank = text[i] in _BLANKS
        if not literal and leading_break is not None and leading_break[0] == "\n" \
                and not leading_blank and not trailing_blank:
            if not trailing:
                emit(" ", leading_break[1], leading_break[2])
            leading_break = None
        else:
            if leading_break is not None:
                emit(*leading_break)
            leading_break = None
        for t in trailing:
            emit(*t)
        trailing = []
        leading_blank = text[i] in _BLANKS
        while i < b and text[i] not in _BREAKS:
            emit(text[i], i, i + 1)
            i += 1
        if i < b:
            e = _break_end(text, i)
            leading_break = ("\n" if text[i] not in "\u2028\u2029" else text[i], i, e)
            i = e
            line_start = i
        r = scan_breaks(i, indent, trailing)
        if r is None:
            return None
        i = r[0]
    if chomping != -1 and leading_break is not None:
        emit(*leading_break)
    if chomping == 1:
        for t in trailing:
            emit(*t)
    return chars, starts, ends
