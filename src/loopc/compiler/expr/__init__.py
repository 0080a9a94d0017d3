"""The bounded expression and template language (docs/reference.md#expressions,
docs/reference.md#templates).

Public API:

* :func:`parse_expression`, :func:`parse_template`, :func:`parse_path` —
  text → AST (:mod:`loopc.compiler.expr.ast`) plus :class:`ExprError` list;
* :func:`check_expression`, :func:`check_template`, :func:`check_path` —
  parse and type-check against an :class:`ExprContext` (the roots legal at
  that location and their types), optionally against an expected type;
  return a :class:`Checked` / :class:`CheckedTemplate` with the typed AST;
* :class:`ExprError` — ``(code, message, start, end)``, offsets relative to
  the expression/template text; map them to source with
  :func:`loopc.compiler.scalarpos.value_span`.

Codes are the LP30xx–LP31xx family (:mod:`loopc.codes.types`).
"""
from __future__ import annotations

from loopc.compiler.expr.checker import (
    Checked,
    CheckedTemplate,
    ContextError,
    ExprContext,
    check_ast,
    check_expression,
    check_path,
    check_template,
    check_template_ast,
)
from loopc.compiler.expr.parser import (
    MAX_EXPR_BYTES,
    MAX_NESTING,
    MAX_TEMPLATE_BYTES,
    ExprError,
    parse_expression,
    parse_path,
    parse_template,
)

__all__ = [
    "Checked", "CheckedTemplate", "ContextError", "ExprContext", "ExprError",
    "MAX_EXPR_BYTES", "MAX_NESTING", "MAX_TEMPLATE_BYTES",
    "check_ast", "check_expression", "check_path", "check_template", "check_template_ast",
    "parse_expression", "parse_path", "parse_template",
]
