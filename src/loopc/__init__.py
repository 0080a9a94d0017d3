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

from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:  # what mypy sees; at run time every name loads on first use (``__getattr__``).  The plan
    # layer's names are left out: it sits beside the language server, which imports this package (.importlinter)
    from loopc.compiler.sourcemap import SourceMap
    from loopc.compiler.symbols import Occurrence, RenameError, Symbol, SymbolIndex
    from loopc.diagnostics import Applicability, Diagnostic, Fix, Related, Severity, Span, TextEdit
    from loopc.pipeline import CheckResult, CompileResult, check_file, check_source, compile_file, compile_source

__all__ = [
    "Applicability",
    "CheckResult",
    "CompileResult",
    "Diagnostic",
    "Fix",
    "Related",
    "Severity",
    "Span",
    "TextEdit",
    "check_file",
    "check_source",
    "compile_file",
    "compile_source",
    "__version__",
    "PlanResult",
    "plan_file",
    "plan_source",
    "Occurrence",
    "RenameError",
    "SourceMap",
    "Symbol",
    "SymbolIndex",
]

#: Every public name but ``__version__``, loaded on first use: name → defining
#: module.  Importing ``loopc`` (which every ``loopc.*`` import does, the
#: command line's first) then costs nothing; ``loopc check FILE`` imports the
#: passes only when it checks, after ``loopc.cli.gc_policy`` has run.
_LAZY_EXPORTS = {
    **dict.fromkeys(
        ("Applicability", "Diagnostic", "Fix", "Related", "Severity", "Span", "TextEdit"), "loopc.diagnostics"
    ),
    **dict.fromkeys(
        ("CheckResult", "CompileResult", "check_file", "check_source", "compile_file", "compile_source"),
        "loopc.pipeline",
    ),
    # the plan layer sits beside the language server, which imports this package
    **dict.fromkeys(("PlanResult", "plan_file", "plan_source"), "loopc.plan.api"),
    **dict.fromkeys(("Occurrence", "RenameError", "Symbol", "SymbolIndex"), "loopc.compiler.symbols"),
    "SourceMap": "loopc.compiler.sourcemap",
}


def __getattr__(name: str) -> object:
    """The public names of :data:`__all__`, imported from their defining
    module on first use (PEP 562) and then kept in this module's namespace,
    so ``from loopc import check_source`` and ``loopc.Diagnostic`` work as
    if imported here.  Raises :class:`AttributeError` for any other name
    (which lets ``from loopc import kinds`` find the submodule)."""
    module = _LAZY_EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'loopc' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
