"""Max-budget benchmark plan for the analyzer (docs/reference.md#budgets: 512
nodes and 2,048 edges; issue 3 "Speed").

:func:`budget_plan` returns the source of a sound plan at the graph budget:
a top-level counted loop whose body chains segments of forks (each branch a
wide first_match switch feeding an action whose ``failed`` port goes to a
shared failed End) and nested segments that open a fork whose branch holds
a counted loop around another fork — so stacks are several scopes deep and
every analysis runs on the whole graph.  Deterministic (no randomness).

``python -m loopc.analyzer.bench`` prints analysis time separately from
parse/schema/graph time (median of a few runs).
"""
from __future__ import annotations

import json
from typing import Any

HEADER = "apiVersion: loop.plan/v1\nkind: PlanVersion\n"


class _B:
    def __init__(self, cases: int) -> None:
        self.cases = cases
        self.nodes: list[dict] = []
        self.edges: list[dict] = []
        self.k = 0
        self.entry = ""
        self.bonus: list[int] = []  # extra cases for the next switches (popped)

    def node(self, prefix: str, typ: str, **cfg) -> str:
        self.k += 1
        nid = f"{prefix}{self.k}"
        d = {"id": nid, "type": typ}
        d.update(cfg)
        self.nodes.append(d)
        return nid

    def edge(self, frm: str, port: str, to: str, to_port: str | None = None) -> None:
        e: dict[str, Any] = {"id": f"e{len(self.edges) + 1}", "from": {"node": frm, "port": port}, "to": {"node": to}}
        if to_port:
            e["to"]["port"] = to_port
        self.edges.append(e)

    def send(self) -> str:
        return self.node("s", "send_message",
                         sendMessage={"target": "#ops", "text": "step", "completion": "sent"})

    def switch(self) -> str:
        n = self.cases + self.bonus.pop() if self.bonus else self.cases
        ports = [f"c{i}" for i in range(n)]
        return self.node("sw", "switch", switch={
            "mode": "first_match",
            "cases": [{"port": p, "when": f"run.input.level == {i}"} for i, p in enumerate(ports)],
            "default": "other"})

    def fork_segment(self, nxt: tuple[str, str | None]) -> str:
        """fork [a, b, c] → switch → action → join → ``nxt``; returns the fork."""
        f = self.node("f", "fork", fork={"branches": ["a", "b", "c"]})
        j = self.node("j", "join", join={"forkId": f, "mode": "all", "result": {}, "merge": {}})
        self.edge(j, "completed", nxt[0], nxt[1])
        for br in ("a", "b", "c"):
            sw = self.switch()
            act = self.send()
            self.edge(f, br, sw)
            for case in self.nodes[-2]["switch"]["cases"]:
                self.edge(sw, case["port"], act)
            self.edge(sw, "other", act)
            self.edge(act, "completed", j)
            self.edge(act, "failed", "fail")
        return f

    def nested_segment(self, nxt: tuple[str, str | None]) -> str:
        """fork [x, y]: x runs a counted loop around a fork segment, y one
        action; joined, then ``nxt``."""
        f = self.node("f", "fork", fork={"branches": ["x", "y"]})
        j = self.node("j", "join", join={"forkId": f, "mode": "all", "result": {}, "merge": {}})
        self.edge(j, "completed", nxt[0], nxt[1])
        lp = self.node("l", "loop", loop={"mode": "counted", "iterations": 2})
        self.edge(f, "x", lp)
        self.edge(lp, "done", j)
        inner = self.fork_segment((lp, "continue"))
        self.edge(lp, "body", inner)
        act = self.send()
        self.edge(f, "y", act)
        self.edge(act, "completed", j)
        return f


