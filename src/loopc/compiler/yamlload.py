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
When the optional extension :mod:`loopc.compiler._ycompose` is built, a clean
document is composed by it instead, from the same libyaml's events and into
the same tree; anything it does not handle (every input that has something
to report, and sources with YAML-only line breaks) is composed again by the
Python loop, so diagnostics never depend on which composer ran
(docs/architecture.md#the-yaml-layer).  ``LOOPC_YAML_COMPOSER=python`` in the
environment selects the Python composer alone.
"""
from __future__ import annotations

import os
import re
import weakref
from typing import Any, Callable

from loopc import lazyre
from loopc import limits as _limits
from loopc.compiler.report import Reporter
from loopc.compiler.yamlnodes import YDocument, YLinks, YMap, YNode, YScalar, YSeq, key_scalar
from loopc.compiler.yamlerrors import _INVISIBLE, _in_indentation, _report_invisible, _report_parse_error
from loopc.compiler.yamlerrors import _reparse_stop as _reparse_stop  # read by tests and benchmarks from here
from loopc.compiler.yamlpos import _YAML_ONLY_BREAKS, _end_position, _mark_span, _positioner, _text_position
from loopc.diagnostics import Span
from loopc.lineindex import LINE_BREAK

MAX_SOURCE_BYTES = _limits.MAX_SOURCE_BYTES
MAX_NESTING = 64
MAX_YAML_NODES = 100_000
HEADER = ("apiVersion: loop.plan/v1", "kind: PlanVersion")
# longest number literal converted (loopc.limits; far below Python's
# 4,300-digit int/str conversion limit)
MAX_NUMBER_LITERAL = _limits.MAX_NUMBER_CHARS

_INT_RE = lazyre.compile(r"[-+]?[0-9]+\Z")
_OCT_RE = lazyre.compile(r"0o[0-7]+\Z")
_HEX_RE = lazyre.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT_RE = lazyre.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_INF_RE = lazyre.compile(r"[-+]?\.(inf|Inf|INF)\Z")
_NAN_RE = lazyre.compile(r"\.(nan|NaN|NAN)\Z")
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


#: the compiled composer's ``compose(text, end_line, end_col)``, once bound
#: (:func:`compiled_composer`); ``False`` when there is none
_FAST: Any = None


def compiled_composer() -> Callable[[str, int, int], YNode | None] | None:
    """The compiled composer (:mod:`loopc.compiler._ycompose`) bound to
    ruamel.yaml.clib's libyaml and this module's node classes, or ``None``
    when the extension is not built, cannot bind, or
    ``LOOPC_YAML_COMPOSER=python`` is set.  Its ``compose(text, end_line,
    end_col)`` returns the root node of a clean document, or ``None`` where
    the Python composer must run (docs/architecture.md#the-yaml-layer)."""
    global _FAST
    if _FAST is None:
        _FAST = False
        if os.environ.get("LOOPC_YAML_COMPOSER", "") != "python":
            try:
                import importlib.machinery  # loaded with the interpreter (importlib.util is not)
                import sys

                from loopc.compiler import _ycompose

                mod = sys.modules.get("_ruamel_yaml")
                lib = getattr(mod, "__file__", None) if mod is not None else None
                if lib is None:
                    spec = importlib.machinery.PathFinder.find_spec("_ruamel_yaml")
                    lib = spec.origin if spec is not None else None
                # the extension's classes are process-wide: a second copy of
                # this module (imported afresh) composes in Python rather
                # than rebind them under the first one's callers
                bound = _ycompose.bound()
                if bound is None and lib:
                    _ycompose.setup(lib, YScalar, YMap, YSeq, YLinks, resolve_plain, _PLAIN_SPECIAL,
                                    frozenset(_INVISIBLE), MAX_YAML_NODES, MAX_NESTING)
                    bound = _ycompose.bound()
                if bound is not None and all(a is b for a, b in zip(bound, (YScalar, YMap, YSeq, YLinks))):
                    _FAST = _ycompose.compose
            except (ImportError, TypeError, ValueError, OSError):
                _FAST = False
    return _FAST or None


def _compose(text: str, reporter: Reporter, judge: Callable[[str], bool] | None = None) -> YNode | None:
    fast = _FAST if _FAST is not None else compiled_composer()
    if fast and not any(b in text for b in _YAML_ONLY_BREAKS):
        try:
            root: YNode | None = fast(text, *_end_position(text))
        except Exception:  # noqa: BLE001 - e.g. MemoryError: the Python composer decides
            root = None
        if root is not None:
            return root
    return _compose_events(text, reporter, judge)


def _compose_events(text: str, reporter: Reporter, judge: Callable[[str], bool] | None = None) -> YNode | None:
    """The Python composer: loopc's loop over ruamel's C parser's events
    (every diagnostic of the YAML layer is reported here)."""
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
                    key_text = k[0] if k.__class__ is tuple else k.raw
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
            pending = key_scalar(pending, lref, pidx)
        _report_parse_error(exc, text, where, open_nodes, closed, pending, verbatim, reporter, judge)
        return None
    if root is None:
        reporter.report("LP1003", None, "the document is empty; a plan starts with the header lines")
        return None
    return root



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




#: An unquoted template (``text: {{ input.title }}``) as YAML reads it: a
#: flow mapping whose only key is a flow mapping, on one line.
_UNQUOTED_TEMPLATE = lazyre.compile(r"\{\{[^{}\[\]\n]*\}\}")


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
