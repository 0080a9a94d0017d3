"""Fuzz targets for loopc's three untrusted-input front doors, runnable with
one command (benchmarks/README.md "Fuzzing"):

* ``check_source`` — plan source bytes → check → text and JSON rendering;
* ``verify`` — artifact bytes → strict ``decode`` and the verifier; every
  instruction tree of a verified artifact is evaluated;
* ``scenario`` — scenario bytes → ``load_scenario``.

Each target asserts the documented contract: ``check_source``,
``verify`` and ``load_scenario`` never raise and return their result types;
``decode`` raises only ``DecodeError`` and ``evaluate`` only
``EvaluationError``; no internal-error diagnostic (LP5999) or internal
verifier violation; every diagnostic carries a registered code; the JSON
output is valid UTF-8 JSON.

Inputs are structure-aware: seeds are the golden sources, examples and
fixtures, the golden artifacts and the golden scenarios; a mutation is either
a structural one (YAML: delete, duplicate, swap or splice lines, replace a
token with one from the seeds or a hostile token such as a 5,000-digit number,
U+2028, NEL, a deep flow collection; artifacts: replace, delete or duplicate a
JSON value at a random pointer and re-seal the digest half the time, so the
mutant reaches the semantic rules) or a byte mutation.

Engines:

* ``atheris`` (coverage-guided libFuzzer; ``pip install atheris``, the
  ``fuzz`` extra): the structural mutator is atheris' custom mutator, mixed
  with libFuzzer's own byte mutation; loopc is instrumented at import.
* ``hypothesis`` (always available; the test suite's smoke run uses it):
  random seeds and mutation chains, not coverage-guided.

Run::

    python benchmarks/fuzz.py check_source --seconds 300          # atheris if installed
    python benchmarks/fuzz.py verify --engine hypothesis --runs 5000
    python benchmarks/fuzz.py all --seconds 60

It prints the iterations run (atheris: libFuzzer's ``Done N runs`` line and
final stats) and exits non-zero with the failing input written to
``fuzz-crash-<target>-<sha>.bin`` when a target's contract breaks.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "benchmarks") not in sys.path:
    sys.path.insert(0, str(ROOT / "benchmarks"))

import clirender  # noqa: E402  (benchmarks/clirender.py)

MAX_LEN = 64 * 1024  # mutants stay small: the budgets are tested by the hostile corpus

# --- seeds ----------------------------------------------------------------------------


def seeds(target: str) -> list[bytes]:
    """The seed corpus of ``target`` (sorted, deterministic)."""
    if target == "check_source":
        files = sorted({*ROOT.glob("golden/**/source.yaml"), *ROOT.glob("examples/*.yaml"),
                        *ROOT.glob("tests/fixtures/**/*.yaml"), *ROOT.glob("src/loopc/conformance/scenarios/plans/*.yaml")})
        return [f.read_bytes() for f in files]
    if target == "verify":
        from loopc.ir.canonical import canonical_bytes

        out = []
        for f in sorted(ROOT.glob("golden/**/expected.json")):
            try:
                out.append(canonical_bytes(json.loads(f.read_text(encoding="utf-8"))))
            except Exception:  # noqa: BLE001 - a golden without canonical form is still a seed
                out.append(f.read_bytes())
        return out
    if target == "scenario":
        files = sorted(p for p in ROOT.glob("src/loopc/conformance/scenarios/*") if p.suffix in (".yaml", ".yml", ".json")
                       and not p.name.endswith(".journal.jsonl"))
        return [f.read_bytes() for f in files]
    raise SystemExit(f"unknown target {target!r}")


# --- structure-aware mutation -------------------------------------------------------------

HOSTILE_TOKENS = [
    "9" * 5000, "0" * 3000 + "1", "1." + "1" * 40, "1e400", "-9007199254740993", "0x" + "f" * 80,
    "P" + "9" * 70 + "D", "PT0.0000000001S", "P3651D", "\u2028", "\x85", "\ufeff", "\x00", "\t", "\r",
    "[" * 80, "{" * 80, "&a [*a]", "*a", "!!binary", "? [a]\n: b", "'", '"', "{{", "}}", "{{ input. }}",
    "${x}", "&&", "||", "!", "null", "~", "true", "yes", "-", ": ", "#", "|2", ">-", "\u202e", "😀", "漢字",
    "done\n", "\"done\\n\"", "a" * 300,
]


def _tokens(data: bytes) -> list[str]:
    text = data.decode("utf-8", "replace")
    out = []
    for word in text.replace(":", " ").replace(",", " ").split():
        if 0 < len(word) < 60:
            out.append(word)
    return out[:2000]


def mutate_text(data: bytes, rnd: random.Random, pool: list[bytes]) -> bytes:
    """One structural mutation of YAML text (lines and tokens)."""
    text = data.decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    op = rnd.randrange(8)
    i = rnd.randrange(len(lines)) if lines else 0
    if op == 0 and len(lines) > 1:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[i] if lines else "")
    elif op == 2 and len(lines) > 1:
        j = rnd.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 3 and pool:  # splice a line from another seed
        other = rnd.choice(pool).decode("utf-8", "surrogateescape").split("\n")
        lines.insert(i, rnd.choice(other))
    elif op in (4, 5):  # replace a token
        line = lines[i] if lines else ""
        words = [w for w in line.replace(":", " ").replace(",", " ").split() if w]
        new = (rnd.choice(HOSTILE_TOKENS) if op == 4 or not pool
               else rnd.choice(_tokens(rnd.choice(pool)) or ["x"]))
        if words:
            w = rnd.choice(words)
            lines[i] = line.replace(w, new, 1)
        elif lines:
            lines[i] = line + new
    elif op == 6 and lines:  # indentation
        lines[i] = (" " * rnd.choice((1, 2, 4, 100)) + lines[i]) if rnd.random() < 0.5 else lines[i].lstrip()
    else:  # insert a hostile token at a random character
        k = rnd.randrange(len(text) + 1)
        return (text[:k] + rnd.choice(HOSTILE_TOKENS) + text[k:]).encode("utf-8", "surrogateescape")[:MAX_LEN]
    return "\n".join(lines).encode("utf-8", "surrogateescape")[:MAX_LEN]


_JSON_POOL: list[Any] = [None, True, False, 0, 1, -1, 2.5, 9007199254740993, "", "x", "done", "done\n", "split",
                         "in", "out", "failed", "fail_plan", "fail_branch", "loop", "fork", "join", "end", "string",
                         "number", "boolean", "array<string>", "object", "input", "output", "run.state",
                         "P" + "9" * 50 + "D", {}, [], ["lit", "string", {}],
                         ["and", "boolean", ["lit", "string", "a"], ["lit", "boolean", True]],
                         ["ref", "string", "input", ["nope"]], {"type": "string", "required": True}]


def _pointers(v: Any) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(v, ())]
    while stack:
        x, p = stack.pop()
        out.append(p)
        if isinstance(x, dict):
            stack.extend((y, p + (k,)) for k, y in x.items())
        elif isinstance(x, list):
            stack.extend((y, p + (i,)) for i, y in enumerate(x))
    return out


def _at(d: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        d = d[k]
    return d


def mutate_artifact(data: bytes, rnd: random.Random, pool: list[bytes]) -> bytes:
    """One JSON-level mutation of an artifact; the digest is re-sealed half
    the time so that the mutant reaches the semantic rules."""
    try:
        d = json.loads(data)
    except Exception:  # noqa: BLE001 - not JSON (any more): mutate as text
        return mutate_text(data, rnd, pool)
    ptrs = [p for p in _pointers(d) if p]
    if not ptrs:
        return mutate_text(data, rnd, pool)
    p = rnd.choice(ptrs)
    parent = _at(d, p[:-1])
    op = rnd.randrange(5)
    if op == 0:
        parent[p[-1]] = copy.deepcopy(rnd.choice(_JSON_POOL))
    elif op == 1:
        if isinstance(parent, dict):
            del parent[p[-1]]
        else:
            parent.pop(p[-1])
    elif op == 2 and isinstance(parent, list):
        parent.insert(p[-1], copy.deepcopy(parent[p[-1]]))
    elif op == 3 and pool:  # a value from another artifact at a random place
        try:
            other = json.loads(rnd.choice(pool))
            q = rnd.choice(_pointers(other))
            parent[p[-1]] = copy.deepcopy(_at(other, q))
        except Exception:  # noqa: BLE001
            pass
    else:  # an id-like string respelt
        v = parent[p[-1]]
        if isinstance(v, str):
            parent[p[-1]] = rnd.choice((v + "_x", v.upper(), v[:-1], v + "\n", ""))
    if rnd.random() < 0.5 and isinstance(d, dict):
        try:
            from loopc.ir.canonical import canonical_bytes
            from loopc.ir.digest import semantic_digest

            d["digest"] = "sha256:" + "0" * 64
            d["digest"] = semantic_digest(d)
            return canonical_bytes(d)[:MAX_LEN * 4]
        except Exception:  # noqa: BLE001 - no canonical form: the decoder sees it raw
            pass
    return json.dumps(d, ensure_ascii=rnd.random() < 0.5).encode("utf-8", "surrogatepass")[:MAX_LEN * 4]


def mutate_bytes(data: bytes, rnd: random.Random) -> bytes:
    """A plain byte mutation (flip, insert, delete, truncate)."""
    b = bytearray(data)
    op = rnd.randrange(4)
    k = rnd.randrange(len(b) + 1)
    if op == 0 and b:
        b[min(k, len(b) - 1)] = rnd.randrange(256)
    elif op == 1:
        b[k:k] = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 8)))
    elif op == 2 and b:
        del b[k:k + rnd.randrange(1, 64)]
    else:
        del b[k:]
    return bytes(b)


def mutate(target: str, data: bytes, rnd: random.Random, pool: list[bytes]) -> bytes:
    """One structure-aware mutation for ``target`` (a byte mutation 1 in 5)."""
    if rnd.random() < 0.2:
        return mutate_bytes(data, rnd)
    if target == "verify":
        return mutate_artifact(data, rnd, pool)
    return mutate_text(data, rnd, pool)


# --- the targets -------------------------------------------------------------------------


def target_check_source(data: bytes) -> None:
    """check_source never raises; registered codes, no LP5999; text and JSON
    rendering never raise and JSON is valid UTF-8."""
    import loopc
    from loopc import codes

    res = loopc.check_source(data, path="fuzz.yaml")
    assert isinstance(res, loopc.CheckResult)
    for d in res.diagnostics:
        assert d.code != "LP5999", d.message
        assert codes.get(d.code).name == d.name, d
    _, js = clirender.render(res, "fuzz.yaml")
    json.loads(js.encode("utf-8"))


_ENV = {"run.input": {}, "run.state": {}, "input": {}, "output": {}, "branches": {}, "winner": {},
        "loop": {"iteration": 1, "state": {}}, "item": {}, "items": []}


def target_verify(data: bytes) -> None:
    """decode raises only DecodeError; verify never raises, no internal
    violation; a verified artifact's instructions raise only EvaluationError."""
    from loopc.ir import decode, evaluate, verify
    from loopc.ir.decoder import DecodeError
    from loopc.ir.evaluator import EvaluationError
    from loopc.ir.verifier import VerifyResult

    try:
        decode(data)
    except DecodeError:
        pass
    res = verify(data)
    assert isinstance(res, VerifyResult)
    assert all(v.code != "internal" for v in res.violations), res.violations
    if not res.ok:
        assert res.violations and all(isinstance(v.pointer, str) and v.message for v in res.violations)
        return
    assert res.artifact is not None
    for _, instr in res.artifact.instrs():
        try:
            evaluate(instr, _ENV)
        except EvaluationError:
            pass


