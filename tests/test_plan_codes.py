"""LP6xxx codes: catalog fixtures (tests/fixtures/catalog/*.json|*.yml with
``line:col CODE`` sidecars), plan fixtures (tests/fixtures/plan/X.yaml with
an ``X.plan.out`` sidecar whose ``# profile:`` / ``# catalog:`` header lines
give the request) and the registry's failing/fixed examples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loopc import codes
from loopc.plan.api import plan_source
from loopc.plan.catalog import load_catalog

FIXTURES = Path(__file__).parent / "fixtures"
CATALOGS = sorted(p for p in (FIXTURES / "catalog").iterdir() if p.suffix in (".json", ".yml"))
PLANS = sorted((FIXTURES / "plan").glob("*.plan.out"))


def _pos(d: Any) -> str:
    return "-" if d.span is None else f"{d.span.line}:{d.span.column}"


def _expected(out: Path) -> tuple[list[str], dict[str, str]]:
    lines = out.read_text().splitlines()
    header = {}
    for line in lines:
        if line.startswith("# ") and ":" in line:
            k, v = line[2:].split(":", 1)
            header[k.strip()] = v.strip()
    return sorted(x.strip() for x in lines if x.strip() and not x.startswith("#")), header


@pytest.mark.parametrize("path", CATALOGS, ids=[p.name for p in CATALOGS])
def test_catalog_fixture(path: Path) -> None:
    res = load_catalog(path.read_bytes(), path=str(path))
    got = sorted(f"{_pos(d)} {d.code}" for d in res.diagnostics)
    want, _ = _expected(path.with_suffix(".out"))
    assert got == want, [(d.code, _pos(d), d.message) for d in res.diagnostics]
    assert res.ok == (not any(d.is_error for d in res.diagnostics))


@pytest.mark.parametrize("out", PLANS, ids=[p.name for p in PLANS])
def test_plan_fixture(out: Path) -> None:
    src = out.with_name(out.name.replace(".plan.out", ".yaml"))
    want, header = _expected(out)
    catalog = None
    if "catalog" in header:
        loaded = load_catalog((out.parent / header["catalog"]).read_bytes())
        assert loaded.ok, loaded.diagnostics
        catalog = loaded.catalog
    res = plan_source(src.read_bytes(), catalog=catalog, profile=header.get("profile"))
    got = sorted(f"{_pos(d)} {d.code}" for d in res.diagnostics)
    assert got == want, [(d.code, _pos(d), d.message) for d in res.diagnostics]
    assert res.ok == (not want)
    assert not any(d.code == "LP5999" for d in res.diagnostics)


LP6 = [c for c in codes.all_codes() if c.code.startswith("LP6")]
CATALOG_EXAMPLES = [c for c in LP6 if c.code.startswith("LP60") and c.example and not c.example.startswith("<")]
PLAN_EXAMPLES = [c for c in LP6 if c.code.startswith("LP61") and c.example and not c.example.startswith("<")]


@pytest.mark.parametrize("c", CATALOG_EXAMPLES, ids=[c.code for c in CATALOG_EXAMPLES])
def test_catalog_code_example(c: codes.Code) -> None:
    bad = load_catalog(c.example)
    assert not bad.ok and c.code in {d.code for d in bad.diagnostics}, bad.diagnostics
    good = load_catalog(c.fixed)
    assert good.ok and not good.diagnostics, good.diagnostics


@pytest.mark.parametrize("c", PLAN_EXAMPLES, ids=[c.code for c in PLAN_EXAMPLES])
def test_plan_code_example(c: codes.Code) -> None:
    bad = plan_source(c.example, profile="bounded_atomic")
    assert c.code in {d.code for d in bad.diagnostics}, bad.diagnostics
    good = plan_source(c.fixed, profile="bounded_atomic")
    assert good.ok, good.diagnostics


def test_every_lp6_code_has_a_fixture_or_a_named_test() -> None:
    seen: set[str] = set()
    for out in list((FIXTURES / "catalog").glob("*.out")) + PLANS:
        seen |= {line.split()[1] for line in out.read_text().splitlines() if line and not line.startswith("#")}
    from test_codes import NO_FIXTURE

    missing = [c.code for c in LP6 if c.code not in seen and c.code not in NO_FIXTURE]
    assert missing == []


def test_too_many_submissions_lp6003() -> None:
    entry = "  - {action: end, owner: o, handler: h, implementationVersion: '1'}\n"
    text = (
        "catalogVersion: loop.plan.catalog/v1\ncontractVersion: loop.plan.capability/v1\n"
        "binding: {org: a, installation: b, runtimeCapability: c, generation: d}\ndescriptors: []\n"
        "bindings:\n" + entry * 1025
    )
    res = load_catalog(text)
    assert [(d.code, d.span.line) for d in res.diagnostics] == [("LP6003", 6)]
