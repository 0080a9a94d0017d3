"""The built-in capability catalog: one descriptor per action type, each
value with its reason (docs/plan.md#built-in-catalog).

Action types are keyed by the artifact's opcodes (the node kinds): an
action node's opcode plus, where one opcode has two behaviours, its mode —
``send_message.sent`` / ``send_message.callback`` (``config.completion``)
and ``wait.condition`` / ``wait.timer`` (``config.condition`` vs
``config.duration``), as each kind declares (:attr:`loopc.kinds.Kind.modes`,
``mode_of``).  The node-kind registry below this layer knows nothing of
capabilities; this module maps a node to its action type
(:func:`action_type`) and each action type to its descriptor (a kind of pure
control flow without an entry gets the control descriptor).
"""

from __future__ import annotations

from typing import Any, Mapping

from loopc.kinds import tables as _kind_tables
from loopc.plan.descriptor import (
    CapabilityDescriptor,
    CapabilityVersion,
    EffectOwner,
    EffectOwnerKind,
    ExecutionClass,
    FanoutBound,
    FanoutKind,
    IdempotencyPolicy,
    KeyComponent,
    LockPlanContract,
    LockPlanKind,
    OutputDurability,
    PrincipalMode,
    ReadContract,
    Reauthorization,
    ReplayPolicy,
    ResourceClass,
    SecurityPolicy,
    TransactionPolicy,
    UniquenessScope,
)

PLATFORM_OWNER = "loop.platform"
"""Owner registration of every built-in descriptor and binding."""

APPROVALS_OWNER = "loop.approvals"
"""The registered effect owner of approval requests."""

WORK_ITEM_LIMIT = 256
"""WorkItems per fan-out (the language's batch limit): the fan-out bound."""

CONTROL_OPS: tuple[str, ...] = _kind_tables().control_ops
"""Node kinds that are pure control flow (PureCompute steps): effect class
``none`` (:attr:`loopc.kinds.Kind.effect_class`)."""

MODES: Mapping[str, tuple[str, ...]] = _kind_tables().modes
"""Node kinds whose two behaviours are separate action types (``<kind>.<mode>``;
:attr:`loopc.kinds.Kind.modes`)."""

ACTION_TYPES: tuple[str, ...] = tuple(
    f"{k}.{m}" if k in MODES else k for k in _kind_tables().kinds for m in MODES.get(k, ("",))
)
"""Every action type of loop.plan/v1: the node kinds of the registry
(:data:`loopc.kinds.KINDS`, in its canonical order), split by :data:`MODES`."""

_V1 = CapabilityVersion("loop.plan.capability", 1)
_NO_KEY = IdempotencyPolicy((), UniquenessScope.NONE)
_EFFECT_KEY = IdempotencyPolicy((KeyComponent.RUN, KeyComponent.ACTIVATION, KeyComponent.EFFECT), UniquenessScope.RUN)
_WAIT_KEY = IdempotencyPolicy((KeyComponent.RUN, KeyComponent.ACTIVATION), UniquenessScope.RUN)
_ONE = FanoutBound(FanoutKind.STATIC, 1)
_NO_LOCKS = LockPlanContract(LockPlanKind.STATIC_KEYS, ())


def action_type(op: str, config: Any) -> str:
    """The action type of a node with opcode ``op`` and ``config`` (a typed
    config of :mod:`loopc.ir.model`, or its wire-form mapping); an unknown
    opcode is returned unchanged (the catalog has no entry for it)."""

    k = _kind_tables().kinds.get(op)
    mode = k.mode(config) if k is not None else None
    return op if mode is None else f"{op}.{mode}"


def _effect(owner: EffectOwner, reauth: Reauthorization) -> CapabilityDescriptor:
    return CapabilityDescriptor(
        ExecutionClass.EXTERNAL_EFFECT,
        TransactionPolicy.TRANSACTION_FORBIDDEN,
        ReplayPolicy.IDEMPOTENT_BY_KEY,
        _ONE,
        ReadContract.CHECKPOINT_ONLY,
        _NO_LOCKS,
        owner,
        _EFFECT_KEY,
        OutputDurability.OWNER_RECEIPT,
        SecurityPolicy(PrincipalMode.RUN_PRINCIPAL, reauth),
        _V1,
    )


def _wait() -> CapabilityDescriptor:
    return CapabilityDescriptor(
        ExecutionClass.WAIT,
        TransactionPolicy.OWNED_TRANSACTION,
        ReplayPolicy.DETERMINISTIC_REPLAY,
        _ONE,
        ReadContract.CHECKPOINT_ONLY,
        _NO_LOCKS,
        EffectOwner(EffectOwnerKind.NONE),
        _WAIT_KEY,
        OutputDurability.CHECKPOINTED,
        SecurityPolicy(PrincipalMode.RUN_PRINCIPAL, Reauthorization.ON_RESUME),
        _V1,
    )


