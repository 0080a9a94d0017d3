"""Reference interpreter: golden scenarios, crash/resume at every journal
boundary, replay without the world, hash-seed independence, the invariant
monitor, malformed scenarios and the ``loopc run`` contract."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopc.cli.main import cli
from loopc.interpreter.clock import VirtualClock
from loopc.conformance import journal_path, scenarios as golden_scenarios
from loopc.interpreter.monitor import Monitor
from loopc.interpreter.runner import (dump_journal, parse_journal, prepare_file, replay, resume, run_prepared,
                                      strip_markers)

from conftest import KIT, ROOT
GOLDEN = KIT
SCENARIOS = golden_scenarios(str(GOLDEN))
IDS = [Path(s).stem for s in SCENARIOS]


def _prep(path: str):
    prep = prepare_file(path)
    assert not isinstance(prep, list), [p.render() for p in prep]
    return prep


def test_at_least_forty_golden_scenarios() -> None:
    assert len(SCENARIOS) >= 40


@pytest.mark.parametrize("path", SCENARIOS, ids=IDS)
def test_golden_scenario_passes_with_monitor(path: str) -> None:
    prep = _prep(path)
    mon = Monitor()
    rep = run_prepared(prep, on_step=mon)
    assert rep.ok, rep.differences
    assert mon.checks >= len(rep.steps)
    with open(journal_path(path), encoding="utf-8") as fh:
        pinned = fh.read()
    assert dump_journal(rep.steps) == pinned, "stale pin: python tools/regen.py"


@pytest.mark.parametrize("path", SCENARIOS, ids=IDS)
def test_crash_after_every_event(path: str) -> None:
    prep = _prep(path)
    base = run_prepared(prep)
    rep = run_prepared(prep, crash_after_every=True, on_step=Monitor())
    assert rep.ok, rep.differences
    assert (rep.status, rep.output, rep.state, rep.error) == (base.status, base.output, base.state, base.error)
    assert strip_markers(rep.journal) == strip_markers(base.journal)


def _resume_from_prefix(prep, base, k: int, torn: str) -> list:
    text = dump_journal(base.steps[:k]) + torn
    steps = parse_journal(text)
    assert len(steps) == k
    world = __import__("loopc.interpreter.runner", fromlist=["ScenarioWorld"]).ScenarioWorld(
        prep.scenario.deliveries, prep.scenario.transport)
    eng = resume(prep.program, steps, world, on_step=None)
    if k == 0:
        return []  # nothing committed: the Run never started (the runner starts it again)
    applied = [r.get("event") for s in steps for r in s if r.get("event") is not None]
    last = max(applied) if applied else -1
    clock = VirtualClock()
    # the world clock resumes where the journal says it was
    from loopc.interpreter.clock import parse_instant

    for s in steps:
        for r in s:
            if r["kind"] == "clock.advanced":
                clock.now = parse_instant(r["to"])
    from loopc.interpreter.runner import Report, _apply

    rep = Report()
    for ev in prep.scenario.events:
        if ev.index > last:
            _apply(eng, ev, clock, lambda: None, rep)
    return eng.records()


@pytest.mark.parametrize("path", SCENARIOS, ids=IDS)
def test_resume_from_every_journal_prefix(path: str) -> None:
    prep = _prep(path)
    base = run_prepared(prep)
    want = strip_markers(base.journal)
    for k in range(1, len(base.steps) + 1):
        nxt = dump_journal(base.steps[: k + 1])[len(dump_journal(base.steps[:k])):]
        for torn in ("", nxt[: max(1, len(nxt) // 2)]):
            got = _resume_from_prefix(prep, base, k, torn)
            assert got == want, f"resume after step {k} (torn={bool(torn)}) diverges"


@pytest.mark.parametrize("path", SCENARIOS, ids=IDS)
def test_replay_without_world_and_shifted_clock(path: str) -> None:
    prep = _prep(path)
    base = run_prepared(prep)
    eng = replay(prep.program, parse_journal(dump_journal(base.steps)), clock=VirtualClock(100 * 86400))
    assert eng.records() == strip_markers(base.journal)
    assert (eng.status, eng.output, eng.state) == (base.status, base.output, base.state)


@pytest.mark.slow
def test_two_hash_seeds_give_identical_results() -> None:
    outs = []
    for seed in ("0", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        p = subprocess.run([sys.executable, "-m", "loopc", "run", str(GOLDEN), "--format", "json"],
                           capture_output=True, text=True, env=env, cwd=ROOT, check=False)
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
        outs.append(p.stdout)
    assert outs[0] == outs[1]


def test_run_json_contract() -> None:
    path = str(GOLDEN / "callback_retry_after_failure.yaml")
    res = CliRunner().invoke(cli, ["run", path, "--format", "json"])
    assert res.exit_code == 0, res.output
    obj = json.loads(res.output)
    assert list(obj) == ["status", "output", "error", "state", "visits", "attempts", "events", "journal",
                         "expectationsMet", "differences"]
    assert obj["attempts"]["ask"] == 2 and obj["expectationsMet"] is True
    assert obj["events"][1] == {"index": 1, "applied": False, "reason": obj["events"][1]["reason"]}
    assert obj["events"][1]["reason"]
    assert [r["seq"] for r in obj["journal"]] == list(range(1, len(obj["journal"]) + 1))


def test_run_reports_differences_exit_1(tmp_path: Path) -> None:
    sc = tmp_path / "s.yaml"
    plan = GOLDEN / "plans" / "callback.yaml"
    sc.write_text(f"plan: {plan}\ninput: {{question: q, agent: agt_a, room: {{kind: channel, scopeId: chn_x}}}}\n"
                  "events:\n  - callback: {node: ask, output: {answer: a, tone: calm}, rejected: true}\n"
                  "expect: {status: failed, visits: {ask: 2}}\n")
    res = CliRunner().invoke(cli, ["run", str(sc)])
    assert res.exit_code == 1
    assert "status: expected failed, got succeeded" in res.output
    assert "visits.ask: expected 2, got 1" in res.output
    assert "applied, but the scenario says rejected: true" in res.output


MALFORMED = {
    "unknown_top": ("plan: p.yaml\nexpect: {status: waiting}\nextra: 1\n", "3:1", "unknown key 'extra'"),
    "event_key": ("plan: p.yaml\nevents:\n  - callback: {node: a, outptu: {}}\nexpect: {status: waiting}\n",
                  "3:25", "did you mean 'output'"),
    "event_kind": ("plan: p.yaml\nevents:\n  - advnce: PT1H\nexpect: {status: waiting}\n", "3:5", "advance"),
    "duration": ("plan: p.yaml\nevents:\n  - advance: 1h\nexpect: {status: waiting}\n", "3:14", "not a duration"),
    "status": ("plan: p.yaml\nexpect: {status: done}\n", "2:18", "must be one of"),
    "yaml": ("plan: [\n", "1:7", "never closed"),  # at the `[`, not where the parser gave up
    "dup": ("plan: a\nplan: b\nexpect: {status: waiting}\n", "2:1", "uplicate"),
    "no_plan": ("expect: {status: waiting}\n", "1:1", "'plan'"),
    "both": ("plan: p.yaml\nevents:\n  - callback: {node: a, output: {}, fail: {code: x}}\n"
             "expect: {status: waiting}\n", "3:15", "either"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_scenario_exit_2_with_position(tmp_path: Path, name: str) -> None:
    text, pos, needle = MALFORMED[name]
    sc = tmp_path / f"{name}.yaml"
    sc.write_text(text)
    res = CliRunner(mix_stderr=False).invoke(cli, ["run", str(sc)]) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner().invoke(cli, ["run", str(sc)])
    assert res.exit_code == 2, res.output
    err = res.stderr if hasattr(res, "stderr") and res.stderr_bytes is not None else res.output
    assert f"{sc}:{pos}:" in err and needle in err, err
    assert "Traceback" not in err


def test_plan_that_does_not_compile_is_malformed(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("apiVersion: loop.plan/v1\nkind: PlanVersion\nentry: nowhere\nnodes: []\n")
    (tmp_path / "s.yaml").write_text("plan: p.yaml\nexpect: {status: waiting}\n")
    res = CliRunner().invoke(cli, ["run", str(tmp_path / "s.yaml")])
    assert res.exit_code == 2
    assert "p.yaml:" in res.output


def test_wrong_input_is_malformed(tmp_path: Path) -> None:
    plan = GOLDEN / "plans" / "timer.yaml"
    (tmp_path / "s.yaml").write_text(f"plan: {plan}\ninput: {{delay: 5}}\nexpect: {{status: waiting}}\n")
    res = CliRunner().invoke(cli, ["run", str(tmp_path / "s.yaml")])
    assert res.exit_code == 2 and "input" in res.output


def test_directory_summary_json() -> None:
    res = CliRunner().invoke(cli, ["run", str(GOLDEN), "--format", "json"])
    assert res.exit_code == 0
    obj = json.loads(res.output)
    assert obj["failed"] == 0 and obj["passed"] == len(SCENARIOS)
    assert all("scenario" in s for s in obj["scenarios"])


def test_trace_prints_timeline() -> None:
    res = CliRunner().invoke(cli, ["run", str(GOLDEN / "timer_race_any.yaml"), "--trace"])
    assert res.exit_code == 0
    assert "timer.fired" in res.output and "2026-01-01T00:30:00Z" in res.output


def test_torn_journal_middle_line_is_corrupt() -> None:
    from loopc.interpreter.runner import JournalError

    with pytest.raises(JournalError):
        parse_journal('{"step": 1, "records": []}\n{garbage\n{"step": 2, "records": []}\n')


ENGINE_MODULES = ["engine.py", "program.py", "runner.py", "values.py", "scenario.py", "clock.py", "protocol.py",
                  "choice.py"]


@pytest.mark.parametrize("name", ENGINE_MODULES)
def test_no_unordered_iteration_wall_clock_or_unseeded_randomness(name: str) -> None:
    """Determinism lint: no set containers (their order depends on hashing),
    no wall clock, no language runtime's random generator at all (the one
    choice, selectOne, is SHA-256 based: docs/conformance.md#selectone-the-pick)."""
    import ast

    src = (ROOT / "src" / "loopc" / "interpreter" / name).read_text(encoding="utf-8")
    bad = []
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Set, ast.SetComp)):
            bad.append(f"line {node.lineno}: set display")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("set", "frozenset"):
            bad.append(f"line {node.lineno}: {node.func.id}()")
        elif isinstance(node, ast.Attribute) and node.attr in ("now", "utcnow", "today", "time", "monotonic",
                                                                "perf_counter", "urandom", "uuid4"):
            if isinstance(node.value, ast.Name) and node.value.id in ("datetime", "time", "os", "uuid", "_dt"):
                bad.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            if any(n.split(".")[0] in ("random", "secrets") for n in names):
                bad.append(f"line {node.lineno}: imports {names}")
    assert not bad, bad


