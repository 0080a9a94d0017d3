"""Lowering of typed expressions, templates and value forms to instruction
trees (pass 13; format in :mod:`loopc.ir.instr`, docs/ir.md#instructions).

Input: the type pass's typed forms (:mod:`loopc.compiler.typecheck`:
``TypedLiteral``, ``TypedTemplate``, ``TypedList``, ``TypedMap`` and typed
expression ASTs of :mod:`loopc.compiler.expr.ast`).  Constant constructors
fold into one ``lit``; a template that is exactly one ``{{ expr }}`` lowers
to ``expr``; expression ASTs are walked without recursion.  Equal leaf
instructions of one lowering are one shared object (``leaves``).
"""
from __future__ import annotations

from typing import Any

from loopc.compiler import typecheck as TC
from loopc.compiler.expr import ast as A
from loopc.ir.instr import LoweringError, normalize_json, type_desc
from loopc.ir.model import (
    Binary, Instr, Lit, MakeArray, MakeObject, Nary, Ref, Template, TypeDesc, Unary, parse_type_desc,
    type_desc_of,
)

__all__ = ["lower_typed"]

_CMP = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "in": "in"}
_CALLS = {"contains": "contains", "startsWith": "startsWith", "endsWith": "endsWith", "length": "length"}
_AST_CLASSES = (A.Lit, A.Path, A.Not, A.And, A.Or, A.Compare, A.Call, A.ArrayLit)
_STRING = parse_type_desc("string")
_UNKNOWN = parse_type_desc("unknown")


def _desc(t: Any) -> TypeDesc:
    if t is None:
        return _UNKNOWN
    kind = t.kind
    if kind != "array":
        return type_desc_of(kind)
    return parse_type_desc(type_desc(t))


#: Interned leaf instructions of one lowering (frozen, so sharing is
#: invisible): a plan reads the same field under the same type many times.
_Leaves = dict


def _lit(value: Any, t: TypeDesc, leaves: _Leaves | None = None) -> Lit:
    v = normalize_json(value)
    tv = type(v)
    if leaves is None or not (tv is str or tv is int or tv is bool or v is None):
        return Lit(t, v)
    key = (t, tv, v)
    got = leaves.get(key)
    if got is None:
        got = leaves[key] = Lit(t, v)
    return got


def _ref(t: TypeDesc, root: str, segments: Any, leaves: _Leaves) -> Ref:
    path = tuple(segments)
    key = (t, root, path)
    got = leaves.get(key)
    if got is None:
        got = leaves[key] = Ref(t, root, path)
    return got


def _object(t: TypeDesc, fields: dict[str, Instr]) -> MakeObject:
    keys = sorted(fields, key=lambda k: k.encode("utf-16-be"))
    return MakeObject(t, tuple(keys), tuple(fields[k] for k in keys))


