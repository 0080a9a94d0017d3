"""Structural scope map (loopc.compiler.scopemap; seed 004 §4.4, §4.7, §4.8)."""
from __future__ import annotations


import pytest

from loopc.compiler import graph
from loopc.compiler.model import (
    Edge, End, FanOut, Fork, Join, Loop, Node, Plan, Ref, SendMessage,
    SetVariable, Switch, SwitchCase, Expr, Template,
)
from loopc.compiler.report import Reporter
from loopc.compiler.scopemap import Scope, ScopeMap, build_scope_map


# ---------------------------------------------------------------------------
# A compact plan builder.  Node specs:
#   "act"                 send_message          "set"   set_variable
#   "end" / "fail"        succeeded / failed End
#   "fork:a,b"            fork with branches a, b
#   "all:p,q/d"           all_match switch, cases p, q, default d
#   "first:p,q/d"         first_match switch
#   "join:F"              join closing fork/all_match F
#   "fjoin:N"             join closing fan_out N
#   "fan"                 fan_out              "loop"  counted loop
# Edges: "a.port>b" or "a.port>b.continue"; ids e0, e1, ... or "id=a.p>b".
# ---------------------------------------------------------------------------

def _node(nid: str, spec: str) -> Node:
    kind, _, arg = spec.partition(":")
    if kind == "act":
        return Node(nid, "send_message", SendMessage(Template("x"), "sent"))
    if kind == "set":
        return Node(nid, "set_variable", SetVariable({}))
    if kind in ("end", "fail"):
        return Node(nid, "end", End("succeeded" if kind == "end" else "failed"))
    if kind == "fork":
        return Node(nid, "fork", Fork(tuple(arg.split(","))))
    if kind in ("all", "first"):
        cases, _, default = arg.partition("/")
        sc = tuple(SwitchCase(p, Expr("true")) for p in cases.split(","))
        return Node(nid, "switch", Switch("all_match" if kind == "all" else "first_match", sc, default))
    if kind == "join":
        return Node(nid, "join", Join("all", {}, {}, fork_id=arg))
    if kind == "fjoin":
        return Node(nid, "join", Join("all", {}, {}, fan_out_id=arg))
    if kind == "fan":
        return Node(nid, "fan_out", FanOut(Ref(("input", "w"), "input.w")))
    if kind == "loop":
        return Node(nid, "loop", Loop("counted", 2, {}, {}))
    raise ValueError(spec)


def mk(entry: str, nodes: dict[str, str], edges: list[str], malformed: tuple[str, ...] = ()) -> Plan:
    es = {}
    for i, text in enumerate(edges):
        eid, _, text = text.rpartition("=")
        eid = eid or f"e{i}"
        a, _, b = text.partition(">")
        fn, _, fp = a.partition(".")
        tn, _, tp = b.partition(".")
        es[eid] = Edge(eid, fn, fp, tn, tp or "in")
    ns = {k: _node(k, v) for k, v in nodes.items() if k not in malformed}
    return Plan({}, {}, {}, entry, ns, es, malformed_nodes=frozenset(malformed))


def kinds(sm: ScopeMap, eid: str, *, edge: bool = False) -> list[str]:
    """Stack rendered as ['loop L', 'fork F:a', ...]."""
    return [f"{s.kind} {s.owner}" + (f":{s.branch}" if s.branch else "") for s in sm.stack(eid, edge=edge)]


# ---------------------------------------------------------------------------

def test_linear_plan_has_empty_stacks() -> None:
    sm = build_scope_map(mk("a", {"a": "act", "z": "end"}, ["a.completed>z"]))
    assert sm.node_scopes == {"a": (), "z": ()} and sm.edge_scopes == {"e0": ()}
    assert not sm.ambiguous and not sm.unreached


