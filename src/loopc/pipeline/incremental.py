"""Incremental re-check for the editor (docs/architecture.md#incremental-re-check).

An :class:`IncrementalChecker` keeps the text it checked last and its YAML
tree.  When the next text differs from it only inside the items of the
``nodes:`` or ``edges:`` list, the YAML layer reads only those items again:
the changed lines are parsed alone, in a context that gives libyaml the
same state it has at that place of the whole text (a one-key block mapping
opening the same list, and after them a stand-in for the token that
follows, which decides where the last collection ends), and their nodes
are moved to their places in the new text.  The other items of the old tree
are copied with their positions re-based by the edit's line and offset
delta (a copy, never an update: a result handed out earlier keeps its
tree; compiled where the compiled composer is built, :func:`_copier`).
Passes 2–12 then run on the spliced tree as on any other.

The result is the one :func:`loopc.check_source` gives for the same text,
field for field (``tests/test_incremental.py`` proves it on random edit
sequences over the examples and goldens).  Where an edit cannot be shown
to stay inside items, the check is a whole one: an edit outside the items
(header, contracts, ``entry``, the ``nodes:`` line, a dash or its
indentation), a text or tree the YAML layer had anything to say about (the
previous one or the re-read items: duplicate keys, anchors and aliases,
tags, invisible characters, parse errors), a flow-style list, a byte-order
mark, a line break other than ``\\n``, or a tree near the node budget.
"""

from __future__ import annotations

import re
import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable

from loopc.compiler import yamlload
from loopc.compiler.report import Reporter
from loopc.compiler.yamlnodes import YDocument, YLinks, YMap, YNode, YScalar, YSeq
from loopc.pipeline.check import (
    MAX_DIAGNOSTICS,
    CheckResult,
    cap_result,
    check_document,
    linted,
    load_document,
)

if TYPE_CHECKING:
    from loopc.lint import LintConfig

__all__ = ["IncrementalChecker", "SECTIONS"]

#: the root sections whose items are re-read one by one
SECTIONS = ("nodes", "edges")

# characters that make the YAML layer count lines or positions differently
# (a line break other than "\n", a byte-order mark)
_SPECIAL = re.compile("[\r\x85\u2028\u2029\ufeff]")
# the start of an item's line: indentation, the dash, the space after it
_DASH = re.compile(r"( *)-( +)\Z")
_WRAP = "k:\n"  # opens the list: its key stands for the section's
_MAX_YAML_NODES = yamlload.MAX_YAML_NODES
_MAX_SOURCE_BYTES = yamlload.MAX_SOURCE_BYTES


class _Section:
    """One ``nodes:``/``edges:`` list of the checked text: ``dash[i]`` the
    offset of item ``i``'s dash, ``line_start[i]`` the offset of its line,
    ``line[i]`` that line; ``end`` the offset of the line holding the token
    after the list (``None``: the list runs to the end of the text)."""

    __slots__ = ("name", "seq", "dash", "line_start", "line", "end")

    def __init__(
        self, name: str, seq: YSeq, dash: list[int], line_start: list[int], line: list[int], end: int | None
    ) -> None:
        self.name = name
        self.seq = seq
        self.dash = dash
        self.line_start = line_start
        self.line = line
        self.end = end


def _sections(text: str, root: YMap) -> dict[str, _Section]:
    """The sections whose items can be re-read alone (block lists of items
    each opened by ``- `` on its own line)."""
    out: dict[str, _Section] = {}
    for name in SECTIONS:
        seq = root.get(name)
        if seq.__class__ is not YSeq or seq.flow or not seq.items:
            continue
        assert isinstance(seq, YSeq)
        dash: list[int] = []
        starts: list[int] = []
        lines: list[int] = []
        ok = True
        for item in seq.items:
            ls = item.start - item.col
            m = _DASH.match(text, ls, item.start)
            if m is None or (dash and m.end(1) - ls != dash[0] - starts[0]):
                ok = False
                break
            dash.append(m.end(1))
            starts.append(ls)
            lines.append(item.line)
        if not ok:
            continue
        if seq.end >= len(text):
            end = None
        elif seq.end_col == 0 and text[seq.end - 1] == "\n":
            end = seq.end
        else:
            continue
        out[name] = _Section(name, seq, dash, starts, lines, end)
    return out


