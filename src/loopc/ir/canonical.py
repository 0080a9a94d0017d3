"""Canonical JSON bytes (RFC 8785, JSON Canonicalization Scheme).

Implements the byte form of the artifact specified in docs/ir.md#canonical-bytes
(the artifact and its semantic digest): every artifact, and every semantic
projection that is hashed, is serialized by :func:`canonical_bytes` and by
nothing else.

The reference serializer is the ``rfc8785`` package.  Because that package is
pure Python and recursive, :func:`canonical_bytes` first walks the value once
(iteratively) and, when the value holds nothing on which the C ``json``
encoder and RFC 8785 could disagree — no float, no integer outside
±(2^53−1), no object key outside the Basic Multilingual Plane, only ``str``
keys and JSON types — serializes with ``json.dumps(sort_keys=True,
ensure_ascii=False)``, which is then byte-identical to RFC 8785 (same
escaping of ``"``, ``\\`` and U+0000–U+001F, code-point key order equals
UTF-16 order for BMP keys).  Anything else goes through ``rfc8785.dumps``.
A property test (``tests/test_ir_canonical.py``) checks the two paths agree.
"""
from __future__ import annotations

import json
from typing import Any

import rfc8785

__all__ = ["CanonicalizationError", "canonical_bytes", "canonical_text", "json_depth", "scan", "pretty_text",
           "value_text", "text_bytes"]

MAX_SAFE_INT = 2**53 - 1


class CanonicalizationError(ValueError):
    """The value cannot be represented canonically (NaN/Infinity, an integer
    beyond ±(2^53−1), a non-string key, a lone surrogate, a non-JSON type,
    or nesting beyond :data:`MAX_WALK_DEPTH`)."""


#: Deepest value :func:`canonical_bytes` accepts (the rfc8785 fallback is
#: recursive; artifacts are gated far below this at 256).
MAX_WALK_DEPTH = 900

_JSON_DUMPS = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False, check_circular=False
).encode


def scan(value: Any) -> tuple[bool, int]:
    """Return ``(fast_ok, depth)``: whether the C encoder gives RFC 8785 bytes
    for ``value`` (and for every part of it), and the nesting depth (a scalar
    is depth 0, ``[]`` depth 1).  Iterative.  Raises
    :class:`CanonicalizationError` beyond :data:`MAX_WALK_DEPTH`."""
    fast = True
    max_depth = 0
    lo, hi = -MAX_SAFE_INT, MAX_SAFE_INT
    stack: list[tuple[Any, int]] = [(value, 0)]
    pop = stack.pop
    push = stack.append
    while stack:
        v, d = pop()
        t = type(v)
        if t is dict:
            d += 1
            if d > max_depth:
                max_depth = d
                if d > MAX_WALK_DEPTH:
                    raise CanonicalizationError(f"value nested deeper than {MAX_WALK_DEPTH}")
            for k in v:
                if type(k) is not str or (not k.isascii() and max(k) > "\uffff"):
                    fast = False
            items: Any = v.values()
        elif t is list or t is tuple:
            d += 1
            if d > max_depth:
                max_depth = d
                if d > MAX_WALK_DEPTH:
                    raise CanonicalizationError(f"value nested deeper than {MAX_WALK_DEPTH}")
            items = v
        elif t is str or t is bool or v is None:
            continue
        elif t is int:
            if not lo <= v <= hi:
                fast = False
            continue
        else:
            # floats, dict/list subclasses, anything else: let rfc8785 decide.
            fast = False
            if isinstance(v, dict):
                push((dict(v), d))
            elif isinstance(v, (list, tuple)):
                push((list(v), d))
            continue
        for x in items:
            tx = type(x)
            if tx is str or tx is bool or x is None:
                continue
            if tx is int:
                if not lo <= x <= hi:
                    fast = False
                continue
            push((x, d))
    return fast, max_depth


def json_depth(value: Any) -> int:
    """Nesting depth of a JSON-like value: scalars 0, ``{}``/``[]`` 1, ...
    (the JSON nesting gate of docs/ir.md#artifact-budget).  Iterative."""
    return scan(value)[1]


def canonical_bytes(value: Any, *, fast: bool | None = None) -> bytes:
    """RFC 8785 canonical UTF-8 bytes of a JSON-like value.

    Accepts ``dict`` (string keys), ``list``/``tuple``, ``str``, ``int``,
    ``float``, ``bool`` and ``None``; objects exposing ``to_json()`` (such as
    :class:`loopc.ir.decoder.Artifact`) are serialized through it.
    ``fast`` — the first result of :func:`scan` for ``value`` (or for a value
    it is a part of), when the caller already has it.
    Raises :class:`CanonicalizationError` for values RFC 8785 cannot represent.
    docs/ir.md#canonical-bytes.
    """
    to_json = getattr(value, "to_json", None)
    if callable(to_json) and not isinstance(value, (dict, list, tuple, str)):
        value = to_json()
    if fast is None:
        fast, _ = scan(value)
    if fast:
        try:
            return _JSON_DUMPS(value).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise CanonicalizationError("value contains a lone surrogate (not UTF-8)") from exc
        except (TypeError, ValueError) as exc:  # pragma: no cover - _scan filters these
            raise CanonicalizationError(str(exc)) from exc
    try:
        return rfc8785.dumps(value)
    except rfc8785.CanonicalizationError as exc:
        raise CanonicalizationError(str(exc)) from exc
    except RecursionError as exc:  # pragma: no cover - depth is pre-checked
        raise CanonicalizationError("value nested too deeply") from exc


def value_text(value: Any) -> tuple[str, int]:
    """The canonical text of a JSON-like value (as :func:`canonical_bytes`,
    not yet UTF-8) and its nesting depth (:func:`scan`).  Canonical text
    composes: an object's or array's is built from its members' (for the
    typed IR encoder, :func:`loopc.ir.model.encode`)."""
    fast, depth = scan(value)
    if fast:
        try:
            return _JSON_DUMPS(value), depth
        except (TypeError, ValueError) as exc:  # pragma: no cover - scan filters these
            raise CanonicalizationError(str(exc)) from exc
    return canonical_bytes(value, fast=False).decode("utf-8"), depth


def text_bytes(text: str) -> bytes:
    """UTF-8 bytes of composed canonical text (:func:`value_text`)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CanonicalizationError("value contains a lone surrogate (not UTF-8)") from exc


def canonical_text(value: Any) -> str:
    """:func:`canonical_bytes` decoded as text."""
    return canonical_bytes(value).decode("utf-8")


def pretty_text(value: Any) -> str:
    """Review form: sorted keys, indent 2, UTF-8 text, trailing newline (the
    golden ``expected.json`` format).  Not canonical; equality of artifacts is
    always on :func:`canonical_bytes`."""
    to_json = getattr(value, "to_json", None)
    if callable(to_json) and not isinstance(value, (dict, list, tuple, str)):
        value = to_json()
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
