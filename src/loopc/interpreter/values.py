"""Run-time value checks against contracts (FieldSchemas of the artifact).

``check_contract(value, contract)`` → ``None`` or a one-line reason (the
engine's run-time check: the first mismatch); ``contract_problems(value,
contract)`` → every mismatch with its path and a did-you-mean for enum
values, field names and scope kinds (scenario input validation);
``apply_defaults(value, contract)`` fills absent fields from defaults.
Wire forms follow docs/reference.md#wire-forms (canonical ids, channels, scopes,
durations, datetimes).  Iterative over nested arrays and objects.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from loopc.ir.evaluator import EvaluationError, datetime_value
from loopc.limits import duration_problem

__all__ = ["check_contract", "check_value", "contract_problems", "apply_defaults", "is_id", "is_scope",
           "WORK_ITEM_KEYS", "close_match", "KEY"]

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
        elif t == "duration":  # the language's bounds (docs/language.md#bounds), not only the form
            ok = duration_problem(v) is None
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


#: Last element of a :func:`contract_problems` path that is about a key.
KEY = "\x00key"


def close_match(word: Any, options: Any) -> str | None:
    """The option ``word`` is probably a misspelling of, or ``None``."""
    import difflib

    if not isinstance(word, str) or not options:
        return None
    m = difflib.get_close_matches(word, [o for o in options if isinstance(o, str)], n=1, cutoff=0.75)
    return m[0] if m else None


def _hint(word: Any, options: Any) -> str:
    h = close_match(word, options)
    return f"; did you mean '{h}'?" if h else ""


def contract_problems(value: Any, contract: Mapping[str, Any], where: str = "input", *,
                      closed: bool = True) -> list[tuple[tuple[Any, ...], str]]:
    """Every mismatch of ``value`` (an object) against ``contract``, as
    ``(path, message)`` pairs: ``path`` the keys and indices from
    ``value`` down to the offending value (``()`` for ``value`` itself), in
    field order.  Unknown fields (``closed``), missing required fields,
    values of the wrong type; enum values, field names and scope kinds get
    a did-you-mean (a misspelt key that stands for a required field is one
    problem, not two).  A path ending in :data:`KEY` is about the key, not
    its value.  Never raises."""
    if not isinstance(value, dict):
        return [((), f"{where} must be an object")]
    out: list[tuple[tuple[Any, ...], str]] = []
    names = list(contract)
    meant: dict[str, None] = {}  # fields a misspelt key stands for: not also "required"
    if closed:
        for k in value:
            if k not in contract:
                h = close_match(k, [n for n in names if n not in value])
                if h is not None:
                    meant[h] = None
                out.append(((k, KEY), f"{where} has no field '{k}'"
                            + (f"; did you mean '{h}'?" if h else f" (fields: {', '.join(names) or 'none'})")))
    for k, f in contract.items():
        v = value.get(k)
        if v is None:
            if k in meant and k not in value:
                continue
            if f.required and not f.has_default:
                out.append(((k,), f"{where}.{k} is required"))
            continue
        stack: list[tuple[Any, Any, tuple[Any, ...]]] = [(v, f, (k,))]
        while stack:
            v, f, path = stack.pop()
            shown = where + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
            if f.type == "array" and isinstance(v, (list, tuple)) and f.items is not None:
                for i in range(len(v) - 1, -1, -1):
                    if v[i] is None:
                        if f.items.required:
                            out.append((path + (i,), f"{shown}[{i}] is null"))
                        continue
                    stack.append((v[i], f.items, path + (i,)))
                continue
            r = check_value(v, f, shown)
            if r is None:
                continue
            if f.type == "duration" and isinstance(v, str):
                r = f"{shown} '{v if len(v) <= 40 else v[:20] + '…'}' is not a duration: {duration_problem(v)}"
            elif f.type == "enum" and isinstance(v, str):
                r = f"{shown} is '{v}', not one of: {', '.join(f.values or ())}" + _hint(v, f.values)
            elif f.type == "scope" and isinstance(v, dict) and isinstance(v.get("kind"), str) \
                    and v["kind"] not in _SCOPE_KINDS:
                r = f"{shown}.kind '{v['kind']}' is not a scope kind ({', '.join(_SCOPE_KINDS)})" \
                    + _hint(v["kind"], _SCOPE_KINDS)
                path = path + ("kind",)
            out.append((path, r))
    return out


def apply_defaults(value: Mapping[str, Any], contract: Mapping[str, Any]) -> dict[str, Any]:
    """A new dict: ``value``'s non-null fields plus defaults of the absent ones."""
    out = {k: v for k, v in value.items() if v is not None}
    for k, f in contract.items():
        if k not in out and f.has_default:
            out[k] = f.default
    return out
