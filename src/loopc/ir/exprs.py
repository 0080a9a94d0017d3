"""Lowering of typed expressions, templates and value forms to instruction
trees (seed 004 §5 pass 13; format in :mod:`loopc.ir.instr`, docs/ir.md
§Instructions).

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
from loopc.ir.instr import LoweringError, _object, lit, ref_instr, type_desc

__all__ = ["lower_typed"]

_CMP = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "in": "in"}
_CALLS = {"contains": "contains", "startsWith": "startsWith", "endsWith": "endsWith", "length": "length"}
_AST_CLASSES = (A.Lit, A.Path, A.Not, A.And, A.Or, A.Compare, A.Call, A.ArrayLit)


def _lower_ast(node: Any) -> list[Any]:
    """Typed expression AST (:mod:`loopc.compiler.expr.ast`) → instruction."""
    def fn(n: Any, kids: tuple[list[Any], ...]) -> list[Any]:
        cls = n.__class__
        t = type_desc(n.type)
        if cls is A.Lit:
            return lit(n.value, t)
        if cls is A.Path:
            return ref_instr(n.root, n.segments, t)
        if cls is A.Not:
            return ["not", t, *kids]
        if cls is A.And:
            return ["and", t, *kids]
        if cls is A.Or:
            return ["or", t, *kids]
        if cls is A.Compare:
            return [_CMP[n.op], t, *kids]
        if cls is A.Call:
            op = _CALLS.get(n.name)
            if op is None:
                raise LoweringError(f"unknown function {n.name}")
            return [op, t, *kids]
        if cls is A.ArrayLit:
            if all(k[0] == "lit" for k in kids):
                return ["lit", t, [k[2] for k in kids]]
            return ["array", t, *kids]
        raise LoweringError(f"unknown expression node {cls.__name__}")

    if getattr(node, "type", None) is None:
        raise LoweringError("expression was not typed")
    return A.map_postorder(node, fn)


def _lower_template(tt: Any) -> list[Any]:
    ast = tt.ast
    if ast.is_single:
        return _lower_ast(ast.parts[0].expr)
    if ast.is_constant:
        return lit("".join(p for p in ast.parts if isinstance(p, str)), tt.type)
    out: list[Any] = ["template", type_desc(tt.type)]
    for p in ast.parts:
        if isinstance(p, A.Interp):
            out.append(_lower_ast(p.expr))
        else:
            out.append(lit(p, "string"))
    return out


def lower_typed(typed: Any) -> list[Any]:
    """Lower one typed form (``TypedLiteral``, typed ``Path``/expression AST,
    ``TypedTemplate``, ``TypedList``, ``TypedMap``) to an instruction.
    Raises :class:`LoweringError` for anything else."""
    cls = typed.__class__
    if cls is TC.TypedLiteral:
        return lit(typed.value, typed.type)
    if cls is TC.TypedTemplate:
        return _lower_template(typed)
    if cls is TC.TypedList:
        items = [lower_typed(x) for x in typed.items]
        if all(i[0] == "lit" for i in items):
            return ["lit", type_desc(typed.type), [i[2] for i in items]]
        return ["array", type_desc(typed.type), *items]
    if cls is TC.TypedMap:
        fields = {k: lower_typed(x) for k, x in typed.entries}
        if all(i[0] == "lit" for i in fields.values()):
            return ["lit", type_desc(typed.type), {k: i[2] for k, i in fields.items()}]
        return _object(type_desc(typed.type), fields)
    if cls in _AST_CLASSES:
        return _lower_ast(typed)
    raise LoweringError(f"cannot lower {cls.__name__}")
