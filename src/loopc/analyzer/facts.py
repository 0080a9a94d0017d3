"""What the analyzer proves and records for lowering (passes 6–12 of
docs/language.md#compiler-passes; the IR consumes :class:`Analysis` to emit explicit
failure routes and
state effects; scope stacks and declarations come from the one scope model,
:class:`loopc.compiler.scopemap.ScopeMap`, which the analyzer's proof checks).

All classes are frozen value classes (:mod:`loopc.value`); every mapping is keyed by node or edge
id and iterates in authored order (deterministic output, no hash-seed
dependence).

Scope frames are :class:`loopc.compiler.scopemap.Scope` values (``kind`` ∈
``fork all_match fan_out loop``, ``owner`` the opening node id, ``branch``
the fork branch / all_match port or ``None``, ``closer`` the closing join id
or ``None``); a *stack* is a tuple of frames, outermost first.
"""
from __future__ import annotations

from typing import Mapping

from loopc.value import Value
from loopc.compiler.scopemap import Scope, Stack

__all__ = ["Scope", "Stack", "Sink", "Effects", "Analysis", "NO_EFFECTS", "SINK_KINDS",
           "FAIL_PLAN", "FAIL_BRANCH", "ITEM_FAILED", "NEVER"]

#: Sink kinds of a lowered failure route (docs/reference.md#failure-routes).
FAIL_PLAN = "fail_plan"        # outside every parallel scope: the Run fails
FAIL_BRANCH = "fail_branch"    # inside a fork / all_match branch: the owning join decides
ITEM_FAILED = "item_failed"    # inside a fan-out item body: the item's failed envelope
NEVER = "never"                # a fan-out join's `failed` port: it never fires
SINK_KINDS = (FAIL_PLAN, FAIL_BRANCH, ITEM_FAILED, NEVER)


class Sink(Value):
    """Where an omitted ``failed``/``timed_out`` port (or an arrival at a
    failed End) lowers to (docs/reference.md#failure-routes, docs/reference.md#ends).

    ``kind`` is one of :data:`SINK_KINDS`.  For ``fail_branch``: ``owner`` is
    the fork or all_match switch, ``branch`` the branch key, ``join`` the
    owner's closing join (its mode decides: ``all`` takes its own failure
    route, ``any`` fails only when no branch can succeed).  For
    ``item_failed``: ``owner`` is the fan_out and ``join`` its closing join.
    ``fail_plan`` and ``never`` carry no owner.
    """

    kind: str
    owner: str | None = None
    branch: str | None = None
    join: str | None = None


class Effects(Value):
    """Run-state effects of one node or edge (docs/reference.md#run-state,
    pass 11 of docs/language.md#compiler-passes).  Field names of ``state``; ``reads``
    are ordinary reads
    (bindings, templates, switch conditions, config values, merges, loop
    init), ``wait_reads`` the fields a ``wait.condition`` watches (the
    intended synchronization, never a race), ``writes`` the fields a
    ``set_variable`` assigns."""

    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    wait_reads: frozenset[str] = frozenset()

    @property
    def empty(self) -> bool:
        return not (self.reads or self.writes or self.wait_reads)


NO_EFFECTS = Effects()


class Analysis(Value):
    """Facts proven by :func:`loopc.analyzer.analyze` for lowering.

    * ``failure_routes``: ``(node id, port)`` → :class:`Sink` for every
      omitted ``failed``/``timed_out`` port of a reachable node;
    * ``end_routes``: edge id → :class:`Sink` for every edge into a failed
      End (a failed End may be shared, so its meaning is per arrival);
    * ``node_effects`` / ``edge_effects``: Run-state read/write sets
      (only non-empty entries);
    * ``back_edges``: the loop back edges (into ``continue``/``break``);
    * ``order``: reachable node ids in the topological order the scope
      typing used (loop back edges removed).

    ``sound`` is true when the analyzer reported no error; the scope stacks
    of the structural :class:`~loopc.compiler.scopemap.ScopeMap` are then
    proven (the scope-typing proof arrived at the same stack for every
    reachable node and edge).
    """

    failure_routes: Mapping[tuple[str, str], Sink]
    end_routes: Mapping[str, Sink]
    node_effects: Mapping[str, Effects]
    edge_effects: Mapping[str, Effects]
    back_edges: frozenset[str]
    order: tuple[str, ...]
    sound: bool = True

    def effects_of(self, node_id: str) -> Effects:
        """Run-state effects of a node (empty when it has none)."""
        return self.node_effects.get(node_id, NO_EFFECTS)
