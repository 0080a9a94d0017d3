"""The conformance kit against hostile runtimes (issue 21 finding 9, issue 23
"The kit"; docs/conformance.md#checking-another-runtime): bounded replies in
time and size, shapes checked, values compared with JSON types, every
divergence reported with a JSON pointer, usage errors on one line."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopc.cli.main import cli
from loopc.conformance import SCENARIO_DIR as GOLDEN_DIR
from loopc.interpreter.jsondiff import diff, json_equal, pointer_token
from loopc.interpreter.kitio import RuntimeError_, parse_reply, parse_size

HOSTILE = Path(__file__).resolve().parent / "tools" / "hostile_runtime.py"
TIMER = os.path.join(GOLDEN_DIR, "timer_due.yaml")


def _conform(*args: str, mode: str | None = None, runtime: str | None = None) -> tuple[int, str, str]:
    rt = runtime if runtime is not None else f"{sys.executable} {HOSTILE} {mode}"
    res = CliRunner().invoke(cli, ["conform", "--runtime", rt, *args])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, res.stdout, res.stderr


def _json(*args: str, mode: str) -> dict:
    code, out, _ = _conform("--format", "json", *args, mode=mode)
    assert code == 1, out
    return json.loads(out)["scenarios"][0]


# ---------------------------------------------------------------- time and size bounds

@pytest.mark.timeout(60)  # a hang guard, not a speed test
@pytest.mark.slow
def test_half_a_line_then_silence_is_stopped_at_the_timeout() -> None:
    sc = _json("--timeout", "5", TIMER, mode="half_line")
    assert sc["conforms"] is False
    assert "no complete answer to report within 5 s" in sc["divergence"]


@pytest.mark.timeout(60)
@pytest.mark.slow
def test_a_runtime_that_stops_answering_is_stopped_and_the_next_scenario_gets_a_fresh_one() -> None:
    code, out, _ = _conform("--timeout", "5", TIMER, TIMER, mode="mute_after_load")
    assert code == 1 and out.count("no complete answer to event") == 2, out


@pytest.mark.timeout(60)
def test_an_endless_reply_line_is_refused_at_the_size_limit() -> None:
    sc = _json("--reply-limit", "1MiB", TIMER, mode="endless")
    assert "longer than 1,048,576 bytes" in sc["divergence"]


@pytest.mark.parametrize("mode, words", [
    ("deep", "nested deeper than 300"),
    ("nan", "not valid JSON"),
    ("huge_int", "an integer of 5,000 digits is beyond the IEEE double range"),
    ("not_utf8", "not UTF-8"),
])
@pytest.mark.slow
def test_replies_outside_i_json_are_divergences(mode: str, words: str) -> None:
    sc = _json(TIMER, mode=mode)
    assert words in sc["divergence"], sc


def test_non_object_journal_records_are_divergences_not_crashes() -> None:
    sc = _json(TIMER, mode="non_object_records")
    msgs = [d["message"] for d in sc["divergences"]]
    assert any("journal record 1: expected an object" in m and "runtime number 1" in m for m in msgs), msgs
    assert any("journal record 3: expected an object" in m and "runtime null" in m for m in msgs), msgs


# ---------------------------------------------------------------- JSON types

def test_true_for_every_1_does_not_conform() -> None:
    sc = _json(TIMER, mode="ones_as_true")
    d = sc["divergences"][0]
    assert d["at"] == "/journal/0/seq" and d["expected"] == 1 and d["runtime"] is True, d
    assert "expected number 1, runtime boolean true" in d["message"]


def test_applied_as_a_number_does_not_conform() -> None:
    sc = _json(TIMER, mode="applied_as_int")
    assert sc["divergences"][0]["at"] == "/events/0/applied"
    assert "runtime applied=number 1" in sc["divergence"]


def test_integers_reported_as_doubles_conform() -> None:
    code, out, _ = _conform(TIMER, mode="ints_as_floats")
    assert code == 0, out


# ---------------------------------------------------------------- every divergence, field level

def test_every_divergence_is_reported_with_its_pointer() -> None:
    sc = _json("--no-crash-variants", TIMER, mode="two_wrong_fields")
    ats = [d["at"] for d in sc["divergences"]]
    last = sc["records"] - 1
    from loopc.interpreter.runner import run_file

    ref = run_file(TIMER)
    assert not isinstance(ref, list)
    visits = [f"/visits/{n}" for n in ref.visits]  # the runtime reports none: one divergence per node
    assert ats == ["/journal/0/at", f"/journal/{last}/kind", *visits], ats
    assert sc["divergences"][0]["expected"] == "2026-01-01T00:00:00Z"


def test_an_extra_record_is_one_divergence_not_a_shifted_tail() -> None:
    sc = _json("--no-crash-variants", TIMER, mode="extra_record")
    assert len(sc["divergences"]) == 1, sc["divergences"]
    assert sc["divergences"][0]["at"] == "/journal/2"
    assert "not in the reference journal" in sc["divergence"]


# ---------------------------------------------------------------- usage errors

@pytest.mark.parametrize("runtime, words", [
    ("python -m 'unterminated", "No closing quotation"),
    ("   ", "the command line is empty"),
])
def test_a_runtime_that_is_not_a_command_line_is_a_one_line_usage_error(runtime: str, words: str) -> None:
    code, out, err = _conform(TIMER, runtime=runtime)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("loopc: --runtime:") and words in err, err


@pytest.mark.parametrize("opt", [["--timeout", "0"], ["--timeout", "nan"], ["--reply-limit", "lots"],
                                 ["--reply-limit", "0"]])
def test_bad_bounds_are_one_line_usage_errors(opt: list[str]) -> None:
    code, out, err = _conform(*opt, TIMER, runtime=f"{sys.executable} -m loopc.interpreter.protocol")
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"loopc: {opt[0]}:"), err


def test_a_scenario_integer_beyond_2_53_is_a_diagnostic_not_a_traceback(tmp_path: Path) -> None:
    plan = Path(GOLDEN_DIR) / "plans" / "switch_end.yaml"
    sc = tmp_path / "big.yaml"
    sc.write_text(f"plan: {plan}\ninput: {{level: 9007199254740993}}\nexpect: {{status: succeeded}}\n")
    code, out, err = _conform(str(sc), runtime=f"{sys.executable} -m loopc.interpreter.protocol")
    assert code == 2 and "Traceback" not in err
    assert f"{sc}:" in err and "9007199254740993" in err, err
    assert "1 malformed" in out


# ---------------------------------------------------------------- units

def test_parse_size() -> None:
    assert parse_size("65536") == 65536 and parse_size("64KiB") == 65536 and parse_size("1GiB") == 1 << 30
    for bad in ("", "-1", "1.5MiB", "1MB", "0"):
        with pytest.raises(ValueError):
            parse_size(bad)


def test_parse_reply_bounds() -> None:
    assert parse_reply(b'{"a": [1, 2.5, true, null]}') == {"a": [1, 2.5, True, None]}
    for bad in (b"[" * 5000, b"1e400", b"Infinity", b"-NaN", b'{"a": 1', b"\xfe"):
        with pytest.raises(RuntimeError_):
            parse_reply(bad)


def test_json_types() -> None:
    assert json_equal(1, 1.0) and json_equal({"a": [0]}, {"a": [-0.0]})
    assert not json_equal(True, 1) and not json_equal(1, True) and not json_equal(0, False)
    assert not json_equal(None, {}) and not json_equal([], {}) and not json_equal("1", 1)
    assert json_equal(2**53, 2**53 + 1)  # the same IEEE double
    assert diff({"a/b": {"~": 1}}, {"a/b": {"~": 2}}) == [("/a~1b/~0", 1, 2)]
    assert pointer_token("x/y~z") == "x~1y~0z"


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


PROFILE = dict(derandomize=True, deadline=None, database=None, max_examples=200,
               suppress_health_check=[HealthCheck.too_slow])


@settings(**PROFILE)
@given(_json_values)
def test_json_equal_is_reflexive_and_survives_a_round_trip(v: object) -> None:
    assert json_equal(v, v)
    assert json_equal(v, json.loads(json.dumps(v)))


@settings(**PROFILE)
@given(_json_values, _json_values)
def test_diff_is_empty_exactly_when_equal_and_symmetric_in_count(a: object, b: object) -> None:
    assert (diff(a, b) == []) == json_equal(a, b) == json_equal(b, a)
    assert len(diff(a, b)) == len(diff(b, a))


# ---------------------------------------------------------------- protocol 2: crash points, keys, verifier

CALLBACK = os.path.join(GOLDEN_DIR, "callback_basic.yaml")


def test_a_runtime_that_ignores_the_crash_point_is_caught() -> None:
    sc = _json("--no-verifier", CALLBACK, mode="ignores_crashes")
    d = sc["divergences"]
    assert [x["variant"] for x in d] == ["afterEffectSubmit"], d
    assert "submitted 1 time(s), expected 2" in d[0]["message"] and d[0]["at"] == "/deliveries"


def test_a_re_delivery_with_a_new_key_is_caught() -> None:
    sc = _json("--no-verifier", CALLBACK, mode="key_changes_on_redelivery")
    d = sc["divergences"][0]
    assert d["at"] == "/deliveries/1/key" and d["variant"] == "afterEffectSubmit", d
    assert "every submission of an effect carries the same key" in d["message"]


def test_the_crash_variant_can_be_turned_off() -> None:
    code, out, _ = _conform("--no-verifier", "--no-crash-variants", CALLBACK, mode="ignores_crashes")
    assert code == 0, out


def test_a_runtime_that_accepts_corrupt_artifacts_is_caught() -> None:
    code, out, _ = _conform("--format", "json", TIMER, mode="accepts_everything")
    assert code == 1
    doc = json.loads(out)
    assert doc["diverging"] == 0 and doc["verifier"]["accepted"] == 3, doc["verifier"]
    assert [c["case"] for c in doc["verifier"]["cases"]] == ["digest_mismatch", "unknown_version",
                                                             "semantically_corrupt"]


def test_the_reference_refuses_every_verifier_case_and_says_why() -> None:
    from loopc.interpreter.conform import verifier_cases
    from loopc.interpreter.protocol import Session
    from loopc.interpreter.runner import prepare_file

    prep = prepare_file(TIMER)
    assert not isinstance(prep, list)
    whys = []
    for _case, _what, text in verifier_cases(prep.artifact_bytes):
        got = Session().load({"protocol": 2, "artifact": text, "input": {}})
        assert got["ok"] is False, got
        whys.append(got["error"])
    assert "digest mismatch" in whys[0] and "unsupported artifactVersion" in whys[1] and "does not enter port" in whys[2]


def test_a_load_reply_without_the_protocol_version_diverges() -> None:
    sc = _json("--no-verifier", "--no-crash-variants", TIMER, mode="protocol_v1")
    assert sc["divergences"][0]["message"] == ("load reply: not as the protocol schema says (loadReply): "
                                               "'protocol' is a required property")


def test_the_reference_refuses_another_protocol_version() -> None:
    from loopc.interpreter.protocol import Session

    for v in (None, 1, 3, "2"):
        req = {"artifact": "{}", "input": {}} if v is None else {"protocol": v, "artifact": "{}", "input": {}}
        got = Session().load(req)
        assert got["ok"] is False and "this runtime speaks 2" in got["error"], got
