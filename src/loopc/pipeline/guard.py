"""Pass guards and the garbage-collector policy of the pipeline.

Every pass runs inside :func:`guard`: a pass that crashes becomes one LP5999
diagnostic, never a traceback (docs/architecture.md "Invariants").
:func:`gc_paused` is the pipeline's GC policy: the passes build many small
acyclic objects, and each generation-2 collection would rescan the whole
live model, so a check or compile pauses the cyclic collector for its
duration (reference counting still frees memory; the previous state is
restored).  ``pause_gc=False`` on the pipeline entry points leaves the
interpreter's GC state alone.
"""

from __future__ import annotations

import contextlib
import gc
import traceback
from typing import Callable, Iterator, TypeVar

from loopc.compiler.report import Reporter

__all__ = ["guard", "gc_paused", "report_crash"]

T = TypeVar("T")


def report_crash(reporter: Reporter, name: str, exc: BaseException) -> None:
    """Report ``exc`` raised inside pass ``name`` as LP5999."""
    if isinstance(exc, RecursionError):
        reporter.report("LP5999", None, f"internal error in {name}: recursion limit reached")
        return
    tb = traceback.extract_tb(exc.__traceback__)[-1]
    reporter.report(
        "LP5999",
        None,
        f"internal error in {name}: {type(exc).__name__}: {exc} "
        f"({tb.filename.rsplit('/', 1)[-1]}:{tb.lineno}); please report this",
    )


def guard(reporter: Reporter, name: str, fn: Callable[[], T]) -> T | None:
    """Run one pass; an unexpected exception becomes an LP5999 diagnostic
    and the pass yields ``None``."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - a crashing rule becomes a diagnostic
        report_crash(reporter, name, exc)
    return None


@contextlib.contextmanager
def gc_paused(enabled: bool = True) -> Iterator[None]:
    """Pause the cyclic garbage collector while the block runs (when
    ``enabled``); restores the previous state."""
    if not enabled:
        yield
        return
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
