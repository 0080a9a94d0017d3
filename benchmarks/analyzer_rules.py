"""CPU cost of the analyzer alone (front end excluded) on the typical and
max-budget plans and on the fixtures of the wait rule for races and of the
switch-condition domains (docs/language.md "A wait orders what follows it",
"Switch conditions").

Usage::

    python benchmarks/analyzer_rules.py [--repeat N]

Prints one line per plan: the median of ``time.process_time()`` over N runs
(after one unmeasured warm-up), in milliseconds.  CPU time, not wall time,
because the machine is shared; compare runs of two checkouts side by side
(``PYTHONPATH=<checkout>/src``).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
from run import _analyze_setup  # noqa: E402
from timing import median_seconds  # noqa: E402

FIXTURES = HERE.parent / "tests" / "fixtures" / "analysis"


def plans() -> dict[str, str]:
    return {
        "typical plan": generate.typical_plan(),
        "max-budget plan": generate.max_budget_plan(),
        "wait-ordered read (state_race_wait_ok)": (FIXTURES / "state_race_wait_ok.yaml").read_text(),
        "enum switch (switch_exhaustive_enum)": (FIXTURES / "switch_exhaustive_enum.yaml").read_text(),
    }


def median_cpu_ms(fn, repeat: int) -> float:
    return median_seconds(fn, repeat, clock=time.process_time) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=41, help="repetitions per plan (median)")
    args = ap.parse_args(argv)
    for name, src in plans().items():
        n = max(3, args.repeat // 4) if name == "max-budget plan" else args.repeat
        print(f"{name:42} {median_cpu_ms(_analyze_setup(src), n):9.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