def _common(a: str, b: str) -> tuple[int, int]:
    """(common prefix length, common suffix length not overlapping it)."""
    n = min(len(a), len(b))
    lo, hi = 0, n
    while lo < hi:  # the longest prefix: memcmp of halves
        mid = (lo + hi + 1) >> 1
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    p = lo
    la, lb = len(a), len(b)
    lo, hi = 0, n - p
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return p, lo


class _State:
    """The last text checked whole or spliced without a YAML finding, its
    tree and its sections."""

    __slots__ = ("text", "doc", "count", "_sections")

    def __init__(self, text: str, doc: YDocument, count: int) -> None:
        self.text = text
        self.doc = doc
        self.count = count
        self._sections: dict[str, _Section] | None = None

    @property
    def sections(self) -> dict[str, _Section]:
        if self._sections is None:
            root = self.doc.root
            self._sections = _sections(self.text, root) if root.__class__ is YMap else {}
        return self._sections


class IncrementalChecker:
    """The check of one editor document, re-run incrementally
    (docs/architecture.md#incremental-re-check).

    :meth:`check` returns what :func:`loopc.check_source` returns for the
    same arguments; ``enabled=False`` makes every check a whole one.
    ``last_mode`` says how the last check ran: ``"full"`` or
    ``"incremental"``, and ``last_reason`` why it was whole (``""`` when
    it was not).  Safe to share between threads: a check that finds the
    checker busy runs whole without touching its state.  Holds one text and
    its tree (acyclic, like every result)."""

    __slots__ = ("enabled", "last_mode", "last_reason", "_state", "_lock")

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self.last_mode = ""
        self.last_reason = ""
        self._state: _State | None = None
        self._lock = threading.Lock()

    def reset(self) -> None:
        """Forget the last text: the next check is a whole one."""
        with self._lock:
            self._state = None

    def check(
        self,
        src: str,
        *,
        path: str | None = None,
        config: LintConfig | None = None,
        lint: bool = True,
        max_diagnostics: int | None = MAX_DIAGNOSTICS,
    ) -> CheckResult:
        """Check ``src`` (the editor text) as :func:`loopc.check_source`
        does (``path``, ``config``, ``lint``, ``max_diagnostics`` as there),
        reusing the previous check's tree where the edit allows.  Never
        raises on bad input."""
        if not self._lock.acquire(blocking=False):
            return self._finish(self._whole(src, path, keep=False), config, lint, max_diagnostics, path)
        try:
            res = None
            if self.enabled and isinstance(src, str):
                res = self._incremental(src, path)
            if res is None:
                res = self._whole(src, path, keep=True)
        finally:
            self._lock.release()
        return self._finish(res, config, lint, max_diagnostics, path)

    @staticmethod
    def _finish(
        res: CheckResult, config: Any, lint: bool, max_diagnostics: int | None, path: str | None
    ) -> CheckResult:
        if not lint:
            return cap_result(res, max_diagnostics)
        return cap_result(linted(res, config, path), max_diagnostics)

    def _whole(self, src: str | bytes, path: str | None, *, keep: bool) -> CheckResult:
        reporter = Reporter()
        doc = load_document(src, path, reporter)
        clean = not reporter.diagnostics
        res = check_document(doc, reporter, path)
        if keep:
            self.last_mode = "full"
            # a text the YAML layer has findings in keeps the last clean
            # tree: the edit that mends it is diffed against that
            if (
                clean
                and doc is not None
                and doc.root is not None
                and isinstance(src, str)
                and doc.text == src
                and _SPECIAL.search(src) is None
            ):
                count = _count(doc.root)
                if count <= _MAX_YAML_NODES:
                    self._state = _State(src, doc, count)
        return res

    def _incremental(self, text: str, path: str | None) -> CheckResult | None:
        st = self._state
        if st is None:
            self.last_reason = "no previous tree"
            return None
        out = _splice(st, text, path)
        if isinstance(out, str):
            self.last_reason = out
            return None
        doc, count = out
        if count > _MAX_YAML_NODES:
            self.last_reason = "near the YAML node budget"
            return None
        self._state = _State(text, doc, count)
        self.last_mode = "incremental"
        self.last_reason = ""
        return check_document(doc, Reporter(), path)


