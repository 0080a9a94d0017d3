"""The reference engine's Run data (docs/language.md#run-semantics): the
:class:`Budget`, the :class:`World` a Run talks to, one activation
(:class:`Act`) and the open scopes (a fork or all_match group, a fan-out,
a loop), the run-time errors the engine raises inside a step, the JSON
codecs of lineage and tasks used by checkpoints, WorkItem validation and
the Run id functions.  Plain data and pure functions: no engine behaviour.
"""
from __future__ import annotations

import hashlib
from typing import Any, Mapping

import attrs

from loopc.interpreter.program import ProgramNode
from loopc.interpreter.values import WORK_ITEM_KEYS, is_id, is_scope

Frame = tuple  # (kind, owner, owner activation id, key)
TERMINAL_ITEM = ("succeeded", "failed", "timed_out", "blocked", "cancelled")
MAX_WORK_ITEMS = 256


@attrs.frozen
class Budget:
    """What one Run may use (docs/conformance.md#budgets): at most
    ``activations`` node activations, ``records`` journal records and
    ``steps`` committed steps.  Memory is bounded through these counts (a
    record holds values of bounded size).  Going over fails the Run with
    ``runtime.budget_exceeded``; every limit is a positive integer."""

    activations: int = 1_000_000
    records: int = 10_000_000
    steps: int = 10_000_000

    def __attrs_post_init__(self) -> None:
        for name in ("activations", "records", "steps"):
            v = getattr(self, name)
            if type(v) is not int or v < 1:
                raise ValueError(f"budget {name} must be a positive integer, not {v!r}")


DEFAULT_BUDGET = Budget()


class JournalDivergence(Exception):
    """Resume or replay produced a step that differs from the committed one."""


class World:
    """The outside world the engine talks to: delivery outcomes.  Answers
    depend only on the node and the Run-wide ordinal of the delivery, so a
    stateless world answers the same after a crash.  ``key`` is the
    effect's identity key (``effect.reserved``'s ``key``), the same on every
    submission of that effect: the world's dedupe key
    (docs/conformance.md#effect-identity)."""

    def deliver(self, node: str, ordinal: int, effect: str, key: str = "") -> bool:  # noqa: ARG002
        return True

    def transport_fault(self, node: str, ordinal: int, effect: str) -> bool:  # noqa: ARG002
        return False


class NoWorld(World):
    """Replay with the world removed: any question is an error."""

    def deliver(self, node: str, ordinal: int, effect: str, key: str = "") -> bool:
        raise JournalDivergence(f"replay asked the world to deliver {effect} ({node}); the journal has no answer")

    def transport_fault(self, node: str, ordinal: int, effect: str) -> bool:
        raise JournalDivergence(f"replay asked the world about a transmission of {effect}")


class _JournalWorld(World):
    """Answers from committed records first, then from ``fallback``."""

    def __init__(self, steps: list[list[dict[str, Any]]], fallback: World) -> None:
        self.delivered: dict[str, bool] = {}
        self.transport: dict[tuple[str, int], bool] = {}
        for step in steps:
            for r in step:
                k = r["kind"]
                if k == "effect.delivered":
                    self.delivered[r["effect"]] = True
                elif k == "effect.failed":
                    self.delivered[r["effect"]] = False
                elif k == "effect.transport_retry":
                    self.transport[(r["effect"], r["transmission"])] = True
        self.fallback = fallback
        self.last_answered: dict[str, int] = {}

    def deliver(self, node: str, ordinal: int, effect: str, key: str = "") -> bool:
        if effect in self.delivered:
            return self.delivered[effect]
        return self.fallback.deliver(node, ordinal, effect, key)

    def transport_fault(self, node: str, ordinal: int, effect: str) -> bool:
        key = (effect, ordinal)
        if key in self.transport:
            return True
        if effect in self.delivered:
            return False
        return self.fallback.transport_fault(node, ordinal, effect)


