"""Runtimes accept only verified artifacts: the interpreter (the scenario
runner and the conformance protocol's ``load``) and the execution-plan back
end (``plan_artifact``) run the full verifier (:func:`loopc.ir.verify`), not
only the decoder — so a semantically broken artifact whose digest is
correct is refused by each, with the verifier's message.  And numbers and
durations past the documented bounds are diagnostics on every path (source,
artifact, scenario), while the evaluator raises only its own error."""
from __future__ import annotations

import json
from typing import Any

import pytest

import loopc
from loopc.ir import decode, evaluate, verify
from loopc.ir.decoder import DecodeError
from loopc.ir.evaluator import EvaluationError

from conftest import KIT, artifact_node, golden_artifact, seal


_load, _seal, _node = golden_artifact, seal, artifact_node


def _broken() -> dict[str, bytes]:
    """Artifacts that decode (digest correct) but do not verify."""
    out = {}
    d = _load("send_message/sent_target")
    _node(d, "announce")["config"]["target"] = ["lit", "string", {"room": 1}]
    out["literal_string_holding_object"] = _seal(d)
    d = _load("failure/fail_branch")
    i = [e["id"] for e in d["plan"]["edges"]].index("e_right_broken")
    d["plan"]["edges"][i]["disposition"]["branch"] = "nowhere"
    out["disposition_unknown_branch"] = _seal(d)
    d = _load("loop/break")
    i = [n["id"] for n in d["plan"]["nodes"]].index("check")
    d["plan"]["nodes"][i]["scope"] = [{"kind": "loop", "owner": "done"}]
    out["end_as_loop_owner"] = _seal(d)
    return out


BROKEN = _broken()


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_artifact_decodes_but_does_not_verify(name: str) -> None:
    raw = BROKEN[name]
    art = decode(raw)  # the decoder alone accepts it ...
    assert art.recompute_digest() == art.digest  # ... with a correct digest
    assert not verify(raw).ok  # the verifier does not


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_interpreter_refuses_unverified_artifacts(name: str) -> None:
    from loopc.interpreter.protocol import Session
    from loopc.interpreter.runner import verify_artifact

    raw = BROKEN[name]
    art, why = verify_artifact(raw)
    assert art is None and why == verify(raw).message
    got = Session().load({"protocol": 2, "artifact": raw.decode("utf-8"), "input": {}})
    assert got["ok"] is False and got["error"] == f"artifact refused: {why}"


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_plan_back_end_refuses_unverified_artifacts(name: str) -> None:
    from loopc.plan.api import plan_artifact

    raw = BROKEN[name]
    res = plan_artifact(raw)
    assert res.plan is None and [d.code for d in res.diagnostics] == ["LP6105"]
    assert verify(raw).message in res.diagnostics[0].message


def test_runner_verifies_with_the_full_verifier(monkeypatch) -> None:
    """prepare() compiles and then calls the full verifier: a verifier that
    refuses is obeyed even for a plan the compiler accepts."""
    import loopc.ir.verifier as V
    from loopc.interpreter import runner
    from loopc.interpreter.scenario import load_scenario

    scen = KIT / "agent_capacity_fifo.yaml"
    sc = load_scenario(scen.read_bytes(), str(scen))
    plan = (KIT / "plans" / "fork_all.yaml").read_bytes()
    assert isinstance(runner.prepare(sc, plan, "fork_all.yaml"), runner.Prepared)
    monkeypatch.setattr(V, "verify", lambda data: V.VerifyResult(False, "invalid artifact: planted"))
    got = runner.prepare(sc, plan, "fork_all.yaml")
    assert isinstance(got, list) and got[0].message == "artifact refused: invalid artifact: planted"


# --- numbers and durations on every path -------------------------------------------------

H = "apiVersion: loop.plan/v1\nkind: PlanVersion\n"


@pytest.mark.parametrize("value,code", [
    ("9007199254740992", "LP2017"), ("-9007199254740992", "LP2017"), ("1.23456789012345678", "LP2017"),
    ("9" * 5000, "LP2017"), ("1e400", "LP2017"),
])
def test_source_numbers_past_the_bounds(value: str, code: str) -> None:
    src = (H + f"input:\n  n: {{type: number, default: {value}}}\noutput: {{}}\nentry: done\nnodes:\n"
           "  - {id: done, type: end, end: {status: succeeded}}\nedges: []\n")
    codes = {d.code for d in loopc.check_source(src).diagnostics}
    assert code in codes and "LP5999" not in codes


@pytest.mark.parametrize("literal", [9007199254740992, -9007199254740992, 10**30])
def test_artifact_integers_past_the_bounds_do_not_verify(literal: int) -> None:
    d = _load("send_message/sent_target")
    node = _node(d, "announce")
    node["config"]["target"] = ["lit", "number", literal]
    try:
        raw = _seal(d)
    except Exception:  # noqa: BLE001 - no canonical form for it: the raw JSON
        raw = json.dumps(d).encode()
    res = verify(raw)
    assert not res.ok