def _count(root: YNode) -> int:
    """The YAML nodes of a tree as the YAML layer counts them (collections,
    scalars and keys)."""
    n = 1
    stack = [root]
    while stack:
        node = stack.pop()
        cls = node.__class__
        if cls is YMap:
            kv = node.kv  # type: ignore[attr-defined]
            n += len(kv)
            stack.extend(v for v in kv[1::2] if v.__class__ is not YScalar)
        elif cls is YSeq:
            items = node.items  # type: ignore[attr-defined]
            n += len(items)
            stack.extend(v for v in items if v.__class__ is not YScalar)
    return n


def _splice(st: _State, text: str, path: str | None) -> tuple[YDocument, int] | str:
    """The tree of ``text``, from ``st``'s and the re-read items, and its
    YAML node count; or why it cannot be (a string: the check is then a
    whole one)."""
    old = st.text
    if text == old:  # back to the last clean text (an edit that broke it undone)
        return (st.doc if st.doc.path == path else YDocument(text, st.doc.root, path)), st.count
    p, s = _common(old, text)
    oe, ne = len(old) - s, len(text) - s
    mid = text[p:ne]
    if _SPECIAL.search(mid) is not None:
        return "a line break other than \\n or a byte-order mark"
    try:
        mid.encode("utf-8")
    except UnicodeEncodeError:
        return "an unpaired surrogate"
    if len(text) * 4 > _MAX_SOURCE_BYTES and len(text.encode("utf-8")) > _MAX_SOURCE_BYTES:
        return "over the source budget"
    sec = None
    for candidate in st.sections.values():
        end = candidate.end if candidate.end is not None else len(old)
        if candidate.dash[0] < p and oe <= end:
            sec = candidate
            break
    if sec is None:
        return _splice_entry(st, text, p, oe, ne, path)
    dash, starts = sec.dash, sec.line_start
    n = len(dash)
    # the first item touched: the last whose dash is before the edit
    lo, hi = 0, n - 1
    while lo < hi:
        m = (lo + hi + 1) >> 1
        if dash[m] < p:
            lo = m
        else:
            hi = m - 1
    i = lo
    # the first item after it that the edit leaves whole (n: none)
    j = i + 1
    while j < n and starts[j] < oe:
        j += 1
    delta = len(text) - len(old)
    frag_end = (starts[j] if j < n else (sec.end if sec.end is not None else len(old))) + delta
    if j < n or sec.end is not None:
        if text[frag_end - 1] != "\n":
            return "the edit joins an item's line to the next"
    body = text[starts[i] : frag_end]
    if j < n:
        sentinel = " " * (dash[j] - starts[j]) + "- x\n"
    elif sec.end is not None:
        sentinel = "x: 1\n"
    else:
        sentinel = ""
    reporter = Reporter()
    try:
        fdoc = yamlload.load(_WRAP + body + sentinel, reporter)
    except Exception:  # noqa: BLE001 - the whole check reports it
        return "the re-read items do not load"
    if reporter.diagnostics or fdoc is None:
        return "the YAML layer has findings in the re-read items"
    froot = fdoc.root
    if froot.__class__ is not YMap:
        return "the re-read items are not a list"
    assert isinstance(froot, YMap)
    want = ["k"] if sentinel == "" or j < n else ["k", "x"]
    if [k for k, _ in froot.entries()] != want or len(froot.kv) != 2 * len(want):
        return "the re-read items are not one list"
    fseq = froot.kv[1]
    if fseq.__class__ is not YSeq or fseq.flow or fseq.start != len(_WRAP) + dash[i] - starts[i]:
        return "the re-read items are not one block list"
    new_items = list(fseq.items)
    body_end = len(_WRAP) + len(body)
    if j < n:
        last = new_items.pop() if new_items else None
        if last.__class__ is not YScalar or last.value != "x" or last.start != body_end + dash[j] - starts[j] + 2:
            return "the item after the edit is not where it was"
    elif fseq.end != body_end:  # at the stand-in key, or at the end of the text
        return "the list does not end where it did"
    if not new_items:
        return "the edit removes every item it touches"
    dl = text.count("\n", p, ne) - old.count("\n", p, oe)
    frag_line = sec.line[i] - 1
    frag_off = starts[i] - len(_WRAP)
    # the list runs to the end of the text: the list and the document end
    # where the re-read text does (the last line may have changed)
    tail = None if sentinel else (fseq.end_line + frag_line, fseq.end_col, fseq.end + frag_off)
    count = st.count + sum(map(_count, new_items)) - sum(map(_count, sec.seq.items[i:j]))
    return _rebuild(st.doc, sec, i, j, new_items, oe, dl, delta, frag_line, frag_off, text, path, tail), count


