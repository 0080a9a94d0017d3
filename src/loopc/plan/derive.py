"""Plan derivation: artifact + sealed catalog → execution plan (docs/plan.md#steps,
docs/plan.md#resource-keys, docs/plan.md#bounds, docs/plan.md#profiles, docs/plan.md#plan-identity).

:func:`derive` takes a decoded artifact (the typed IR views of
:mod:`loopc.ir.model`), a :class:`~loopc.plan.catalog.Catalog` and an
optional requested profile, and returns a :class:`Derivation`: the
:class:`ExecutionPlan` (or ``None``) and :class:`PlanProblem` records naming
node ids (the API layer positions them in the source).  It never raises on
an artifact that passes verify.
"""

from __future__ import annotations

import heapq
from typing import Any, Iterable, Mapping, Sequence

import attrs

from loopc.ir.model import Edge, Node, Plan
from loopc.kinds import tables as _kind_tables
from loopc.plan.builtin import CONTROL_OPS, WORK_ITEM_LIMIT, action_type
from loopc.plan.catalog import Catalog, CatalogEntry
from loopc.plan.descriptor import (
    CapabilityDescriptor,
    ExecutionClass,
    FanoutKind,
    LockPlanKind,
    ReplayPolicy,
    ResourceClass,
    TransactionPolicy,
)
from loopc.plan.digests import TAG_IDENTITY, TAG_PAYLOAD, tagged_digest

PROFILES = ("embedded_before_save", "bounded_atomic", "durable_orchestration")
"""Execution profiles, most restrictive first."""

POLICY_VERSION = "loop.plan.policy/v1"
"""The profile policy generation (limits and rules of docs/plan.md#profiles)."""

BACKEND_VERSION = "loop.plan.backend/v1"
"""The derivation behaviour generation (step grouping, keys, bounds)."""

ATOMIC_MAX_ACTIVATIONS = 10_000
ATOMIC_MAX_STATE_WRITES = 1_000
RESOURCE_ORDERING_VERSION = 1
MAX_BOUND = 2**53 - 1

STEP_KINDS = (
    "PureCompute",
    "BoundedMutation",
    "DependencyWait",
    "EffectSubmit",
    "EffectCompletion",
    "ExplicitFault",
    "Terminal",
)
_DURABLE = frozenset(("BoundedMutation", "DependencyWait", "EffectSubmit", "EffectCompletion"))
_FOLD_INTO = frozenset(("PureCompute", "BoundedMutation"))
#: target ports that return to their scope owner (a loop's continue/break; Kind.back_ports)
_BACK_PORTS = _kind_tables().back_ports
#: opcodes whose nodes submit an external effect (Kind.effect_class)
_EXTERNAL_OPS = frozenset(_kind_tables().external_ops)
#: opcode -> its effect class (Kind.effect_class): the step a non-external node becomes
_EFFECT_CLASS = {op: k.effect_class for op, k in _kind_tables().kinds.items()}


@attrs.frozen
class Blocker:
    """Why a profile is not provable: ``node`` (None for plan-level reasons),
    the capability ``field``, its ``value``, a ``reason`` and the enclosing
    scope owners ``scope`` (outermost first)."""

    node: str | None
    field: str
    value: str
    reason: str
    scope: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "field": self.field,
            "value": self.value,
            "reason": self.reason,
            "scope": list(self.scope),
        }


@attrs.frozen(order=False)
class ResourceKey:
    """A declared resource key: class, namespace identity, record identity,
    optional partition and ordering version."""

    resource_class: ResourceClass
    namespace: str
    record: str
    partition: str | None = None
    ordering_version: int = RESOURCE_ORDERING_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "class": self.resource_class.value,
            "namespace": self.namespace,
            "record": self.record,
            "partition": self.partition,
            "orderingVersion": self.ordering_version,
        }