def test_fork_in_loop() -> None:
    p = mk("L", {"L": "loop", "F": "fork:a,b", "x": "act", "y": "act", "J": "join:F", "z": "end"}, [
        "body=L.body>F", "F.a>x", "F.b>y", "xj=x.completed>J", "y.completed>J",
        "back=J.completed>L.continue", "out=L.done>z",
    ])
    sm = build_scope_map(p)
    assert kinds(sm, "L") == [] and kinds(sm, "z") == []
    assert kinds(sm, "F") == ["loop L"]
    assert kinds(sm, "x") == ["loop L", "fork F:a"]
    assert kinds(sm, "y") == ["loop L", "fork F:b"]
    assert kinds(sm, "J") == ["loop L"]
    assert kinds(sm, "body", edge=True) == ["loop L"]
    assert kinds(sm, "xj", edge=True) == ["loop L", "fork F:a"]  # edges into the join are inside
    assert kinds(sm, "back", edge=True) == ["loop L"]             # edge into continue is inside
    assert kinds(sm, "out", edge=True) == []                      # done edge is outside
    assert sm.stack("x")[1] == Scope("fork", "F", "a", "J")
    assert sm.loop_of("x") == "L" and sm.loop_of("L") is None and sm.loop_of("back", edge=True) == "L"
    assert sm.innermost("x", "fork") == Scope("fork", "F", "a", "J")
    assert sm.parallel_of("x") == Scope("fork", "F", "a", "J") and sm.parallel_of("F") is None
    assert not sm.ambiguous and not sm.ambiguous_edges
    assert set(sm.members("F")) == {"x", "y"} and sm.members("F", "a") == ("x",)
    assert set(sm.members("L")) == {"F", "x", "y", "J"}
    assert all(sm.context_known(n) for n in p.nodes)


def test_loop_in_fork_branch() -> None:
    p = mk("F", {"F": "fork:a,b", "L": "loop", "s": "set", "y": "act", "J": "join:F", "z": "end"}, [
        "F.a>L", "L.body>s", "s.completed>L.continue", "L.done>J", "F.b>y", "y.completed>J",
        "J.completed>z",
    ])
    sm = build_scope_map(p)
    assert kinds(sm, "L") == ["fork F:a"]
    assert kinds(sm, "s") == ["fork F:a", "loop L"]
    assert kinds(sm, "J") == [] and kinds(sm, "z") == []
    assert kinds(sm, "e2", edge=True) == ["fork F:a", "loop L"]
    assert kinds(sm, "e3", edge=True) == ["fork F:a"]
    assert sm.loop_of("s") == "L" and sm.loop_of("y") is None
    assert not sm.ambiguous


def test_fan_out_body_with_nested_fork() -> None:
    p = mk("N", {"N": "fan", "F": "fork:a,b", "p": "act", "q": "act", "J2": "join:F",
                 "JN": "fjoin:N", "z": "end"}, [
        "item=N.item>F", "F.a>p", "F.b>q", "p.completed>J2", "q.completed>J2",
        "close=J2.completed>JN", "JN.completed>z",
    ])
    sm = build_scope_map(p)
    assert kinds(sm, "item", edge=True) == ["fan_out N"]
    assert kinds(sm, "F") == ["fan_out N"]
    assert kinds(sm, "p") == ["fan_out N", "fork F:a"]
    assert kinds(sm, "J2") == ["fan_out N"]
    assert kinds(sm, "close", edge=True) == ["fan_out N"]
    assert kinds(sm, "JN") == [] and kinds(sm, "z") == []
    assert sm.fan_out_of("p") == "N" and sm.fan_out_of("JN") is None
    assert sm.stack("F")[0] == Scope("fan_out", "N", None, "JN")
    assert not sm.ambiguous


def test_all_match_with_default() -> None:
    p = mk("S", {"S": "all:p,q/d", "a": "act", "b": "act", "c": "act", "J": "join:S", "z": "end"}, [
        "S.p>a", "S.q>b", "S.d>c", "a.completed>J", "b.completed>J", "c.completed>J", "J.completed>z",
    ])
    sm = build_scope_map(p)
    assert kinds(sm, "a") == ["all_match S:p"]
    assert kinds(sm, "b") == ["all_match S:q"]
    assert kinds(sm, "c") == ["all_match S:d"]
    assert kinds(sm, "J") == [] and not sm.ambiguous
    assert sm.stack("c")[0].closer == "J"


def test_first_match_switch_opens_no_scope() -> None:
    p = mk("S", {"S": "first:p/d", "a": "act", "z": "end", "f": "fail"}, [
        "S.p>a", "S.d>f", "a.completed>z",
    ])
    sm = build_scope_map(p)
    assert all(st == () for st in sm.node_scopes.values())


