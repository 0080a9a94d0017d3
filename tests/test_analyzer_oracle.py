"""The analyzer against an independent oracle (issue 3, "The oracle").

Random plans — well-nested ones and deliberately broken ones — are checked
by the analyzer and explored exhaustively by :mod:`tests.explorer` (a
token game over the runtime lineage semantics).  Required:

* no false accepts, ever: when the analyzer reports no error, the explorer
  finds no bad state (an explorer that hits its state cap is inconclusive,
  never a pass);
* well-nested plans are all accepted and all safe (false rejects: zero);
* on broken plans, false rejects (analyzer error, explorer safe) are
  counted and printed — they are the seed's structural rules the token game
  does not model (cycles that happen never to run, first_match order,
  scopes whose leak an enclosing `any` join happens to cancel, a merge of an
  all_match case with its exclusive default, a fan-out without a join that
  an `any` join masks);
* plans that write, wait on and read Run state: no false accepts either —
  the explorer runs the state values and the waits and finds every race
  (two tokens that can step now, one writing what the other accesses), so
  the wait rule of docs/language.md "Concurrency" is judged by behaviour;
  plans accepted only thanks to that rule are counted and must occur;
* partial-order reduction agrees with full interleaving (with Run state too);
* dominators (networkx) as a second opinion: on every accepted plan each
  join's owner dominates the join and every node of the owner's scope; on
  well-nested plans the front end's structural scope map (forward reach)
  gives every node the same stack as the analyzer's scope typing.

Hypothesis runs a fixed, derandomized profile so CI never goes red by
chance; plans come from ``random.Random`` instances hypothesis supplies.
"""
from __future__ import annotations

import pytest

import random

import networkx as nx
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from unittest import mock

from explorer import Result, broken, explore, proof_stacks, sound_front, well_nested, with_state

from loopc.analyzer.ordering import Ordering

from loopc.compiler.model import End, Join
from loopc.compiler.scopemap import build_scope_map

