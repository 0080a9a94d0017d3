"""Issue 26's table in one command, side by side: ``python benchmarks/table.py
[--baseline REV] [--anchor actionlint=PATH] [--wheel] [--lsp]`` from the
repository root.

Sides: ``current`` (this checkout's ``src/``, uncommitted edits included),
``--baseline REV`` (that git revision, checked out into a temporary
worktree; repeatable), each copied to a temporary folder without ``__pycache__`` and put
first on ``PYTHONPATH`` of every loopc process, so both sides run with the
same interpreter and dependencies; ``--anchor actionlint=PATH`` adds an
anchor binary run on a tree of GitHub workflows of about the same total size
(:mod:`workflows`, one workflow per plan).  Every measurement is repeated
``--repeat`` times with the sides interleaved (A B A B ...), so a change in
the machine's load hits both; the table gives medians and the ratio of each
side to ``current``.

Rows (whole processes unless noted):

* ``cold tree -j 1`` / ``-j 2``: ``loopc check --no-cache`` of ``--files``
  generated plans (:func:`check_tree.make_tree`), MB/s;
* ``warm tree``: the same with a result cache already filled;
* ``python -c pass``, ``loopc --version``, ``loopc check small.yaml`` (the
  one-file path: a cache miss, ``--no-cache``, and a cache hit), without
  bytecode for loopc's own modules (what an editable install under
  ``PYTHONDONTWRITEBYTECODE=1`` gets) and with bytecode
  (``PYTHONPYCACHEPREFIX``, warmed once); ``--wheel`` adds a wheel of each
  side installed into a scratch venv (``pip wheel`` + ``pip install``;
  about a minute per side);
* ``re-check, 98 nodes``: :mod:`recheck` (``check_source`` after
  one-character edits, in a fresh interpreter of each side), median and p95
  CPU ms;
* ``incremental re-check``: :mod:`incremental` (one ``IncrementalChecker``
  over the same kind of edits, ~100 and ~500 nodes) for each side that has
  ``loopc.pipeline.incremental``, median and p95 CPU ms;
* ``--lsp``: :func:`lsp_concurrency.edit_to_diagnostics`, one keystroke to
  pulled diagnostics on the 98-node plan, median and p95 wall ms.

Writes ``benchmarks/table.json``.  Nothing here runs in ``.ci/run`` and no
test asserts a time.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import check_tree  # noqa: E402
import workflows  # noqa: E402

SMALL = ROOT / "examples" / "set_variable_timer.yaml"
# the console script's entry point (``loopc.cli:main`` since it sets the GC policy before importing click;
# ``loopc.cli.main:main`` before that)
_LOOPC = ("import sys; sys.argv[0] = 'loopc'\nimport loopc.cli\nmain = loopc.cli.__dict__.get('main')\n"
          "if not callable(main):\n    from loopc.cli.main import main\nmain()")


class Side:
    """One thing measured: a loopc source tree (``src``) run by ``python``
    with ``src`` first on ``PYTHONPATH``, or an anchor binary."""

    def __init__(self, label: str, src: Path | None = None, python: str = sys.executable,
                 binary: str | None = None, script: str | None = None) -> None:
        self.label, self.src, self.python, self.binary, self.script = label, src, python, binary, script

    def env(self, *, bytecode: bool, pyc: Path | None = None, **extra: str) -> dict[str, str]:
        env = dict(os.environ, NO_COLOR="1", **extra)
        env.pop("PYTHONPATH", None)
        if self.src is not None:
            env["PYTHONPATH"] = str(self.src)
        if bytecode:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            if pyc is not None:
                env["PYTHONPYCACHEPREFIX"] = str(pyc)
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            env.pop("PYTHONPYCACHEPREFIX", None)
        return env

    def loopc(self, *args: str) -> list[str]:
        """``loopc ARGS``: the installed console script of a wheel side, else ``python -c``."""
        return [self.script, *args] if self.script else [self.python, "-c", _LOOPC, *args]


def copy_src(tree: Path, dest: Path) -> Path:
    """``tree/src`` copied to ``dest`` without bytecode, with the tree's
    optional C extension (``setup.py``'s ``_ycompose``) built into it when
    the copy has none (a fresh baseline worktree never does: without it that
    side would compose YAML in pure Python, which no install of it does
    where a C compiler is present); returns ``dest``."""
    shutil.copytree(tree / "src", dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    if (tree / "src/loopc/compiler/_ycompose.c").exists() and not list(dest.glob("loopc/compiler/_ycompose*.so")):
        # as users get it: pip builds the tree's wheel (in its own build environment) and the
        # extension is taken from it
        import zipfile

        whl = build_wheel(tree, dest.parent)
        if whl is not None:
            with zipfile.ZipFile(whl) as z:
                for name in z.namelist():
                    if name.startswith("loopc/compiler/_ycompose") and name.endswith(".so"):
                        (dest / name).write_bytes(z.read(name))
        if not list(dest.glob("loopc/compiler/_ycompose*.so")):
            print(f"note: {tree}: the C composer did not build; that side composes YAML in pure Python",
                  file=sys.stderr)
    return dest


def baseline_tree(rev: str, work: Path) -> Path:
    """A detached git worktree of ``rev`` under ``work``."""
    path = work / f"baseline-{rev.replace('/', '_')}"
    p = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(path), rev],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"table: --baseline {rev}: not a revision of this repository ({p.stderr.strip()})")
    return path


_WHEELS: dict[Path, Path] = {}


def build_wheel(tree: Path, work: Path) -> Path | None:
    """``tree``'s loopc wheel (``pip wheel --no-deps``), built once per tree
    and run (a baseline's C composer and its ``--wheel`` venv share it);
    ``None`` when it does not build."""
    if tree not in _WHEELS:
        out = work / f"wheel-{len(_WHEELS)}"
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(tree), "-w", str(out)],
                       capture_output=True, text=True)
        found = sorted(out.glob("loopc-*.whl"))
        if not found:
            return None
        _WHEELS[tree] = found[0]
    return _WHEELS[tree]


def wheel_venv(tree: Path, work: Path, label: str) -> str:
    """Install ``tree``'s wheel (:func:`build_wheel`) and its dependencies
    into a fresh venv; returns its python."""
    venv = work / f"venv-{label}"
    whl = build_wheel(tree, work)
    if whl is None:
        raise SystemExit(f"table: {tree}: the wheel did not build")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(whl)], check=True)
    return str(venv / "bin" / "python")


def interleaved(cases: dict[str, Callable[[], float]], repeat: int) -> dict[str, list[float]]:
    """Run every case once unmeasured, then ``repeat`` rounds of all cases in
    turn; returns each case's samples (seconds, or what the case returns)."""
    for fn in cases.values():
        fn()
    out: dict[str, list[float]] = {k: [] for k in cases}
    cpu: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(repeat):
        for k, fn in cases.items():
            out[k].append(fn())
            cpu[k].append(LAST_CPU)
    CPU_SAMPLES.clear()
    CPU_SAMPLES.update(cpu)
    return out


#: The CPU seconds of the last :func:`interleaved` call's samples, by case.
CPU_SAMPLES: dict[str, list[float]] = {}


#: CPU seconds (user + system) of the last process :func:`timed` ran; on a
#: loaded machine CPU time moves less than wall time.
LAST_CPU = 0.0


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(argv: list[str], env: dict[str, str], cwd: Path, ok: tuple[int, ...] = (0,),
          fresh_cache: Path | None = None) -> Callable[[], float]:
    """A case for :func:`interleaved`: run ``argv``, return its wall seconds
    (its CPU seconds go to ``LAST_CPU``); an exit status outside ``ok``
    stops the benchmark with the process's standard error.  ``fresh_cache``:
    every run gets a new, empty ``LOOPC_CACHE_DIR`` below it (a cache miss
    without ``--no-cache``)."""
    runs = [0]

    def run() -> float:
        global LAST_CPU
        run_env = env
        if fresh_cache is not None:
            runs[0] += 1
            run_env = dict(env, LOOPC_CACHE_DIR=str(fresh_cache / f"run-{runs[0]}"))
        c = _children_cpu()
        t = time.perf_counter()
        p = subprocess.run(argv, env=run_env, cwd=cwd, capture_output=True)
        dt = time.perf_counter() - t
        LAST_CPU = _children_cpu() - c
        if p.returncode not in ok:
            raise SystemExit(f"{argv[:4]}... exited {p.returncode}: {p.stderr.decode(errors='replace')[-2000:]}")
        return dt
    return run


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", metavar="REV", action="append", default=[],
                    help="git revision to compare with (a temporary worktree; repeatable)")
    ap.add_argument("--anchor", action="append", default=[], metavar="NAME=PATH",
                    help="an anchor linter binary; only actionlint is known (run on generated workflows)")
    ap.add_argument("--files", type=int, default=1000, help="plans in the generated tree")
    ap.add_argument("--repeat", type=int, default=5, help="interleaved rounds per row (median)")
    ap.add_argument("--startup-repeat", type=int, default=21, help="rounds for the start-up rows")
    ap.add_argument("--recheck-runs", type=int, default=200,
                    help="edits per re-check and incremental run (incremental: a quarter, at least 20, at ~500 nodes)")
    ap.add_argument("--only", choices=["tree", "startup", "recheck", "incremental", "lsp"], action="append",
                    help="run only these row groups (repeatable)")
    ap.add_argument("--wheel", action="store_true", help="also measure start-up from a wheel install of each side")
    ap.add_argument("--lsp", action="store_true", help="also measure language-server edit -> diagnostics")
    ap.add_argument("--lsp-edits", type=int, default=60, help="keystrokes per language-server run")
    ap.add_argument("--json", default=str(HERE / "table.json"),
                    help="where the table's data goes (default: benchmarks/table.json, not tracked)")
    a = ap.parse_args(argv)
    anchors: list[Side] = []
    for spec in a.anchor:  # before any work: a wrong anchor is a usage error, not a failure halfway
        name, _, path = spec.partition("=")
        if name != "actionlint" or not path:
            ap.error(f"--anchor {spec!r}: expected actionlint=PATH")
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            ap.error(f"--anchor {spec!r}: {path} is not an executable file")
        anchors.append(Side(name, binary=str(Path(path).resolve())))
    groups = set(a.only or ["tree", "startup", "recheck", "incremental"] + (["lsp"] if a.lsp else []))

    work = Path(tempfile.mkdtemp(prefix="loopc-table-"))
    worktrees: list[Path] = []
    try:
        sides = [Side("current", copy_src(ROOT, work / "current-src"))]
        trees = {"current": ROOT}
        for k, rev in enumerate(a.baseline):
            bt = baseline_tree(rev, work)
            worktrees.append(bt)
            sides.append(Side(f"baseline {rev}", copy_src(bt, work / f"baseline-src-{k}")))
            trees[sides[-1].label] = bt
        doc: dict[str, Any] = {"cpus": os.cpu_count(), "python": sys.version.split()[0],
                               "sides": [s.label for s in sides] + [s.label for s in anchors], "rows": {}}
        rows: dict[str, dict[str, dict[str, float]]] = doc["rows"]
        anchor_labels = {s.label for s in anchors}

        def record(row: str, samples: dict[str, list[float]], unit: str = "ms", scale: float = 1000.0,
                   per: Callable[[float], str] | None = None,
                   anchor_per: Callable[[float], str] | None = None, edits: int | None = None) -> None:
            """``per``: the rate of a loopc side; ``anchor_per``: of an anchor (its own input's bytes);
            ``edits``: each sample is a script run's median or p95 over that many edits (``n`` counts runs)."""
            rows[row] = {}
            for label, xs in samples.items():
                med = statistics.median(xs) * scale
                nd = 3 if unit == "s" else 1
                cell: dict[str, Any] = {"median": round(med, nd), "p95": round(pct(xs, 95) * scale, nd),
                                        "unit": unit, "n": len(xs)}
                rate_of = anchor_per if anchor_per is not None and label in anchor_labels else per
                if rate_of is not None:
                    cell["rate"] = rate_of(med / scale)
                if edits is not None:
                    cell["edits_per_run"] = edits
                if CPU_SAMPLES.get(label) and len(CPU_SAMPLES[label]) == len(xs):
                    cell["cpu_median"] = round(statistics.median(CPU_SAMPLES[label]) * scale, nd)
                rows[row][label] = cell
            print(render_row(row, rows[row]), flush=True)

        if "tree" in groups:
            tree = work / "tree"
            nbytes = check_tree.make_tree(tree, a.files)
            (work / ".git").mkdir(exist_ok=True)  # the tree's project root
            doc["tree"] = {"files": a.files, "bytes": nbytes}
            mb = nbytes / 1e6
            rate = (lambda s: f"{mb / s:.2f} MB/s")
            wf = work / "workflows"
            if anchors:
                n, wbytes = workflows.write_like(tree, wf / ".github" / "workflows")
                doc["workflows"] = {"files": n, "bytes": wbytes}
                wfiles = [str(p) for p in sorted(wf.rglob("*.yml"))]
            anchor_rate = (lambda sec: f"{doc['workflows']['bytes'] / 1e6 / sec:.2f} MB/s") if anchors else None
            for j in (1, 2):
                cases: dict[str, Callable[[], float]] = {
                    s.label: timed(s.loopc("check", "--no-cache", "-j", str(j), "tree"), s.env(bytecode=True,
                                   pyc=work / f"pyc-{i}"), work) for i, s in enumerate(sides)}
                for s in anchors:  # the anchor has neither jobs nor a cache: the same run in every tree row
                    cases[s.label] = timed([s.binary or "", "-no-color", *wfiles], dict(os.environ), wf)
                record(f"cold tree -j {j}", interleaved(cases, a.repeat), "s", 1.0, rate, anchor_rate)
            cases = {}
            for i, s in enumerate(sides):
                cache = work / f"cache-{i}"
                env = s.env(bytecode=True, pyc=work / f"pyc-{i}")
                subprocess.run(s.loopc("check", "--cache-dir", str(cache), "tree"), env=env, cwd=work,
                               capture_output=True, check=True)
                cases[s.label] = timed(s.loopc("check", "--cache-dir", str(cache), "tree"), env, work)
            for s in anchors:
                cases[s.label] = timed([s.binary or "", "-no-color", *wfiles], dict(os.environ), wf)
            record("warm tree (cache)", interleaved(cases, a.repeat), "s", 1.0, rate, anchor_rate)

        if "startup" in groups:
            small = work / "small.yaml"
            shutil.copy(SMALL, small)
            pythons: list[tuple[str, Side, bool, Path | None]] = []
            for i, s in enumerate(sides):
                pythons.append(("no bytecode", s, False, None))
                pythons.append(("bytecode", s, True, work / f"pyc-{i}"))
            if a.wheel:
                for i, s in enumerate(sides):
                    py = wheel_venv(trees[s.label], work, f"side{i}")
                    pythons.append(("wheel", Side(s.label, None, py, script=str(Path(py).parent / "loopc")), True, None))
            for how in dict.fromkeys(h for h, *_ in pythons):
                picked = [(s, bc, pyc) for h, s, bc, pyc in pythons if h == how]
                for row, args, ok in (("python -c pass", None, (0,)), ("loopc --version", ["--version"], (0,)),
                                      ("loopc check small.yaml (--no-cache)", ["check", "--no-cache", "small.yaml"],
                                       (0,)),
                                      ("loopc check small.yaml (plain form, miss)", ["check", "small.yaml"], (0,)),
                                      ("loopc check small.yaml (cache hit)", ["check", "small.yaml"], (0,))):
                    cases = {}
                    for i, (s, bc, pyc) in enumerate(picked):
                        env = s.env(bytecode=bc, pyc=pyc, LOOPC_CACHE_DIR=str(work / f"cache-small-{how}-{i}"))
                        argv = [s.python, "-c", "pass"] if args is None else s.loopc(*args)
                        fresh = work / f"fresh-{how}-{i}" if "miss" in row else None
                        cases[s.label] = timed(argv, env, work, ok, fresh_cache=fresh)
                    if row.endswith("(--no-cache)"):
                        for s in anchors:
                            one = work / "one.yml"
                            one.write_text(workflows.workflow(0, SMALL.stat().st_size), encoding="utf-8")
                            cases[s.label] = timed([s.binary or "", "-no-color", str(one)], dict(os.environ), work)
                    record(f"{row}, {how}", interleaved(cases, a.startup_repeat))

        if "recheck" in groups:
            cases = {}
            out: dict[str, Path] = {}
            for i, s in enumerate(sides):
                out[s.label] = work / f"recheck-{i}.json"
                argv = [s.python, str(HERE / "recheck.py"), "--runs", str(a.recheck_runs), "--quiet",
                        "--json", str(out[s.label])]
                cases[s.label] = timed(argv, s.env(bytecode=True, pyc=work / f"pyc-{i}"), ROOT)
            medians: dict[str, list[float]] = {k: [] for k in cases}
            p95s: dict[str, list[float]] = {k: [] for k in cases}
            for _ in range(max(1, a.repeat // 2)):
                for k, fn in cases.items():
                    fn()
                    r = json.loads(out[k].read_text())
                    medians[k].append(r["cpu"]["median_ms"] / 1000)
                    p95s[k].append(r["cpu"]["p95_ms"] / 1000)
            CPU_SAMPLES.clear()
            record(f"re-check after one edit, 98 nodes, median CPU ({a.recheck_runs} edits)", medians,
                   edits=a.recheck_runs)
            record(f"re-check after one edit, 98 nodes, p95 CPU ({a.recheck_runs} edits)", p95s,
                   edits=a.recheck_runs)

        if "incremental" in groups:
            # incremental.py in a fresh interpreter of each side that has loopc.pipeline.incremental
            # (issue 26 item 1; a side without it shows "—"): CPU median and p95 of one IncrementalChecker
            # over --recheck-runs edits at 100 nodes and a quarter of them (at least 20) at ~500
            res: dict[int, dict[str, dict[str, list[float]]]] = {
                n: {"median": {}, "p95": {}} for n in (100, 500)}
            for _ in range(max(1, a.repeat // 2)):
                for i, s in enumerate(sides):
                    if not (s.src is not None and (s.src / "loopc" / "pipeline" / "incremental.py").exists()):
                        continue
                    out_json = work / f"incremental-{i}.json"
                    argv = [s.python, str(HERE / "incremental.py"), "--runs", str(a.recheck_runs), "--sizes",
                            "100,500", "--json", str(out_json)]
                    timed(argv, s.env(bytecode=True, pyc=work / f"pyc-{i}"), ROOT)()
                    for r in json.loads(out_json.read_text())["results"]:
                        n = 100 if r["size"] <= 100 else 500
                        for q, key in (("median", "median_ms"), ("p95", "p95_ms")):
                            res[n][q].setdefault(s.label, []).append(r["cpu"]["incremental"][key] / 1000)
            CPU_SAMPLES.clear()
            for n, label in ((100, "~100 nodes"), (500, "~500 nodes")):
                for q in ("median", "p95"):
                    if res[n][q]:
                        record(f"incremental re-check after one edit, {label}, {q} CPU", res[n][q],
                               edits=max(20, a.recheck_runs if n == 100 else a.recheck_runs // 4))

        if "lsp" in groups:
            import asyncio

            import lsp_concurrency

            medians = {s.label: [] for s in sides}
            p95s = {s.label: [] for s in sides}
            for _ in range(max(1, a.repeat // 2)):
                for s in sides:
                    r = asyncio.run(lsp_concurrency.edit_to_diagnostics(str(s.src), "neovim@v0.11.0", a.lsp_edits))
                    medians[s.label].append(r["edit_to_diagnostics_ms"]["median_ms"] / 1000)
                    p95s[s.label].append(r["edit_to_diagnostics_ms"]["p95_ms"] / 1000)
            CPU_SAMPLES.clear()
            record("language server edit -> pulled diagnostics, 98 nodes, median", medians, edits=a.lsp_edits)
            record("language server edit -> pulled diagnostics, 98 nodes, p95", p95s, edits=a.lsp_edits)

        Path(a.json).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        print()
        print(markdown(doc))
    finally:
        for wt in worktrees:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(wt)], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _cell(c: dict[str, Any]) -> str:
    v = f"{c['median']:.3f} s" if c["unit"] == "s" else f"{c['median']:.1f} ms"
    if "cpu_median" in c:
        v += f" (CPU {c['cpu_median']:.3f} s)" if c["unit"] == "s" else f" (CPU {c['cpu_median']:.1f} ms)"
    return v + (f", {c['rate']}" if "rate" in c else "")


def render_row(row: str, cells: dict[str, dict[str, Any]]) -> str:
    base = cells.get("current")
    parts = []
    for label, c in cells.items():
        ratio = f" ({c['median'] / base['median']:.2f}x current)" if base and label != "current" and base["median"] else ""
        parts.append(f"{label}: {_cell(c)}{ratio}")
    return f"{row}: " + "; ".join(parts)


def markdown(doc: dict[str, Any]) -> str:
    """The result as a markdown table: one column per side, the ratio of
    each other side to ``current`` in brackets."""
    sides = doc["sides"]
    lines = ["| what | " + " | ".join(sides) + " |", "|---|" + "---|" * len(sides)]
    for row, cells in doc["rows"].items():
        base = cells.get("current")
        out = []
        for s in sides:
            c = cells.get(s)
            if c is None:
                out.append("—")
                continue
            ratio = f" ({c['median'] / base['median']:.2f}×)" if base and s != "current" and base["median"] else ""
            out.append(_cell(c) + ratio)
        lines.append(f"| {row} | " + " | ".join(out) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