def _control(
    fanout: FanoutBound = _ONE, durability: OutputDurability = OutputDurability.EPHEMERAL
) -> CapabilityDescriptor:
    return CapabilityDescriptor(
        ExecutionClass.PURE_COMPUTE,
        TransactionPolicy.PROFILE_DEPENDENT,
        ReplayPolicy.DETERMINISTIC_REPLAY,
        fanout,
        ReadContract.CHECKPOINT_ONLY,
        _NO_LOCKS,
        EffectOwner(EffectOwnerKind.NONE),
        _NO_KEY,
        durability,
        SecurityPolicy(PrincipalMode.RUN_PRINCIPAL, Reauthorization.NEVER),
        _V1,
    )


_EFFECT_REASONS = {
    "ExecutionClass": "delivers a message to a member, agent or scope outside the Run: an external effect",
    "TransactionPolicy": "a network delivery can never run inside a Flow transaction",
    "ReplayPolicy": "a retried or replayed submit reuses its key, so the owner delivers at most one message",
    "FanoutBound": "one activation submits exactly one effect",
    "ReadContract": "its text and destination are computed from the checkpointed activation input only",
    "LockPlanContract": "it writes no Run state and locks no business record: no resource keys",
    "IdempotencyPolicy": "the key is (run, activation, effect), unique within the Run",
    "OutputDurability": "its outcome is the owner's durable receipt, consumed once by the completion step",
    "SecurityPolicy": "delivered on behalf of the Run's principal, re-authorized on every attempt",
    "MinimumCapabilityVersion": "capability contract generation 1",
}

_BUILTIN: dict[str, tuple[CapabilityDescriptor, dict[str, str]]] = {
    "send_message.sent": (
        _effect(EffectOwner(EffectOwnerKind.RUNTIME_DELIVERY), Reauthorization.EACH_ATTEMPT),
        {
            **_EFFECT_REASONS,
            "EffectOwner": "the runtime's message delivery owns the outcome; 'sent' completes on its delivery receipt",
        },
    ),
    "send_message.callback": (
        _effect(EffectOwner(EffectOwnerKind.RUNTIME_DELIVERY), Reauthorization.EACH_ATTEMPT),
        {
            **_EFFECT_REASONS,
            "EffectOwner": "the runtime's message delivery owns the outcome; 'callback' completes "
            "when the responder's typed reply is received",
        },
    ),
    "request_approval": (
        _effect(EffectOwner(EffectOwnerKind.REGISTERED_OWNER, APPROVALS_OWNER), Reauthorization.ON_RESUME),
        {
            **_EFFECT_REASONS,
            "ExecutionClass": "asks a member for a decision outside the Run: an external effect",
            "EffectOwner": f"the approvals owner ({APPROVALS_OWNER}) owns the request and its decision receipt",
            "SecurityPolicy": "requested as the Run's principal; the decision is re-authorized when the Run resumes",
        },
    ),
    "wait.condition": (
        _wait(),
        {
            "ExecutionClass": "suspends the activation until a Run-state condition holds: a wait",
            "TransactionPolicy": "the waiting transition and its dependency record commit in one short owned transaction",
            "ReplayPolicy": "re-evaluating the condition over the same checkpointed Run state gives the same answer",
            "FanoutBound": "one activation, one dependency",
            "ReadContract": "the condition reads the watched Run-state fields from the checkpoint",
            "LockPlanContract": "it writes nothing: no resource keys",
            "EffectOwner": "no external effect",
            "IdempotencyPolicy": "the dependency is identified by (run, activation)",
            "OutputDurability": "the resumption point is checkpointed with the dependency",
            "SecurityPolicy": "the Run's principal is re-authorized when the wait resumes",
            "MinimumCapabilityVersion": "capability contract generation 1",
        },
    ),
    "wait.timer": (
        _wait(),
        {
            "ExecutionClass": "suspends the activation for a duration: a wait",
            "TransactionPolicy": "the waiting transition and its timer dependency commit in one short owned transaction",
            "ReplayPolicy": "the deadline is computed once and checkpointed, so replay is deterministic",
            "FanoutBound": "one activation, one dependency",
            "ReadContract": "the duration is computed from the checkpointed activation input",
            "LockPlanContract": "it writes nothing: no resource keys",
            "EffectOwner": "no external effect",
            "IdempotencyPolicy": "the timer dependency is identified by (run, activation)",
            "OutputDurability": "the deadline and resumption point are checkpointed with the dependency",
            "SecurityPolicy": "the Run's principal is re-authorized when the timer fires",
            "MinimumCapabilityVersion": "capability contract generation 1",
        },
    ),
    "set_variable": (
        CapabilityDescriptor(
            ExecutionClass.RECORD_MUTATION,
            TransactionPolicy.OWNED_TRANSACTION,
            ReplayPolicy.DETERMINISTIC_REPLAY,
            _ONE,
            ReadContract.CHECKPOINT_ONLY,
            LockPlanContract(LockPlanKind.STATIC_KEYS, (ResourceClass.RUN_STATE,)),
            EffectOwner(EffectOwnerKind.NONE),
            _NO_KEY,
            OutputDurability.CHECKPOINTED,
            SecurityPolicy(PrincipalMode.RUN_PRINCIPAL, Reauthorization.NEVER),
            _V1,
        ),
        {
            "ExecutionClass": "assigns typed Run-state fields: a record mutation of Run state",
            "TransactionPolicy": "the assignments commit in one short transaction the step owns",
            "ReplayPolicy": "the values are computed from checkpointed inputs only, so a replay writes the same values",
            "FanoutBound": "one activation",
            "ReadContract": "reads the activation input and Run state from the checkpoint",
            "LockPlanContract": "static keys run_state/<field>, one per assigned field, known from the artifact",
            "EffectOwner": "no external effect",
            "IdempotencyPolicy": "deterministic replay needs no idempotency key",
            "OutputDurability": "the new Run state is checkpointed with the step",
            "SecurityPolicy": "runs as the Run's principal; no re-authorization (nothing leaves the Run)",
            "MinimumCapabilityVersion": "capability contract generation 1",
        },
    ),
}


