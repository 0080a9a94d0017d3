"""Per-pass CPU time of ``compile_source`` / ``check_source``, collector off,
several checkouts side by side.

```sh
python benchmarks/passes.py                                  # this tree, near + max, compile
python benchmarks/passes.py --tree base=/work/wt/base9b --tree main=src \\
    --plan near --plan max --mode compile --mode check --rounds 3 --repeat 5
```

Each ``--tree NAME=DIR`` is a package directory put first on ``PYTHONPATH``
(``src`` for this src layout, the checkout root for a flat one); every
measurement runs in a fresh interpreter, interleaved tree by tree, round by
round.  In the child the garbage collector is disabled, the previous result
is kept alive (nothing is freed inside a timed call), and every pass is timed
with ``time.process_time`` through the pipeline's pass guard plus the
lowering steps (budget projection, ``lower_plan``, the instruction and
structure scans, the encoder — ``encode_plan``, ``text_bytes``,
``digest_of_canonical``; before it ``plan_to_json``, ``scan``, the semantic
projection and ``canonical_bytes``).  Times are exclusive (a timed step inside another is
subtracted from it) and medians over every repetition of every round; the
1-minute load average is printed after each round.  Works on checkouts
before the pipeline layer (``loopc.ir.api`` / ``loopc.compiler.driver``).
"""
from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent

#: module -> functions timed (when the module has them)
STEPS = [
    ("loopc.ir.budget", ["project", "budget_diagnostics", "final_gates"]),
    ("loopc.ir.lower", ["lower_plan"]),
    ("loopc.ir.model", ["plan_to_json", "encode_plan"]),
    ("loopc.ir.instr", ["scan_instrs"]),
    ("loopc.ir.versions", ["structural_version"]),  # before the encoder counted the version
    ("loopc.ir.canonical", ["scan", "canonical_bytes", "text_bytes"]),
    ("loopc.ir.digest", ["semantic_projection", "digest_of_projection", "digest_of_canonical"]),
]


def _child(plan: str, mode: str, repeat: int, out: str) -> None:
    sys.setrecursionlimit(10000)
    sys.path.insert(0, str(HERE))
    import generate

    src = {"near": generate.near_budget_plan, "max": generate.max_budget_plan, "typical": generate.typical_plan}[
        plan
    ]()
    try:
        from loopc.pipeline.check import check_source
        from loopc.pipeline.compile import compile_source

        guards = [("loopc.pipeline.check", "guard"), ("loopc.pipeline.compile", "guard")]
    except ImportError:  # before the pipeline layer
        from loopc.compiler.driver import check_source  # type: ignore[no-redef]
        from loopc.ir.api import compile_source  # type: ignore[no-redef]

        guards = [("loopc.compiler.driver", "_guard")]
    acc: dict[str, float] = {}
    stack: list[float] = []

    def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*a: Any, **k: Any) -> Any:
            stack.append(0.0)
            t0 = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                dt = time.process_time() - t0
                acc[name] = acc.get(name, 0.0) + dt - stack.pop()
                if stack:
                    stack[-1] += dt

        return wrapper

    for modname, attr in guards:
        mod = importlib.import_module(modname)
        orig = getattr(mod, attr)

        def guard(reporter: Any, name: str, fn: Any, _orig: Any = orig) -> Any:
            return _orig(reporter, name, timed("pass " + name, fn))

        setattr(mod, attr, guard)
    encode = importlib.import_module("loopc.ir.canonical").canonical_bytes
    for modname, names in STEPS:
        mod = importlib.import_module(modname)
        for n in names:
            if hasattr(mod, n):
                setattr(mod, n, timed(n, getattr(mod, n)))
    # the digest's own encoding of the semantic projection, apart
    digest = importlib.import_module("loopc.ir.digest")
    digest.canonical_bytes = timed("canonical_bytes (projection)", encode)  # type: ignore[attr-defined]
    fn = compile_source if mode == "compile" else check_source
    gc.disable()
    res = fn(src)
    if not res.ok:
        raise SystemExit(f"{plan}: {mode} failed")
    keep = [res]
    rows = []
    for _ in range(repeat):
        acc.clear()
        t0 = time.process_time()
        r = fn(src)
        total = time.process_time() - t0
        keep.append(r)
        keep.pop(0)  # the previous result stays alive through the timed call
        row = dict(acc)
        row["other"] = total - sum(acc.values())
        row["total"] = total
        rows.append(row)
    Path(out).write_text(json.dumps(rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", default=[], help="NAME=package dir (default: this=src)")
    ap.add_argument("--plan", action="append", choices=("near", "max", "typical"))
    ap.add_argument("--mode", action="append", choices=("compile", "check"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="write the medians here")
    ap.add_argument("--child", nargs=4, metavar=("PLAN", "MODE", "REPEAT", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        plan, mode, repeat, out = args.child
        _child(plan, mode, int(repeat), out)
        return 0
    trees = [t.split("=", 1) for t in args.tree] or [["this", str(HERE.parent / "src")]]
    plans = args.plan or ["near", "max"]
    modes = args.mode or ["compile"]
    rows: dict[tuple[str, str, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(args.rounds):
            for plan in plans:
                for mode in modes:
                    for name, path in trees:
                        out = os.path.join(tmp, f"{name}-{plan}-{mode}-{rnd}.json")
                        env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.abspath(path), str(HERE)]))
                        cmd = [sys.executable, __file__, "--child", plan, mode, str(args.repeat), out]
                        subprocess.run(cmd, check=True, env=env)
                        rows.setdefault((name, plan, mode), []).extend(json.loads(Path(out).read_text()))
            print(f"round {rnd + 1}: load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    medians: dict[str, dict[str, float]] = {}
    names = [n for n, _ in trees]
    for plan in plans:
        for mode in modes:
            keys: list[str] = []
            for n in names:
                for r in rows[(n, plan, mode)]:
                    keys.extend(k for k in r if k not in keys)
            keys.sort(key=lambda k: (k in ("other", "total"), not k.startswith("pass "), k))
            print(f"\n| {mode} {plan} (CPU ms, median) | " + " | ".join(names) + " |")
            print("|---|" + "---|" * len(names))
            for k in keys:
                vals = [statistics.median(r.get(k, 0.0) for r in rows[(n, plan, mode)]) * 1000 for n in names]
                for n, v in zip(names, vals):
                    medians.setdefault(f"{n} {mode} {plan}", {})[k] = round(v, 2)
                if max(vals) >= 0.5:
                    print(f"| {k} | " + " | ".join(f"{v:.1f}" for v in vals) + " |")
            print("repetitions: " + ", ".join(f"{n} {len(rows[(n, plan, mode)])}" for n in names))
    if args.json:
        Path(args.json).write_text(json.dumps(medians, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
