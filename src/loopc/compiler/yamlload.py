"""Strict YAML layer: pass 1 of docs/language.md#compiler-passes (docs/reference.md#source-file,
docs/reference.md#header).

Reads source bytes or text into a positioned :class:`YDocument`:

* budgets of docs/reference.md#budgets enforced before and during composition — 1 MiB
  of UTF-8 source, nesting 64 and 100,000 structural nodes (mappings,
  sequences and scalars, keys included); nesting is checked on the event
  stream, so no recursion ever happens on hostile depth;
* exactly one document (a second one is LP1004 and nothing is analysed);
  anchors, aliases and tags rejected (alias bombs are
  impossible by construction);
* duplicate keys reported at the second key with the first as a related
  location — checking continues with the first occurrence;
* plain scalars resolved under the YAML 1.2 core schema by loopc itself
  (``yes``/``on``/``1_000``/``0b11``/``2001-12-14`` stay strings, ``010`` is 10);
* the two header lines must come first.

Events come from ruamel.yaml's C (libyaml) parser; composition is loopc's own
loop over that event stream (ruamel's composer is pure Python and recursive).
"""
from __future__ import annotations

import re
import weakref
from typing import Any, Callable

from loopc import limits as _limits
from loopc.compiler.report import Reporter
from loopc.compiler.yamlnodes import YDocument, YLinks, YMap, YNode, YScalar, YSeq, key_scalar
from loopc.diagnostics import Span
from loopc.lineindex import LINE_BREAK

MAX_SOURCE_BYTES = 1024 * 1024
MAX_NESTING = 64
MAX_YAML_NODES = 100_000
HEADER = ("apiVersion: loop.plan/v1", "kind: PlanVersion")
# longest number literal converted (loopc.limits; far below Python's
# 4,300-digit int/str conversion limit)
MAX_NUMBER_LITERAL = _limits.MAX_NUMBER_CHARS

_INT_RE = re.compile(r"[-+]?[0-9]+\Z")
_OCT_RE = re.compile(r"0o[0-7]+\Z")
_HEX_RE = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT_RE = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_INF_RE = re.compile(r"[-+]?\.(inf|Inf|INF)\Z")
_NAN_RE = re.compile(r"\.(nan|NaN|NAN)\Z")
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_TRUES = frozenset(("true", "True", "TRUE"))
_FALSES = frozenset(("false", "False", "FALSE"))
_NUMERIC_START = frozenset("0123456789-+.")
# plain scalars that resolve to something other than themselves even though
# they do not start like a number
_PLAIN_SPECIAL = _NULLS | _TRUES | _FALSES


def resolve_plain(text: str) -> Any:
    """Resolve a plain scalar under the YAML 1.2 core schema (docs/reference.md#source-file)."""
    if text in _NULLS:
        return None
    if text in _TRUES:
        return True
    if text in _FALSES:
        return False
    if text[0] not in _NUMERIC_START:
        return text
    if len(text) > MAX_NUMBER_LITERAL and (_INT_RE.match(text) or _OCT_RE.match(text)
                                           or _HEX_RE.match(text) or _FLOAT_RE.match(text)):
        # over the number-literal bound: not converted (no digit string ever
        # reaches Python's conversion limit); it stands as a non-JSON number
        # and the schema pass reports LP2017 with the bound it breaks, read
        # from the scalar's text (loopc.limits.number_text_problem)
        return float("-inf") if text[0] == "-" else float("inf")
    if _INT_RE.match(text):
        return int(text, 10)
    if _OCT_RE.match(text):
        return int(text[2:], 8)
    if _HEX_RE.match(text):
        return int(text[2:], 16)
    if _FLOAT_RE.match(text):
        return float(text)
    if _INF_RE.match(text):
        return float("-inf") if text[0] == "-" else float("inf")
    if _NAN_RE.match(text):
        return float("nan")
    return text


