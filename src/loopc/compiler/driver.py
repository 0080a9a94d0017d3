"""The pass driver: source → YAML tree → typed model → checked model
(seed 004 §5 passes 1–12).  Pure: no I/O.

Each pass runs inside a guard: a pass that crashes becomes an LP5999
diagnostic, never a traceback (cfn-lint's lesson).  Later passes run only on
what earlier passes accepted, so one defect gives one diagnostic.
"""
from __future__ import annotations

import contextlib
import gc
import traceback
from typing import Any, Callable, Iterator

import attrs

from loopc.compiler.report import Reporter, finish
from loopc.compiler.yamlnodes import YDocument
from loopc.diagnostics import Diagnostic, Severity


@attrs.frozen
class CheckResult:
    """Result of :func:`check_source`.

    ``ok`` is true when no diagnostic has error severity.  ``plan`` is the
    typed model (``None`` when the document could not be modelled),
    ``scopes`` the structural scope map, ``types`` the type pass's
    compiled expressions, ``analysis`` the analyzer's facts (failure routes,
    effects), all ``None`` when their pass did not run.
    """

    ok: bool
    diagnostics: tuple[Diagnostic, ...]
    document: YDocument | None = None
    plan: Any = None
    scopes: Any = None
    types: Any = None
    analysis: Any = None
    path: str | None = None
    budget_checked: bool = False

    @property
    def line_index(self) -> Any:
        """The :class:`~loopc.lineindex.LineIndex` of the decoded source, or
        ``None`` when it could not be decoded."""
        return self.document.index if self.document is not None else None

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.WARNING)


def _guard(reporter: Reporter, name: str, fn: Callable[[], Any]) -> Any:
    """Run one pass; an unexpected exception becomes an LP5999 diagnostic."""
    try:
        return fn()
    except RecursionError:
        reporter.report("LP5999", None, f"internal error in {name}: recursion limit reached")
    except Exception as exc:  # noqa: BLE001 - a crashing rule becomes a diagnostic
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        reporter.report(
            "LP5999", None,
            f"internal error in {name}: {type(exc).__name__}: {exc} "
            f"({tb.filename.rsplit('/', 1)[-1]}:{tb.lineno}); please report this",
        )
    return None


def check_source(src: str | bytes, *, path: str | None = None, config: Any = None,
                 lint: bool = True) -> CheckResult:
    """Check one plan source (text or bytes).  Never raises on bad input.

    Runs seed 004 §5 passes 1–12 plus the artifact-budget projection of
    §3.2 (so validation reports the same LP5001–LP5004 as publish); returns a
    :class:`CheckResult` whose diagnostics are sorted by position, carry
    ``path`` and have code-point offsets on every span.

    With ``lint`` (the default) the lint layer of docs/ci.md applies: inline
    ``# loopc: disable=CODE -- reason`` suppressions and ``config`` (a
    :class:`loopc.lint.LintConfig`: disabled warnings, warnings raised to
    errors); ``ok`` then reflects the raised severities.  ``compile`` passes
    ``lint=False``: suppressions and configuration never change an artifact's
    diagnostics.
    """
    with _no_cyclic_gc():
        res = _check(src, path)
    if not lint:
        return res
    from loopc.lint import apply_lint

    diags = apply_lint(res.diagnostics, res.document, config)
    if diags == res.diagnostics:
        return res
    # locate and attach the path to the suppression findings (LP19xx)
    diags = finish(diags, res.document.text if res.document is not None else None, path)
    ok = not any(d.severity is Severity.ERROR for d in diags)
    return attrs.evolve(res, ok=ok, diagnostics=diags)


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector during one check: the passes build
    many small acyclic objects and each generation-2 collection would rescan
    the whole (large, live) model.  Reference counting still frees memory;
    the previous state is restored."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _check(src: str | bytes, path: str | None) -> CheckResult:
    from loopc.compiler import yamlload

    reporter = Reporter()
    doc = _guard(reporter, "yaml", lambda: yamlload.load(src, reporter, path=path))
    plan = scopes = types = analysis = None
    budget_checked = False
    if doc is not None and doc.root is not None:
        from loopc.compiler import schema

        plan = _guard(reporter, "schema", lambda: schema.build_plan(doc, reporter))
    if plan is not None:
        from loopc.compiler import graph, scopemap, typecheck

        graph_ok = _guard(reporter, "graph", lambda: graph.check_graph(plan, reporter))
        scopes = _guard(reporter, "scopes", lambda: scopemap.build_scope_map(plan))
        if scopes is not None:
            types = _guard(reporter, "types", lambda: typecheck.check_types(plan, scopes, reporter, doc))
            if types is not None:
                from loopc.ir import budget

                budget_checked = _guard(
                    reporter, "budget", lambda: budget.check_budget(plan, scopes, types, reporter)
                ) is not None
            if graph_ok:
                from loopc import analyzer

                analysis = _guard(reporter, "analyzer", lambda: analyzer.analyze(plan, scopes, reporter))
    diags = finish(reporter.diagnostics, doc.text if doc is not None else None, path,
                   doc.index if doc is not None else None)
    ok = not any(d.severity is Severity.ERROR for d in diags)
    return CheckResult(ok, diags, doc, plan, scopes, types, analysis, path, budget_checked)


def check_file(path: str) -> CheckResult:
    """Read ``path`` as bytes and check it; ``OSError`` propagates to the caller
    (the CLI maps it to exit 2)."""
    with open(path, "rb") as fh:
        data = fh.read(yaml_budget_bytes() + 1)
    return check_source(data, path=str(path))


def yaml_budget_bytes() -> int:
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES

    return MAX_SOURCE_BYTES
