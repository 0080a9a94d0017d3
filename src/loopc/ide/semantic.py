"""Semantic tokens for expressions (docs/editors.md#features).

Inside ``ref:`` paths, ``{{ }}`` templates and bare expressions (``when``,
``condition``, ``expr:``) the editor marks what a YAML grammar cannot see:
reference roots (``namespace``), field segments (``property``), functions,
comparison and logical operators, string/number literals, ``true``/
``false``/``null`` (``keyword``) and the template braces (``macro``).
Positions come from the expression parser's offsets mapped back through the
YAML scalar (:func:`loopc.compiler.scalarpos.value_span`), so escapes,
quotes and folded block scalars are placed right; a token that would span
lines is dropped.  Output: :class:`Token` values in editor offsets, sorted
and without overlaps (:mod:`loopc.lsp.semantic` encodes them).
"""

from __future__ import annotations

from typing import Any, Iterator

import attrs

from loopc.compiler.model import Expr, ListValue, MapValue, Ref, Template
from loopc.compiler.yamlnodes import YScalar
from loopc.ide.document import Document

#: token types, in legend order
TOKEN_TYPES = ("namespace", "property", "function", "operator", "string", "number", "keyword", "macro")
_T = {name: i for i, name in enumerate(TOKEN_TYPES)}


@attrs.frozen
class Token:
    """One token: editor code-point offsets ``[start, end)`` on one line and
    its ``type`` (one of :data:`TOKEN_TYPES`)."""

    start: int
    end: int
    type: str


def _values(plan: Any) -> Iterator[Any]:
    from loopc.compiler.symbols import config_values

    for node in plan.nodes.values():
        for v, _k in config_values(node.config):
            yield v
    for edge in plan.edges.values():
        if edge.bind:
            yield from edge.bind.values()


def _ast_tokens(root: Any, text: str = "") -> Iterator[tuple[int, int, str]]:
    """(start, end, type) in the offsets of the parsed ``text``.  Every
    operator is a token: a comparison's from its recorded position, ``!``
    at the start of its node, and each ``&&``/``||`` of an n-ary chain
    found in ``text`` between two operands (the parser keeps only the
    operands' extents, which a parenthesised operand's parentheses are part
    of)."""
    from loopc.compiler.expr import ast as A

    for n in A.walk(root):
        if isinstance(n, A.Path):
            names = tuple(n.root.split(".")) + tuple(n.segments)
            if len(n.name_starts) != len(names):
                yield n.start, n.end, "property"
                continue
            nroot = len(names) - len(n.segments)
            for k, (name, s) in enumerate(zip(names, n.name_starts)):
                yield s, s + len(name), "namespace" if k < nroot else "property"
        elif isinstance(n, A.Lit):
            v = n.value
            kind = "string" if isinstance(v, str) else "keyword" if v is None or isinstance(v, bool) else "number"
            yield n.start, n.end, kind
        elif isinstance(n, A.Call):
            yield n.start, n.name_end or n.start + len(n.name), "function"
        elif isinstance(n, A.Compare) and n.op_end > n.op_start:
            yield n.op_start, n.op_end, "operator"
        elif isinstance(n, A.Not):
            yield n.start, n.start + 1, "operator"
        elif isinstance(n, (A.And, A.Or)):
            op = "&&" if isinstance(n, A.And) else "||"
            for left, right in zip(n.operands, n.operands[1:]):
                i = text.find(op, left.end, right.start)
                if i >= 0:
                    yield i, i + 2, "operator"


def _scalar_tokens(v: Any) -> Iterator[tuple[YScalar, int, int, str]]:
    from loopc.compiler.expr.parser import parse_expression, parse_path, parse_template

    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, ListValue):
            stack.extend(x.items)
            continue
        if isinstance(x, MapValue):
            stack.extend(x.entries.values())
            continue
        if isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        sc = getattr(x, "src", None)
        if not isinstance(sc, YScalar):
            continue
        if isinstance(x, Ref):
            p, _ = parse_path(x.text)
            if p is not None:
                for s, e, k in _ast_tokens(p, x.text):
                    yield sc, s, e, k
        elif isinstance(x, Expr):
            e0, _ = parse_expression(x.text)
            if e0 is not None:
                for s, e, k in _ast_tokens(e0, x.text):
                    yield sc, s, e, k
        elif isinstance(x, Template) and "{{" in x.text:
            t, _ = parse_template(x.text)
            if t is None:
                continue
            for it in t.interps:
                yield sc, it.start, it.start + 2, "macro"
                for s, e, k in _ast_tokens(it.expr, x.text):
                    yield sc, s, e, k
                yield sc, it.end - 2, it.end, "macro"


def semantic_tokens(doc: Document) -> list[Token]:
    """The expression tokens of ``doc``'s plan (empty without a plan):
    single-line, in document order, the first of two overlapping tokens
    kept (by start, then the shorter, then legend order)."""
    from loopc.compiler.scalarpos import value_span

    result = doc.result
    plan = getattr(result, "plan", None)
    ydoc = getattr(result, "document", None)
    if plan is None or ydoc is None:
        return []
    toks: list[tuple[int, int, int]] = []  # start, end, type
    seen: set[tuple[int, int]] = set()
    for v in _values(plan):
        for sc, s, e, kind in _scalar_tokens(v):
            if e <= s:
                continue
            sp = value_span(ydoc, sc, s, e)
            if sp.line != sp.end_line:
                continue
            r = doc.span_range(sp)
            a, b = r.start, r.end
            if (a, b) in seen or b <= a:
                continue
            seen.add((a, b))
            if doc.lines.position(a)[0] != doc.lines.position(b)[0]:
                continue
            toks.append((a, b, _T[kind]))
    toks.sort()
    out: list[Token] = []
    last_end = -1
    for a, b, t in toks:
        if a < last_end:
            continue  # overlapping (never from one parse; guard against two values sharing a scalar)
        out.append(Token(a, b, TOKEN_TYPES[t]))
        last_end = b
    return out
