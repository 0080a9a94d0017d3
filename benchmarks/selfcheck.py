"""What would it cost ``compile`` to check its own output?  Median wall time
(perf_counter, one warm-up) of ``compile_source`` and, on the artifact it
emitted, of each candidate self-check, with the ratio to the compile:

* ``decode_data(parsed)`` — the strict decoder on the already-parsed JSON
  (what compile could run on the data it just built);
* ``decode(bytes)`` — parse + strict decode of the canonical bytes;
* ``decode(bytes, canonical)`` — plus the check that the bytes are their own
  RFC 8785 form;
* ``decode == model`` — decode and compare with the model lowering built;
* ``verify(bytes)`` — the full verifier (decode, digest, whole-artifact rules).

For the typical, near-budget and max-budget generated plans.
``python benchmarks/selfcheck.py [--repeat N] [--json PATH]``; results in
benchmarks/README.md "Compile self-check".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).parent))

import generate  # noqa: E402
from timing import median_seconds  # noqa: E402

import loopc  # noqa: E402
from loopc.ir import verify  # noqa: E402
from loopc.ir.decoder import decode, decode_data  # noqa: E402


def measure(src: str, repeat: int) -> dict[str, float]:
    """Medians (seconds) of the compile and each self-check of one plan."""
    res = loopc.compile_source(src)
    assert res.ok and res.bytes is not None
    raw = res.bytes
    data = json.loads(raw)
    rows: dict[str, Callable[[], Any]] = {
        "compile": lambda: loopc.compile_source(src),
        "decode_data(parsed)": lambda: decode_data(data),
        "decode(bytes)": lambda: decode(raw),
        "decode(bytes, canonical)": lambda: decode(raw, canonical=True),
        "decode == model": lambda: decode(raw) == res.artifact,
        "verify(bytes)": lambda: verify(raw),
    }
    return {k: median_seconds(fn, repeat) for k, fn in rows.items()} | {"artifact_bytes": float(len(raw))}


def run(repeat: int) -> dict[str, dict[str, float]]:
    plans = {
        "typical": generate.typical_plan(),
        "near_budget": generate.near_budget_plan(),
        "max_budget": generate.max_budget_plan(),
    }
    out: dict[str, dict[str, float]] = {}
    for name, src in plans.items():
        out[name] = r = measure(src, repeat)
        c = r["compile"]
        print(f"{name}: {len(src):,} B source, {int(r['artifact_bytes']):,} B artifact")
        for k, v in r.items():
            if k != "artifact_bytes":
                print(f"  {k:26s} {v * 1000:9.2f} ms  {v / c:6.3f}x compile")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", default=None, help="also write the medians (seconds) here")
    args = ap.parse_args()
    out = run(args.repeat)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
