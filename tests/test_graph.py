"""Graph basics pass (loopc.compiler.graph, LP4001–LP4008; seed 004 §4.3, §5
passes 3 and 6)."""
from __future__ import annotations

from pathlib import Path

import pytest

from loopc import codes
from loopc.compiler import graph, schema
from loopc.compiler.model import Plan
from loopc.compiler.report import Reporter
from loopc.compiler.yamlload import load

FIXTURES = Path(__file__).parent / "fixtures" / "graph"
H = "apiVersion: loop.plan/v1\nkind: PlanVersion\ninput: {}\noutput: {}\n"


def build(src: str, r: Reporter) -> Plan:
    plan = schema.build_plan(load(src, r), r)
    assert plan is not None
    return plan


def run(src: str, *, schema_clean: bool = True) -> tuple[bool, list[str], Reporter]:
    """Schema pass then graph pass; returns (sound, sorted LP40xx findings as
    ``line:col CODE``, reporter).  Asserts the schema pass was silent unless
    told otherwise."""
    r = Reporter()
    plan = build(src, r)
    if schema_clean:
        assert r.diagnostics == [], [(d.code, d.message) for d in r.diagnostics]
    ok = graph.check_graph(plan, r)
    got = sorted(f"{d.span.line}:{d.span.column} {d.code}" for d in r.diagnostics if d.code.startswith("LP40"))
    return ok, got, r


def fixture_graph_codes(path: Path) -> list[str]:
    """LP40xx findings of the graph pass alone on a fixture."""
    _, got, _ = run(path.read_text())
    return got


def expected(path: Path) -> list[str]:
    out = path.with_suffix(".out")
    return sorted(l.strip() for l in out.read_text().splitlines() if l.strip() and not l.startswith("#"))


FIXTURE_FILES = sorted(FIXTURES.glob("*.yaml"))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[p.stem for p in FIXTURE_FILES])
def test_fixture_graph_findings(path: Path) -> None:
    assert fixture_graph_codes(path) == [l for l in expected(path) if " LP40" in l]


def test_every_graph_code_has_failing_and_passing_fixture() -> None:
    failing = set()
    clean = [p for p in FIXTURE_FILES if not expected(p)]
    for p in FIXTURE_FILES:
        failing |= {l.split()[1] for l in expected(p)}
    ours = {c.code for c in codes.all_codes() if c.code.startswith("LP40")}
    assert ours <= failing
    assert len(clean) >= 5


@pytest.mark.parametrize("code", [c for c in codes.all_codes() if c.code.startswith("LP40")],
                         ids=lambda c: c.code)
def test_registry_examples(code) -> None:
    _, got, _ = run(code.example)
    assert code.code in {g.split()[1] for g in got}, got
    ok, got, _ = run(code.fixed)
    assert got == [] and ok


# ---------------------------------------------------------------------------
# Rules in detail
# ---------------------------------------------------------------------------

NOTIFY = """  - id: notify
    type: send_message
    sendMessage: {target: "#r", text: "x", completion: sent}
"""
BADN = """  - id: notify
    type: send_message
    colour: red
    sendMessage: {target: "#r", text: "x", completion: sent}
"""
DONE = """  - id: done
    type: end
    end: {status: succeeded}
"""


def plan(entry: str, nodes: str, edges: str, extra: str = "") -> str:
    return H + extra + f"entry: {entry}\nnodes:\n{nodes}edges:\n{edges}"


def e(eid: str, a: str, p: str, b: str, tp: str | None = None) -> str:
    t = f", port: {tp}" if tp else ""
    return f"  - {{id: {eid}, from: {{node: {a}, port: {p}}}, to: {{node: {b}{t}}}}}\n"