def resource_sort_key(k: ResourceKey) -> tuple[Any, ...]:
    """The one canonical comparator of resource keys: ordering version, then
    resource class in canonical class order, namespace, record, partition
    (absent first); strings compare by Unicode code points."""
    return (
        k.ordering_version,
        k.resource_class.rank,
        k.namespace,
        k.record,
        (0, "") if k.partition is None else (1, k.partition),
    )


def sort_resources(keys: Iterable[ResourceKey]) -> tuple[ResourceKey, ...]:
    """Unique keys in canonical order (:func:`resource_sort_key`)."""
    return tuple(sorted(set(keys), key=resource_sort_key))


@attrs.frozen
class Dependency:
    """What a waiting step waits for: ``kind`` timer | run_state_condition |
    effect_outcome; ``resumes`` the step the resolution resumes; ``submit``
    the submit step (effect outcomes); ``owner`` the effect owner."""

    kind: str
    resumes: str
    submit: str | None = None
    owner: str | None = None
    watches: tuple[str, ...] = ()
    timeout: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "resumes": self.resumes,
            "submit": self.submit,
            "owner": self.owner,
            "watches": list(self.watches),
            "timeout": self.timeout,
        }


@attrs.define
class Step:
    """One execution step (``kind`` one of :data:`STEP_KINDS`)."""

    key: str
    kind: str
    nodes: list[str]
    actions: list[str]
    completion: str | None = None
    resources: tuple[ResourceKey, ...] = ()
    dependencies: tuple[Dependency, ...] = ()
    next: list[str] = attrs.field(factory=list)
    checkpoint_after: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "kind": self.kind,
            "nodes": list(self.nodes),
            "actions": sorted(set(self.actions)),
            "completion": self.completion,
            "resources": [r.to_json() for r in self.resources],
            "dependencies": [d.to_json() for d in self.dependencies],
            "next": sorted(set(self.next)),
            "checkpointAfter": self.checkpoint_after,
        }


@attrs.frozen
class Bounds:
    """Maxima over every possible run (docs/plan.md#bounds)."""

    activations: int
    attempts: int
    effects: int
    state_writes: int
    fan_out: int
    lock_classes: tuple[str, ...]
    proof: tuple[Mapping[str, Any], ...]
    saturated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "bounded": True,
            "activations": self.activations,
            "attempts": self.attempts,
            "effects": self.effects,
            "stateWrites": self.state_writes,
            "fanOut": self.fan_out,
            "lockClasses": list(self.lock_classes),
            "proof": [dict(p) for p in self.proof],
            "saturated": self.saturated,
        }


@attrs.frozen
class ProfileVerdict:
    eligible: bool
    blockers: tuple[Blocker, ...]

    def to_json(self) -> dict[str, Any]:
        return {"eligible": self.eligible, "blockers": [b.to_json() for b in self.blockers]}


@attrs.frozen
class PlanProblem:
    """A derivation finding: LP6xxx ``code``, the culprit ``node`` (or None),
    message and, for LP6101, the blocker."""

    code: str
    node: str | None
    message: str
    blocker: Blocker | None = None


