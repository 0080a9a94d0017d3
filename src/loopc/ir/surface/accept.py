"""The accepting pass over the artifact surface: the same declarations
compiled per (spec, version) into tables (:func:`accept_parsed` says only
"accepted, needing version N" or gives up), and the public checks built on
it and the precise walk, :func:`validate` and :func:`required_version`
(docs/ir.md#strict-decoder-and-verify, docs/ir.md#envelope-and-versions).
Re-exported by :mod:`loopc.ir.surface`."""
from __future__ import annotations

from typing import Any, Callable, Iterable

from loopc.ir.canonical import scan
from loopc.ir.surface.declarations import ARTIFACT, DEFS, INSTR_ARITY, INSTR_SPEC
from loopc.ir.surface.walk import _merged, _pytype, _type_desc_version, _validate
from loopc.ir.versions import LATEST
from loopc.kinds.spec import (
    AnyJson, Arr, Bool, ByType, InstrArr,
    Int, MapOf, Null, Obj, Ref, Spec, Str, Tagged, TypeDesc,
)
from loopc.kinds.spec import compiled as _compiled


def validate(value: Any, version: int, *, spec: Spec = ARTIFACT) -> int:
    """Validate ``value`` against the closed surface of artifact ``version``.

    Returns the highest version any used field, variant or enum value needs
    (``required_version``).  Raises :class:`SurfaceError` at the first
    violation: an unknown or newer field, a wrong JSON type, a missing
    required field, a value out of range.  Iterative (explicit stack), so
    depth is limited only by the caller's nesting gate.  The first pass
    (:func:`_accept`, over per-spec tables) only decides acceptance; a value
    it rejects is walked again by the precise walk, which locates the error
    (and is the definition: the two agree, ``tests/test_ir_surface_fast.py``).
    """
    got = accept_parsed(value, version, spec)
    if got is not None:
        return got[0]
    return _validate(value, version, spec, True)


class _Reject(Exception):
    pass


# Plan kinds (first element of a plan list) and leaf codes (first of a leaf).
_K_OBJ, _K_TAGGED, _K_MAP, _K_ARR, _K_INSTR, _K_BYTYPE, _K_LEAF = range(7)
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



def _leaf_fn(s: Spec, version: int) -> Callable[[Any], int]:
    """A checker for a scalar spec: the version the value needs, or raises."""
    if type(s) is Int:
        lo, hi = s.minimum, s.maximum

        def check_int(v: Any) -> int:
            if type(v) is not int or (lo is not None and v < lo) or (hi is not None and v > hi):
                raise _Reject
            return 1
        return check_int

    def check(v: Any) -> int:
        return _validate(v, version, s, False)
    return check


def _leaf(s: Spec, version: int) -> tuple[int, Any]:
    """(leaf code, argument) of a field's spec; ``_L_PUSH`` with the plan
    when the value is not a scalar."""
    if type(s) is Ref:
        s = DEFS[s.name]
    if type(s) is Str and s.max_len is None and s.check is None:
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
        return _L_FN, _leaf_fn(s, version)
    return _L_PUSH, _plan(s, version)


def _element(s: Spec, version: int) -> tuple[int, Any]:
    """:func:`_leaf` for the elements of an array or map: strings (with or
    without a pattern) are checked in the element loop, anything else is a
    plan to push."""
    code, arg = _leaf(s, version)
    if code in (_L_PUSH, _L_STR, _L_PAT):
        return code, arg
    return _L_PUSH, _plan_of_leaf(s, version)


def _plan_of_leaf(s: Spec, version: int) -> list[Any]:
    """``[_K_LEAF, checker]`` (``None`` for any JSON value)."""
    if type(s) is Ref:
        s = DEFS[s.name]
    return [_K_LEAF, None if type(s) is AnyJson else _leaf_fn(s, version)]


def _make_plan(s: Spec, version: int) -> list[Any]:
    if type(s) is Obj:
        fmap = {k: _leaf(f.spec, version) for k, f in s.fields.items() if f.since <= version}
        required = frozenset(k for k, f in s.fields.items() if f.required and f.since <= version)
        newer = tuple((k, f.since) for k, f in s.fields.items() if 1 < f.since <= version)
        return [_K_OBJ, fmap, required, newer, s.checks]
    if type(s) is Tagged:
        variants = {tag: (since, _plan(_merged(s, tag), version))
                    for tag, (_, since) in s.variants.items() if since <= version}
        return [_K_TAGGED, s.tag, variants]
    if type(s) is MapOf:
        return [_K_MAP, _compiled(s.key_pattern).fullmatch if s.key_pattern else None, *_element(s.values, version)]
    if type(s) is Arr:
        return [_K_ARR, s.min_items, s.max_items, *_element(s.items, version)]
    if type(s) is InstrArr:
        return [_K_INSTR, s, {}]
    if type(s) is ByType:
        alts = {k: (since, _plan(sub, version)) for k, (sub, since) in s.alts.items() if since <= version}
        return [_K_BYTYPE, alts]
    return _plan_of_leaf(s, version)


def accept_parsed(value: Any, version: int, spec: Spec = ARTIFACT) -> tuple[int, bool, int] | None:
    """``(used, fast, depth)`` in one walk when ``value`` fits the surface,
    ``None`` when it might not (then ask :func:`validate` and ``scan``):
    ``used`` is what :func:`validate` returns; for JSON data as ``json``
    parses it (builtin types only), ``(fast, depth)`` is what
    :func:`loopc.ir.canonical.scan` returns."""
    try:
        return _accept(value, version, spec)
    except Exception:  # noqa: BLE001 - any doubt: the precise walk decides
        return None