def target_scenario(data: bytes) -> None:
    """load_scenario never raises: a Scenario or positioned problems."""
    from loopc.interpreter.scenario import Scenario, ScenarioProblem, load_scenario

    got = load_scenario(data, "fuzz.yaml")
    if isinstance(got, list):
        assert got and all(isinstance(p, ScenarioProblem) and p.span.line >= 1 for p in got), got
    else:
        assert isinstance(got, Scenario)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "check_source": target_check_source, "verify": target_verify, "scenario": target_scenario,
}


# --- engines ------------------------------------------------------------------------------


class Crash(Exception):
    def __init__(self, target: str, data: bytes, exc: BaseException) -> None:
        super().__init__(f"{target}: {type(exc).__name__}: {exc}")
        self.target, self.data, self.exc = target, data, exc


def run_one(target: str, data: bytes) -> None:
    """Run ``target`` on ``data``; a broken contract raises :class:`Crash`."""
    try:
        TARGETS[target](data)
    except Exception as exc:  # noqa: BLE001 - every escape is a finding
        raise Crash(target, data, exc) from exc


def fuzz_random(target: str, *, runs: int | None, seconds: float | None, seed: int = 0,
                chain: int = 4) -> int:
    """The engine without coverage (used by the hypothesis engine and the
    test suite): random seed, 1..``chain`` mutations; returns iterations."""
    rnd = random.Random(seed)
    pool = seeds(target)
    deadline = time.monotonic() + seconds if seconds is not None else None
    n = 0
    while (runs is None or n < runs) and (deadline is None or time.monotonic() < deadline):
        data = rnd.choice(pool)
        for _ in range(rnd.randint(1, chain)):
            data = mutate(target, data, rnd, pool)
        run_one(target, data)
        n += 1
    return n