def test_engine_tables_are_the_typed_model() -> None:
    """The engine executes the typed IR model: config classes and typed
    instruction trees, never wire lists or expression text."""
    from loopc.ir import model

    prep = _prep(str(GOLDEN / "fanout_blocked.yaml"))
    for n in prep.program.nodes.values():
        assert isinstance(n.config, model.Config), n.id
        for _, p_implicit, _ in n.ports.values():
            assert p_implicit is None or isinstance(p_implicit, model.Disposition)
    for e in prep.program.edges.values():
        for _, instr in e.bind:
            assert not isinstance(instr, (list, str)), e.id
    assert all(isinstance(s, model.ScopeDecl) for s in prep.program.scopes.values())


def test_unverified_artifact_is_refused() -> None:
    from loopc.interpreter.protocol import Session

    prep = _prep(str(GOLDEN / "timer_due.yaml"))
    text = prep.artifact_bytes.decode()
    digest = json.loads(text)["digest"]
    tampered = text.replace(digest, "sha256:" + "0" * 64)
    out = Session().load({"protocol": 2, "artifact": tampered, "input": {}})
    assert out["ok"] is False and "digest" in out["error"]
    stale = text.replace('"PT1H"', '"PT2H"')
    assert Session().load({"protocol": 2, "artifact": stale, "input": {}})["ok"] is False
    assert Session().load({"protocol": 2, "artifact": text, "input": {}})["ok"] is True


