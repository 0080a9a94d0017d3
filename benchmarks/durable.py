"""Durable throughput, side by side: ``python benchmarks/durable.py``.

One process measures, on the same plan (``examples/callback_review.yaml``,
the Plan input of ``examples/callback_review.input.json``) and the same
work per Run — start, then one callback (``approve``) that ends it:

* ``memory`` — the reference engine in memory (:mod:`loopc.interpreter.host`
  ``Engine``, a world that accepts every delivery), Runs one after another;
* ``durable sqlite`` — ``loopc.durable`` on a fresh SQLite file: per Run
  ``start_run`` (store, start the DBOS workflow, wait until it first waits)
  then ``post`` + ``wait_outcome`` of the callback (the workflow applies it
  and the Run ends), Runs one after another in this process, effects to the
  built-in file sink.

Rounds alternate (memory, durable, memory, ...) so a change in the machine's
load hits both; the table gives the median over rounds of Runs/s and
activations/s (``activation.started`` records of the journals) and the
ratio.  Needs the ``durable`` extra.  Not run in CI.

Options: ``--rounds N`` (default 5), ``--durable-runs N`` per round
(default 10), ``--memory-runs N`` per round (default 2000), ``--poll S``
(DBOS's polling interval, ``LOOPC_DURABLE_POLL``; default 0.1, the
production default), ``--json PATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PLAN = ROOT / "examples" / "callback_review.yaml"
INPUT = ROOT / "examples" / "callback_review.input.json"
OUTPUT = {"verdict": "approve", "summary": "ok"}


def _artifact() -> bytes:
    from loopc.pipeline import compile_source

    res = compile_source(PLAN.read_bytes(), path=str(PLAN))
    if not res.ok or res.bytes is None:
        sys.exit(f"{PLAN}: does not compile")
    return res.bytes


def memory_round(prog: Any, plan_input: dict[str, Any], n: int, base: int) -> tuple[float, int]:
    """``n`` Runs in memory: (seconds, activations)."""
    from loopc.interpreter.host import Engine, World

    acts = 0
    t0 = time.perf_counter()
    for i in range(n):
        eng = Engine(prog, World())
        eng.start(plan_input, Decimal(0), run_id=f"run_{base + i:016x}")
        act, why = eng.find_open("ask_review", None, None, ("awaiting",))
        if act is None:
            sys.exit(f"memory: no open callback: {why}")
        eng.callback(act, act.attempt, output=OUTPUT)
        if eng.status != "succeeded":
            sys.exit(f"memory: the Run ended {eng.status}")
        acts += sum(r["kind"] == "activation.started" for step in eng.steps for r in step)
    return time.perf_counter() - t0, acts


def durable_round(rt: Any, store: Any, artifact: bytes, plan_input: dict[str, Any], catalog: Any, sink: str,
                  n: int) -> tuple[float, int]:
    """``n`` durable Runs on SQLite: (seconds, activations)."""
    runs = []
    t0 = time.perf_counter()
    for _ in range(n):
        run = rt.new_run_id()
        got = rt.start_run(artifact, plan_input, run=run, catalog=catalog, options={"sink": sink})
        if got["status"] != "waiting":
            sys.exit(f"durable: the Run is {got['status']} after start")
        mid = rt.post(run, {"kind": "callback", "node": "ask_review", "item": None, "output": OUTPUT})
        out = rt.wait_outcome(run, mid, 120.0)
        if out is None or out["status"] != "succeeded":
            sys.exit(f"durable: the callback's outcome is {out}")
        runs.append(run)
    dt = time.perf_counter() - t0
    acts = sum(r["kind"] == "activation.started" for run in runs for r in store.journal(run))
    return dt, acts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--durable-runs", type=int, default=10)
    ap.add_argument("--memory-runs", type=int, default=2000)
    ap.add_argument("--poll", type=float, default=0.1)
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args(argv)
    if min(args.rounds, args.durable_runs, args.memory_runs) < 1 or args.poll <= 0:
        ap.error("--rounds, --durable-runs and --memory-runs must be >= 1, --poll > 0")
    try:
        import dbos  # noqa: F401
    except ImportError:
        sys.exit("needs the durable extra: pip install -e '.[durable]'")
    os.environ["LOOPC_DURABLE_POLL"] = str(args.poll)

    from loopc.durable import runtime as rt
    from loopc.interpreter.host import program_from_artifact
    from loopc.plan import builtin_catalog

    artifact = _artifact()
    prog, why = program_from_artifact(artifact)
    if prog is None:
        sys.exit(f"artifact refused: {why}")
    plan_input = json.loads(INPUT.read_text("utf-8"))
    catalog = builtin_catalog()
    tmp = tempfile.mkdtemp(prefix="loopc-bench-durable-")
    db = f"sqlite:///{tmp}/bench.sqlite"
    store = rt.launch(db, "bench", role="command")
    sink = f"{tmp}/bench.effects.jsonl"

    durable_round(rt, store, artifact, plan_input, catalog, sink, 2)  # warm-up (not measured)
    memory_round(prog, plan_input, min(200, args.memory_runs), 0)
    samples: dict[str, list[tuple[float, float]]] = {"memory": [], "durable sqlite": []}
    base = 1000
    for r in range(args.rounds):
        dt, acts = memory_round(prog, plan_input, args.memory_runs, base)
        base += args.memory_runs
        samples["memory"].append((args.memory_runs / dt, acts / dt))
        dt, acts = durable_round(rt, store, artifact, plan_input, catalog, sink, args.durable_runs)
        samples["durable sqlite"].append((args.durable_runs / dt, acts / dt))
        print(f"round {r + 1}/{args.rounds}: memory {samples['memory'][-1][0]:,.0f} Runs/s, "
              f"durable {samples['durable sqlite'][-1][0]:,.2f} Runs/s", file=sys.stderr)

    result: dict[str, Any] = {"plan": "examples/callback_review.yaml", "rounds": args.rounds, "poll_s": args.poll,
                              "runs_per_round": {"memory": args.memory_runs, "durable sqlite": args.durable_runs},
                              "sides": {}}
    print(f"{'side':<16} {'Runs/s':>12} {'activations/s':>15}   (median of {args.rounds} rounds)")
    for side, xs in samples.items():
        runs_s = statistics.median(x[0] for x in xs)
        acts_s = statistics.median(x[1] for x in xs)
        result["sides"][side] = {"runs_per_s": runs_s, "activations_per_s": acts_s,
                                 "samples_runs_per_s": [x[0] for x in xs]}
        print(f"{side:<16} {runs_s:>12,.2f} {acts_s:>15,.1f}")
    ratio = result["sides"]["memory"]["runs_per_s"] / result["sides"]["durable sqlite"]["runs_per_s"]
    result["memory_over_durable"] = ratio
    print(f"memory / durable: {ratio:,.0f}x")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    sys.stdout.flush()
    try:
        rt.shutdown()
    except Exception:  # noqa: BLE001,S110 - leaving anyway
        pass
    shutil.rmtree(tmp, ignore_errors=True)
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
