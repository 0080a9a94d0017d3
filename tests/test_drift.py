"""Drift tests between loopc's own checker and what it publishes.

* every plan ``loopc check`` accepts (examples, goldens, every near-miss and
  passing fixture) validates against the published source JSON Schema
  (docs/schema/loop.plan.source.v1.schema.json), so editors never flag a
  valid plan;
* every artifact ``compile`` emits passes the strict decoder and ``verify``
  (canonical bytes, matching semantic digest) and validates against the
  artifact JSON Schema of its own version.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

import loopc
from loopc.ir.decoder import decode
from loopc.ir.verifier import verify

from conftest import REPOSITORY_PLANS as PLANS
from conftest import ROOT

SCHEMAS = ROOT / "docs" / "schema"
IDS = [str(p.relative_to(ROOT)) for p in PLANS]


@lru_cache(maxsize=None)
def _compiled(path: Path) -> loopc.CompileResult:
    return loopc.compile_source(path.read_bytes(), path=str(path))


@lru_cache(maxsize=None)
def _source_validator() -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(json.loads((SCHEMAS / "loop.plan.source.v1.schema.json").read_text("utf-8")))


@lru_cache(maxsize=None)
def _artifact_validator(version: int) -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMAS / f"loop.plan.artifact.v{version}.schema.json").read_text("utf-8"))
    return jsonschema.Draft202012Validator(schema)


def _valid_plans() -> list[Path]:
    return [p for p in PLANS if _compiled(p).check.ok]


@pytest.mark.slow
def test_the_drift_tests_cover_every_near_miss() -> None:
    near_misses = [p for p in PLANS if p.stem.endswith("_ok")]
    assert near_misses, "no near-miss fixtures found"
    assert all(_compiled(p).check.ok for p in near_misses), "a near-miss fixture has errors"
    assert len(_valid_plans()) > 100


@pytest.mark.parametrize("path", PLANS, ids=IDS)
@pytest.mark.slow
def test_every_valid_plan_validates_against_the_source_schema(path: Path) -> None:
    if not _compiled(path).check.ok:
        pytest.skip("not a valid plan")
    data = YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))
    errors = sorted(_source_validator().iter_errors(data), key=lambda e: list(e.absolute_path))
    assert not errors, f"{'/'.join(map(str, errors[0].absolute_path))}: {errors[0].message}"


#: Valid plans that leave out every optional key the checker defaults.
MINIMAL = {
    "no_input_output_edges": """\
apiVersion: loop.plan/v1
kind: PlanVersion
entry: done
nodes:
  - {id: done, type: end, end: {status: succeeded}}
""",
    "join_and_loop_without_optional_keys": """\
apiVersion: loop.plan/v1
kind: PlanVersion
entry: f
nodes:
  - {id: f, type: fork, fork: {branches: [a, b]}}
  - {id: j, type: join, join: {forkId: f, mode: all}}
  - {id: l, type: loop, loop: {mode: counted, iterations: 2}}
  - {id: s, type: set_variable, setVariable: {assign: {}}}
  - {id: done, type: end, end: {status: succeeded}}
edges:
  - {id: e1, from: {node: f, port: a}, to: {node: j}}
  - {id: e2, from: {node: f, port: b}, to: {node: j}}
  - {id: e3, from: {node: j, port: completed}, to: {node: l}}
  - {id: e4, from: {node: l, port: body}, to: {node: s}}
  - {id: e5, from: {node: s, port: completed}, to: {node: l, port: continue}}
  - {id: e6, from: {node: l, port: done}, to: {node: done}}
""",
}


@pytest.mark.parametrize("name", sorted(MINIMAL))
def test_minimal_valid_plans_validate_against_the_source_schema(name: str) -> None:
    src = MINIMAL[name]
    assert loopc.check_source(src).ok
    errors = list(_source_validator().iter_errors(YAML(typ="safe", pure=True).load(src)))
    assert not errors, f"{'/'.join(map(str, errors[0].absolute_path))}: {errors[0].message}"


@pytest.mark.parametrize("path", PLANS, ids=IDS)
@pytest.mark.slow
def test_every_emitted_artifact_passes_the_strict_decoder(path: Path) -> None:
    res = _compiled(path)
    if not res.ok:
        pytest.skip("does not compile")
    assert res.bytes is not None and res.version is not None
    art = decode(res.bytes, canonical=True)
    assert art.digest == res.digest
    vr = verify(res.bytes)
    assert vr.ok, vr.message
    data = json.loads(res.bytes)
    errors = list(_artifact_validator(res.version).iter_errors(data))
    assert not errors, f"{'/'.join(map(str, errors[0].absolute_path))}: {errors[0].message}"
