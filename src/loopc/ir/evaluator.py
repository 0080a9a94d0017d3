"""Evaluator for compiled instruction trees (docs/ir.md#evaluation).  The
reference interpreter uses it; docs/ir.md#evaluation is the definition other
runtimes implement.

``evaluate(instr, env)`` — ``instr`` a typed instruction tree
(:data:`loopc.ir.model.Instr`, as :func:`loopc.ir.decode` yields it) or its
wire form ``[op, type, operands...]``; ``env`` maps reference roots to
values::

    {"run.input": {...}, "run.state": {...}, "input": {...}, "output": {...},
     "branches": {key: {...}}, "winner": {"key": k, "value": {...}},
     "item": {...}, "items": [...], "loop": {"iteration": n, "state": {...}}}

The semantics are normative in docs/ir.md#evaluation (values, absent and
null, equality and ordering for every pair of kinds, strings by code point,
durations and datetimes, the text form of rendered values, every error
message); tests/test_ir_evaluation_doc.py executes every example of its
tables against this module.

Evaluation is iterative (an explicit stack), so tree depth is not limited by
Python recursion.
"""
from __future__ import annotations

import datetime as _dt
import re
from decimal import MAX_EMAX, Decimal, localcontext
from typing import Any, Mapping

from loopc.ir.model import (
    INSTR_CLASSES, Binary, Instr, InstrShapeError, Lit, MakeArray, MakeObject, Nary, Ref, Template, TypeDesc,
    Unary, instr_from_json,
)

__all__ = ["EvaluationError", "evaluate", "render"]


class EvaluationError(Exception):
    """A run-time evaluation failure (missing root, wrong value shape)."""


_DUR = re.compile(r"P(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+(?:\.[0-9]+)?)S)?)?\Z")
_DT = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})\Z")


def _show(v: Any) -> str:
    """A value in an error message: its RFC 8785 JSON text (``"PT1X"``, ``5``)."""
    from loopc.ir.canonical import canonical_text

    try:
        return canonical_text(v)
    except Exception:  # noqa: BLE001 - a value RFC 8785 cannot print (out-of-range number)
        return _kind(v)


def duration_value(s: Any) -> Decimal:
    """Exact length in seconds of an ISO 8601 duration ``P[nD][T[nH][nM][nS]]``
    (a day is 86,400 s); :class:`EvaluationError` ``<value> is not a duration``."""
    m = _DUR.match(s) if isinstance(s, str) else None
    if not m or not any(m.groups()) or s.endswith("T"):
        raise EvaluationError(f"{_show(s)} is not a duration")
    d, h, mi, sec = m.groups()
    # exact at any digit count (no int() conversion limit, no rounding)
    with localcontext() as ctx:
        ctx.prec = len(s) + 16
        ctx.Emax = MAX_EMAX
        return (Decimal(d or 0) * 86400 + Decimal(h or 0) * 3600 + Decimal(mi or 0) * 60
                + Decimal(sec or 0))


def datetime_value(s: Any) -> tuple[Decimal, ...]:
    """Comparable instant of an RFC 3339 datetime (UTC seconds, exact):
    local time minus the offset; second ``60`` (a leap second) is the
    instant one second after second 59, i.e. the next minute's second 0.
    :class:`EvaluationError` ``<value> is not an RFC 3339 datetime`` for a
    wrong shape, a calendar date that does not exist, hour > 23, minute
    > 59, second > 60, or an offset hour > 23 / minute > 59."""
    m = _DT.match(s) if isinstance(s, str) else None
    bad = EvaluationError(f"{_show(s)} is not an RFC 3339 datetime")
    if not m:
        raise bad
    y, mo, d, h, mi, sec, frac, off = m.groups()
    if int(sec) > 60:
        raise bad
    try:
        base = _dt.datetime(int(y), int(mo), int(d), int(h), int(mi), min(int(sec), 59), tzinfo=_dt.timezone.utc)
    except ValueError:
        raise bad from None
    offset = 0
    if off not in ("Z", "z"):
        if int(off[1:3]) > 23 or int(off[4:6]) > 59:
            raise bad
        sign = 1 if off[0] == "+" else -1
        offset = sign * (int(off[1:3]) * 3600 + int(off[4:6]) * 60)
    secs = Decimal(int(base.timestamp()) - offset) + (1 if int(sec) == 60 else 0) + Decimal("0" + (frac or ""))
    return (secs,)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _domain(types: tuple[TypeDesc, ...]) -> str:
    for t in types:
        if t.depth == 0 and t.kind in ("duration", "datetime"):
            return t.kind
    return "json"


