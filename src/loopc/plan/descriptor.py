"""Capability descriptors: the typed values of one catalog entry.

A :class:`CapabilityDescriptor` holds the eleven capability fields of
docs/plan.md#capability-descriptors as typed values — an enum wherever the
field is a closed set, a small attrs value where it has structure (fan-out
bound, lock-plan contract, effect owner, idempotency key shape, security
policy, minimum capability version).  Every field has a *breadth* order
(:func:`broadens`): a value further down its enum is less restrictive, which
is what "a runtime binding cannot broaden its owner's descriptor" compares.

``to_json``/``from_json`` give the normalized JSON form that is digested
(docs/plan.md#digests); ``from_json`` raises :class:`DescriptorError`
with a JSON pointer relative to the descriptor object.
"""

from __future__ import annotations

import enum
from typing import Any, Mapping

import attrs

CONTRACT_VERSION = "loop.plan.capability/v1"
"""The neutral descriptor schema version (``contractVersion`` of a catalog)."""


class DescriptorError(ValueError):
    """A descriptor value is malformed; ``pointer`` is relative to the descriptor."""

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(f"{pointer or '/'}: {message}")
        self.pointer = pointer
        self.message = message


class InconsistentDescriptor(DescriptorError):
    """Well-formed values in a combination no descriptor may have
    (:func:`consistency_error`)."""


class _Ordered(str, enum.Enum):
    """A closed set whose declaration order is its breadth order (first = most
    restrictive)."""

    @property
    def rank(self) -> int:
        return list(type(self)).index(self)


class ExecutionClass(_Ordered):
    PURE_COMPUTE = "pure_compute"
    RECORD_READ = "record_read"
    RECORD_MUTATION = "record_mutation"
    WAIT = "wait"
    EXTERNAL_EFFECT = "external_effect"


class TransactionPolicy(_Ordered):
    CALLER_TRANSACTION = "caller_transaction"
    PROFILE_DEPENDENT = "profile_dependent"
    OWNED_TRANSACTION = "owned_transaction"
    TRANSACTION_FORBIDDEN = "transaction_forbidden"


class ReplayPolicy(_Ordered):
    DETERMINISTIC_REPLAY = "deterministic_replay"
    IDEMPOTENT_BY_KEY = "idempotent_by_key"
    AT_MOST_ONCE = "at_most_once"
    NOT_REPLAYABLE = "not_replayable"


class FanoutKind(_Ordered):
    STATIC = "static"
    METADATA_DERIVED = "metadata_derived"
    UNKNOWN = "unknown"


class ReadContract(_Ordered):
    CHECKPOINT_ONLY = "checkpoint_only"
    CURRENT_TRANSACTIONAL_READ = "current_transactional_read"
    VERIFIED_SNAPSHOT = "verified_snapshot"


class LockPlanKind(_Ordered):
    STATIC_KEYS = "static_keys"
    METADATA_DERIVED_KEYS = "metadata_derived_keys"
    LATE_DISCOVERY_ALLOWED = "late_discovery_allowed"
    UNKNOWN = "unknown"


class EffectOwnerKind(_Ordered):
    NONE = "none"
    INTEGRATION_WORK = "integration_work"
    RUNTIME_DELIVERY = "runtime_delivery"
    REGISTERED_OWNER = "registered_owner"


class KeyComponent(_Ordered):
    """Components of an idempotency key, outermost first."""

    RUN = "run"
    ACTIVATION = "activation"
    EFFECT = "effect"


class UniquenessScope(_Ordered):
    NONE = "none"
    RUN = "run"
    CATALOG_GENERATION = "catalog_generation"


class OutputDurability(_Ordered):
    EPHEMERAL = "ephemeral"
    CHECKPOINTED = "checkpointed"
    OWNER_RECEIPT = "owner_receipt"


class PrincipalMode(_Ordered):
    RUN_PRINCIPAL = "run_principal"
    OWNER_SERVICE = "owner_service"


class Reauthorization(_Ordered):
    EACH_ATTEMPT = "each_attempt"
    ON_RESUME = "on_resume"
    NEVER = "never"


class ResourceClass(_Ordered):
    """Resource classes a lock-plan contract may declare, in canonical lock
    order (the first component of the resource-key comparator)."""

    RUN_STATE = "run_state"


@attrs.frozen
class FanoutBound:
    """``kind`` static (``maximum`` ≥ 1 known statically), metadata_derived
    (``maximum`` from the artifact, e.g. the WorkItem limit) or unknown
    (``maximum`` None)."""

    kind: FanoutKind
    maximum: int | None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "maximum": self.maximum}