def decode_source(src: str | bytes, reporter: Reporter) -> str | None:
    """Decode bytes as UTF-8 (BOM allowed), enforce the 1 MiB budget.

    Returns the text without BOM, or ``None`` after reporting LP1002/LP1010.
    """
    if isinstance(src, str):
        try:
            raw = src.encode("utf-8")
        except UnicodeEncodeError as exc:
            line, col = _text_position(src, exc.start)
            reporter.report(
                "LP1002", Span.point(line + 1, col + 1),
                "source contains an unpaired surrogate; it is not valid Unicode text",
            )
            return None
    else:
        raw = bytes(src)
    if len(raw) > MAX_SOURCE_BYTES:
        reporter.report(
            "LP1010", None,
            f"source exceeds the limit of {MAX_SOURCE_BYTES:,} bytes (1 MiB)",
        )
        return None
    if isinstance(src, str):
        text = src
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            good = raw[: exc.start].decode("utf-8", "replace")
            line, col = _text_position(good, len(good))
            reporter.report(
                "LP1002", Span.point(line + 1, col + 1),
                f"source is not valid UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start}",
            )
            return None
    # Every leading U+FEFF is a byte-order mark: the YAML parser skips them all,
    # so positions are counted after the last one (docs/language.md#encoding);
    # more than one is reported, since the header must open the file.
    stripped = text.lstrip("\ufeff")
    extra = len(text) - len(stripped) - 1
    if extra > 0:
        reporter.report(
            "LP1009", Span.point(1, 1),
            f"the source starts with {extra + 1} byte-order marks (U+FEFF); the header line "
            "'apiVersion: loop.plan/v1' must follow at most one: remove the extra marks",
        )
    return stripped


def _text_position(text: str, index: int) -> tuple[int, int]:
    """0-based editor (LSP) line/column of ``text[index]``; a leading BOM is
    not counted (it is not part of the decoded source)."""
    skip = 1 if text.startswith("\ufeff") else 0
    return YDocument(text[skip:index], None).position(max(0, index - skip))


def _mark_span(mark: Any, where: Any = None) -> Span:
    if where is not None and mark is not None:
        line, col = where(mark)
    else:
        line = getattr(mark, "line", 0) or 0
        col = getattr(mark, "column", 0) or 0
    return Span.point(line + 1, col + 1)


# libyaml also breaks lines at NEL, LS and PS; editors (LSP) break only at
# LF, CRLF and CR.  Sources containing one of these get positions recomputed
# from the code-point index (libyaml's ``mark.index`` counts code points).
_YAML_ONLY_BREAKS = ("\x85", "\u2028", "\u2029")


def _positioner(text: str) -> Any:
    """``where(mark) -> (line0, col0)`` in editor (LSP) line terms.

    libyaml's own line/column are kept when they agree with the editor's
    view (the common case, no extra cost); they are recomputed from
    ``mark.index`` when the text holds a YAML-only line break, and for marks
    at the end of input (libyaml puts those on a virtual line after the last
    one when the text has no final newline).
    """
    n = len(text)
    exotic = any(b in text for b in _YAML_ONLY_BREAKS)
    locator = YDocument(text, None)
    position = locator.position
    end_position: list[tuple[int, int]] = []

    def where(mark: Any) -> tuple[int, int]:
        idx = getattr(mark, "index", None)
        if not isinstance(idx, int) or idx < 0:
            return (getattr(mark, "line", 0) or 0, getattr(mark, "column", 0) or 0)
        if exotic:
            return position(min(idx, n))
        if idx >= n:
            # the end of input (every collection still open there ends at
            # it): counted once, without building the whole line table
            if not end_position:
                end_position.append(_end_position(text))
            return end_position[0]
        return mark.line, mark.column

    return where


def _end_position(text: str) -> tuple[int, int]:
    """0-based editor (LSP) line/column of ``len(text)`` for a text without
    YAML-only line breaks: the same as ``YDocument(text).position(len(text))``
    (line breaks are LF, CRLF and CR)."""
    crlf = text.count("\r\n")
    line = text.count("\n") + text.count("\r") - crlf
    last = max(text.rfind("\n"), text.rfind("\r"))
    return line, len(text) - (last + 1)


def load(src: str | bytes, reporter: Reporter, *, path: str | None = None,
         judge: Callable[[str], bool] | None = None) -> YDocument | None:
    """Pass 1: decode, parse and compose ``src`` into a :class:`YDocument`.

    Never raises on bad input: every problem becomes an LP1xxx diagnostic and
    the result is ``None`` when no tree could be built.  ``judge``, when
    given, tells whether a repaired text (a re-indentation that parses) is
    a plan without errors: of the re-indentations that parse, only those it
    accepts are offered, and the fix is safe when exactly one is
    (:func:`loopc.compiler.yamlindent.find_cause`; the pipeline passes the
    whole check).
    """
    text = decode_source(src, reporter)
    if text is None:
        return None
    root = _compose(text, reporter, judge)
    doc = YDocument(text, root, path)
    if root is not None:
        _check_header(doc, reporter)
    return doc


