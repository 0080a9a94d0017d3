"""loopc.pipeline — the layer above compiler, analyzer and IR that owns pass
order, guards and typed results (docs/architecture.md).

* :func:`check_source`, :func:`check_file` → :class:`CheckResult` (passes 1–12);
* :func:`compile_source`, :func:`compile_file`, :func:`compile_checked` →
  :class:`CompileResult` (passes 1–13, canonical artifact bytes);
* :func:`guard` — the pass guard.

The same names are re-exported from the package root (``loopc.check_source``).
Consumers (interpreter, plan back end, language server, CLI) import this layer
or the root; this layer never imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopc.pipeline.check import CheckResult, check_file, check_source, yaml_budget_bytes
from loopc.pipeline.guard import guard

if TYPE_CHECKING:
    from loopc.pipeline.compile import CompileResult, bench_compile, compile_checked, compile_file, compile_source

__all__ = [
    "CheckResult",
    "CompileResult",
    "bench_compile",
    "check_file",
    "check_source",
    "compile_checked",
    "compile_file",
    "compile_source",
    "guard",
    "yaml_budget_bytes",
]

_COMPILE = ("CompileResult", "bench_compile", "compile_checked", "compile_file", "compile_source")


def __getattr__(name: str) -> object:
    """The compile names, imported from :mod:`loopc.pipeline.compile` on first
    use: ``loopc check`` never compiles (start-up, issue 26)."""
    if name in _COMPILE:
        from loopc.pipeline import compile as _compile

        value = getattr(_compile, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'loopc.pipeline' has no attribute {name!r}")
