"""Lint layer of ``loopc check`` and the language server: inline
suppressions and configuration applied to one check's diagnostics
(docs/ci.md).  Pure: no I/O (configuration files are read by the CLI;
see :func:`loopc.cli.config.load_config`).

* :class:`LintConfig`, :func:`from_mapping` — configuration;
* :func:`apply_lint` — suppressions, then ``disable``, ``error`` and
  ``warnings-as-errors``;
* :mod:`loopc.lint.suppress` — the ``# loopc: disable=CODE -- reason`` comments.

``compile``, ``plan`` and ``run`` never apply this layer.
"""

from __future__ import annotations

from typing import Any, Sequence


from loopc.diagnostics import Diagnostic, Severity
from loopc.lint.config import LintConfig, from_mapping

__all__ = ["LintConfig", "apply_lint", "from_mapping"]


def apply_lint(
    diagnostics: Sequence[Diagnostic], doc: Any = None, config: LintConfig | None = None
) -> tuple[Diagnostic, ...]:
    """Diagnostics of one check after inline suppressions in ``doc`` (a
    :class:`~loopc.compiler.yamlnodes.YDocument`, or ``None``) and then
    ``config``: codes in ``disable`` are dropped (warnings only), codes in
    ``error`` and — with ``warnings_as_errors`` — every warning get error
    severity.  Errors are never dropped nor downgraded.  Sorted by position
    (:meth:`Diagnostic.sort_key`)."""
    if doc is not None and "loopc:" in getattr(doc, "text", ""):
        from loopc.lint import suppress

        diags = suppress.apply(diagnostics, doc)
    else:
        diags = list(diagnostics)
    if config is not None:
        disabled = set(config.disable)
        raised = set(config.error)
        out = []
        for d in diags:
            if d.severity is Severity.ERROR:
                out.append(d)
                continue
            if d.code in disabled:
                continue
            if d.severity is Severity.WARNING and (config.warnings_as_errors or d.code in raised):
                d = d.evolve(severity=Severity.ERROR)
            out.append(d)
        diags = out
    return tuple(sorted(diags, key=Diagnostic.sort_key))