def test_overlap_is_ambiguous_without_diagnostic() -> None:
    # x is reached from both branches of F: two different stacks
    p = mk("F", {"F": "fork:a,b", "x": "act", "w": "act", "J": "join:F", "z": "end"}, [
        "F.a>x", "F.b>w", "w.completed>x", "xj=x.completed>J", "J.completed>z",
    ])
    sm = build_scope_map(p)
    assert sm.ambiguous == frozenset({"x"})
    assert sm.is_ambiguous("x") and not sm.context_known("x")
    assert sm.is_ambiguous("xj", edge=True)
    assert kinds(sm, "J") == [] and sm.context_known("J")


def test_regions_overlapping_without_nesting() -> None:
    # F's branch a opens G; G's branch closes F's join before G's join:
    # everything downstream of the crossing sees two stacks
    p = mk("F", {"F": "fork:a,b", "G": "fork:g,h", "u": "act", "v": "act", "JF": "join:F",
                 "JG": "join:G", "z": "end"}, [
        "F.a>G", "F.b>u", "G.g>JF", "G.h>v", "u.completed>JF", "v.completed>JG",
        "JF.completed>JG", "JG.completed>z",
    ])
    sm = build_scope_map(p)
    assert "JG" in sm.ambiguous
    assert kinds(sm, "JF") == []  # G's branch escaped into F's join: the edge stack shows it
    assert kinds(sm, "e2", edge=True) == ["fork F:a", "fork G:g"]


def test_node_inside_and_outside_a_scope() -> None:
    p = mk("pre", {"pre": "fork:x,y", "F": "fork:a,b", "m": "act", "J": "join:F", "K": "join:pre",
                   "z": "end"}, [
        "pre.x>F", "pre.y>m", "F.a>m", "F.b>J", "m.completed>J", "J.completed>K", "K.completed>z",
    ])
    sm = build_scope_map(p)
    assert "m" in sm.ambiguous


def test_loop_back_edges_stop_at_continue_and_break() -> None:
    p = mk("L", {"L": "loop", "a": "act", "b": "act", "z": "end"}, [
        "L.body>a", "a.completed>b", "brk=a.failed>L.break", "cont=b.completed>L.continue",
        "L.done>z",
    ])
    sm = build_scope_map(p)
    assert kinds(sm, "L") == [] and not sm.ambiguous
    assert kinds(sm, "brk", edge=True) == ["loop L"] and kinds(sm, "cont", edge=True) == ["loop L"]
    assert kinds(sm, "b") == ["loop L"]


def test_reentering_the_loop_through_in_is_ambiguous() -> None:
    p = mk("L", {"L": "loop", "a": "act", "z": "end"}, [
        "L.body>a", "a.completed>L", "L.done>z",
    ])
    sm = build_scope_map(p)
    assert "L" in sm.ambiguous  # the analyzer names this: a cycle outside the loop's ports


def test_owner_without_join_extends_to_terminals() -> None:
    p = mk("F", {"F": "fork:a,b", "x": "act", "ea": "fail", "eb": "fail"}, [
        "F.a>x", "x.completed>ea", "F.b>eb",
    ])
    sm = build_scope_map(p)
    assert kinds(sm, "ea") == ["fork F:a"] and kinds(sm, "eb") == ["fork F:b"]
    assert sm.stack("ea")[0].closer is None


def test_nested_loops_innermost() -> None:
    p = mk("L1", {"L1": "loop", "L2": "loop", "a": "act", "z": "end"}, [
        "L1.body>L2", "L2.body>a", "a.completed>L2.continue", "L2.done>L1.continue", "L1.done>z",
    ])
    sm = build_scope_map(p)
    assert kinds(sm, "a") == ["loop L1", "loop L2"]
    assert sm.loop_of("a") == "L2" and sm.loop_of("L2") == "L1"
    assert kinds(sm, "e3", edge=True) == ["loop L1"]


def test_cycles_outside_loops_terminate() -> None:
    p = mk("a", {"a": "act", "F": "fork:x,y", "z": "end"}, [
        "a.completed>F", "F.x>a", "F.y>F", "a.failed>z",
    ])
    sm = build_scope_map(p)
    assert {"a", "F"} <= sm.ambiguous
    assert set(sm.node_scopes) == {"a", "F", "z"}


