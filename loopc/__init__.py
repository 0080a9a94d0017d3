"""loopc — compiler toolchain and static analyzer for ``loop.plan/v1``.

Public API (pure functions; no I/O except the ``*_file`` helpers):

* :func:`check_source`, :func:`check_file` — seed 004 §5 passes 1–12, returning
  a :class:`CheckResult` (``.ok``, ``.diagnostics``, ``.plan``).

See docs/api.md.
"""
from __future__ import annotations

__version__ = "0.1.0"

from loopc.compiler.driver import CheckResult, check_file, check_source
from loopc.diagnostics import Diagnostic, Fix, Related, Severity, Span, TextEdit

__all__ = [
    "CheckResult", "Diagnostic", "Fix", "Related", "Severity", "Span", "TextEdit",
    "check_file", "check_source", "__version__",
]
