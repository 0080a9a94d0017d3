"""Incremental re-check against the whole re-check, side by side (issue 26
item 1): ``python benchmarks/incremental.py`` from the repository root.

The editor's loop: a plan is re-checked after every one-character edit — a
letter typed into, then deleted from, a message template, the template
changing every ten keystrokes (``recheck.edits``) — once with
:func:`loopc.check_source` (what the language server did before) and once
with one :class:`loopc.pipeline.incremental.IncrementalChecker` (what it
does now), the two interleaved edit by edit (A B B A ...) so a change in
the machine's load hits both.  Sizes: the ~100-node plan
(``generate.hundred_node_plan``) and the ~500-node near-budget plan
(``generate.near_budget_plan``).  Every incremental result is compared with
the whole one (diagnostics); a difference, or an edit checked whole, fails
the run.

Reports per size and side the median, p95 and p95/median of wall time
(``perf_counter``) and CPU time (``process_time``: on a shared machine the
row the neighbours disturb least), in milliseconds, and the goals of issue
26 (100 nodes: median <= 8 ms and p95 <= 1.3x median; 500 nodes: p95 <= 60
ms).  ``--gc freeze`` (the default) freezes the survivors after every check,
as the language server does (``LoopcServer._after_check``); ``--gc on``
leaves the collector as a library user has it.

Options: ``--runs N`` (default 200 at 100 nodes, at least 20; a quarter
of it at 500, at least 20),
``--sizes 100,500``, ``--gc freeze|on``, ``--json PATH`` (default
``benchmarks/incremental.json``), ``--profile`` (cProfile of the
incremental side at 100 nodes, top functions by own time).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import generate  # noqa: E402
from recheck import edits, pct  # noqa: E402

GOALS = {100: "median <= 8 ms, p95 <= 1.3x median", 500: "p95 <= 60 ms"}


def _stats(xs: list[float]) -> dict[str, float]:
    med = statistics.median(xs)
    p95 = pct(xs, 95)
    return {"median_ms": round(med, 2), "p95_ms": round(p95, 2), "p95_over_median": round(p95 / med, 2)}


def measure(size: int, runs: int, policy: str) -> dict[str, Any]:
    import loopc
    from loopc.pipeline.incremental import IncrementalChecker

    text = generate.hundred_node_plan() if size == 100 else generate.near_budget_plan()
    sources = edits(text, runs)
    checker = IncrementalChecker()
    sides: dict[str, Callable[[str], Any]] = {"whole": loopc.check_source, "incremental": checker.check}
    first = checker.check(text)
    if not first.ok:
        raise SystemExit(f"the {size}-node plan does not check clean")
    for src in sources[:6]:  # warm-up: imports, caches
        for fn in sides.values():
            fn(src)
    wall: dict[str, list[float]] = {k: [] for k in sides}
    cpu: dict[str, list[float]] = {k: [] for k in sides}
    gc.collect()
    modes: dict[str, int] = {}
    try:
        for n, src in enumerate(sources):
            order = list(sides) if n % 2 == 0 else list(reversed(sides))
            out = {}
            for name in order:
                c0 = time.process_time()
                t0 = time.perf_counter()
                out[name] = sides[name](src)
                wall[name].append((time.perf_counter() - t0) * 1000)
                cpu[name].append((time.process_time() - c0) * 1000)
                if name == "incremental":
                    modes[checker.last_mode] = modes.get(checker.last_mode, 0) + 1
                if policy == "freeze":
                    gc.freeze()
            if out["whole"].diagnostics != out["incremental"].diagnostics:
                raise SystemExit(f"edit {n}: the incremental result differs from the whole check")
            del out
    finally:
        if policy == "freeze":
            gc.unfreeze()
    if modes.get("incremental", 0) != len(sources):
        raise SystemExit(f"not every edit was checked incrementally: {modes} ({checker.last_reason})")
    return {
        "size": size,
        "plan": generate.stats(text),
        "runs": len(sources),
        "wall": {k: _stats(v) for k, v in wall.items()},
        "cpu": {k: _stats(v) for k, v in cpu.items()},
        "goal": GOALS.get(size, ""),
    }


def profile(runs: int) -> str:
    import cProfile
    import io
    import pstats

    from loopc.pipeline.incremental import IncrementalChecker

    text = generate.hundred_node_plan()
    sources = edits(text, runs)
    checker = IncrementalChecker()
    checker.check(text)
    prof = cProfile.Profile()
    prof.enable()
    for src in sources:
        checker.check(src)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(25)
    return buf.getvalue()


def render(doc: dict[str, Any]) -> str:
    lines = [
        f"incremental vs whole re-check after one-character edits, gc {doc['gc']}, Python {doc['python']}",
        f"{'plan':>14} {'side':<12} {'wall median':>11} {'p95':>7} {'p95/med':>8} "
        f"{'cpu median':>11} {'p95':>7} {'p95/med':>8}",
    ]
    for r in doc["results"]:
        for side in ("whole", "incremental"):
            w, c = r["wall"][side], r["cpu"][side]
            lines.append(
                f"{r['plan']['nodes']:>5} nodes x{r['runs']:<4} {side:<12} {w['median_ms']:11.2f} "
                f"{w['p95_ms']:7.2f} {w['p95_over_median']:7.2f}x {c['median_ms']:11.2f} "
                f"{c['p95_ms']:7.2f} {c['p95_over_median']:7.2f}x"
            )
        speed = r["cpu"]["whole"]["median_ms"] / r["cpu"]["incremental"]["median_ms"]
        lines.append(f"{'':>14} goal: {r['goal']}; whole / incremental {speed:.2f}x "
                     "(CPU medians; above 1: incremental is faster)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("--runs", type=int, default=200,
                    help="edits at ~100 nodes (at least 20); a quarter of them, at least 20, at ~500 nodes")
    ap.add_argument("--sizes", default="100,500", help="plan sizes, comma-separated: 100 and/or 500")
    ap.add_argument("--gc", choices=("freeze", "on"), default="freeze",
                    help="freeze the survivors after every check, as the language server does (default), "
                    "or leave the collector on")
    ap.add_argument("--json", default=str(HERE / "incremental.json"),
                    help="where the results go (default: benchmarks/incremental.json, tracked in git)")
    ap.add_argument("--profile", action="store_true", help="also a cProfile of the incremental side at 100 nodes")
    args = ap.parse_args(argv)
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        runs = args.runs if size <= 100 else max(20, args.runs // 4)
        results.append(measure(size, max(20, runs), args.gc))
    doc = {"gc": args.gc, "python": platform.python_version(), "results": results}
    Path(args.json).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(render(doc))
    if args.profile:
        print(profile(max(20, args.runs // 2)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
