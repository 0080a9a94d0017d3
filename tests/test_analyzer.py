"""Analyzer unit tests (issue 3): codes, fixtures, facts for lowering,
robustness, determinism, speed.  The oracle lives in
``test_analyzer_oracle.py``; the shared fixture runner (``test_fixtures.py``)
checks every ``tests/fixtures/analysis/*.yaml`` against its ``.out``."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

import loopc
from explorer import broken, explore, front

from loopc import codes
from loopc.analyzer import FAIL_BRANCH, FAIL_PLAN, ITEM_FAILED, NEVER, Sink
from loopc.analyzer.bench import budget_plan
from loopc.codes import analysis as ex

FIXTURES = Path(__file__).parent / "fixtures" / "analysis"
ANALYSIS_CODES = [c for c in codes.all_codes() if "LP4100" < c.code < "LP5000"]


# ---------------------------------------------------------------------------
# registry and fixtures
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("c", ANALYSIS_CODES, ids=[c.code for c in ANALYSIS_CODES])
def test_code_has_failing_fixture_and_near_miss(c: codes.Code) -> None:
    outs = [p for p in FIXTURES.glob("*.out") if f" {c.code}" in p.read_text()]
    assert outs, f"no fixture produces {c.code}"
    for out in outs:
        near = out.with_name(out.stem + "_ok.yaml")
        if out.stem.endswith("_ok"):
            continue  # a warning kept in a near-miss
        assert near.exists(), f"{out.stem} has no near-miss {near.name}"
        assert [l for l in near.with_suffix(".out").read_text().splitlines() if l.strip()] == []


@pytest.mark.parametrize("c", ANALYSIS_CODES, ids=[c.code for c in ANALYSIS_CODES])
def test_registry_example_gives_exactly_its_code(c: codes.Code) -> None:
    res = loopc.check_source(c.example)
    assert [d.code for d in res.diagnostics] == [c.code], [(d.code, d.message) for d in res.diagnostics]
    d = res.diagnostics[0]
    assert d.node or d.edge, "every analyzer finding names its culprit node or edge"
    assert loopc.check_source(c.fixed).diagnostics == ()


def test_failing_fixtures_diagnose_without_other_passes() -> None:
    """The analysis fixtures give the same findings through the analyzer's
    own pipeline (no driver), so they pin the analyzer alone."""
    for p in sorted(FIXTURES.glob("*.yaml")):
        f = front(p.read_text(encoding="utf-8"))
        got = sorted(f"{d.span.line}:{d.span.column} {d.code}" for d in f.diagnostics)
        want = sorted(l.strip() for l in p.with_suffix(".out").read_text().splitlines() if l.strip())
        assert got == want, (p.name, [(d.code, d.message) for d in f.diagnostics])


# ---------------------------------------------------------------------------
# diagnostics content
# ---------------------------------------------------------------------------

def _diag(src: str, code: str):
    res = loopc.check_source(src)
    ds = [d for d in res.diagnostics if d.code == code]
    assert ds, [(d.code, d.message) for d in res.diagnostics]
    return ds[0]


def test_race_reports_both_writers() -> None:
    d = _diag(ex._race_plan("status"), "LP4601")
    assert d.node == "do_a" and "do_b" in d.message
    assert len(d.related) == 1 and "do_b" in d.related[0].message
    assert d.span.line != d.related[0].span.line


def test_cross_scope_names_the_owner() -> None:
    d = _diag(codes.get("LP4302").example, "LP4302")
    assert d.edge == "e_audit" and d.node == "joined"
    assert any("split" in r.message for r in d.related)


def test_owner_key_fix_renames_the_key() -> None:
    d = _diag(codes.get("LP4311").example, "LP4311")
    assert d.fix is not None and d.fix.edits[0].new_text == "forkId"


def test_owner_typo_is_suggested() -> None:
    d = _diag(codes.get("LP4312").example, "LP4312")
    assert "did you mean `split`" in d.message
    assert d.fix is not None and d.fix.edits[0].new_text == "split"


def test_cycle_into_loop_in_suggests_continue() -> None:
    d = _diag((FIXTURES / "loop_cycle_into_in.yaml").read_text(), "LP4501")
    assert "`polish` → `draft` → `polish`" in d.message
    assert d.fix is not None and "port: continue" in d.fix.edits[0].new_text


def test_independent_findings_are_all_reported() -> None:
    """Two unrelated defects give two diagnostics (aggregate, seed 004 §5)."""
    src = ex._fork_plan(b_to="done", head=ex._STATE_HEAD,
                        a_node=ex._setvar("do_a", '{status: "a"}'), b_node=ex._setvar("do_b", '{status: "b"}'))
    assert sorted(d.code for d in loopc.check_source(src).diagnostics) == ["LP4101", "LP4601"]


# ---------------------------------------------------------------------------
# facts for lowering
# ---------------------------------------------------------------------------

def test_failure_sinks() -> None:
    f = front(codes.get("LP4310").fixed)  # fork split: do_a, do_b → joined
    an = f.analysis
    assert an.failure_routes[("do_a", "failed")] == Sink(FAIL_BRANCH, "split", "a", "joined")
    assert an.failure_routes[("do_b", "failed")] == Sink(FAIL_BRANCH, "split", "b", "joined")
    assert an.failure_routes[("joined", "failed")] == Sink(FAIL_PLAN)
    fo = front(ex._FAN_OK).analysis
    assert fo.failure_routes[("work", "failed")] == Sink(ITEM_FAILED, "dispatch", None, "collected")
    assert fo.failure_routes[("plan", "failed")] == Sink(FAIL_PLAN)
    assert fo.failure_routes[("collected", "failed")] == Sink(NEVER)
    lp = front(ex._LOOP_OK).analysis
    assert lp.failure_routes[("draft", "failed")] == Sink(FAIL_PLAN)  # loop body: fails the Plan


def test_failed_end_shared_across_scopes_has_per_arrival_sinks() -> None:
    f = front((FIXTURES / "seed_all_match_ok.yaml").read_text())
    an = f.analysis
    assert an.end_routes["e_notify_failed"] == Sink(FAIL_PLAN)
    assert an.end_routes["e_page_failed"] == Sink(FAIL_BRANCH, "route", "page", "handled")
    # its stack is the scopes all its arrivals share (none here)
    assert f.scopes.node_scopes["failed"] == ()
    assert f.scopes.is_ambiguous("failed")  # context checks stay silent on it


def test_scope_facts() -> None:
    f = front((FIXTURES / "seed_fork_in_loop_ok.yaml").read_text())
    an, sm = f.analysis, f.scopes
    loop = sm.owners["polish"]
    assert loop.kind == "loop" and loop.closer is None and sm.stack("polish") == ()
    assert set(sm.members("polish")) >= {"split", "legal_ok", "security_ok", "joined"}
    assert "e_next" in sm.members("polish", edges=True)  # the back edge is inside the body
    fork = sm.owners["split"]
    assert fork.closer == "joined" and fork.branches == ("legal", "security")
    assert [s.owner for s in sm.stack("split")] == ["polish"]
    assert sm.members("split", "legal") == ("legal_ok",)
    assert "e_legal_ok" in sm.members("split", "legal", edges=True)
    assert an.failure_routes[("legal_ok", "failed")] == Sink(FAIL_BRANCH, "split", "legal", "joined")
    assert an.end_routes["e_legal_no"] == Sink(FAIL_BRANCH, "split", "legal", "joined")
    assert an.back_edges == frozenset({"e_next"})
    fan = front(ex._FAN_OK).scopes
    assert fan.owners["dispatch"].kind == "fan_out" and fan.owners["dispatch"].closer == "collected"
    assert fan.members("dispatch") == ("work",)


def test_effects() -> None:
    an = front((FIXTURES / "wait_sync_ok.yaml").read_text()).analysis
    assert an.effects_of("record").writes == frozenset({"approved"})
    assert an.effects_of("wait_approval").wait_reads == frozenset({"approved"})
    assert an.effects_of("wait_approval").reads == frozenset()
    race = front((FIXTURES / "state_race_bind.yaml").read_text()).analysis
    assert race.effects_of("announce").reads == frozenset({"status"})
    assert not race.sound


def test_all_match_default_never_races_with_a_case() -> None:
    src = (FIXTURES / "state_race_all_match.yaml").read_text()
    # the default branch writes what a case branch writes: exclusive, no race
    src = src.replace('sendMessage: {target: "#log", text: "Logged", completion: sent}',
                      'sendMessage: {target: "#log", text: "Logged {{ run.state.owner }}", completion: sent}')
    src = src.replace('assign: {owner: "security"}', 'assign: {escalated: true}')
    assert loopc.check_source(src).diagnostics == ()


def test_state_reads_are_extracted_from_every_value_kind() -> None:
    from loopc.analyzer.effects import expr_reads, template_reads, value_reads
    from loopc.compiler.model import ListValue, MapValue, Ref

    assert expr_reads("run.state.a == 'run.state.b' && contains(run.state.c, 'x')") == {"a", "c"}
    assert template_reads("Hi {{ run.state.name }} run.state.not_read") == {"name"}
    assert value_reads(MapValue({"k": ListValue((Ref(("run", "state", "z"), "run.state.z"),))})) == {"z"}
    assert value_reads(Ref(("run", "state"), "run.state")) == {"*"}
    assert expr_reads("run.state.a ==") == {"a"}  # unparsable: lexical fallback


# ---------------------------------------------------------------------------
# robustness and determinism
# ---------------------------------------------------------------------------

def test_mutated_plans_never_crash_the_analyzer() -> None:
    """Broken plans, including ones graph basics only partly accept (several
    edges on one port, unreachable nodes), diagnose and never raise."""
    for seed in range(150):
        src, _ = broken(random.Random(seed))
        res = loopc.check_source(src)
        assert not any(d.code == "LP5999" for d in res.diagnostics), (seed, [d.message for d in res.diagnostics])


def test_analysis_is_deterministic_and_order_independent() -> None:
    src = (FIXTURES / "join_double_arrival.yaml").read_text()
    a = [(d.code, d.span, d.message) for d in loopc.check_source(src).diagnostics]
    b = [(d.code, d.span, d.message) for d in loopc.check_source(src).diagnostics]
    assert a == b
    # reversing the edge list changes nothing but positions
    head, edges = src.split("edges:\n")
    lines = [l for l in edges.splitlines() if l.strip()]
    rev = head + "edges:\n" + "\n".join(reversed(lines)) + "\n"
    assert [d.code for d in loopc.check_source(rev).diagnostics] == [c for c, _, _ in a]


def test_explorer_agrees_with_fixtures_on_control_flow() -> None:
    """The oracle itself: every control-flow failing fixture is unsafe to
    the explorer and every near-miss safe (data rules are not modelled)."""
    data_rules = {"LP4201", "LP4202", "LP4203", "LP4311", "LP4406", "LP4601", "LP4602", "LP4603", "LP4310",
                  "LP4701", "LP4702"}
    for p in sorted(FIXTURES.glob("*.yaml")):
        f = front(p.read_text(encoding="utf-8"))
        res = explore(f.plan)
        errors = set(f.errors)
        if not errors:
            assert res.verdict == "ok", (p.name, res)
        elif not errors & data_rules:
            assert res.verdict == "bad", (p.name, res)


# ---------------------------------------------------------------------------
# speed
# ---------------------------------------------------------------------------

@pytest.mark.timeout(60)  # a hang guard; speed: benchmarks/analyzer_rules.py
def test_budget_plan_is_sound_and_fast() -> None:
    """512 nodes / 2,048 edges with nested forks and loops: clean, and the
    analysis alone stays far below the parse (reported by the benchmark)."""
    from loopc import analyzer
    from loopc.compiler import graph, schema, scopemap, yamlload
    from loopc.compiler.report import Reporter

    src = budget_plan()
    r = Reporter()
    plan = schema.build_plan(yamlload.load(src, r), r)
    assert len(plan.nodes) == 512 and len(plan.edges) == 2048
    assert graph.check_graph(plan, r)
    sm = scopemap.build_scope_map(plan)
    r2 = Reporter()
    an = analyzer.analyze(plan, sm, r2)
    assert r.diagnostics == [] and r2.diagnostics == [] and an.sound
    assert max(len(s) for s in sm.node_scopes.values()) >= 3


def test_static_wait_message_fits_each_case() -> None:
    """LP4603 says what the wait does in each case: the condition keeps its
    value once the wait starts, so it passes at once or takes its timeout
    route (or waits forever without one); a field set before the wait is
    named as such, never promised to time out."""
    timed = _diag((FIXTURES / "wait_condition_static.yaml").read_text(), "LP4603").message
    assert "no set_variable writes it" in timed
    assert "if that value is true the wait passes at once, otherwise it takes its `timed_out` route" in timed
    before = _diag((FIXTURES / "wait_condition_set_before.yaml").read_text(), "LP4603").message
    assert "set_variable `mark` writes it, but never while the wait waits" in before
    assert "otherwise it waits forever (it has no `timeout`)" in before and "timed_out" not in before
    for m in (timed, before):
        assert m.endswith("in a branch that runs concurrently with `" + ("do_a" if m is timed else "hold") + "`")


def test_token_place_reads_as_a_sentence() -> None:
    """LP4302/LP4403/LP4404/LP4504 say where the token is: "in" a scope, or
    "outside every scope"."""
    from loopc.analyzer.scopes import token_place
    from loopc.compiler.scopemap import Scope

    d = _diag((FIXTURES / "loop_back_edge_outside_body.yaml").read_text(), "LP4504")
    assert "(the token is outside every scope)" in d.message
    st = (Scope("fork", "split", "a"), Scope("fan_out", "dispatch", "item"))
    assert token_place(st) == "the token is in branch `a` of fork `split` › the item body of fan_out `dispatch`"
    assert token_place(()) == "the token is outside every scope"