def _splice_entry(st: _State, text: str, p: int, oe: int, ne: int, path: str | None) -> tuple[YDocument, int] | str:
    """The tree of ``text`` when the edit lies inside one entry of the root
    mapping (after its key's first character, before the next key's line)
    and not in the two header lines: that entry's lines are read again, a
    stand-in key after them (``x: 1``) ending its value where the next key
    does."""
    old = st.text
    root = st.doc.root
    if root.__class__ is not YMap or root.flow or root.col != 0:
        return "the document is not a block mapping"
    assert isinstance(root, YMap)
    header_end = old.find("\n", old.find("\n") + 1)
    if header_end < 0 or p <= header_end:
        return "the edit touches the header lines"
    kv = root.kv
    starts = []
    for jj in range(0, len(kv), 2):
        k = kv[jj]
        start, col = (k[5], k[4]) if k.__class__ is tuple else (k.start, k.col)
        if col != 0:
            return "a root key is not at column 0"
        starts.append(start)
    m = len(starts) - 1
    while m >= 0 and starts[m] >= p:
        m -= 1
    if m < 0:
        return "the edit is before the first key"
    end = starts[m + 1] if m + 1 < len(starts) else None
    if end is not None and oe > end:
        return "the edit spans several root entries"
    delta = len(text) - len(old)
    if end is not None and text[end + delta - 1] != "\n":
        return "the edit joins an entry's line to the next key"
    ls = starts[m]
    body = text[ls : (end + delta if end is not None else len(text))]
    sentinel = "x: 1\n" if end is not None else ""
    reporter = Reporter()
    try:
        fdoc = yamlload.load(body + sentinel, reporter)
    except Exception:  # noqa: BLE001 - the whole check reports it
        return "the re-read entry does not load"
    if reporter.diagnostics or fdoc is None:
        return "the YAML layer has findings in the re-read entry"
    froot = fdoc.root
    if froot.__class__ is not YMap or froot.flow:
        return "the re-read entry is not a block mapping"
    assert isinstance(froot, YMap)
    fkv = froot.kv
    okey = kv[2 * m]
    okey = okey if okey.__class__ is tuple else (okey.raw, okey.value, okey.style, okey.line)
    fkey = fkv[0] if fkv else None
    if fkey.__class__ is not tuple or fkey[:3] != okey[:3]:
        return "the edit changes a root key"
    want = 4 if sentinel else 2
    if len(fkv) != want or (sentinel and (fkv[2].__class__ is not tuple or fkv[2][0] != "x" or fkv[2][5] != len(body))):
        return "the re-read entry is not one entry"
    line_m = okey[3]
    dl = text.count("\n", p, ne) - old.count("\n", p, oe)
    value = fkv[1]
    copy = _copier()
    # the new root: entries before m in place, m from the re-read text,
    # those after moved by the edit's delta
    new_root = YMap(root.line, root.col, root.start, root.flow)
    links = YLinks(new_root)
    new_root._links_root = links
    lref = weakref.ref(links)
    colls = links.colls
    if end is None:  # the entry runs to the end of the text: so does the document
        new_root.end_line, new_root.end_col, new_root.end = froot.end_line + line_m, froot.end_col, froot.end + ls
    else:
        new_root.end_line, new_root.end_col, new_root.end = root.end_line + dl, root.end_col, root.end + delta
    new_root.index = dict(root.index)
    out = new_root.kv
    for jj in range(0, len(kv), 2):
        k = kv[jj]
        if k.__class__ is not tuple:
            k = (k.raw, k.value, k.style, k.line, k.col, k.start, k.end_line, k.end_col, k.end)
        v = kv[jj + 1]
        if jj == 2 * m:
            out.append((k[0], k[1], k[2], k[3], k[4], k[5], fkey[6] + line_m, fkey[7], fkey[8] + ls))
            out.append(copy(value, 0, lref, colls, line_m, ls))
        elif jj > 2 * m:
            out.append((k[0], k[1], k[2], k[3] + dl, k[4], k[5] + delta, k[6] + dl, k[7], k[8] + delta))
            out.append(copy(v, 0, lref, colls, dl, delta))
        else:
            out.append(k)
            out.append(copy(v, 0, lref, colls, 0, 0))
    count = st.count + _count(value) - _count(kv[2 * m + 1])
    return YDocument(text, new_root, path), count


