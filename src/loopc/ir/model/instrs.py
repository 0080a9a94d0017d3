"""Instruction trees of the typed IR model (docs/ir.md#instructions):
:class:`Lit`, :class:`Ref`, :class:`MakeArray`, :class:`MakeObject`,
:class:`Template`, :class:`Binary`, :class:`Nary`, :class:`Unary` (the
:data:`Instr` union), their JSON codec (:func:`instr_from_json` raises
:class:`InstrShapeError` with a JSON pointer) and :func:`walk_instr`.
Iterative: no recursion over a tree.  Re-exported by :mod:`loopc.ir.model`."""
from __future__ import annotations

from typing import Any, ClassVar, Iterator, Union

import attrs

from loopc.ir.model.typedesc import TypeDesc, parse_type_desc


BINARY_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "contains", "startsWith", "endsWith")
NARY_OPS = ("and", "or")
UNARY_OPS = ("not", "length")


@attrs.frozen
class Lit:
    """``["lit", T, value]`` — a constant; ``value`` is plain JSON."""

    type: TypeDesc
    value: Any
    op: ClassVar[str] = "lit"

    @property
    def children(self) -> tuple["Instr", ...]:
        return ()


@attrs.frozen
class Ref:
    """``["ref", T, root, seg...]`` — ``root`` one of ``run.input run.state
    input output branches winner loop item items``; ``path`` the segments."""

    type: TypeDesc
    root: str
    path: tuple[str, ...] = ()
    op: ClassVar[str] = "ref"

    @property
    def children(self) -> tuple["Instr", ...]:
        return ()


@attrs.frozen
class MakeArray:
    """``["array", T, item...]`` — a list constructor."""

    type: TypeDesc
    items: tuple["Instr", ...]
    op: ClassVar[str] = "array"

    @property
    def children(self) -> tuple["Instr", ...]:
        return self.items


@attrs.frozen
class MakeObject:
    """``["object", T, k1, i1, ...]`` — ``keys`` (RFC 8785 order) and their
    ``values``, pairwise."""

    type: TypeDesc
    keys: tuple[str, ...]
    values: tuple["Instr", ...]
    op: ClassVar[str] = "object"

    @property
    def children(self) -> tuple["Instr", ...]:
        return self.values


@attrs.frozen
class Template:
    """``["template", T, part...]`` — concatenation of the rendered parts."""

    type: TypeDesc
    parts: tuple["Instr", ...]
    op: ClassVar[str] = "template"

    @property
    def children(self) -> tuple["Instr", ...]:
        return self.parts


@attrs.frozen
class Binary:
    """``[op, T, left, right]`` for ``op`` in :data:`BINARY_OPS`."""

    op: str
    type: TypeDesc
    left: "Instr"
    right: "Instr"

    @property
    def children(self) -> tuple["Instr", ...]:
        return (self.left, self.right)


@attrs.frozen
class Nary:
    """``["and"|"or", T, a, b, ...]`` (two or more operands)."""

    op: str
    type: TypeDesc
    operands: tuple["Instr", ...]

    @property
    def children(self) -> tuple["Instr", ...]:
        return self.operands


@attrs.frozen
class Unary:
    """``["not"|"length", T, a]``."""

    op: str
    type: TypeDesc
    operand: "Instr"

    @property
    def children(self) -> tuple["Instr", ...]:
        return (self.operand,)


Instr = Union[Lit, Ref, MakeArray, MakeObject, Template, Binary, Nary, Unary]
INSTR_CLASSES = (Lit, Ref, MakeArray, MakeObject, Template, Binary, Nary, Unary)

_BIN = frozenset(BINARY_OPS)
_NARY = frozenset(NARY_OPS)
_UN = frozenset(UNARY_OPS)


class InstrShapeError(ValueError):
    """A JSON value is not an instruction (``pointer`` relative to the root)."""

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(f"{pointer or '/'}: {message}")
        self.pointer = pointer
        self.message = message


class _Bad(Exception):
    pass


def instr_from_json(value: Any, memo: dict[Any, Any] | None = None) -> Instr:
    """Wire instruction (a JSON array) → typed :data:`Instr`.  Iterative.
    Raises :class:`InstrShapeError` (with a pointer) for a value that is not
    an instruction; the strict decoder has already rejected those in an
    artifact.  Equal sub-trees are one object (frozen, so sharing is
    invisible): within the tree, or within every tree decoded with one
    ``memo`` (as :func:`contract_from_json`'s)."""
    try:
        return _build(value, {} if memo is None else memo)
    except (_Bad, IndexError, TypeError, KeyError, AttributeError):
        _locate_shape_error(value)
        raise InstrShapeError("", "expected an instruction [op, type, operands...]") from None


#: Interned leaf instructions (frozen, so sharing is invisible); bounded.
_LEAVES: dict[tuple[Any, ...], Instr] = {}


