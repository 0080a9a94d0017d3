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
    effects), all ``None`` when their pass did not run.  ``suppressed`` is
    the number of diagnostics left out by the per-file limit (then the last
    diagnostic is the LP1013 summary) and ``totals`` the (errors, warnings)
    found before the limit applied (:attr:`error_count`,
    :attr:`warning_count`).
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
    suppressed: int = 0
    totals: tuple[int, int] | None = None

    @property
    def error_count(self) -> int:
        """Errors found, those left out by the diagnostic limit included."""
        return self.totals[0] if self.totals is not None else len(self.errors)

    @property
    def warning_count(self) -> int:
        """Warnings found, those left out by the diagnostic limit included."""
        return self.totals[1] if self.totals is not None else len(self.warnings)

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


#: Default per-file diagnostic limit (docs/language.md "Diagnostic limit").
MAX_DIAGNOSTICS = 200


def check_source(src: str | bytes, *, path: str | None = None, config: Any = None,
                 lint: bool = True, max_diagnostics: int | None = MAX_DIAGNOSTICS) -> CheckResult:
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

    At most ``max_diagnostics`` diagnostics are returned (``None`` or 0:
    all); past the limit the first ones are kept and one LP1013 summary
    carrying the number left out follows them (:func:`cap_diagnostics`).
    """
    with _no_cyclic_gc():
        res = _check(src, path)
    if not lint:
        return cap_result(res, max_diagnostics)
    from loopc.lint import apply_lint

    diags = apply_lint(res.diagnostics, res.document, config)
    if diags == res.diagnostics:
        return cap_result(res, max_diagnostics)
    # locate and attach the path to the suppression findings (LP19xx)
    diags = finish(diags, res.document.text if res.document is not None else None, path)
    ok = not any(d.severity is Severity.ERROR for d in diags)
    return cap_result(attrs.evolve(res, ok=ok, diagnostics=diags), max_diagnostics)


def cap_result(res: CheckResult, max_diagnostics: int | None) -> CheckResult:
    """``res`` with its diagnostics capped by :func:`cap_diagnostics`."""
    kept, suppressed = cap_diagnostics(res.diagnostics, max_diagnostics)
    if not suppressed:
        return res
    totals = (len(res.errors), len(res.warnings))
    return attrs.evolve(res, diagnostics=kept, suppressed=suppressed, totals=totals)


def cap_diagnostics(diags: tuple[Diagnostic, ...], limit: int | None) -> tuple[tuple[Diagnostic, ...], int]:
    """(kept diagnostics, number left out).  With more than ``limit``
    diagnostics (sorted by position), the first ``limit`` are kept and one
    LP1013 summary is appended at the first one left out; its severity is
    the highest of those left out.  ``None`` or a limit below 1: no cap."""
    if not limit or limit < 1 or len(diags) <= limit:
        return diags, 0
    from loopc import codes

    dropped = diags[limit:]
    n = len(dropped)
    errors = sum(1 for d in dropped if d.severity is Severity.ERROR)
    warnings = sum(1 for d in dropped if d.severity is Severity.WARNING)
    others = n - errors - warnings
    sev = Severity.ERROR if errors else Severity.WARNING if warnings else Severity.INFO
    kinds = [f"{errors:,} error{'s' * (errors != 1)}", f"{warnings:,} warning{'s' * (warnings != 1)}"]
    if others:
        kinds.append(f"{others:,} note{'s' * (others != 1)}")
    first = dropped[0]
    summary = Diagnostic(
        code="LP1013", name=codes.get("LP1013").name, severity=sev,
        message=(f"{n:,} more diagnostic{'s' * (n != 1)} not shown from here on ({', '.join(kinds)}); "
                 f"only the first {limit:,} of a file are reported (raise the limit with "
                 "--max-diagnostics N, 0 for none)"),
        span=first.span, pointer=first.pointer, path=first.path,
    )
    return diags[:limit] + (summary,), n


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


def check_file(path: str, *, max_diagnostics: int | None = MAX_DIAGNOSTICS) -> CheckResult:
    """Read ``path`` as bytes (at most the 1 MiB budget + 1 byte, never
    blocking on a FIFO or device: :func:`loopc.boundedio.read_bounded`) and
    check it.  :class:`loopc.boundedio.ReadError` (an ``OSError``) propagates
    to the caller (the CLI maps it to exit 2)."""
    from loopc.boundedio import read_bounded

    data = read_bounded(str(path), yaml_budget_bytes())
    return check_source(data, path=str(path), max_diagnostics=max_diagnostics)


def yaml_budget_bytes() -> int:
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES

    return MAX_SOURCE_BYTES
