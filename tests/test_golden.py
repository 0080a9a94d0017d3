"""Golden IR snapshots (seed 004 §10; issue 4 "Goldens").

* every golden compiles to exactly its committed artifact (canonical bytes)
  and digest, and regeneration would change nothing (CI fails otherwise:
  run ``python -m loopc.ir.golden --update`` and review the diff);
* every golden validates against its version's vendored JSON Schema, and
  against no older one;
* the independent digest of ``tests/ir_reference_digest.py`` agrees;
* coverage: every opcode, config field, instruction op, reference root,
  implicit route, disposition, scope kind, field type, completion/switch/join
  mode, port and artifact version appears in some golden.
"""
from __future__ import annotations

import json
import sys
from functools import lru_cache
from pathlib import Path

import jsonschema
import pytest

from loopc.ir import golden, surface
from loopc.ir.canonical import canonical_bytes
from loopc.ir.decoder import config_instrs, decode, verify
from loopc.ir.digest import semantic_digest
from loopc.ir.instr import children

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import ir_reference_digest  # noqa: E402

CASES = list(golden.cases())
IDS = [f"{c.parent.name}/{c.name}" for c in CASES]


def _expected(case: Path) -> dict:
    return json.loads((case / "expected.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def _schema(version: int) -> jsonschema.Draft202012Validator:
    path = ROOT / "docs" / "schema" / f"loop.plan.artifact.v{version}.schema.json"
    return jsonschema.Draft202012Validator(json.loads(path.read_text(encoding="utf-8")))


def test_there_are_goldens() -> None:
    assert len(CASES) >= 25


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_golden_is_current(case: Path) -> None:
    files = golden.expected_files(case)
    exp = _expected(case)
    assert canonical_bytes(json.loads(files["expected.json"])) == canonical_bytes(exp), (
        "artifact changed; run: python -m loopc.ir.golden --update")
    assert files["expected.json"] == (case / "expected.json").read_bytes(), "pretty form is stale"
    assert files["digest.txt"] == (case / "digest.txt").read_bytes()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_golden_decodes_verifies_and_matches_reference(case: Path) -> None:
    exp = _expected(case)
    raw = canonical_bytes(exp)
    art = decode(raw, canonical=True)
    assert canonical_bytes(art) == raw
    assert verify(raw).ok
    digest = (case / "digest.txt").read_text().strip()
    assert exp["digest"] == digest == semantic_digest(exp)
    assert ir_reference_digest.digest(exp) == digest
    assert ir_reference_digest.jcs(exp) == raw


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_golden_validates_against_its_schema_only(case: Path) -> None:
    exp = _expected(case)
    v = int(exp["artifactVersion"].rsplit("v", 1)[1])
    errors = sorted(_schema(v).iter_errors(exp), key=lambda e: list(e.path))
    assert not errors, f"{list(errors[0].path)}: {errors[0].message}"
    if v > 1:
        older = dict(exp, artifactVersion=f"loop.plan.artifact/v{v - 1}",
                     compilerVersion=f"loop.plan.compiler/v{v - 1}")
        assert not _schema(v - 1).is_valid(older)


def test_regeneration_changes_nothing() -> None:
    writes, stale, errors = golden.plan_changes()
    assert not errors, errors
    assert not stale, stale
    assert not writes, f"would change {sorted(str(p.relative_to(ROOT)) for p in writes)}; " \
                       "run: python -m loopc.ir.golden --update"


def test_examples_are_mirrored() -> None:
    examples = sorted(p.stem for p in (ROOT / "examples").glob("*.yaml"))
    mirrored = sorted(p.name for p in (ROOT / "golden" / "examples").iterdir() if p.is_dir())
    assert examples == mirrored


# ---------------------------------------------------------------------------
# Coverage
# ---------------------------------------------------------------------------

def _walk_instrs(instr: list, acc: dict) -> None:
    stack = [instr]
    while stack:
        i = stack.pop()
        acc["instr_ops"].add(i[0])
        if i[0] == "ref":
            acc["roots"].add(i[2])
        acc["type_kinds"].add(i[1].replace("array<", "").rstrip(">"))
        stack.extend(children(i))


def _fields(contract: dict, acc: dict) -> None:
    for fs in contract.values():
        cur = fs
        while cur is not None:
            acc["field_types"].add(cur["type"])
            for k in cur:
                acc["field_members"].add(k)
            cur = cur.get("items")


@lru_cache(maxsize=None)
def _coverage() -> dict:
    acc: dict = {k: set() for k in (
        "ops", "instr_ops", "roots", "config", "implicit", "dispositions", "scope_kinds",
        "field_types", "field_members", "versions", "modes", "ports", "target_ports", "type_kinds",
        "node_members", "edge_members")}
    for case in CASES:
        a = _expected(case)
        acc["versions"].add(a["artifactVersion"])
        p = a["plan"]
        for c in (p["input"], p["output"], p["state"]):
            _fields(c, acc)
        for i in p["entry"]["bind"].values():
            _walk_instrs(i, acc)
        for n in p["nodes"]:
            op = n["op"]
            acc["ops"].add(op)
            acc["node_members"] |= set(n)
            _fields(n["input"], acc)
            for k, v in n["config"].items():
                acc["config"].add((op, k))
                if k == "relatedScopes":
                    acc["config"].add((op, "relatedScopes:" + v["form"]))
                if k == "workScope":
                    acc["config"].add((op, "workScope:" + v["mode"]))
                if k in ("mode", "completion", "status"):
                    acc["modes"].add((op, k, v))
            if op == "join":
                acc["modes"].add(("join", "owner", "forkId" if "forkId" in n["config"] else "fanOutId",
                                  n["config"]["mode"]))
            for key in ("callbackOutput", "result", "state"):
                if isinstance(n["config"].get(key), dict) and op in ("send_message", "join", "loop"):
                    _fields(n["config"][key], acc)
            for _, instr in config_instrs(op, n["config"]):
                _walk_instrs(instr, acc)
            for sp in n["ports"]["source"]:
                acc["ports"].add((op, sp["name"], "edge" if "edge" in sp else "implicit"))
                if "implicit" in sp:
                    acc["implicit"].add((sp["implicit"]["action"], sp["implicit"]["status"]))
                if isinstance(sp["output"], dict):
                    _fields(sp["output"], acc)
            for s in n["scope"]:
                acc["scope_kinds"].add(s["kind"])
        for e in p["edges"]:
            acc["edge_members"] |= set(e)
            acc["target_ports"].add(e["to"]["port"])
            for i in e["bind"].values():
                _walk_instrs(i, acc)
            if "disposition" in e:
                acc["dispositions"].add(e["disposition"]["action"])
        for s in p["scopes"]:
            acc["scope_kinds"].add("decl:" + s["kind"])
    return acc


def _surface_fields(obj: surface.Obj) -> set[str]:
    return set(obj.fields)


def test_every_opcode_has_a_golden() -> None:
    assert _coverage()["ops"] == set(surface.NODE_OPS)


def test_every_config_field_has_a_golden() -> None:
    cov = _coverage()["config"]
    missing = sorted((op, k) for op, cfg in surface.CONFIGS.items() for k in cfg.fields
                     if (op, k) not in cov)
    assert not missing, missing
    for extra in (("send_message", "relatedScopes:list"), ("send_message", "relatedScopes:value"),
                  ("send_message", "workScope:fixed"), ("send_message", "workScope:agent")):
        assert extra in cov, extra


def test_every_instruction_op_and_root_has_a_golden() -> None:
    cov = _coverage()
    assert cov["instr_ops"] == set(surface.INSTR_OPS)
    assert cov["roots"] == set(surface.REF_ROOTS)


def test_every_field_type_and_member_has_a_golden() -> None:
    cov = _coverage()
    assert cov["field_types"] == set(surface.FIELD_TYPES)
    assert cov["field_members"] == set(surface.FIELD_SCHEMA.fields)
    assert {"node_members", "edge_members"} and cov["edge_members"] == set(surface.EDGE.fields)
    node_fields = set()
    for obj, _ in surface.NODE.variants.values():
        node_fields |= set(obj.fields)
    assert cov["node_members"] == node_fields | {"op"}


def test_every_mode_port_route_scope_and_version_has_a_golden() -> None:
    cov = _coverage()
    modes = cov["modes"]
    for m in (("send_message", "completion", "sent"), ("send_message", "completion", "callback"),
              ("switch", "mode", "first_match"), ("switch", "mode", "all_match"),
              ("join", "owner", "forkId", "all"), ("join", "owner", "forkId", "any"),
              ("join", "owner", "fanOutId", "all"), ("loop", "mode", "counted"),
              ("end", "status", "succeeded"), ("end", "status", "failed")):
        assert m in modes, m
    ports = {(op, name) for op, name, _ in cov["ports"]}
    for op, names in (("send_message", ("completed", "failed")), ("set_variable", ("completed",)),
                      ("wait", ("completed", "timed_out", "failed")),
                      ("request_approval", ("approved", "rejected", "failed")),
                      ("join", ("completed", "failed")), ("fan_out", ("item",)), ("loop", ("body", "done"))):
        for name in names:
            assert (op, name) in ports, (op, name)
    assert ("send_message", "failed", "edge") in cov["ports"] or ("request_approval", "failed", "edge") in cov["ports"]
    assert ("wait", "timed_out", "edge") in cov["ports"] and ("wait", "timed_out", "implicit") in cov["ports"]
    assert cov["target_ports"] == {"in", "continue", "break"}
    actions = {a for a, _ in cov["implicit"]}
    assert actions == set(surface.IMPLICIT_ROUTE.variants)
    assert {s for _, s in cov["implicit"]} == {"failed", "timed_out"}
    assert cov["dispositions"] == set(surface.DISPOSITION.variants)
    kinds = set(surface.SCOPE_REF.variants)
    assert kinds <= cov["scope_kinds"] and {"decl:" + k for k in kinds} <= cov["scope_kinds"]
    assert cov["versions"] == {f"loop.plan.artifact/v{v}" for v in range(1, 6)}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fast_version_selection_agrees_with_the_surface(case: Path) -> None:
    from loopc.ir.decoder import iter_instr_roots
    from loopc.ir.instr import scan_instrs
    from loopc.ir.versions import structural_version

    exp = _expected(case)
    fast = max(structural_version(exp), scan_instrs(iter_instr_roots(exp))[2])
    assert fast == surface.required_version(exp) == int(exp["artifactVersion"].rsplit("v", 1)[1])


@lru_cache(maxsize=None)
def _source_schema() -> jsonschema.Draft7Validator:
    path = ROOT / "docs" / "schema" / "loop.plan.source.v1.schema.json"
    return jsonschema.Draft7Validator(json.loads(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_golden_source_validates_against_the_source_schema(case: Path) -> None:
    from ruamel.yaml import YAML

    data = YAML(typ="safe", pure=True).load((case / "source.yaml").read_text(encoding="utf-8"))
    errors = list(_source_schema().iter_errors(data))
    assert not errors, f"{list(errors[0].path)}: {errors[0].message}"


def test_source_schema_rejects_structural_mistakes() -> None:
    v = _source_schema()
    base = {"apiVersion": "loop.plan/v1", "kind": "PlanVersion", "input": {}, "output": {}, "entry": "done",
            "nodes": [{"id": "done", "type": "end", "end": {"status": "succeeded"}}], "edges": []}
    assert v.is_valid(base)
    for bad in (
        dict(base, trigger={}),
        dict(base, nodes=[{"id": "done", "type": "end", "sendMessage": {}}]),
        dict(base, nodes=[{"id": "done", "type": "end", "end": {"status": "succeeded"}, "retry": {}}]),
        dict(base, input={"a": {"type": "enum"}}),
        dict(base, input={"Bad": {"type": "string"}}),
    ):
        assert not v.is_valid(bad), bad
