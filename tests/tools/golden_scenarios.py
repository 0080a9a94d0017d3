"""Golden scenarios' committed journals: check or regenerate the pins (a
developer tool, outside the library; docs/conformance.md#golden-scenarios).

The scenarios live in the package, ``src/loopc/conformance/scenarios/``
(:data:`loopc.conformance.SCENARIO_DIR`).  Check (exit 1 when a pin is stale
or missing, or a scenario's expectations fail)::

    python tests/tools/golden_scenarios.py

Regenerate every ``<scenario>.journal.jsonl`` next to its scenario::

    python tests/tools/golden_scenarios.py --update

Other directories may be named after the options.
"""

from __future__ import annotations

import sys

from loopc.conformance import SCENARIO_DIR, journal_path, scenarios


def main(argv: list[str] | None = None) -> int:
    """Check (or with ``--update`` rewrite) the pins; 1 when one is stale."""
    from loopc.interpreter.runner import dump_journal, run_file

    args = sys.argv[1:] if argv is None else argv
    update = "--update" in args
    roots = [a for a in args if not a.startswith("--")] or [SCENARIO_DIR]
    stale = 0
    for root in roots:
        for sc in scenarios(root):
            rep = run_file(sc)
            if isinstance(rep, list):
                print(f"{sc}: malformed: {rep[0].render()}")
                stale += 1
                continue
            text = dump_journal(rep.steps)
            jp = journal_path(sc)
            try:
                with open(jp, encoding="utf-8") as fh:
                    old = fh.read()
            except OSError:
                old = None
            if old != text:
                if update:
                    with open(jp, "w", encoding="utf-8") as fh:
                        fh.write(text)
                    print(f"updated {jp}")
                else:
                    print(f"stale {jp}" if old is not None else f"missing {jp}")
                    stale += 1
            if not rep.ok:
                print(f"{sc}: expectations fail: {'; '.join(rep.differences)}")
                stale += 1
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
