"""The cost of telling an indentation error's cause (compiler/yamlindent.py):
a ~1 MiB plan (benchmarks/hostile.py ``late_indent_error``) checked whole,
with one line mis-indented near its end and near its start, beside one bare
libyaml event pass over it; medians and ratios to the clean check in one run.

Run::

    python benchmarks/indent_error.py [--nodes 5300] [--repeat 5]

The error path's budget: at most twice the clean check (the cause is found
by re-parsing short windows, so a late error costs about what the parse up
to it costs, and an early one a few milliseconds).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import hostile  # noqa: E402
from timing import median_seconds  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5_300)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    import loopc
    from loopc.compiler.yamlload import _reparse_stop

    late = hostile.late_indent_error(args.nodes)
    ok = late.replace("  - id: last\n   type: end", "  - id: last\n    type: end")
    early = ok.replace("  - id: n5\n    type: end", "  - id: n5\n   type: end", 1)
    assert "LP1001" not in [d.code for d in loopc.check_source(ok).diagnostics]
    for src in (late, early):
        assert [d.code for d in loopc.check_source(src).diagnostics] == ["LP1001"]
    print(f"source: {len(late.encode()):,} bytes, {args.nodes:,} nodes")
    base = median_seconds(lambda: loopc.check_source(ok), args.repeat)
    rows = [
        ("libyaml event pass", median_seconds(lambda: _reparse_stop(ok), args.repeat)),
        ("check, well-formed", base),
        ("check, late indentation error", median_seconds(lambda: loopc.check_source(late), args.repeat)),
        ("check, early indentation error", median_seconds(lambda: loopc.check_source(early), args.repeat)),
    ]
    for name, sec in rows:
        print(f"{name:32} {sec * 1000:9.1f} ms   x{sec / base:5.2f}")


if __name__ == "__main__":
    main()
