"""Lowering of typed expressions, templates and value forms to instruction
trees (pass 13; format in :mod:`loopc.ir.instr`, docs/ir.md#instructions).

Input: the type pass's typed forms (:mod:`loopc.compiler.typecheck`:
``TypedLiteral``, ``TypedTemplate``, ``TypedList``, ``TypedMap`` and typed
expression ASTs of :mod:`loopc.compiler.expr.ast`).  Constant constructors
fold into one ``lit``; a template that is exactly one ``{{ expr }}`` lowers
to ``expr``; expression ASTs are walked without recursion
(:func:`~loopc.compiler.expr.ast.map_postorder`).
"""
from __future__ import annotations

from typing import Any

from loopc.compiler import typecheck as TC
from loopc.compiler.expr import ast as A
from loopc.ir.instr import LoweringError, normalize_json, type_desc
from loopc.ir.model import (
    Binary, Instr, Lit, MakeArray, MakeObject, Nary, Ref, Template, TypeDesc, Unary, parse_type_desc,
)

__all__ = ["lower_typed"]

_CMP = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "in": "in"}
_CALLS = {"contains": "contains", "startsWith": "startsWith", "endsWith": "endsWith", "length": "length"}
_AST_CLASSES = (A.Lit, A.Path, A.Not, A.And, A.Or, A.Compare, A.Call, A.ArrayLit)
_STRING = parse_type_desc("string")


def _desc(t: Any) -> TypeDesc:
    return parse_type_desc(type_desc(t))


def _lit(value: Any, t: TypeDesc) -> Lit:
    return Lit(t, normalize_json(value))


def _object(t: TypeDesc, fields: dict[str, Instr]) -> MakeObject:
    keys = sorted(fields, key=lambda k: k.encode("utf-16-be"))
    return MakeObject(t, tuple(keys), tuple(fields[k] for k in keys))


def _lower_ast(node: Any) -> Instr:
    """Typed expression AST (:mod:`loopc.compiler.expr.ast`) → instruction."""
    def fn(n: Any, kids: tuple[Instr, ...]) -> Instr:
        cls = n.__class__
        t = _desc(n.type)
        if cls is A.Lit:
            return _lit(n.value, t)
        if cls is A.Path:
            return Ref(t, n.root, tuple(n.segments))
        if cls is A.Not:
            return Unary("not", t, kids[0])
        if cls is A.And:
            return Nary("and", t, kids)
        if cls is A.Or:
            return Nary("or", t, kids)
        if cls is A.Compare:
            return Binary(_CMP[n.op], t, kids[0], kids[1])
        if cls is A.Call:
            op = _CALLS.get(n.name)
            if op is None:
                raise LoweringError(f"unknown function {n.name}")
            if op == "length":
                return Unary(op, t, kids[0])
            return Binary(op, t, kids[0], kids[1])
        if cls is A.ArrayLit:
            if all(k.__class__ is Lit for k in kids):
                return Lit(t, [k.value for k in kids])  # type: ignore[union-attr]
            return MakeArray(t, tuple(kids))
        raise LoweringError(f"unknown expression node {cls.__name__}")

    if getattr(node, "type", None) is None:
        raise LoweringError("expression was not typed")
    return A.map_postorder(node, fn)  # type: ignore[no-any-return]


def _lower_template(tt: Any) -> Instr:
    ast = tt.ast
    if ast.is_single:
        return _lower_ast(ast.parts[0].expr)
    if ast.is_constant:
        return _lit("".join(p for p in ast.parts if isinstance(p, str)), _desc(tt.type))
    parts: list[Instr] = []
    for p in ast.parts:
        if isinstance(p, A.Interp):
            parts.append(_lower_ast(p.expr))
        else:
            parts.append(_lit(p, _STRING))
    return Template(_desc(tt.type), tuple(parts))


def lower_typed(typed: Any) -> Instr:
    """Lower one typed form (``TypedLiteral``, typed ``Path``/expression AST,
    ``TypedTemplate``, ``TypedList``, ``TypedMap``) to a typed instruction
    (:data:`loopc.ir.model.Instr`).  Raises :class:`LoweringError` for
    anything else."""
    cls = typed.__class__
    if cls is TC.TypedLiteral:
        return _lit(typed.value, _desc(typed.type))
    if cls is TC.TypedTemplate:
        return _lower_template(typed)
    if cls is TC.TypedList:
        items = [lower_typed(x) for x in typed.items]
        if all(i.__class__ is Lit for i in items):
            return Lit(_desc(typed.type), [i.value for i in items])  # type: ignore[union-attr]
        return MakeArray(_desc(typed.type), tuple(items))
    if cls is TC.TypedMap:
        fields = {k: lower_typed(x) for k, x in typed.entries}
        if all(i.__class__ is Lit for i in fields.values()):
            return Lit(_desc(typed.type), {k: i.value for k, i in fields.items()})  # type: ignore[union-attr]
        return _object(_desc(typed.type), fields)
    if cls in _AST_CLASSES:
        return _lower_ast(typed)
    raise LoweringError(f"cannot lower {cls.__name__}")