def _accept(value: Any, version: int, spec: Spec) -> tuple[int, bool, int]:
    """``(used, fast, depth)`` of ``value`` under the surface of ``version``
    (see :func:`accept_parsed`); raises (any exception) when it might not
    fit: :func:`_validate` then decides.  Never accepts what
    :func:`_validate` rejects, and returns the ``used`` it returns.  Each
    stacked value carries the depth it has if it is a container."""
    used = 1
    fast = True
    deepest = 0
    instr_plan = _plan(INSTR_SPEC, version)
    stack: list[tuple[Any, list[Any], int]] = [(value, _plan(spec, version), 1)]
    pop = stack.pop
    push = stack.append
    while stack:
        v, plan, d = pop()
        kind = plan[0]
        if kind == _K_TAGGED:
            if type(v) is not dict:
                raise _Reject
            since, plan = plan[2][v[plan[1]]]
            if since > used:
                used = since
            kind = _K_OBJ
        if kind == _K_OBJ:
            if type(v) is not dict or not v.keys() >= plan[2]:
                raise _Reject
            if d > deepest:
                deepest = d
            fmap = plan[1]
            for k, x in v.items():
                code, arg = fmap[k]
                if code == _L_PUSH:
                    push((x, arg, d + 1))
                elif code == _L_STR:
                    if type(x) is not str:
                        raise _Reject
                elif code == _L_PAT:
                    if type(x) is not str or not arg(x):
                        raise _Reject
                elif code == _L_ENUM:
                    sv = arg[x] if type(x) is str else 0
                    if not sv:
                        raise _Reject
                    if sv > used:
                        used = sv
                elif code == _L_BOOL:
                    if type(x) is not bool:
                        raise _Reject
                elif code == _L_FN:
                    sv = arg(x)
                    if sv > used:
                        used = sv
                else:  # any JSON value
                    push((x, _ANY_PLAN, d + 1))
            for k, since in plan[3]:
                if k in v and since > used:
                    used = since
            for _, pred in plan[4]:
                if not pred(v):
                    raise _Reject
            continue
        if kind == _K_ARR or kind == _K_MAP:
            if kind == _K_ARR:
                if type(v) is not list or len(v) < plan[1] or (plan[2] is not None and len(v) > plan[2]):
                    raise _Reject
                code, arg = plan[3], plan[4]
                items: Iterable[Any] = v
            else:
                if type(v) is not dict:
                    raise _Reject
                kre, code, arg = plan[1], plan[2], plan[3]
                for k in v:
                    if kre is not None and not kre(k):
                        raise _Reject
                    if not k.isascii() and max(k) > "\uffff":
                        fast = False
                items = v.values()
            if d > deepest:
                deepest = d
            if code == _L_PUSH:
                for x in items:
                    push((x, arg, d + 1))
            else:
                for x in items:
                    if type(x) is not str or (arg is not None and not arg(x)):
                        raise _Reject
            continue
        if kind == _K_INSTR:
            # [op, type, operands...]: the shape _check_instr accepts
            if type(v) is not list or len(v) < 2:
                raise _Reject
            if d > deepest:
                deepest = d
            op = v[0]
            descs = plan[2]
            need = descs.get(v[1])
            if need is None:
                t = v[1]
                if type(t) is not str:
                    raise _Reject
                need = _type_desc_version(t, plan[1].kinds)
                if type(need) is not int or need > version:
                    raise _Reject
                if len(descs) < 4096:
                    descs[t] = need
            if need > used:
                used = need
            n = len(v) - 2
            if op == "lit":
                if n != 1:
                    raise _Reject
                x = v[2]
                tx = type(x)
                if not (tx is str or tx is bool or x is None or (tx is int and -_SAFE <= x <= _SAFE)):
                    push((x, _ANY_PLAN, d + 1))
                continue
            if op == "ref":
                rv = plan[1].roots.get(v[2]) if n >= 1 and type(v[2]) is str else None
                if rv is None or rv > version:
                    raise _Reject
                for seg in v[3:]:
                    if type(seg) is not str:
                        raise _Reject
                if rv > used:
                    used = rv
                continue
            if op == "object":
                if n % 2 or n < 2:
                    raise _Reject
                prev = None
                for k in v[2::2]:
                    if type(k) is not str:
                        raise _Reject
                    ek = k.encode("utf-16-be")
                    if prev is not None and not prev < ek:
                        raise _Reject
                    prev = ek
                kids = v[3::2]
            else:
                lo, hi = INSTR_ARITY[op]
                if n < lo or (hi is not None and n > hi):
                    raise _Reject
                kids = v[2:]
            d += 1
            for x in kids:
                push((x, instr_plan, d))
            continue
        if kind == _K_BYTYPE:
            since, sub = plan[1][_pytype(v)]
            if since > used:
                used = since
            push((v, sub, d))
            continue
        # a value on its own: a scalar spec, or any JSON value
        if plan[1] is None:
            f, dx = scan(v)
            if not f:
                fast = False
            if dx and d - 1 + dx > deepest:
                deepest = d - 1 + dx
            continue
        sv = plan[1](v)
        if sv > used:
            used = sv
    return used, fast, deepest


_SAFE = 2**53 - 1
_ANY_PLAN = [_K_LEAF, None]


def required_version(artifact: Any) -> int:
    """The lowest artifact version whose surface accepts ``artifact`` — the
    version a conforming compiler emits (docs/ir.md#envelope-and-versions).  Raises
    :class:`SurfaceError` when even the latest surface rejects it."""
    return validate(artifact, LATEST)
