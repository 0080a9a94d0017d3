"""loopc.ir — lowering to the canonical versioned artifact, semantic digest,
strict decoder and expression evaluator (pass 13; docs/ir.md).

Public names (imported lazily so ``import loopc`` stays fast):

* :func:`compile_source`, :func:`compile_file`, :class:`CompileResult`;
* :func:`decode`, :func:`encode`, :func:`verify`, :class:`Artifact` (the typed IR model,
  :mod:`loopc.ir.model`), :class:`DecodeError`;
* :func:`canonical_bytes`, :func:`semantic_digest`, :func:`semantic_projection`;
* :func:`evaluate`, :class:`EvaluationError`.
"""
from __future__ import annotations

from typing import Any

_EXPORTS = {
    "compile_source": "loopc.pipeline",  # moved: the pipeline layer
    "compile_file": "loopc.pipeline",  # moved: the pipeline layer
    "compile_checked": "loopc.pipeline",  # moved: the pipeline layer
    "CompileResult": "loopc.pipeline",  # moved: the pipeline layer
    "decode": "loopc.ir.decoder",
    "verify": "loopc.ir.verifier",
    "Violation": "loopc.ir.verifier",
    "Artifact": "loopc.ir.model",
    "encode": "loopc.ir.model",
    "DecodeError": "loopc.ir.decoder",
    "VerifyResult": "loopc.ir.verifier",
    "canonical_bytes": "loopc.ir.canonical",
    "CanonicalizationError": "loopc.ir.canonical",
    "semantic_digest": "loopc.ir.digest",
    "semantic_projection": "loopc.ir.digest",
    "DIGEST_TAG": "loopc.ir.digest",
    "evaluate": "loopc.ir.evaluator",
    "EvaluationError": "loopc.ir.evaluator",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'loopc.ir' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(mod), name)
