"""Golden execution plans: ``golden/<feature>/<case>/plan.json`` beside each
golden artifact (docs/plan.md#golden-plans).

``plan.json`` is the ``loopc plan --format json`` object of the case's
``source.yaml`` with the built-in catalog and no requested profile (sorted
keys, indent 2, trailing newline).

Commands (run from the repository root; after ``python -m loopc.ir.golden
--update`` when sources changed)::

    python -m loopc.plan.golden --update   # regenerate every plan.json
    python -m loopc.plan.golden            # check: exit 1 if anything would change

``tests/test_plan.py`` runs the check.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "golden"
SCHEMA = ROOT / "docs" / "schema" / "loop.plan.catalog.v1.schema.json"


def plan_text(source: bytes, path: str | None = None) -> str:
    """The golden ``plan.json`` text for ``source``; raises ``ValueError``
    with the diagnostics when the source has no plan."""
    from loopc.plan.api import plan_source

    res = plan_source(source, path=path)
    if not res.ok:
        raise ValueError(f"{path}: no plan: " + "; ".join(f"{d.code} {d.message}" for d in res.diagnostics))
    return json.dumps(res.to_json(), ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def changes(root: Path = GOLDEN) -> tuple[dict[Path, str], list[str]]:
    """(files whose content would change — every plan.json and the catalog
    schema —, errors)."""
    from loopc.plan.schema import catalog_schema

    writes: dict[Path, str] = {}
    errors: list[str] = []
    schema = SCHEMA
    text = json.dumps(catalog_schema(), indent=2, ensure_ascii=False) + "\n"
    if not schema.exists() or schema.read_text(encoding="utf-8") != text:
        writes[schema] = text
    for src in sorted(root.glob("*/*/source.yaml")):
        try:
            text = plan_text(src.read_bytes(), str(src.relative_to(ROOT)))
        except ValueError as exc:
            errors.append(str(exc))
            continue
        out = src.parent / "plan.json"
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            writes[out] = text
    return writes, errors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m loopc.plan.golden", description="golden execution plans")
    ap.add_argument("--update", action="store_true", help="write regenerated plan.json files")
    args = ap.parse_args(argv)
    writes, errors = changes()
    for e in errors:
        print(e, file=sys.stderr)
    for p, text in sorted(writes.items()):
        if args.update:
            p.write_text(text, encoding="utf-8")
            print(f"wrote {p.relative_to(ROOT)}")
        else:
            print(f"would change: {p.relative_to(ROOT)}")
    if not args.update and (writes or errors):
        print("run: python -m loopc.plan.golden --update", file=sys.stderr)
        return 1
    return 1 if errors else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
