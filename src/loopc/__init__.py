"""loopc — compiler toolchain and static analyzer for ``loop.plan/v1``.

Public API (pure functions; no I/O except the ``*_file`` helpers):

* :func:`check_source`, :func:`check_file` — passes 1–12
  (docs/language.md#compiler-passes), returning
  a :class:`CheckResult` (``.ok``, ``.diagnostics``, ``.plan``);
* :func:`compile_source`, :func:`compile_file` — passes 1–13, returning a
  :class:`CompileResult` (``.ok``, ``.diagnostics``, ``.artifact``,
  ``.digest``, ``.bytes``) with the canonical versioned IR artifact;
* :func:`plan_source`, :func:`plan_file` — the execution plan derived from
  the verified artifact and a capability catalog, returning a
  :class:`PlanResult` (docs/plan.md);
* :attr:`CheckResult.symbols` — the :class:`SymbolIndex` (definitions,
  references, rename; :class:`Symbol`, :class:`Occurrence`,
  :class:`RenameError`) and :attr:`CheckResult.source_map` — the
  :class:`SourceMap` (model object / field → span).

See docs/api.md.
"""
from __future__ import annotations

__version__ = "0.1.0"

from loopc.diagnostics import Applicability, Diagnostic, Fix, Related, Severity, Span, TextEdit
from loopc.pipeline import CheckResult, CompileResult, check_file, check_source, compile_file, compile_source

__all__ = [
    "Applicability", "CheckResult", "CompileResult", "Diagnostic", "Fix", "Related", "Severity", "Span", "TextEdit",
    "check_file", "check_source", "compile_file", "compile_source", "__version__",
    "PlanResult", "plan_file", "plan_source",
    "Occurrence", "RenameError", "SourceMap", "Symbol", "SymbolIndex",
]

_PLAN_EXPORTS = ("PlanResult", "plan_file", "plan_source")
#: Loaded on first use (start-up time): name → defining module.
_LAZY_EXPORTS = {
    "Occurrence": "loopc.compiler.symbols",
    "RenameError": "loopc.compiler.symbols",
    "Symbol": "loopc.compiler.symbols",
    "SymbolIndex": "loopc.compiler.symbols",
    "SourceMap": "loopc.compiler.sourcemap",
}


def __getattr__(name: str) -> object:
    """Lazy execution-plan exports (``loopc.plan_source`` ...): the plan layer
    sits beside the language server, which imports this package, so it is
    loaded on first use rather than imported here."""
    if name in _PLAN_EXPORTS or name in _LAZY_EXPORTS:
        import importlib

        return getattr(importlib.import_module(_LAZY_EXPORTS.get(name, "loopc.plan.api")), name)
    raise AttributeError(f"module 'loopc' has no attribute {name!r}")