@attrs.frozen
class LockPlanContract:
    """``kind`` and the resource classes the keys belong to (sorted)."""

    kind: LockPlanKind
    resource_classes: tuple[ResourceClass, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "resourceClasses": [c.value for c in self.resource_classes]}


@attrs.frozen
class EffectOwner:
    """``owner`` names the registered owner exactly when ``kind`` is
    ``registered_owner``."""

    kind: EffectOwnerKind
    owner: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "owner": self.owner}


@attrs.frozen
class IdempotencyPolicy:
    """Required key shape (components, outermost first) and uniqueness scope."""

    key_shape: tuple[KeyComponent, ...]
    scope: UniquenessScope

    def to_json(self) -> dict[str, Any]:
        return {"keyShape": [k.value for k in self.key_shape], "scope": self.scope.value}


@attrs.frozen
class SecurityPolicy:
    principal: PrincipalMode
    reauthorization: Reauthorization

    def to_json(self) -> dict[str, Any]:
        return {"principal": self.principal.value, "reauthorization": self.reauthorization.value}


@attrs.frozen
class CapabilityVersion:
    """``contract`` (the descriptor contract name) and its integer generation."""

    contract: str
    generation: int

    def to_json(self) -> dict[str, Any]:
        return {"contract": self.contract, "generation": self.generation}


@attrs.frozen
class CapabilityDescriptor:
    """The eleven capability fields (docs/plan.md#capability-descriptors)."""

    execution_class: ExecutionClass
    transaction_policy: TransactionPolicy
    replay_policy: ReplayPolicy
    fanout_bound: FanoutBound
    read_contract: ReadContract
    lock_plan_contract: LockPlanContract
    effect_owner: EffectOwner
    idempotency_policy: IdempotencyPolicy
    output_durability: OutputDurability
    security_policy: SecurityPolicy
    minimum_capability_version: CapabilityVersion

    def to_json(self) -> dict[str, Any]:
        """The normalized JSON object (keys are the capability names)."""
        return {
            "ExecutionClass": self.execution_class.value,
            "TransactionPolicy": self.transaction_policy.value,
            "ReplayPolicy": self.replay_policy.value,
            "FanoutBound": self.fanout_bound.to_json(),
            "ReadContract": self.read_contract.value,
            "LockPlanContract": self.lock_plan_contract.to_json(),
            "EffectOwner": self.effect_owner.to_json(),
            "IdempotencyPolicy": self.idempotency_policy.to_json(),
            "OutputDurability": self.output_durability.value,
            "SecurityPolicy": self.security_policy.to_json(),
            "MinimumCapabilityVersion": self.minimum_capability_version.to_json(),
        }

    def field_value(self, name: str) -> str:
        """Short text of capability ``name`` for blockers (``"external_effect"``,
        ``"unknown"``, ``"static:1"``)."""
        v = getattr(self, FIELD_ATTRS[name])
        if isinstance(v, enum.Enum):
            return str(v.value)
        if isinstance(v, FanoutBound):
            return v.kind.value if v.maximum is None else f"{v.kind.value}:{v.maximum}"
        if isinstance(v, LockPlanContract):
            return v.kind.value
        if isinstance(v, EffectOwner):
            return v.kind.value if v.owner is None else f"{v.kind.value}:{v.owner}"
        return str(v.to_json())


FIELD_ATTRS = {
    "ExecutionClass": "execution_class",
    "TransactionPolicy": "transaction_policy",
    "ReplayPolicy": "replay_policy",
    "FanoutBound": "fanout_bound",
    "ReadContract": "read_contract",
    "LockPlanContract": "lock_plan_contract",
    "EffectOwner": "effect_owner",
    "IdempotencyPolicy": "idempotency_policy",
    "OutputDurability": "output_durability",
    "SecurityPolicy": "security_policy",
    "MinimumCapabilityVersion": "minimum_capability_version",
}
FIELDS = tuple(FIELD_ATTRS)
"""The capability names, in the order of docs/plan.md."""

_MAX_INT = 2**53 - 1


# ---------------------------------------------------------------------------
# parsing (from the catalog file's JSON data)
# ---------------------------------------------------------------------------


