"""Positioned YAML node tree (the AST of pass 1, docs/language.md#compiler-passes).

Every node keeps its source range as 0-based line/column pairs and code-point
indexes into the decoded source (libyaml counts code points), plus its parent
and key so that an RFC 6901 pointer can be derived on demand.  Scalars carry
the value resolved under the YAML 1.2 core schema (docs/reference.md#source-file).

The tree has no reference cycles, and few objects for the garbage collector
to track: the parent links of a composed document live in one
:class:`YLinks` table that the root holds; every other node holds the one
weak reference to that table and its parent's index in it
(:attr:`YNode.parent`).  A mapping keeps its keys and values in one flat
list (no tuple per pair).  A discarded document is freed by reference
counting alone, never left for the cyclic garbage collector
(docs/architecture.md#invariants).  ``parent`` is therefore valid while
the tree's root (or the :class:`YDocument`) is alive, which every result
holding a node guarantees.
"""
from __future__ import annotations

import weakref
from typing import Any, Iterator

from loopc.diagnostics import Span
from loopc.lineindex import LineIndex


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class YLinks:
    """The parent table of one composed tree: ``colls[i]`` is the collection
    a node whose ``_pidx`` is ``i`` sits in, and index 0 is the root, held
    weakly (``root``): the root holds this table (``YMap``/``YSeq``
    ``_links``), the table every other collection, and the nodes the table
    weakly (one weak reference per document, shared), so the tree stays
    acyclic."""

    __slots__ = ("colls", "root", "__weakref__")

    def __init__(self, root: YNode) -> None:
        self.colls: list[YNode | None] = [None]
        self.root: weakref.ref[YNode] = weakref.ref(root)

    def at(self, i: int) -> YNode | None:
        """The collection at index ``i`` (``None`` once the root is freed)."""
        return self.root() if i == 0 else self.colls[i]


class YNode:
    """Base class: a YAML node with a source range and its place in the tree.

    ``parent`` is the enclosing collection (``None`` at the root), found
    through the tree's :class:`YLinks` table, which the node holds weakly:
    the tree is acyclic for the garbage collector.  ``key`` is the mapping
    key text or sequence index under which the node sits."""

    __slots__ = ("line", "col", "end_line", "end_col", "start", "end", "_links", "_pidx", "key")

    def __init__(self, line: int, col: int, start: int) -> None:
        self.line = line
        self.col = col
        self.start = start
        self.end_line = line
        self.end_col = col
        self.end = start
        # weak reference to the tree's YLinks (None at the root or detached)
        # and the parent's index there
        self._links: weakref.ref[YLinks] | None = None
        self._pidx = 0
        self.key: str | int | None = None

    @property
    def parent(self) -> YNode | None:
        """The enclosing mapping or sequence, ``None`` at the root (or once
        the rest of the tree has been freed)."""
        ref = self._links
        if ref is None:
            return None
        links = ref()
        return None if links is None else links.at(self._pidx)

    @property
    def span(self) -> Span:
        """1-based, end-exclusive code-point range of the node, with its
        0-based code-point offsets (an empty node spans one character)."""
        end_line, end_col, end = self.end_line, self.end_col, self.end
        if (end_line, end_col) <= (self.line, self.col):
            end_line, end_col, end = self.line, self.col + 1, self.start + 1
        return Span(self.line + 1, self.col + 1, end_line + 1, end_col + 1, self.start, end)

    @property
    def pointer(self) -> str:
        """RFC 6901 pointer to this node (keys point at their value's path)."""
        ref = self._links
        links = None if ref is None else ref()
        if links is None:
            return ""
        at = links.at
        parts: list[str] = []
        node: YNode | None = self
        while node is not None and node._links is not None:
            parts.append(_escape(str(node.key)))
            node = at(node._pidx)
        return "/" + "/".join(reversed(parts))

    def to_data(self) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError


class YScalar(YNode):
    """A scalar.  ``value`` is core-schema resolved; ``style`` is '' for plain,
    "'" / '"' for quoted, '|' / '>' for block scalars.  ``is_key`` marks a
    mapping key."""

    __slots__ = ("value", "style", "is_key", "raw")

    def __init__(self, line: int, col: int, start: int, value: Any, style: str, raw: str) -> None:
        # fields set inline (no super() call): this runs once per YAML scalar
        self.line = self.end_line = line
        self.col = self.end_col = col
        self.start = self.end = start
        self._links = None
        self._pidx = 0
        self.key = None
        self.value = value
        self.style = style
        self.raw = raw
        self.is_key = False

    @property
    def text(self) -> str:
        """The scalar's text as written (after YAML unquoting/folding)."""
        return self.raw

    @property
    def plain(self) -> bool:
        return self.style == ""

    def to_data(self) -> Any:
        return self.value

    def __repr__(self) -> str:
        return f"YScalar({self.value!r}@{self.line + 1}:{self.col + 1})"


#: A mapping key not yet asked for as a node: ``(raw, value, style, line,
#: col, start, end_line, end_col, end)``, all atomic (str, int, None, bool,
#: float), so the garbage collector untracks it (the key's
#: :class:`YScalar` is made the first time it is asked for, and kept).
KeyRecord = tuple


def key_scalar(rec: tuple[Any, ...], links: weakref.ref[YLinks] | None, pidx: int) -> YScalar:
    """The key :class:`YScalar` of a :data:`KeyRecord` whose mapping is at
    index ``pidx`` of the links table ``links``."""
    raw, value, style, line, col, start, end_line, end_col, end = rec
    k = YScalar(line, col, start, value, style, raw)
    k.end_line = end_line
    k.end_col = end_col
    k.end = end
    k.is_key = True
    k.key = raw
    k._links = links
    k._pidx = pidx
    return k