def test_unreached_and_broken_graphs_get_best_effort_stacks() -> None:
    p = mk("a", {"a": "act", "z": "end", "L": "loop", "b": "act", "m": "act", "c": "act"}, [
        "a.completed>z", "L.body>b", "b.completed>L.continue", "L.done>ghost",
        "a.failed>m", "m.completed>c", "nowhere.completed>z",
    ], malformed=("m",))
    sm = build_scope_map(p)
    assert sm.unreached == frozenset({"L", "b", "c"})
    assert kinds(sm, "b") == ["loop L"] and not sm.context_known("b")
    assert kinds(sm, "c") == [] and not sm.context_known("c")
    assert set(sm.edge_scopes) == set(p.edges)  # every edge has an entry
    assert "e6" in sm.unreached_edges and "e5" in sm.unreached_edges
    assert sm.context_known("z") and sm.context_known("e0", edge=True)


def test_missing_entry_marks_everything_unreached() -> None:
    p = mk("nope", {"a": "act", "z": "end"}, ["a.completed>z"])
    sm = build_scope_map(p)
    assert sm.unreached == {"a", "z"} and sm.stack("a") == ()


def test_join_closes_through_unclosed_inner_scope() -> None:
    p = mk("F", {"F": "fork:a,b", "G": "fork:g,h", "J": "join:F", "z": "end"}, [
        "F.a>G", "G.g>J", "G.h>J", "F.b>J", "J.completed>z",
    ])
    sm = build_scope_map(p)
    assert kinds(sm, "J") == [] and not sm.ambiguous
    assert kinds(sm, "e1", edge=True) == ["fork F:a", "fork G:g"]  # the analyzer sees the leak


def test_deep_nesting_has_no_recursion() -> None:
    depth = 1500
    nodes = {f"L{i}": "loop" for i in range(depth)}
    nodes["a"] = "act"
    nodes["z"] = "end"
    edges = []
    for i in range(depth - 1):
        edges.append(f"L{i}.body>L{i + 1}")
        edges.append(f"L{i + 1}.done>L{i}.continue")
    edges += [f"L{depth - 1}.body>a", f"a.completed>L{depth - 1}.continue", "L0.done>z"]
    sm = build_scope_map(mk("L0", nodes, edges))
    assert len(sm.stack("a")) == depth and sm.loop_of("a") == f"L{depth - 1}"


def test_deterministic() -> None:
    p = mk("F", {"F": "fork:a,b", "x": "act", "w": "act", "J": "join:F", "z": "end"}, [
        "F.a>x", "F.b>w", "w.completed>x", "x.completed>J", "J.completed>z",
    ])
    assert build_scope_map(p) == build_scope_map(p)


# ---------------------------------------------------------------------------
# Benchmark: 512 nodes / 2,048 edges
# ---------------------------------------------------------------------------

