"""The frames of scope typing (:mod:`loopc.analyzer.scopes`): how a frame
reads in messages, an arriving token with its taint, and the pass's state
with the reporter's taint (:class:`ScopeState`, the bottom layer of
:class:`~loopc.analyzer.scopes.ScopeTyping`)."""
from __future__ import annotations

from typing import Iterable

from loopc.value import Value
from loopc.analyzer.context import Ctx
from loopc.analyzer.facts import Stack
from loopc.compiler.model import Edge
from loopc.compiler.report import scope_entity
from loopc.compiler.scopemap import Scope, ScopeMap
from loopc.kinds import tables as _kind_tables
from loopc.kinds.base import SCOPES

#: The parallel scope kinds: those a node closes by naming their owner
#: (Kind.closes: a join; a loop's iterations end at its back ports).
PARALLEL = tuple(s for s in SCOPES if any(s in scopes for scopes in _kind_tables().closes.values()))
#: Bound on breadth-first "is this node after the scope?" searches per
#: analysis (each is O(nodes + edges)); beyond it a disagreement is read as a
#: leak.  Only ever reached on plans with that many distinct scope defects.
MAX_AFTER_SEARCHES = 64


def describe(f: Scope) -> str:
    """Human text for a frame: ``branch `legal` of fork `split``` etc."""
    if f.kind == "fork":
        return f"branch `{f.branch}` of fork `{f.owner}`"
    if f.kind == "all_match":
        return f"port `{f.branch}` of all_match switch `{f.owner}`"
    if f.kind == "fan_out":
        return f"the item body of fan_out `{f.owner}`"
    return f"the body of loop `{f.owner}`"


def stack_text(st: Stack) -> str:
    return " › ".join(describe(f) for f in st) if st else "outside every scope"


def token_place(st: Stack) -> str:
    """Where a token with stack ``st`` is, as a clause: ``the token is in
    branch `a` of fork `f` › …`` or ``the token is outside every scope``."""
    return f"the token is in {stack_text(st)}" if st else "the token is outside every scope"


class Arrival(Value, frozen=False):
    """A token arriving over ``edge`` with ``stack``; frames at index ≥
    ``taint`` are unreliable (``None``: all reliable)."""

    edge: Edge
    stack: Stack
    taint: int | None


def reliable_at(a: Arrival, depth: int) -> bool:
    """True when frames up to and including index ``depth`` are reliable."""
    return a.taint is None or a.taint > depth


def min_taint(*ts: int | None) -> int | None:
    vals = [t for t in ts if t is not None]
    return min(vals) if vals else None



class ScopeState:
    """The state of the scope-typing pass (see
    :class:`~loopc.analyzer.scopes.ScopeTyping`) and the reporter's taint of
    the scopes a diagnostic already names."""

    def __init__(self, ctx: Ctx, scopes: ScopeMap, cut: set[str], order: list[str]) -> None:
        self.ctx = ctx
        self.scopes = scopes
        self.closers = scopes.closers
        self.cut = cut
        self.order = order
        self.pos = {n: i for i, n in enumerate(order)}
        self.node_stacks: dict[str, Stack] = {}
        self.node_taint: dict[str, int | None] = {}
        self.edge_stacks: dict[str, Stack] = {}
        self.edge_taint: dict[str, int | None] = {}
        self.owner_ok: dict[str, str] = {}  # join id -> owner kind when valid
        self._after: dict[str, set[str]] = {}
        self._searches = 0
        self.arrived: dict[str, set[str | None]] = {}  # owner -> branch keys that reach a join
        self.misdirected: dict[str, str] = {}  # join id -> the owner it was meant to close (LP4309)


    # ------------------------------------------------------- the reporter's taint
    def implicate(self, *owners: str) -> None:
        """Scopes of ``owners`` are already named by a diagnostic (or their
        arrivals are unreliable because of one): findings derived from them
        are follow-ons (reporter taint)."""
        self.ctx.r.taint(*(scope_entity(o) for o in owners))

    def implicate_frames(self, frames: Iterable[Scope]) -> None:
        """A token leaves ``frames`` wrongly (already reported): each
        branch it leaves never reaching its join is a follow-on."""
        self.ctx.r.taint(*(scope_entity(f.owner, f.branch) for f in frames))

    def implicate_set_aside(self) -> None:
        """An edge an earlier pass set aside (the schema pass rejected it, or
        the graph pass reported it: LP4004, LP4008) is not analysed, so the
        branch it leaves may look as if it never reached its join: every
        fork/all_match branch its source is in, or that it opens, is
        implicated.  When a rejected edge's source cannot be read, every
        branch is."""
        sources = self.ctx.set_aside
        if sources is None:
            self.ctx.r.taint(*(scope_entity(o.owner, b) for o in self.scopes.owners.values()
                               for b in o.branches))
            return
        for nid, port in sources:
            self.implicate_frames(f for f in self.scopes.stack(nid) if f.branch is not None)
            if port is not None:
                self.ctx.r.taint(scope_entity(nid, port))

    def implicated(self, owner: str) -> bool:
        return self.ctx.r.tainted(scope_entity(owner))

