"""The check pipeline: source → YAML tree → typed model → checked model
(passes 1–12 of docs/architecture.md).  Pure: no I/O except :func:`check_file`.

The pipeline owns pass order and guards (:mod:`loopc.pipeline.guard`):
each pass runs inside a guard, so a pass that crashes becomes an LP5999
diagnostic, never a traceback (cfn-lint's lesson).  Later passes run only on
what earlier passes accepted, so one defect gives one diagnostic.
"""

from __future__ import annotations

import functools
from collections import Counter
from typing import TYPE_CHECKING, Iterable

from loopc.value import Value
from loopc.compiler.report import Reporter, finish
from loopc.compiler.yamlnodes import YDocument
from loopc.diagnostics import Diagnostic, Severity
from loopc.pipeline.guard import guard, warn_pause_gc

if TYPE_CHECKING:  # types only; the passes are imported lazily for start-up time
    from loopc.analyzer.facts import Analysis
    from loopc.compiler.model import Plan
    from loopc.compiler.scopemap import ScopeMap
    from loopc.compiler.sourcemap import SourceMap
    from loopc.compiler.symbols import SymbolIndex
    from loopc.compiler.typecheck import TypeInfo
    from loopc.lineindex import LineIndex
    from loopc.lint import LintConfig

__all__ = [
    "CheckResult",
    "MAX_DIAGNOSTICS",
    "cap_diagnostics",
    "cap_result",
    "check_file",
    "check_source",
    "linted",
    "yaml_budget_bytes",
]


class CheckResult(Value):
    """Result of :func:`check_source`.

    ``ok`` is true when no diagnostic has error severity.  ``plan`` is the
    typed model (``None`` when the document could not be modelled),
    ``scopes`` the structural scope map, ``types`` the type pass's
    compiled expressions, ``analysis`` the analyzer's facts (failure routes,
    effects), all ``None`` when their pass did not run.  ``suppressed`` is
    the number of diagnostics left out by the per-file limit (then the last
    diagnostic is the LP1013 summary) and ``totals`` the (errors, warnings)
    found before the limit applied (:attr:`error_count`,
    :attr:`warning_count`).  :attr:`symbols` and :attr:`source_map` are
    computed on first use (a plain check never pays for them).
    """

    ok: bool
    diagnostics: tuple[Diagnostic, ...]
    document: YDocument | None = None
    plan: Plan | None = None
    scopes: ScopeMap | None = None
    types: TypeInfo | None = None
    analysis: Analysis | None = None
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
    def line_index(self) -> LineIndex | None:
        """The :class:`~loopc.lineindex.LineIndex` of the decoded source, or
        ``None`` when it could not be decoded."""
        return self.document.index if self.document is not None else None

    @functools.cached_property
    def symbols(self) -> SymbolIndex:
        """The :class:`~loopc.compiler.symbols.SymbolIndex` of the plan:
        every definition (node ids, ports, branch keys, contract and Run
        state fields) and every reference to it, with go-to-definition,
        find-references and rename (docs/api.md#symbol-index).  Empty when
        there is no plan.  Built on first use, then kept."""
        from loopc.compiler.symbols import SymbolIndex

        return SymbolIndex(self.document, self.plan, self.scopes, self.types)

    @functools.cached_property
    def source_map(self) -> SourceMap | None:
        """The :class:`~loopc.compiler.sourcemap.SourceMap` of the plan
        (model object / field → YAML node → span; docs/api.md#source-map), or ``None``
        when there is no plan."""
        from loopc.compiler.sourcemap import SourceMap

        return SourceMap(self.plan) if self.plan is not None else None

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """The ``error`` diagnostics, in report order."""
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        """The ``warning`` diagnostics, in report order."""
        return tuple(d for d in self.diagnostics if d.severity is Severity.WARNING)


#: Default per-file diagnostic limit (docs/reference.md#budgets).
MAX_DIAGNOSTICS = 200


def check_source(
    src: str | bytes,
    *,
    path: str | None = None,
    config: LintConfig | None = None,
    lint: bool = True,
    max_diagnostics: int | None = MAX_DIAGNOSTICS,
    pause_gc: bool | None = None,
) -> CheckResult:
    """Check one plan source (text or bytes).  Never raises on bad input.

    Runs passes 1–12 (docs/language.md#compiler-passes) plus the artifact-budget
    projection of docs/ir.md#artifact-budget (so checking reports the same
    LP5001–LP5004 as compiling, docs/language.md#ir); returns a
    :class:`CheckResult` whose diagnostics are sorted by position, carry
    ``path`` and have code-point offsets on every span.

    With ``lint`` (the default) the lint layer of docs/ci.md applies: inline
    ``# loopc: disable=CODE -- reason`` suppressions and ``config`` (a
    :class:`loopc.lint.LintConfig`: disabled warnings, warnings raised to
    errors); ``ok`` then reflects the raised severities.  ``compile`` passes
    ``lint=False``: suppressions and configuration never change an artifact's
    diagnostics.  ``pause_gc`` is accepted and ignored (deprecated): the check
    never touches the garbage collector (docs/api.md#memory-and-the-garbage-collector).

    At most ``max_diagnostics`` diagnostics are returned (``None`` or 0:
    all); past the limit the first ones are kept and one LP1013 summary
    carrying the number left out follows them (:func:`cap_diagnostics`).
    """
    warn_pause_gc(pause_gc)
    res = _check(src, path)
    if not lint:
        return cap_result(res, max_diagnostics)
    return cap_result(linted(res, config, path), max_diagnostics)