def _compose(text: str, reporter: Reporter, judge: Callable[[str], bool] | None = None) -> YNode | None:
    from ruamel.yaml import events as E
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.cyaml import CParser  # libyaml; ruamel.yaml[oldlibyaml]

    ScalarEvent = E.ScalarEvent
    MappingStartEvent = E.MappingStartEvent
    SequenceStartEvent = E.SequenceStartEvent
    MappingEndEvent = E.MappingEndEvent
    SequenceEndEvent = E.SequenceEndEvent
    AliasEvent = E.AliasEvent
    DocumentStartEvent = E.DocumentStartEvent
    StreamEndEvent = E.StreamEndEvent

    parser = CParser(text)
    get_event = parser.get_event
    where = _positioner(text)
    span_at = lambda mark: _mark_span(mark, where)  # noqa: E731
    # fast path: libyaml's own line/column are exact unless the text holds a
    # YAML-only line break; only marks at the very end need recomputing
    exotic = any(b in text for b in _YAML_ONLY_BREAKS)
    n_text = len(text)
    # the innermost open collection is kept in locals (``parent``, whether it
    # is a mapping, its flat key/value or item list, its key index and the
    # key awaiting its value); the enclosing ones are saved on ``stack``
    # (a mapping's pending key is always consumed before a nested collection
    # opens, so only the node is saved)
    stack: list[YNode | None] = []
    parent: Any = None
    # parent links (the tree is acyclic, yamlnodes.YLinks): the root holds
    # the table ``links``, every other collection is in ``colls``, and a
    # child holds the one weak reference ``lref`` to the table and its
    # parent's index there (``pidx``; saved on ``pstack`` like ``stack``)
    links: YLinks | None = None
    lref: Any = None
    colls: list[Any] = []
    pstack: list[int] = []
    pidx = 0
    in_map = False
    p_items: Any = None
    p_index: Any = None
    pending: Any = None  # the key awaiting its value: a KeyRecord, or a YScalar (alias, complex key)
    depth = 0
    root: YNode | None = None
    count = 0
    documents = 0
    resolve = resolve_plain
    plain_special = _PLAIN_SPECIAL
    numeric_start = _NUMERIC_START
    invisible = _INVISIBLE
    verbatim: list[tuple[int, int]] = []
    closed: Any = None  # the collection closed last (a mis-indented key's neighbour)
    try:
        while True:
            ev = get_event()
            if ev is None:
                break
            cls = ev.__class__
            if cls is ScalarEvent:
                sm = ev.start_mark
                count += 1
                if count > MAX_YAML_NODES:
                    reporter.report(
                        "LP1012", span_at(sm),
                        f"document has more than {MAX_YAML_NODES:,} YAML nodes",
                    )
                    return None
                raw = ev.value
                style = ev.style or ""
                if ev.anchor is not None or ev.ctag is not None:
                    tag = ev.tag
                    _report_anchor_tag(ev, tag, True, span_at(sm), reporter)
                    if tag is None:
                        value = resolve(raw) if style == "" else raw
                    else:
                        value = _tagged_value(tag, raw)
                elif style == "":
                    # inline fast path of resolve_plain: most plain scalars
                    # are words that stay strings
                    if raw and raw[0] not in numeric_start and raw not in plain_special:
                        value = raw
                    else:
                        value = resolve(raw)
                else:
                    value = raw
                em = ev.end_mark
                end = em.index
                if style:
                    if em.line != sm.line:
                        # a quoted or block scalar spanning lines: its line
                        # starts are content, never indentation
                        verbatim.append((sm.index, end))
                elif raw and raw[0] in invisible and _in_indentation(text, sm.index, sm.column):
                    _report_invisible(text, sm.index, where, reporter)
                    return None
                if exotic:
                    sl, sc = where(sm)
                    el, ec = where(em)
                else:
                    sl = sm.line
                    sc = sm.column
                    if end >= n_text:
                        el, ec = where(em)
                    else:
                        el = em.line
                        ec = em.column
                if in_map and pending is None:
                    # a key: a record (atomic, untracked by the garbage
                    # collector) until it is asked for as a node
                    # (yamlnodes.KeyRecord)
                    pending = (raw, value, style, sl, sc, sm.index, el, ec, end)
                    continue
                node: Any = YScalar(sl, sc, sm.index, value, style, raw)
                node.end_line = el
                node.end_col = ec
                node.end = end
                if in_map:
                    node._links = lref
                    node._pidx = pidx
                    _put(parent, p_items, p_index, pending, node, lref, pidx, reporter)
                    pending = None
                elif parent is not None:
                    node._links = lref
                    node._pidx = pidx
                    node.key = len(p_items)
                    p_items.append(node)
                else:
                    root = node
                continue
            if cls is MappingEndEvent or cls is SequenceEndEvent:
                node = parent
                closed = node
                em = ev.end_mark
                end = em.index
                if exotic or end >= n_text:
                    node.end_line, node.end_col = where(em)
                else:
                    node.end_line = em.line
                    node.end_col = em.column
                node.end = end
                replaced = None
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                sm = ev.start_mark
                count += 1
                if count > MAX_YAML_NODES:
                    reporter.report(
                        "LP1012", span_at(sm),
                        f"document has more than {MAX_YAML_NODES:,} YAML nodes",
                    )
                    return None
                if ev.anchor is not None or ev.ctag is not None:
                    _report_anchor_tag(ev, ev.tag, False, span_at(sm), reporter)
                flow = bool(ev.flow_style)
                if exotic:
                    sl, sc = where(sm)
                else:
                    sl = sm.line
                    sc = sm.column
                if cls is MappingStartEvent:
                    node = YMap(sl, sc, sm.index, flow)
                else:
                    node = YSeq(sl, sc, sm.index, flow)
                if depth >= MAX_NESTING:
                    reporter.report(
                        "LP1011", span_at(sm),
                        f"nesting deeper than {MAX_NESTING} levels",
                    )
                    return None
                # attach
                replaced = None
                if in_map:
                    k = pending
                    if k is None and parent.flow and not p_items and cls is MappingStartEvent \
                            and sm.index == parent.start + 1:
                        tm = _UNQUOTED_TEMPLATE.match(text, parent.start)
                        if tm is not None:
                            # `{{ x }}` unquoted: YAML reads a mapping whose key is a
                            # mapping; it is read as the template the author wrote
                            # (one diagnostic, with the quoting fix), which takes
                            # the outer mapping's place once it is closed below
                            _skip_collection(get_event, depth + 1)  # the inner mapping
                            _skip_collection(get_event, depth)  # the rest of the outer one
                            replaced = _unquoted_template(parent, tm, reporter)
                    if replaced is None and k is None:
                        reporter.report(
                            "LP1008", node,
                            "mapping keys must be scalars (strings)",
                            pointer=parent.pointer,
                        )
                        k = YScalar(node.line, node.col, node.start, "", "", "\x00<complex>")
                        k.is_key = True
                        k._links = lref
                        k._pidx = pidx
                        pending = k
                        # the complex key's own children are skipped below
                        deep = _skip_collection(get_event, depth + 1)
                        if deep is not None:
                            reporter.report(
                                "LP1011", span_at(deep),
                                f"nesting deeper than {MAX_NESTING} levels",
                            )
                            return None
                        continue
                    if replaced is None:
                        pending = None
                        node._links = lref
                        node._pidx = pidx
                        _put(parent, p_items, p_index, k, node, lref, pidx, reporter)
                elif parent is not None:
                    node._links = lref
                    node._pidx = pidx
                    node.key = len(p_items)
                    p_items.append(node)
                else:
                    root = node
                    links = YLinks(node)
                    node._links_root = links
                    lref = weakref.ref(links)
                    colls = links.colls
                if replaced is None:
                    stack.append(parent)
                    pstack.append(pidx)
                    depth += 1
                    parent = node
                    if node is not root:
                        pidx = len(colls)
                        colls.append(node)
                    if cls is MappingStartEvent:
                        node._idx = pidx
                        in_map = True
                        p_items = node.kv
                        p_index = node.index
                    else:
                        in_map = False
                        p_items = node.items
                    continue
            elif cls is AliasEvent:
                reporter.report(
                    "LP1006", span_at(ev.start_mark),
                    f"alias '*{ev.anchor}' is not allowed; write the value out in full",
                )
                # keep the tree shape: an alias stands for a null scalar
                sm = ev.start_mark
                sl, sc = where(sm)
                node = YScalar(sl, sc, sm.index, None, "*", "")
                node.end_line, node.end_col = where(ev.end_mark)
                node.end = ev.end_mark.index
                if in_map:
                    node._links = lref
                    node._pidx = pidx
                    k = pending
                    if k is None:
                        node.is_key = True
                        pending = node
                        continue
                    pending = None
                    key_text = k[0] if k.__class__ is tuple else k.raw  # type: ignore[union-attr]
                    node.key = key_text
                    if key_text not in p_index:
                        p_index[key_text] = len(p_items) >> 1
                    p_items.append(k)
                    p_items.append(node)
                elif parent is not None:
                    node._links = lref
                    node._pidx = pidx
                    node.key = len(p_items)
                    p_items.append(node)
                else:
                    root = node
                continue
            elif cls is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    reporter.report(
                        "LP1004", span_at(ev.start_mark),
                        "a plan is exactly one YAML document; remove the second document",
                    )
                    # the first document is not analysed: what the second
                    # holds (often the rest of the plan, after a stray
                    # `---`) is missing from it, and every graph or schema
                    # error that absence causes would be a cascade of this one
                    return None
                continue
            elif cls is StreamEndEvent:
                break
            else:
                continue
            # a collection has ended (or an unquoted template, ``replaced``,
            # takes the place of the flow mapping just skipped): the
            # enclosing collection is the innermost open one again
            depth -= 1
            parent = stack.pop()
            pidx = pstack.pop()
            pending = None
            if parent is None:
                in_map = False
                if replaced is not None:
                    root = replaced
            else:
                in_map = parent.__class__ is YMap
                if in_map:
                    p_items = parent.kv
                    p_index = parent.index
                else:
                    p_items = parent.items
                if replaced is not None:
                    p_items[-1] = replaced  # the value (mapping) or the item (sequence)
    except RecursionError:  # pragma: no cover - defensive
        reporter.report("LP1011", None, "nesting too deep")
        return None
    except YAMLError as exc:  # ruamel ScannerError/ParserError/ReaderError
        open_nodes = [n for n in stack if n is not None] + ([parent] if parent is not None else [])
        if pending.__class__ is tuple:
            pending = key_scalar(pending, lref, pidx)  # type: ignore[arg-type]
        _report_parse_error(exc, text, where, open_nodes, closed, pending, verbatim, reporter, judge)
        return None
    if root is None:
        reporter.report("LP1003", None, "the document is empty; a plan starts with the header lines")
        return None
    return root

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