def _rebuild(
    doc: YDocument,
    sec: _Section,
    i: int,
    j: int,
    new_items: list[YNode],
    oe: int,
    dl: int,
    delta: int,
    frag_line: int,
    frag_off: int,
    text: str,
    path: str | None,
    tail: tuple[int, int, int] | None,
) -> YDocument:
    """The new tree: the old root copied with the positions at or after
    ``oe`` moved by ``dl`` lines and ``delta`` offsets, the items ``i..j``
    of ``sec`` replaced by ``new_items`` (positions in the re-read text:
    moved by ``frag_line`` lines and ``frag_off`` offsets); ``tail``, when
    given, is where the list and the document end (the end of the text)."""
    root = doc.root
    assert isinstance(root, YMap)
    new_root = YMap(root.line, root.col, root.start, root.flow)
    links = YLinks(new_root)
    new_root._links_root = links
    lref = weakref.ref(links)
    colls = links.colls
    if root.end >= oe:
        new_root.end_line, new_root.end_col, new_root.end = root.end_line + dl, root.end_col, root.end + delta
    else:
        new_root.end_line, new_root.end_col, new_root.end = root.end_line, root.end_col, root.end
    kv = root.kv
    out = new_root.kv
    new_root.index = dict(root.index)
    copy = _copier()
    for jj in range(0, len(kv), 2):
        k = kv[jj]
        if k.__class__ is not tuple:
            k = (k.raw, k.value, k.style, k.line, k.col, k.start, k.end_line, k.end_col, k.end)
        v = kv[jj + 1]
        if k[5] >= oe:
            out.append((k[0], k[1], k[2], k[3] + dl, k[4], k[5] + delta, k[6] + dl, k[7], k[8] + delta))
        else:
            out.append(k)
        if v is sec.seq:
            q = _splice_seq(v, i, j, new_items, lref, colls, oe, dl, delta, frag_line, frag_off, copy)
            if tail is not None:
                q.end_line, q.end_col, q.end = tail
            out.append(q)
        elif v.start >= oe:
            out.append(copy(v, 0, lref, colls, dl, delta))
        else:
            out.append(copy(v, 0, lref, colls, 0, 0))
    if tail is not None and root.end == len(doc.text):
        new_root.end_line, new_root.end_col, new_root.end = tail
    return YDocument(text, new_root, path)


