"""``loopc check`` at scale: ``python benchmarks/check_tree.py`` from the
repository root (docs/ci.md "Speed").

Generates a tree of 1,000 varied valid plans (blocks of benchmarks/generate.py
in seeded random mixes and sizes, 40 folders), then measures whole
``loopc check`` processes on it (medians of ``--repeat`` runs, default 3):

* cold, no cache, ``-j 1`` and ``-j 2``: files/s and MB/s;
* cold cache (an empty ``--cache-dir``, entries written) and warm cache (the
  same folder again, every file a hit), both with the default jobs;
* start-up: ``loopc check`` of one small example, and ``python -X
  importtime`` of that run (the modules imported, cumulative microseconds of
  the biggest).

Prints a table and writes ``benchmarks/check_tree.json``.  The machine may
be shared: the spread (min..max) of every measurement is printed with its
median so noise is visible.  Options: ``--files N``, ``--repeat N``,
``--keep DIR`` (generate into DIR and keep it).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import generate as g  # noqa: E402

PALETTE = [
    (g.review_switch, lambda r: {"cases": r.randint(2, 6), "acks": r.randint(1, 3)}),
    (g.fork_all, lambda r: {"branches": r.randint(2, 4)}),
    (g.fork_any, lambda r: {"branches": r.randint(2, 3)}),
    (g.all_match, lambda r: {"cases": r.randint(2, 3)}),
    (g.counted_loop, lambda r: {"iterations": r.randint(2, 5)}),
    (g.state_wait, lambda r: {}),
    (g.approval, lambda r: {}),
    (g.timer, lambda r: {"minutes": r.randint(5, 60)}),
    (g.fan_out, lambda r: {"concurrency": r.randint(1, 8)}),
]


def varied_plan(i: int) -> str:
    """Plan number ``i``: 2–8 blocks (a fork_all and an approval among 0–6
    random others), message prose of 40–400 bytes."""
    r = random.Random(1000 + i)
    b = g.PlanBuilder(seed=i, text_bytes=r.choice([40, 80, 120, 200, 400]))
    blocks = [(fn, kw(r)) for fn, kw in (r.choice(PALETTE) for _ in range(r.randint(0, 6)))]
    # every plan routes to the shared `blocked` and `rejected` Ends (an
    # unreachable End is an error): a fork_all gate and an approval, anywhere
    blocks.insert(r.randint(0, len(blocks)), (g.fork_all, {"branches": r.randint(2, 4)}))
    blocks.insert(r.randint(0, len(blocks)), (g.approval, {}))
    return b.finish(g._chain(b, blocks))


def make_tree(root: Path, n: int) -> int:
    """Write ``n`` plans under ``root`` (40 folders); returns total bytes."""
    total = 0
    for i in range(n):
        d = root / f"team{i % 40:02d}"
        d.mkdir(parents=True, exist_ok=True)
        src = varied_plan(i)
        (d / f"plan_{i:04d}.yaml").write_text(src, encoding="utf-8")
        total += len(src.encode("utf-8"))
    return total


def _loopc() -> list[str]:
    return [sys.executable, "-m", "loopc"]


def timed(args: list[str], cwd: Path, repeat: int, before=None) -> tuple[list[float], subprocess.CompletedProcess]:
    times = []
    proc = None
    for _ in range(repeat):
        if before is not None:
            before()
        t = time.perf_counter()
        proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
        times.append(time.perf_counter() - t)
    assert proc is not None
    return times, proc


def importtime(cwd: Path, target: Path) -> dict:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "loopc", "check", "--no-cache", str(target)],
                          cwd=cwd, capture_output=True, text=True)
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cum_us, name = line.split(":", 1)[1].split("|")
        rows.append((int(cum_us), int(self_us), name.rstrip()))
    top_level = [r for r in rows if not r[2].startswith("  ")]  # one leading space = top level
    total = sum(r[0] for r in top_level)
    modules = sorted({r[2].strip() for r in rows})
    return {
        "total_import_ms": round(total / 1000, 1),
        "modules": len(modules),
        "biggest": [{"module": n.strip(), "cumulative_ms": round(c / 1000, 1)}
                    for c, _, n in sorted(top_level, reverse=True)[:8]],
        "not_imported": [m for m in ("rich", "concurrent.futures", "multiprocessing", "pathspec", "platformdirs",
                                     "loopc.ir.lower", "loopc.cli.graph", "loopc.cli.fmt", "lark")
                         if m not in modules],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", default=None)
    ap.add_argument("--json", default=str(HERE / "check_tree.json"))
    a = ap.parse_args()
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="loopc-tree-"))
    tree = work / "tree"
    if tree.exists():
        shutil.rmtree(tree)
    nbytes = make_tree(tree, a.files)
    (work / ".git").mkdir(exist_ok=True)
    mb = nbytes / 1e6
    res: dict = {"files": a.files, "bytes": nbytes, "cpus": os.cpu_count(), "runs": {}}

    def record(name: str, times: list[float]) -> None:
        med = statistics.median(times)
        res["runs"][name] = {"median_s": round(med, 3), "min_s": round(min(times), 3), "max_s": round(max(times), 3),
                             "files_per_s": round(a.files / med, 1), "mb_per_s": round(mb / med, 2)}

    # validity: the whole tree checks clean
    _, proc = timed([*_loopc(), "check", "--no-cache", "--format", "json", "tree"], work, 1)
    summary = json.loads(proc.stdout)["summary"]
    assert summary["errors"] == 0 and summary["files"] == a.files, summary
    res["warnings"] = summary["warnings"]
    for j in (1, 2):
        t, _ = timed([*_loopc(), "check", "--no-cache", "-j", str(j), "tree"], work, a.repeat)
        record(f"cold -j {j}", t)
    cache = work / "cache"

    def wipe() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    t, _ = timed([*_loopc(), "check", "--cache-dir", str(cache), "tree"], work, a.repeat, before=wipe)
    record("cold cache (entries written)", t)
    t, _ = timed([*_loopc(), "check", "--cache-dir", str(cache), "tree"], work, a.repeat)
    record("warm cache", t)
    small = ROOT / "examples" / "callback_review.yaml"
    t, _ = timed([*_loopc(), "check", "--no-cache", str(small)], work, max(5, a.repeat))
    res["startup_small_file_s"] = {"median": round(statistics.median(t), 3), "min": round(min(t), 3),
                                   "max": round(max(t), 3)}
    res["importtime"] = importtime(work, small)
    runs = res["runs"]
    res["ratios"] = {
        "j2_over_j1": round(runs["cold -j 1"]["median_s"] / runs["cold -j 2"]["median_s"], 2),
        "warm_over_cold": round(runs["cold cache (entries written)"]["median_s"] / runs["warm cache"]["median_s"], 1),
    }
    print(f"{a.files} plans, {mb:.2f} MB, {os.cpu_count()} cores")
    print(f"{'run':32} {'median s':>9} {'min..max s':>14} {'files/s':>9} {'MB/s':>7}")
    for name, r in runs.items():
        print(f"{name:32} {r['median_s']:9.3f} {r['min_s']:6.3f}..{r['max_s']:<6.3f} "
              f"{r['files_per_s']:9.1f} {r['mb_per_s']:7.2f}")
    print(f"ratios: -j2/-j1 speed-up {res['ratios']['j2_over_j1']}x; warm vs cold {res['ratios']['warm_over_cold']}x")
    s = res["startup_small_file_s"]
    print(f"start-up, one small file: median {s['median']} s (min {s['min']}, max {s['max']})")
    it = res["importtime"]
    print(f"imports: {it['modules']} modules, {it['total_import_ms']} ms; not imported: {', '.join(it['not_imported'])}")
    for b in it["biggest"]:
        print(f"  {b['module']:40} {b['cumulative_ms']:8.1f} ms")
    Path(a.json).write_text(json.dumps(res, indent=2) + "\n")
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
