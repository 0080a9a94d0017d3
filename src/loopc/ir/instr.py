"""Expression instruction trees (docs/ir.md#instructions: the
artifact carries no expression or template source text to re-parse).

The instruction format and helpers over it (depth, children, scans); the
lowering of the type pass's typed forms lives in :mod:`loopc.ir.exprs`.  An
instruction is a JSON **array** ``[op, type,
operands...]`` — ``type`` a type descriptor string (``string``, ``enum``,
``array<scope>``, ``object``, ``null``, ``unknown`` ...) — so that every
level of an instruction tree is exactly one level of JSON nesting and a tree
at the expression-nesting gate (128) always fits the envelope-nesting gate
(256) (docs/ir.md#artifact-budget):

* ``["lit", T, value]`` — a constant (any JSON value); constant list/map
  constructors and constant array literals fold into one ``lit``;
* ``["ref", T, root, seg...]`` — ``root`` ∈ ``run.input run.state input
  output branches winner loop item items``, then the field names;
* ``["array", T, instr...]`` / ``["object", T, key, instr, key, instr...]``
  — constructors with at least one non-constant member (object keys sorted);
* ``["template", T, instr...]`` — concatenation of the rendered parts (a
  template that is exactly one ``{{ expr }}`` lowers to ``expr`` itself and
  keeps its type, docs/reference.md#templates; one without interpolation is a ``lit``);
* ``["eq"|"ne"|"lt"|"le"|"gt"|"ge"|"in"|"contains"|"startsWith"|"endsWith",
  T, a, b]``, ``["and"|"or", T, a, b, ...]``, ``["not"|"length", T, a]``.

Iterative over expression trees (their depth is bounded by the parser but the
rule is "walk it without recursion", so hostile input never overflows the
stack: docs/architecture.md#invariants).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:  # the decoder and evaluator import this module without the compiler
    from loopc.compiler.types import Type

__all__ = ["LoweringError", "type_desc", "normalize_json", "lit", "ref_instr", "children", "instr_depth",
           "state_reads", "count_instrs", "scan_instrs"]

_MAX_SAFE = 2**53 - 1


class LoweringError(Exception):
    """A typed form lowering cannot handle (a bug or a pass that did not run)."""


def type_desc(t: Type | None) -> str:
    """Type descriptor string of a static type: the kind, ``array<T>`` for
    arrays (``array<unknown>`` when the element type is unknown); enums,
    typed objects and optionality are not recorded (their contracts are)."""
    if t is None:
        return "unknown"
    depth = 0
    cur: Type | None = t
    while cur is not None and cur.kind == "array":
        depth += 1
        cur = cur.items
    leaf = "unknown" if cur is None else cur.kind
    return "array<" * depth + leaf + ">" * depth


def normalize_json(value: Any) -> Any:
    """JSON-like Python value → plain JSON data: tuples become lists, mapping
    keys stay strings, integral floats within ±(2^53−1) become ints (their
    RFC 8785 form is the same).  Iterative."""
    if isinstance(value, (str, bool)) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) <= _MAX_SAFE else value
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        v, holder, key = stack.pop()
        if isinstance(v, (str, bool)) or v is None:
            holder[key] = v
        elif isinstance(v, int):
            holder[key] = int(v)
        elif isinstance(v, float):
            holder[key] = int(v) if v.is_integer() and abs(v) <= _MAX_SAFE else v
        elif isinstance(v, dict) or hasattr(v, "items"):
            d: dict[str, Any] = {}
            holder[key] = d
            for k, x in v.items():
                stack.append((x, d, str(k)))
        elif isinstance(v, (list, tuple)):
            lst: list[Any] = [None] * len(v)
            holder[key] = lst
            for i, x in enumerate(v):
                stack.append((x, lst, i))
        else:
            raise LoweringError(f"unsupported literal value {v!r}")
    return root[0]


def lit(value: Any, t: Type | None | str) -> list[Any]:
    """``["lit", T, value]``."""
    return ["lit", t if isinstance(t, str) else type_desc(t), normalize_json(value)]


def ref_instr(root: str, path: Iterable[str], t: Type | None | str) -> list[Any]:
    """``["ref", T, root, seg...]``."""
    return ["ref", t if isinstance(t, str) else type_desc(t), root, *path]


def _object(t: str, fields: dict[str, list[Any]]) -> list[Any]:
    out: list[Any] = ["object", t]
    for k in sorted(fields, key=lambda k: k.encode("utf-16-be")):
        out += [k, fields[k]]
    return out


def children(instr: Any) -> list[Any]:
    """Sub-instructions of an instruction (``[]`` for ``lit``/``ref`` and for
    anything that is not an instruction)."""
    if not isinstance(instr, list) or len(instr) < 2:
        return []
    op = instr[0]
    if op == "lit" or op == "ref":
        return []
    if op == "object":
        return instr[3::2]
    return instr[2:]


def instr_depth(instr: Any) -> int:
    """Depth of an instruction tree (a leaf is 1).  Iterative."""
    best = 0
    stack = [(instr, 1)]
    while stack:
        i, d = stack.pop()
        if d > best:
            best = d
        for k in children(i):
            stack.append((k, d + 1))
    return best


def count_instrs(instr: Any) -> int:
    """Number of instructions in a tree.  Iterative."""
    n = 0
    stack = [instr]
    while stack:
        i = stack.pop()
        n += 1
        stack.extend(children(i))
    return n


def state_reads(instrs: Iterable[Any], into: set[str]) -> set[str]:
    """Add to ``into`` the Run-state fields (first segment after
    ``run.state``) read by the instruction trees ``instrs``."""
    stack = list(instrs)
    while stack:
        i = stack.pop()
        if isinstance(i, list) and i and i[0] == "ref":
            if len(i) > 3 and i[2] == "run.state":
                into.add(i[3])
            continue
        stack.extend(children(i))
    return into


def scan_instrs(roots: Iterable[tuple[str, str, Any]]) -> tuple[int, Any, int]:
    """One walk over every instruction tree: ``(max depth, (kind, id) of the
    deepest tree, version needed by type descriptors and reference roots)``.
    ``roots`` — ``(kind, id, instruction)`` of typed instructions
    (:data:`loopc.ir.model.Instr`), as produced by
    :func:`loopc.ir.model.instr_roots`."""
    from loopc.ir.versions import _ROOT_V, desc_version

    cache: dict[Any, int] = {}  # TypeDesc -> version (interned, hash cached)
    get = cache.get
    best = 0
    where: Any = None
    version = 1
    seen: dict[int, tuple[int, Any]] = {}  # id of a root walked before -> (its depth, it); roots are often shared leaves
    for kind, ident, root in roots:
        got = seen.get(id(root))
        if got is not None:
            deepest = got[0]
            if deepest > best:
                best = deepest
                where = (kind, ident)
            continue
        deepest = 0
        stack = [(root, 1)]
        pop = stack.pop
        push = stack.append
        while stack:
            i, d = pop()
            if d > deepest:
                deepest = d
            t = i.type
            dv = get(t)
            if dv is None:
                dv = cache[t] = desc_version(t.wire)
            if dv > version:
                version = dv
            op = i.op
            if op == "lit":
                continue
            if op == "ref":
                rv = _ROOT_V.get(i.root, 1)
                if rv > version:
                    version = rv
                continue
            d += 1
            for k in i.children:
                push((k, d))
        seen[id(root)] = (deepest, root)  # the root kept alive: its id is not reused
        if deepest > best:
            best = deepest
            where = (kind, ident)
    return best, where, version
