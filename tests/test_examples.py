"""The bundled examples (``examples/*.yaml``) are valid ``loop.plan/v1``
plans: every one checks clean — no errors and no warnings — through the whole
pipeline (seed 004 §5 passes 1–12).  The benchmark plan generators
(``benchmarks/generate.py``) must produce clean plans within the seed 004
§3.2 authoring budgets as well."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import loopc

from conftest import ROOT
from conftest import EXAMPLES

#: The examples the README promises (one per construct family).
REQUIRED = {
    "callback_review", "release_announcement", "planner_fan_out",
    "fork_all_join", "fork_any_join", "all_match_switch", "polishing_loop",
    "wait_timeout", "set_variable_timer",
}


def _render(res: "loopc.CheckResult") -> str:
    return "\n".join(
        f"{d.span.line}:{d.span.column} {d.severity.value} {d.code} {d.message}"
        for d in res.diagnostics
    )


def _blocking(res: "loopc.CheckResult") -> list:
    """Errors and warnings (an informational note does not make a plan unclean)."""
    return [d for d in res.diagnostics if d.severity in (loopc.Severity.ERROR, loopc.Severity.WARNING)]


def test_required_examples_present() -> None:
    assert REQUIRED <= {p.stem for p in EXAMPLES}


def test_examples_are_documented() -> None:
    readme = (ROOT / "examples" / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in EXAMPLES if p.name not in readme]
    assert missing == []


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_checks_clean(path: Path) -> None:
    res = loopc.check_source(path.read_bytes(), path=str(path))
    assert _blocking(res) == [], _render(res)
    assert res.ok
    assert res.plan is not None
    assert not any(d.code == "LP5999" for d in res.diagnostics)


def _generate():
    spec = importlib.util.spec_from_file_location("loopc_bench_generate", ROOT / "benchmarks" / "generate.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


GEN = _generate()


@pytest.mark.parametrize("name", ["typical_plan", "hundred_node_plan", "near_budget_plan", "max_budget_plan"])
@pytest.mark.slow
def test_generated_plan_checks_clean(name: str) -> None:
    src = getattr(GEN, name)()
    res = loopc.check_source(src)
    assert _blocking(res) == [], _render(res)[:4000]
    assert not any(d.code == "LP5999" for d in res.diagnostics)


@pytest.mark.slow
def test_generated_plan_shapes() -> None:
    near = GEN.stats(GEN.near_budget_plan())
    assert 450 <= near["nodes"] <= 512 and 1300 <= near["edges"] <= 2048
    assert 0.8 * 2**20 <= near["bytes"] <= 2**20
    assert near["yaml_nodes"] <= 100_000 and near["depth"] <= 64
    top = GEN.stats(GEN.max_budget_plan())
    assert (top["nodes"], top["edges"]) == (512, 2048)
    assert top["bytes"] <= 2**20 and top["yaml_nodes"] <= 100_000 and top["depth"] <= 64
    typ = GEN.stats(GEN.typical_plan())
    assert 20 <= typ["nodes"] <= 40
    assert 90 <= GEN.stats(GEN.hundred_node_plan())["nodes"] <= 110


def test_generators_are_deterministic() -> None:
    assert GEN.near_budget_plan() == GEN.near_budget_plan()
    assert GEN.max_budget_plan() == GEN.max_budget_plan()
