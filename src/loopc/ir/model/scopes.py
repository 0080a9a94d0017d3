"""Scopes, routes, retry and effects of the typed IR model (docs/ir.md#nodes,
docs/ir.md#scope-declarations):
:class:`ScopeRef` stacks, :class:`ScopeDecl`, :class:`Disposition` (an
implicit route), :class:`Retry`, :class:`NodeEffects`, :class:`EdgeEffects`,
and their JSON codec.  Re-exported by :mod:`loopc.ir.model`."""
from __future__ import annotations

from typing import Any, Mapping

import attrs


@attrs.frozen
class ScopeRef:
    """One entry of a scope stack: ``kind`` ``fork``/``all_match`` (with
    ``branch``) or ``fan_out``/``loop``; ``owner`` the owning node id."""

    kind: str
    owner: str
    branch: str | None = None


def _scope_from(lst: Any, memo: dict[Any, Any] | None = None) -> tuple[ScopeRef, ...]:
    """A scope stack; with ``memo`` (one decoding's) equal stacks are one tuple."""
    if memo is None:
        return tuple(ScopeRef(s["kind"], s["owner"], s.get("branch")) for s in lst)
    if not lst:
        return ()
    key = ("scope", *[(s["kind"], s["owner"], s.get("branch")) for s in lst])
    got = memo.get(key)
    if got is None:
        got = memo[key] = tuple(ScopeRef(*k) for k in key[1:])
    return got


@attrs.frozen
class ScopeDecl:
    """A scope declaration: ``kind`` ``fork``/``all_match`` (``branches``),
    ``fan_out`` or ``loop``; ``join`` the closing join or ``None`` (always
    ``None`` for ``loop``, which has no join member on the wire)."""

    kind: str
    owner: str
    branches: tuple[str, ...] | None = None
    join: str | None = None


def _decl_from(s: Mapping[str, Any]) -> ScopeDecl:
    b = s.get("branches")
    return ScopeDecl(s["kind"], s["owner"], tuple(b) if b is not None else None, s.get("join"))


#: Members each disposition action carries (besides ``action``).
DISPOSITION_MEMBERS = {
    "fail_plan": (), "fail_branch": ("owner", "branch", "join"), "fail_item": ("owner", "join"), "never": (),
}


@attrs.frozen
class Disposition:
    """A failure disposition (an edge into a failed End) or, with
    ``status``, the implicit route of an omitted ``failed``/``timed_out``
    port.  ``action``: ``fail_plan``, ``fail_branch`` (``owner``,
    ``branch``, ``join``), ``fail_item`` (``owner``, ``join``) or ``never``
    (implicit routes only); ``join`` may be ``None``."""

    action: str
    owner: str | None = None
    branch: str | None = None
    join: str | None = None
    status: str | None = None


def _disp_from(d: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> Disposition:
    key = ("disp", d["action"], d.get("owner"), d.get("branch"), d.get("join"), d.get("status"))
    if memo is None:
        return Disposition(*key[1:])
    got = memo.get(key)
    if got is None:
        got = memo[key] = Disposition(*key[1:])
    return got


@attrs.frozen
class Retry:
    """``maxAttempts`` 1..100 and ``backoff`` (an ISO 8601 duration)."""

    max_attempts: int
    backoff: str


@attrs.frozen
class NodeEffects:
    """Run-state effects: sorted, unique state field names."""

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    watches: tuple[str, ...] = ()


@attrs.frozen
class EdgeEffects:
    reads: tuple[str, ...] = ()