def linted(res: CheckResult, config: LintConfig | None = None, path: str | None = None) -> CheckResult:
    """``res`` (an unlinted, uncapped check) after the lint layer: inline
    suppressions of its document, then ``config`` (docs/ci.md); the
    suppression findings (LP19xx) located and given ``path``; ``ok`` from
    the resulting severities.  What ``check_source`` returns with ``lint``;
    the CLI's ``compile`` and ``digest`` report a compile's check through it."""
    from loopc.lint import apply_lint

    diags = apply_lint(res.diagnostics, res.document, config)
    if diags == res.diagnostics:
        return res
    merged = Reporter()
    merged.extend(diags)
    diags = finish(merged.diagnostics, res.document.text if res.document is not None else None, path)
    ok = not any(d.severity is Severity.ERROR for d in diags)
    return res.evolve(ok=ok, diagnostics=diags)


def cap_result(res: CheckResult, max_diagnostics: int | None) -> CheckResult:
    """``res`` with its diagnostics capped by :func:`cap_diagnostics`."""
    kept, suppressed = cap_diagnostics(res.diagnostics, max_diagnostics)
    if not suppressed:
        return res
    totals = (len(res.errors), len(res.warnings))
    return res.evolve(diagnostics=kept, suppressed=suppressed, totals=totals)


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
        code="LP1013",
        name=codes.get("LP1013").name,
        severity=sev,
        message=(
            f"{n:,} more diagnostic{'s' * (n != 1)} not shown from here on ({', '.join(kinds)}); "
            f"only the first {limit:,} of a file are reported (raise the limit with "
            "--max-diagnostics N, 0 for none)"
        ),
        span=first.span,
        pointer=first.pointer,
        path=first.path,
    )
    return diags[:limit] + (summary,), n


def check_unsuppressed(src: str | bytes, *, path: str | None = None) -> CheckResult:
    """The raw passes (no lint layer, no cap) with follow-on suppression off:
    every finding a pass makes, also those that follow from an error already
    reported (docs/architecture.md#one-defect-one-diagnostic).  For the
    fix-safety proof (:mod:`loopc.pipeline.fixsafety`, docs/api.md#fixes-and-their-safety);
    a user wants :func:`check_source`."""
    return _check(src, path, suppress_follow_ons=False, confirm_fixes=False)


def _confirm_yaml_fixes(text: str, diags: tuple[Diagnostic, ...]) -> tuple[Diagnostic, ...]:
    """The safe fixes of a text that did not parse, judged by the whole plan.

    The YAML pass marks a fix safe by parsing alone (a re-indentation is the
    one column tried that makes the text parse: yamlindent); whether the
    plan it gives is any better only the later passes can tell (``switch:``
    moved under a node's ``input`` parses, and is six errors).  Such a fix
    stays safe only when it meets the fix-safety rule
    (:func:`loopc.pipeline.fixsafety.prove_fix`: no error the text did not
    have); otherwise it is offered as unsafe.  The YAML pass neither taints
    nor depends, so ``diags`` are also the unsuppressed errors of ``text``."""
    from loopc.lint.fixes import is_safe

    if not any(is_safe(d) for d in diags):
        return diags
    from loopc.diagnostics import Applicability

    before = error_identities(diags)
    out = []
    for d in diags:
        if is_safe(d) and d.fix is not None and fix_new_errors(text, d, before=before)[2]:
            d = d.evolve(fix=d.fix.evolve(applicability=Applicability.UNSAFE))
        out.append(d)
    return tuple(out)


def error_identities(diags: Iterable[Diagnostic]) -> Counter[tuple[str, str]]:
    """The errors of ``diags`` as a multiset of ``(code, message)``: the
    identity the fix-safety rule compares (positions move when a fix
    changes a line; docs/api.md#fixes-and-their-safety)."""
    return Counter((d.code, d.message) for d in diags if d.severity is Severity.ERROR)