def test_scenario_durations_and_numbers_past_the_bounds() -> None:
    from loopc.interpreter.scenario import Scenario, load_scenario

    base = (KIT / "agent_capacity_fifo.yaml").read_text(encoding="utf-8")
    for bad in ("P" + "9" * 5000 + "D", "P3651D", "PT0.0000000001S"):
        src = base.replace("events:\n", f"events:\n  - advance: '{bad}'\n", 1)
        got = load_scenario(src, "s.yaml")
        assert isinstance(got, list) and len(got) == 1 and "is not a duration 'advance' accepts" in got[0].message, bad
    ok = load_scenario(base, "s.yaml")
    assert isinstance(ok, Scenario)
    huge = base.replace("legal: agt_same", "legal: " + "9" * 5000)
    got = load_scenario(huge, "s.yaml")  # a number where the plan wants text: no crash either way
    assert isinstance(got, (list, Scenario))


@pytest.mark.parametrize("instr", [
    ["lt", "boolean", ["lit", "number", 9007199254740991], ["lit", "number", 1e308]],
    ["length", "number", ["lit", "number", 5]],
    ["contains", "boolean", ["lit", "string", "a"], ["lit", "number", 1]],
    ["eq", "boolean", ["lit", "object", {"a": [1] * 3}], ["lit", "string", "x"]],
    ["lt", "boolean", ["lit", "duration", "P" + "9" * 5000 + "D"], ["lit", "duration", "PT1S"]],
    ["lt", "boolean", ["lit", "number", "9" * 5000], ["lit", "number", 1]],
    ["ref", "string", "input", ["x", "y"]],
    ["nope", "string"],
    [],
])
def test_evaluator_raises_only_its_own_error(instr: list[Any]) -> None:
    env = {"input": {"x": {"y": "z"}}}
    try:
        evaluate(instr, env)
    except EvaluationError:
        pass


def test_decode_raises_only_decode_error_on_huge_numbers() -> None:
    for text in ('{"a": ' + "9" * 5000 + "}", '{"a": 1e99999}', '{"a": -' + "1" * 4400 + "}"):
        with pytest.raises(DecodeError):
            decode(text.encode())


def _timer_scenario(tmp_path: Any, events: list[str]) -> Any:
    path = tmp_path / "far.yaml"
    plan = (KIT / "plans" / "timer.yaml").as_posix()
    path.write_text(f"plan: {plan}\ninput: {{delay: P3650D}}\nevents:\n"
                    + "".join(f"  - {e}\n" for e in events)
                    + "expect:\n  status: succeeded\n  state: {phase: woke}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("duration, ok", [
    ("P3650D", True), ("PT315360000S", True), ("P3649DT23H59M59.999999999S", False),
    ("P3650DT0.000000001S", False), ("P3651D", False), ("PT315360001S", False),
])
def test_scenario_advance_at_and_past_the_duration_bound(tmp_path: Any, duration: str, ok: bool) -> None:
    """``advance`` takes the durations every other place takes (at most
    P3650D, docs/language.md#bounds): P3650D fires a P3650D timer; one
    nanosecond or one second more is a scenario error naming the bound."""
    from click.testing import CliRunner

    from loopc.cli.main import cli

    res = CliRunner().invoke(cli, ["run", str(_timer_scenario(tmp_path, [f"advance: {duration}"]))])
    if ok:
        assert res.exit_code == 0 and "PASS" in res.output, res.output
    elif duration.startswith("P3649D"):  # within the bound, but the timer is one nanosecond short
        assert res.exit_code == 1 and "FAIL" in res.output, res.output
    else:
        assert res.exit_code == 2, res.output
        assert "is not a duration 'advance' accepts: longer than the maximum of 3,650 days, P3650D" in res.output


def test_scenario_advances_add_up_to_at_most_a_thousand_years(tmp_path: Any) -> None:
    """100 advances of P3650D (a crash in the middle: the journal's instants
    resume) are fine; the 101st is a scenario error at that event, never an
    OverflowError from a date past the year 9999."""
    from click.testing import CliRunner

    from loopc.cli.main import cli
    from loopc.interpreter.scenario import MAX_ADVANCE_DAYS

    assert MAX_ADVANCE_DAYS == 365_000
    events = ["advance: P3650D"] * 50 + ["crash: {}"] + ["advance: P3650D"] * 50
    res = CliRunner().invoke(cli, ["run", str(_timer_scenario(tmp_path, events))])
    assert res.exit_code == 0 and "PASS" in res.output, res.output
    res = CliRunner().invoke(cli, ["run", str(_timer_scenario(tmp_path, events + ["advance: PT1S"]))])
    assert res.exit_code == 2, res.output
    assert ":105:" in res.output and "more than 365,000 days (1,000 years)" in res.output, res.output
    assert "Traceback" not in res.output
