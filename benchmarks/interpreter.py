"""Reference interpreter benchmarks: ``python benchmarks/interpreter.py``.

Medians (CPU time via ``time.process_time`` and wall time via
``time.perf_counter``, default 7 repetitions after one warm-up) of:

* ``linear set_variable`` — a 400-node chain of ``set_variable`` nodes (one
  activation, one state write per node): activations per second;
* ``linear sent`` — a 400-node chain of ``send_message`` (sent) nodes: each
  activation also reserves and delivers an effect (two steps);
* ``loop 10000`` — a counted loop of 10,000 iterations whose body is one
  ``set_variable``: seconds for the whole Run;
* ``golden`` / ``golden crash-every-event`` — every golden scenario once,
  and with a crash (journal dump, parse, resume) after every event;
* ``resume every prefix`` — the test-suite's resume-from-every-journal-prefix
  sweep over all golden scenarios;
* ``crash x50 after loop 10000`` — the loop above, then 50 ``crash`` events
  (each restores from the last checkpoint and re-executes the journal after
  it);
* ``crash x25000 callback`` — 25,000 ``crash`` events on the one-callback
  golden plan, then its script.

Options: ``--repeat N``, ``--json PATH``.  The numbers depend on the
machine; benchmarks/README.md records one run.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

HEADER = "apiVersion: loop.plan/v1\nkind: PlanVersion\n"


def linear_plan(n: int, kind: str) -> str:
    lines = [HEADER, "input: {}", "output:", "  count: {type: number, required: true}",
             "state:", "  count: {type: number, default: 0}", "entry: n1", "nodes:"]
    for i in range(1, n + 1):
        if kind == "set_variable":
            lines.append(f"  - {{id: n{i}, type: set_variable, setVariable: {{assign: {{count: {i}}}}}}}")
        else:
            lines.append(f"  - {{id: n{i}, type: send_message, sendMessage: {{target: '#ops', text: 'step {i}', "
                         "completion: sent}}")
    lines.append("  - {id: done, type: end, end: {status: succeeded}}")
    lines.append("edges:")
    for i in range(1, n):
        lines.append(f"  - {{id: e{i}, from: {{node: n{i}, port: completed}}, to: {{node: n{i + 1}}}}}")
    lines.append(f"  - {{id: e{n}, from: {{node: n{n}, port: completed}}, to: {{node: done}}, "
                 "bind: {count: {ref: run.state.count}}}")
    return "\n".join(lines) + "\n"


def loop_plan(iterations: int) -> str:
    return HEADER + f"""input: {{}}
output:
  count: {{type: number, required: true}}
state:
  last: {{type: number, default: 0}}
entry: rounds
nodes:
  - id: rounds
    type: loop
    loop:
      mode: counted
      iterations: {iterations}
      state: {{count: {{type: number, required: true}}}}
      init: {{count: 0}}
  - id: body
    type: set_variable
    setVariable: {{assign: {{last: {{ref: loop.iteration}}}}}}
  - id: done
    type: end
    end: {{status: succeeded}}
edges:
  - {{id: e_body, from: {{node: rounds, port: body}}, to: {{node: body}}}}
  - id: e_continue
    from: {{node: body, port: completed}}
    to: {{node: rounds, port: continue}}
    bind: {{count: {{ref: run.state.last}}}}
  - {{id: e_done, from: {{node: rounds, port: done}}, to: {{node: done}}, bind: {{count: {{ref: output.count}}}}}}
"""


def _program(src: str) -> Any:
    from loopc.interpreter.program import load_program
    from loopc.interpreter.runner import verify_artifact
    from loopc.pipeline import compile_source

    res = compile_source(src)
    assert res.ok, [d.message for d in res.diagnostics]
    art, why = verify_artifact(res.bytes)
    assert art is not None, why
    return load_program(art)


def measure(fn: Callable[[], Any], repeat: int) -> dict[str, float]:
    fn()
    cpu: list[float] = []
    wall: list[float] = []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    cpu.sort()
    return {"cpu_median_s": statistics.median(cpu), "cpu_p95_s": cpu[min(len(cpu) - 1, int(0.95 * len(cpu)))],
            "wall_median_s": statistics.median(wall)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", type=str, default="")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    from loopc.interpreter.engine import Engine
    from loopc.conformance import SCENARIO_DIR
    from loopc.conformance import scenarios as golden_scenarios
    from loopc.interpreter.runner import prepare_file, run_prepared

    out: dict[str, Any] = {}
    for kind in ("set_variable", "sent"):
        prog = _program(linear_plan(400, kind))

        def run(prog: Any = prog) -> None:
            eng = Engine(prog)
            eng.start({})
            assert eng.status == "succeeded"

        m = measure(run, args.repeat)
        m["activations"] = 401
        m["activations_per_s_cpu"] = 401 / m["cpu_median_s"]
        out[f"linear {kind}"] = m
    prog = _program(loop_plan(10_000))

    def run_loop() -> None:
        eng = Engine(prog)
        eng.start({})
        assert eng.status == "succeeded" and eng.output == {"count": 10_000}, (eng.status, eng.output)

    out["loop 10000"] = measure(run_loop, max(3, args.repeat // 2))
    preps = [prepare_file(p) for p in golden_scenarios(SCENARIO_DIR)]
    out["golden"] = measure(lambda: [run_prepared(p) for p in preps], args.repeat)
    out["golden"]["scenarios"] = len(preps)
    out["golden crash-every-event"] = measure(lambda: [run_prepared(p, crash_after_every=True) for p in preps],
                                              args.repeat)

    def prefixes() -> None:
        import test_interpreter as t

        for p in golden_scenarios(SCENARIO_DIR):
            t.test_resume_from_every_journal_prefix(p)

    out["resume every prefix"] = measure(prefixes, max(3, args.repeat // 2))
    from loopc.interpreter.runner import prepare
    from loopc.interpreter.scenario import load_scenario

    def scenario_prep(plan: str, body: str) -> Any:
        sc = load_scenario("plan: p.yaml\n" + body, "s.yaml")
        assert not isinstance(sc, list), sc
        p = prepare(sc, plan.encode(), "p.yaml")
        assert not isinstance(p, list), p
        return p

    crash50 = scenario_prep(loop_plan(10_000), "events:\n" + "  - crash: {}\n" * 50
                            + "expect: {status: succeeded, output: {count: 10000}}\n")
    out["crash x50 after loop 10000"] = measure(lambda: run_prepared(crash50), max(3, args.repeat // 2))
    callback_plan = (Path(SCENARIO_DIR) / "plans" / "callback.yaml").read_text(encoding="utf-8")
    crash25k = scenario_prep(callback_plan, "input: {question: q, agent: agt_ana, room: {kind: channel, scopeId: chn_room}}\n"
                             "events:\n" + "  - crash: {}\n" * 25_000
                             + "  - callback: {node: ask, output: {answer: a, tone: calm}}\nexpect: {status: succeeded}\n")
    out["crash x25000 callback"] = measure(lambda: run_prepared(crash25k), max(3, args.repeat // 2))
    for k, v in out.items():
        extra = f"  {v['activations_per_s_cpu']:,.0f} activations/s" if "activations_per_s_cpu" in v else ""
        print(f"{k:<28} cpu median {v['cpu_median_s'] * 1000:9.1f} ms  p95 {v['cpu_p95_s'] * 1000:9.1f} ms"
              f"  wall {v['wall_median_s'] * 1000:9.1f} ms{extra}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
