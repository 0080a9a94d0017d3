"""Completion's key tables, derived from the declarations
(docs/architecture.md#add-an-editor-feature): the node-kind registry's
:class:`~loopc.kinds.base.SourceField` declarations (:mod:`loopc.kinds`) and
the source JSON Schema built from them and from the plan-level shapes
(:func:`loopc.ir.source_schema.source_schema`: FieldSchema, Retry, Edge).
A new field of a kind lands in these tables without an edit here.

Each function returns a frozenset, derived once per registry state
(:func:`loopc.kinds.tables`; a registry amended with
:func:`loopc.kinds.amended` derives anew):

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
from typing import Any, Callable, Iterable, Iterator, Mapping, TypeVar, cast

from loopc import kinds
from loopc.kinds.base import DURATION, S_EXPRESSION

#: the ValueExpr key whose value is a bare expression (``{expr: "..."}``,
#: docs/reference.md#values); not a kind's field
VALUE_EXPR_KEY = "expr"

T = TypeVar("T")


_memo: dict[str, tuple[Any, Any]] = {}


def _per_registry(fn: Callable[[], T]) -> Callable[[], T]:
    """Memoise ``fn`` for the registry state it was computed from."""

    @functools.wraps(fn)
    def wrapper() -> T:
        t = kinds.tables()
        hit = _memo.get(fn.__name__)
        if hit is None or hit[0] is not t:
            hit = _memo[fn.__name__] = (t, fn())
        return cast(T, hit[1])

    return wrapper


def _kinds() -> Iterable[Any]:
    return kinds.tables().kinds.values()


@_per_registry
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


@_per_registry
def bool_keys() -> frozenset[str]:
    """Keys with a boolean schema (``required`` of a FieldSchema,
    ``sendMessage.startThread``, …)."""
    return frozenset(k for _p, k, s in _walk(_schema()) if s.get("type") == "boolean")


@_per_registry
def duration_keys() -> frozenset[tuple[str, str]]:
    """``(config key, key)`` of every kind field typed ``duration`` (a
    ValueExpr checked as a duration) and ``(parent, key)`` of every literal
    with the duration pattern (``retry.backoff``)."""
    out = {(k.config_key, n) for k in _kinds() for n, f in k.source.items() if f.type == "duration"}
    out |= {(p, k) for p, k, s in _walk(_schema()) if s.get("pattern") == DURATION}
    return frozenset(out)


@_per_registry
def contract_keys() -> frozenset[str]:
    """Keys whose schema is a Contract (the plan's and a node's ``input``,
    ``output``, ``state``; kind fields of form ``contract``)."""
    out = {n for k in _kinds() for n, f in k.source.items() if f.form == "contract"}
    out |= {k for _p, k, s in _walk(_schema()) if _is_contract(s)}
    return frozenset(out)


@_per_registry
def expr_keys() -> frozenset[str]:
    """Keys holding a bare expression: kind fields of form ``expression``,
    keys declared with the expression schema inside a kind's structure
    (``switch.cases[].when``), and :data:`VALUE_EXPR_KEY`."""
    out = {n for k in _kinds() for n, f in k.source.items() if f.form == "expression"}
    for k in _kinds():
        for f in k.source.values():
            out |= {key for _p, key, s in _walk(f.schema) if dict(s) == S_EXPRESSION}
    out.add(VALUE_EXPR_KEY)
    return frozenset(out)