@attrs.frozen
class ExecutionPlan:
    """A derived execution plan; ``identity`` is None when no profile was
    selected (a requested profile was not provable)."""

    artifact_digest: str
    compiler_version: str
    catalog: Catalog
    referenced: tuple[str, ...]
    profile: str | None
    requested_profile: str | None
    profiles: Mapping[str, ProfileVerdict]
    steps: tuple[Step, ...]
    bounds: Bounds
    back_edges: frozenset[tuple[str, str]] = frozenset()
    """Step edges that start a new loop iteration (into continue/break)."""
    _cache: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)

    def catalog_json(self) -> dict[str, Any]:
        entries: dict[str, Any] = {}
        for a in self.referenced:
            e = self.catalog.entry(a)
            if e is not None:
                entries[a] = {"entryDigest": e.entry_digest, "bindingFingerprint": e.binding_fingerprint}
        return {
            "digest": self.catalog.digest,
            "bindingDigest": self.catalog.scope.digest,
            "generation": self.catalog.scope.generation,
            "entries": entries,
        }

    def payload(self) -> dict[str, Any]:
        """The normalized plan payload (docs/plan.md#plan-identity)."""
        return {"profile": self.profile, "steps": [s.to_json() for s in self.steps], "bounds": self.bounds.to_json()}

    @property
    def payload_digest(self) -> str:
        if "payload" not in self._cache:
            self._cache["payload"] = tagged_digest(TAG_PAYLOAD, self.payload())
        return str(self._cache["payload"])

    @property
    def identity(self) -> str | None:
        if self.profile is None:
            return None
        cat = self.catalog_json()
        return tagged_digest(
            TAG_IDENTITY,
            {
                "artifactDigest": self.artifact_digest,
                "compilerVersion": self.compiler_version,
                "backendVersion": BACKEND_VERSION,
                "policyVersion": POLICY_VERSION,
                "catalogDigest": cat["digest"],
                "entries": cat["entries"],
                "payloadDigest": self.payload_digest,
            },
        )

    def to_json(self, diagnostics: Sequence[Any] = ()) -> dict[str, Any]:
        """The ``loopc plan --format json`` object."""
        return {
            "artifactDigest": self.artifact_digest,
            "planIdentity": self.identity,
            "payloadDigest": self.payload_digest,
            "compilerVersion": self.compiler_version,
            "backendVersion": BACKEND_VERSION,
            "policyVersion": POLICY_VERSION,
            "profile": self.profile,
            "requestedProfile": self.requested_profile,
            "profiles": {p: self.profiles[p].to_json() for p in PROFILES},
            "catalog": self.catalog_json(),
            "steps": [s.to_json() for s in self.steps],
            "bounds": self.bounds.to_json(),
            "diagnostics": [d.to_json() for d in diagnostics],
        }


@attrs.frozen
class Derivation:
    plan: ExecutionPlan | None
    problems: tuple[PlanProblem, ...]


# ---------------------------------------------------------------------------
# graph helpers
# ---------------------------------------------------------------------------


class _Graph:
    def __init__(self, plan: Plan) -> None:
        self.nodes: dict[str, Node] = {n.id: n for n in plan.nodes}
        self.watches: dict[str, tuple[str, ...]] = {n.id: n.watches for n in plan.nodes}
        self.edges: dict[str, Edge] = {e.id: e for e in plan.edges}
        self.entry: str = plan.entry.node
        self.joins: dict[str, str | None] = {s.owner: s.join for s in plan.scopes}
        self.incoming: dict[str, list[Edge]] = {n: [] for n in self.nodes}
        for e in self.edges.values():
            if e.to_node in self.incoming:
                self.incoming[e.to_node].append(e)

    def forward_targets(self, n: Node) -> list[tuple[str, str | None]]:
        """``(port, target node or None)`` per source port; None for implicit
        routes and back edges (into a loop's continue/break)."""
        out: list[tuple[str, str | None]] = []
        for p in n.source_ports:
            e = self.edges.get(p.edge) if p.edge else None
            if e is None or e.to_port in _BACK_PORTS:
                out.append((p.name, None))
            else:
                out.append((p.name, e.to_node))
        return out

    def topo_order(self) -> list[str] | None:
        """Node ids in lexicographic topological order of the forward graph,
        or None when it has a cycle."""
        indeg = {n: 0 for n in self.nodes}
        succ: dict[str, list[str]] = {n: [] for n in self.nodes}
        for n in self.nodes.values():
            for _, t in self.forward_targets(n):
                if t is not None and t in indeg:
                    succ[n.id].append(t)
                    indeg[t] += 1
        heap = [k for k, d in indeg.items() if d == 0]
        heapq.heapify(heap)
        order: list[str] = []
        while heap:
            k = heapq.heappop(heap)
            order.append(k)
            for t in succ[k]:
                indeg[t] -= 1
                if indeg[t] == 0:
                    heapq.heappush(heap, t)
        return order if len(order) == len(self.nodes) else None