def test_entry_missing_suggests_and_fixes() -> None:
    ok, got, r = run(plan("notfy", NOTIFY + DONE, e("e1", "notify", "completed", "done")))
    assert not ok and got == ["5:8 LP4001"]
    d = r.diagnostics[0]
    assert "did you mean `notify`" in d.message
    assert d.fix and d.fix.edits[0].new_text == "notify" and d.fix.edits[0].span.column == 8 and d.fix.edits[0].span.line == 5


def test_entry_naming_a_malformed_node_is_silent() -> None:
    ok, got, r = run(plan("notify", BADN + DONE, e("e1", "notify", "completed", "done")),
                     schema_clean=False)
    assert not ok and got == [] and [d.code for d in r.diagnostics] != []


def test_dangling_endpoints_and_malformed_silence() -> None:
    src = plan("notify", NOTIFY + DONE,
               e("e1", "notify", "completed", "dnoe") + e("e2", "ghost", "completed", "done"))
    ok, got, r = run(src)
    assert not ok
    assert got == ["14:64 LP4002", "15:27 LP4002"]
    msgs = sorted(d.message for d in r.diagnostics)
    assert "did you mean `done`" in msgs[0] or "did you mean `done`" in msgs[1]
    # endpoint naming a node the schema pass rejected: silent, but not sound
    ok, got, _ = run(plan("notify", NOTIFY + DONE + """  - id: gone
    type: end
    end: {status: succeeded, colour: red}
""", e("e1", "notify", "completed", "done") + e("e2", "notify", "failed", "gone")), schema_clean=False)
    assert not ok and got == []


def test_unknown_source_ports() -> None:
    src = plan("hold", """  - id: hold
    type: wait
    wait: {condition: "true"}
""" + DONE + """  - id: f
    type: end
    end: {status: failed, code: f}
""", e("e1", "hold", "completed", "done") + e("e2", "hold", "timed_out", "f")
        + e("e3", "done", "completed", "f") + e("e4", "hold", "approved", "f"))
    ok, got, r = run(src)
    assert not ok
    assert [g.split()[1] for g in got] == ["LP4003"] * 3
    text = " | ".join(d.message for d in r.diagnostics)
    assert "`timed_out` exists only on a wait with a `timeout`" in text
    assert "an End has no source ports" in text
    assert "`approved` is not a source port of wait `hold`" in text


def test_timed_out_with_timeout_is_fine() -> None:
    src = plan("hold", """  - id: hold
    type: wait
    wait: {condition: "true", timeout: P1D}
""" + DONE + """  - id: f
    type: end
    end: {status: failed, code: f}
""", e("e1", "hold", "completed", "done") + e("e2", "hold", "timed_out", "f"))
    assert run(src)[:2] == (True, [])


def test_unknown_target_port_and_loop_ports() -> None:
    ok, got, r = run(plan("notify", NOTIFY + DONE, e("e1", "notify", "completed", "done", "brake")))
    assert not ok and got == ["14:76 LP4003"]
    assert "target ports are `in`" in r.diagnostics[0].message


def test_unknown_port_suggests_close_name() -> None:
    ok, got, r = run(plan("notify", NOTIFY + DONE, e("e1", "notify", "complete", "done")))
    assert got == ["14:41 LP4003"]
    d = r.diagnostics[0]
    assert "did you mean `completed`" in d.message and d.fix.edits[0].new_text == "completed"


def test_second_edge_from_one_port() -> None:
    src = plan("notify", NOTIFY + DONE + """  - id: other
    type: end
    end: {status: succeeded}
""", e("e1", "notify", "completed", "done") + e("e2", "notify", "completed", "other"))
    ok, got, r = run(src)
    assert ok and got == ["18:41 LP4004"]
    d = r.diagnostics[0]
    assert d.edge == "e2" and d.related[0].span.line == 17


def test_multiple_edges_into_in_and_continue_are_fine() -> None:
    src = plan("split", """  - id: split
    type: fork
    fork: {branches: [a, b]}
  - id: j
    type: join
    join: {forkId: split, mode: any, result: {}, merge: {}}
""" + DONE, e("e1", "split", "a", "j") + e("e2", "split", "b", "j") + e("e3", "j", "completed", "done"))
    assert run(src)[:2] == (True, [])


