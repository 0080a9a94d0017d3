"""Dump every diagnostic and artifact loopc produces on the repository's inputs.

A behaviour-preservation tool for refactorings: run it before and after a
change and diff the two dumps; the diff must be empty (or each difference
intended).  Inputs: ``examples/*.yaml``, ``golden/**/source.yaml``, every
fixture under ``tests/fixtures/``, the hostile inputs of
``tests/test_hostile.py``.  For each input it records the ``check`` and
``compile`` diagnostics (code, severity, position, message, related, fix,
node, edge) and the compile's digest, artifact version and a SHA-256 of the
canonical bytes; it also records a SHA-256 of every golden ``expected.json`` and of every
generated schema under ``docs/schema/``.

Usage::

    python tests/tools/dump_diagnostics.py > before.jsonl
    ... change ...
    python tests/tools/dump_diagnostics.py > after.jsonl
    diff before.jsonl after.jsonl
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _inputs() -> list[tuple[str, str | bytes]]:
    out: list[tuple[str, str | bytes]] = []
    for p in sorted(ROOT.glob("examples/*.yaml")):
        out.append((str(p.relative_to(ROOT)), p.read_bytes()))
    for p in sorted(ROOT.glob("golden/**/source.yaml")):
        out.append((str(p.relative_to(ROOT)), p.read_bytes()))
    for p in sorted(ROOT.glob("tests/fixtures/**/*.yaml")):
        out.append((str(p.relative_to(ROOT)), p.read_bytes()))
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        import test_hostile  # type: ignore[import-not-found]

        for name, src in sorted(test_hostile.HOSTILE.items()):
            out.append((f"hostile:{name}", src))
    finally:
        sys.path.pop(0)
    return out


def main() -> None:
    import loopc

    w = sys.stdout.write
    for name, src in _inputs():
        chk = loopc.check_source(src, path=name if not name.startswith("hostile:") else None)
        comp = loopc.compile_source(src, path=name if not name.startswith("hostile:") else None)
        rec = {
            "input": name,
            "check_ok": chk.ok,
            "check": [d.to_json() | {"name": d.name} for d in chk.diagnostics],
            "compile_ok": comp.ok,
            "compile": (
                [d.to_json() for d in comp.diagnostics]
                if [d.to_json() for d in comp.diagnostics] != [d.to_json() for d in chk.diagnostics]
                else "same"
            ),
            "digest": comp.digest,
            "version": comp.version,
            "bytes_sha256": hashlib.sha256(comp.bytes).hexdigest() if comp.bytes else None,
        }
        w(json.dumps(rec, sort_keys=True, ensure_ascii=False) + "\n")
    for p in sorted([*ROOT.glob("golden/**/expected.json"), *ROOT.glob("docs/schema/*.json")]):
        w(json.dumps({"golden": str(p.relative_to(ROOT)), "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}) + "\n")


if __name__ == "__main__":
    main()