def _sat(v: int) -> int:
    return v if v <= MAX_BOUND else MAX_BOUND


# ---------------------------------------------------------------------------
# bounds
# ---------------------------------------------------------------------------

_Vec = tuple[int, int, int, int]
_ZERO: _Vec = (0, 0, 0, 0)


def _add(*vs: _Vec) -> _Vec:
    return (sum(v[0] for v in vs), sum(v[1] for v in vs), sum(v[2] for v in vs), sum(v[3] for v in vs))


def _max(vs: Sequence[_Vec]) -> _Vec:
    if not vs:
        return _ZERO
    return (max(v[0] for v in vs), max(v[1] for v in vs), max(v[2] for v in vs), max(v[3] for v in vs))


def _mul(k: int, v: _Vec) -> _Vec:
    return (k * v[0], k * v[1], k * v[2], k * v[3])


def _bounds(g: _Graph, order: list[str], resources: Iterable[ResourceKey]) -> Bounds:
    f: dict[str, _Vec] = {}
    proof: list[dict[str, Any]] = []
    fan_width = 0

    def at(t: str | None) -> _Vec:
        if t is None or t not in g.nodes or g.nodes[t].op == "join":
            return _ZERO  # joins are counted once, by their scope owner
        return f.get(t, _ZERO)

    def join_of(owner: str) -> _Vec:
        j = g.joins.get(owner)
        return f.get(j, _ZERO) if j is not None and j in g.nodes else _ZERO

    for nid in reversed(order):
        n = g.nodes[nid]
        attempts = n.retry.max_attempts if n.retry is not None else 1
        own: _Vec = (1, attempts, 1 if n.op in _EXTERNAL_OPS else 0, len(n.writes))
        targets = g.forward_targets(n)
        outs = [at(t) for _, t in targets]
        if n.op == "fork":
            v = _add(own, *outs, join_of(nid))
        elif n.op == "switch" and getattr(n.config, "mode", None) == "all_match":
            cases = {c.port for c in getattr(n.config, "cases", ())}
            case_sum = _add(*[at(t) for p, t in targets if p in cases])
            default = _max([at(t) for p, t in targets if p not in cases])
            v = _add(own, _max([case_sum, default]), join_of(nid))
        elif n.op == "fan_out":
            body = _max(outs)
            width = WORK_ITEM_LIMIT
            fan_width = max(fan_width, width)
            proof.append(
                {
                    "node": nid,
                    "kind": "fan_out",
                    "factor": width,
                    "maxConcurrency": getattr(n.config, "max_concurrency", None),
                }
            )
            v = _add(own, _mul(width, body), join_of(nid))
        elif n.op == "loop":
            iters = getattr(n.config, "iterations", 1)
            iters = iters if isinstance(iters, int) and iters >= 1 else 1
            proof.append({"node": nid, "kind": "loop", "factor": iters, "maxConcurrency": None})
            body = _max([at(t) for p, t in targets if p == "body"])
            done = _max([at(t) for p, t in targets if p != "body"])
            v = _add(own, _mul(iters, body), done)
        else:
            v = _add(own, _max(outs))
        f[nid] = v
    total = f.get(g.entry, _ZERO)
    sat = any(x > MAX_BOUND for x in total)
    classes = sorted({r.resource_class for r in resources}, key=lambda c: c.rank)
    return Bounds(
        _sat(total[0]),
        _sat(total[1]),
        _sat(total[2]),
        _sat(total[3]),
        fan_width,
        tuple(c.value for c in classes),
        tuple(sorted(proof, key=lambda p: p["node"])),
        sat,
    )


# ---------------------------------------------------------------------------
# steps
# ---------------------------------------------------------------------------