def _key(v: Any, dom: str) -> Any:
    if v is None:
        return None
    if dom == "duration":
        return ("d", duration_value(v))
    if dom == "datetime":
        return ("t", datetime_value(v))
    return v


def _equal(a: Any, b: Any, dom: str) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if dom != "json":
        return _key(a, dom) == _key(b, dom)
    return _json_equal(a, b)


def _json_equal(a: Any, b: Any) -> bool:
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, bool) or isinstance(y, bool):
            if not (isinstance(x, bool) and isinstance(y, bool) and x == y):
                return False
        elif _is_num(x) or _is_num(y):
            if not (_is_num(x) and _is_num(y) and x == y):
                return False
        elif isinstance(x, str) or isinstance(y, str):
            if x != y:
                return False
        elif x is None or y is None:
            if not (x is None and y is None):
                return False
        elif isinstance(x, Mapping) and isinstance(y, Mapping):
            if set(x) != set(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        else:
            return False
    return True


def _order(op: str, a: Any, b: Any, dom: str) -> bool:
    if a is None or b is None:
        return False
    ka, kb = _key(a, dom), _key(b, dom)
    if dom == "json":
        if _is_num(a) and _is_num(b) or isinstance(a, str) and isinstance(b, str):
            pass
        else:
            raise EvaluationError(f"cannot order {_kind(a)} and {_kind(b)}")
    if op == "lt":
        return ka < kb
    if op == "le":
        return ka <= kb
    if op == "gt":
        return ka > kb
    return ka >= kb


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if _is_num(v):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "array"
    return "object"


def _truth(v: Any) -> bool:
    if v is None:
        return False
    if isinstance(v, bool):
        return v
    raise EvaluationError(f"expected a boolean, found {_kind(v)}")


def render(v: Any) -> str:
    """The text form of one value (docs/ir.md#rendering-values-as-text): a
    string as is, ``true``/``false``, ``null`` (also for an absent value),
    numbers and every other value as their RFC 8785 JSON text (numbers in
    ECMAScript ``Number::toString`` form).  :class:`EvaluationError` for a
    value RFC 8785 cannot print (a number outside the double range)."""
    if isinstance(v, str):
        return v
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    from loopc.ir.canonical import CanonicalizationError, canonical_text

    try:
        return canonical_text(v)
    except CanonicalizationError as exc:
        raise EvaluationError(f"cannot render {_kind(v)} as text: {exc}") from None


def _resolve(root: str, path: Any, env: Mapping[str, Any]) -> Any:
    if root not in env:
        raise EvaluationError(f"reference root '{root}' is not available here")
    cur = env[root]
    for seg in path:
        if cur is None:
            return None
        if isinstance(cur, Mapping):
            cur = cur.get(seg)
        else:
            raise EvaluationError(f"cannot read '{seg}' of {_kind(cur)} in {root}.{'.'.join(path)}")
    return cur


def _apply(instr: Any, vals: list[Any]) -> Any:
    cls = instr.__class__
    if cls is MakeArray:
        return vals
    if cls is MakeObject:
        return dict(zip(instr.keys, vals))
    if cls is Template:
        return "".join(render(v) for v in vals)
    op = instr.op
    if cls is Binary:
        a, b = vals
        ta = instr.left.type
        tb = instr.right.type
        if op in ("eq", "ne"):
            r = _equal(a, b, _domain((ta, tb)))
            return r if op == "eq" else not r
        if op == "in":
            if b is None:
                return False
            if not isinstance(b, (list, tuple)):
                raise EvaluationError(f"'in' needs an array on the right, found {_kind(b)}")
            dom = _domain((ta, tb.element))
            return any(_equal(a, x, dom) for x in b)
        if op == "contains":
            if a is None:
                return False
            if isinstance(a, str):
                if b is None:
                    return False
                if not isinstance(b, str):
                    raise EvaluationError(f"contains(string, x) needs a string x, found {_kind(b)}")
                return b in a
            if isinstance(a, (list, tuple)):
                dom = _domain((ta.element, tb))
                return any(_equal(x, b, dom) for x in a)
            raise EvaluationError(f"contains needs a string or an array, found {_kind(a)}")
        if op in ("startsWith", "endsWith"):
            if a is None or b is None:
                return False
            if not isinstance(a, str) or not isinstance(b, str):
                raise EvaluationError(f"{op} needs two strings, found {_kind(a)} and {_kind(b)}")
            return a.startswith(b) if op == "startsWith" else a.endswith(b)
        return _order(op, a, b, _domain((ta, tb)))
    if cls is Unary:
        (a,) = vals
        if op == "length":
            if isinstance(a, (str, list, tuple)):
                return len(a)
            if a is None:
                return 0
            raise EvaluationError(f"length needs a string or an array, found {_kind(a)}")
        return not _truth(a)
    raise EvaluationError(f"unknown instruction '{op}'")


def evaluate(instr: Instr | list[Any], env: Mapping[str, Any]) -> Any:
    """Evaluate an instruction tree in ``env`` (see module docstring).

    ``instr`` is a typed :data:`loopc.ir.model.Instr` (what
    :func:`loopc.ir.decode` yields) or its wire JSON form ``[op, type,
    ...]``.  Raises :class:`EvaluationError` — and nothing else — on
    run-time failures and on a malformed wire instruction."""
    try:
        return _evaluate(instr, env)
    except EvaluationError:
        raise
    except RecursionError as exc:  # pragma: no cover - evaluation is iterative
        raise EvaluationError("evaluation nested too deeply") from exc
    except Exception as exc:  # noqa: BLE001 - the evaluator raises only its own error
        raise EvaluationError(f"cannot evaluate: {type(exc).__name__}: {exc}") from exc


def _evaluate(instr: Any, env: Mapping[str, Any]) -> Any:
    if isinstance(instr, list):
        try:
            instr = instr_from_json(instr)
        except InstrShapeError as exc:
            raise EvaluationError(f"not an instruction at {exc.pointer or '/'}: {exc.message}") from None
    elif not isinstance(instr, INSTR_CLASSES):
        raise EvaluationError(f"not an instruction: {type(instr).__name__}")
    result: Any = None
    # Frames: [instr, children, next child index, collected values]
    stack: list[list[Any]] = []

    def push(i: Any) -> tuple[bool, Any]:
        cls = i.__class__
        if cls is Lit:
            return True, i.value
        if cls is Ref:
            return True, _resolve(i.root, i.path, env)
        stack.append([i, i.children, 0, []])
        return False, None

    done, result = push(instr)
    while stack:
        frame = stack[-1]
        i, kids, k, vals = frame
        logic = i.__class__ is Nary
        if done:
            vals.append(result)
            done = False
            if logic:
                t = _truth(result)
                if (i.op == "and" and not t) or (i.op == "or" and t):
                    stack.pop()
                    done, result = True, t
                    continue
        if k < len(kids):
            frame[2] = k + 1
            done, result = push(kids[k])
            continue
        stack.pop()
        if logic:
            result = i.op == "and"
        else:
            result = _apply(i, vals)
        done = True
    return result
