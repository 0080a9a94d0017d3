"""Pass guards of the pipeline.

Every pass runs inside :func:`guard`: a pass that crashes becomes one LP5999
diagnostic, never a traceback (docs/architecture.md#invariants).

The library never touches the interpreter's garbage-collector state (a
process-wide setting that belongs to the host program): the YAML tree, the
model and the results hold no reference cycles, so a discarded result is
freed by reference counting alone.  Only the ``loopc`` CLI and language
server processes set a GC policy (docs/architecture.md#invariants).
"""

from __future__ import annotations

from typing import Callable, TypeVar

from loopc.compiler.report import Reporter

__all__ = ["guard", "report_crash", "warn_pause_gc"]


def warn_pause_gc(value: object) -> None:
    """The deprecated ``pause_gc`` keyword of the pipeline entry points: a
    ``DeprecationWarning`` when it is passed; it has no effect."""
    if value is not None:
        import warnings

        warnings.warn(
            "pause_gc is deprecated and ignored: loopc never changes the garbage collector's state",
            DeprecationWarning,
            stacklevel=3,
        )


T = TypeVar("T")


def report_crash(reporter: Reporter, name: str, exc: BaseException) -> None:
    """Report ``exc`` raised inside pass ``name`` as LP5999."""
    if isinstance(exc, RecursionError):
        reporter.report("LP5999", None, f"internal error in {name}: recursion limit reached")
        return
    import traceback  # only for a crash (start-up: issue 26)

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
