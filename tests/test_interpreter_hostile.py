"""Hostile Runs and scenarios (issue 21, findings 4-8; issue 22, "Scenarios"):
every run-time failure is a documented Run failure, a budget stops a Run
that would not end, numbers outside I-JSON are positioned diagnostics,
instants are RFC 3339.  Each test failed before its fix."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopc.cli.main import cli
from loopc.conformance import SCENARIO_DIR
from loopc.conformance import scenarios as golden_scenarios
from loopc.interpreter.engine import DEFAULT_BUDGET, Budget
from loopc.interpreter.runner import run_file

DATA = Path(__file__).resolve().parent / "data" / "interpreter"
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{0,8}[1-9])?Z\Z")
AGENT_INPUT = "{agent: agt_ana, room: {kind: channel, scopeId: chn_room}}"


def scenario(tmp_path: Path, plan: str, body: str, name: str = "s.yaml") -> Path:
    p = tmp_path / name
    p.write_text(f"plan: {DATA / plan}\n{body}")
    return p


def run_json(*args: str) -> tuple[int, dict]:
    res = CliRunner().invoke(cli, ["run", "--format", "json", *args])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output
    return res.exit_code, json.loads(res.stdout)


# ---------------------------------------------------------------- finding 4

@pytest.mark.parametrize("plan, body", [
    ("callback_object.yaml", f"input: {AGENT_INPUT}\nevents:\n  - callback: {{node: ask, output: {{info: {{a: text}}}}}}\n"),
    ("timer_object.yaml", "input: {obj: {a: text}}\nevents:\n  - advance: PT1M\n"),
])
def test_evaluation_error_after_an_outside_input_fails_the_run(tmp_path: Path, plan: str, body: str) -> None:
    sc = scenario(tmp_path, plan, body + "expect: {status: failed, error: {code: runtime.evaluation_failed}}\n")
    code, out = run_json(str(sc))
    assert code == 0, out["differences"]
    assert out["error"]["code"] == "runtime.evaluation_failed"
    assert "cannot read 'b' of string" in out["error"]["detail"]
    assert out["journal"][-1]["kind"] == "run.completed"


def test_evaluation_error_after_a_callback_conforms(tmp_path: Path) -> None:
    sc = scenario(tmp_path, "callback_object.yaml",
                  f"input: {AGENT_INPUT}\nevents:\n  - callback: {{node: ask, output: {{info: {{a: 1}}}}}}\n"
                  "  - crash: {}\nexpect: {status: failed}\n")
    res = CliRunner().invoke(cli, ["conform", "--runtime", f"{sys.executable} -m loopc.interpreter.protocol",
                                   str(sc)])
    assert res.exit_code == 0, res.output
    assert "1 conforming, 0 diverging" in res.output


# ---------------------------------------------------------------- finding 5

def test_default_budget_matches_the_cli_defaults() -> None:
    res = CliRunner().invoke(cli, ["run", "--help"])
    text = " ".join(res.output.split())
    for flag, value in (("--max-activations", DEFAULT_BUDGET.activations),
                        ("--max-journal-records", DEFAULT_BUDGET.records), ("--max-steps", DEFAULT_BUDGET.steps)):
        assert re.search(re.escape(flag) + r" INTEGER RANGE .*?\[default: " + str(value), text), flag
    assert DEFAULT_BUDGET == Budget(activations=1_000_000, records=10_000_000, steps=10_000_000)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("flag, n, what", [("--max-activations", "1000", "activations"),
                                           ("--max-journal-records", "500", "records"),
                                           ("--max-steps", "300", "steps")])
def test_nested_loops_stop_at_a_configured_budget(tmp_path: Path, flag: str, n: str, what: str) -> None:
    sc = scenario(tmp_path, "nested_loops.yaml", "expect: {status: failed, error: {code: runtime.budget_exceeded}}\n")
    code, out = run_json(flag, n, str(sc))
    assert code == 0, out["differences"]
    last = out["journal"][-1]
    assert last["kind"] == "run.completed" and last["error"]["code"] == "runtime.budget_exceeded"
    assert f"over its budget of {int(n):,} {what}" in last["error"]["detail"]
    if what == "activations":
        assert sum(1 for r in out["journal"] if r["kind"] == "activation.started") == 1000
    elif what == "records":
        assert len(out["journal"]) <= 500 + 3  # the failure records close the Run
    else:
        assert out["journal"][-1]["step"] == 301  # the step that went over commits the failure


def test_budget_is_the_same_after_a_crash(tmp_path: Path) -> None:
    sc = scenario(tmp_path, "nested_loops.yaml",
                  "events:\n  - crash: {}\n  - crash: {}\nexpect: {status: failed, error: {code: runtime.budget_exceeded}}\n")
    rep = run_file(str(sc), budget=Budget(activations=200))
    assert not isinstance(rep, list) and rep.ok, rep
    assert sum(1 for r in rep.journal if r.get("marker")) == 2


def test_budget_option_rejects_zero(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["run", "--max-activations", "0", "x.yaml"])
    assert res.exit_code == 2 and "--max-activations" in res.output
    res = CliRunner().invoke(cli, ["conform", "--runtime", "x", "--max-steps", "-1"])
    assert res.exit_code == 2 and "--max-steps" in res.output


# ---------------------------------------------------------------- finding 8

@pytest.mark.parametrize("delay", ["PT0.0000001S", "PT0.000000001S", "PT1.5S", "PT0.100000000S"])
def test_instants_are_rfc3339(tmp_path: Path, delay: str) -> None:
    sc = tmp_path / "s.yaml"
    plan = Path(SCENARIO_DIR) / "plans" / "timer.yaml"
    sc.write_text(f"plan: {plan}\ninput: {{delay: {delay}}}\nevents:\n  - advance: {delay}\n"
                  "expect: {status: succeeded, output: {phase: woke}}\n")
    code, out = run_json(str(sc))
    assert code == 0, out["differences"]
    for r in out["journal"]:
        for key in ("at", "due", "to"):
            if key in r:
                assert RFC3339.match(r[key]), r


def test_format_instant_trims_to_nanoseconds() -> None:
    from decimal import Decimal

    from loopc.interpreter.clock import format_instant, parse_instant

    assert format_instant(Decimal("1E-7")) == "2026-01-01T00:00:00.0000001Z"
    assert format_instant(Decimal("1.500000000")) == "2026-01-01T00:00:01.5Z"
    assert format_instant(Decimal("1E+1")) == "2026-01-01T00:00:10Z"
    assert format_instant(Decimal("-0.5")) == "2025-12-31T23:59:59.5Z"
    for text in ("2026-01-01T00:00:00.000000001Z", "2026-03-04T05:06:07.12Z"):
        assert format_instant(parse_instant(text)) == text


# ---------------------------------------------------------------- finding 7

def _problems(tmp_path: Path, text: str) -> list[str]:
    sc = tmp_path / "s.yaml"
    sc.write_text(text)
    res = CliRunner().invoke(cli, ["run", str(sc)])
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return [line for line in res.stderr.splitlines() if line.startswith(str(sc))]


CALLBACK_PLAN = f"plan: {Path(SCENARIO_DIR) / 'plans' / 'callback.yaml'}\n"


@pytest.mark.parametrize("number, why", [
    ("9007199254740993", "outside ±(2^53−1)"), ("-9007199254740992", "outside ±(2^53−1)"),
    (".nan", "NaN is not a JSON number"), (".inf", "infinity"), ("-.Inf", "infinity"), ("1e400", "infinity"),
    ("1e-400", "rounds to zero"), ("-2.5e-999", "rounds to zero"),
    ("0.1234567890123456789012345678901", "31 significant digits"),
])
def test_numbers_outside_ijson_are_positioned_diagnostics(tmp_path: Path, number: str, why: str) -> None:
    text = (CALLBACK_PLAN + "input: {question: q, agent: agt_ana, room: {kind: channel, scopeId: chn_room}}\n"
            f"events:\n  - callback: {{node: ask, output: {{answer: a, tone: calm, n: {number}}}}}\n"
            "expect: {status: succeeded}\n")
    col = text.splitlines()[3].index(number) + 1
    got = _problems(tmp_path, text)
    assert len(got) == 1, got
    assert f":4:{col}: error[scenario.number]: " in got[0] and why in got[0], got


@pytest.mark.parametrize("number", ["0", "0.0", "-0.0", "0e-400", "5e-324", "1.7976931348623157e308",
                                    "9007199254740991", "0.12345678901234567"])
def test_numbers_inside_ijson_are_accepted(tmp_path: Path, number: str) -> None:
    sc = tmp_path / "s.yaml"
    sc.write_text(CALLBACK_PLAN + "input: {question: q, agent: agt_ana, room: {kind: channel, scopeId: chn_room}}\n"
                  f"events:\n  - callback: {{node: ask, output: {{answer: a, tone: calm, n: {number}}}, rejected: true}}\n"
                  "expect: {status: waiting}\n")
    code, out = run_json(str(sc))
    assert code == 0, out["differences"]


def test_json_output_is_always_json() -> None:
    from loopc.cli.run_commands import json_text

    text = json_text({"a": float("nan"), "b": [float("inf"), -float("inf"), 1.5]})
    assert json.loads(text) == {"a": "NaN", "b": ["Infinity", "-Infinity", 1.5]}
    assert "NaN" not in json_text({"a": 1.0})


# ---------------------------------------------------------------- issue 22, Scenarios

def test_every_input_mismatch_at_its_own_position(tmp_path: Path) -> None:
    got = _problems(tmp_path, CALLBACK_PLAN + "input:\n  question: 12\n  agentt: agt_ana\n"
                    "  room: {kind: chanel, scopeId: chn_room}\n  extra: 1\nexpect: {status: waiting}\n")
    assert [g.split(": error")[0].rsplit(":", 2)[1:] for g in got] == [["3", "13"], ["4", "3"], ["5", "16"],
                                                                         ["6", "3"]], got
    assert "input.question is not a valid string" in got[0]
    assert "no field 'agentt'; did you mean 'agent'?" in got[1]
    assert "'chanel' is not a scope kind" in got[2] and "did you mean 'channel'?" in got[2]
    assert "no field 'extra'" in got[3]
    assert not any("input.agent is required" in g for g in got)  # the misspelt key is the one defect


def test_enum_input_value_gets_a_did_you_mean(tmp_path: Path) -> None:
    plan = tmp_path / "p.yaml"
    plan.write_text("apiVersion: loop.plan/v1\nkind: PlanVersion\ninput:\n"
                    "  level: {type: enum, values: [low, high], required: true}\noutput: {}\nentry: done\n"
                    "nodes:\n  - id: done\n    type: end\n    end: {status: succeeded}\nedges: []\n")
    got = _problems(tmp_path, "plan: p.yaml\ninput: {level: hihg}\nexpect: {status: succeeded}\n")
    assert len(got) == 1 and ":2:16: " in got[0] and "did you mean 'high'?" in got[0], got


def test_every_expect_and_event_mismatch_with_did_you_mean(tmp_path: Path) -> None:
    got = _problems(tmp_path, CALLBACK_PLAN + "input: {question: q, agent: agt_ana, room: {kind: channel, scopeId: chn_room}}\n"
                    "events:\n  - expectStatus: wating\n  - aprove: {node: ask}\n  - callback: {node: ask, attempt: 0}\n"
                    "expect:\n  status: succeded\n  outputStatuses: {r: [succeeded, timed_ot]}\n")
    where = [g.split(": error")[0].rsplit(":", 2)[1:] for g in got]
    assert where == [["4", "19"], ["5", "5"], ["6", "36"], ["8", "11"], ["9", "35"]], got
    assert "did you mean 'waiting'?" in got[0]
    assert "did you mean 'approve'?" in got[1]
    assert "'attempt' must be a positive integer" in got[2]
    assert "did you mean 'succeeded'?" in got[3]
    assert "did you mean 'timed_out'?" in got[4]


def test_refused_callback_names_the_enum_value_it_meant(tmp_path: Path) -> None:
    sc = tmp_path / "s.yaml"
    sc.write_text(CALLBACK_PLAN + "input: {question: q, agent: agt_ana, room: {kind: channel, scopeId: chn_room}}\n"
                  "events:\n  - callback: {node: ask, output: {answer: a, tone: clam}, rejected: true}\n"
                  "expect: {status: waiting}\n")
    code, out = run_json(str(sc))
    assert code == 0 and "did you mean 'calm'?" in out["events"][0]["reason"], out["events"]


# ---------------------------------------------------------------- finding 6

def _loop_prep(iterations: int, crashes: int):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from interpreter import loop_plan  # the benchmark's plan: one set_variable per iteration

    from loopc.interpreter.runner import prepare
    from loopc.interpreter.scenario import load_scenario

    events = "events:\n" + "  - crash: {}\n" * crashes if crashes else ""
    sc = load_scenario(f"plan: p.yaml\n{events}expect: {{status: succeeded, output: {{count: {iterations}}}}}\n",
                       "s.yaml")
    assert not isinstance(sc, list), sc
    prep = prepare(sc, loop_plan(iterations).encode(), "p.yaml")
    assert not isinstance(prep, list), prep
    return prep


class _Count:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self, eng) -> None:  # noqa: ANN001
        self.n += 1


@pytest.mark.timeout(120)
def test_crash_after_a_long_loop_costs_the_tail_not_the_history() -> None:
    from loopc.interpreter.runner import run_prepared

    quiet = _Count()
    base = run_prepared(_loop_prep(10_000, 0), on_step=quiet)
    crashed = _Count()
    rep = run_prepared(_loop_prep(10_000, 50), on_step=crashed)
    assert base.ok and rep.ok, rep.differences
    assert rep.steps == base.steps
    # a full re-execution per crash would be 50 x the Run's steps; from the checkpoint nothing is re-executed
    assert crashed.n == quiet.n == len(base.steps), (crashed.n, quiet.n)
    assert sum(1 for r in rep.journal if r.get("marker")) == 50


@pytest.mark.timeout(120)
def test_many_crashes_on_a_small_plan() -> None:
    from loopc.interpreter.runner import prepare_file, run_prepared

    sc = Path(SCENARIO_DIR) / "callback_basic.yaml"
    prep = prepare_file(str(sc))
    assert not isinstance(prep, list)
    import attrs

    from loopc.interpreter.scenario import Event

    crash = Event(0, "crash", {})
    script = tuple(attrs.evolve(e, index=25_000 + e.index) for e in prep.scenario.events)
    events = tuple(attrs.evolve(crash, index=i) for i in range(25_000)) + script
    count = _Count()
    rep = run_prepared(prep, events=events, on_step=count)
    assert rep.ok, rep.differences
    assert count.n == len(rep.steps)
    assert rep.steps == run_prepared(prep, events=script).steps


def test_checkpoint_size_is_the_live_state_not_the_history() -> None:
    from loopc.interpreter.engine import Engine

    sizes = []
    for n in (10, 10_000):
        prep = _loop_prep(n, 0)
        eng = Engine(prep.program)
        eng.start({})
        assert eng.status == "succeeded"
        sizes.append(len(json.dumps(eng.checkpoint())))
    assert sizes[1] < sizes[0] + 64, sizes  # only counters grow (more digits)


@pytest.mark.parametrize("name", [Path(p).stem for p in golden_scenarios(SCENARIO_DIR)])
def test_restore_from_a_checkpoint_after_every_event(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkpoint after every event (the amortised policy switched off),
    a crash after every event: restore + tail gives the journal of the
    uninterrupted Run, under the invariant monitor."""
    from loopc.interpreter.monitor import Monitor
    from loopc.interpreter.runner import Durable, prepare_file, run_prepared

    prep = prepare_file(str(Path(SCENARIO_DIR) / f"{name}.yaml"))
    assert not isinstance(prep, list)
    want = run_prepared(prep)
    monkeypatch.setattr(Durable, "RECORD_CHARS", 10**12)
    got = run_prepared(prep, crash_after_every=True, on_step=Monitor())
    assert got.ok, got.differences
    assert got.steps == want.steps
    assert (got.status, got.output, got.state, got.attempts, got.visits) == \
        (want.status, want.output, want.state, want.attempts, want.visits)


