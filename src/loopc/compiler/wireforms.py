"""Wire forms of the ``loop.plan/v1`` value types (docs/reference.md#types,
docs/reference.md#wire-forms).

Pure predicates over plain Python data (the ``to_data()`` form of YAML
values), shared by the schema pass (FieldSchema defaults), the type pass
(string literals taking the expected type) and lowering/IR validation:

* canonical ids ``^[a-z][a-z0-9]*_[A-Za-z0-9_-]+$``, at most 256 UTF-8 bytes
  (``member``/``agent`` values, ``scopeId``);
* ``channel`` ``#[a-z0-9][a-z0-9_-]*``;
* ``duration`` ISO 8601 ``P[nD][T[nH][nM][n[.f]S]]`` (no years, months or
  weeks; at least one component);
* ``datetime`` RFC 3339 with an offset (calendar-checked);
* ``scope`` exactly ``{kind: channel|thread|dm|task, scopeId: <canonical id>}``;
* ``number`` a JSON number: integers within ±(2^53−1), finite decimals,
  booleans are not numbers;
* message ``target`` strings ``#slug``, ``dm:@handle``, ``task:<id>``,
  ``team:@handle``.

:func:`conform` checks a value against a :class:`FieldSchema` without any
coercion (a quoted ``"5"`` is not a number) and says why it does not fit.
"""
from __future__ import annotations

import math
import re
from typing import Any

from loopc import lazyre
from loopc import limits as _limits
from loopc.compiler.spelling import not_an_enum_value
from loopc.diagnostics import value_text

MAX_SAFE_INTEGER = _limits.MAX_SAFE_INTEGER
SCOPE_KINDS = ("channel", "thread", "dm", "task")

CANONICAL_ID_RE = lazyre.compile(r"[a-z][a-z0-9]*_[A-Za-z0-9_-]+\Z")
CHANNEL_RE = lazyre.compile(r"#[a-z0-9][a-z0-9_-]*\Z")
DURATION_RE = _limits.DURATION_RE
DATETIME_RE = lazyre.compile(
    r"(?P<Y>[0-9]{4})-(?P<M>[0-9]{2})-(?P<D>[0-9]{2})[Tt]"
    r"(?P<h>[0-9]{2}):(?P<m>[0-9]{2}):(?P<s>[0-9]{2})(?:\.[0-9]+)?"
    r"(?:[Zz]|[+-](?P<oh>[0-9]{2}):(?P<om>[0-9]{2}))\Z"
)
HANDLE_RE = lazyre.compile(r"@[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
#: Identifiers an author declares (docs/reference.md#identifiers).
IDENT_RE = re.compile(r"[a-z][a-z0-9_]{0,63}\Z")
#: Failed End codes (docs/reference.md#node-end).
ERROR_CODE_RE = lazyre.compile(r"[a-z][a-z0-9_.]{0,63}\Z")

_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_identifier(s: Any) -> bool:
    """``^[a-z][a-z0-9_]{0,63}$`` (node/edge ids, ports, branch keys, field names)."""
    return s.__class__ is str and IDENT_RE.match(s) is not None


def is_canonical_id(s: Any) -> bool:
    """A canonical id string (``agt_backend``, ``tsk_api``), ≤ 256 UTF-8 bytes."""
    return (
        s.__class__ is str
        and CANONICAL_ID_RE.match(s) is not None
        and len(s.encode("utf-8")) <= 256
    )


def is_channel(s: Any) -> bool:
    """A ``#slug`` channel string."""
    return s.__class__ is str and CHANNEL_RE.match(s) is not None


def is_duration(s: Any) -> bool:
    """An ISO 8601 duration ``P[nD][T[nH][nM][n[.f]S]]`` with ≥ 1 component,
    within the bounds of :mod:`loopc.limits` (at most 3,650 days)."""
    return _limits.is_duration(s)


def duration_seconds(s: str) -> float | None:
    """Seconds in a duration wire form, or ``None`` if ``s`` is not one."""
    return _limits.duration_seconds(s)


def duration_error(s: Any) -> str:
    """Message fragment saying why ``s`` is not an accepted duration (the
    bound it breaks, when it is otherwise well-formed)."""
    why = _limits.duration_problem(s) if s.__class__ is str else None
    if why is None or why.startswith("not "):
        return ""
    return f" ({why})"


def is_datetime(s: Any) -> bool:
    """RFC 3339 date-time with an offset (``Z`` or ``±hh:mm``), calendar-checked."""
    if s.__class__ is not str:
        return False
    m = DATETIME_RE.match(s)
    if m is None:
        return False
    year, month, day = int(m["Y"]), int(m["M"]), int(m["D"])
    if not 1 <= month <= 12 or day < 1:
        return False
    dim = _DAYS[month - 1]
    if month == 2 and (year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)):
        dim = 29
    if day > dim:
        return False
    if int(m["h"]) > 23 or int(m["m"]) > 59 or int(m["s"]) > 60:
        return False
    if m["oh"] is not None and (int(m["oh"]) > 23 or int(m["om"]) > 59):
        return False
    return True


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")


