"""Run-time value checks against contracts (FieldSchemas of the artifact).

``check_contract(value, contract)`` → ``None`` or a one-line reason;
``apply_defaults(value, contract)`` fills absent fields from defaults.
Wire forms follow docs/reference.md#wire-forms (canonical ids, channels, scopes,
durations, datetimes).  Iterative over nested arrays and objects.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from loopc.ir.evaluator import EvaluationError, datetime_value, duration_value

__all__ = ["check_contract", "check_value", "apply_defaults", "is_id", "is_scope", "WORK_ITEM_KEYS"]

_ID = re.compile(r"[a-z][a-z0-9]*_[A-Za-z0-9_-]+\Z")
_CHANNEL = re.compile(r"#[a-z0-9][a-z0-9_-]*\Z")
_SCOPE_KINDS = ("channel", "thread", "dm", "task")
WORK_ITEM_KEYS = ("key", "dependsOn", "workScope", "relatedScopes", "responder", "instruction")


def is_id(v: Any) -> bool:
    return isinstance(v, str) and len(v.encode("utf-8")) <= 256 and _ID.match(v) is not None


def is_scope(v: Any) -> bool:
    return (isinstance(v, dict) and sorted(v) == ["kind", "scopeId"]
            and v["kind"] in _SCOPE_KINDS and is_id(v["scopeId"]))


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_value(v: Any, f: Any, where: str) -> str | None:
    """``f`` a :class:`loopc.ir.model.FieldView`-like (``type``, ``values``,
    ``items``)."""
    stack = [(v, f, where)]
    while stack:
        v, f, where = stack.pop()
        t = f.type
        ok = True
        if t in ("string",):
            ok = isinstance(v, str)
        elif t == "enum":
            ok = isinstance(v, str) and v in (f.values or ())
        elif t == "number":
            ok = _num(v)
        elif t == "boolean":
            ok = isinstance(v, bool)
        elif t == "duration":
            try:
                duration_value(v)
            except EvaluationError:
                ok = False
        elif t == "datetime":
            try:
                datetime_value(v)
            except EvaluationError:
                ok = False
        elif t == "object":
            ok = isinstance(v, dict)
        elif t == "array":
            ok = isinstance(v, (list, tuple))
            if ok and f.items is not None:
                for i in range(len(v) - 1, -1, -1):
                    if v[i] is None:
                        if f.items.required:
                            return f"{where}[{i}] is null"
                        continue
                    stack.append((v[i], f.items, f"{where}[{i}]"))
        elif t == "scope":
            ok = is_scope(v)
        elif t == "channel":
            ok = isinstance(v, str) and _CHANNEL.match(v) is not None
        elif t in ("member", "agent"):
            ok = is_id(v)
        elif t == "responder":
            ok = is_id(v) or (isinstance(v, dict) and list(v) == ["selectOne"]
                              and isinstance(v["selectOne"], list) and len(v["selectOne"]) > 0
                              and all(is_id(a) for a in v["selectOne"]))
        elif t == "work_items":
            ok = isinstance(v, (list, tuple))
        if not ok:
            return f"{where} is not a valid {t}"
    return None


def check_contract(value: Any, contract: Mapping[str, Any], where: str, *, closed: bool = True) -> str | None:
    """``None`` when ``value`` (an object) satisfies ``contract``
    (``{name: FieldView}``); else a reason.  ``closed`` rejects fields the
    contract does not declare."""
    if not isinstance(value, dict):
        return f"{where} must be an object"
    if closed:
        for k in sorted(value):
            if k not in contract:
                return f"{where} has no field '{k}'"
    for k, f in contract.items():
        v = value.get(k)
        if v is None:
            if f.required and not f.has_default:
                return f"{where}.{k} is required"
            continue
        r = check_value(v, f, f"{where}.{k}")
        if r:
            return r
    return None


def apply_defaults(value: Mapping[str, Any], contract: Mapping[str, Any]) -> dict[str, Any]:
    """A new dict: ``value``'s non-null fields plus defaults of the absent ones."""
    out = {k: v for k, v in value.items() if v is not None}
    for k, f in contract.items():
        if k not in out and f.has_default:
            out[k] = f.default
    return out
