"""The diagnostic code registry: documented, exemplified, executed."""
from __future__ import annotations

import re

import pytest

import loopc
from loopc import codes
from loopc.codes.__main__ import render

from conftest import ROOT
ALL = codes.all_codes()
# LP6xxx examples are catalog files and planning runs: tests/test_plan_codes.py runs them.
RUNNABLE = [c for c in ALL if c.example and not c.example.startswith("<") and not c.code.startswith("LP6")]


def test_codes_are_well_formed() -> None:
    names = set()
    for c in ALL:
        assert re.fullmatch(r"LP[1-6]\d{3}", c.code), c.code
        assert re.fullmatch(r"[a-z_]+(\.[a-z_]+)+", c.name), c.name
        assert c.name not in names or c.name.startswith("resource.artifact_budget"), c.name
        names.add(c.name)
        assert c.title and c.explanation


def test_docs_page_is_current() -> None:
    page = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    assert page == render(), "run: python tools/regen.py"


def test_every_code_used_in_the_code_is_registered() -> None:
    used = set()
    for p in (ROOT / "src" / "loopc").rglob("*.py"):
        if "codes" in p.parts:
            continue
        used |= set(re.findall(r"\bLP\d{4}\b", p.read_text(encoding="utf-8")))
    registered = {c.code for c in ALL}
    assert used - registered == set()


@pytest.mark.parametrize("c", RUNNABLE, ids=[c.code for c in RUNNABLE])
def test_failing_example_produces_its_code(c: codes.Code) -> None:
    res = loopc.check_source(c.example)
    assert c.code in {d.code for d in res.diagnostics}, [
        (d.code, d.message) for d in res.diagnostics
    ]


FIXED = [c for c in ALL if c.fixed and not c.fixed.startswith("<") and not c.code.startswith("LP6")]


@pytest.mark.parametrize("c", FIXED, ids=[c.code for c in FIXED])
def test_fixed_example_checks_clean(c: codes.Code) -> None:
    """`loopc explain`'s "Fixed" example has no error and no warning: the
    fix shown is a plan loopc accepts as it stands."""
    res = loopc.check_source(c.fixed)
    shown = [(d.code, d.severity.value, d.span.line if d.span else None, d.message) for d in res.diagnostics]
    assert res.ok and not res.warnings, shown


#: Codes whose failing input cannot live in a small fixture file; each is
#: exercised elsewhere (named here).
NO_FIXTURE = {
    "LP1010": "tests/test_hostile.py two_mib",
    "LP1012": "tests/test_hostile.py huge_scalar_count",
    "LP1013": "tests/test_hostile_corpus.py::test_diagnostic_limit_lp1013_summary (201+ diagnostics)",
    "LP1014": "tests/test_plan_detection.py (a named file that is not a plan; loopc check and inventory)",
    "LP5999": "only raised when a pass crashes; tests assert it never appears",
    "LP5001": "tests/test_ir_budget.py::test_schema_fields_lp5001 (real limits)",
    "LP5002": "tests/test_ir_budget.py::test_expression_instructions_lp5002 (real limits)",
    "LP5003": "tests/test_ir.py::test_budget_codes (reduced limits)",
    "LP5004": "tests/test_ir_budget.py::test_materialized_bytes_lp5004 (real limits)",
    "LP5005": "tests/test_ir_budget.py::test_canonical_size_lp5005 (compile only)",
    "LP5006": "tests/test_ir.py::test_budget_codes (unreachable within source budgets)",
    "LP5007": "tests/test_ir.py::test_budget_codes (unreachable within source budgets)",
    "LP5010": "compile only, when a pass did not run (tests/test_ir.py)",
    "LP6003": "tests/test_plan_codes.py::test_too_many_submissions_lp6003 (1,025 bindings)",
    "LP6104": "artifacts only: tests/test_plan.py::test_cyclic_artifact_lp6104",
    "LP6105": "artifacts only: tests/test_plan.py::test_unverified_artifact_lp6105",
    "LP6106": "only when derivation is wrong: tests/test_plan.py::test_pair_validator_rejects",
}


def test_every_code_has_a_failing_fixture() -> None:
    fixtures = ROOT / "tests" / "fixtures"
    seen: set[str] = set()
    for out in fixtures.rglob("*.out"):
        seen |= set(re.findall(r"\bLP\d{4}\b", out.read_text()))
    missing = [c.code for c in ALL if c.code not in seen and c.code not in NO_FIXTURE]
    assert missing == [], f"codes without a failing fixture in tests/fixtures: {missing}"