def fuzz_hypothesis(target: str, *, runs: int | None, seconds: float | None, seed: int = 0) -> int:
    """Hypothesis drives the choice of seed and mutation chain (shrinking a
    failure to a short chain)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    pool = seeds(target)
    count = [0]
    deadline = time.monotonic() + seconds if seconds is not None else None

    @settings(max_examples=runs or 10**9, deadline=None, database=None, derandomize=seed == 0,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(st.integers(0, len(pool) - 1), st.integers(0, 2**32 - 1), st.integers(1, 6))
    def one(i: int, mseed: int, k: int) -> None:
        if deadline is not None and time.monotonic() > deadline:
            return
        rnd = random.Random(mseed)
        data = pool[i]
        for _ in range(k):
            data = mutate(target, data, rnd, pool)
        count[0] += 1
        run_one(target, data)

    one()
    return count[0]


def fuzz_atheris(target: str, *, runs: int | None, seconds: float | None, seed: int = 0) -> int:
    """Coverage-guided: libFuzzer with the structural custom mutator; the
    seed corpus is written to a temporary directory."""
    import atheris
    import pkgutil
    import tempfile

    with atheris.instrument_imports(include=["loopc"]):
        import loopc

        for m in pkgutil.walk_packages(loopc.__path__, "loopc."):
            if m.name.startswith(("loopc.lsp", "loopc.testing", "loopc.cli", "loopc.__main__")) \
                    or m.name.endswith("golden"):
                continue
            try:
                __import__(m.name)
            except Exception:  # noqa: BLE001 - optional modules
                pass
    pool = seeds(target)
    count = [0]

    def test_one(data: bytes) -> None:
        count[0] += 1
        try:
            run_one(target, data)
        except Crash as c:
            _save(c)
            raise

    def custom_mutator(data: bytes, max_size: int, mseed: int) -> bytes:
        rnd = random.Random(mseed)
        if rnd.random() < 0.3:
            return atheris.Mutate(data, max_size)
        out = mutate(target, data or rnd.choice(pool), rnd, pool)
        return out[:max_size]

    corpus = tempfile.mkdtemp(prefix=f"loopc-fuzz-{target}-")
    for i, s in enumerate(pool):
        Path(corpus, f"seed{i:04d}").write_bytes(s[:MAX_LEN * 4])
    argv = [sys.argv[0], corpus, f"-max_len={MAX_LEN * 4}", f"-seed={seed or 1}", "-print_final_stats=1",
            "-timeout=20", "-rss_limit_mb=2048"]
    if runs is not None:
        argv.append(f"-runs={runs}")
    if seconds is not None:
        argv.append(f"-max_total_time={int(seconds)}")
    atheris.Setup(argv, test_one, custom_mutator=custom_mutator)
    atheris.Fuzz()
    return count[0]  # not reached: libFuzzer exits the process


def _save(c: Crash) -> str:
    name = f"fuzz-crash-{c.target}-{hashlib.sha256(c.data).hexdigest()[:12]}.bin"
    Path(name).write_bytes(c.data)
    return name


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("target", choices=[*TARGETS, "all"])
    ap.add_argument("--engine", choices=["auto", "atheris", "hypothesis", "random"], default="auto",
                    help="auto: atheris when installed, else hypothesis")
    ap.add_argument("--runs", type=int, help="iterations (per target)")
    ap.add_argument("--seconds", type=float, help="time budget (per target)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.runs is None and args.seconds is None:
        args.seconds = 60.0
    engine = args.engine
    if engine == "auto":
        try:
            import atheris  # noqa: F401

            engine = "atheris"
        except ImportError:
            engine = "hypothesis"
    targets = list(TARGETS) if args.target == "all" else [args.target]
    if engine == "atheris" and len(targets) > 1:  # libFuzzer owns the process: one child per target
        import subprocess

        rc = 0
        for t in targets:
            cmd = [sys.executable, __file__, t, "--engine", "atheris", "--seed", str(args.seed)]
            cmd += ["--runs", str(args.runs)] if args.runs is not None else []
            cmd += ["--seconds", str(args.seconds)] if args.seconds is not None else []
            rc |= subprocess.call(cmd)
        return rc
    for t in targets:
        t0 = time.monotonic()
        try:
            if engine == "atheris":
                fuzz_atheris(t, runs=args.runs, seconds=args.seconds, seed=args.seed)
            elif engine == "hypothesis":
                n = fuzz_hypothesis(t, runs=args.runs, seconds=args.seconds, seed=args.seed)
            else:
                n = fuzz_random(t, runs=args.runs, seconds=args.seconds, seed=args.seed)
        except Crash as c:
            print(f"fuzz {t}: CONTRACT BROKEN: {c} (input saved to {_save(c)})", file=sys.stderr)
            import traceback

            traceback.print_exception(c.exc)
            return 1
        print(f"fuzz {t}: {n} iterations in {time.monotonic() - t0:.1f} s ({engine}), no contract broken")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
