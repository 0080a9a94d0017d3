"""Completion's key tables, derived from the declarations
(docs/architecture.md#add-an-editor-feature): the node-kind registry's
:class:`~loopc.kinds.base.SourceField` declarations (:mod:`loopc.kinds`) and
the source JSON Schema built from them and from the plan-level shapes
(:func:`loopc.ir.source_schema.source_schema`: FieldSchema, Retry, Edge).
A new field of a kind lands in these tables without an edit here.

Each function is computed once (cached) and returns a frozenset:

* :func:`bool_keys` — keys whose value is ``true``/``false``;
* :func:`duration_keys` — ``(mapping key, key)`` pairs whose value is an
  ISO 8601 duration;
* :func:`contract_keys` — keys whose value is a contract (field name →
  FieldSchema);
* :func:`expr_keys` — keys whose value is a bare expression (plus the
  ValueExpr's own ``expr`` key).
"""

from __future__ import annotations

import functools
from typing import Any, Iterator, Mapping

from loopc import kinds
from loopc.kinds.base import DURATION, S_EXPRESSION

#: the ValueExpr key whose value is a bare expression (``{expr: "..."}``,
#: docs/reference.md#values); not a kind's field
VALUE_EXPR_KEY = "expr"


@functools.cache
def _schema() -> Mapping[str, Any]:
    from loopc.ir.source_schema import source_schema

    return source_schema()


def _walk(schema: Any, parent: str = "") -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """(parent key, key, value schema) of every ``properties`` entry under
    ``schema`` (through items, alternatives, conditionals and definitions)."""
    stack: list[tuple[str, Any]] = [(parent, schema)]
    while stack:
        par, s = stack.pop()
        if isinstance(s, list):
            stack.extend((par, x) for x in s)
            continue
        if not isinstance(s, Mapping):
            continue
        for key, sub in (s.get("properties") or {}).items():
            if isinstance(sub, Mapping):
                yield par, key, sub
                stack.append((key, sub))
        for k in ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "then", "else"):
            if k in s:
                stack.append((par, s[k]))
        for sub in (s.get("definitions") or {}).values():
            stack.append(("", sub))


def _is_contract(s: Mapping[str, Any]) -> bool:
    return s.get("$ref") == "#/definitions/Contract"


@functools.cache
def bool_keys() -> frozenset[str]:
    """Keys with a boolean schema (``required`` of a FieldSchema,
    ``sendMessage.startThread``, …)."""
    return frozenset(k for _p, k, s in _walk(_schema()) if s.get("type") == "boolean")


@functools.cache
def duration_keys() -> frozenset[tuple[str, str]]:
    """``(config key, key)`` of every kind field typed ``duration`` (a
    ValueExpr checked as a duration) and ``(parent, key)`` of every literal
    with the duration pattern (``retry.backoff``)."""
    out = {(k.config_key, n) for k in kinds.KINDS.values() for n, f in k.source.items() if f.type == "duration"}
    out |= {(p, k) for p, k, s in _walk(_schema()) if s.get("pattern") == DURATION}
    return frozenset(out)


@functools.cache
def contract_keys() -> frozenset[str]:
    """Keys whose schema is a Contract (the plan's and a node's ``input``,
    ``output``, ``state``; kind fields of form ``contract``)."""
    out = {n for k in kinds.KINDS.values() for n, f in k.source.items() if f.form == "contract"}
    out |= {k for _p, k, s in _walk(_schema()) if _is_contract(s)}
    return frozenset(out)


@functools.cache
def expr_keys() -> frozenset[str]:
    """Keys holding a bare expression: kind fields of form ``expression``,
    keys declared with the expression schema inside a kind's structure
    (``switch.cases[].when``), and :data:`VALUE_EXPR_KEY`."""
    out = {n for k in kinds.KINDS.values() for n, f in k.source.items() if f.form == "expression"}
    for k in kinds.KINDS.values():
        for f in k.source.values():
            out |= {key for _p, key, s in _walk(f.schema) if dict(s) == S_EXPRESSION}
    out.add(VALUE_EXPR_KEY)
    return frozenset(out)