class Act:
    """One node activation (docs/language.md#identities-and-lineage)."""

    __slots__ = ("id", "node", "seq", "ctx", "input", "status", "attempt", "effect", "agent", "lease",
                 "timers", "request", "deliveries", "kind")

    def __init__(self, aid: str, node: ProgramNode, seq: int, ctx: tuple, inp: Mapping[str, Any]) -> None:
        self.id = aid
        self.node = node
        self.seq = seq
        self.ctx = ctx
        self.input = inp
        self.status = "running"  # running queued delivering awaiting watching retry done cancelled
        self.attempt = 0
        self.effect: str | None = None
        self.agent: str | None = None
        self.lease = False
        self.timers: list[str] = []
        self.request: dict[str, Any] = {}
        self.deliveries = 0
        self.kind = node.op


class _Group:
    __slots__ = ("owner", "owner_act", "kind", "branches", "arrivals", "failed", "closed", "join", "join_act",
                 "ctx", "mode")

    def __init__(self, owner: str, owner_act: str, kind: str, branches: list[str], join: str | None,
                 join_act: str | None, ctx: tuple, mode: str) -> None:
        self.owner, self.owner_act, self.kind, self.branches = owner, owner_act, kind, branches
        self.arrivals: dict[str, Any] = {}
        self.failed: dict[str, Any] = {}
        self.closed = False
        self.join, self.join_act, self.ctx, self.mode = join, join_act, ctx, mode


class _FanOut:
    __slots__ = ("owner", "act", "join", "join_act", "ctx", "items", "order", "status", "env", "envelopes",
                 "in_flight", "max", "closed", "input")

    def __init__(self, owner: str, act: str, join: str | None, join_act: str | None, ctx: tuple,
                 items: list[dict[str, Any]], maxc: int, inp: Mapping[str, Any]) -> None:
        self.owner, self.act, self.join, self.join_act, self.ctx = owner, act, join, join_act, ctx
        self.input = inp  # the fan_out activation's input (that activation is finished)
        self.items = {it["key"]: it for it in items}
        self.order = [it["key"] for it in items]
        self.status = {k: "pending" for k in self.order}
        self.env: dict[str, dict[str, Any]] = {}
        self.envelopes: dict[str, dict[str, Any]] = {}
        self.in_flight: list[str] = []
        self.max = maxc
        self.closed = False


class _Loop:
    __slots__ = ("act", "node", "iteration", "n", "state", "ctx", "closed", "traversals")

    def __init__(self, act: str, node: str, n: int, state: dict[str, Any], ctx: tuple) -> None:
        self.act, self.node, self.n, self.state, self.ctx = act, node, n, state, ctx
        self.iteration = 1
        self.closed = False
        self.traversals = 1


def run_identity(digest: str, input_bytes: bytes) -> str:
    """Run id from the artifact digest and the canonical Plan input."""
    h = hashlib.sha256(digest.encode("ascii") + b"\x00" + input_bytes).hexdigest()
    return "run_" + h[:16]


def scenario_run_id(digest: str, input_bytes: bytes, scenario: str) -> str:
    """A scenario's Run id (docs/conformance.md#run-ids): ``run_`` and the
    first 16 hex digits of SHA-256 over the UTF-8 bytes of the artifact
    digest, a NUL, the canonical Plan input (defaults applied), a NUL and
    the scenario's name (its file name without the extension; a name that
    is not valid Unicode contributes its original bytes)."""
    h = hashlib.sha256(digest.encode("ascii") + b"\x00" + input_bytes + b"\x00" + scenario.encode("utf-8", "surrogateescape"))
    return "run_" + h.hexdigest()[:16]




class _Fail(Exception):
    """A run-time data error: ``err`` the ``{code, detail}``; ``ctx`` the
    context it arose in when that is not the current task's."""

    def __init__(self, err: Mapping[str, Any], ctx: tuple | None = None) -> None:
        super().__init__(err.get("detail"))
        self.err = dict(err)
        self.ctx = ctx


class _Budget(Exception):
    """The Run is over its :class:`Budget` (the message is the detail)."""


#: Version of the :meth:`Engine.checkpoint` shape.
CHECKPOINT_VERSION = 1


def _ctx_out(ctx: tuple) -> list[list[Any]]:
    return [list(f) for f in ctx]


def _ctx_in(ctx: list[list[Any]]) -> tuple:
    return tuple(tuple(f) for f in ctx)


def _task_out(t: tuple[Any, ...]) -> list[Any]:
    if t[0] == "arrive":
        return ["arrive", t[1], t[2], _ctx_out(t[3]), *t[4:]]
    return list(t)