_INDENT_CULPRIT = re.compile(
    "(?:^|(?<=[\\n\\r]))(?:[ ]|- )*([\\t" + "".join(sorted(_INVISIBLE)) + "])", re.M
)


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


def _put(parent: Any, items: list[Any], index: dict[str, int], k: Any, node: Any, lref: Any, pidx: int,
         reporter: Reporter) -> None:
    """Attach ``node`` under key ``k`` (a key record or, for a complex key,
    its stand-in :class:`YScalar`) to mapping ``parent``, whose flat
    ``items`` and first-occurrence ``index`` are passed in (the composer's
    locals): a duplicate key is reported at the second key, the first as
    related (docs/reference.md#source-file); a complex key is not indexed."""
    key_text = k[0] if k.__class__ is tuple else k.raw
    node.key = key_text
    if key_text == "\x00<complex>":
        return
    if key_text in index:
        if k.__class__ is tuple:
            k = key_scalar(k, lref, pidx)
        _report_duplicate(reporter, k, node, parent._key(2 * index[key_text]))
    else:
        index[key_text] = len(items) >> 1
    items.append(k)
    items.append(node)


def _report_duplicate(reporter: Reporter, key: YScalar, value: YNode, first: YScalar) -> None:
    """LP1005 at the second occurrence of a mapping key (the first is used)."""
    reporter.report(
        "LP1005", key,
        f"duplicate key '{key.raw}'; the first definition is used",
        pointer=value.pointer,
        related=[("first defined here", first)],
    )