def fix_new_errors(
    text: str, diagnostic: Diagnostic, *, before: Counter[tuple[str, str]] | None = None
) -> tuple[bool, str, tuple[tuple[str, str], ...]]:
    """The errors half of the fix-safety rule (docs/api.md#fixes-and-their-safety):
    ``diagnostic``'s fix applied alone to ``text`` (whatever its
    applicability), both texts checked with follow-on suppression off.

    Returns ``(applied, fixed text, new errors)``: ``applied`` is ``False``
    (and the text unchanged) when the edits fall outside the text or overlap;
    the new errors are the ``(code, message)`` pairs the fixed text has and
    ``text`` had not, sorted.  ``before`` (the :func:`error_identities` of
    ``text`` checked unsuppressed) is computed when omitted.  The digest half
    needs the compiler: :func:`loopc.pipeline.fixsafety.prove_fix`.  Never
    raises on bad input: every pass runs guarded."""
    from loopc.lint.fixes import apply_fixes

    fixed, n = apply_fixes(text, [diagnostic], unsafe=True)
    if n == 0:
        return False, text, ()
    if before is None:
        before = error_identities(check_unsuppressed(text).diagnostics)
    after = error_identities(check_unsuppressed(fixed).diagnostics)
    return True, fixed, tuple(sorted((after - before).elements()))


#: sources up to this many characters (or bytes) have their re-indentations
#: judged by the whole check (:func:`_checks_clean`)
_JUDGE_MAX_CHARS = 64 * 1024


def _checks_clean(text: str) -> bool:
    """Whether ``text`` checks without an error (follow-on suppression off,
    no lint): the YAML pass's judge of a re-indentation that parses."""
    diags = _check(text, None, suppress_follow_ons=False, confirm_fixes=False).diagnostics
    return not any(d.severity is Severity.ERROR for d in diags)


def _check(
    src: str | bytes, path: str | None, *, suppress_follow_ons: bool = True, confirm_fixes: bool = True
) -> CheckResult:
    reporter = Reporter(suppress_follow_ons=suppress_follow_ons)
    doc = load_document(src, path, reporter, confirm_fixes=confirm_fixes)
    return check_document(doc, reporter, path, confirm_fixes=confirm_fixes)


def load_document(
    src: str | bytes, path: str | None, reporter: Reporter, *, confirm_fixes: bool = True
) -> YDocument | None:
    """Pass 1 (the YAML layer) of :func:`_check`, guarded: the positioned
    tree of ``src`` (``None`` when none could be built), its findings on
    ``reporter``.  The incremental re-check (:mod:`loopc.pipeline.incremental`)
    calls it for a whole text and :func:`check_document` for the rest."""
    from loopc.compiler import yamlload

    # the judge checks each re-indentation that parses (a few whole checks):
    # above _JUDGE_MAX_CHARS the YAML pass picks by parsing and the one fix it
    # offers is proven afterwards (_confirm_yaml_fixes: one check)
    judge = _checks_clean if confirm_fixes and len(src) <= _JUDGE_MAX_CHARS else None
    return guard(reporter, "yaml", lambda: yamlload.load(src, reporter, path=path, judge=judge))


def check_document(
    doc: YDocument | None, reporter: Reporter, path: str | None, *, confirm_fixes: bool = True
) -> CheckResult:
    """Passes 2–12 of :func:`_check` on a loaded ``doc`` (whose YAML
    findings, if any, are already on ``reporter``): the unlinted, uncapped
    :class:`CheckResult`."""
    plan: Plan | None = None
    scopes: ScopeMap | None = None
    types: TypeInfo | None = None
    analysis: Analysis | None = None
    budget_checked = False
    if doc is not None and doc.root is not None:
        from loopc.compiler import schema

        plan = guard(reporter, "schema", lambda: schema.build_plan(doc, reporter))
    if plan is not None:
        from loopc.compiler import graph, scopemap, typecheck

        graph_ok = guard(reporter, "graph", lambda: graph.check_graph(plan, reporter))
        scopes = guard(reporter, "scopes", lambda: scopemap.build_scope_map(plan))
        if scopes is not None:
            types = guard(reporter, "types", lambda: typecheck.check_types(plan, scopes, reporter, doc))
            if types is not None:
                from loopc.ir import budget

                budget_checked = (
                    guard(reporter, "budget", lambda: budget.check_budget(plan, scopes, types, reporter)) is not None
                )
            if graph_ok:
                from loopc import analyzer

                analysis = guard(reporter, "analyzer", lambda: analyzer.analyze(plan, scopes, reporter))
            if types is not None:
                from loopc.compiler.usage import check_usage, may_read_run

                guard(
                    reporter,
                    "usage",
                    lambda: check_usage(
                        plan, may_read_run(types.values), (b.field for b in types.entry_bindings), reporter
                    ),
                )
    diags = finish(
        reporter.diagnostics,
        doc.text if doc is not None else None,
        path,
        # the document's line index, built on first use: a clean check needs none
        doc.index if doc is not None and reporter.diagnostics else None,
    )
    if confirm_fixes and plan is None and doc is not None and diags:
        diags = _confirm_yaml_fixes(doc.text, diags)
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