PROFILE = dict(derandomize=True, deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
MAX_STATES = 6000

STATS: dict[str, int] = {}


def _count(key: str) -> None:
    STATS[key] = STATS.get(key, 0) + 1


@settings(max_examples=120, **PROFILE)
@given(st.randoms(use_true_random=False))
def test_well_nested_plans_are_accepted_and_safe(rng: random.Random) -> None:
    src = well_nested(rng)
    f = sound_front(src)
    assert f is not None, src  # the generator only builds plans that pass graph basics
    assert f.errors == [], (f.errors, [d.message for d in f.diagnostics], src)
    res = explore(f.plan, max_states=MAX_STATES)
    assert res.verdict != "bad", (res.bad, src)
    _count(f"well/{res.verdict}")
    _second_opinion(f)
    # the one scope model (the structural map, forward reach) agrees with the
    # analyzer's scope-typing proof on every node and edge of a well-nested
    # plan (failed Ends shared by several scopes included: common prefix)
    sm = build_scope_map(f.plan)
    nodes, edges = proof_stacks(f.plan, sm)
    for nid, stack in nodes.items():
        assert sm.node_scopes[nid] == stack, (nid, sm.node_scopes[nid], stack)
    for eid, stack in edges.items():
        assert sm.edge_scopes[eid] == stack, (eid, sm.edge_scopes[eid], stack)


@settings(max_examples=260, **PROFILE)
@given(st.randoms(use_true_random=False))
@pytest.mark.slow
def test_no_false_accepts_on_broken_plans(rng: random.Random) -> None:
    src, mutations = broken(rng)
    f = sound_front(src)
    assume(f is not None)
    res = explore(f.plan, max_states=MAX_STATES)
    if not f.errors:
        assert res.verdict != "bad", (mutations, res.bad, src)
        _second_opinion(f)
    verdict = "reject" if f.errors else "accept"
    _count(f"broken/{verdict}/{res.verdict}")


def _reduced_and_full(src: str) -> tuple[Result, Result]:
    """The explorer's results on ``src`` with and without partial-order
    reduction; the example is discarded when the front end refuses the plan
    or either exploration is inconclusive."""
    f = sound_front(src)
    assume(f is not None)
    por = explore(f.plan, max_states=MAX_STATES)
    full = explore(f.plan, max_states=20000, por=False)
    assume("inconclusive" not in (por.verdict, full.verdict))
    return por, full


@settings(max_examples=40, **PROFILE)
@given(st.randoms(use_true_random=False), st.booleans())
@pytest.mark.slow
def test_partial_order_reduction_agrees_with_full_exploration(rng: random.Random, good: bool) -> None:
    src = well_nested(rng, budget=9) if good else broken(rng, budget=9)[0]
    por, full = _reduced_and_full(src)
    assert por.verdict == full.verdict, (por, full, src)


@settings(max_examples=200, **PROFILE)
@given(st.randoms(use_true_random=False))
@pytest.mark.slow
def test_no_false_accepts_on_run_state_plans(rng: random.Random) -> None:
    """Plans that write, wait on and read Run state (writer/waiter forks,
    one writer per approval decision, writes before forks and in loops):
    when the analyzer reports no error, the explorer — which runs the
    state values and the waits — finds no race and no other bad state.
    Plans accepted only thanks to the wait rule are counted."""
    src = with_state(rng)
    f = sound_front(src)
    assert f is not None, src
    res = explore(f.plan, max_states=MAX_STATES)
    if not f.errors:
        assert res.verdict != "bad", (res.bad, src)
        with mock.patch.object(Ordering, "ordered_frame", lambda self, field, frame: None):
            plain = sound_front(src)
        if plain is not None and "LP4601" in plain.errors:
            _count("state/accept/by_wait_rule")
    verdict = "reject" if f.errors else "accept"
    _count(f"state/{verdict}/{res.verdict}")


@settings(max_examples=25, **PROFILE)
@given(st.randoms(use_true_random=False))
def test_partial_order_reduction_agrees_on_run_state_plans(rng: random.Random) -> None:
    src = with_state(rng, budget=8)
    por, full = _reduced_and_full(src)
    assert por.kinds == full.kinds, (por, full, src)


def _second_opinion(f) -> None:
    """Dominators: in an accepted plan every join's owner dominates it and
    every node of the owner's scope; no succeeded End sits in a scope."""
    plan, an = f.plan, f.analysis
    g = nx.DiGraph()
    g.add_nodes_from(plan.nodes)
    g.add_edges_from((e.from_node, e.to_node) for e in plan.edges.values() if e.id not in an.back_edges)
    idom = nx.immediate_dominators(g, plan.entry)

    def dominates(a: str, b: str) -> bool:
        while b != a:
            nxt = idom.get(b)  # recent networkx omits the start node
            if nxt is None or nxt == b:
                return False
            b = nxt
        return True

    for n in plan.nodes.values():
        if isinstance(n.config, Join) and n.config.owner in plan.nodes:
            assert dominates(n.config.owner, n.id), (n.id, n.config.owner)
        if isinstance(n.config, End) and n.config.status == "succeeded":
            assert f.scopes.node_scopes.get(n.id, ()) == (), n.id
    for owner in f.scopes.owners:
        for m in f.scopes.members(owner):
            assert dominates(owner, m), (owner, m)


def test_report_rates() -> None:
    """Prints the measured rates (``pytest -s``); well-nested false rejects
    must be zero and no broken plan may be a false accept."""
    print("\noracle statistics:", dict(sorted(STATS.items())))
    assert not any(k.startswith("well/") and "reject" in k for k in STATS)
    assert "broken/accept/bad" not in STATS
    assert "state/accept/bad" not in STATS
    if any(k.startswith("state/") for k in STATS):
        assert STATS.get("state/accept/by_wait_rule", 0) > 0  # the wait rule is exercised
    rejects = sum(v for k, v in STATS.items() if k.startswith("broken/reject/") and not k.endswith("inconclusive"))
    false = STATS.get("broken/reject/ok", 0)
    if rejects:
        print(f"broken plans: false-reject rate {false}/{rejects} rejections "
              f"({100 * false / rejects:.1f}%); inconclusive: "
              f"{sum(v for k, v in STATS.items() if k.endswith('inconclusive'))}")