def _splice_seq(
    seq: YSeq,
    i: int,
    j: int,
    new_items: list[YNode],
    lref: Any,
    colls: list[Any],
    oe: int,
    dl: int,
    delta: int,
    frag_line: int,
    frag_off: int,
    copy: Callable[..., Any],
) -> YSeq:
    """The section's list: items before ``i`` copied in place, the re-read
    ones moved from the re-read text, those from ``j`` on moved by the
    edit's delta (each subtree copied by ``copy``: :func:`_copier`)."""
    node = YSeq(seq.line, seq.col, seq.start, seq.flow)
    node.end_line, node.end_col, node.end = seq.end_line + dl, seq.end_col, seq.end + delta
    node._links = lref
    node.key = seq.key
    idx = len(colls)
    colls.append(node)
    old = seq.items
    items = [copy(old[k], idx, lref, colls, 0, 0) for k in range(i)]
    node.items = items
    for it in new_items:
        c = copy(it, idx, lref, colls, frag_line, frag_off)
        c.key = len(items)
        items.append(c)
    for k in range(j, len(old)):
        c = copy(old[k], idx, lref, colls, dl, delta)
        c.key = len(items)
        items.append(c)
    return node


_new = object.__new__


def _copier() -> Callable[..., Any]:
    """The copy of a subtree the splice uses: the compiled one
    (``loopc.compiler._ycompose.copy``, the same tree slot for slot, about
    ten times faster) when the compiled composer is bound, else
    :func:`_copy` (no extension, or ``LOOPC_YAML_COMPOSER=python``)."""
    if yamlload.compiled_composer() is not None:
        from loopc.compiler import _ycompose

        return _ycompose.copy
    return _copy


def _copy(src: Any, pidx: int, lref: Any, colls: list[Any], dl: int, delta: int) -> Any:
    """A copy of the subtree ``src`` under the collection at ``pidx`` of a
    new tree's links table (its weak reference ``lref``, collection list
    ``colls``), every position moved by ``dl`` lines and ``delta`` offsets
    (columns stay: what moves starts a line of its own).  A key made a node
    becomes a key record again, as a fresh load leaves it; a mapping's key
    index, read-only once loaded, is shared."""
    cls = src.__class__
    if cls is YScalar:
        return _scalar(src, pidx, lref, dl, delta)
    idx = len(colls)
    moved = dl or delta
    if cls is YMap:
        m = _new(YMap)
        m.line = src.line + dl
        m.col = src.col
        m.start = src.start + delta
        m.end_line = src.end_line + dl
        m.end_col = src.end_col
        m.end = src.end + delta
        m._links = lref
        m._pidx = pidx
        m.key = src.key
        m.flow = src.flow
        m._links_root = None
        m._idx = idx
        m.index = src.index
        colls.append(m)
        out: list[Any] = []
        m.kv = out
        append = out.append
        kv = src.kv
        for jj in range(0, len(kv), 2):
            k = kv[jj]
            if k.__class__ is not tuple:
                k = (k.raw, k.value, k.style, k.line, k.col, k.start, k.end_line, k.end_col, k.end)
            if moved:
                k = (k[0], k[1], k[2], k[3] + dl, k[4], k[5] + delta, k[6] + dl, k[7], k[8] + delta)
            append(k)
            v = kv[jj + 1]
            append(
                _scalar(v, idx, lref, dl, delta) if v.__class__ is YScalar else _copy(v, idx, lref, colls, dl, delta)
            )
        return m
    q = _new(YSeq)
    q.line = src.line + dl
    q.col = src.col
    q.start = src.start + delta
    q.end_line = src.end_line + dl
    q.end_col = src.end_col
    q.end = src.end + delta
    q._links = lref
    q._pidx = pidx
    q.key = src.key
    q.flow = src.flow
    q._links_root = None
    colls.append(q)
    q.items = [
        _scalar(v, idx, lref, dl, delta) if v.__class__ is YScalar else _copy(v, idx, lref, colls, dl, delta)
        for v in src.items
    ]
    return q


def _scalar(v: Any, pidx: int, lref: Any, dl: int, delta: int) -> YScalar:
    c = _new(YScalar)
    c.line = v.line + dl
    c.col = v.col
    c.start = v.start + delta
    c.end_line = v.end_line + dl
    c.end_col = v.end_col
    c.end = v.end + delta
    c._links = lref
    c._pidx = pidx
    c.key = v.key
    c.value = v.value
    c.style = v.style
    c.raw = v.raw
    c.is_key = v.is_key
    return c