def datetime_problem(s: Any) -> str | None:
    """Why a string with the shape of an RFC 3339 date-time is not one: the
    calendar or clock field that does not exist (``"February 2026 has 28
    days"``); ``None`` when ``s`` does not have the shape (the format is what
    is wrong) or is valid."""
    if s.__class__ is not str:
        return None
    m = DATETIME_RE.match(s)
    if m is None:
        return None
    year, month, day = int(m["Y"]), int(m["M"]), int(m["D"])
    if year == 0:
        return "year 0000 does not exist (years start at 0001)"
    if not 1 <= month <= 12:
        return f"month {m['M']} does not exist"
    dim = _DAYS[month - 1]
    if month == 2 and (year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)):
        dim = 29
    if not 1 <= day <= dim:
        return f"{_MONTHS[month - 1]} {m['Y']} has {dim} days, so day {m['D']} does not exist"
    if int(m["h"]) > 23:
        return f"hour {m['h']} does not exist (00-23)"
    if int(m["m"]) > 59:
        return f"minute {m['m']} does not exist (00-59)"
    if int(m["s"]) > 60:
        return f"second {m['s']} does not exist (00-60)"
    if m["oh"] is not None and (int(m["oh"]) > 23 or int(m["om"]) > 59):
        return f"the offset {s[-6:]} does not exist (hours 00-23, minutes 00-59)"
    return None


def is_number(v: Any) -> bool:
    """A JSON number: int within ±(2^53−1) or a finite float (not a bool)."""
    c = v.__class__
    if c is int:
        return -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER
    if c is float:
        return math.isfinite(v)
    return False


def number_problem(v: Any) -> str | None:
    """Why a numeric ``v`` is not a JSON number (``None`` if it is, or if
    ``v`` is not numeric at all)."""
    c = v.__class__
    if c is int and not -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER:
        return f"integer {v} is outside ±(2^53−1)"
    if c is float and not math.isfinite(v):
        return f"{'NaN' if math.isnan(v) else 'infinity (or a number too large for a double)'} is not a JSON number"
    return None


def scope_problem(v: Any) -> str | None:
    """Why ``v`` is not an exact ``{kind, scopeId}`` scope object (or ``None``)."""
    if not isinstance(v, dict):
        return f"a scope is a mapping {{kind, scopeId}}, not {describe(v)}"
    extra = sorted(k for k in v if k not in ("kind", "scopeId"))
    if extra:
        return f"a scope has exactly the keys kind and scopeId; unexpected {', '.join(map(repr, extra))}"
    if "kind" not in v or "scopeId" not in v:
        missing = "kind" if "kind" not in v else "scopeId"
        return f"a scope needs '{missing}'"
    if v["kind"] not in SCOPE_KINDS:
        return f"scope kind must be one of {', '.join(SCOPE_KINDS)}, not {value_text(v['kind'])}"
    if not is_canonical_id(v["scopeId"]):
        return f"scopeId {value_text(v['scopeId'])} is not a canonical id (like 'tsk_api')"
    return None


