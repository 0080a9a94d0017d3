"""The precise walk over the artifact surface (docs/ir.md#strict-decoder-and-verify):
:func:`_validate` defines what fits and raises :class:`SurfaceError` (an
RFC 6901 pointer and a message) at the first violation; iterative (explicit
stack).  Re-exported by :mod:`loopc.ir.surface`."""
from __future__ import annotations

from typing import Any, Callable, Mapping

from loopc.ir.surface.declarations import DEFS, INSTR_ARITY, INSTR_OPS, INSTR_SPEC
from loopc.kinds.spec import (
    AnyJson, Arr, Bool, ByType, F, InstrArr,
    Int, MapOf, Null, Obj, Ref, Spec, Str, Tagged, TypeDesc,
)
from loopc.kinds.spec import compiled as _compiled


class SurfaceError(ValueError):
    """The value does not fit the surface; ``pointer`` is an RFC 6901 pointer
    into the artifact, ``message`` says what is wrong there."""

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(f"{pointer or '/'}: {message}")
        self.pointer = pointer
        self.message = message


def _esc(k: str) -> str:
    return k.replace("~", "~0").replace("/", "~1")


def _jtype(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _pytype(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "dict"
    if isinstance(v, str):
        return "str"
    return "other"


def _type_desc_version(s: str, kinds: Mapping[str, int]) -> int | str:
    """Version needed by type descriptor ``s`` or an error message."""
    inner = s
    depth = 0
    while inner.startswith("array<") and inner.endswith(">"):
        inner = inner[6:-1]
        depth += 1
        if depth > 64:
            return "type descriptor nested deeper than 64"
    v = kinds.get(inner)
    if v is None:
        return f"unknown type descriptor '{s}'"
    return v


_MERGED: dict[tuple[int, str], Obj] = {}


def _merged(s: Tagged, tag: str) -> Obj:
    """The closed object of variant ``tag`` including the tag and common fields."""
    key = (id(s), tag)
    o = _MERGED.get(key)
    if o is None:
        obj, _ = s.variants[tag]
        fields = dict(s.common)
        fields.update(obj.fields)
        fields[s.tag] = F(Str())
        o = _MERGED[key] = Obj(fields, obj.checks)
    return o


def _check_instr(v: Any, s: InstrArr, p: str, version: int, push: Callable[[Any], None],
                 track: bool = True) -> int:
    """Validate one instruction's own shape; push its sub-instructions.
    Returns the version it needs."""
    if not isinstance(v, list) or len(v) < 2:
        raise SurfaceError(p, f"expected an instruction [op, type, ...], found {_jtype(v)}"
                           + (f" of length {len(v)}" if isinstance(v, list) else ""))
    op, t = v[0], v[1]
    if not isinstance(op, str) or op not in INSTR_OPS:
        raise SurfaceError(p + "/0", f"unknown instruction {op!r}")
    if not isinstance(t, str):
        raise SurfaceError(p + "/1", f"expected a type descriptor string, found {_jtype(t)}")
    need = _type_desc_version(t, s.kinds)
    if isinstance(need, str):
        raise SurfaceError(p + "/1", need)
    if need > version:
        raise SurfaceError(p + "/1", _newer(f"type '{t}'", need, version))
    n = len(v) - 2
    if op == "lit":
        if n != 1:
            raise SurfaceError(p, f"'lit' takes exactly one value, found {n}")
        return need
    if op == "ref":
        if n < 1:
            raise SurfaceError(p, "'ref' needs a root")
        root = v[2]
        rv = s.roots.get(root) if isinstance(root, str) else None
        if rv is None:
            raise SurfaceError(p + "/2", f"unknown reference root {root!r}")
        if rv > version:
            raise SurfaceError(p + "/2", _newer(f"reference root '{root}'", rv, version))
        for i in range(3, len(v)):
            if not isinstance(v[i], str):
                raise SurfaceError(f"{p}/{i}", f"path segments are strings, found {_jtype(v[i])}")
        return max(need, rv)
    if op == "object":
        if n % 2 or n < 2:
            raise SurfaceError(p, "'object' takes key/instruction pairs (at least one)")
        prev: str | None = None
        for i in range(2, len(v), 2):
            k = v[i]
            if not isinstance(k, str):
                raise SurfaceError(f"{p}/{i}", f"object keys are strings, found {_jtype(k)}")
            if prev is not None and not prev.encode("utf-16-be") < k.encode("utf-16-be"):
                raise SurfaceError(f"{p}/{i}", "object keys must be unique and sorted")
            prev = k
        for i in range(len(v) - 1, 2, -2):
            push((v[i], INSTR_SPEC, f"{p}/{i}" if track else ""))
        return need
    lo, hi = INSTR_ARITY[op]
    if n < lo or (hi is not None and n > hi):
        want = f"exactly {lo}" if lo == hi else f"at least {lo}"
        raise SurfaceError(p, f"'{op}' takes {want} operand(s), found {n}")
    for i in range(len(v) - 1, 1, -1):
        push((v[i], INSTR_SPEC, f"{p}/{i}" if track else ""))
    return need


def _newer(what: str, since: int, version: int) -> str:
    return f"{what} requires loop.plan.artifact/v{since}; this artifact declares v{version}"


def _short(v: str) -> str:
    """A string value as a message quotes it: at most 40 characters."""
    return v if len(v) <= 40 else f"{v[:30]}… ({len(v):,} characters)"


def _validate(value: Any, version: int, spec: Spec, track: bool) -> int:
    used = 1
    stack: list[tuple[Any, Spec, str]] = [(value, spec, "")]
    pop = stack.pop
    push = stack.append
    while stack:
        v, s, p = pop()
        if type(s) is Ref:
            s = DEFS[s.name]
        if type(s) is Tagged:
            if not isinstance(v, dict):
                raise SurfaceError(p, f"expected an object, found {_jtype(v)}")
            tag = v.get(s.tag)
            if not isinstance(tag, str) or tag not in s.variants:
                allowed = ", ".join(k for k, (_, since) in s.variants.items() if since <= version)
                raise SurfaceError(p + "/" + _esc(s.tag), f"'{s.tag}' must be one of {allowed}; found {tag!r}")
            obj, since = s.variants[tag]
            if since > version:
                raise SurfaceError(p + "/" + _esc(s.tag), _newer(f"{s.tag} '{tag}'", since, version))
            used = max(used, since)
            s = _merged(s, tag)
        if type(s) is Obj:
            if not isinstance(v, dict):
                raise SurfaceError(p, f"expected an object, found {_jtype(v)}")
            fields = s.fields
            for k in v:
                f = fields.get(k)
                if f is None or f.since > version:
                    if f is not None:
                        raise SurfaceError(p + "/" + _esc(k), _newer(f"field '{k}'", f.since, version))
                    raise SurfaceError(p + "/" + _esc(k), f"unknown field '{k}'")
            for k, f in fields.items():
                if k in v:
                    if f.since > used:
                        used = f.since
                    push((v[k], f.spec, p + "/" + _esc(k) if track else ""))
                elif f.required and f.since <= version:
                    raise SurfaceError(p, f"missing required field '{k}'")
            for msg, pred in s.checks:
                if not pred(v):
                    raise SurfaceError(p, msg)
            continue
        if type(s) is Str:
            if not isinstance(v, str):
                raise SurfaceError(p, f"expected a string, found {_jtype(v)}")
            if s.enum is not None:
                enum_since = s.enum.get(v)
                if enum_since is None:
                    allowed = ", ".join(k for k, sv in s.enum.items() if sv <= version)
                    raise SurfaceError(p, f"'{v}' is not one of {allowed}")
                if enum_since > version:
                    raise SurfaceError(p, _newer(f"'{v}'", enum_since, version))
                used = max(used, enum_since)
            if s.pattern is not None and not s.regex.fullmatch(v):  # type: ignore[union-attr]
                raise SurfaceError(p, f"'{_short(v)}' does not match {s.pattern}")
            if s.check is not None:
                why = s.check(v)
                if why is not None:
                    raise SurfaceError(p, f"'{_short(v)}' is out of bounds: {why}")
            continue
        if type(s) is MapOf:
            if not isinstance(v, dict):
                raise SurfaceError(p, f"expected an object, found {_jtype(v)}")
            kre = _compiled(s.key_pattern) if s.key_pattern else None
            for k, x in v.items():
                if kre is not None and not kre.fullmatch(k):
                    raise SurfaceError(p + "/" + _esc(k), f"key '{k}' does not match {s.key_pattern}")
                push((x, s.values, p + "/" + _esc(k) if track else ""))
            continue
        if type(s) is Arr:
            if not isinstance(v, list):
                raise SurfaceError(p, f"expected an array, found {_jtype(v)}")
            if len(v) < s.min_items:
                raise SurfaceError(p, f"expected at least {s.min_items} element(s), found {len(v)}")
            if s.max_items is not None and len(v) > s.max_items:
                raise SurfaceError(p, f"expected at most {s.max_items} element(s), found {len(v)}")
            for i in range(len(v) - 1, -1, -1):
                push((v[i], s.items, f"{p}/{i}" if track else ""))
            continue
        if type(s) is InstrArr:
            used = max(used, _check_instr(v, s, p, version, push, track))
            continue
        if type(s) is TypeDesc:
            if not isinstance(v, str):
                raise SurfaceError(p, f"expected a type descriptor string, found {_jtype(v)}")
            r = _type_desc_version(v, s.kinds)
            if isinstance(r, str):
                raise SurfaceError(p, r)
            if r > version:
                raise SurfaceError(p, _newer(f"type '{v}'", r, version))
            used = max(used, r)
            continue
        if type(s) is ByType:
            alt = s.alts.get(_pytype(v))
            if alt is None:
                want = " or ".join({"list": "an array", "dict": "an object", "null": "null",
                                    "str": "a string"}[k] for k, (_, sv) in s.alts.items() if sv <= version)
                raise SurfaceError(p, f"expected {want}, found {_jtype(v)}")
            sub, since = alt
            if since > version:
                raise SurfaceError(p, _newer(f"a value of JSON type {_jtype(v)} here", since, version))
            used = max(used, since)
            push((v, sub, p))
            continue
        if type(s) is Int:
            if isinstance(v, bool) or not isinstance(v, int):
                if isinstance(v, float) and v.is_integer():
                    v = int(v)
                else:
                    raise SurfaceError(p, f"expected an integer, found {_jtype(v)}")
            if s.minimum is not None and v < s.minimum or s.maximum is not None and v > s.maximum:
                raise SurfaceError(p, f"{v} is outside {s.minimum}..{s.maximum}")
            continue
        if type(s) is Bool:
            if not isinstance(v, bool):
                raise SurfaceError(p, f"expected a boolean, found {_jtype(v)}")
            if s.const is not None and v is not s.const:
                raise SurfaceError(p, f"expected {str(s.const).lower()}")
            continue
        if type(s) is Null:
            if v is not None:
                raise SurfaceError(p, f"expected null, found {_jtype(v)}")
            continue
        if type(s) is AnyJson:
            continue
        raise AssertionError(f"unknown spec {s!r}")  # pragma: no cover
    return used
