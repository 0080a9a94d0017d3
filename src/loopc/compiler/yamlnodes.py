"""Positioned YAML node tree (the AST of pass 1, docs/language.md#compiler-passes).

Every node keeps its source range as 0-based line/column pairs and code-point
indexes into the decoded source (libyaml counts code points), plus its parent
and key so that an RFC 6901 pointer can be derived on demand.  Scalars carry
the value resolved under the YAML 1.2 core schema (docs/reference.md#source-file).

The tree has no reference cycles: a child refers to its parent through a
weak reference (:attr:`YNode.parent`), so a discarded document is freed by
reference counting alone, never left for the cyclic garbage collector
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


class YNode:
    """Base class: a YAML node with a source range and its place in the tree.

    ``parent`` is the enclosing collection (``None`` at the root), held
    weakly: the tree is acyclic for the garbage collector.  ``key`` is the
    mapping key text or sequence index under which the node sits."""

    __slots__ = ("line", "col", "end_line", "end_col", "start", "end", "_parent", "key")

    def __init__(self, line: int, col: int, start: int) -> None:
        self.line = line
        self.col = col
        self.start = start
        self.end_line = line
        self.end_col = col
        self.end = start
        self._parent: weakref.ref[YNode] | None = None
        self.key: str | int | None = None

    @property
    def parent(self) -> YNode | None:
        """The enclosing mapping or sequence, ``None`` at the root (or once
        the rest of the tree has been freed)."""
        ref = self._parent
        return None if ref is None else ref()

    @parent.setter
    def parent(self, node: YNode | None) -> None:
        self._parent = None if node is None else weakref.ref(node)

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
        parts: list[str] = []
        node: YNode | None = self
        while node is not None:
            ref = node._parent
            if ref is None:
                break
            parts.append(_escape(str(node.key)))
            node = ref()
        if not parts:
            return ""
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
        self._parent = None
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


class YMap(YNode):
    """A mapping: ``items`` keeps authored order (duplicates included); lookups
    by key text return the first occurrence."""

    __slots__ = ("items", "index", "flow", "__weakref__")

    def __init__(self, line: int, col: int, start: int, flow: bool) -> None:
        super().__init__(line, col, start)
        self.items: list[tuple[YScalar, YNode]] = []
        self.index: dict[str, int] = {}
        self.flow = flow

    def get(self, key: str) -> YNode | None:
        i = self.index.get(key)
        return None if i is None else self.items[i][1]

    def key_node(self, key: str) -> YScalar | None:
        i = self.index.get(key)
        return None if i is None else self.items[i][0]

    def __contains__(self, key: str) -> bool:
        return key in self.index

    def keys(self) -> list[str]:
        return list(self.index)

    def pairs(self) -> Iterator[tuple[str, YScalar, YNode]]:
        """First occurrence of every key, in authored order: (key, key node, value)."""
        items = self.items
        for k, i in self.index.items():
            kn, v = items[i]
            yield k, kn, v

    def to_data(self) -> dict[str, Any]:
        return {k: v.to_data() for k, _, v in self.pairs()}

    def __repr__(self) -> str:
        return f"YMap({self.keys()}@{self.line + 1}:{self.col + 1})"


class YSeq(YNode):
    """A sequence."""

    __slots__ = ("items", "flow", "__weakref__")

    def __init__(self, line: int, col: int, start: int, flow: bool) -> None:
        super().__init__(line, col, start)
        self.items: list[YNode] = []
        self.flow = flow

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
