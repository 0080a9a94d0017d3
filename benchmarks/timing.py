"""The benchmarks' one timing loop (benchmarks/README.md: "Timings are
medians ... after one unmeasured warm-up").

Imported by the scripts next to it (``sys.path`` holds ``benchmarks/`` when
one of them runs, or inserts it when loaded from a test)."""
from __future__ import annotations

import statistics
import time
from typing import Any, Callable


def median_seconds(fn: Callable[[], Any], repeat: int,
                   clock: Callable[[], float] = time.perf_counter) -> float:
    """Median of ``repeat`` timed calls of ``fn()``, in seconds of ``clock``
    (wall time by default; pass ``time.process_time`` for CPU time), after
    one unmeasured warm-up call.  ``repeat`` ≥ 1; what ``fn`` raises
    propagates."""
    fn()
    samples = []
    for _ in range(repeat):
        t = clock()
        fn()
        samples.append(clock() - t)
    return statistics.median(samples)
