"""IR lowering, version selection, strict decoder, CLI, budget (issue 4)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopc.ir import decode, verify
from loopc.pipeline import compile_file, compile_source
from loopc.ir.budget import Limits
from loopc.ir.canonical import canonical_bytes
from loopc.ir.decoder import DecodeError
from loopc.ir.digest import semantic_digest
from loopc.ir.model import Disposition, Ref, ScopeDecl, instr_to_json, type_desc_of

from conftest import MINIMAL, ROOT
from conftest import HEADER as H


def send_plan(config: str, *, inputs: str = "") -> str:
    """A two-node plan: one send_message whose ``sendMessage`` lines are
    ``config`` and whose input (and the Plan input) is ``inputs``, then a
    succeeded End."""
    lines = [x for x in inputs.splitlines() if x]
    plan_in = "input:\n" + "".join(f"  {x}\n" for x in lines) if lines else "input: {}\n"
    node_in = "    input:\n" + "".join(f"      {x}\n" for x in lines) if lines else ""
    cfg = "".join(f"      {x}\n" for x in config.splitlines() if x)
    return (H + plan_in + "output: {}\nentry: msg\nnodes:\n"
            "  - id: msg\n    type: send_message\n" + node_in + "    sendMessage:\n" + cfg +
            "  - id: done\n    type: end\n    end: {status: succeeded}\n"
            "edges:\n  - id: e_done\n    from: {node: msg, port: completed}\n    to: {node: done}\n")


def ok(src: str):
    res = compile_source(src)
    assert res.ok, [(d.code, d.span.line, d.message) for d in res.diagnostics]
    return res


# ---------------------------------------------------------------------------
# API and lowering
# ---------------------------------------------------------------------------

def test_compile_result_shape() -> None:
    res = ok(MINIMAL)
    assert res.artifact.version == 1
    assert res.bytes == canonical_bytes(res.artifact)
    assert res.digest == res.artifact.digest == semantic_digest(res.artifact.data)
    assert res.digest.startswith("sha256:") and len(res.digest) == 71
    assert res.check is not None and res.check.ok
    assert json.loads(res.bytes)["artifactVersion"] == "loop.plan.artifact/v1"


def test_compile_errors_give_no_artifact() -> None:
    res = compile_source(MINIMAL.replace("entry: done", "entry: nowhere"))
    assert not res.ok and res.artifact is None and res.digest is None and res.bytes is None
    assert res.errors


def test_compile_file(tmp_path: Path) -> None:
    p = tmp_path / "p.yaml"
    p.write_text(MINIMAL)
    assert compile_file(str(p)).digest == compile_source(MINIMAL).digest
    with pytest.raises(OSError):
        compile_file(str(tmp_path / "missing.yaml"))


def test_defaults_are_frozen() -> None:
    src = (ROOT / "golden/fan_out/collect/source.yaml").read_text()
    art = ok(src.replace("      maxConcurrency: 2\n", "")).artifact
    fan = art.node("dispatch")
    assert fan.config.max_concurrency == 4 and fan.config.failure_mode == "collect"
    plan = art.node("plan")
    assert plan.retry is not None and (plan.retry.max_attempts, plan.retry.backoff) == (1, "PT1S")
    assert art.node("collected").retry is None


def test_pass_through_is_expanded_explicitly() -> None:
    art = ok((ROOT / "golden/mapping/pass_through/source.yaml").read_text()).artifact
    big = art.edge("e_big")
    assert big.bind == {"a": Ref(type_desc_of("string"), "output", ("a",)),
                        "b": Ref(type_desc_of("number"), "output", ("b",))}
    assert {k: instr_to_json(v) for k, v in big.bind.items()} == {
        "a": ["ref", "string", "output", "a"], "b": ["ref", "number", "output", "b"]}
    assert set(art.plan.entry.bind) == {"a", "b"}


def test_node_and_edge_order_is_by_id_not_source() -> None:
    src = (ROOT / "golden/fork/join_all/source.yaml").read_text()
    art = ok(src).artifact
    ids = [n.id for n in art.nodes]
    assert ids == sorted(ids)
    assert [e.id for e in art.edges] == sorted(e.id for e in art.edges)


def test_authored_order_kept_for_cases_and_branches() -> None:
    src = (ROOT / "golden/switch/all_match_join/source.yaml").read_text()
    art = ok(src).artifact
    route = art.node("route")
    assert [c.port for c in route.config.cases] == ["legal", "security"]
    assert [p.name for p in route.source_ports] == ["legal", "security", "general"]
    assert art.plan.scopes == (ScopeDecl("all_match", "route", ("legal", "security", "general"), "merge"),)


def test_implicit_routes_and_dispositions() -> None:
    art = ok((ROOT / "golden/failure/fail_item/source.yaml").read_text()).artifact
    assert art.node("settle").port("failed").implicit == Disposition(
        "fail_item", owner="each", join="gather", status="failed")
    assert art.node("gather").port("failed").implicit == Disposition("never", status="failed")
    assert art.edge("e_skip").disposition == Disposition("fail_item", owner="each", join="gather")
    assert art.data["plan"]["edges"][[e.id for e in art.edges].index("e_skip")]["disposition"] == {
        "action": "fail_item", "owner": "each", "join": "gather"}
    art = ok((ROOT / "golden/wait/timeout_implicit/source.yaml").read_text()).artifact
    assert art.node("hold").port("timed_out").implicit.status == "timed_out"


def test_state_effects() -> None:
    art = ok((ROOT / "golden/wait/condition_timeout/source.yaml").read_text()).artifact
    assert art.node("hold").config.condition.op == "eq"
    assert art.node("mark").writes == ("ready",)
    assert art.node("hold").watches == ("ready",)
    hold = art.data["plan"]["nodes"][[n.id for n in art.nodes].index("hold")]
    assert hold["effects"]["watches"] == ["ready"]


def test_typed_views() -> None:
    art = ok((ROOT / "golden/send_message/callback_output/source.yaml").read_text()).artifact
    ask = art.node("ask")
    assert ask.op == "send_message" and ask.retry.max_attempts == 3
    assert ask.port("completed").output["confident"].default is False
    assert not ask.input["question"].has_default
    with pytest.raises(KeyError):
        art.node("nope")


# ---------------------------------------------------------------------------
# Version selection
# ---------------------------------------------------------------------------

V1 = send_plan('target: "#ops"\ntext: hello\ncompletion: sent')


@pytest.mark.parametrize("src,version", [
    (V1, 1),
    (send_plan('target: "#ops"\ntext: hello\ncompletion: sent\nstartThread: true'), 2),
    (send_plan("scope: {ref: input.room}\ntext: hello\ncompletion: sent",
               inputs="room: {type: scope, required: true}"), 2),
    (send_plan('target: "#ops"\ntext: hello\ncompletion: callback\nworkScope: null'), 3),
    (send_plan('target: "#ops"\ntext: hello\ncompletion: callback\nresponder: {ref: input.who}\n'
               "callbackOutput: {x: {type: string, required: true}}",
               inputs="who: {type: agent, required: true}"), 4),
], ids=["v1", "v2-startThread", "v2-scope", "v3-workScope", "v4-responder"])
def test_version_selection(src: str, version: int) -> None:
    assert ok(src).artifact.version == version


def test_v1_plan_keeps_its_bytes_and_digest() -> None:
    a = ok(V1)
    b = ok(V1.replace("completion: sent", "completion: sent\n      startThread: false"))
    assert a.bytes == b.bytes and a.artifact.version == 1
    golden = json.loads((ROOT / "golden/end/succeeded_minimal/expected.json").read_text())
    assert ok(MINIMAL).bytes == canonical_bytes(golden)


def test_digest_is_version_independent() -> None:
    art = json.loads(ok(V1).bytes)
    bumped = dict(art, artifactVersion="loop.plan.artifact/v5", compilerVersion="loop.plan.compiler/v5")
    assert semantic_digest(bumped) == art["digest"]


# ---------------------------------------------------------------------------
# Strict decoder
# ---------------------------------------------------------------------------

def _art() -> dict:
    return json.loads(ok((ROOT / "golden/fork/join_all/source.yaml").read_text()).bytes)


def _raises(data: bytes | str | dict, pointer: str | None = None, contains: str = "") -> DecodeError:
    if isinstance(data, dict):
        data = json.dumps(data)
    with pytest.raises(DecodeError) as ei:
        decode(data)
    if pointer is not None:
        assert ei.value.pointer == pointer, (ei.value.pointer, ei.value.message)
    assert contains in ei.value.message, ei.value.message
    return ei.value


def test_decode_round_trip() -> None:
    raw = ok((ROOT / "golden/fork/join_all/source.yaml").read_text()).bytes
    assert canonical_bytes(decode(raw, canonical=True)) == raw
    pretty = json.dumps(json.loads(raw), indent=2)
    assert canonical_bytes(decode(pretty)) == raw
    with pytest.raises(DecodeError, match="canonical"):
        decode(pretty, canonical=True)


def test_decode_rejects_bad_json_text() -> None:
    raw = canonical_bytes(_art())
    _raises(b"\xef\xbb\xbf" + raw, "", "byte-order mark")
    _raises(raw[:-1] + b"\xff}", "", "UTF-8")
    _raises(raw + b" {}", "", "not valid JSON")
    _raises('{"a": 1, "a": 2}', "", "duplicate")
    _raises('{"a": NaN}', "", "not a JSON number")
    _raises('{"a": 1e400}', "", "out of range")
    _raises("[]", "", "JSON object")
    _raises("[" * 100000 + "]" * 100000, "", "")


def test_decode_rejects_lone_surrogates_and_keeps_pairs() -> None:
    """An unpaired surrogate escape has no UTF-8 / RFC 8785 form: the decoder
    rejects it with a pointer (verify never crashes); a pair is one character."""
    a = _art()
    a["plan"]["input"]["x"] = {"type": "string", "required": False, "default": "\ud800"}
    text = json.dumps(a)  # ensure_ascii: the lone surrogate is written as the escape \ud800
    assert "\\ud800" in text
    _raises(text, "/plan/input/x/default", "unpaired surrogate U+D800")
    _raises(text.encode("ascii"), "/plan/input/x/default", "unpaired surrogate")
    res = verify(text.encode("ascii"))
    assert not res.ok and "unpaired surrogate" in res.message
    b = _art()
    b["plan"]["input"]["x"] = {"type": "string", "required": False, "default": "\udc00"}
    b["plan"]["input"]["\udbff"] = {"type": "string", "required": False}
    _raises(json.dumps(b), contains="unpaired surrogate")
    c = _art()
    c["plan"]["input"]["x"] = {"type": "string", "required": False, "default": "\U0001F600 \\ud800"}
    art = decode(json.dumps(c))  # a pair and an escaped backslash are fine
    assert art.plan.input["x"].default == "\U0001F600 \\ud800"


def test_decode_rejects_envelope_problems() -> None:
    a = _art()
    _raises(dict(a, artifactVersion="loop.plan.artifact/v9"), "/artifactVersion", "unsupported")
    _raises(dict(a, compilerVersion="loop.plan.compiler/v2"), "/compilerVersion")
    _raises(dict(a, extra=1), "/extra", "unknown field")
    _raises(dict(a, digest="sha256:XYZ"), "/digest")
    _raises(dict(a, artifactVersion="loop.plan.artifact/v2", compilerVersion="loop.plan.compiler/v2"),
            "/artifactVersion", "uses no feature newer than v1")


def test_decode_rejects_newer_fields_under_older_envelope() -> None:
    a = json.loads(ok((ROOT / "golden/send_message/responder_related_array/source.yaml").read_text()).bytes)
    assert a["artifactVersion"].endswith("v4")
    a3 = dict(a, artifactVersion="loop.plan.artifact/v3", compilerVersion="loop.plan.compiler/v3")
    e = _raises(a3, contains="requires loop.plan.artifact/v4")
    assert e.pointer.startswith("/plan/")


def test_decode_rejects_structural_problems() -> None:
    a = _art()
    nodes = a["plan"]["nodes"]
    b = json.loads(json.dumps(a))
    b["plan"]["nodes"] = list(reversed(nodes))
    _raises(b, "/plan/nodes/1/id", "out of order")
    b = json.loads(json.dumps(a))
    b["plan"]["nodes"][1] = b["plan"]["nodes"][0]
    _raises(b, "/plan/nodes/1/id", "duplicate")
    b = json.loads(json.dumps(a))
    b["plan"]["entry"]["node"] = "ghost"
    _raises(b, "/plan/entry/node", "does not exist")
    b = json.loads(json.dumps(a))
    b["plan"]["edges"][0]["to"]["node"] = "ghost"
    _raises(b, contains="does not")
    b = json.loads(json.dumps(a))
    b["plan"]["nodes"][0]["config"]["surprise"] = 1
    _raises(b, "/plan/nodes/0/config/surprise", "unknown field")
    b = json.loads(json.dumps(a))
    b["plan"]["nodes"][0]["op"] = "teleport"
    _raises(b, "/plan/nodes/0/op")
    b = json.loads(json.dumps(a))
    del b["plan"]["nodes"][0]["effects"]
    _raises(b, "/plan/nodes/0", "missing required field 'effects'")


def test_decode_enforces_nesting_gates() -> None:
    a = _art()
    deep: object = 1
    for _ in range(300):
        deep = [deep]
    b = json.loads(json.dumps(a))
    b["plan"]["input"] = {"x": {"type": "object", "required": False, "default": deep}}
    _raises(b, "", "nests")
    expr: list = ["lit", "boolean", True]
    for _ in range(130):
        expr = ["not", "boolean", expr]
    b = json.loads(json.dumps(a))
    edge = b["plan"]["edges"][0]
    edge["bind"]["deep"] = expr
    _raises(b, contains="expression nested")


def test_verify_messages() -> None:
    raw = ok(MINIMAL).bytes
    assert verify(raw).ok
    stale = json.loads(raw)
    stale["plan"]["nodes"][0]["config"]["status"] = "failed"
    stale["plan"]["nodes"][0]["config"]["code"] = "boom"
    res = verify(json.dumps(stale))
    assert not res.ok and "digest mismatch" in res.message
    res = verify(b"not json")
    assert not res.ok and res.message.startswith("invalid artifact")


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------

def _run(*args: str):
    from loopc.cli.main import cli

    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_cli_compile_digest_verify(tmp_path: Path) -> None:
    src = tmp_path / "plan.yaml"
    src.write_text(MINIMAL)
    r = _run("compile", str(src))
    assert r.exit_code == 0 and r.stdout_bytes == ok(MINIMAL).bytes
    r = _run("compile", str(src), "--pretty")
    assert r.exit_code == 0 and r.stdout.endswith("}\n") and "\n  " in r.stdout
    out = tmp_path / "a.json"
    r = _run("compile", str(src), "-o", str(out))
    assert r.exit_code == 0 and r.stdout == "" and out.read_bytes() == ok(MINIMAL).bytes
    r = _run("digest", str(src))
    assert r.exit_code == 0 and r.stdout == ok(MINIMAL).digest + "\n"
    r = _run("verify", str(out))
    assert r.exit_code == 0
    bad = json.loads(out.read_bytes())
    bad["plan"]["state"] = {"x": {"type": "number", "required": False, "default": 1}}
    out.write_text(json.dumps(bad))
    r = _run("verify", str(out))
    assert r.exit_code == 1 and "digest mismatch" in r.stderr
    out.write_text("{")
    assert _run("verify", str(out)).exit_code == 1


def test_cli_errors_and_unreadable(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(MINIMAL.replace("entry: done", "entry: nowhere"))
    for cmd in ("compile", "digest"):
        r = _run(cmd, str(bad))
        assert r.exit_code == 1 and r.stdout == "" and "error[" in r.stderr
        assert _run(cmd, str(tmp_path / "missing.yaml")).exit_code == 2
    assert _run("verify", str(tmp_path / "missing.json")).exit_code == 2
    good = tmp_path / "good.yaml"
    good.write_text(MINIMAL)
    assert _run("compile", str(good), "-o", str(tmp_path / "no" / "dir" / "a.json")).exit_code == 2


# ---------------------------------------------------------------------------
# Budget
# ---------------------------------------------------------------------------

BIG = (ROOT / "golden/switch/all_match_join/source.yaml").read_text()


@pytest.mark.parametrize("limits,code", [
    (Limits(schema_fields=5), "LP5001"),
    (Limits(instructions=5), "LP5002"),
    (Limits(ir_units=20), "LP5003"),
    (Limits(bytes=2000), "LP5004"),
    (Limits(artifact_bytes=1000), "LP5005"),
    (Limits(envelope_nesting=5), "LP5006"),
    (Limits(expression_nesting=1), "LP5007"),
])
def test_budget_codes(limits: Limits, code: str) -> None:
    res = compile_source(BIG, limits=limits)
    assert not res.ok and res.artifact is None
    codes = {d.code for d in res.errors}
    assert code in codes, [(d.code, d.message) for d in res.diagnostics]
    d = next(d for d in res.errors if d.code == code)
    assert d.name.startswith("resource.artifact_budget.")


def test_budget_projection_is_an_upper_bound() -> None:
    from loopc.pipeline import check_source
    from loopc.ir.budget import project

    for case in sorted((ROOT / "golden").glob("*/*/source.yaml")):
        check = check_source(case.read_bytes())
        proj = project(check)
        res = compile_source(case.read_bytes())
        assert proj.bytes >= len(res.bytes), case


def test_budget_projection_saturates_without_enumerating() -> None:
    from loopc.ir.budget import CAP, _add, _mul

    assert _mul(CAP, 3) == CAP and _add(CAP, CAP) == CAP and _mul(0, CAP) == 0


def test_public_names_are_functions_not_modules() -> None:
    import loopc.ir as ir

    for name in ("decode", "verify", "evaluate", "canonical_bytes",
                 "semantic_digest", "semantic_projection"):
        assert callable(getattr(ir, name)), name
    import loopc.ir.decoder  # noqa: F401  - importing submodules must not shadow the functions
    import loopc.ir.evaluator  # noqa: F401

    assert callable(ir.decode) and callable(ir.evaluate)


def test_docs_ir_python_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "docs" / "ir.md").read_text(encoding="utf-8")
    blocks = text.split("```python\n")[1:]
    assert blocks
    monkeypatch.chdir(ROOT)
    for b in blocks:
        exec(compile(b.split("```", 1)[0], "docs/ir.md", "exec"), {})


def test_check_budget_pass_for_the_driver() -> None:
    from loopc.pipeline import check_source
    from loopc.compiler.report import Reporter
    from loopc.ir.budget import check_budget

    chk = check_source(BIG)
    rep = Reporter()
    assert check_budget(chk.plan, chk.scopes, chk.types, rep)
    assert not check_budget(chk.plan, chk.scopes, chk.types, rep, Limits(schema_fields=3))
    assert [d.code for d in rep.diagnostics] == ["LP5001"]
    assert rep.diagnostics[0].node is not None
