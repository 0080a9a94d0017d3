"""Golden IR snapshots and vendored schemas (docs/ir.md#goldens-and-schemas;
issue 4 "Goldens").

Layout: ``golden/<feature>/<case>/`` holds ``source.yaml``, the expected
artifact ``expected.json`` (pretty: sorted keys, indent 2, for review) and
``digest.txt`` (one line).  Equality is always on canonical bytes.
``golden/examples/<name>/source.yaml`` mirrors ``examples/<name>.yaml``.

Commands (run from the repository root)::

    python -m loopc.ir.golden --update   # regenerate goldens, docs/schema/*.json, docs/node-kinds.md
    python -m loopc.ir.golden            # check: exit 1 if regeneration would change anything

The test-suite runs the check (``tests/test_golden.py``), so CI fails when a
committed golden is stale.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "golden"
EXAMPLES = ROOT / "examples"
SCHEMA_DIR = ROOT / "docs" / "schema"


def cases(root: Path = GOLDEN) -> Iterator[Path]:
    """Every ``golden/<feature>/<case>`` directory holding a ``source.yaml``, sorted."""
    yield from sorted(p.parent for p in root.glob("*/*/source.yaml"))


def expected_files(case: Path) -> dict[str, bytes]:
    """Compile ``case/source.yaml`` and return the files the case should hold
    (``expected.json``, ``digest.txt``).  Raises ``ValueError`` with the
    diagnostics when the source does not compile."""
    from loopc.pipeline import compile_source

    res = compile_source((case / "source.yaml").read_bytes(), path=str(case / "source.yaml"))
    if not res.ok:
        lines = [f"{d.span.line}:{d.span.column} {d.code} {d.message}" for d in res.diagnostics]
        raise ValueError(f"{case}: does not compile:\n  " + "\n  ".join(lines))
    return {
        "expected.json": res.artifact.pretty().encode("utf-8"),
        "digest.txt": (res.digest + "\n").encode("ascii"),
    }


def schema_files() -> dict[Path, bytes]:
    """The generated reference files: the artifact JSON Schemas v1–v5, the
    source schema and docs/node-kinds.md (all from :mod:`loopc.kinds`)."""
    from loopc.ir.source_schema import source_schema
    from loopc.ir.surface import json_schema
    from loopc.ir.versions import VERSIONS

    out = {}
    for v in VERSIONS:
        out[SCHEMA_DIR / f"loop.plan.artifact.v{v}.schema.json"] = _dump(json_schema(v))
    out[SCHEMA_DIR / "loop.plan.source.v1.schema.json"] = _dump(source_schema())
    from loopc.kinds.docs import markdown

    out[ROOT / "docs" / "node-kinds.md"] = markdown().encode("utf-8")
    return out


def _dump(obj: object) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def example_sources() -> dict[Path, bytes]:
    """``golden/examples/<stem>/source.yaml`` for every ``examples/*.yaml``."""
    out = {}
    if EXAMPLES.is_dir():
        for p in sorted(EXAMPLES.glob("*.yaml")) + sorted(EXAMPLES.glob("*.yml")):
            out[GOLDEN / "examples" / p.stem / "source.yaml"] = p.read_bytes()
    return out


def plan_changes() -> tuple[dict[Path, bytes], list[Path], list[str]]:
    """(files to write, example directories to delete, errors)."""
    writes: dict[Path, bytes] = {}
    errors: list[str] = []
    wanted_examples = example_sources()
    for path, data in wanted_examples.items():
        if not path.exists() or path.read_bytes() != data:
            writes[path] = data
    stale = []
    ex_dir = GOLDEN / "examples"
    if ex_dir.is_dir():
        wanted_dirs = {p.parent for p in wanted_examples}
        stale = [d for d in sorted(ex_dir.iterdir()) if d.is_dir() and d not in wanted_dirs]
    case_dirs = set(cases()) | {p.parent for p in wanted_examples}
    case_dirs -= set(stale)
    for case in sorted(case_dirs):
        src = case / "source.yaml"
        pending = writes.get(src)
        try:
            if pending is not None:
                from loopc.pipeline import compile_source

                res = compile_source(pending, path=str(src))
                if not res.ok:
                    lines = [f"{d.span.line}:{d.span.column} {d.code} {d.message}" for d in res.diagnostics]
                    raise ValueError(f"{case}: does not compile:\n  " + "\n  ".join(lines))
                files = {"expected.json": res.artifact.pretty().encode("utf-8"),
                         "digest.txt": (res.digest + "\n").encode("ascii")}
            else:
                files = expected_files(case)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        for name, data in files.items():
            p = case / name
            if not p.exists() or p.read_bytes() != data:
                writes[p] = data
    for p, data in schema_files().items():
        if not p.exists() or p.read_bytes() != data:
            writes[p] = data
    return writes, stale, errors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m loopc.ir.golden", description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="write regenerated goldens and schemas")
    args = ap.parse_args(argv)
    writes, stale, errors = plan_changes()
    for e in errors:
        print(e, file=sys.stderr)
    if args.update:
        import shutil

        for d in stale:
            shutil.rmtree(d)
            print(f"removed {d.relative_to(ROOT)}")
        for p, data in sorted(writes.items()):
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
            print(f"wrote {p.relative_to(ROOT)}")
        return 1 if errors else 0
    for d in stale:
        print(f"stale: {d.relative_to(ROOT)}")
    for p in sorted(writes):
        print(f"would change: {p.relative_to(ROOT)}")
    if writes or stale or errors:
        print("run: python -m loopc.ir.golden --update", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
