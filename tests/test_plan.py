"""Execution plans: the evidence list of docs/plan.md — determinism across
processes and hash seeds, formatting independence, digest sensitivity,
profile rejection, effect pairs, golden plans, an independent recomputation
of the identity, and a back end that never raises on verified artifacts."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopc
import plan_reference_identity as ref
from loopc.cli.main import cli
from loopc.ir.canonical import canonical_bytes
from loopc.ir.digest import semantic_digest
from loopc.plan.api import plan_artifact, plan_source
from loopc.plan.catalog import builtin_catalog, load_catalog
from loopc.plan.derive import Dependency, Step, derive, validate_effect_pairs

from conftest import EXAMPLES, ROOT
import golden_plans as plan_golden  # tools/, on sys.path by conftest

GOLDEN_SOURCES = sorted(ROOT.glob("golden/*/*/source.yaml"))
IDS = [f"{p.parent.parent.name}/{p.parent.name}" for p in GOLDEN_SOURCES]


def _plan_json(src: bytes | str, **kw: Any) -> dict[str, Any]:
    res = plan_source(src, **kw)
    assert res.ok, [(d.code, d.message) for d in res.diagnostics]
    return res.to_json()


# -- determinism ------------------------------------------------------------


@pytest.mark.slow
def test_byte_identical_plans_across_processes_and_hash_seeds(tmp_path: Path) -> None:
    script = (
        "import json, sys\nfrom loopc.plan.api import plan_file\n"
        "for f in sys.argv[1:]:\n"
        "    sys.stdout.write(json.dumps(plan_file(f).to_json(), sort_keys=True, indent=2))\n"
    )
    files = [str(p) for p in EXAMPLES]
    outs = [
        subprocess.run(
            [sys.executable, "-c", script, *files],
            env=dict(os.environ, PYTHONHASHSEED=seed),
            capture_output=True,
            check=True,
        ).stdout
        for seed in ("0", "4242")
    ]
    assert outs[0] == outs[1] and outs[0].count(b'"planIdentity": "sha256:') == len(files)
    # and the CLI in a third process, under a random seed, prints the same bytes
    cli_out = subprocess.run(
        [sys.executable, "-m", "loopc", "plan", "--format", "json", files[0]],
        env=dict(os.environ, PYTHONHASHSEED="random"),
        capture_output=True,
        check=True,
    ).stdout
    assert json.loads(cli_out) == json.loads(outs[0][: outs[0].index(b"}{") + 1])


# -- formatting -------------------------------------------------------------


def _reformat(text: str) -> str:
    """The same plan written differently: flow style, nodes and edges in
    reverse order, keys reversed, new labels, descriptions and comments."""
    data = loopc.check_source(text).document.root.to_data()
    body = {k: v for k, v in data.items() if k not in ("apiVersion", "kind")}
    body["nodes"] = [
        dict(reversed(list(dict(n, label=f"relabelled {i}", description="changed").items())))
        for i, n in enumerate(reversed(body["nodes"]))
    ]
    body["edges"] = [dict(e, label="an edge") for e in reversed(body["edges"])]
    lines = ["apiVersion: loop.plan/v1", "kind: PlanVersion", "# reformatted"]
    for k in reversed(list(body)):
        lines.append(f"{k}: {json.dumps(body[k], ensure_ascii=False)}   # {k}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_reformatting_changes_neither_identity_nor_step_keys(path: Path) -> None:
    a = _plan_json(path.read_bytes())
    b = _plan_json(_reformat(path.read_text("utf-8")))
    assert a["planIdentity"] == b["planIdentity"]
    assert [s["key"] for s in a["steps"]] == [s["key"] for s in b["steps"]]
    assert a["steps"] == b["steps"]


# -- digest sensitivity -----------------------------------------------------


def _catalog_with(change: Any) -> Any:
    data = builtin_catalog().to_json()
    change(data)
    res = load_catalog(json.dumps(data))
    assert res.ok, res.diagnostics
    return res.catalog


def _binding(data: dict[str, Any], action: str) -> dict[str, Any]:
    return next(b for b in data["bindings"] if b["action"] == action)


def _descriptor(data: dict[str, Any], action: str) -> dict[str, Any]:
    return next(d for d in data["descriptors"] if d["action"] == action)


@pytest.mark.parametrize("what", ["implementation_version", "handler", "descriptor"])
def test_changed_binding_or_descriptor_changes_fingerprint_catalog_and_identity(what: str) -> None:
    src = (ROOT / "examples" / "callback_review.yaml").read_bytes()
    action = "send_message.callback"

    def change(data: dict[str, Any]) -> None:
        if what == "implementation_version":
            _binding(data, action)["implementationVersion"] = "2"
        elif what == "handler":
            _binding(data, action)["handler"] = "acme.runtime/deliver"
        else:
            _descriptor(data, action)["capabilities"]["SecurityPolicy"]["reauthorization"] = "on_resume"

    before = _plan_json(src)
    after = _plan_json(src, catalog=_catalog_with(change))
    b, a = before["catalog"]["entries"][action], after["catalog"]["entries"][action]
    assert a["bindingFingerprint"] != b["bindingFingerprint"]
    assert a["entryDigest"] != b["entryDigest"]
    assert after["catalog"]["digest"] != before["catalog"]["digest"]
    assert after["planIdentity"] != before["planIdentity"]
    assert after["artifactDigest"] == before["artifactDigest"]
    # entries the plan does not use are untouched
    assert after["catalog"]["entries"]["end"] == before["catalog"]["entries"]["end"]


def test_unreferenced_entry_change_changes_catalog_digest_and_identity_only() -> None:
    src = (ROOT / "examples" / "callback_review.yaml").read_bytes()
    before = _plan_json(src)
    after = _plan_json(
        src, catalog=_catalog_with(lambda d: _binding(d, "wait.timer").update(implementationVersion="9"))
    )
    assert "wait.timer" not in before["catalog"]["entries"]
    assert after["catalog"]["entries"] == before["catalog"]["entries"]
    assert after["catalog"]["digest"] != before["catalog"]["digest"]
    assert after["planIdentity"] != before["planIdentity"]
    assert after["steps"] == before["steps"]


def test_catalog_round_trips_through_the_file_format() -> None:
    cat = builtin_catalog()
    for text in (cat.to_text(), json.dumps(cat.to_json())):
        res = load_catalog(text)
        assert res.ok and not res.diagnostics
        assert res.catalog.digest == cat.digest
    out = CliRunner().invoke(cli, ["catalog"]).output
    assert out == cat.to_text()


def test_catalog_schema_is_current_and_accepts_the_builtin_catalog() -> None:
    import jsonschema

    from loopc.plan.schema import catalog_schema

    schema = json.loads((ROOT / "docs" / "schema" / "loop.plan.catalog.v1.schema.json").read_text("utf-8"))
    assert schema == catalog_schema(), "run: python tools/regen.py"
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(builtin_catalog().to_json(), schema)


# -- profiles ---------------------------------------------------------------


def test_unsafe_bounded_atomic_is_rejected_naming_the_blocker(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        cli,
        ["plan", "--profile", "bounded_atomic", "--format", "json", str(ROOT / "examples" / "callback_review.yaml")],
    )
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    assert out["planIdentity"] is None and out["profile"] is None and out["requestedProfile"] == "bounded_atomic"
    (d,) = [d for d in out["diagnostics"] if d["code"] == "LP6101"]
    assert d["node"] == "ask_review"
    assert "ExecutionClass external_effect" in d["message"]
    first = out["profiles"]["bounded_atomic"]["blockers"][0]
    assert (first["node"], first["field"], first["value"]) == ("ask_review", "ExecutionClass", "external_effect")
    assert "LP6101" in r.stderr and "ask_review" in r.stderr


def test_transitive_blocker_names_its_scope() -> None:
    res = plan_source((ROOT / "examples" / "planner_fan_out.yaml").read_bytes(), profile="bounded_atomic")
    blockers = res.plan.profiles["bounded_atomic"].blockers
    inner = [b for b in blockers if b.node == "do_item"]
    assert inner and inner[0].scope == ("dispatch",)


def test_embedded_is_never_eligible_and_atomic_is_selected_when_provable() -> None:
    src = (ROOT / "golden" / "set_variable" / "assign" / "source.yaml").read_bytes()
    j = _plan_json(src)
    assert j["profile"] == "bounded_atomic"
    emb = j["profiles"]["embedded_before_save"]
    assert not emb["eligible"] and emb["blockers"][0]["field"] == "trigger"
    assert all(not s["checkpointAfter"] for s in j["steps"])
    d = _plan_json(src, profile="durable_orchestration")
    assert d["profile"] == "durable_orchestration" and d["planIdentity"] != j["planIdentity"]
    assert any(s["checkpointAfter"] for s in d["steps"])


def test_cli_exit_codes(tmp_path: Path) -> None:
    run = CliRunner().invoke
    ok = str(ROOT / "examples" / "wait_timeout.yaml")
    assert run(cli, ["plan", ok]).exit_code == 0
    assert run(cli, ["plan", str(tmp_path / "missing.yaml")]).exit_code == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: loop.plan/v1\nkind: PlanVersion\n")
    r = run(cli, ["plan", "--format", "json", str(bad)])
    assert r.exit_code == 1 and json.loads(r.stdout)["artifactDigest"] is None
    cat = tmp_path / "cat.yml"
    cat.write_text("catalogVersion: loop.plan.catalog/v1\n")
    r = run(cli, ["plan", "--catalog", str(cat), ok])
    assert r.exit_code == 1 and "cat.yml:1:1" in r.stderr
    assert run(cli, ["plan", "--catalog", str(tmp_path / "nope.json"), ok]).exit_code == 2
    good = tmp_path / "good.json"
    good.write_text(builtin_catalog().to_text())
    assert run(cli, ["plan", "--catalog", str(good), ok]).exit_code == 0


def test_json_shape_contract() -> None:
    j = _plan_json((ROOT / "examples" / "callback_review.yaml").read_bytes())
    for k in (
        "artifactDigest",
        "planIdentity",
        "profile",
        "requestedProfile",
        "profiles",
        "catalog",
        "steps",
        "bounds",
        "diagnostics",
    ):
        assert k in j
    assert set(j["profiles"]) == {"embedded_before_save", "bounded_atomic", "durable_orchestration"}
    for k in ("activations", "attempts", "effects", "stateWrites", "fanOut", "lockClasses"):
        assert k in j["bounds"]
    for s in j["steps"]:
        assert {"key", "kind", "nodes", "completion", "resources", "checkpointAfter"} <= set(s)


# -- bounds and resources ----------------------------------------------------


def test_bounds_are_maxima_over_runs() -> None:
    def bounds(name: str) -> dict[str, Any]:
        return _plan_json((ROOT / "golden" / name / "source.yaml").read_bytes())["bounds"]

    assert bounds("switch/first_match")["activations"] == 3  # switch + the largest case + nothing else
    loop = bounds("loop/counted")
    assert loop["proof"] and loop["proof"][0]["kind"] == "loop"
    fan = bounds("fan_out/collect")
    assert fan["fanOut"] == 256 and fan["activations"] > 256
    fork = bounds("fork/join_all")
    assert fork["effects"] == 2  # both branches count


def test_resource_keys_sorted_by_the_canonical_comparator() -> None:
    from loopc.plan.derive import ResourceKey, resource_sort_key, sort_resources
    from loopc.plan.descriptor import ResourceClass

    keys = [ResourceKey(ResourceClass.RUN_STATE, "run", r, p) for r in ("b", "a", "B", "é") for p in (None, "x")]
    ordered = sort_resources(reversed(keys))
    assert [k.record for k in ordered][:2] == ["B", "B"] and ordered[0].partition is None
    assert list(ordered) == sorted(set(keys), key=resource_sort_key)
    j = _plan_json((ROOT / "examples" / "set_variable_timer.yaml").read_bytes())
    mark = next(s for s in j["steps"] if s["key"] == "mark_reminded")
    assert [r["record"] for r in mark["resources"]] == ["phase", "reminded_about"]
    assert j["bounds"]["lockClasses"] == ["run_state"]


# -- effect pairs -----------------------------------------------------------


@pytest.mark.parametrize("path", GOLDEN_SOURCES, ids=IDS)
def test_every_effect_is_one_valid_pair(path: Path) -> None:
    res = plan_source(path.read_bytes())
    assert res.ok
    art = res.compile.artifact
    effects = [n.id for n in art.nodes if n.op in ("send_message", "request_approval")]
    steps = {s.key: s for s in res.plan.steps}
    for nid in effects:
        sub, comp = steps[f"{nid}/submit"], steps[f"{nid}/completion"]
        assert sub.kind == "EffectSubmit" and sub.completion == comp.key and sub.next == [comp.key]
        assert comp.kind == "EffectCompletion"
        assert [d.submit for d in comp.dependencies] == [sub.key]
    assert sum(s.kind == "EffectSubmit" for s in steps.values()) == len(effects)
    assert validate_effect_pairs(list(res.plan.steps), res.plan.back_edges) == []


def test_pair_validator_rejects() -> None:
    dep = (Dependency("effect_outcome", "a/completion", submit="a/submit"),)
    good = [
        Step("a/submit", "EffectSubmit", ["a"], ["x"], completion="a/completion", next=["a/completion"]),
        Step("a/completion", "EffectCompletion", ["a"], ["x"], dependencies=dep, next=["b"]),
        Step("b", "Terminal", ["b"], ["end"]),
    ]
    assert validate_effect_pairs(good) == []
    back = copy.deepcopy(good)
    back[1].next = ["a/submit"]
    assert any("back to" in e for e in validate_effect_pairs(back))
    self_wait = copy.deepcopy(good)
    self_wait[0].next.append("a/submit")
    assert any("itself" in e for e in validate_effect_pairs(self_wait))
    orphan = copy.deepcopy(good)[1:]
    assert any("no matching submit" in e for e in validate_effect_pairs(orphan))
    twice = copy.deepcopy(good) + [
        Step(
            "c", "EffectCompletion", ["a"], ["x"], dependencies=(Dependency("effect_outcome", "c", submit="a/submit"),)
        )
    ]
    assert any("exactly one completion" in e for e in validate_effect_pairs(twice))


# -- golden plans and the independent recomputation ---------------------------


def test_golden_plans_are_current() -> None:
    writes, errors = plan_golden.changes()
    assert not errors, errors
    assert not writes, f"stale: {sorted(str(p) for p in writes)} — run: python tools/regen.py"
    assert len(list(ROOT.glob("golden/*/*/plan.json"))) == len(GOLDEN_SOURCES)


def test_reference_recomputes_the_catalog_digests() -> None:
    cat = builtin_catalog()
    r = ref.catalog_digests(cat.to_json())
    assert r["catalog"] == cat.digest and r["binding"] == cat.scope.digest
    for a, e in cat.entries.items():
        assert r["entries"][a] == {
            "descriptorDigest": e.descriptor_digest,
            "bindingFingerprint": e.binding_fingerprint,
            "entryDigest": e.entry_digest,
        }


@pytest.mark.parametrize("path", GOLDEN_SOURCES, ids=IDS)
def test_reference_recomputes_every_golden_plan_identity(path: Path) -> None:
    plan = json.loads((path.parent / "plan.json").read_text("utf-8"))
    assert ref.payload_digest(plan) == plan["payloadDigest"]
    assert ref.plan_identity(plan) == plan["planIdentity"]
    cat = ref.catalog_digests(builtin_catalog().to_json())
    assert plan["catalog"]["digest"] == cat["catalog"]
    for a, e in plan["catalog"]["entries"].items():
        assert e == {
            "entryDigest": cat["entries"][a]["entryDigest"],
            "bindingFingerprint": cat["entries"][a]["bindingFingerprint"],
        }


def test_reference_identity_agrees_with_a_custom_catalog() -> None:
    data = builtin_catalog().to_json()
    data["binding"]["org"] = "acme"
    _binding(data, "send_message.callback")["implementationVersion"] = "7.1"
    res = load_catalog(json.dumps(data))
    plan = _plan_json((ROOT / "examples" / "callback_review.yaml").read_bytes(), catalog=res.catalog)
    assert ref.plan_identity(plan) == plan["planIdentity"]
    assert ref.catalog_digests(data)["catalog"] == plan["catalog"]["digest"]


# -- robustness -------------------------------------------------------------


def _artifact(name: str) -> dict[str, Any]:
    return json.loads((ROOT / "golden" / name / "expected.json").read_text("utf-8"))


def _seal(art: dict[str, Any]) -> bytes:
    art["digest"] = semantic_digest(art)
    return canonical_bytes(art)


def _retarget(art: dict[str, Any], edge_id: str, node_id: str) -> None:
    nodes = {n["id"]: n for n in art["plan"]["nodes"]}
    e = next(e for e in art["plan"]["edges"] if e["id"] == edge_id)
    old = nodes[e["to"]["node"]]
    for t in old["ports"]["target"]:
        if edge_id in t["edges"]:
            t["edges"].remove(edge_id)
    e["to"] = {"node": node_id, "port": "in"}
    for t in nodes[node_id]["ports"]["target"]:
        if t["name"] == "in":
            t["edges"] = sorted(t["edges"] + [edge_id])


def test_cyclic_artifact_lp6104() -> None:
    art = _artifact("examples/set_variable_timer")
    edge = next(e for e in art["plan"]["edges"] if e["from"]["node"] == "mark_followed_up")
    _retarget(art, edge["id"], "remind")
    data = _seal(art)
    # the verifier rejects a cycle outside any loop, so plan_artifact refuses it (LP6105) ...
    v = loopc.ir.verify(data)
    assert not v.ok and any(x.code == "graph" and "cycle" in x.message for x in v.violations)
    assert [d.code for d in plan_artifact(data).diagnostics] == ["LP6105"]
    # ... and derivation's own defence (LP6104) still holds for a decoded model
    problems = derive(loopc.ir.decode(data), builtin_catalog()).problems
    assert [p.code for p in problems] == ["LP6104"]


def test_unverified_artifact_lp6105() -> None:
    art = _artifact("examples/callback_review")
    art["digest"] = "sha256:" + "0" * 64
    res = plan_artifact(canonical_bytes(art))
    assert [d.code for d in res.diagnostics] == ["LP6105"] and res.plan is None
    assert [d.code for d in plan_artifact(b"\xff{").diagnostics] == ["LP6105"]


def test_artifact_and_source_planning_agree() -> None:
    src = (ROOT / "examples" / "fork_any_join.yaml").read_bytes()
    a = plan_source(src).to_json()
    b = plan_artifact(loopc.compile_source(src).bytes).to_json()
    assert a["planIdentity"] == b["planIdentity"] and a["steps"] == b["steps"]


def test_api_never_raises_on_garbage() -> None:
    for junk in (b"", b"\xff\xfe", "apiVersion: loop.plan/v1\nkind: PlanVersion\nnodes: [", "[1, 2]"):
        res = plan_source(junk)
        assert not res.ok and res.diagnostics
        json.dumps(res.to_json())
    with pytest.raises(ValueError):
        plan_source("x", profile="fastest")


ARTIFACTS = ["examples/" + p.stem for p in EXAMPLES] + [
    "loop/break",
    "fan_out/collect",
    "failure/nested_scopes",
    "switch/all_match_join",
    "wait/condition_timeout",
]


@st.composite
def _mutated(draw: Any) -> bytes:
    art = _artifact(draw(st.sampled_from(ARTIFACTS)))
    nodes = art["plan"]["nodes"]
    edges = art["plan"]["edges"]
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(
            st.sampled_from(["iterations", "retry", "concurrency", "retarget", "mode", "status", "completion", "entry"])
        )
        n = draw(st.sampled_from(nodes))
        if kind == "iterations" and n["op"] == "loop":
            n["config"]["iterations"] = draw(st.integers(1, 10000))
        elif kind == "retry" and "retry" in n:
            n["retry"]["maxAttempts"] = draw(st.integers(1, 100))
        elif kind == "concurrency" and n["op"] == "fan_out":
            n["config"]["maxConcurrency"] = draw(st.integers(1, 64))
        elif kind == "retarget" and edges:
            e = draw(st.sampled_from(edges))
            targets = [m["id"] for m in nodes if any(t["name"] == "in" for t in m["ports"]["target"])]
            if e["to"]["port"] == "in":
                _retarget(art, e["id"], draw(st.sampled_from(targets)))
        elif kind == "mode" and n["op"] == "switch":
            n["config"]["mode"] = draw(st.sampled_from(["first_match", "all_match"]))
        elif kind == "status" and n["op"] == "end":
            n["config"]["status"] = draw(st.sampled_from(["succeeded", "failed"]))
        elif kind == "completion" and n["op"] == "send_message":
            n["config"]["completion"] = draw(st.sampled_from(["sent", "callback"]))
        elif kind == "entry":
            art["plan"]["entry"]["node"] = n["id"]
    return _seal(art)


@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(_mutated(), st.sampled_from([None, "bounded_atomic", "durable_orchestration"]))
def test_back_end_never_raises_on_verified_mutants(data: bytes, profile: str | None) -> None:
    if not loopc.ir.verify(data).ok:
        return
    res = plan_artifact(data, profile=profile)
    assert not any(d.code == "LP5999" for d in res.diagnostics), res.diagnostics
    json.dumps(res.to_json())
    if res.plan is not None:
        assert all(s.key for s in res.plan.steps)


# -- inventory --------------------------------------------------------------


def test_inventory_json_and_totals(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["inventory", "--format", "json", str(ROOT / "examples")])
    assert r.exit_code == 0
    inv = json.loads(r.stdout)
    assert len(inv["plans"]) == len(EXAMPLES)
    assert inv["totals"]["durable_orchestration"] == len(EXAMPLES)
    first = inv["plans"][0]
    assert first["blockers"] and first["bounds"]["bounded"] and first["steps"] > 0
    (tmp_path / "broken.yaml").write_text("apiVersion: loop.plan/v1\nkind: PlanVersion\n")
    (tmp_path / "ok.yaml").write_bytes((ROOT / "golden" / "set_variable" / "assign" / "source.yaml").read_bytes())
    r = CliRunner().invoke(cli, ["inventory", str(tmp_path)])
    assert r.exit_code == 1  # a plan rejected with an error (docs/plan.md#inventory)
    assert "rejected" in r.stdout and "bounded_atomic 1" in r.stdout and "rejected 1" in r.stdout
    assert "\x1b[" not in r.output  # no progress bar off a TTY
    assert CliRunner().invoke(cli, ["inventory", str(tmp_path / "none")]).exit_code == 2


def test_every_registered_node_kind_has_a_builtin_descriptor() -> None:
    from loopc.kinds import KINDS
    from loopc.plan.builtin import ACTION_TYPES, CONTROL_OPS, MODES, action_type, builtin_descriptors

    descs = builtin_descriptors()
    assert set(descs) == set(ACTION_TYPES)
    assert {a.split(".")[0] for a in ACTION_TYPES} == set(KINDS)
    assert set(CONTROL_OPS) <= set(KINDS) and set(MODES) <= set(KINDS)
    assert {action_type(k, {}) for k in KINDS} <= set(ACTION_TYPES)