def _build(root: Any, memo: dict[Any, Any]) -> Instr:
    desc = parse_type_desc
    leaves = _LEAVES
    if len(leaves) > 65536:
        leaves.clear()
    if type(root) is list and len(root) >= 3 and root[0] == "ref" and type(root[1]) is str:
        # a reference on its own (most roots): its interned leaf
        key = (root[1], root[2], tuple(root[3:]))
        got = leaves.get(key)
        if got is not None:
            return got
    out: list[Any] = []
    push_out = out.append
    stack: list[Any] = [root]
    pop = stack.pop
    push = stack.append
    while stack:
        v = pop()
        if type(v) is tuple:  # post-order marker: build v[0] from the last children
            v = v[0]
            op = v[0]
            n = (len(v) - 2) >> 1 if op == "object" else len(v) - 2
            if n:
                kids = tuple(out[-n:])
                del out[-n:]
            else:
                kids = ()
            # the children are shared (or held by what is): equal ids, equal trees
            key = ("instr", op, v[1], tuple(v[2::2]) if op == "object" else None, *map(id, kids))
            got = memo.get(key)
            if got is None:
                t = desc(v[1])
                if op == "object":
                    got = MakeObject(t, tuple(v[2::2]), kids)
                elif op in _BIN:
                    got = Binary(op, t, kids[0], kids[1])
                elif op == "template":
                    got = Template(t, kids)
                elif op == "array":
                    got = MakeArray(t, kids)
                elif op in _NARY:
                    got = Nary(op, t, kids)
                else:
                    got = Unary(op, t, kids[0])
                memo[key] = got
            push_out(got)
            continue
        if type(v) is not list or len(v) < 2 or type(v[1]) is not str:
            raise _Bad
        op = v[0]
        if op == "lit":
            if len(v) != 3:
                raise _Bad
            x = v[2]
            tx = type(x)
            if tx is str or tx is int or tx is bool or tx is float or x is None:
                key = (v[1], tx, x)
                got = leaves.get(key)
                if got is None:
                    got = leaves[key] = Lit(desc(v[1]), x)
                push_out(got)
            else:
                push_out(Lit(desc(v[1]), x))
            continue
        if op == "ref":
            if len(v) < 3:
                raise _Bad
            path = tuple(v[3:])
            for seg in path:
                if type(seg) is not str:
                    raise _Bad
            if type(v[2]) is not str:
                raise _Bad
            key = (v[1], v[2], path)
            got = leaves.get(key)
            if got is None:
                got = leaves[key] = Ref(desc(v[1]), v[2], path)
            push_out(got)
            continue
        n = len(v) - 2
        if op == "object":
            if n < 2 or n & 1:
                raise _Bad
            for k in v[2::2]:
                if type(k) is not str:
                    raise _Bad
            push((v,))
            rest = v[3::2]
        elif op in _BIN:
            if n != 2:
                raise _Bad
            push((v,))
            rest = v[2:]
        elif op in _UN:
            if n != 1:
                raise _Bad
            push((v,))
            rest = v[2:]
        elif op == "template" or (op == "array" and n >= 1) or (op in _NARY and n >= 2):
            push((v,))
            rest = v[2:]
        else:
            raise _Bad
        rest.reverse()
        stack.extend(rest)
    return out[0]


def _locate_shape_error(value: Any) -> None:
    """Raise :class:`InstrShapeError` at the first malformed instruction."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        v, p = stack.pop()
        if not isinstance(v, list) or len(v) < 2 or not isinstance(v[0], str) or not isinstance(v[1], str):
            raise InstrShapeError(p, "expected an instruction [op, type, operands...]")
        op = v[0]
        n = len(v) - 2
        if op == "lit":
            if n != 1:
                raise InstrShapeError(p, "'lit' takes exactly one value")
            continue
        if op == "ref":
            if n < 1 or not all(isinstance(x, str) for x in v[2:]):
                raise InstrShapeError(p, "'ref' takes a root and string segments")
            continue
        if op == "object":
            if n < 2 or n % 2 or not all(isinstance(x, str) for x in v[2::2]):
                raise InstrShapeError(p, "'object' takes key/instruction pairs")
            idx = range(3, len(v), 2)
        elif op in _BIN or op in _NARY or op in _UN or op in ("array", "template"):
            if (op in _BIN and n != 2) or (op in _UN and n != 1) or (op in _NARY and n < 2) \
                    or (op == "array" and n < 1):
                raise InstrShapeError(p, f"wrong number of operands for '{op}'")
            idx = range(2, len(v))
        else:
            raise InstrShapeError(p + "/0", f"unknown instruction {op!r}")
        stack.extend((v[i], f"{p}/{i}") for i in idx)


def walk_instr(instr: Instr) -> Iterator[tuple[Instr, int]]:
    """Every instruction of a tree with its depth (the root is 1), pre-order.
    Iterative."""
    stack = [(instr, 1)]
    while stack:
        i, d = stack.pop()
        yield i, d
        kids = i.children
        for k in reversed(kids):
            stack.append((k, d + 1))
