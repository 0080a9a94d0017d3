"""Structural scope map (seed 004 §4.4 context legality; §4.7, §4.8).

Which fork/all_match branch, fan-out item body and counted-loop body each
node and edge belongs to.  Built once by the front end and shared by the type
pass (context legality of ``item.*``, ``loop.*``) and the analyzer's
soundness proofs (issue 3).

Membership is forward reach from the opening port (fork branch port,
``all_match`` switch port, fan_out ``item``, loop ``body``) up to the closing
join (the join whose ``forkId``/``fanOutId`` names the owner) or, for loops,
the edges into the loop's ``continue``/``break`` ports.  The opening node and
the closing join are outside the scope; the edges into the closing join (and
into ``continue``/``break``) are inside.

Where regions overlap without nesting, the affected nodes are listed in
``ambiguous`` and context checks stay silent: the analyzer names that defect.
"""
from __future__ import annotations

from typing import Mapping

import attrs

SCOPE_KINDS = ("fork", "all_match", "fan_out", "loop")


@attrs.frozen
class Scope:
    """One open scope: ``kind`` ∈ SCOPE_KINDS, ``owner`` the opening node id,
    ``branch`` the branch/port key (fork, all_match) or None, ``closer`` the
    closing join id (None for loops or when no join names the owner)."""

    kind: str
    owner: str
    branch: str | None = None
    closer: str | None = None


@attrs.frozen
class ScopeMap:
    """``node_scopes``/``edge_scopes`` map ids to their scope stack, outermost
    first.  Ids in ``ambiguous`` have no single consistent stack."""

    node_scopes: Mapping[str, tuple[Scope, ...]]
    edge_scopes: Mapping[str, tuple[Scope, ...]]
    ambiguous: frozenset[str] = frozenset()

    def innermost(self, element_id: str, kind: str, *, edge: bool = False) -> Scope | None:
        """Innermost enclosing scope of ``kind`` for a node (or edge) id."""
        stack = (self.edge_scopes if edge else self.node_scopes).get(element_id, ())
        for s in reversed(stack):
            if s.kind == kind:
                return s
        return None

    def stack(self, element_id: str, *, edge: bool = False) -> tuple[Scope, ...]:
        return (self.edge_scopes if edge else self.node_scopes).get(element_id, ())

    def is_ambiguous(self, element_id: str) -> bool:
        return element_id in self.ambiguous