def test_replay_after_a_checkpoint_is_still_verified() -> None:
    """Every step re-executed after the checkpoint is compared with the
    journal: a tampered tail diverges."""
    from loopc.interpreter.engine import Engine, JournalDivergence
    from loopc.interpreter.runner import prepare_file, restore

    prep = prepare_file(str(Path(SCENARIO_DIR) / "callback_basic.yaml"))
    assert not isinstance(prep, list)
    eng = Engine(prep.program)
    eng.start(prep.scenario.input)
    ck = json.loads(json.dumps(eng.checkpoint()))
    act, _ = eng.find_open("ask", None, None, ("awaiting",))
    assert act is not None
    eng.callback(act, act.attempt, output={"answer": "a", "tone": "calm"})
    tail = json.loads(json.dumps(eng.steps[ck["steps"]:]))
    assert restore(prep.program, ck, tail).status == "succeeded"
    tail[-1][-1]["output"] = {"answer": "forged", "tone": "calm"}
    with pytest.raises(JournalDivergence):
        restore(prep.program, ck, tail)
    with pytest.raises(JournalDivergence):
        restore(prep.program, {**ck, "digest": "sha256:0"}, tail)
    with pytest.raises(JournalDivergence):
        restore(prep.program, {**ck, "acts": [["x"]]}, tail)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_nested_loops_end_under_the_default_budget_in_bounded_memory(tmp_path: Path) -> None:
    """Under the default budget the 10,000 x 10,000 loops stop at 1,000,000
    activations: in a process limited to 4 GiB of address space (the Run
    holds its journal, about 2 KB per activation here; no timing assert)."""
    import resource
    import subprocess

    sc = scenario(tmp_path, "nested_loops.yaml", "expect: {status: failed, error: {code: runtime.budget_exceeded}}\n")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    res = subprocess.run([sys.executable, "-m", "loopc", "run", str(sc)], capture_output=True, text=True,
                         preexec_fn=limit, timeout=850)
    assert res.returncode == 0, (res.stdout, res.stderr[-2000:])
    assert "PASS" in res.stdout