def _lower_ast(node: Any, leaves: _Leaves) -> Instr:
    """Typed expression AST (:mod:`loopc.compiler.expr.ast`) → instruction.
    Iterative post-order (a marker tuple rebuilds a node from the last
    lowered children)."""
    if getattr(node, "type", None) is None:
        raise LoweringError("expression was not typed")
    out: list[Instr] = []
    push_out = out.append
    stack: list[Any] = [node]
    pop = stack.pop
    push = stack.append
    while stack:
        n = pop()
        cls = n.__class__
        if cls is tuple:  # (node, number of children): its children are lowered
            n, k = n
            cls = n.__class__
            kids = tuple(out[-k:])
            del out[-k:]
            t = _desc(n.type)
            if cls is A.Compare:
                push_out(Binary(_CMP[n.op], t, kids[0], kids[1]))
            elif cls is A.And:
                push_out(Nary("and", t, kids))
            elif cls is A.Or:
                push_out(Nary("or", t, kids))
            elif cls is A.Not:
                push_out(Unary("not", t, kids[0]))
            elif cls is A.Call:
                op = _CALLS.get(n.name)
                if op is None:
                    raise LoweringError(f"unknown function {n.name}")
                push_out(Unary(op, t, kids[0]) if op == "length" else Binary(op, t, kids[0], kids[1]))
            elif all(x.__class__ is Lit for x in kids):  # ArrayLit of constants
                push_out(Lit(t, [x.value for x in kids]))  # type: ignore[union-attr]
            else:
                push_out(MakeArray(t, kids))
            continue
        if cls is A.Path:
            push_out(_ref(_desc(n.type), n.root, n.segments, leaves))
            continue
        if cls is A.Lit:
            push_out(_lit(n.value, _desc(n.type), leaves))
            continue
        if cls is A.Compare:
            kids = (n.left, n.right)
        elif cls is A.And or cls is A.Or:
            kids = n.operands
        elif cls is A.Not:
            kids = (n.operand,)
        elif cls is A.Call:
            kids = n.args
        elif cls is A.ArrayLit:
            kids = n.items
        else:
            raise LoweringError(f"unknown expression node {cls.__name__}")
        if not kids:  # an empty array literal or a call without arguments
            t = _desc(n.type)
            if cls is A.ArrayLit:
                push_out(Lit(t, []))
                continue
            if cls is A.Call and n.name not in _CALLS:
                raise LoweringError(f"unknown function {n.name}")
            raise LoweringError(f"{cls.__name__} without operands")
        push((n, len(kids)))
        stack.extend(reversed(kids))
    return out[0]


def _lower_template(tt: Any, leaves: _Leaves) -> Instr:
    ast = tt.ast
    if ast.is_single:
        return _lower_ast(ast.parts[0].expr, leaves)
    if ast.is_constant:
        return _lit("".join(p for p in ast.parts if isinstance(p, str)), _desc(tt.type), leaves)
    parts: list[Instr] = []
    for p in ast.parts:
        if isinstance(p, A.Interp):
            parts.append(_lower_ast(p.expr, leaves))
        else:
            parts.append(_lit(p, _STRING, leaves))
    return Template(_desc(tt.type), tuple(parts))


def lower_typed(typed: Any, leaves: dict[Any, Instr] | None = None) -> Instr:
    """Lower one typed form (``TypedLiteral``, typed ``Path``/expression AST,
    ``TypedTemplate``, ``TypedList``, ``TypedMap``) to a typed instruction
    (:data:`loopc.ir.model.Instr`).  ``leaves`` — a dict the caller keeps
    over one lowering: equal leaf instructions (references, scalar
    literals) are then one shared object (the model is frozen, so sharing
    is invisible).  Raises :class:`LoweringError` for anything else."""
    if leaves is None:
        leaves = {}
    cls = typed.__class__
    if cls is A.Path:  # most bindings are one reference: no walk
        t = typed.type
        if t is None:
            raise LoweringError("expression was not typed")
        return _ref(_desc(t), typed.root, typed.segments, leaves)
    if cls in _AST_CLASSES:
        return _lower_ast(typed, leaves)
    if cls is TC.TypedLiteral:
        return _lit(typed.value, _desc(typed.type), leaves)
    if cls is TC.TypedTemplate:
        return _lower_template(typed, leaves)
    if cls is TC.TypedList:
        items = [lower_typed(x, leaves) for x in typed.items]
        if all(i.__class__ is Lit for i in items):
            return Lit(_desc(typed.type), [i.value for i in items])  # type: ignore[union-attr]
        return MakeArray(_desc(typed.type), tuple(items))
    if cls is TC.TypedMap:
        fields = {k: lower_typed(x, leaves) for k, x in typed.entries}
        if all(i.__class__ is Lit for i in fields.values()):
            return Lit(_desc(typed.type), {k: i.value for k, i in fields.items()})  # type: ignore[union-attr]
        return _object(_desc(typed.type), fields)
    raise LoweringError(f"cannot lower {cls.__name__}")
