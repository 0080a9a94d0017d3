"""Expression and template AST (docs/reference.md#expressions, docs/reference.md#templates).

Produced by :mod:`loopc.compiler.expr.parser` (``type`` is ``None``) and
re-built by :mod:`loopc.compiler.expr.checker` with every node's ``type`` set
(a *typed* AST, lowered by the IR pass into instructions).  All nodes are
frozen value classes (:mod:`loopc.value`); ``start``/``end`` are code-point offsets (end exclusive)
into the text that was parsed — the expression text for
:func:`~loopc.compiler.expr.parse_expression`, the whole template text for
:func:`~loopc.compiler.expr.parse_template` (expressions inside a template
carry template offsets).  Map them to source positions with
:func:`loopc.compiler.scalarpos.value_span`.

Node kinds:

* :class:`Lit` — ``'text'``, ``"text"``, ``12``, ``1.5e3``, ``true``,
  ``false``, ``null``; ``value`` is the Python value (``str``/``int``/
  ``float``/``bool``/``None``).  After checking, a string literal compared
  with (or expected as) a string-shaped type carries that type (``'PT1H'``
  next to a duration is ``duration``) — the literal "takes the expected type"
  (docs/reference.md#expressions);
* :class:`Path` — ``root`` is ``run.input``, ``run.state``, ``input``,
  ``output``, ``branches``, ``winner``, ``item``, ``items`` or ``loop`` (or an
  unknown word the checker rejects); ``segments`` the field names after it
  (``branches.legal.ok`` → ``Path('branches', ('legal', 'ok'))``);
* :class:`Not`, :class:`And`, :class:`Or` — ``And``/``Or`` are n-ary
  (``a && b && c`` is one ``And`` with three operands);
* :class:`Compare` — ``op`` ∈ ``== != < <= > >= in``; comparisons do not chain;
* :class:`Call` — ``name`` ∈ ``contains startsWith endsWith length`` (the
  parser accepts any identifier; the checker rejects unknown names);
* :class:`ArrayLit` — ``[e, ...]``.

Templates: :class:`TemplateAst` with ``parts``: literal text (``str``) and
:class:`Interp` (``{{ expr }}``).  Adjacent text is merged; ``{{ '{{' }}``
stays an :class:`Interp` of a string literal (it renders as ``{{``).

The tree depth is bounded (64, checked by the parser), so ``==`` and
``repr``, which recurse into the children, are safe on any tree the parser
returns.
"""
from __future__ import annotations

from typing import Any, Iterator, Union

from loopc.value import Value
from loopc.compiler.types import Type

COMPARE_OPS = ("==", "!=", "<", "<=", ">", ">=", "in")
FUNCTIONS = ("contains", "startsWith", "endsWith", "length")
ROOTS = ("run.input", "run.state", "input", "output", "branches", "winner", "item", "items", "loop")



class Lit(Value, kw_only=True):
    """A literal: ``value`` is ``str | int | float | bool | None``."""

    value: Any
    start: int
    end: int
    type: Type | None = None


class Path(Value, kw_only=True):
    """A reference path: ``root`` (see :data:`ROOTS`) and field ``segments``.
    ``text`` is the dotted path (``run.state.ready``); ``name_starts`` the
    offset of every written name (``run`` and ``state`` count separately)."""

    root: str
    segments: tuple[str, ...]
    start: int
    end: int
    name_starts: tuple[int, ...] = ()
    type: Type | None = None

    def segment_span(self, i: int) -> tuple[int, int]:
        """Offsets of segment ``i`` (``-1`` = the root, ``run.input`` whole)
        for precise errors; the whole path if positions are unknown."""
        names = tuple(self.root.split(".")) + self.segments
        nroot = len(names) - len(self.segments)
        if len(self.name_starts) != len(names) or i >= len(self.segments):
            return self.start, self.end
        if i < 0:
            return self.name_starts[0], self.name_starts[nroot - 1] + len(names[nroot - 1])
        k = nroot + i
        return self.name_starts[k], self.name_starts[k] + len(names[k])

    @property
    def text(self) -> str:
        return ".".join((self.root,) + self.segments)


class Not(Value, kw_only=True):
    """``!operand``."""

    operand: "Expr"
    start: int
    end: int
    type: Type | None = None


class And(Value, kw_only=True):
    """``a && b && ...`` — two or more operands, left to right."""

    operands: tuple["Expr", ...]
    start: int
    end: int
    type: Type | None = None


class Or(Value, kw_only=True):
    """``a || b || ...`` — two or more operands, left to right."""

    operands: tuple["Expr", ...]
    start: int
    end: int
    type: Type | None = None


class Compare(Value, kw_only=True):
    """``left op right``; ``op`` ∈ :data:`COMPARE_OPS`; ``op_start``/``op_end``
    locate the operator token."""

    op: str
    left: "Expr"
    right: "Expr"
    start: int
    end: int
    op_start: int = 0
    op_end: int = 0
    type: Type | None = None


class Call(Value, kw_only=True):
    """``name(args...)``; ``name_end`` is the end of the function name."""

    name: str
    args: tuple["Expr", ...]
    start: int
    end: int
    name_end: int = 0
    type: Type | None = None


class ArrayLit(Value, kw_only=True):
    """``[items...]``."""

    items: tuple["Expr", ...]
    start: int
    end: int
    type: Type | None = None


Expr = Union[Lit, Path, Not, And, Or, Compare, Call, ArrayLit]