def _closed(obj: Any, pointer: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(obj, dict):
        raise DescriptorError(pointer, f"expected an object with {', '.join(keys)}")
    for k in obj:
        if k not in keys:
            raise DescriptorError(f"{pointer}/{k}", f"unknown member '{k}' (allowed: {', '.join(keys)})")
    for k in keys:
        if k not in obj:
            raise DescriptorError(pointer, f"missing member '{k}'")
    return obj


def _enum(cls: type[_Ordered], value: Any, pointer: str) -> Any:
    for m in cls:
        if m.value == value:
            return m
    allowed = ", ".join(m.value for m in cls)
    raise DescriptorError(pointer, f"{value!r} is not one of: {allowed}")


def _name(value: Any, pointer: str) -> str:
    if not isinstance(value, str) or not value or len(value) > 200:
        raise DescriptorError(pointer, "expected a non-empty string of at most 200 characters")
    return value


def descriptor_from_json(obj: Any, pointer: str = "") -> CapabilityDescriptor:
    """Parse the JSON form; raises :class:`DescriptorError` (pointer below
    ``pointer``) for unknown, missing or ill-typed members and inconsistent
    combinations (:func:`consistency_error`)."""
    d = _closed(obj, pointer, FIELDS)
    p = pointer

    fb = _closed(d["FanoutBound"], f"{p}/FanoutBound", ("kind", "maximum"))
    fkind = _enum(FanoutKind, fb["kind"], f"{p}/FanoutBound/kind")
    fmax = fb["maximum"]
    if fkind is FanoutKind.UNKNOWN:
        if fmax is not None:
            raise DescriptorError(f"{p}/FanoutBound/maximum", "an unknown fan-out bound has maximum null")
    elif isinstance(fmax, bool) or not isinstance(fmax, int) or not 1 <= fmax <= _MAX_INT:
        raise DescriptorError(f"{p}/FanoutBound/maximum", "expected an integer ≥ 1")

    lp = _closed(d["LockPlanContract"], f"{p}/LockPlanContract", ("kind", "resourceClasses"))
    lkind = _enum(LockPlanKind, lp["kind"], f"{p}/LockPlanContract/kind")
    rc = lp["resourceClasses"]
    if not isinstance(rc, list):
        raise DescriptorError(f"{p}/LockPlanContract/resourceClasses", "expected a list")
    classes = tuple(_enum(ResourceClass, c, f"{p}/LockPlanContract/resourceClasses/{i}") for i, c in enumerate(rc))
    if list(classes) != sorted(set(classes), key=lambda c: c.rank):
        raise DescriptorError(
            f"{p}/LockPlanContract/resourceClasses", "resource classes must be unique and in canonical order"
        )

    eo = _closed(d["EffectOwner"], f"{p}/EffectOwner", ("kind", "owner"))
    ekind = _enum(EffectOwnerKind, eo["kind"], f"{p}/EffectOwner/kind")
    if ekind is EffectOwnerKind.REGISTERED_OWNER:
        owner: str | None = _name(eo["owner"], f"{p}/EffectOwner/owner")
    elif eo["owner"] is not None:
        raise DescriptorError(f"{p}/EffectOwner/owner", "only a registered_owner names its owner; use null")
    else:
        owner = None

    ip = _closed(d["IdempotencyPolicy"], f"{p}/IdempotencyPolicy", ("keyShape", "scope"))
    ks = ip["keyShape"]
    if not isinstance(ks, list):
        raise DescriptorError(f"{p}/IdempotencyPolicy/keyShape", "expected a list")
    shape = tuple(_enum(KeyComponent, k, f"{p}/IdempotencyPolicy/keyShape/{i}") for i, k in enumerate(ks))
    if list(shape) != sorted(set(shape), key=lambda k: k.rank):
        raise DescriptorError(
            f"{p}/IdempotencyPolicy/keyShape",
            "key components must be unique, outermost first (run, activation, effect)",
        )
    scope = _enum(UniquenessScope, ip["scope"], f"{p}/IdempotencyPolicy/scope")

    sp = _closed(d["SecurityPolicy"], f"{p}/SecurityPolicy", ("principal", "reauthorization"))
    mv = _closed(d["MinimumCapabilityVersion"], f"{p}/MinimumCapabilityVersion", ("contract", "generation"))
    gen = mv["generation"]
    if isinstance(gen, bool) or not isinstance(gen, int) or not 1 <= gen <= 1_000_000:
        raise DescriptorError(f"{p}/MinimumCapabilityVersion/generation", "expected an integer 1..1000000")

    desc = CapabilityDescriptor(
        execution_class=_enum(ExecutionClass, d["ExecutionClass"], f"{p}/ExecutionClass"),
        transaction_policy=_enum(TransactionPolicy, d["TransactionPolicy"], f"{p}/TransactionPolicy"),
        replay_policy=_enum(ReplayPolicy, d["ReplayPolicy"], f"{p}/ReplayPolicy"),
        fanout_bound=FanoutBound(fkind, None if fkind is FanoutKind.UNKNOWN else fmax),
        read_contract=_enum(ReadContract, d["ReadContract"], f"{p}/ReadContract"),
        lock_plan_contract=LockPlanContract(lkind, classes),
        effect_owner=EffectOwner(ekind, owner),
        idempotency_policy=IdempotencyPolicy(shape, scope),
        output_durability=_enum(OutputDurability, d["OutputDurability"], f"{p}/OutputDurability"),
        security_policy=SecurityPolicy(
            _enum(PrincipalMode, sp["principal"], f"{p}/SecurityPolicy/principal"),
            _enum(Reauthorization, sp["reauthorization"], f"{p}/SecurityPolicy/reauthorization"),
        ),
        minimum_capability_version=CapabilityVersion(
            _name(mv["contract"], f"{p}/MinimumCapabilityVersion/contract"), gen
        ),
    )
    err = consistency_error(desc)
    if err is not None:
        raise InconsistentDescriptor(f"{p}/{err[0]}", err[1])
    return desc


def consistency_error(d: CapabilityDescriptor) -> tuple[str, str] | None:
    """The first rule a descriptor breaks, as ``(capability, message)``:

    * an external effect never runs inside a Flow transaction
      (TransactionPolicy ``transaction_forbidden``) and has an effect owner;
    * an effect owner other than ``none`` only on an external effect;
    * ``idempotent_by_key`` replay needs a non-empty key shape;
    * an ``owner_receipt`` output only on an external effect.
    """
    ext = d.execution_class is ExecutionClass.EXTERNAL_EFFECT
    if ext and d.transaction_policy is not TransactionPolicy.TRANSACTION_FORBIDDEN:
        return (
            "TransactionPolicy",
            "an external_effect cannot run its call inside a transaction: use transaction_forbidden",
        )
    if ext and d.effect_owner.kind is EffectOwnerKind.NONE:
        return ("EffectOwner", "an external_effect needs an effect owner")
    if not ext and d.effect_owner.kind is not EffectOwnerKind.NONE:
        return ("EffectOwner", "only an external_effect has an effect owner; use kind none")
    if d.replay_policy is ReplayPolicy.IDEMPOTENT_BY_KEY and not d.idempotency_policy.key_shape:
        return ("IdempotencyPolicy", "idempotent_by_key replay needs a non-empty keyShape")
    if d.output_durability is OutputDurability.OWNER_RECEIPT and not ext:
        return ("OutputDurability", "only an external_effect has an owner_receipt output")
    return None


def broadens(platform: CapabilityDescriptor, runtime: CapabilityDescriptor) -> list[tuple[str, str, str]]:
    """Capabilities in which ``runtime`` is broader (less restrictive) than
    ``platform``: ``[(capability, platform value, runtime value), ...]`` in
    docs order.  An enum value is broader when it comes later in its enum; a
    fan-out bound when its kind is later or its maximum larger; a lock plan
    when its kind is later or it adds a resource class; an idempotency policy
    when it drops a key component or narrows its scope; a minimum capability
    version when its generation is lower."""
    out: list[tuple[str, str, str]] = []
    for name in FIELDS:
        a = getattr(platform, FIELD_ATTRS[name])
        b = getattr(runtime, FIELD_ATTRS[name])
        wider = False
        if isinstance(a, _Ordered):
            wider = b.rank > a.rank
        elif isinstance(a, FanoutBound):
            wider = b.kind.rank > a.kind.rank or (
                b.kind is a.kind and a.maximum is not None and b.maximum is not None and b.maximum > a.maximum
            )
        elif isinstance(a, LockPlanContract):
            wider = b.kind.rank > a.kind.rank or not set(b.resource_classes) <= set(a.resource_classes)
        elif isinstance(a, EffectOwner):
            wider = b.kind.rank > a.kind.rank or (b.kind is a.kind and b.owner != a.owner)
        elif isinstance(a, IdempotencyPolicy):
            wider = not set(a.key_shape) <= set(b.key_shape) or b.scope.rank < a.scope.rank
        elif isinstance(a, SecurityPolicy):
            wider = b.principal.rank > a.principal.rank or b.reauthorization.rank > a.reauthorization.rank
        elif isinstance(a, CapabilityVersion):
            wider = b.contract != a.contract or b.generation < a.generation
        if wider:
            out.append((name, platform.field_value(name), runtime.field_value(name)))
    return out