def big_plan(n_nodes: int = 512, n_edges: int = 2048) -> Plan:
    """A generated plan: an outer counted loop whose body is a chain of
    blocks; each block is a 6-branch fork whose branches are first_match
    switches all routed to the block's join; every third block sits inside a
    fan_out item body, every fifth inside a nested loop.  A set_variable
    chain before the End and extra switch cases pad to the exact counts."""
    nodes: dict[str, Node] = {}
    edges: list[tuple[str, str, str, str]] = []
    switches: list[str] = []

    def add(nid: str, spec: str) -> None:
        nodes[nid] = _node(nid, spec)

    add("L0", "loop")
    prev = ("L0", "body")
    b = 0
    while len(nodes) + 20 < n_nodes and len(edges) + 60 < n_edges * 0.8:
        wrap = "fan" if b % 3 == 2 else ("loop" if b % 5 == 4 else None)
        if wrap:
            add(f"W{b}", wrap)
            edges.append((*prev, f"W{b}", "in"))
            prev = (f"W{b}", "item" if wrap == "fan" else "body")
        add(f"F{b}", "fork:" + ",".join(f"k{j}" for j in range(6)))
        edges.append((*prev, f"F{b}", "in"))
        add(f"J{b}", f"join:F{b}")
        for j in range(6):
            s = f"S{b}_{j}"
            add(s, "first:c0,c1,c2/d")
            switches.append(s)
            edges.append((f"F{b}", f"k{j}", s, "in"))
            for port in ("c0", "c1", "c2", "d"):
                edges.append((s, port, f"J{b}", "in"))
        prev = (f"J{b}", "completed")
        if wrap == "fan":
            add(f"C{b}", f"fjoin:W{b}")
            edges.append((*prev, f"C{b}", "in"))
            prev = (f"C{b}", "completed")
        elif wrap == "loop":
            edges.append((*prev, f"W{b}", "continue"))
            prev = (f"W{b}", "done")
        b += 1
    edges.append((*prev, "L0", "continue"))
    prev = ("L0", "done")
    i = 0
    while len(nodes) < n_nodes - 1:
        add(f"P{i}", "set")
        edges.append((*prev, f"P{i}", "in"))
        prev = (f"P{i}", "completed")
        i += 1
    add("z", "end")
    edges.append((*prev, "z", "in"))
    # pad edges: extra cases on switches, all routed to their join
    k = 0
    while len(edges) < n_edges:
        s = switches[k % len(switches)]
        sw = nodes[s].config
        port = f"x{len(sw.cases)}"
        nodes[s] = Node(s, "switch", Switch(sw.mode, sw.cases + (SwitchCase(port, Expr("true")),), sw.default))
        join = "J" + s[1:].split("_")[0]
        edges.append((s, port, join, "in"))
        k += 1
    es = {f"e{i}": Edge(f"e{i}", a, p, t, tp) for i, (a, p, t, tp) in enumerate(edges)}
    return Plan({}, {}, {}, "L0", nodes, es)


@pytest.mark.timeout(60)  # a hang guard; speed: benchmarks/
def test_budget_size_512_nodes_2048_edges() -> None:
    p = big_plan()
    assert len(p.nodes) == 512 and len(p.edges) == 2048
    sm = build_scope_map(p)
    assert not sm.ambiguous and not sm.unreached
    assert len(sm.node_scopes) == 512 and len(sm.edge_scopes) == 2048
    deepest = max(len(s) for s in sm.node_scopes.values())
    assert deepest == 3  # loop, fan_out or loop, fork
    r = Reporter()
    assert graph.check_graph(p, r) and r.diagnostics == []


# ---------------------------------------------------------------------------
# Robustness: arbitrary graphs never crash, cover every id, are deterministic
# ---------------------------------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

_SPECS = ["act", "set", "end", "fail", "fork:a,b", "all:p/d", "first:p/d", "join:n0", "join:n3",
          "fjoin:n1", "fan", "loop"]
_PORTS = ["completed", "failed", "a", "b", "p", "d", "item", "body", "done", "bogus"]
_TPORTS = ["in", "in", "in", "continue", "break"]


@st.composite
def random_plan(draw) -> Plan:
    n = draw(st.integers(1, 12))
    nodes = {f"n{i}": draw(st.sampled_from(_SPECS)) for i in range(n)}
    names = list(nodes) + ["ghost"]
    edges = [
        f"{draw(st.sampled_from(names))}.{draw(st.sampled_from(_PORTS))}>"
        f"{draw(st.sampled_from(names))}.{draw(st.sampled_from(_TPORTS))}"
        for _ in range(draw(st.integers(0, 3 * n)))
    ]
    malformed = tuple(x for x in nodes if draw(st.booleans()) and draw(st.booleans()) and x != "n0")
    return mk(draw(st.sampled_from(names)), nodes, edges, malformed)


@settings(max_examples=300, deadline=None)
@given(random_plan())
def test_random_graphs(p: Plan) -> None:
    sm = build_scope_map(p)
    assert set(sm.node_scopes) == set(p.nodes) and set(sm.edge_scopes) == set(p.edges)
    assert sm.ambiguous <= set(p.nodes) and sm.unreached <= set(p.nodes)
    assert build_scope_map(p) == sm
    for nid, stack in sm.node_scopes.items():
        assert all(s.kind in ("fork", "all_match", "fan_out", "loop") for s in stack)
    r = Reporter()
    graph.check_graph(p, r)
    # graph basics, and the edge rerouted into an unreached owner's scope
    # (LP4307/LP4403: the graph pass names it, docs/language.md#graph-basics)
    assert all(d.code.startswith("LP40") or d.code in ("LP4307", "LP4403") for d in r.diagnostics)


