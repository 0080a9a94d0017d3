"""The YAML pass against the bare event drain (issue 26, item 3):
``python benchmarks/yaml_layer.py [--files N] [--rounds N]`` from the
repository root.

On the same generated plans (``check_tree.varied_plan``, the cold tree's
files), in one process, interleaved round by round, collector off, CPU time:

* ``drain, ruamel``: ``ruamel.yaml``'s C parser's ``get_event()`` until the
  end of every file, doing nothing with the events — the event source the
  YAML layer uses;
* ``drain, PyYAML``: the same with PyYAML's C parser (``yaml._yaml.CParser``),
  when PyYAML with libyaml is installed (it is not a dependency of loopc);
* ``loopc YAML pass``: ``yamlload.load`` (decode, compose, header check) with
  the compiled composer (``loopc.compiler._ycompose``) when it is built;
* ``loopc YAML pass, Python composer``: the same with the Python composer
  alone (``LOOPC_YAML_COMPOSER=python``'s path).

``--gc`` leaves the collector on, as ``loopc check`` runs it (``gc.freeze()``,
thresholds 10,000/20/20), instead of disabling it.  Prints medians and each
row's ratio to the ruamel drain; ``--json PATH`` writes them.  Stays out of ``.ci/run``; no test asserts a time.
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import check_tree  # noqa: E402


def cases(texts: list[str]) -> dict[str, Callable[[], None]]:
    from ruamel.yaml.cyaml import CParser

    from loopc.compiler import yamlload
    from loopc.compiler.report import Reporter

    def drain_ruamel() -> None:
        for t in texts:
            get = CParser(t).get_event
            while get() is not None:
                pass

    out: dict[str, Callable[[], None]] = {"drain, ruamel": drain_ruamel}
    try:
        from yaml._yaml import CParser as PyYAMLParser  # type: ignore[import-not-found,import-untyped]
    except ImportError:
        pass
    else:

        def drain_pyyaml() -> None:
            for t in texts:
                get = PyYAMLParser(t).get_event
                while get() is not None:
                    pass

        out["drain, PyYAML"] = drain_pyyaml
    fast = yamlload.compiled_composer()

    def load() -> None:
        for t in texts:
            yamlload.load(t, Reporter())

    def load_python() -> None:
        saved = yamlload._FAST
        yamlload._FAST = False
        try:
            for t in texts:
                yamlload.load(t, Reporter())
        finally:
            yamlload._FAST = saved

    if fast is not None:
        out["loopc YAML pass"] = load
    out["loopc YAML pass, Python composer"] = load_python
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--gc", action="store_true", help="collector on, as loopc check runs it")
    ap.add_argument("--json", help="write the medians here")
    args = ap.parse_args(argv)
    texts = [check_tree.varied_plan(i) for i in range(args.files)]
    size = sum(len(t.encode("utf-8")) for t in texts)
    fns = cases(texts)
    samples: dict[str, list[float]] = {k: [] for k in fns}
    if args.gc:
        gc.freeze()
        gc.set_threshold(10_000, 20, 20)
    else:
        gc.disable()
    try:
        for fn in fns.values():
            fn()
        for _ in range(args.rounds):
            for k, fn in fns.items():
                t0 = time.process_time()
                fn()
                samples[k].append(time.process_time() - t0)
    finally:
        gc.enable()
    med = {k: statistics.median(v) for k, v in samples.items()}
    base = med["drain, ruamel"]
    print(f"{args.files} plans, {size / 1e6:.2f} MB, {args.rounds} rounds, CPU ms (median), "
          f"collector {'on' if args.gc else 'off'}")
    print("| what | ms | MB/s | / ruamel drain |")
    print("|---|---|---|---|")
    for k, v in med.items():
        print(f"| {k} | {v * 1000:.1f} | {size / 1e6 / v:.1f} | {v / base:.2f}x |")
    if args.json:
        Path(args.json).write_text(json.dumps({"bytes": size, "median_s": med}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
