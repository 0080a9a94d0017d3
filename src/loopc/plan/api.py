"""Execution-plan API (docs/api.md#execution-plans, docs/plan.md).

* :func:`plan_source` — source text/bytes → compile → verify → derive;
* :func:`plan_file` — the same for a path (the only I/O here);
* :func:`plan_artifact` — artifact bytes (must pass verify) → derive.

None of them raises on bad input: problems are diagnostics (LP1xxx–LP5xxx
from compilation, LP61xx from derivation, positioned at the culprit node
in the source when there is one).
"""

from __future__ import annotations

from typing import Any

import attrs

from loopc.diagnostics import Diagnostic, Severity, Span
from loopc.plan.catalog import Catalog, builtin_catalog
from loopc.plan.derive import BACKEND_VERSION, POLICY_VERSION, PROFILES, ExecutionPlan, PlanProblem, derive

_BUILTIN: Catalog | None = None


def _default_catalog() -> Catalog:
    global _BUILTIN
    if _BUILTIN is None:
        _BUILTIN = builtin_catalog()
    return _BUILTIN


@attrs.frozen
class PlanResult:
    """Result of planning one source or artifact.

    ``ok`` — no error diagnostic and a plan with a selected profile and
    identity; ``plan`` — the :class:`~loopc.plan.derive.ExecutionPlan` (also
    present, without identity, when only the requested profile failed);
    ``compile`` — the :class:`loopc.pipeline.CompileResult` (None for
    :func:`plan_artifact`); ``artifact_digest`` the semantic digest or None.
    """

    ok: bool
    diagnostics: tuple[Diagnostic, ...]
    plan: ExecutionPlan | None
    compile: Any = None
    artifact_digest: str | None = None
    requested_profile: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``loopc plan --format json`` object (nulls when no plan)."""
        if self.plan is not None:
            return self.plan.to_json(self.diagnostics)
        return {
            "artifactDigest": self.artifact_digest,
            "planIdentity": None,
            "payloadDigest": None,
            "compilerVersion": None,
            "backendVersion": BACKEND_VERSION,
            "policyVersion": POLICY_VERSION,
            "profile": None,
            "requestedProfile": self.requested_profile,
            "profiles": None,
            "catalog": None,
            "steps": [],
            "bounds": None,
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def _diag(code: str, span: Span | None, message: str, *, node: str | None = None, pointer: str = "") -> Diagnostic:
    from loopc import codes

    c = codes.get(code)
    return Diagnostic(code, c.name, c.severity, message, span, pointer, node=node)


def _position(check: Any, node: str | None) -> tuple[Span | None, str]:
    """Source span and pointer of ``node``'s ``id`` value (no position when
    ``node`` is None or unknown: the finding is about the whole plan)."""
    plan = getattr(check, "plan", None) if check is not None else None
    if node is not None and plan is not None:
        n = plan.nodes.get(node)
        src = getattr(n, "src", None)
        if src is not None:
            idn = src.get("id")
            at = idn if idn is not None else src
            return at.span, src.pointer
    return None, ""


def _problems(check: Any, problems: tuple[PlanProblem, ...]) -> list[Diagnostic]:
    out = []
    for p in problems:
        span, ptr = _position(check, p.node)
        out.append(_diag(p.code, span, p.message, node=p.node, pointer=ptr))
    return out


def _finish(
    plan: Any, diags: list[Diagnostic], *, text: str | None = None, path: str | None = None, **kw: Any
) -> PlanResult:
    from loopc.compiler.report import Reporter, finish

    rep = Reporter()
    rep.extend(diags)
    done = finish(rep.diagnostics, text, path)
    ok = plan is not None and plan.identity is not None and not any(d.severity is Severity.ERROR for d in done)
    return PlanResult(ok, done, plan, **kw)


def _safe_derive(artifact: Any, catalog: Catalog, profile: str | None, check: Any) -> tuple[Any, list[Diagnostic]]:
    try:
        d = derive(artifact, catalog, profile=profile)
    except Exception as exc:  # never a traceback: an internal error becomes a diagnostic
        return None, [_diag("LP5999", None, f"internal error in plan derivation: {type(exc).__name__}: {exc}")]
    return d.plan, _problems(check, d.problems)


def _check_profile(profile: str | None) -> None:
    if profile is not None and profile not in PROFILES:
        raise ValueError(f"unknown execution profile {profile!r}; expected one of {', '.join(PROFILES)}")


def plan_source(
    src: str | bytes, *, catalog: Catalog | None = None, profile: str | None = None, path: str | None = None
) -> PlanResult:
    """Compile ``src`` (plan source text or bytes), verify the artifact and
    derive its execution plan with ``catalog`` (default: the built-in
    catalog) and the requested ``profile`` (``embedded_before_save``,
    ``bounded_atomic``, ``durable_orchestration`` or None = the most
    restrictive provable one).  Raises ``ValueError`` only for an unknown
    profile name; every input problem is a diagnostic."""
    _check_profile(profile)
    from loopc.pipeline import compile_source
    from loopc.ir.verifier import verify

    res = compile_source(src, path=path)
    diags = list(res.diagnostics)
    doc = getattr(res.check, "document", None)
    where: dict[str, Any] = {"text": doc.text if doc is not None else None, "path": path}
    if not res.ok or res.bytes is None:
        return _finish(None, diags, compile=res, requested_profile=profile, **where)
    v = verify(res.bytes)
    if not v.ok:  # pragma: no cover - the compiler emits verified artifacts
        diags.append(_diag("LP6105", None, f"compiled artifact does not verify: {v.message}"))
        return _finish(None, diags, compile=res, artifact_digest=res.digest, requested_profile=profile, **where)
    plan, more = _safe_derive(v.artifact, catalog or _default_catalog(), profile, res.check)
    return _finish(plan, diags + more, compile=res, artifact_digest=res.digest, requested_profile=profile, **where)


def plan_file(path: str, *, catalog: Catalog | None = None, profile: str | None = None) -> PlanResult:
    """Read ``path`` (at most 1 MiB + 1 byte, only a regular file, never
    blocking on a FIFO or device: :func:`loopc.boundedio.read_bounded`) and
    :func:`plan_source` it; :class:`loopc.boundedio.ReadError` (an
    ``OSError`` with a precise ``reason``) propagates (the CLI maps it to
    exit code 2)."""
    from loopc.boundedio import read_bounded
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES

    data = read_bounded(path, MAX_SOURCE_BYTES)
    return plan_source(data, catalog=catalog, profile=profile, path=path)


def plan_artifact(data: bytes | str, *, catalog: Catalog | None = None, profile: str | None = None) -> PlanResult:
    """Derive the execution plan of artifact bytes; an artifact that does not
    pass :func:`loopc.ir.verify` gives LP6105 and no plan."""
    _check_profile(profile)
    from loopc.ir.verifier import verify

    v = verify(data)
    if not v.ok:
        return _finish(
            None,
            [_diag("LP6105", None, f"artifact does not verify: {v.message}")],
            requested_profile=profile,
        )
    art = v.artifact
    assert art is not None  # verify ok ⇒ decoded
    plan, diags = _safe_derive(art, catalog or _default_catalog(), profile, None)
    return _finish(plan, diags, artifact_digest=art.digest, requested_profile=profile)