def _owner_text(d: CapabilityDescriptor) -> str:
    o = d.effect_owner
    return o.kind.value if o.owner is None else f"{o.kind.value}:{o.owner}"


def _steps(
    g: _Graph, order: Sequence[str], actions: Mapping[str, str], entries: Mapping[str, CatalogEntry]
) -> tuple[list[Step], dict[str, str], dict[str, str]]:
    """Steps in creation order, plus node → entry step key and node → exit step key."""
    steps: dict[str, Step] = {}
    enter: dict[str, str] = {}
    exit_: dict[str, str] = {}
    for nid in order:
        n = g.nodes[nid]
        a = actions[nid]
        e = entries.get(a)
        if n.op in _EXTERNAL_OPS:
            sk, ck = f"{nid}/submit", f"{nid}/completion"
            owner = _owner_text(e.descriptor) if e is not None else None
            steps[sk] = Step(sk, "EffectSubmit", [nid], [a], completion=ck, next=[ck])
            steps[ck] = Step(
                ck,
                "EffectCompletion",
                [nid],
                [a],
                dependencies=(Dependency("effect_outcome", ck, submit=sk, owner=owner),),
            )
            enter[nid], exit_[nid] = sk, ck
            continue
        effect = _EFFECT_CLASS.get(n.op)
        if effect == "state":  # writes Run state: a bounded mutation of the fields it writes
            res = sort_resources(ResourceKey(ResourceClass.RUN_STATE, "run", w) for w in n.writes)
            steps[nid] = Step(nid, "BoundedMutation", [nid], [a], resources=res)
        elif effect == "timer":  # waits on a Run-state condition or a clock
            if getattr(n.config, "condition", None) is not None:
                dep = Dependency(
                    "run_state_condition",
                    nid,
                    watches=g.watches.get(nid, ()),
                    timeout=getattr(n.config, "timeout", None) is not None,
                )
            else:
                dep = Dependency("timer", nid)
            steps[nid] = Step(nid, "DependencyWait", [nid], [a], dependencies=(dep,))
        elif n.op == "end":
            kind = "ExplicitFault" if getattr(n.config, "status", None) == "failed" else "Terminal"
            steps[nid] = Step(nid, kind, [nid], [a])
        else:
            # a control node: fold it into its only predecessor's step where legal
            inc = g.incoming.get(nid, [])
            if n.op in CONTROL_OPS and nid != g.entry and len(inc) == 1 and inc[0].to_port == "in":
                host = exit_.get(inc[0].from_node)
                if host is not None and steps[host].kind in _FOLD_INTO:
                    steps[host].nodes.append(nid)
                    steps[host].actions.append(a)
                    enter[nid] = exit_[nid] = host
                    continue
            steps[nid] = Step(nid, "PureCompute", [nid], [a])
        enter[nid] = exit_[nid] = nid
    # implicit failure routes become explicit fault steps
    for nid in order:
        n = g.nodes[nid]
        for p in n.source_ports:
            if p.edge is None and p.implicit is not None and p.implicit.action != "never":
                fk = f"{nid}/{p.name}/fault"
                steps[fk] = Step(fk, "ExplicitFault", [nid], [actions[nid]])
    # successors
    for nid in order:
        n = g.nodes[nid]
        hstep = steps[exit_[nid]]
        for p in n.source_ports:
            edge = g.edges.get(p.edge) if p.edge else None
            if edge is not None and edge.to_node in enter:
                tgt = enter[edge.to_node]
                if tgt != hstep.key:
                    hstep.next.append(tgt)
            elif p.edge is None and p.implicit is not None and p.implicit.action != "never":
                hstep.next.append(f"{nid}/{p.name}/fault")
    return list(steps.values()), enter, exit_