def test_unrouted_ports_each_reported_where_declared() -> None:
    """An authored port (a case's ``port``, the ``default``) is reported at
    its declaration, with the switch's id as a related location."""
    src = plan("sw", """  - id: sw
    type: switch
    switch:
      mode: all_match
      cases: [{port: a, when: "true"}, {port: b, when: "false"}]
      default: c
""" + DONE, e("e1", "sw", "a", "done"))
    ok, got, r = run(src)
    assert ok and got == ["11:47 LP4005", "12:16 LP4005"]
    assert sorted(d.message.split("`")[1] for d in r.diagnostics) == ["b", "c"]
    assert all(rel.span is not None and rel.span.line == 7 for d in r.diagnostics for rel in d.related)


@pytest.mark.parametrize("ntype,config,ports", [
    ("fork", "fork: {branches: [x, y]}", ["x", "y"]),
    ("fan_out", "fanOut: {items: {ref: input.w}}", ["item"]),
    ("loop", "loop: {mode: counted, iterations: 2, state: {}, init: {}}", ["body", "done"]),
    ("join", "join: {forkId: other, mode: all, result: {}, merge: {}}", ["completed"]),
    ("request_approval", "requestApproval: {assignee: x, summary: y}", ["approved", "rejected"]),
    ("set_variable", "setVariable: {assign: {}}", ["completed"]),
    ("wait", "wait: {condition: \"true\", timeout: P1D}", ["completed"]),
])
def test_must_route_ports(ntype: str, config: str, ports: list[str]) -> None:
    src = plan("n", f"  - id: n\n    type: {ntype}\n    {config}\n" + DONE, "  []\n")
    _, got, r = run(src)
    unrouted = sorted(d.message.split("`")[1] for d in r.diagnostics if d.code == "LP4005")
    assert unrouted == sorted(ports)


def test_unknown_out_port_suppresses_unrouted_on_that_node() -> None:
    _, got, _ = run(plan("notify", NOTIFY + DONE, e("e1", "notify", "complet", "done")))
    assert [g.split()[1] for g in got] == ["LP4003"]


def test_rejected_edge_still_routes_its_port() -> None:
    src = plan("notify", NOTIFY + DONE,
               "  - {id: e_bad, from: {node: notify, port: completed}, to: {node: done}, colour: red}\n")
    ok, got, r = run(src, schema_clean=False)
    assert got == [] and ok and r.diagnostics  # only the schema finding
    # a rejected edge without readable endpoints: routing and reachability stay silent
    src = plan("notify", NOTIFY + DONE, "  - {id: e_bad, to: {node: done}}\n")
    ok, got, r = run(src, schema_clean=False)
    assert got == [] and r.diagnostics


def test_dangling_source_typo_does_not_cascade() -> None:
    src = plan("notify", NOTIFY + """  - id: second
    type: send_message
    sendMessage: {target: "#r", text: "y", completion: sent}
""" + DONE, e("e1", "notify", "completed", "second") + e("e2", "secnd", "completed", "done"))
    _, got, _ = run(src)
    assert [g.split()[1] for g in got] == ["LP4002"]


def test_loop_continue_required() -> None:
    body = """  - id: lp
    type: loop
    loop: {mode: counted, iterations: 2, state: {}, init: {}}
  - id: step
    type: set_variable
    setVariable: {assign: {}}
""" + DONE
    src = plan("lp", body, e("e1", "lp", "body", "step") + e("e2", "step", "completed", "lp", "break")
               + e("e3", "lp", "done", "done"))
    ok, got, r = run(src)
    assert ok and got == ["7:9 LP4008"]
    src = plan("lp", body, e("e1", "lp", "body", "step") + e("e2", "step", "completed", "lp", "continue")
               + e("e3", "lp", "done", "done"))
    assert run(src)[:2] == (True, [])
    # a typo on the incoming port is one defect, not two
    src = plan("lp", body, e("e1", "lp", "body", "step") + e("e2", "step", "completed", "lp", "contine")
               + e("e3", "lp", "done", "done"))
    assert [g.split()[1] for g in run(src)[1]] == ["LP4003"]


