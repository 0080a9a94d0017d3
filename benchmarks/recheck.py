"""Re-check latency with the cyclic garbage collector on (issue 8):
``python benchmarks/recheck.py`` from the repository root.

What a long-running host (an editor integration, a server, a notebook) pays
per keystroke: the ~100-node plan of :func:`generate.hundred_node_plan` is
re-checked with :func:`loopc.check_source` after one-character edits — a
letter typed into, then deleted from, a message template, the template
changing every ten keystrokes — ``--runs`` times (default 200) in one
process.  The collector is left exactly as a library user has it
(``gc.isenabled()``, default thresholds, nothing frozen); the latest result
stays alive until the next replaces it, as in an editor.

Reports, per run, the median, p95 and maximum in milliseconds of wall time
(``perf_counter``) and CPU time (``process_time``: on a shared machine the
CPU row is the one that shows the collector, not the neighbours), the p95 /
median ratio (aim: at most 1.5), the collections of each generation and the
time spent in them (``gc.callbacks``), the objects the cycle collector found
unreachable (should be 0: a discarded result is freed by reference
counting) and the GC-tracked objects one live result holds.

Options: ``--runs N``, ``--compile`` (``compile_source`` instead of
``check_source``), ``--gc on|off|freeze`` (``off``: ``gc.disable()`` for the
whole run, what the library used to do during a check; ``freeze``:
``gc.freeze()`` after warm-up, the CLI and language-server policy), ``--json
PATH`` (default ``benchmarks/recheck.json``), ``--quiet``.
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

import generate  # noqa: E402  (benchmarks/generate.py)


def pct(xs: list[float], p: float) -> float:
    """Nearest-rank percentile ``p`` (0–100) of ``xs``."""
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def summary(xs: list[float]) -> dict[str, float]:
    med = statistics.median(xs)
    p95 = pct(xs, 95)
    return {"median_ms": round(med, 2), "p95_ms": round(p95, 2), "max_ms": round(max(xs), 2),
            "p95_over_median": round(p95 / med, 2) if med else 0.0}


def edits(text: str, n: int) -> list[str]:
    """``n`` sources, each one character away from the one before: a letter
    typed into a message template, then deleted; every ten keystrokes the
    cursor moves to another template."""
    starts = []
    i = text.find("text: ")
    while i != -1:
        starts.append(i + len("text: ") + 5)
        i = text.find("text: ", i + 1)
    if not starts:
        raise SystemExit("the plan has no message template to edit")
    out = []
    for k in range(n):
        at = starts[(k // 10) % len(starts)]
        out.append(text[:at] + "x" + text[at:] if k % 2 == 0 else text)
    return out


class GcWatch:
    """Counts collections per generation and the time spent in them."""

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.seconds = 0.0
        self.collected = 0
        self._t0 = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._t0
            self.count[info["generation"]] += 1
            self.collected += info["collected"]


def tracked_per_result(fn: Callable[[str], Any], src: str) -> int:
    """GC-tracked objects one live result holds (after warm-up)."""
    fn(src)
    gc.collect()
    before = len(gc.get_objects())
    res = fn(src)
    after = len(gc.get_objects())
    del res
    return after - before


def run(runs: int, *, compile: bool = False, policy: str = "on") -> dict[str, Any]:
    """Re-check the ~100-node plan ``runs`` times; returns the results."""
    import loopc

    fn: Callable[[str], Any] = loopc.compile_source if compile else loopc.check_source
    text = generate.hundred_node_plan()
    sources = edits(text, runs)
    first = fn(text)
    if not first.ok:
        raise SystemExit(f"the benchmark plan does not check clean: {first.diagnostics[:3]}")
    tracked = tracked_per_result(fn, text)
    for src in sources[:10]:  # warm-up: imports, parser caches
        fn(src)
    gc.collect()
    if policy == "freeze":
        gc.freeze()
    elif policy == "off":
        gc.disable()
    watch = GcWatch()
    gc.callbacks.append(watch)
    wall: list[float] = []
    cpu: list[float] = []
    res = None
    try:
        for src in sources:
            c0 = time.process_time()
            t0 = time.perf_counter()
            res = fn(src)
            wall.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
    finally:
        gc.callbacks.remove(watch)
        if policy == "off":
            gc.enable()
        if policy == "freeze":
            gc.unfreeze()
    del res
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    fn(text)
    cyclic = gc.collect()
    gc.garbage.clear()
    gc.set_debug(0)
    return {
        "what": "compile_source" if compile else "check_source",
        "gc": policy,
        "runs": runs,
        "python": platform.python_version(),
        "thresholds": list(gc.get_threshold()),
        "plan": generate.stats(text),
        "wall": summary(wall),
        "cpu": summary(cpu),
        "collections": {"gen0": watch.count[0], "gen1": watch.count[1], "gen2": watch.count[2],
                        "ms": round(watch.seconds * 1000, 1), "collected": watch.collected},
        "tracked_objects_per_result": tracked,
        "cyclic_garbage_per_result": cyclic,
    }


def render(doc: dict[str, Any]) -> str:
    c = doc["collections"]
    lines = [f"{doc['what']} x{doc['runs']}, ~{doc['plan']['nodes']}-node plan "
             f"({doc['plan']['bytes']:,} bytes), gc {doc['gc']}, Python {doc['python']}",
             f"{'':6} {'median ms':>10} {'p95 ms':>8} {'max ms':>8} {'p95/median':>11}"]
    for row in ("wall", "cpu"):
        s = doc[row]
        lines.append(f"{row:6} {s['median_ms']:10.2f} {s['p95_ms']:8.2f} {s['max_ms']:8.2f} "
                     f"{s['p95_over_median']:10.2f}x")
    lines.append(f"collections: gen0 {c['gen0']}, gen1 {c['gen1']}, gen2 {c['gen2']} "
                 f"({c['ms']} ms in all, {c['collected']} objects collected)")
    lines.append(f"GC-tracked objects held by one result: {doc['tracked_objects_per_result']:,}; "
                 f"left for the cycle collector by a discarded one: {doc['cyclic_garbage_per_result']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--compile", action="store_true", help="compile_source instead of check_source")
    ap.add_argument("--gc", choices=("on", "off", "freeze"), default="on")
    ap.add_argument("--json", default=str(HERE / "recheck.json"))
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    doc = run(max(20, args.runs), compile=args.compile, policy=args.gc)
    Path(args.json).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    if not args.quiet:
        print(render(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
