"""loopc.ir — lowering to the canonical versioned artifact, semantic digest,
strict decoder and expression evaluator (pass 13; docs/ir.md).

Public names (imported on first use so ``import loopc`` stays fast; each
by a plain import statement, so the import graph and the layer contracts see
it):

* :func:`decode`, :func:`encode`, :func:`verify`, :class:`Artifact` (the typed IR model,
  :mod:`loopc.ir.model`), :class:`DecodeError`;
* :func:`canonical_bytes`, :func:`semantic_digest`, :func:`semantic_projection`;
* :func:`evaluate`, :class:`EvaluationError`.

The compile entry points live in the pipeline layer above this one:
``loopc.compile_source`` / :mod:`loopc.pipeline`
(docs/api.md#moved-import-paths-the-pipeline-layer).
"""

from __future__ import annotations

from typing import Any

#: public name -> the submodule that defines it
_EXPORTS = {
    "decode": "decoder",
    "DecodeError": "decoder",
    "verify": "verifier",
    "Violation": "verifier",
    "VerifyResult": "verifier",
    "Artifact": "model",
    "encode": "model",
    "canonical_bytes": "canonical",
    "CanonicalizationError": "canonical",
    "semantic_digest": "digest",
    "semantic_projection": "digest",
    "DIGEST_TAG": "digest",
    "evaluate": "evaluator",
    "EvaluationError": "evaluator",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    where = _EXPORTS.get(name)
    m: Any
    if where == "decoder":
        from loopc.ir import decoder as m
    elif where == "verifier":
        from loopc.ir import verifier as m
    elif where == "model":
        from loopc.ir import model as m
    elif where == "canonical":
        from loopc.ir import canonical as m
    elif where == "digest":
        from loopc.ir import digest as m
    elif where == "evaluator":
        from loopc.ir import evaluator as m
    else:
        raise AttributeError(f"module 'loopc.ir' has no attribute {name!r}")
    return getattr(m, name)
