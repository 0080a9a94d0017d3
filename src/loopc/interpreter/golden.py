"""Golden scenarios' committed journals (regression pins on top of the
hand-written ``expect`` blocks; docs/conformance.md#golden-scenarios).

Check (exit 1 when a pin is stale or missing)::

    python -m loopc.interpreter.golden

Regenerate every ``<scenario>.journal.jsonl`` next to its scenario::

    python -m loopc.interpreter.golden --update
"""
from __future__ import annotations

import os
import sys

__all__ = ["is_scenario_file", "journal_path", "golden_scenarios", "main", "GOLDEN_DIR"]

GOLDEN_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "golden", "scenarios")
_EXTS = (".yaml", ".yml", ".json")


def is_scenario_file(path: str) -> bool:
    """A ``*.yaml``/``*.yml``/``*.json`` file that is not a plan source (whose
    first line is ``apiVersion: ...``) and not a journal pin.  A file that
    cannot be read (a FIFO, a device, a symbolic link loop, ...) counts, so
    that the runner reports it instead of skipping it silently."""
    if not path.endswith(_EXTS) or path.endswith(".journal.jsonl"):
        return False
    from loopc.boundedio import read_bounded

    try:
        head = read_bounded(path, 63)  # never blocks on a FIFO or device
    except OSError:
        return True  # the runner reports precisely why it cannot be read
    return not head.lstrip(b"\xef\xbb\xbf").startswith(b"apiVersion:")


def journal_path(scenario: str) -> str:
    base = scenario.rsplit(".", 1)[0]
    return base + ".journal.jsonl"


def golden_scenarios(root: str = GOLDEN_DIR) -> list[str]:
    out = []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            if is_scenario_file(p):
                out.append(os.path.normpath(p))
    return out


def main(argv: list[str] | None = None) -> int:
    from loopc.interpreter.runner import dump_journal, run_file

    args = sys.argv[1:] if argv is None else argv
    update = "--update" in args
    roots = [a for a in args if not a.startswith("--")] or [GOLDEN_DIR]
    stale = 0
    for root in roots:
        for sc in golden_scenarios(root):
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
