"""A syrupy extension that pins a plan's IR artifact in a test suite
(docs/api.md#golden-ir-snapshots-in-your-test-suite-syrupy).

``snapshot(extension_class=IRSnapshotExtension)`` accepts a
:class:`loopc.CompileResult`, canonical artifact bytes, or plan source text
(compiled on the spot; a source with errors fails the test with its
diagnostics).  The snapshot file (``__snapshots__/<test file>/<test
name>.json``) is reviewable pretty JSON: ``{"digest": "sha256:…",
"artifact": {…}}`` with sorted keys and two-space indentation.  Matching
compares canonical bytes (RFC 8785), so whitespace or key order in a
hand-edited snapshot never matters, and a change shows as a line diff of the
pretty JSON.  ``pytest --snapshot-update`` rewrites the files.

Requires syrupy (a test dependency; importing this module without it raises
``ImportError``).
"""

from __future__ import annotations

import json
from typing import Any

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

__all__ = ["IRSnapshotExtension", "pretty_snapshot"]


def _canonical(doc: Any) -> bytes:
    import rfc8785

    return rfc8785.dumps(doc)


def pretty_snapshot(data: Any) -> str:
    """The snapshot text of ``data`` (see the module docstring); raises
    ``ValueError`` with the diagnostics when source text does not compile
    and ``TypeError`` for anything else."""
    from loopc.pipeline import CompileResult, compile_source

    if isinstance(data, str):
        res = compile_source(data)
        if not res.ok:
            lines = [
                f"{d.span.line if d.span else '-'}:{d.span.column if d.span else '-'} {d.code} {d.message}"
                for d in res.errors
            ]
            raise ValueError("plan does not compile:\n" + "\n".join(lines))
        data = res
    if isinstance(data, CompileResult):
        if data.bytes is None:
            raise ValueError("compile result has no artifact (it has errors)")
        raw, digest = data.bytes, data.digest
    elif isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        digest = None
    else:
        raise TypeError(f"cannot snapshot a {type(data).__name__}: pass a CompileResult, artifact bytes or source")
    artifact = json.loads(raw)
    if digest is None:
        digest = artifact.get("digest") if isinstance(artifact, dict) else None
    doc = {"digest": digest, "artifact": artifact}
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


class IRSnapshotExtension(SingleFileSnapshotExtension):
    """One ``.json`` file per snapshot; canonical-bytes comparison."""

    file_extension = "json"
    _write_mode = WriteMode.TEXT

    def serialize(self, data: Any, **_: Any) -> str:  # type: ignore[override]
        return pretty_snapshot(data)

    def matches(self, *, serialized_data: Any, snapshot_data: Any) -> bool:
        try:
            return _canonical(json.loads(serialized_data)) == _canonical(json.loads(snapshot_data))
        except (TypeError, ValueError):
            return bool(serialized_data == snapshot_data)
