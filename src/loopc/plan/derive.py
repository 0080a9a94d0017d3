"""Plan derivation: artifact + sealed catalog → execution plan (docs/plan.md#steps,
docs/plan.md#resource-keys, docs/plan.md#bounds, docs/plan.md#profiles, docs/plan.md#plan-identity).

:func:`derive` takes a decoded artifact (the typed IR views of
:mod:`loopc.ir.model`), a :class:`~loopc.plan.catalog.Catalog` and an
optional requested profile, and returns a :class:`Derivation`: the
:class:`ExecutionPlan` (or ``None``) and :class:`PlanProblem` records naming
node ids (the API layer positions them in the source).  It never raises on
an artifact that passes verify.

The plan's data is :mod:`loopc.plan.derive_model`, the forward graph and its
bound proof :mod:`loopc.plan.derive_graph`, step grouping and ordering
:mod:`loopc.plan.derive_steps`; this module checks the profiles, runs the
derivation and re-exports every public name.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from loopc.plan.builtin import action_type
from loopc.plan.catalog import Catalog, CatalogEntry
from loopc.plan.derive_graph import _bounds, _Graph
from loopc.plan.derive_model import (
    _BACK_PORTS,
    _DURABLE,
    _EXTERNAL_OPS as _EXTERNAL_OPS,  # the kind tables' readers (tests/test_kinds_tables.py)
    ATOMIC_MAX_ACTIVATIONS,
    ATOMIC_MAX_STATE_WRITES,
    BACKEND_VERSION,
    MAX_BOUND,
    POLICY_VERSION,
    PROFILES,
    RESOURCE_ORDERING_VERSION,
    STEP_KINDS,
    Blocker,
    Bounds,
    Dependency,
    Derivation,
    ExecutionPlan,
    PlanProblem,
    ProfileVerdict,
    ResourceKey,
    Step,
    resource_sort_key,
    sort_resources,
)
from loopc.plan.derive_steps import _order_steps, _steps, validate_effect_pairs
from loopc.plan.descriptor import (
    CapabilityDescriptor,
    ExecutionClass,
    FanoutKind,
    LockPlanKind,
    ReplayPolicy,
    TransactionPolicy,
)

__all__ = [
    "ATOMIC_MAX_ACTIVATIONS",
    "ATOMIC_MAX_STATE_WRITES",
    "BACKEND_VERSION",
    "MAX_BOUND",
    "POLICY_VERSION",
    "PROFILES",
    "RESOURCE_ORDERING_VERSION",
    "STEP_KINDS",
    "Blocker",
    "Bounds",
    "Dependency",
    "Derivation",
    "ExecutionPlan",
    "PlanProblem",
    "ProfileVerdict",
    "ResourceKey",
    "Step",
    "derive",
    "resource_sort_key",
    "sort_resources",
    "validate_effect_pairs",
]


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
