"""The execution plan's data (docs/plan.md#steps, docs/plan.md#resource-keys,
docs/plan.md#bounds, docs/plan.md#profiles, docs/plan.md#plan-identity): the
profile and version constants, steps, resource keys, bounds, verdicts,
problems and the :class:`ExecutionPlan` with its identity digests.
:mod:`loopc.plan.derive` computes them and re-exports every name.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import attrs

from loopc.kinds import tables as _kind_tables
from loopc.plan.catalog import Catalog
from loopc.plan.descriptor import ResourceClass
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