def is_scope(v: Any) -> bool:
    """An exact ``{kind, scopeId}`` scope object (docs/reference.md#types)."""
    return scope_problem(v) is None


def is_target(s: Any) -> bool:
    """A literal message target: ``#slug``, ``dm:@handle``, ``task:<id>``,
    ``team:@handle`` (docs/reference.md#wire-forms)."""
    if s.__class__ is not str:
        return False
    if s.startswith("#"):
        return is_channel(s)
    if s.startswith("dm:"):
        return HANDLE_RE.match(s[3:]) is not None
    if s.startswith("team:"):
        return HANDLE_RE.match(s[5:]) is not None
    if s.startswith("task:"):
        return is_canonical_id(s[5:])
    return False


def describe(v: Any) -> str:
    """A short noun phrase for a data value's kind ("a string", "null" ...)."""
    if v is None:
        return "null"
    c = v.__class__
    if c is bool:
        return "a boolean"
    if c is int or c is float:
        return "a number"
    if c is str:
        return "a string"
    if c is list:
        return "a list"
    if c is dict:
        return "a mapping"
    return type(v).__name__


def conform(schema: Any, value: Any) -> str | None:
    """Check plain data ``value`` against ``schema`` (a FieldSchema-like object
    with ``type``/``values``/``items``) without coercion.

    Returns ``None`` when assignable, else a message saying why not.  Used for
    ``default`` (docs/reference.md#contracts) and by later passes for literal values.  The
    recursion over nested arrays is bounded by the YAML nesting budget (64).
    """
    t = schema.type
    if t == "string":
        return None if value.__class__ is str else f"expected a string, got {describe(value)}"
    if t == "enum":
        if value.__class__ is not str:
            return f"expected one of the enum values, got {describe(value)}"
        vals = schema.values or ()
        if value not in vals:
            return not_an_enum_value(value, vals)
        return None
    if t == "number":
        c = value.__class__
        if c is not int and c is not float:
            q = " (quoted numbers are strings)" if c is str and _looks_numeric(value) else ""
            return f"expected a number, got {describe(value)}{q}"
        return number_problem(value)
    if t == "boolean":
        if value.__class__ is not bool:
            q = " (quoted booleans are strings)" if value in ("true", "false") else ""
            return f"expected a boolean, got {describe(value)}{q}"
        return None
    if t == "duration":
        if is_duration(value):
            return None
        return f"expected an ISO 8601 duration such as PT30S or P1D, got {_show(value)}{duration_error(value)}"
    if t == "datetime":
        if is_datetime(value):
            return None
        why = datetime_problem(value)
        if why is not None:
            return f"{why} ({_show(value)})"
        return f"expected an RFC 3339 date-time with an offset, got {_show(value)}"
    if t == "object":
        return None if isinstance(value, dict) else f"expected a mapping (object), got {describe(value)}"
    if t == "array":
        if not isinstance(value, list):
            return f"expected a list, got {describe(value)}"
        items = schema.items
        if items is not None:
            for i, elem in enumerate(value):
                why = conform(items, elem)
                if why is not None:
                    return f"item {i}: {why}"
        return None
    if t == "scope":
        return scope_problem(value)
    if t == "channel":
        if is_channel(value):
            return None
        return f"expected a channel '#slug', got {_show(value)}"
    if t in ("member", "agent"):
        if is_canonical_id(value):
            return None
        return f"expected a canonical {t} id such as '{'mem_ana' if t == 'member' else 'agt_backend'}', got {_show(value)}"
    if t in ("work_items", "responder"):
        return f"{t} values cannot be written by authors"
    return f"unknown type {t!r}"


def _looks_numeric(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _show(v: Any) -> str:
    if v.__class__ is str:
        return repr(v) if len(v) <= 60 else repr(v[:57] + "...")
    return describe(v)