def _task_in(t: list[Any]) -> tuple[Any, ...]:
    if t[0] == "arrive":
        return ("arrive", t[1], t[2], _ctx_in(t[3]), *t[4:])
    return tuple(t)


def _truthy(v: Any) -> bool:
    return v is True


def _item_of(a: Act) -> str | None:
    for f in reversed(a.ctx):
        if f[0] == "fan_out":
            return f[3]
    return None


def _normalize_work_items(raw: Any, allowed: Any) -> tuple[list[dict[str, Any]], str | None]:
    """Validate a WorkItem batch as one closed DAG (docs/language.md#fan-out); returns
    ``(items, None)`` or ``([], reason)``."""
    if not isinstance(raw, list):
        return [], "workItems must be a list"
    if len(raw) > MAX_WORK_ITEMS:
        return [], f"at most {MAX_WORK_ITEMS} WorkItems"
    out: list[dict[str, Any]] = []
    keys: dict[str, int] = {}
    allowed_list = list(allowed) if isinstance(allowed, list) else None
    for i, it in enumerate(raw):
        w = f"workItems[{i}]"
        if not isinstance(it, dict):
            return [], f"{w} must be an object"
        for k in it:
            if k not in WORK_ITEM_KEYS:
                return [], f"{w} has no field '{k}'"
        key = it.get("key")
        if not isinstance(key, str) or not key or len(key) > 64:
            return [], f"{w}.key must be a non-empty string of at most 64 characters"
        if key in keys:
            return [], f"{w}.key '{key}' is a duplicate"
        keys[key] = i
        inst = it.get("instruction")
        if not isinstance(inst, str):
            return [], f"{w}.instruction must be a string"
        deps = it.get("dependsOn", [])
        if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
            return [], f"{w}.dependsOn must be a list of keys"
        resp = it.get("responder")
        pool = resp.get("selectOne") if isinstance(resp, dict) else [resp]
        if not isinstance(pool, list):
            pool = []
        if not (is_id(resp) or (isinstance(resp, dict) and list(resp) == ["selectOne"] and isinstance(pool, list)
                                and pool and all(is_id(x) for x in pool))):
            return [], f"{w}.responder must be an agent or {{selectOne: [agents]}}"
        if allowed_list is not None and any(x not in allowed_list for x in pool):
            return [], f"{w}.responder is not one of the allowed responders"
        ws = it.get("workScope")
        if ws is not None and not is_scope(ws):
            return [], f"{w}.workScope must be a scope"
        rel = it.get("relatedScopes", [])
        if not isinstance(rel, list) or len(rel) > 64 or not all(is_scope(s) for s in rel):
            return [], f"{w}.relatedScopes must be a list of at most 64 scopes"
        out.append({"key": key, "dependsOn": list(dict.fromkeys(deps)), "workScope": ws,
                    "relatedScopes": list(rel), "responder": resp, "instruction": inst})
    for i, it in enumerate(out):
        for d in it["dependsOn"]:
            if d not in keys:
                return [], f"workItems[{i}].dependsOn names an unknown key '{d}'"
            if d == it["key"]:
                return [], f"workItems[{i}] depends on itself"
    # acyclic: Kahn over source order
    indeg = {it["key"]: len(it["dependsOn"]) for it in out}
    users: dict[str, list[str]] = {it["key"]: [] for it in out}
    for it in out:
        for d in it["dependsOn"]:
            users[d].append(it["key"])
    todo = [k for k in indeg if indeg[k] == 0]
    seen = 0
    while todo:
        k = todo.pop()
        seen += 1
        for u in users[k]:
            indeg[u] -= 1
            if indeg[u] == 0:
                todo.append(u)
    if seen != len(out):
        return [], "workItems dependencies form a cycle"
    return out, None


def _first_difference(want: list[dict[str, Any]], got: list[dict[str, Any]], step: int) -> str:
    for i in range(max(len(want), len(got))):
        w = want[i] if i < len(want) else None
        g = got[i] if i < len(got) else None
        if w != g:
            return f"step {step}, record {i + 1}: committed {w!r}, re-executed {g!r}"
    return f"step {step} differs"