def _report_anchor_tag(ev: Any, tag: str | None, scalar: bool, span: Span, reporter: Reporter) -> None:
    """LP1006 for an anchor, LP1007 for an explicit tag on a node event."""
    if ev.anchor is not None:
        reporter.report(
            "LP1006", span,
            f"anchor '&{ev.anchor}' is not allowed; write the value out in full",
        )
    if tag is None:
        return
    if tag == "!":
        reporter.report("LP1007", span, "tag '!' is not allowed; plan values are untagged YAML 1.2")
    elif not scalar or not ev.implicit[0]:
        reporter.report(
            "LP1007", span,
            f"tag '{_short_tag(tag)}' is not allowed; plan values are untagged YAML 1.2",
        )


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


#: An unquoted template (``text: {{ input.title }}``) as YAML reads it: a
#: flow mapping whose only key is a flow mapping, on one line.
_UNQUOTED_TEMPLATE = re.compile(r"\{\{[^{}\[\]\n]*\}\}")


def _unquoted_template(outer: YMap, m: re.Match[str], reporter: Reporter) -> YScalar:
    """LP1008 for an unquoted ``{{ … }}`` (the flow mapping ``outer``, whose
    text ``m`` matched): the scalar the author meant, with the fix that
    quotes it."""
    from loopc.diagnostics import Fix, TextEdit

    t = m.group(0)
    node = YScalar(outer.line, outer.col, outer.start, t, "", t)
    node.end_line, node.end_col, node.end = outer.line, outer.col + len(t), m.end()
    node._links, node._pidx, node.key = outer._links, outer._pidx, outer.key  # it takes the mapping's place
    quoted = f'"{t}"' if '"' not in t and "\\" not in t else "'" + t.replace("'", "''") + "'"
    reporter.report(
        "LP1008", node,
        f"`{t}` is not quoted, so YAML reads it as a mapping with a mapping as its key; "
        f"quote the template: {quoted}",
        pointer=outer.pointer,
        fix=Fix(f"quote it: {quoted}", (TextEdit(node.span, quoted),)),
    )
    return node


