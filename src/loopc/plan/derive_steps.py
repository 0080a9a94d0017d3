"""Step derivation (docs/plan.md#steps): nodes grouped into execution steps
with their resource keys and dependencies, the steps' run order, and the
effect-pair check.
"""

from __future__ import annotations

import heapq
from typing import Iterable, Mapping, Sequence

from loopc.plan.builtin import CONTROL_OPS
from loopc.plan.catalog import CatalogEntry
from loopc.plan.derive_graph import _Graph
from loopc.plan.derive_model import (
    _EFFECT_CLASS,
    _EXTERNAL_OPS,
    _FOLD_INTO,
    Dependency,
    ResourceKey,
    Step,
    sort_resources,
)
from loopc.plan.descriptor import CapabilityDescriptor, ResourceClass


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
