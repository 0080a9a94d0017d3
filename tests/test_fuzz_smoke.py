"""A few seconds of each fuzz target (benchmarks/fuzz.py): structure-aware
mutants of the golden sources, artifacts and scenarios keep every target's
contract (check_source / verify / load_scenario never raise, decode raises
only DecodeError, evaluate only EvaluationError, no LP5999, valid UTF-8
JSON).  The long, coverage-guided runs are ``python benchmarks/fuzz.py``."""
from __future__ import annotations

import importlib.util
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("loopc_bench_fuzz", ROOT / "benchmarks" / "fuzz.py")
assert _spec is not None and _spec.loader is not None
fuzz = importlib.util.module_from_spec(_spec)
sys.modules["loopc_bench_fuzz"] = fuzz
_spec.loader.exec_module(fuzz)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("target", sorted(fuzz.TARGETS))
def test_fuzz_target_smoke(target: str) -> None:
    assert fuzz.fuzz_random(target, runs=120, seconds=None, seed=20261202) == 120


@pytest.mark.timeout(120)
@pytest.mark.parametrize("target", sorted(fuzz.TARGETS))
def test_fuzz_target_smoke_hypothesis(target: str) -> None:
    assert fuzz.fuzz_hypothesis(target, runs=40, seconds=None) >= 40


def test_seeds_are_the_goldens_and_mutations_stay_bounded() -> None:
    counts = {t: len(fuzz.seeds(t)) for t in fuzz.TARGETS}
    assert counts["check_source"] > 100 and counts["verify"] > 30 and counts["scenario"] > 30, counts
    rnd = random.Random(1)
    for t in fuzz.TARGETS:
        pool = fuzz.seeds(t)
        for s in pool[:10]:
            for _ in range(20):
                out = fuzz.mutate(t, s, rnd, pool)
                assert isinstance(out, bytes) and len(out) <= fuzz.MAX_LEN * 4


def test_a_broken_contract_is_reported_with_the_input(tmp_path: Path, monkeypatch) -> None:
    def broken(data: bytes) -> None:
        raise ValueError("boom")

    monkeypatch.setitem(fuzz.TARGETS, "scenario", broken)
    monkeypatch.chdir(tmp_path)
    assert fuzz.main(["scenario", "--engine", "random", "--runs", "3"]) == 1
    (saved,) = tmp_path.glob("fuzz-crash-scenario-*.bin")
    assert saved.read_bytes()


@pytest.mark.timeout(300)
def test_atheris_engine_when_installed() -> None:
    pytest.importorskip("atheris")
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "fuzz.py"), "scenario", "--engine", "atheris",
                        "--runs", "300"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Done 300 runs" in r.stderr
