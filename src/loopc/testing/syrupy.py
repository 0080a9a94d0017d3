"""A syrupy extension that pins a plan's IR artifact in a test suite
(docs/api.md#golden-ir-snapshots-in-your-test-suite-syrupy).

``snapshot(extension_class=IRSnapshotExtension)`` accepts a
:class:`loopc.CompileResult`, canonical artifact bytes, or plan source text
(compiled on the spot; a source with errors fails the test with its
diagnostics).  The snapshot file (``__snapshots__/<test file>/<test
name>.json``) is reviewable pretty JSON: ``{"digest": "sha256:…",
"artifact": {…}}`` with sorted keys and two-space indentation.  Matching
compares canonical bytes (RFC 8785), so whitespace or key order in a
hand-edited snapshot never matters.  A failing comparison shows first
whether the semantic digest moved (``semantic digest unchanged`` for an
annotation-only change such as a label, ``semantic digest moved: A -> B``
otherwise), then a unified diff of the two pretty texts (both re-rendered,
so it holds exactly the changed lines with two lines of context;
:func:`snapshot_diff`).  ``pytest --snapshot-update`` rewrites the files.

Use the :func:`ir_snapshot` fixture (``pytest_plugins =
["loopc.testing.syrupy"]`` in ``conftest.py``): syrupy reports a failure
with the extension the assertion object holds, and a one-shot
``snapshot(extension_class=IRSnapshotExtension)`` compares with this
extension but is reset to syrupy's default before the report, whose own
differ can show lines that did not change.

Requires syrupy (a test dependency; importing this module without it raises
``ImportError``).
"""

from __future__ import annotations

import difflib
import json
from typing import Any, Iterator

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

__all__ = ["IRSnapshotExtension", "ir_snapshot", "pretty_snapshot", "snapshot_diff"]

#: Unchanged lines shown around each change in a failure diff.
DIFF_CONTEXT = 2


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


def _reparsed(text: str) -> tuple[str, Any]:
    """``(pretty text, digest)`` of a snapshot text; a text that is not
    JSON is kept as it is (digest ``None``)."""
    try:
        doc = json.loads(text)
    except (TypeError, ValueError):
        return text, None
    digest = doc.get("digest") if isinstance(doc, dict) else None
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n", digest


def snapshot_diff(received: str, snapshot: str, *, context: int = DIFF_CONTEXT) -> list[str]:
    """The failure report of a snapshot mismatch, as lines: the digest
    verdict, then ``difflib.unified_diff`` of the stored snapshot (``-``)
    against the received artifact (``+``), both re-rendered pretty so that
    only real changes show (never a line that did not change)."""
    old, old_digest = _reparsed(snapshot)
    new, new_digest = _reparsed(received)
    out = []
    if old_digest is not None and old_digest == new_digest:
        out.append(
            f"semantic digest unchanged ({new_digest}): the artifact bytes changed outside the digest "
            "(annotations such as labels and descriptions)"
        )
    elif old_digest is not None or new_digest is not None:
        out.append(f"semantic digest moved: {old_digest} -> {new_digest}")
    out += difflib.unified_diff(
        old.splitlines(), new.splitlines(), "snapshot", "received", n=context, lineterm=""
    )
    return out


class IRSnapshotExtension(SingleFileSnapshotExtension):
    """One ``.json`` file per snapshot; canonical-bytes comparison."""

    file_extension = "json"
    _write_mode = WriteMode.TEXT

    def serialize(self, data: Any, **_: Any) -> str:
        return pretty_snapshot(data)

    def diff_lines(self, serialized_data: Any, snapshot_data: Any) -> Iterator[str]:
        """:func:`snapshot_diff`, ``-`` lines in syrupy's snapshot colour and
        ``+`` lines in its received colour."""
        from syrupy.terminal import context_style, received_style, snapshot_style

        for line in snapshot_diff(str(serialized_data), str(snapshot_data)):
            if line.startswith("-") and not line.startswith("---"):
                yield snapshot_style(line)
            elif line.startswith("+") and not line.startswith("+++"):
                yield received_style(line)
            else:
                yield context_style(line)

    def matches(self, *, serialized_data: Any, snapshot_data: Any) -> bool:
        try:
            return _canonical(json.loads(serialized_data)) == _canonical(json.loads(snapshot_data))
        except (TypeError, ValueError):
            return bool(serialized_data == snapshot_data)


@pytest.fixture
def ir_snapshot(snapshot: Any) -> Any:
    """syrupy's ``snapshot`` fixture bound to :class:`IRSnapshotExtension`
    (``snapshot.use_extension``), so a failure reports with
    :func:`snapshot_diff`: ``assert source == ir_snapshot``."""
    return snapshot.use_extension(IRSnapshotExtension)
