"""JSON-typed comparison for the conformance kit
(docs/conformance.md#what-the-kit-compares).

Values are compared as JSON, not as Python objects:

* a boolean is never a number (``true`` ≠ ``1``, ``1`` ≠ ``true``);
* numbers compare as IEEE 754 doubles (``1`` == ``1.0``; two integers
  beyond 2^53 that round to the same double are equal);
* objects compare by key set and member values, arrays by length and
  elements in order, strings by code points, ``null`` only equals ``null``.

:func:`diff` lists every difference as ``(pointer, expected, got)`` with an
RFC 6901 JSON pointer relative to the compared values (``""`` is the whole
value); :func:`json_equal` is ``not diff(...)``.  Recursion follows the
nesting of the values, which callers bound (replies are parsed with
:data:`loopc.interpreter.kitio.MAX_REPLY_DEPTH`).
"""
from __future__ import annotations

from typing import Any

__all__ = ["diff", "json_equal", "pointer_token", "json_type"]

#: A missing member or element (distinct from ``null``).
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()


def pointer_token(key: str | int) -> str:
    """One RFC 6901 reference token (``~`` → ``~0``, ``/`` → ``~1``)."""
    return str(key).replace("~", "~0").replace("/", "~1")


def json_type(v: Any) -> str:
    """The JSON type name of a parsed value: object, array, string,
    number, boolean, null (or ``missing``)."""
    if v is MISSING:
        return "missing"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _double(v: int | float) -> float:
    try:
        return float(v)
    except OverflowError:  # an integer beyond the double range: never equal to a finite double
        return float("inf") if v > 0 else float("-inf")


def diff(want: Any, got: Any, pointer: str = "", out: list[tuple[str, Any, Any]] | None = None,
         limit: int = 10_000) -> list[tuple[str, Any, Any]]:
    """Every difference between ``want`` and ``got`` (at most ``limit``),
    as ``(pointer, expected, got)``; a missing member is
    :data:`MISSING`."""
    if out is None:
        out = []
    if len(out) >= limit:
        return out
    tw, tg = json_type(want), json_type(got)
    if tw != tg:
        out.append((pointer, want, got))
    elif tw == "number":
        if _double(want) != _double(got):
            out.append((pointer, want, got))
    elif tw == "object":
        for k in want:
            diff(want[k], got.get(k, MISSING), f"{pointer}/{pointer_token(k)}", out, limit)
        for k in got:
            if k not in want:
                diff(MISSING, got[k], f"{pointer}/{pointer_token(k)}", out, limit)
    elif tw == "array":
        for i in range(max(len(want), len(got))):
            diff(want[i] if i < len(want) else MISSING, got[i] if i < len(got) else MISSING,
                 f"{pointer}/{i}", out, limit)
    elif want != got:  # string, boolean
        out.append((pointer, want, got))
    return out


def json_equal(a: Any, b: Any) -> bool:
    """JSON-typed equality (see the module docstring)."""
    return not diff(a, b, limit=1)