def _order_steps(steps: list[Step], back: set[tuple[str, str]]) -> list[Step]:
    """Lexicographic topological order of the step graph without back edges;
    creation order (by key) for whatever a cycle leaves."""
    by = {s.key: s for s in steps}
    indeg = {k: 0 for k in by}
    for s in steps:
        for t in set(s.next):
            if t in indeg and (s.key, t) not in back:
                indeg[t] += 1
    heap = [k for k, d in indeg.items() if d == 0]
    heapq.heapify(heap)
    out: list[Step] = []
    while heap:
        k = heapq.heappop(heap)
        out.append(by[k])
        for t in sorted(set(by[k].next)):
            if t in indeg and (k, t) not in back:
                indeg[t] -= 1
                if indeg[t] == 0:
                    heapq.heappush(heap, t)
    seen = {s.key for s in out}
    out += sorted((s for s in steps if s.key not in seen), key=lambda s: s.key)
    return out


def _acyclic(by: Mapping[str, Step], back: set[tuple[str, str]]) -> bool:
    """Whether the step graph without ``back`` edges has no cycle (Kahn)."""
    indeg = dict.fromkeys(by, 0)
    for k, st in by.items():
        for t in set(st.next):
            if t in indeg and (k, t) not in back:
                indeg[t] += 1
    todo = [k for k, d in indeg.items() if d == 0]
    seen = 0
    while todo:
        k = todo.pop()
        seen += 1
        for t in set(by[k].next):
            if t in indeg and (k, t) not in back:
                indeg[t] -= 1
                if indeg[t] == 0:
                    todo.append(t)
    return seen == len(by)


def validate_effect_pairs(steps: Sequence[Step], back: Iterable[tuple[str, str]] = ()) -> list[str]:
    """Problems with the EffectSubmit → EffectCompletion pairing (empty when
    valid): every submit names exactly one existing completion whose
    dependency targets it, no submit waits on or resumes itself, every
    completion has its submit, and no forward step path leads from a
    completion back to its submit."""
    by = {s.key: s for s in steps}
    back = set(back)
    errs: list[str] = []
    completions_of: dict[str, list[str]] = {}
    for s in steps:
        if s.kind == "EffectCompletion":
            subs = [d.submit for d in s.dependencies if d.kind == "effect_outcome"]
            if len(subs) != 1 or subs[0] not in by or by[subs[0]].kind != "EffectSubmit":
                errs.append(f"completion step '{s.key}' has no matching submit step")
                continue
            if any(d.resumes != s.key for d in s.dependencies):
                errs.append(f"the outcome dependency of '{s.key}' does not resume it")
            completions_of.setdefault(subs[0], []).append(s.key)
    acyclic = _acyclic(by, back)
    for s in steps:
        if s.kind != "EffectSubmit":
            continue
        if s.dependencies or s.key in s.next:
            errs.append(f"submit step '{s.key}' waits on or resumes itself")
        comps = completions_of.get(s.key, [])
        if s.completion is None or comps != [s.completion]:
            errs.append(f"submit step '{s.key}' does not have exactly one completion step")
            continue
        if acyclic:
            # the forward step graph is acyclic and holds submit → completion,
            # so no forward path can lead from the completion back to it
            continue
        stack, seen = [s.completion], set()
        while stack:
            k = stack.pop()
            if k == s.key:
                errs.append(f"a step path leads from '{s.completion}' back to '{s.key}'")
                break
            if k in seen or k not in by:
                continue
            seen.add(k)
            stack.extend(t for t in by[k].next if (k, t) not in back)
    return errs


# ---------------------------------------------------------------------------
# profiles
# ---------------------------------------------------------------------------


