"""Execution-plan back end, measured side by side with compilation
(docs/plan.md): median CPU-wall time (perf_counter) of

* ``compile_source`` (the input the back end needs),
* ``derive`` alone on the decoded artifact (built-in catalog),
* ``plan_source`` end to end (compile + verify + decode + derive + identity),

for the typical and the near-budget generated plans.  ``python benchmarks/plan_bench.py [--repeat N]``.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import generate  # noqa: E402
from timing import median_seconds  # noqa: E402

from loopc.ir import decode  # noqa: E402
from loopc.pipeline import compile_source  # noqa: E402
from loopc.plan.api import plan_source  # noqa: E402
from loopc.plan.catalog import builtin_catalog  # noqa: E402
from loopc.plan.derive import derive  # noqa: E402


def _median(fn, repeat: int) -> float:
    """Median wall time in milliseconds."""
    return median_seconds(fn, repeat) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    cat = builtin_catalog()
    for name in ("typical_plan", "near_budget_plan"):
        src = getattr(generate, name)()
        src = src if isinstance(src, (str, bytes)) else generate.dump_plan(src)
        res = compile_source(src)
        assert res.ok, res.diagnostics[:3]
        art = decode(res.bytes)
        c = _median(lambda src=src: compile_source(src), args.repeat)
        d = _median(lambda art=art: derive(art, cat).plan.identity, args.repeat)
        p = _median(lambda src=src: plan_source(src, catalog=cat).plan.identity, args.repeat)
        steps = len(derive(art, cat).plan.steps)
        print(f"{name}: {len(art.plan.nodes)} nodes, {steps} steps | compile {c:.1f} ms | derive {d:.1f} ms "
              f"({d / c:.2f}x compile) | plan_source {p:.1f} ms ({p / c:.2f}x compile)")


if __name__ == "__main__":
    main()