def test_unreachable_reported_once_per_node() -> None:
    src = plan("notify", NOTIFY + DONE + """  - id: a
    type: set_variable
    setVariable: {assign: {}}
  - id: b
    type: end
    end: {status: failed, code: f}
""", e("e1", "notify", "completed", "done") + e("e2", "a", "completed", "b") + e("e3", "a", "completed", "b"))
    ok, got, _ = run(src)
    assert sorted(g.split()[1] for g in got) == ["LP4004", "LP4006", "LP4006"]
    assert "13:9 LP4006" in got and "16:9 LP4006" in got


def test_no_succeeded_end_and_unreachable_succeeded_end() -> None:
    fail_end = """  - id: stop
    type: end
    end: {status: failed, code: f}
"""
    ok, got, _ = run(plan("notify", NOTIFY + fail_end, e("e1", "notify", "completed", "stop")))
    assert got == ["5:8 LP4007"]
    # the succeeded End exists but is unreachable: reported once, on it
    _, got, r = run(plan("notify", NOTIFY + fail_end + DONE, e("e1", "notify", "completed", "stop")))
    assert got == ["13:9 LP4006"] and "no succeeded End is reachable" in r.diagnostics[0].message


def test_reachability_through_malformed_node_is_excused() -> None:
    src = plan("notify", NOTIFY + """  - id: mid
    type: set_variable
    setVariable: {assign: {}, colour: red}
""" + DONE, e("e1", "notify", "completed", "mid") + e("e2", "mid", "completed", "done"))
    ok, got, _ = run(src, schema_clean=False)
    assert got == [] and not ok


def test_cycles_and_garbage_do_not_crash() -> None:
    src = plan("a", """  - id: a
    type: set_variable
    setVariable: {assign: {}}
  - id: b
    type: set_variable
    setVariable: {assign: {}}
""", e("e1", "a", "completed", "b") + e("e2", "b", "completed", "a"))
    ok, got, _ = run(src)
    assert ok and got == ["5:8 LP4007"]  # cycles are the analyzer's


@pytest.mark.timeout(60)  # a hang guard; speed: benchmarks/
def test_large_graph_is_linear() -> None:
    n = 511
    nodes = "".join(f"  - {{id: n{i}, type: set_variable, setVariable: {{assign: {{}}}}}}\n"
                    for i in range(n)) + DONE
    edges = "".join(e(f"e{i}", f"n{i}", "completed", f"n{i + 1}" if i + 1 < n else "done") for i in range(n))
    p = build(plan("n0", nodes, edges), Reporter())
    r = Reporter()
    assert graph.check_graph(p, r) and r.diagnostics == []


def test_broken_top_level_lists_do_not_cascade() -> None:
    # `edges` is not a list: the schema pass reports it; no routing/reachability noise
    ok, got, r = run(H + "entry: notify\nnodes:\n" + NOTIFY + DONE + "edges: {}\n", schema_clean=False)
    assert got == [] and r.diagnostics
    # `nodes` is not a list (the schema pass gives up; a caller building the
    # model by other means gets no "entry names no node" either)
    r = Reporter()
    doc = load(H + "entry: notify\nnodes: 3\nedges: []\n", r)
    p = Plan({}, {}, {}, "notify", {}, {}, src=doc.root)
    assert graph.check_graph(p, r) is False and r.diagnostics == []


# -- a missing node is one LP4002, its did-you-mean only a node that fits --------

_CASCADE = Path(__file__).parent / "fixtures" / "cascade"


