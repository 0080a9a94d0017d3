"""The artifact codec side by side: strict decode and canonical encode over
the goldens and the max-budget plan's artifact, and one compile of the
near-budget plan, for several checkouts.

```sh
python benchmarks/codec.py --tree base=/path/to/old/checkout --tree new=. --rounds 9
python benchmarks/codec.py --tree base=/old --tree new=. --callgrind    # CPU instructions
```

Each ``--tree NAME=DIR`` is a checkout (its ``src`` is put first on
``sys.path``, its goldens and ``benchmarks/generate.py`` are used).  Without
``--callgrind`` every tree runs in a fresh interpreter, interleaved, with the
collector off, and prints CPU-time medians (ms) over ``--rounds``; on a
loaded machine these vary by tens of percent.  With ``--callgrind`` each
measurement runs once under ``valgrind --tool=callgrind`` with
``PYTHONHASHSEED=0``, collecting only the measured calls (toggled by
``callgrind_control``), and prints instruction counts, which do not depend
on the load.  Measurements: ``decode_goldens`` (every golden's canonical
bytes, three times), ``encode_goldens`` (their decoded models, three times),
``decode_big`` / ``encode_big`` (the max-budget plan's artifact, once),
``compile_near`` (``compile_source`` of the near-budget plan, once).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

WHAT = ("decode_goldens", "encode_goldens", "decode_big", "encode_big", "compile_near")


def _child(tree: str, what: str, rounds: int, toggle: bool) -> None:
    sys.path.insert(0, str(Path(tree) / "src"))
    sys.path.insert(0, str(Path(tree) / "benchmarks"))
    import generate  # type: ignore[import-not-found]

    from loopc.ir import model as M
    from loopc.ir.decoder import decode
    from loopc.pipeline.compile import compile_source

    goldens = [M.encode(decode(p.read_bytes())) for p in sorted(Path(tree, "golden").glob("*/*/expected.json"))]
    arts = [decode(b) for b in goldens]
    big = bigart = src = None
    if what in ("decode_big", "encode_big"):
        big = compile_source(generate.max_budget_plan()).bytes
        bigart = decode(big)
    if what == "compile_near":
        src = generate.near_budget_plan()
        compile_source(generate.typical_plan())
    runs: dict[str, Callable[[], Any]] = {
        "decode_goldens": lambda: [decode(b) for _ in range(3) for b in goldens],
        "encode_goldens": lambda: [M.encode(a) for _ in range(3) for a in arts],
        "decode_big": lambda: decode(big),  # type: ignore[arg-type]
        "encode_big": lambda: M.encode(bigart),  # type: ignore[arg-type]
        "compile_near": lambda: compile_source(src),  # type: ignore[arg-type]
    }
    fn = runs[what]
    if what.endswith("goldens"):
        fn()  # warm the per-version tables
    gc.disable()
    if toggle:
        subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], capture_output=True)
        fn()
        subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], capture_output=True)
        return
    times = []
    for _ in range(rounds):
        t0 = time.process_time()
        fn()
        times.append((time.process_time() - t0) * 1000)
        gc.collect()
    print(json.dumps(statistics.median(times)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", required=True, help="NAME=DIR")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--what", action="append", choices=WHAT)
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        _child(a.child[0], a.child[1], a.rounds, a.child[2] == "1")
        return
    trees = [t.split("=", 1) for t in a.tree]
    for what in a.what or WHAT:
        for name, tree in trees:
            cmd = [sys.executable, __file__, "--rounds", str(a.rounds), "--tree", "x=.", "--child",
                   str(Path(tree).resolve()), what, "1" if a.callgrind else "0"]
            if a.callgrind:
                out = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                                      "--callgrind-out-file=/dev/null", *cmd], capture_output=True, text=True,
                                     env={**os.environ, "PYTHONHASHSEED": "0"})
                m = re.search(r"Collected : (\d+)", out.stderr)
                print(f"{what:15} {name:8} {int(m.group(1)) if m else 'failed':>14} instructions", flush=True)
            else:
                out = subprocess.run(cmd, capture_output=True, text=True)
                print(f"{what:15} {name:8} {out.stdout.strip():>10} ms (CPU, median)", flush=True)


if __name__ == "__main__":
    main()