def _skip_collection(get_event: Any, level: int) -> Any:
    """Consume the events of a complex (collection) key, opened at nesting
    ``level``, without building it.  Returns the start mark of a collection
    nested deeper than :data:`MAX_NESTING` (composition must stop: LP1011),
    else ``None``.  Parse errors propagate to the caller."""
    from ruamel.yaml import events as E

    depth = 1
    while depth:
        ev = get_event()
        if ev is None:
            return None
        if isinstance(ev, (E.MappingStartEvent, E.SequenceStartEvent)):
            depth += 1
            if level + depth - 1 > MAX_NESTING:
                return ev.start_mark
        elif isinstance(ev, (E.MappingEndEvent, E.SequenceEndEvent)):
            depth -= 1
    return None


def _check_header(doc: YDocument, reporter: Reporter) -> None:
    """docs/reference.md#header: the first two lines are exactly the header lines.

    Only reports when the header keys hold the right values but are not the
    first two lines (wrong or missing values are the schema pass's LP2xxx).
    """
    root = doc.root
    if not isinstance(root, YMap):
        return
    api = root.get("apiVersion")
    kind = root.get("kind")
    if not (isinstance(api, YScalar) and api.value == "loop.plan/v1"
            and isinstance(kind, YScalar) and kind.value == "PlanVersion"):
        return
    head = LINE_BREAK.split(doc.text[:200], maxsplit=2)
    lines = [(head[i] if i < len(head) else "").rstrip(" ") for i in (0, 1)]
    if tuple(lines) == HEADER:
        return
    bad = 0 if lines[0] != HEADER[0] else 1
    line = lines[bad]
    if line.startswith(HEADER[bad]) and line[len(HEADER[bad]):].lstrip(" \t").startswith("#"):
        col = line.index("#", len(HEADER[bad])) + 1
        reporter.report(
            "LP1009", Span(bad + 1, col, bad + 1, max(col + 1, len(line) + 1)),
            f"line {bad + 1} holds a comment after '{HEADER[bad]}': the header lines hold nothing "
            "after their value; move the comment below line 2",
        )
        return
    reporter.report(
        "LP1009", Span(bad + 1, 1, bad + 1, max(2, len(line) + 1)),
        f"line {bad + 1} must be exactly '{HEADER[bad]}': the header lines come first, "
        "with no comment, '---' or other key before them",
    )


_CORE_TAG_TYPES = {
    "tag:yaml.org,2002:bool": (bool,),
    "tag:yaml.org,2002:int": (int,),
    "tag:yaml.org,2002:float": (float, int),
    "tag:yaml.org,2002:null": (type(None),),
}


def _tagged_value(tag: str, raw: str) -> Any:
    """Value of an explicitly tagged scalar (the tag itself is LP1007).

    A core-schema tag whose text resolves to that type (``!!bool "true"``)
    yields the typed value, so the rejected tag is the only diagnostic;
    anything else stays the raw string.
    """
    types = _CORE_TAG_TYPES.get(tag)
    if types is None or not raw:
        return raw
    value = resolve_plain(raw)
    if type(value) not in types:
        return raw
    return float(value) if tag.endswith(":float") else value


def _short_tag(tag: str) -> str:
    prefix = "tag:yaml.org,2002:"
    return "!!" + tag[len(prefix):] if tag.startswith(prefix) else tag
