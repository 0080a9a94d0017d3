"""Property tests for the reference interpreter (derandomized, small):

* random well-nested plans (the analyzer oracle's generator) with random,
  state-driven event scripts never crash the engine, satisfy the invariant
  monitor after every step, never strand a token (a drained Run is
  terminal), and give the same journal with a crash after every event;
* any artifact that passes verification — golden plans with random
  mutations and a recomputed digest — never makes the interpreter raise.
"""
from __future__ import annotations

import copy
import json
import random
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopc.interpreter.engine import Engine
from loopc.interpreter.monitor import Monitor
from loopc.interpreter.program import load_program
from loopc.interpreter.runner import Prepared, ScenarioWorld, run_prepared, strip_markers, verify_artifact
from loopc.interpreter.scenario import Event, Scenario
from loopc.pipeline import compile_source
from loopc.ir.canonical import canonical_bytes
from loopc.ir.digest import semantic_digest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from explorer import well_nested  # noqa: E402

from conftest import KIT
PROFILE = dict(derandomize=True, deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _prepared(src: bytes | str, inp: dict[str, Any], events: tuple[Event, ...] = (), faults: dict | None = None
              ) -> Prepared | None:
    res = compile_source(src)
    if not res.ok:
        return None
    art, why = verify_artifact(res.bytes)
    assert art is not None, why
    faults = faults or {}
    sc = Scenario("<generated>", "<generated>", inp, faults, {}, events, {"status": "waiting"})
    return Prepared(sc, load_program(art), res.bytes)


def _script(prep: Prepared, rng: random.Random) -> tuple[Event, ...]:
    """Drive a live engine with random events chosen from what is open, then
    drain (decide every approval, advance far); returns the events."""
    sc = prep.scenario
    eng = Engine(prep.program, ScenarioWorld(sc.deliveries, {}), on_step=Monitor())
    eng.start(sc.input)
    events: list[Event] = []
    from loopc.interpreter.clock import VirtualClock
    from loopc.interpreter.runner import Report, _apply

    clock = VirtualClock()
    rep = Report()

    def apply(kind: str, args: dict[str, Any]) -> None:
        ev = Event(len(events), kind, args)
        events.append(ev)
        _apply(eng, ev, clock, lambda: None, rep)

    for _ in range(rng.randint(0, 12)):
        opened = [a for a in eng.open.values() if a.status == "awaiting"]
        r = rng.random()
        if opened and r < 0.6:
            a = rng.choice(opened)
            if a.node.op == "request_approval":
                apply(rng.choice(("approve", "reject")), {"node": a.node.id, "by": "mem_x"})
            else:
                apply("callback", {"node": a.node.id, "output": {}})
        elif r < 0.9:
            apply("advance", {"duration": rng.choice(("PT1S", "PT1M", "PT30M", "P1D"))})
        elif r < 0.95:
            apply("callback", {"node": rng.choice(sorted(prep.program.nodes)), "output": {}, "rejected": True})
        else:
            apply("cancel", {})
    for _ in range(60):
        if eng.terminal:
            break
        opened = [a for a in eng.open.values() if a.status == "awaiting"]
        for a in opened:
            if a.node.op == "request_approval":
                apply("approve", {"node": a.node.id})
        if not opened:
            apply("advance", {"duration": "P2D"})
    assert eng.terminal, ("stranded", eng.status, [(a.id, a.node.id, a.status) for a in eng.open.values()])
    return tuple(events)


@settings(max_examples=40, **PROFILE)
@given(st.randoms(use_true_random=False), st.booleans(), st.integers(0, 2))
def test_random_plans_and_scripts_never_crash_or_strand(rng: random.Random, flag: bool, faults: int) -> None:
    src = well_nested(rng, budget=10)
    inp = {"approver": "mem_ana", "flag": flag}
    prep = _prepared(src, inp)
    if prep is None:
        return  # the generator occasionally builds a plan the compiler rejects (not this test's subject)
    sends = [n for n in sorted(prep.program.nodes) if prep.program.nodes[n].op == "send_message"]
    deliveries = {n: faults for n in sends[:1]}
    prep = _prepared(src, inp, (), deliveries)
    assert prep is not None
    events = _script(prep, rng)
    base = run_prepared(prep, events=events, on_step=Monitor())
    crashed = run_prepared(prep, events=events, crash_after_every=True, on_step=Monitor())
    assert not [d for d in crashed.differences if "divergence" in d], crashed.differences
    assert strip_markers(crashed.journal) == base.journal
    assert base.status in ("succeeded", "failed", "cancelled")


GOLDEN_PLANS = sorted((KIT / "plans").glob("*.yaml"))


def _leaves(v: Any, path: tuple = ()) -> list[tuple]:
    out = []
    stack = [(v, path)]
    while stack:
        x, p = stack.pop()
        if isinstance(x, dict):
            stack.extend((x[k], p + (k,)) for k in sorted(x))
        elif isinstance(x, list):
            stack.extend((x[i], p + (i,)) for i in range(len(x)))
        else:
            out.append(p)
    return sorted(out, key=repr)


def _mutate(data: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    d = copy.deepcopy(data)
    plan = d["plan"]
    leaves = _leaves(plan)
    strings = sorted({str(_get(plan, p)) for p in leaves if isinstance(_get(plan, p), str)})
    for _ in range(rng.randint(1, 3)):
        p = rng.choice(leaves)
        v = _get(plan, p)
        if isinstance(v, bool):
            nv: Any = not v
        elif isinstance(v, (int, float)):
            nv = rng.choice((0, 1, 2, -1, v + 1, 10_000))
        elif isinstance(v, str):
            nv = rng.choice(strings + ["", "PT0S", "P1D", "x"])
        else:
            nv = rng.choice((None, "x", 1))
        _set(plan, p, nv)
    d["digest"] = semantic_digest(d)
    return d


def _get(v: Any, p: tuple) -> Any:
    for k in p:
        v = v[k]
    return v


def _set(v: Any, p: tuple, x: Any) -> None:
    for k in p[:-1]:
        v = v[k]
    v[p[-1]] = x


@settings(max_examples=60, **PROFILE)
@given(st.sampled_from(GOLDEN_PLANS), st.randoms(use_true_random=False))
def test_verified_mutants_never_make_the_interpreter_raise(plan_path: Path, rng: random.Random) -> None:
    res = compile_source(plan_path.read_bytes())
    assert res.ok
    data = json.loads(res.bytes)
    raw = canonical_bytes(_mutate(data, rng))
    art, _ = verify_artifact(raw)
    if art is None:
        return  # refused: the interpreter never runs it
    prog = load_program(art)
    inp = {k: _sample(f) for k, f in prog.input.items() if f.required}
    sc = Scenario("<mutant>", "<mutant>", inp, {}, {}, (), {"status": "waiting"})
    prep = Prepared(sc, prog, raw)
    ev = tuple(Event(i, k, a) for i, (k, a) in enumerate([
        ("callback", {"node": n, "output": {}}) for n in sorted(prog.nodes)] + [("advance", {"duration": "P1D"}),
                                                                             ("cancel", {})]))
    run_prepared(prep, events=ev, on_step=Monitor())
    run_prepared(prep, events=ev, crash_after_every=True)


def _sample(f: Any) -> Any:
    t = f.type
    return {"string": "s", "number": 1, "boolean": True, "duration": "PT1M", "datetime": "2026-01-01T00:00:00Z",
            "object": {}, "array": [], "scope": {"kind": "channel", "scopeId": "chn_x"}, "channel": "#x",
            "member": "mem_x", "agent": "agt_x", "enum": (f.values or ["x"])[0]}.get(t, "x")
