"""The one walk over the artifact surface (docs/ir.md#strict-decoder-and-verify,
docs/ir.md#envelope-and-versions): the declarations (:mod:`~loopc.ir.surface.declarations`)
compiled once per (spec, version) into *plans*, and one iterative walk over
them (:func:`_walk`) with two modes:

* accepting (``track=False``): no pointers, object members checked inline in
  the order the value holds them; it only says "accepted, needing version
  N" (with :func:`loopc.ir.canonical.scan`'s ``(fast, depth)`` of the same
  value) or gives up by raising;
* precise (``track=True``): RFC 6901 pointers, members in declaration
  order, and a :class:`SurfaceError` naming the first violation.

Both modes run the same checks from the same plans (what each scalar spec
accepts is one function, :func:`_scalar_fn`), so the accepting mode never
accepts what the precise mode rejects and returns the same version; it may
give up on a value the precise mode accepts (then :func:`validate` asks the
precise mode).  Public: :func:`validate`, :func:`accept_parsed`,
:func:`required_version`; re-exported by :mod:`loopc.ir.surface`."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from loopc.ir.canonical import scan
from loopc.ir.surface.declarations import ARTIFACT, DEFS, INSTR_ARITY, INSTR_OPS, INSTR_SPEC
from loopc.ir.versions import LATEST
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


def _newer(what: str, since: int, version: int) -> str:
    return f"{what} requires loop.plan.artifact/v{since}; this artifact declares v{version}"


def _short(v: str) -> str:
    """A string value as a message quotes it: at most 40 characters."""
    return v if len(v) <= 40 else f"{v[:30]}… ({len(v):,} characters)"


# ---------------------------------------------------------------------------
# Plans: the declarations compiled per (spec, version)
# ---------------------------------------------------------------------------

# Plan kinds (first element of a plan list).
_K_OBJ, _K_TAGGED, _K_MAP, _K_ARR, _K_INSTR, _K_BYTYPE, _K_SCALAR, _K_ANY = range(8)
# Inline member codes of the accepting mode (an object's scalar members are
# checked where the object is, not pushed): specialisations of _scalar_fn.
_L_PUSH, _L_STR, _L_PAT, _L_ENUM, _L_BOOL, _L_ANY, _L_FN = range(7)

#: (id(spec), version) -> (spec kept alive, plan); plans are lists so that a
#: recursive spec (FieldSchema.items) can refer to its own plan.
_PLANS: dict[tuple[int, int], tuple[Spec, list[Any]]] = {}


def _plan(s: Spec, version: int) -> list[Any]:
    if type(s) is Ref:
        s = DEFS[s.name]
    key = (id(s), version)
    got = _PLANS.get(key)
    if got is not None:
        return got[1]
    plan: list[Any] = []
    _PLANS[key] = (s, plan)
    plan.extend(_make_plan(s, version))
    return plan


def _scalar_fn(s: Spec, version: int) -> Callable[[Any], "int | str"]:
    """What a scalar spec accepts, the one definition both modes use: the
    checker returns the version the value needs or, when it does not fit,
    the message saying why (in the order the checks are made)."""
    if type(s) is Str:
        enum = s.enum
        pattern = s.pattern
        match = _compiled(pattern).fullmatch if pattern is not None else None
        check = s.check

        def check_str(v: Any) -> int | str:
            if not isinstance(v, str):
                return f"expected a string, found {_jtype(v)}"
            used = 1
            if enum is not None:
                since = enum.get(v)
                if since is None:
                    allowed = ", ".join(k for k, sv in enum.items() if sv <= version)
                    return f"'{v}' is not one of {allowed}"
                if since > version:
                    return _newer(f"'{v}'", since, version)
                used = since
            if match is not None and not match(v):
                return f"'{_short(v)}' does not match {pattern}"
            if check is not None:
                why = check(v)
                if why is not None:
                    return f"'{_short(v)}' is out of bounds: {why}"
            return used
        return check_str
    if type(s) is Int:
        lo, hi = s.minimum, s.maximum

        def check_int(v: Any) -> int | str:
            if isinstance(v, bool) or not isinstance(v, int):
                if isinstance(v, float) and v.is_integer():
                    v = int(v)
                else:
                    return f"expected an integer, found {_jtype(v)}"
            if lo is not None and v < lo or hi is not None and v > hi:
                return f"{v} is outside {lo}..{hi}"
            return 1
        return check_int
    if type(s) is Bool:
        const = s.const

        def check_bool(v: Any) -> int | str:
            if not isinstance(v, bool):
                return f"expected a boolean, found {_jtype(v)}"
            if const is not None and v is not const:
                return f"expected {str(const).lower()}"
            return 1
        return check_bool
    if type(s) is Null:
        def check_null(v: Any) -> int | str:
            return 1 if v is None else f"expected null, found {_jtype(v)}"
        return check_null
    if type(s) is TypeDesc:
        kinds = s.kinds

        def check_desc(v: Any) -> int | str:
            if not isinstance(v, str):
                return f"expected a type descriptor string, found {_jtype(v)}"
            r = _type_desc_version(v, kinds)
            if isinstance(r, str):
                return r
            if r > version:
                return _newer(f"type '{v}'", r, version)
            return r
        return check_desc
    raise AssertionError(f"unknown spec {s!r}")  # pragma: no cover


def _member(s: Spec, version: int) -> tuple[int, Any]:
    """(inline code, argument) of an object member's spec in the accepting
    mode; ``_L_PUSH`` with the plan when the value is not a scalar."""
    if type(s) is Ref:
        s = DEFS[s.name]
    if type(s) is Str and s.check is None:
        if s.enum is not None:
            if s.pattern is None:
                return _L_ENUM, {k: sv for k, sv in s.enum.items() if sv <= version}
        elif s.pattern is not None:
            return _L_PAT, _compiled(s.pattern).fullmatch
        else:
            return _L_STR, None
    if type(s) is Bool and s.const is None:
        return _L_BOOL, None
    if type(s) is AnyJson:
        return _L_ANY, None
    if type(s) in (Str, Int, Bool, Null, TypeDesc):
        return _L_FN, _scalar_fn(s, version)
    return _L_PUSH, _plan(s, version)


def _element(s: Spec, version: int) -> tuple[int, Any]:
    """:func:`_member` for the elements of an array or map: strings (with or
    without a pattern) are checked in the element loop, anything else is a
    plan to push."""
    code, arg = _member(s, version)
    if code in (_L_PUSH, _L_STR, _L_PAT):
        return code, arg
    return _L_PUSH, _plan(s, version)


def _make_plan(s: Spec, version: int) -> list[Any]:
    if type(s) is Obj:
        fields = [(k, f) for k, f in s.fields.items() if f.since <= version]
        fmap = {k: _member(f.spec, version) for k, f in fields}
        required = frozenset(k for k, f in fields if f.required)
        newer = tuple((k, f.since) for k, f in fields if f.since > 1)
        ordered = tuple((k, f.since, f.required, _plan(f.spec, version)) for k, f in fields)
        return [_K_OBJ, fmap, required, newer, s.checks, ordered, s]
    if type(s) is Tagged:
        variants = {tag: (since, _plan(_merged(s, tag), version))
                    for tag, (_, since) in s.variants.items() if since <= version}
        return [_K_TAGGED, s.tag, variants, s]
    if type(s) is MapOf:
        return [_K_MAP, _compiled(s.key_pattern).fullmatch if s.key_pattern else None,
                *_element(s.values, version), _plan(s.values, version), s.key_pattern]
    if type(s) is Arr:
        return [_K_ARR, s.min_items, s.max_items, *_element(s.items, version), _plan(s.items, version)]
    if type(s) is InstrArr:
        return [_K_INSTR, s, {}]
    if type(s) is ByType:
        alts = {k: (since, _plan(sub, version)) for k, (sub, since) in s.alts.items() if since <= version}
        return [_K_BYTYPE, alts, s]
    if type(s) is AnyJson:
        return [_K_ANY]
    return [_K_SCALAR, _scalar_fn(s, version)]


# ---------------------------------------------------------------------------
# The walk
# ---------------------------------------------------------------------------

def _variant(v: dict, plan: list[Any], p: str, version: int) -> tuple[int, list[Any]]:
    """(since, plan) of the variant ``v`` names in a tagged union's plan
    (precise mode), or :class:`SurfaceError` at its tag."""
    tag = v.get(plan[1])
    got = plan[2].get(tag) if type(tag) is str else None
    if got is None:
        s = plan[3]
        pt = p + "/" + _esc(s.tag)
        if isinstance(tag, str) and tag in s.variants:
            raise SurfaceError(pt, _newer(f"{s.tag} '{tag}'", s.variants[tag][1], version))
        allowed = ", ".join(k for k, (_, since) in s.variants.items() if since <= version)
        raise SurfaceError(pt, f"'{s.tag}' must be one of {allowed}; found {tag!r}")
    return got


def _members(v: dict, plan: list[Any], p: str, version: int, push: Callable[[Any], None]) -> int:
    """An object's members in the precise mode: unknown and newer members
    first (in the value's order), then each declared member in declaration
    order (pushed with its pointer) or the first missing required one; the
    highest ``since`` of a present member."""
    fmap = plan[1]
    used = 1
    for k in v:
        if k not in fmap:
            f = plan[6].fields.get(k)
            if f is not None:
                raise SurfaceError(p + "/" + _esc(k), _newer(f"field '{k}'", f.since, version))
            raise SurfaceError(p + "/" + _esc(k), f"unknown field '{k}'")
    for k, since, required, sub in plan[5]:
        if k in v:
            if since > used:
                used = since
            push((v[k], sub, p + "/" + _esc(k)))
        elif required:
            raise SurfaceError(p, f"missing required field '{k}'")
    return used


_SAFE = 2**53 - 1
_ANY_PLAN = [_K_ANY]
_INSTR_OPS = frozenset(INSTR_OPS)


def _walk(value: Any, version: int, spec: Spec, track: bool) -> tuple[int, bool, int]:
    """``(used, fast, depth)`` of ``value`` under the surface of ``version``:
    ``used`` the highest version any used field, variant, enum value, type
    descriptor or reference root needs; ``(fast, depth)`` what
    :func:`loopc.ir.canonical.scan` returns for the value (accepting mode
    only).  Raises :class:`SurfaceError` at the first violation (with its
    pointer when ``track``); the accepting mode may also raise anything else
    when it gives up.  Each stacked value carries, in its third slot, the
    depth it has if it is a container (accepting mode) or its pointer
    (precise mode)."""
    used = 1
    fast = True
    deepest: Any = "" if track else 0  # compared with the third slot (see below)
    instr_plan = _plan(INSTR_SPEC, version)
    stack: list[tuple[Any, list[Any], Any]] = [(value, _plan(spec, version), "" if track else 1)]
    pop = stack.pop
    push = stack.append
    while stack:
        v, plan, d = pop()  # d: the depth, or the pointer when tracking
        kind = plan[0]
        if kind == _K_TAGGED:
            if type(v) is not dict and (not track or not isinstance(v, dict)):
                raise SurfaceError(d, f"expected an object, found {_jtype(v)}")
            # accepting: a missing or unknown tag gives up (a KeyError, a TypeError)
            since, plan = _variant(v, plan, d, version) if track else plan[2][v[plan[1]]]
            if since > used:
                used = since
            kind = _K_OBJ
        if kind == _K_OBJ:
            if type(v) is not dict and (not track or not isinstance(v, dict)):
                raise SurfaceError(d, f"expected an object, found {_jtype(v)}")
            if track:
                used = max(used, _members(v, plan, d, version, push))
            else:
                if d > deepest:
                    deepest = d
                if not v.keys() >= plan[2]:
                    raise SurfaceError("", "missing required field")
                fmap = plan[1]
                for k, x in v.items():
                    code, arg = fmap[k]
                    if code == _L_PUSH:
                        push((x, arg, d + 1))
                    elif code == _L_STR:
                        if type(x) is not str:
                            raise SurfaceError("", "expected a string")
                    elif code == _L_PAT:
                        if type(x) is not str or not arg(x):
                            raise SurfaceError("", "does not match")
                    elif code == _L_ENUM:
                        sv = arg[x] if type(x) is str else 0
                        if not sv:
                            raise SurfaceError("", "not one of")
                        if sv > used:
                            used = sv
                    elif code == _L_BOOL:
                        if type(x) is not bool:
                            raise SurfaceError("", "expected a boolean")
                    elif code == _L_FN:
                        sv = arg(x)
                        if type(sv) is str:
                            raise SurfaceError("", sv)
                        tx = type(x)
                        if tx is not str and tx is not bool and x is not None and (
                                tx is not int or not -_SAFE <= x <= _SAFE):
                            fast = False
                        if sv > used:
                            used = sv
                    else:  # any JSON value
                        push((x, _ANY_PLAN, d + 1))
                for k, since in plan[3]:
                    if since > used and k in v:
                        used = since
            for msg, pred in plan[4]:
                if not pred(v):
                    raise SurfaceError(d, msg)
            continue
        if kind == _K_INSTR:
            # [op, type, operands...]: its own shape; sub-instructions pushed.
            # The pointer is d when tracking; in the accepting mode any error
            # gives up, so d (the depth) stands in for it in the messages.
            if d > deepest:  # (both strings when tracking: meaningless, harmless)
                deepest = d
            if type(v) is not list and (not track or not isinstance(v, list)) or len(v) < 2:
                raise SurfaceError(d, f"expected an instruction [op, type, ...], found {_jtype(v)}"
                                   + (f" of length {len(v)}" if isinstance(v, list) else ""))
            op = v[0]
            descs = plan[2]
            if track:
                if not isinstance(op, str) or op not in _INSTR_OPS:
                    raise SurfaceError(d + "/0", f"unknown instruction {op!r}")
                need = descs.get(v[1]) if type(v[1]) is str else None
            else:  # an unknown op or a wrong type gives up below (a KeyError, a TypeError)
                need = descs.get(v[1])
            if need is None:
                t = v[1]
                if not isinstance(t, str):
                    raise SurfaceError(f"{d}/1", f"expected a type descriptor string, found {_jtype(t)}")
                need = _type_desc_version(t, plan[1].kinds)
                if isinstance(need, str):
                    raise SurfaceError(f"{d}/1", need)
                if need > version:
                    raise SurfaceError(f"{d}/1", _newer(f"type '{t}'", need, version))
                if len(descs) < 4096:
                    descs[t] = need
            if need > used:
                used = need
            n = len(v) - 2
            if op == "lit":
                if n != 1:
                    raise SurfaceError(d, f"'lit' takes exactly one value, found {n}")
                if not track:
                    x = v[2]
                    tx = type(x)
                    if not (tx is str or tx is bool or x is None or (tx is int and -_SAFE <= x <= _SAFE)):
                        push((x, _ANY_PLAN, d + 1))
                continue
            if op == "ref":
                if n < 1:
                    raise SurfaceError(d, "'ref' needs a root")
                root = v[2]
                rv = plan[1].roots.get(root) if type(root) is str or isinstance(root, str) else None
                if rv is None:
                    raise SurfaceError(f"{d}/2", f"unknown reference root {root!r}")
                if rv > version:
                    raise SurfaceError(f"{d}/2", _newer(f"reference root '{root}'", rv, version))
                for x in v[3:]:
                    if type(x) is not str and not isinstance(x, str):
                        i = next(j for j in range(3, len(v)) if not isinstance(v[j], str))
                        raise SurfaceError(f"{d}/{i}", f"path segments are strings, found {_jtype(v[i])}")
                if rv > used:
                    used = rv
                continue
            if op == "object":
                if n % 2 or n < 2:
                    raise SurfaceError(d, "'object' takes key/instruction pairs (at least one)")
                prev: str | None = None
                for i in range(2, len(v), 2):
                    k = v[i]
                    if not isinstance(k, str):
                        raise SurfaceError(f"{d}/{i}", f"object keys are strings, found {_jtype(k)}")
                    if prev is not None and not prev.encode("utf-16-be") < k.encode("utf-16-be"):
                        raise SurfaceError(f"{d}/{i}", "object keys must be unique and sorted")
                    prev = k
                if track:
                    for i in range(len(v) - 1, 2, -2):
                        push((v[i], instr_plan, f"{d}/{i}"))
                else:
                    d += 1
                    for x in v[3::2]:
                        push((x, instr_plan, d))
                continue
            lo, hi = INSTR_ARITY[op]
            if n < lo or (hi is not None and n > hi):
                want = f"exactly {lo}" if lo == hi else f"at least {lo}"
                raise SurfaceError(d, f"'{op}' takes {want} operand(s), found {n}")
            if track:
                for i in range(len(v) - 1, 1, -1):
                    push((v[i], instr_plan, f"{d}/{i}"))
            else:
                d += 1
                for x in v[2:]:
                    push((x, instr_plan, d))
            continue
        if kind == _K_ARR:
            if type(v) is not list and (not track or not isinstance(v, list)):
                raise SurfaceError(d, f"expected an array, found {_jtype(v)}")
            n = len(v)
            if n < plan[1]:
                raise SurfaceError(d, f"expected at least {plan[1]} element(s), found {n}")
            if plan[2] is not None and n > plan[2]:
                raise SurfaceError(d, f"expected at most {plan[2]} element(s), found {n}")
            if track:
                sub = plan[5]
                for i in range(n - 1, -1, -1):
                    push((v[i], sub, f"{d}/{i}"))
                continue
            if d > deepest:
                deepest = d
            code, arg = plan[3], plan[4]
            items: Iterable[Any] = v
        elif kind == _K_MAP:
            if type(v) is not dict and (not track or not isinstance(v, dict)):
                raise SurfaceError(d, f"expected an object, found {_jtype(v)}")
            kre = plan[1]
            if track:
                sub = plan[4]
                for k, x in v.items():
                    if kre is not None and not kre(k):
                        raise SurfaceError(d + "/" + _esc(k), f"key '{k}' does not match {plan[5]}")
                    push((x, sub, d + "/" + _esc(k)))
                continue
            if d > deepest:
                deepest = d
            code, arg = plan[2], plan[3]
            for k in v:
                if kre is not None and not kre(k):
                    raise SurfaceError("", "key does not match")
                if not k.isascii() and max(k) > "\uffff":
                    fast = False
            items = v.values()
        elif kind == _K_BYTYPE:
            alt = plan[1].get(_pytype(v))
            if alt is None:
                pt = d
                s = plan[2]
                got = s.alts.get(_pytype(v))
                if got is not None:
                    raise SurfaceError(pt, _newer(f"a value of JSON type {_jtype(v)} here", got[1], version))
                want = " or ".join({"list": "an array", "dict": "an object", "null": "null",
                                    "str": "a string"}[k] for k, (_, sv) in s.alts.items() if sv <= version)
                raise SurfaceError(pt, f"expected {want}, found {_jtype(v)}")
            since, sub = alt
            if since > used:
                used = since
            push((v, sub, d))
            continue
        elif kind == _K_SCALAR:
            sv = plan[1](v)
            if type(sv) is str:
                raise SurfaceError(d, sv)
            tv = type(v)
            if tv is not str and tv is not bool and v is not None and (tv is not int or not -_SAFE <= v <= _SAFE):
                fast = False
            if sv > used:
                used = sv
            continue
        else:  # any JSON value
            if not track:
                f, dx = scan(v)
                if not f:
                    fast = False
                if dx and d - 1 + dx > deepest:
                    deepest = d - 1 + dx
            continue
        # the elements of an array or map (accepting mode)
        if code == _L_PUSH:
            d += 1
            for x in items:
                push((x, arg, d))
        else:
            for x in items:
                if type(x) is not str or (arg is not None and not arg(x)):
                    raise SurfaceError("", "expected a matching string")
    return used, fast, deepest


# ---------------------------------------------------------------------------
# Public checks
# ---------------------------------------------------------------------------

def validate(value: Any, version: int, *, spec: Spec = ARTIFACT) -> int:
    """Validate ``value`` against the closed surface of artifact ``version``.

    Returns the highest version any used field, variant or enum value needs
    (``required_version``).  Raises :class:`SurfaceError` at the first
    violation: an unknown or newer field, a wrong JSON type, a missing
    required field, a value out of range.  Iterative (explicit stack), so
    depth is limited only by the caller's nesting gate.  The accepting mode
    of the walk runs first; a value it does not accept is walked again in the
    precise mode, which locates the error."""
    try:
        return _walk(value, version, spec, False)[0]
    except Exception:  # noqa: BLE001 - any doubt: the precise mode decides
        pass
    return _walk(value, version, spec, True)[0]


def _validate(value: Any, version: int, spec: Spec, track: bool = True) -> int:
    """The precise mode of the walk: the version ``value`` needs, or
    :class:`SurfaceError` at the first violation in declaration order
    (``track`` is accepted for older callers; the precise mode always
    tracks pointers)."""
    return _walk(value, version, spec, True)[0]


def accept_parsed(value: Any, version: int, spec: Spec = ARTIFACT) -> tuple[int, bool, int] | None:
    """``(used, fast, depth)`` in one walk when ``value`` fits the surface,
    ``None`` when it might not (then ask :func:`validate` and ``scan``):
    ``used`` is what :func:`validate` returns; for JSON data as ``json``
    parses it (builtin types only), ``(fast, depth)`` is what
    :func:`loopc.ir.canonical.scan` returns."""
    try:
        return _walk(value, version, spec, False)
    except Exception:  # noqa: BLE001 - any doubt: the precise mode decides
        return None


def required_version(artifact: Any) -> int:
    """The lowest artifact version whose surface accepts ``artifact`` — the
    version a conforming compiler emits (docs/ir.md#envelope-and-versions).  Raises
    :class:`SurfaceError` when even the latest surface rejects it."""
    return validate(artifact, LATEST)