def test_malformed_single_scenario_json_is_one_object(tmp_path: Path) -> None:
    sc = tmp_path / "bad.yaml"
    sc.write_text("plan: p.yaml\nexpect: {status: nope}\n")
    res = CliRunner().invoke(cli, ["run", str(sc), "--format", "json"])
    assert res.exit_code == 2
    obj = json.loads(res.output[res.output.index("{"):])
    assert obj["expectationsMet"] is False and obj["malformed"] is True
    assert obj["diagnostics"][0]["line"] == 2 and obj["status"] is None


def test_json_scenario_and_null_event_bodies(tmp_path: Path) -> None:
    plan = GOLDEN / "plans" / "callback.yaml"
    (tmp_path / "s.json").write_text(json.dumps({
        "plan": str(plan), "input": {"question": "q", "agent": "agt_a", "room": {"kind": "channel", "scopeId": "chn_x"}},
        "events": [{"cancel": None}, {"crash": {}}, {"expectStatus": "cancelled"}, {"cancel": {}}],
        "expect": {"status": "cancelled", "visits": {"ask": 1}}}))
    res = CliRunner().invoke(cli, ["run", str(tmp_path / "s.json"), "--format", "json"])
    assert res.exit_code == 0, res.output
    obj = json.loads(res.output)
    assert [e["applied"] for e in obj["events"]] == [True, True, True, True]
    assert [r["kind"] for r in obj["journal"]].count("run.cancelled") == 1


def test_a_plan_given_as_a_scenario_is_one_problem() -> None:
    """``loopc run plan.yaml`` (a plan, not a scenario) is one
    scenario.not_a_scenario at its apiVersion, exit 2, not one unknown or
    missing key per section (new-user trial finding)."""
    r = CliRunner().invoke(cli, ["run", str(ROOT / "examples" / "fork_all_join.yaml")])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if "error[" in ln]
    assert len(lines) == 1 and "error[scenario.not_a_scenario]" in lines[0] and ":1:13:" in lines[0], r.output
