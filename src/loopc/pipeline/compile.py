"""The compile pipeline (passes 1–13 of docs/architecture.md; docs/api.md#compiling-a-plan).

:func:`compile_source` is pure (text or bytes in, :class:`CompileResult`
out); :func:`compile_file` reads a file and calls it.  The CLI commands
``compile``/``digest`` and the language server are thin shells over these.

Pipeline: :func:`loopc.check_source` (passes 1–12) → artifact budget
projection (:mod:`loopc.ir.budget`) → lowering (:mod:`loopc.ir.lower`) →
version selection (:mod:`loopc.ir.versions`) → the canonical text of the
plan and of its semantic projection (:func:`loopc.ir.model.encode_plan`) →
final gates → semantic digest (:mod:`loopc.ir.digest`) → canonical bytes.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import attrs

from loopc.compiler.report import Reporter
from loopc.diagnostics import Diagnostic, Severity
from loopc.pipeline.check import MAX_DIAGNOSTICS, CheckResult, check_source, yaml_budget_bytes
from loopc.pipeline.guard import guard, warn_pause_gc

if TYPE_CHECKING:  # types only; lowering is imported lazily for start-up time
    from loopc.ir.budget import Limits
    from loopc.ir.model import Artifact

__all__ = ["CompileResult", "compile_source", "compile_file", "compile_checked", "bench_compile"]


@attrs.frozen(eq=False, slots=False)
class CompileResult:
    """Result of a compile.

    * ``ok`` — no error diagnostics and an artifact was produced;
    * ``diagnostics`` — every finding of passes 1–13, sorted by position;
    * ``digest`` — ``sha256:<hex>`` semantic digest (``None`` on errors);
    * ``bytes`` — the canonical RFC 8785 artifact bytes (``None`` on errors);
    * ``check`` — the underlying :class:`~loopc.pipeline.CheckResult`;
    * ``version`` — the artifact version N (``None`` on errors);
    * ``artifact`` — the typed IR model :class:`loopc.ir.model.Artifact`
      that lowering built (equal to ``decode(bytes)``; ``None`` on errors);
    * ``model`` — the same object (``artifact`` falls back to decoding
      ``bytes`` when a result was built without it).
    """

    ok: bool
    diagnostics: tuple[Diagnostic, ...]
    digest: str | None = None
    bytes: bytes | None = None
    check: CheckResult | None = None
    version: int | None = None
    model: Artifact | None = attrs.field(default=None, repr=False)

    @functools.cached_property
    def artifact(self) -> Artifact | None:
        """The typed :class:`~loopc.ir.model.Artifact` lowering built (equal
        to ``decode(bytes)``; ``None`` on errors)."""
        if self.bytes is None:
            return None
        if self.model is not None:
            return self.model
        import json

        from loopc.ir.model import from_json

        return from_json(json.loads(self.bytes))

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """The ``error`` diagnostics, in report order."""
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)


def compile_source(
    src: str | bytes,
    *,
    path: str | None = None,
    limits: Limits | None = None,
    max_diagnostics: int | None = MAX_DIAGNOSTICS,
    pause_gc: bool | None = None,
) -> CompileResult:
    """Compile one plan source.  Never raises on bad input: problems are
    diagnostics (a crashing step becomes LP5999).  ``limits`` overrides the
    artifact budget (:class:`loopc.ir.budget.Limits`; tests only);
    ``max_diagnostics`` caps the check's diagnostics as in
    :func:`loopc.check_source` (LP1013 summary; ``None``: no cap);
    ``pause_gc`` is accepted and ignored (deprecated;
    docs/api.md#memory-and-the-garbage-collector)."""
    warn_pause_gc(pause_gc)
    check = check_source(src, path=path, lint=False, max_diagnostics=max_diagnostics)
    return compile_checked(check, limits=limits)


def compile_file(path: str) -> CompileResult:
    """Read ``path`` as bytes (bounded and non-blocking, as
    :func:`loopc.check_file`) and compile it; ``OSError``
    (:class:`loopc.boundedio.ReadError`) propagates (the CLI maps it to
    exit 2)."""
    from loopc.boundedio import read_bounded

    data = read_bounded(str(path), yaml_budget_bytes())
    return compile_source(data, path=str(path))


def compile_checked(check: CheckResult, *, limits: Limits | None = None, pause_gc: bool | None = None) -> CompileResult:
    """Lower an existing :class:`~loopc.pipeline.CheckResult`
    (pass 13, docs/language.md#compiler-passes).  A check with errors yields ``ok=False`` and its
    diagnostics unchanged.  ``pause_gc`` is accepted and ignored (deprecated)."""
    warn_pause_gc(pause_gc)
    if not check.ok:
        return CompileResult(False, check.diagnostics, check=check)
    reporter = Reporter()
    reporter.extend(check.diagnostics)  # one identity rule over the check's and lowering's findings
    out = guard(reporter, "lowering", lambda: _lower(check, reporter, limits))
    from loopc.compiler.report import finish

    doc = getattr(check, "document", None)
    diags = finish(
        reporter.diagnostics,
        doc.text if doc is not None else None,
        getattr(check, "path", None),
    )
    if out is None or reporter.has_errors:
        return CompileResult(False, diags, check=check)
    version, raw, digest, model = out
    return CompileResult(True, diags, digest, raw, check, version, model)


def _lower(check: CheckResult, reporter: Reporter, limits: Limits | None) -> tuple[int, bytes, str, Artifact] | None:
    from loopc.ir import budget
    from loopc.ir.canonical import text_bytes
    from loopc.ir.digest import digest_of_canonical
    from loopc.ir.instr import LoweringError, scan_instrs
    from loopc.ir.lower import lower_plan
    from loopc.ir.model import Artifact, encode_plan, envelope_text, instr_roots
    from loopc.ir.versions import SOURCE_API_VERSION

    lim = limits or budget.LIMITS
    if check.plan is None or check.scopes is None or check.types is None or check.analysis is None:
        reporter.report("LP5010", None, "cannot compile: the type pass or the analyzer did not run for this plan")
        return None
    if limits is not None or not getattr(check, "budget_checked", False):
        proj = budget.project(check)
        if not budget.budget_diagnostics(check, proj, reporter, lim):
            return None
    try:
        plan = lower_plan(check)
    except LoweringError as exc:
        reporter.report("LP5010", None, f"cannot compile: {exc}")
        return None
    expr_depth, where, instr_version = scan_instrs(instr_roots(plan))
    # the one encoder, straight from the model (no JSON tree is built); the
    # version is the highest ``since`` it wrote, or an instruction needs
    text, projection, depth, written_version = encode_plan(plan)
    version = max(instr_version, written_version)
    if not budget.final_gates(depth + 1, 0, (expr_depth, where), reporter, check, lim):  # + 1: the envelope
        return None
    digest = digest_of_canonical(text_bytes(projection))
    raw = text_bytes(envelope_text(version, digest, SOURCE_API_VERSION, text))
    if not budget.final_gates(0, len(raw), (0, None), reporter, check, lim):
        return None
    art = Artifact(version, digest, plan, SOURCE_API_VERSION)
    art.__dict__["_bytes"] = raw  # to_bytes(): the encoding just made
    return version, raw, digest, art


def bench_compile(source: str | bytes) -> CompileResult:
    """Benchmark entry point: one full compile (passes 1–13 and canonical
    bytes) of ``source``.  See benchmarks/ and docs/ir.md#performance."""
    return compile_source(source)