def _control_reasons(op: str, what: str, fanout: str, durability: str) -> dict[str, str]:
    return {
        "ExecutionClass": f"{what}: pure computation over the token and checkpointed values",
        "TransactionPolicy": "runs inside whatever transaction the execution profile gives its step",
        "ReplayPolicy": "a pure function of checkpointed inputs: deterministic replay",
        "FanoutBound": fanout,
        "ReadContract": "reads only checkpointed inputs",
        "LockPlanContract": "writes nothing: no resource keys",
        "EffectOwner": "no external effect",
        "IdempotencyPolicy": "deterministic replay needs no idempotency key",
        "OutputDurability": durability,
        "SecurityPolicy": "runs as the Run's principal; no re-authorization",
        "MinimumCapabilityVersion": "capability contract generation 1",
    }


_ONE_TOKEN = "one activation per arriving token"
_EPH = "its result is carried by the token to the next durable step"
_BUILTIN.update(
    {
        "switch": (_control(), _control_reasons("switch", "routes a token by its case conditions", _ONE_TOKEN, _EPH)),
        "fork": (_control(), _control_reasons("fork", "splits a token into its static branches", _ONE_TOKEN, _EPH)),
        "join": (_control(), _control_reasons("join", "merges branch or item results", _ONE_TOKEN, _EPH)),
        "fan_out": (
            _control(FanoutBound(FanoutKind.METADATA_DERIVED, WORK_ITEM_LIMIT)),
            _control_reasons(
                "fan_out",
                "starts one item body per WorkItem",
                f"at most {WORK_ITEM_LIMIT} WorkItems per batch (the language's limit)",
                _EPH,
            ),
        ),
        "loop": (_control(), _control_reasons("loop", "counts iterations and carries loop state", _ONE_TOKEN, _EPH)),
        "end": (
            _control(durability=OutputDurability.CHECKPOINTED),
            _control_reasons(
                "end",
                "finishes the Run (or a branch or item) with its status",
                _ONE_TOKEN,
                "the Run's output or failure is recorded durably",
            ),
        ),
    }
)


def _descriptor(action: str) -> tuple[CapabilityDescriptor, dict[str, str]]:
    """The descriptor of ``action``: its entry above, or for a kind of pure
    control flow (effect class ``none``, no modes) without one, the control
    descriptor with reasons from the kind's summary — so a new control kind
    needs no entry here (docs/architecture.md#add-a-node-kind).  ``KeyError``
    naming what is missing for any other action type."""
    got = _BUILTIN.get(action)
    if got is not None:
        return got
    k = _kind_tables().kinds.get(action)
    if k is None or k.effect_class != "none" or k.modes:
        raise KeyError(
            f"no built-in catalog descriptor for action type {action!r}: a kind with effect class "
            f"{k.effect_class if k else '?'!r} declares its descriptor in loopc.plan.builtin._BUILTIN"
        )
    what = k.summary[:1].lower() + k.summary[1:].rstrip(".")
    return _control(), _control_reasons(action, what, _ONE_TOKEN, _EPH)


def builtin_descriptors() -> dict[str, tuple[CapabilityDescriptor, dict[str, str]]]:
    """``{action type: (descriptor, reasons)}`` for every :data:`ACTION_TYPES` entry."""
    return {a: _descriptor(a) for a in ACTION_TYPES}


def builtin_handler(action: str) -> str:
    """The reference handler of a built-in action (``loop.reference/<action>``)."""
    return f"loop.reference/{action}"


BUILTIN_IMPLEMENTATION_VERSION = "1"
