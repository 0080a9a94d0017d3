"""loopc's analyzer: graph soundness for forks, joins, switches, fan-out and
loops (docs/reference.md#graph-rules to docs/reference.md#ends; passes 6–12 of
docs/language.md#compiler-passes; issue 3).

:func:`analyze` proves that a plan that compiles can never strand a token,
wait forever at a join, leak a scope, loop outside a counted loop or race on
Run state, and records what lowering needs (:class:`Analysis`).  One module
per analysis, run in this order on a shared :class:`~loopc.analyzer.context.Ctx`:

1. :mod:`~loopc.analyzer.loops` — cycles outside counted loops (networkx
   SCCs), a topological order of the rest (pass 10);
2. :mod:`~loopc.analyzer.scopes` — the linear scope-typing pass: fork/join
   pairing and nesting, cross-scope joins, double arrival, bypassed
   branches, merges without a join, scope ingress and leaks, loop back
   edges, succeeded Ends inside scopes (passes 6, 8, 9, 10);
3. :mod:`~loopc.analyzer.fanout` — fan-out joins and nesting (pass 9);
4. :mod:`~loopc.analyzer.terminals` — lowered failure routes (pass 6);
5. :mod:`~loopc.analyzer.switches` — first_match order, defaults (pass 7);
6. :mod:`~loopc.analyzer.effects` — Run-state read/write sets and races
   (pass 11), with :mod:`~loopc.analyzer.ordering` for accesses a
   condition wait orders after the concurrent writes;
7. :mod:`~loopc.analyzer.consistency` — outcome-port/callback consistency
   (pass 12).

Every analysis is linear or near-linear in nodes + edges (stack depth is a
factor where stacks are compared).  Codes LP41xx–LP47xx
(:mod:`loopc.codes.analysis`).  :func:`loopc.analyzer.bench.budget_plan`
builds the 512-node / 2,048-edge benchmark plan.
"""
from __future__ import annotations

from loopc.analyzer.facts import (
    FAIL_BRANCH, FAIL_PLAN, ITEM_FAILED, NEVER, Analysis, Effects, Sink,
)
from loopc.compiler.model import Plan
from loopc.compiler.report import Reporter
from loopc.compiler.scopemap import ScopeMap

__all__ = [
    "Analysis", "Effects", "Sink", "analyze",
    "FAIL_PLAN", "FAIL_BRANCH", "ITEM_FAILED", "NEVER",
]


def analyze(plan: Plan, scopes: ScopeMap, reporter: Reporter) -> Analysis:
    """Run passes 6–12 (docs/language.md#compiler-passes) on ``plan`` and report on ``reporter``.

    ``scopes`` is the scope model the pipeline built once for this check
    (:func:`loopc.compiler.scopemap.build_scope_map`): the scope-typing proof
    takes its frames, owners and closers from it and, when no error is
    reported, has proven its stacks.  Returns an :class:`Analysis` whose
    ``sound`` is false when an error was reported.  Never raises on a
    well-typed :class:`Plan`, whatever its graph defects (the driver guards
    it anyway).  Only nodes reachable from the entry are analysed (the graph
    pass reports the others).
    """
    from loopc.analyzer.consistency import check_consistency
    from loopc.analyzer.context import Ctx
    from loopc.analyzer.effects import EffectAnalysis
    from loopc.analyzer.fanout import check_fan_outs
    from loopc.analyzer.loops import find_cycles
    from loopc.analyzer.scopes import type_scopes
    from loopc.analyzer.switches import check_switches
    from loopc.analyzer.terminals import failure_routes

    ctx = Ctx(plan, reporter)
    cut, order = find_cycles(ctx)
    if cut:
        # An edge closing a cycle outside every loop (LP4501) is the defect:
        # the branches it leaves are not also "never reach their join" (LP4310).
        from loopc.compiler.report import scope_entity

        for eid in cut:
            for frame in scopes.stack(eid, edge=True):
                reporter.taint(scope_entity(frame.owner, frame.branch))
    typing = type_scopes(ctx, scopes, cut, order)
    check_fan_outs(ctx, typing)
    routes, ends = failure_routes(ctx, typing.node_stacks, typing.edge_stacks, order)
    check_switches(ctx, order)
    eff = EffectAnalysis(ctx, typing.node_stacks, typing.node_taint,
                         typing.edge_stacks, typing.edge_taint, order)
    eff.run()
    check_consistency(ctx, order)
    return Analysis(
        failure_routes=routes,
        end_routes=ends,
        node_effects=eff.node_eff,
        edge_effects=eff.edge_eff,
        back_edges=ctx.back_edges,
        order=tuple(order),
        sound=ctx.errors == 0,
    )