def test_yaml_plan_through_schema_pass() -> None:
    from pathlib import Path

    from loopc.compiler import schema
    from loopc.compiler.yamlload import load

    src = (Path(__file__).parent / "fixtures" / "graph" / "port_multiple_edges_ok.yaml").read_text()
    r = Reporter()
    p = schema.build_plan(load(src, r), r)
    assert r.diagnostics == []
    sm = build_scope_map(p)
    assert kinds(sm, "a") == ["fork split:first"] and kinds(sm, "b") == ["fork split:second"]
    assert kinds(sm, "merged") == [] and kinds(sm, "e_a_done", edge=True) == ["fork split:first"]
    src = (Path(__file__).parent / "fixtures" / "graph" / "continue_unrouted_ok.yaml").read_text()
    p = schema.build_plan(load(src, r), r)
    assert r.diagnostics == []
    sm = build_scope_map(p)
    assert sm.loop_of("tick") == "repeat" and sm.loop_of("e_next", edge=True) == "repeat"
    assert sm.loop_of("done") is None and sm.loop_of("e_done", edge=True) is None


# ---------------------------------------------------------------------------
# One scope model: the analyzer proves the map, lowering emits it
# ---------------------------------------------------------------------------

def test_failed_end_shared_by_scopes_gets_the_common_prefix() -> None:
    sm = build_scope_map(mk("f", {"f": "fork:a,b", "a": "act", "b": "act", "j": "join:f", "z": "end",
                                  "x": "fail"},
                            ["f.a>a", "f.b>b", "a.completed>j", "b.completed>j", "j.completed>z",
                             "a.failed>x", "j.failed>x"]))
    assert sm.node_scopes["x"] == ()  # reached from branch a and from outside the fork
    assert sm.is_ambiguous("x") and not sm.context_known("x")
    assert kinds(sm, "e5", edge=True) == ["fork f:a"]
    assert sm.owners["f"].closer == "j" and sm.owners["f"].branches == ("a", "b")
    # a failed End inside one branch only keeps that branch's stack
    sm2 = build_scope_map(mk("f", {"f": "fork:a,b", "a": "act", "b": "act", "j": "join:f", "z": "end",
                                   "x": "fail"},
                             ["f.a>a", "f.b>b", "a.completed>j", "b.completed>j", "j.completed>z",
                              "a.failed>x"]))
    assert kinds(sm2, "x") == ["fork f:a"] and sm2.context_known("x")


@pytest.mark.slow
def test_analyzer_proves_the_map_and_lowering_emits_it_on_every_accepted_plan() -> None:
    """On every example, golden and fixture the analyzer accepts, its
    scope-typing proof arrives at the map's stack for every reachable node
    and edge (so lowering and the budget may read the map), and the compiled
    artifact carries exactly the map's stacks and owners."""
    from conftest import REPOSITORY_PLANS
    from explorer import proof_stacks

    import loopc

    accepted = 0
    for path in REPOSITORY_PLANS:
        res = loopc.compile_source(path.read_bytes())
        chk = res.check
        if chk is None or chk.analysis is None or not chk.analysis.sound:
            continue
        accepted += 1
        sm = chk.scopes
        nodes, edges = proof_stacks(chk.plan, sm)
        assert nodes and all(sm.node_scopes[n] == st for n, st in nodes.items()), path
        assert all(sm.edge_scopes[e] == st for e, st in edges.items()), path
        if not res.ok:
            continue
        art = res.artifact
        for n in art.plan.nodes:
            assert [(s.kind, s.owner) for s in n.scope] == [(s.kind, s.owner) for s in sm.node_scopes[n.id]], path
        for e in art.plan.edges:
            assert [(s.kind, s.owner) for s in e.scope] == [(s.kind, s.owner) for s in sm.edge_scopes[e.id]], path
        assert [d.owner for d in art.plan.scopes] == sorted(sm.owners), path
    assert accepted > 200