@pytest.mark.parametrize("delay, why", [("P99999999D", "3,650 days"), ("P3651D", "3,650 days"),
                                        ("PT0.0000000001S", "fractional-second digits")])
def test_durations_past_the_bounds_are_input_problems_not_overflows(tmp_path: Path, delay: str, why: str) -> None:
    sc = tmp_path / "s.yaml"
    sc.write_text(f"plan: {Path(SCENARIO_DIR) / 'plans' / 'timer.yaml'}\ninput: {{delay: {delay}}}\n"
                  "events:\n  - advance: P3650D\nexpect: {status: succeeded}\n")
    got = _problems(tmp_path, sc.read_text())
    assert len(got) == 1 and ":2:16: error[scenario.input]" in got[0] and why in got[0], got


def test_a_computed_wait_duration_past_the_bounds_fails_the_attempt() -> None:
    from loopc.interpreter.engine import Engine, _Fail
    from loopc.interpreter.runner import prepare_file

    prep = prepare_file(str(Path(SCENARIO_DIR) / "timer_due.yaml"))
    assert not isinstance(prep, list)
    eng = Engine(prep.program)
    with pytest.raises(_Fail) as info:
        eng._seconds("P99999999D", "wait 'pause' duration")
    assert info.value.err["code"] == "runtime.input_invalid"
    assert info.value.err["detail"].startswith("wait 'pause' duration: \"P99999999D\" is not a duration (longer")


