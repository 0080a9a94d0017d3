"""Regenerate every derived file and golden of the checkout, or check them.

    python tools/regen.py           # rewrite what is stale (and delete stale golden example cases)
    python tools/regen.py --check   # write nothing; exit 1 listing each stale file

What it derives, in order (each from its one declaration):

1. ``docs/diagnostics.md`` — the diagnostic-code registry (:mod:`loopc.codes`,
   the page ``python -m loopc.codes`` prints);
2. ``docs/node-kinds.md`` — the node-kind registry (:mod:`loopc.kinds`);
3. the text between ``<!-- regen:NAME -->`` markers in ``docs/*.md`` (version
   ranges, the table of what each artifact version introduced;
   tools/docs_fragments.py);
4. ``docs/schema/loop.plan.artifact.v<N>.schema.json`` for every supported
   version and ``loop.plan.source.v1.schema.json`` (:mod:`loopc.ir.surface`,
   :mod:`loopc.ir.source_schema`);
5. the journal and protocol JSON Schemas, package copies and
   ``docs/schema/`` mirrors (:mod:`loopc.interpreter.schemas`);
6. the IR goldens: ``golden/examples/<name>/source.yaml`` mirroring
   ``examples/``, and every case's ``expected.json`` and ``digest.txt``
   (tools/golden_ir.py);
7. the plan goldens: every case's ``plan.json`` and the catalog schema
   (tools/golden_plans.py; they read the sources step 6 writes);
8. the golden scenarios' journal pins (tools/golden_scenarios.py).

Goldens change only on purpose: review the diff before committing it
(``tests/test_golden.py``, ``tests/test_drift.py``).  Exit status: 0 when
everything is current (``--check``) or was written; 1 when a file is stale
under ``--check``, or a source does not compile, a scenario is malformed or
its expectations fail, or a generator cannot run on the declarations (a
node kind without its interpreter handler or catalog descriptor: one line
naming the stage; the errors are printed, the other stages still run and
their files are still written without ``--check``).  Run from anywhere; paths are the checkout's.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Callable, Mapping, NamedTuple

import docs_fragments
import golden_ir
import golden_plans
import golden_scenarios

ROOT = Path(__file__).resolve().parents[1]


class Stage(NamedTuple):
    """What one generator wants: every file it owns with its content, the
    directories to delete, and the problems that stopped a file."""

    files: dict[Path, bytes]
    removed: list[Path]
    errors: list[str]


def _diagnostics(pending: Mapping[Path, bytes], removed: frozenset[Path]) -> Stage:
    from loopc.codes.__main__ import render

    return Stage({ROOT / "docs" / "diagnostics.md": render().encode("utf-8")}, [], [])


def _node_kinds(pending: Mapping[Path, bytes], removed: frozenset[Path]) -> Stage:
    return Stage(golden_ir.node_kinds_page(), [], [])


def _docs_fragments(pending: Mapping[Path, bytes], removed: frozenset[Path]) -> Stage:
    files, errors = docs_fragments.fragment_files()
    return Stage(files, [], errors)


def _ir_schemas(pending: Mapping[Path, bytes], removed: frozenset[Path]) -> Stage:
    return Stage(golden_ir.schema_files(), [], [])


def _run_schemas(pending: Mapping[Path, bytes], removed: frozenset[Path]) -> Stage:
    from loopc.interpreter.schemas import generated_files

    return Stage(generated_files(ROOT / "docs" / "schema"), [], [])


def _ir_goldens(pending: Mapping[Path, bytes], removed: frozenset[Path]) -> Stage:
    return Stage(*golden_ir.golden_files())


def _plan_goldens(pending: Mapping[Path, bytes], removed: frozenset[Path]) -> Stage:
    files, errors = golden_plans.plan_files(pending=pending, removed=removed)
    return Stage(files, [], errors)


def _scenario_pins(pending: Mapping[Path, bytes], removed: frozenset[Path]) -> Stage:
    files, errors = golden_scenarios.pin_files()
    return Stage(files, [], errors)


#: (name, generator) in dependency order; a generator sees the files the
#: earlier ones want (``pending``) and the directories they delete.
STAGES: tuple[tuple[str, Callable[[Mapping[Path, bytes], frozenset[Path]], Stage]], ...] = (
    ("diagnostics page", _diagnostics),
    ("node-kinds page", _node_kinds),
    ("docs fragments", _docs_fragments),
    ("artifact and source schemas", _ir_schemas),
    ("journal and protocol schemas", _run_schemas),
    ("IR goldens", _ir_goldens),
    ("plan goldens", _plan_goldens),
    ("scenario pins", _scenario_pins),
)


def _rel(p: Path) -> str:
    try:
        return str(p.relative_to(ROOT))
    except ValueError:
        return str(p)


def regen(check: bool, out: Callable[[str], None] = print) -> int:
    """Run every stage; with ``check`` write nothing and report what is
    stale.  Returns the exit status (module docstring)."""
    pending: dict[Path, bytes] = {}
    removed: set[Path] = set()
    stale = 0
    errors = 0
    for name, generate in STAGES:
        try:
            stage = generate(pending, frozenset(removed))
        except Exception as exc:  # a declaration a generator cannot use: one line, the other stages still run
            out(f"error ({name}): {type(exc).__name__}: {exc}")
            errors += 1
            continue
        for e in stage.errors:
            out(f"error ({name}): {e}")
        errors += len(stage.errors)
        for d in stage.removed:
            if not d.exists():
                continue
            stale += 1
            if check:
                out(f"stale: {_rel(d)}/ (no longer generated)")
            else:
                shutil.rmtree(d)
                out(f"removed {_rel(d)}/")
        removed.update(stage.removed)
        for p, data in sorted(stage.files.items()):
            if p.exists() and p.read_bytes() == data:
                continue
            stale += 1
            if check:
                out(f"stale: {_rel(p)}")
            else:
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(data)
                out(f"wrote {_rel(p)}")
        pending.update(stage.files)
    if check and stale:
        out(f"{stale} stale file(s): run python tools/regen.py and review the diff")
    return 1 if errors or (check and stale) else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python tools/regen.py", description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 listing each stale file")
    args = ap.parse_args(argv)
    return regen(args.check)


if __name__ == "__main__":
    sys.exit(main())