class YMap(YNode):
    """A mapping in authored order (duplicates included); lookups by key text
    return the first occurrence.  ``kv`` is the flat list ``[key, value,
    key, value, …]`` where a key is its :class:`YScalar` or, until first
    asked for (:meth:`key_node`, :meth:`pairs`, :attr:`items`…), its
    :data:`KeyRecord`; ``index`` maps a key's text to the pair number of its
    first occurrence; ``items`` lists the (key node, value) pairs."""

    __slots__ = ("kv", "index", "flow", "_links_root", "_idx", "__weakref__")

    def __init__(self, line: int, col: int, start: int, flow: bool) -> None:
        super().__init__(line, col, start)
        self.kv: list[Any] = []
        self.index: dict[str, int] = {}
        self.flow = flow
        self._links_root: YLinks | None = None  # the tree's table, held by the root
        self._idx = 0  # this mapping's own index in the table (its keys' parent index)

    def _key(self, j: int) -> YScalar:
        """The key node at ``kv[j]`` (``j`` even), made from its record once."""
        k = self.kv[j]
        if k.__class__ is tuple:
            links = self._links
            if links is None and self._links_root is not None:
                links = weakref.ref(self._links_root)
            k = self.kv[j] = key_scalar(k, links, self._idx)
        return k

    @property
    def items(self) -> list[tuple[YScalar, YNode]]:
        """(key node, value) of every entry, in authored order (a new list)."""
        kv = self.kv
        key = self._key
        return [(key(j), kv[j + 1]) for j in range(0, len(kv), 2)]

    def get(self, key: str) -> YNode | None:
        i = self.index.get(key)
        return None if i is None else self.kv[2 * i + 1]

    def key_node(self, key: str) -> YScalar | None:
        i = self.index.get(key)
        return None if i is None else self._key(2 * i)

    def first_key(self) -> YScalar | None:
        """The first key node as written (``None`` when empty)."""
        return self._key(0) if self.kv else None

    def last_key(self) -> YScalar | None:
        """The last key node as written (``None`` when empty)."""
        kv = self.kv
        return self._key(len(kv) - 2) if kv else None

    def __contains__(self, key: str) -> bool:
        return key in self.index

    def keys(self) -> list[str]:
        return list(self.index)

    def values(self) -> list[YNode]:
        """The value of every entry, duplicates included, in authored order."""
        return self.kv[1::2]

    def entries(self) -> Iterator[tuple[str, YNode]]:
        """First occurrence of every key, in authored order: (key, value);
        :meth:`pairs` without the key nodes."""
        kv = self.kv
        for k, i in self.index.items():
            yield k, kv[2 * i + 1]

    def pairs(self) -> Iterator[tuple[str, YScalar, YNode]]:
        """First occurrence of every key, in authored order: (key, key node, value)."""
        kv = self.kv
        key = self._key
        for k, i in self.index.items():
            yield k, key(2 * i), kv[2 * i + 1]

    def to_data(self) -> dict[str, Any]:
        return {k: v.to_data() for k, v in self.entries()}

    def __repr__(self) -> str:
        return f"YMap({self.keys()}@{self.line + 1}:{self.col + 1})"


class YSeq(YNode):
    """A sequence."""

    __slots__ = ("items", "flow", "_links_root", "__weakref__")

    def __init__(self, line: int, col: int, start: int, flow: bool) -> None:
        super().__init__(line, col, start)
        self.items: list[YNode] = []
        self.flow = flow
        self._links_root: YLinks | None = None  # the tree's table, held by the root

    def to_data(self) -> list[Any]:
        return [v.to_data() for v in self.items]

    def __repr__(self) -> str:
        return f"YSeq(len={len(self.items)}@{self.line + 1}:{self.col + 1})"


class YDocument:
    """A loaded source: decoded text (BOM removed), root node, optional path."""

    __slots__ = ("text", "root", "path", "_index", "scalar_maps")

    def __init__(self, text: str, root: YNode | None, path: str | None = None) -> None:
        self.text = text
        self.root = root
        self.path = path
        self._index: LineIndex | None = None
        # scalarpos cache: id(scalar) -> (scalar, ScalarMap | None)
        self.scalar_maps: dict[int, tuple[YScalar, Any]] = {}

    @property
    def index(self) -> LineIndex:
        """The :class:`~loopc.lineindex.LineIndex` of ``text`` (built once, on
        first use): offsets ↔ line/column in code points, UTF-16 and UTF-8."""
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index

    @property
    def line_starts(self) -> list[int]:
        """Code-point index at which each 0-based line starts."""
        return self.index.starts

    def position(self, index: int) -> tuple[int, int]:
        """0-based (line, column) of a code-point index into ``text``."""
        return self.index.position(index)

    def line_text(self, line0: int) -> str:
        return self.index.line_text(line0)


def span_in_scalar(scalar: YScalar, start: int, end: int) -> Span | YScalar:
    """Span of value offsets ``[start, end)`` of ``scalar`` without the
    document text: exact for single-line scalars whose source is the value
    itself (plain, or quoted without escapes), else the whole scalar."""
    if scalar.line != scalar.end_line or scalar.style not in ("", "'", '"'):
        return scalar
    quote = 0 if scalar.style == "" else 1
    if scalar.end_col - scalar.col != len(scalar.raw) + 2 * quote:
        return scalar
    col = scalar.col + quote
    end = max(end, start + 1)
    return Span(scalar.line + 1, col + start + 1, scalar.line + 1, col + end + 1)