def test_an_engine_defect_is_a_reported_failure_not_a_traceback() -> None:
    from loopc.interpreter.engine import Engine
    from loopc.interpreter.runner import prepare_file, run_prepared

    class Broken(Engine):
        def _deliver(self, aid: str, attempt: int) -> None:
            raise TypeError("planted")

    prep = prepare_file(str(Path(SCENARIO_DIR) / "callback_basic.yaml"))
    assert not isinstance(prep, list)
    rep = run_prepared(prep, engine_cls=Broken)
    assert not rep.ok and any("internal error in the reference interpreter" in d and "TypeError: planted" in d
                              for d in rep.differences), rep.differences
    json.loads(json.dumps(rep.to_json()))


@pytest.mark.parametrize("output, fail", [([1, 2], None), ("x", None), (None, "boom"), (None, {"code": 5}),
                                          (None, {"code": "x", "detail": 7})])
def test_callback_of_the_wrong_shape_is_refused_through_the_api(output, fail) -> None:  # noqa: ANN001
    from loopc.interpreter.engine import Engine
    from loopc.interpreter.runner import prepare_file

    prep = prepare_file(str(Path(SCENARIO_DIR) / "callback_basic.yaml"))
    assert not isinstance(prep, list)
    eng = Engine(prep.program)
    eng.start(prep.scenario.input)
    act, _ = eng.find_open("ask", None, None, ("awaiting",))
    assert act is not None
    assert isinstance(eng.check_callback(act, output, fail, None), str)