def _node_blockers(profile: str, nid: str, op: str, d: CapabilityDescriptor, scope: tuple[str, ...]) -> list[Blocker]:
    out: list[Blocker] = []
    ec, tp = d.execution_class, d.transaction_policy
    what = f"{op} '{nid}'"
    if ec is ExecutionClass.WAIT:
        out.append(Blocker(nid, "ExecutionClass", ec.value, f"{what} waits; a wait needs a durable dependency", scope))
    elif ec is ExecutionClass.EXTERNAL_EFFECT:
        out.append(
            Blocker(
                nid,
                "ExecutionClass",
                ec.value,
                f"{what} is an external effect; it can never run inside the transaction",
                scope,
            )
        )
    if profile == "embedded_before_save":
        if tp not in (TransactionPolicy.CALLER_TRANSACTION, TransactionPolicy.PROFILE_DEPENDENT):
            out.append(
                Blocker(nid, "TransactionPolicy", tp.value, f"{what} does not permit the caller's transaction", scope)
            )
        return out
    if tp in (TransactionPolicy.CALLER_TRANSACTION, TransactionPolicy.TRANSACTION_FORBIDDEN):
        out.append(Blocker(nid, "TransactionPolicy", tp.value, f"{what} cannot run in one owned transaction", scope))
    if d.replay_policy in (ReplayPolicy.AT_MOST_ONCE, ReplayPolicy.NOT_REPLAYABLE):
        out.append(
            Blocker(
                nid, "ReplayPolicy", d.replay_policy.value, f"{what} is not replay-safe under the root retry", scope
            )
        )
    if d.fanout_bound.kind is FanoutKind.UNKNOWN:
        out.append(Blocker(nid, "FanoutBound", "unknown", f"{what} has no fan-out bound", scope))
    if d.lock_plan_contract.kind is not LockPlanKind.STATIC_KEYS:
        out.append(
            Blocker(
                nid,
                "LockPlanContract",
                d.lock_plan_contract.kind.value,
                f"{what} does not declare static resource keys",
                scope,
            )
        )
    return out


def _verdicts(
    g: _Graph, order: Sequence[str], actions: Mapping[str, str], entries: Mapping[str, CatalogEntry], bounds: Bounds
) -> dict[str, ProfileVerdict]:
    """Blockers per profile; node blockers in run order (the forward graph's
    lexicographic topological order), so the first is the first a run meets."""
    blockers: dict[str, list[Blocker]] = {p: [] for p in PROFILES}
    blockers["embedded_before_save"].append(
        Blocker(
            None,
            "trigger",
            "none",
            "a loop.plan has no record-trigger binding; Embedded Before-Save runs only inside a record mutation",
        )
    )
    for nid in order:
        n = g.nodes[nid]
        scope = tuple(s.owner for s in n.scope)
        e = entries.get(actions[nid])
        if e is None or not e.executable:
            for p in PROFILES:
                blockers[p].append(
                    Blocker(
                        nid,
                        "entry",
                        "missing" if e is None else "contract_only",
                        f"no executable catalog entry for '{actions[nid]}'",
                        scope,
                    )
                )
            continue
        for p in ("embedded_before_save", "bounded_atomic"):
            blockers[p] += _node_blockers(p, nid, n.op, e.descriptor, scope)
    if bounds.activations > ATOMIC_MAX_ACTIVATIONS:
        blockers["bounded_atomic"].append(
            Blocker(
                None,
                "bounds.activations",
                str(bounds.activations),
                f"at most {ATOMIC_MAX_ACTIVATIONS:,} activations fit one transaction",
            )
        )
    if bounds.state_writes > ATOMIC_MAX_STATE_WRITES:
        blockers["bounded_atomic"].append(
            Blocker(
                None,
                "bounds.stateWrites",
                str(bounds.state_writes),
                f"at most {ATOMIC_MAX_STATE_WRITES:,} Run-state writes fit one transaction",
            )
        )
    return {p: ProfileVerdict(not blockers[p], tuple(blockers[p])) for p in PROFILES}


# ---------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------