def _lp4002(src: str) -> list:
    import loopc

    return loopc.check_source(src).diagnostics


def test_a_missing_node_named_by_several_edges_is_one_lp4002() -> None:
    (d,) = _lp4002((_CASCADE / "deleted_node.yaml").read_text())
    assert d.code == "LP4002" and d.message.count("`review`") == 1 and "3 edges name it" in d.message
    assert [r.message for r in d.related] == ["edge `e_reviewed` also starts at it",
                                              "edge `e_review_failed` also starts at it"]
    # `reviewed` and `review_failed` are close, but Ends: no edge can leave them
    assert "did you mean" not in d.message and d.fix is None


def test_a_node_misspelt_on_every_edge_is_one_lp4002_whose_fix_renames_them_all() -> None:
    import loopc
    from loopc.lint.fixes import apply_fixes

    good = (_CASCADE / "deleted_node_ok.yaml").read_text()
    bad = good.replace("node: review}", "node: reveiw}").replace("node: review,", "node: reveiw,")
    (d,) = _lp4002(bad)
    assert d.code == "LP4002" and d.message.endswith("3 edges name it; did you mean `review`?")
    assert len(d.fix.edits) == 3
    fixed, n = apply_fixes(bad, [d], unsafe=True)
    assert n == 1 and fixed == good and loopc.check_source(fixed).ok


@pytest.mark.parametrize("edges,hint", [
    # the source port of the close node already has its edge: renaming would make LP4004
    (e("e1", "notify", "completed", "done") + e("e2", "notfy", "completed", "done"), None),
    # a close End cannot be an edge's source
    (e("e1", "notify", "completed", "done") + e("e2", "dnoe", "completed", "done"), None),
    # an edge from a node to itself is never the meant edge
    (e("e1", "notify", "completed", "notfy"), None),
    # the near miss: the close node fits
    (e("e1", "notify", "completed", "dnoe"), "done"),
])
def test_the_lp4002_did_you_mean_offers_only_a_node_that_fits(edges: str, hint: str | None) -> None:
    _, got, r = run(plan("notify", NOTIFY + DONE, edges))
    (d,) = [d for d in r.diagnostics if d.code == "LP4002"]
    assert (f"did you mean `{hint}`?" in d.message and d.fix is not None) if hint else \
        ("did you mean" not in d.message and d.fix is None), d.message


def test_an_unconnected_node_is_one_lp4006_unless_it_is_a_missing_edge_s_target() -> None:
    second = """  - id: second
    type: send_message
    sendMessage: {target: "#r", text: "y", completion: sent}
"""
    # nothing leads to `second` or leaves it: one LP4006, no LP4005 for its port
    ok, got, r = run(plan("notify", NOTIFY + second + DONE, e("e1", "notify", "completed", "done")))
    assert got == ["10:9 LP4006"] and "not connected" in r.diagnostics[0].message
    # `notify`'s port is unrouted too: `second` is the probable target of that
    # missing edge (not unreachable), and its own port is then reported
    third = second.replace("second", "third")
    ok, got, r = run(plan("notify", NOTIFY + third + second, e("e1", "notify", "completed", "third")))
    assert [(d.code, d.node) for d in r.diagnostics] == [("LP4005", "third"), ("LP4005", "second")], got


def test_graph_did_you_means_follow_the_one_spelling_rule() -> None:
    """Node ids and ports are suggested by the rule keys and values are
    (loopc.compiler.spelling.suggest): a short id with two letters swapped
    is found, though difflib's ratio misses it."""
    qa = DONE.replace("id: done", "id: qa")
    _, got, r = run(plan("notify", NOTIFY + qa, e("e1", "notify", "completed", "aq")))
    (d,) = r.diagnostics
    assert d.code == "LP4002" and d.message.endswith("did you mean `qa`?") and d.fix is not None
    assert graph.suggest("aq", ["qa", "done"]) == "qa" and graph.suggest("", ["qa"]) is None