class Interp(Value, kw_only=True):
    """``{{ expr }}`` inside a template: ``start``/``end`` cover the braces,
    ``expr`` offsets are template offsets too."""

    expr: Expr
    start: int
    end: int


class TemplateAst(Value, kw_only=True):
    """A parsed template: ``parts`` are ``str`` (literal text) or
    :class:`Interp`, in order; ``text`` is the template source text."""

    parts: tuple[Union[str, Interp], ...]
    text: str

    @property
    def interps(self) -> tuple[Interp, ...]:
        return tuple(p for p in self.parts if isinstance(p, Interp))

    @property
    def is_single(self) -> bool:
        """Exactly one ``{{ expr }}`` and nothing else (docs/reference.md#templates): the
        template then has the expression's type."""
        return len(self.parts) == 1 and isinstance(self.parts[0], Interp)

    @property
    def is_constant(self) -> bool:
        """No interpolation at all: the template is its text."""
        return not any(isinstance(p, Interp) for p in self.parts)


def children(node: Expr) -> tuple[Expr, ...]:
    """Direct sub-expressions of ``node`` in source order."""
    cls = node.__class__
    if cls is And or cls is Or:
        return node.operands  # type: ignore[union-attr]
    if cls is Compare:
        return (node.left, node.right)  # type: ignore[union-attr]
    if cls is Not:
        return (node.operand,)  # type: ignore[union-attr]
    if cls is Call:
        return node.args  # type: ignore[union-attr]
    if cls is ArrayLit:
        return node.items  # type: ignore[union-attr]
    return ()


def walk(node: Expr) -> Iterator[Expr]:
    """Pre-order walk without recursion."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(children(n)))


def with_children(node: Expr, kids: tuple[Expr, ...], **changes: Any) -> Expr:
    """A copy of ``node`` with its sub-expressions replaced by ``kids`` (same
    arity as :func:`children`) and extra attribute ``changes``."""
    cls = node.__class__
    if cls is And or cls is Or:
        changes["operands"] = kids
    elif cls is Compare:
        changes["left"], changes["right"] = kids
    elif cls is Not:
        (changes["operand"],) = kids
    elif cls is Call:
        changes["args"] = kids
    elif cls is ArrayLit:
        changes["items"] = kids
    return node.evolve(**changes) if changes else node


def map_postorder(node: Expr, fn: Any) -> Expr:
    """Rebuild a tree bottom-up without recursion: ``fn(node, new_kids)``
    returns the replacement of ``node`` given its already-mapped children."""
    # stack of (node, visited)
    out: list[Expr] = []
    stack: list[tuple[Expr, bool]] = [(node, False)]
    while stack:
        n, done = stack.pop()
        kids = children(n)
        if not done:
            stack.append((n, True))
            for k in reversed(kids):
                stack.append((k, False))
            continue
        nk = len(kids)
        new_kids = tuple(out[len(out) - nk:]) if nk else ()
        if nk:
            del out[len(out) - nk:]
        out.append(fn(n, new_kids))
    return out[0]


def shift(node: Expr, delta: int) -> Expr:
    """``node`` with every offset moved by ``delta`` (used for expressions
    parsed out of a template)."""
    if not delta:
        return node

    def move(n: Expr, kids: tuple[Expr, ...]) -> Expr:
        ch: dict[str, Any] = {"start": n.start + delta, "end": n.end + delta}
        if isinstance(n, Compare):
            ch["op_start"] = n.op_start + delta
            ch["op_end"] = n.op_end + delta
        elif isinstance(n, Call):
            ch["name_end"] = n.name_end + delta
        elif isinstance(n, Path):
            ch["name_starts"] = tuple(x + delta for x in n.name_starts)
        return with_children(n, kids, **ch)

    return map_postorder(node, move)


_PREC = {"Or": 1, "And": 2, "Compare": 3, "Not": 4}


def to_source(node: Expr) -> str:
    """Canonical text of an expression, parenthesised only where the tree
    needs it (re-parsing gives the same tree); used in messages and golden
    tests.  Iterative."""
    def render(n: Expr, kids: tuple[Any, ...]) -> Any:
        prec = _PREC.get(n.__class__.__name__, 5)
        if isinstance(n, Lit):
            v = n.value
            if v is None:
                text = "null"
            elif v is True:
                text = "true"
            elif v is False:
                text = "false"
            elif isinstance(v, str):
                text = "'" + v.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\t", "\\t") + "'"
            else:
                text = repr(v)
        elif isinstance(n, Path):
            text = n.text
        elif isinstance(n, Not):
            text = "!" + _wrap(kids[0], prec - 1)
        elif isinstance(n, (And, Or)):
            sep = " && " if isinstance(n, And) else " || "
            text = sep.join(_wrap(k, prec) for k in kids)
        elif isinstance(n, Compare):
            text = f"{_wrap(kids[0], prec)} {n.op} {_wrap(kids[1], prec)}"
        elif isinstance(n, Call):
            text = f"{n.name}({', '.join(k[0] for k in kids)})"
        elif isinstance(n, ArrayLit):
            text = "[" + ", ".join(k[0] for k in kids) + "]"
        else:  # pragma: no cover
            raise TypeError(n)
        return text, prec

    return map_postorder(node, render)[0]  # type: ignore[index]


def _wrap(kid: tuple[str, int], parent_prec: int) -> str:
    text, prec = kid
    return text if prec > parent_prec else f"({text})"