def derive(artifact: Any, catalog: Catalog, *, profile: str | None = None) -> Derivation:
    """Derive the execution plan of a decoded, verified ``artifact``
    (the typed IR model :class:`loopc.ir.model.Artifact` that
    :func:`loopc.ir.decode` returns) with ``catalog``; ``profile`` is the
    requested profile (one of :data:`PROFILES`) or None.  Raises
    ``ValueError`` only for an unknown ``profile`` name."""
    if profile is not None and profile not in PROFILES:
        raise ValueError(f"unknown execution profile {profile!r}")
    g = _Graph(artifact.plan)
    problems: list[PlanProblem] = []
    actions = {nid: action_type(n.op, n.config) for nid, n in g.nodes.items()}
    entries: dict[str, CatalogEntry] = {}
    for nid in sorted(g.nodes):
        a = actions[nid]
        e = catalog.entry(a)
        if e is None:
            problems.append(
                PlanProblem(
                    "LP6102",
                    nid,
                    f"node '{nid}' is a {a} but the catalog "
                    f"(generation '{catalog.scope.generation}') has no entry for '{a}'",
                )
            )
        elif not e.executable:
            problems.append(
                PlanProblem(
                    "LP6103",
                    nid,
                    f"'{a}' is contract-only in this catalog (owner "
                    f"'{e.owner}' supplied no handler binding); node '{nid}' cannot execute",
                )
            )
        else:
            entries[a] = e
    order = g.topo_order()
    if order is None:
        problems.append(
            PlanProblem(
                "LP6104",
                None,
                "the forward graph (without loop continue/break edges) has a cycle: no bound proof exists",
            )
        )
        return Derivation(None, tuple(problems))
    steps, _, _ = _steps(g, order, actions, entries)
    back = {(s.key, t) for s in steps for t in s.next if _is_back(g, s, t)}
    pair_errs = validate_effect_pairs(steps, back)
    for msg in pair_errs:
        problems.append(PlanProblem("LP6106", None, msg))
    bounds = _bounds(g, order, (r for s in steps for r in s.resources))
    verdicts = _verdicts(g, order, actions, entries, bounds)
    selected: str | None = None
    if profile is not None:
        if verdicts[profile].eligible:
            selected = profile
        else:
            b = verdicts[profile].blockers[0]
            where = f"node '{b.node}'" if b.node else "the plan"
            at = b.node
            if at is None and b.field.startswith("bounds.") and bounds.proof:
                # position a bound blocker at the largest multiplier
                at = max(bounds.proof, key=lambda p: (p["factor"], p["node"]))["node"]
            via = f" (inside {' > '.join(b.scope)})" if b.scope else ""
            problems.append(
                PlanProblem(
                    "LP6101",
                    at,
                    f"profile {profile} cannot be proven: {where}{via} has {b.field} {b.value} — {b.reason}"
                    + (
                        f"; {len(verdicts[profile].blockers) - 1} more blocker(s)"
                        if len(verdicts[profile].blockers) > 1
                        else ""
                    ),
                    b,
                )
            )
    else:
        selected = next((p for p in PROFILES if verdicts[p].eligible), None)
    durable = selected == "durable_orchestration"
    for s in steps:
        s.checkpoint_after = durable and s.kind in _DURABLE
    ordered = _order_steps(steps, back)
    fatal = any(p.code in ("LP6102", "LP6103", "LP6106") for p in problems)
    plan = ExecutionPlan(
        artifact.digest,
        artifact.compiler_version,
        catalog,
        tuple(sorted(entries)),
        None if fatal else selected,
        profile,
        verdicts,
        tuple(ordered),
        bounds,
        frozenset(back),
    )
    return Derivation(plan, tuple(problems))


def _is_back(g: _Graph, s: Step, target: str) -> bool:
    """Whether the step edge ``s → target`` follows an edge into a loop's
    continue/break port (a new iteration, never a return within one)."""
    for nid in s.nodes:
        n = g.nodes[nid]
        for p in n.source_ports:
            e = g.edges.get(p.edge) if p.edge else None
            if e is not None and e.to_port in _BACK_PORTS and target.split("/")[0] == e.to_node:
                return True
    return False