def _build(segments: int, cases: int, pad: int, extra: int = 0) -> _B:
    """``extra`` more switch cases (one edge each), spread over the
    ``3 * segments`` switches."""
    b = _B(cases)
    nsw = 3 * segments
    if nsw:
        b.bonus = [extra // nsw + (1 if i < extra % nsw else 0) for i in range(nsw)][::-1]
    b.nodes.append({"id": "done", "type": "end", "end": {"status": "succeeded"}})
    b.nodes.append({"id": "fail", "type": "end", "end": {"status": "failed", "code": "step_failed"}})
    top = b.node("l", "loop", loop={"mode": "counted", "iterations": 3})
    b.edge(top, "done", "done")
    nxt: tuple[str, str | None] = (top, "continue")
    for _ in range(pad):  # plain actions to land exactly on the node budget
        s = b.send()
        b.edge(s, "completed", nxt[0], nxt[1])
        nxt = (s, None)
    for i in range(segments):
        first = b.nested_segment(nxt) if i % 2 else b.fork_segment(nxt)
        nxt = (first, None)
    b.edge(top, "body", nxt[0], nxt[1])
    b.entry = top
    return b


def _counts(segments: int, cases: int, pad: int) -> tuple[int, int]:
    """(nodes, edges) of ``_build(segments, cases, pad)`` without building it."""
    fork_nodes, fork_edges = 8, 10 + 3 * (cases + 1)
    nested_nodes, nested_edges = 4 + fork_nodes, 6 + fork_edges
    n, e = 3 + pad, 2 + pad
    for i in range(segments):
        n += nested_nodes if i % 2 else fork_nodes
        e += nested_edges if i % 2 else fork_edges
    return n, e


def budget_plan(nodes: int = 512, edges: int = 2048) -> str:
    """Source of a sound plan with exactly ``nodes`` nodes and at most
    ``edges`` edges (as close as the segment shapes allow), nested forks and
    loops throughout (docs/reference.md#budgets graph budget)."""
    best: tuple[int, int, int, int] | None = None  # (edges, segments, cases, pad)
    for cases in range(1, 64):
        seg = 0
        while _counts(seg + 1, cases, 0)[0] <= nodes:
            seg += 1
        pad = nodes - _counts(seg, cases, 0)[0]
        n, e = _counts(seg, cases, pad)
        if e <= edges and (best is None or e > best[0]):
            best = (e, seg, cases, pad)
    if best is None:
        raise ValueError(f"no plan shape fits {nodes} nodes and {edges} edges")
    b = _build(best[1], best[2], best[3], edges - best[0] if best[1] else 0)
    lines = [HEADER.rstrip("\n"), 'input: {"level": {"type": "number", "required": true}}', "output: {}",
             f"entry: {b.entry}", "nodes:"]
    lines += ["  - " + json.dumps(n) for n in b.nodes]
    lines.append("edges:")
    lines += ["  - " + json.dumps(e) for e in b.edges]
    return "\n".join(lines) + "\n"


def _main() -> None:  # pragma: no cover - benchmark entry point
    import statistics
    import time

    from loopc import analyzer
    from loopc.compiler import graph, schema, scopemap, yamlload
    from loopc.compiler.report import Reporter

    src = budget_plan()
    front: list[float] = []
    ana: list[float] = []
    size = ""
    for _ in range(7):
        r = Reporter()
        t0 = time.perf_counter()
        doc = yamlload.load(src, r)
        if doc is None or (plan := schema.build_plan(doc, r)) is None:
            raise SystemExit(f"bench: the budget plan does not build: {[d.code for d in r.diagnostics]}")
        graph.check_graph(plan, r)
        sm = scopemap.build_scope_map(plan)
        t1 = time.perf_counter()
        analyzer.analyze(plan, sm, r)
        t2 = time.perf_counter()
        front.append(t1 - t0)
        ana.append(t2 - t1)
        size = f"{len(plan.nodes)} nodes, {len(plan.edges)} edges"
    print(f"plan: {size}, {len(src)} bytes; "
          f"diagnostics: {[d.code for d in r.diagnostics]}")
    print(f"parse+schema+graph+scopemap median {statistics.median(front) * 1000:.1f} ms")
    print(f"analyze median {statistics.median(ana) * 1000:.1f} ms")


if __name__ == "__main__":  # pragma: no cover
    _main()
