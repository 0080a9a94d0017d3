"""The artifact verifier (docs/ir.md "The verifier"): every artifact the
compiler emits verifies; each kind of semantically broken artifact — with a
correct digest, so only the whole-artifact rules can catch it — is rejected
with a precise pointer; mutations of goldens are rejected or verify, and a
verified artifact's instruction trees evaluate raising only EvaluationError."""
from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from loopc.ir import decode, evaluate, verify

from loopc.pipeline import compile_source
from loopc.ir.canonical import canonical_bytes
from loopc.ir.decoder import DecodeError
from loopc.ir.evaluator import EvaluationError
from loopc.ir.verifier import Violation, VerifyResult

from conftest import ROOT, artifact_node, golden_artifact, seal
import golden_ir as G  # tools/, on sys.path by conftest


_load, _seal, _node = golden_artifact, seal, artifact_node


def _edge(d: dict[str, Any], eid: str) -> dict[str, Any]:
    return next(e for e in d["plan"]["edges"] if e["id"] == eid)


def _rejected(d: dict[str, Any], code: str, pointer: str | None = None, contains: str = "") -> VerifyResult:
    res = verify(_seal(d))
    assert not res.ok, "expected a violation"
    assert res.artifact is not None  # decoding succeeded: a semantic rule caught it
    hits = [v for v in res.violations if v.code == code]
    assert hits, res.violations
    if pointer is not None:
        assert any(v.pointer == pointer for v in hits), hits
    assert any(contains in v.message for v in hits), hits
    return res


@pytest.mark.slow
def test_every_compiled_artifact_verifies() -> None:
    files = sorted({*ROOT.glob("golden/**/source.yaml"), *ROOT.glob("examples/*.yaml"),
                    *ROOT.glob("tests/fixtures/**/*.yaml")})
    compiled = 0
    for f in files:
        res = compile_source(f.read_bytes())
        if not res.ok:
            continue
        compiled += 1
        v = verify(res.bytes)
        assert v.ok and v.violations == (), (f, v.violations)
    assert compiled >= 100


def test_result_shape() -> None:
    raw = canonical_bytes(_load("send_message/sent_target"))
    res = verify(raw)
    assert res.ok and res.message.startswith("ok: loop.plan.artifact/v1 sha256:")
    assert res.artifact == decode(raw) and res.computed_digest == res.artifact.digest
    bad = verify(b"{}")
    assert not bad.ok and bad.artifact is None
    assert bad.violations == (Violation("/artifactVersion", bad.violations[0].message, "decode"),)


def test_stale_digest() -> None:
    d = _load("send_message/sent_target")
    d["plan"]["nodes"][0]["config"]["target"] = ["lit", "string", "#other"]
    res = verify(canonical_bytes(d))
    assert not res.ok and res.violations[0].code == "digest" and "digest mismatch" in res.message


# -- graph ------------------------------------------------------------------

def test_cycle_outside_a_loop() -> None:
    d = _load("loop/break")
    e = _edge(d, "e_down")  # decide.down → poll.continue, rerouted to check.in: a cycle without a loop port
    e["to"] = {"node": "check", "port": "in"}
    _node(d, "poll")["ports"]["target"][1]["edges"] = []
    _node(d, "check")["ports"]["target"][0]["edges"] = ["e_body", "e_down"]
    _rejected(d, "graph", contains="cycle")


def test_unreachable_node() -> None:
    d = _load("loop/break")
    d["plan"]["entry"]["node"] = "done"
    d["plan"]["entry"]["bind"] = {}
    res = _rejected(d, "graph", contains="not reachable")
    assert any(v.pointer.startswith("/plan/nodes/") for v in res.violations)


# -- scopes -----------------------------------------------------------------

def test_scope_naming_an_end_as_loop_owner() -> None:
    d = _load("loop/break")
    i = [n["id"] for n in d["plan"]["nodes"]].index("check")
    d["plan"]["nodes"][i]["scope"] = [{"kind": "loop", "owner": "done"}]
    _rejected(d, "scope", f"/plan/nodes/{i}/scope/0", "'done' (end) as loop owner")


def test_scope_declaration_without_the_join_naming_it() -> None:
    d = _load("failure/fail_branch")
    d["plan"]["scopes"][0]["join"] = None
    _rejected(d, "scope", contains="names join None")


def test_unknown_branch_in_a_scope_stack() -> None:
    d = _load("failure/fail_branch")
    i = [n["id"] for n in d["plan"]["nodes"]].index("left_msg")
    d["plan"]["nodes"][i]["scope"][0]["branch"] = "middle"
    _rejected(d, "scope", f"/plan/nodes/{i}/scope/0/branch", "'middle' is not a branch")


# -- dispositions -------------------------------------------------------------

def test_disposition_naming_a_non_fork_owner() -> None:
    d = _load("failure/fail_branch")
    i = [e["id"] for e in d["plan"]["edges"]].index("e_right_broken")
    d["plan"]["edges"][i]["disposition"]["owner"] = "right_ask"
    _rejected(d, "disposition", f"/plan/edges/{i}/disposition/owner", "'right_ask' (send_message)")


def test_disposition_naming_an_unknown_branch() -> None:
    d = _load("failure/fail_branch")
    i = [e["id"] for e in d["plan"]["edges"]].index("e_right_broken")
    d["plan"]["edges"][i]["disposition"]["branch"] = "nowhere"
    _rejected(d, "disposition", f"/plan/edges/{i}/disposition/branch", "'nowhere' is not a branch")


def test_fail_plan_inside_a_fork() -> None:
    d = _load("failure/fail_branch")
    i = [e["id"] for e in d["plan"]["edges"]].index("e_right_broken")
    d["plan"]["edges"][i]["disposition"] = {"action": "fail_plan"}
    _rejected(d, "disposition", f"/plan/edges/{i}/disposition/action", "inside fork 'split'")


# -- instruction trees ----------------------------------------------------------

def _announce(d: dict[str, Any]) -> dict[str, Any]:
    return _node(d, "announce")["config"]


def test_literal_typed_string_holding_an_object() -> None:
    d = _load("send_message/sent_target")
    _announce(d)["target"] = ["lit", "string", {"room": 1}]
    _rejected(d, "instr", "/plan/nodes/0/config/target/2", "does not hold a string value")


def test_ref_to_an_undeclared_field() -> None:
    d = _load("send_message/sent_target")
    _announce(d)["text"][3] = ["ref", "string", "input", "subject"]
    _rejected(d, "instr", "/plan/nodes/0/config/text/3/3", "'subject'")


def test_root_not_legal_in_its_context() -> None:
    d = _load("send_message/sent_target")
    _announce(d)["text"][3] = ["ref", "string", "output", "topic"]
    _rejected(d, "instr", "/plan/nodes/0/config/text/3/2", "'output' is not available here")
    d = _load("send_message/sent_target")
    d["plan"]["entry"]["bind"]["topic"] = ["ref", "string", "input", "topic"]
    _rejected(d, "instr", "/plan/entry/bind/topic/2", "'input' is not available here")


def test_and_over_strings() -> None:
    d = _load("wait/condition_timeout")
    i = [n["id"] for n in d["plan"]["nodes"]].index("hold")
    d["plan"]["nodes"][i]["config"]["condition"] = [
        "and", "boolean", ["lit", "string", "a"], ["lit", "string", "b"]]
    res = _rejected(d, "instr", f"/plan/nodes/{i}/config/condition/2", "takes booleans")
    assert any(v.pointer.endswith("/condition/3") for v in res.violations)


def test_comparison_not_typed_boolean() -> None:
    d = _load("wait/condition_timeout")
    i = [n["id"] for n in d["plan"]["nodes"]].index("hold")
    d["plan"]["nodes"][i]["config"]["condition"][1] = "string"
    _rejected(d, "instr", f"/plan/nodes/{i}/config/condition/1", "yields a boolean")


# -- binds and contracts ----------------------------------------------------------

def test_bind_to_an_undeclared_field() -> None:
    d = _load("send_message/sent_target")
    d["plan"]["edges"][0]["bind"]["extra"] = ["lit", "string", "x"]
    _rejected(d, "bind", "/plan/edges/0/bind/extra", "not a field of the input of 'done'")
    d = _load("send_message/sent_target")
    d["plan"]["entry"]["bind"]["topik"] = ["ref", "string", "run.input", "topic"]
    _rejected(d, "bind", "/plan/entry/bind/topik")


def test_bind_of_the_wrong_type() -> None:
    d = _load("send_message/sent_target")
    d["plan"]["entry"]["bind"]["topic"] = ["lit", "number", 3]
    _rejected(d, "bind", "/plan/entry/bind/topic", "number value cannot be bound")


def test_ill_typed_contract() -> None:
    d = _load("send_message/sent_target")
    d["plan"]["input"]["topic"]["default"] = {"not": "a string"}
    _rejected(d, "contract", "/plan/input/topic/default", "does not fit type string")
    d = _load("send_message/sent_target")
    d["plan"]["input"]["kind"] = {"type": "enum", "required": False, "values": ["a", "a"], "default": "b"}
    res = _rejected(d, "contract", "/plan/input/kind/values", "unique")
    assert any(v.pointer == "/plan/input/kind/default" for v in res.violations)


# -- decoder hardening ---------------------------------------------------------------

@pytest.mark.parametrize("where", ["node", "edge", "state", "code"])
def test_trailing_newline_in_identifiers_is_rejected(where: str) -> None:
    d = _load("failure/fail_branch")
    if where == "node":
        d["plan"]["entry"]["node"] = d["plan"]["entry"]["node"] + "\n"
    elif where == "edge":
        d["plan"]["edges"][0]["id"] += "\n"
    elif where == "state":
        d["plan"]["nodes"][0]["effects"]["reads"] = ["done\n"]
    else:
        _node(d, "right_broken")["config"]["code"] += "\n"
    res = verify(_seal(d))
    assert not res.ok and res.violations[0].code == "decode"


@pytest.mark.parametrize("text", [
    '{"artifactVersion": "loop.plan.artifact/v' + "9" * 5000 + '"}',
    '{"artifactVersion": "loop.plan.artifact/v1", "compilerVersion": "loop.plan.compiler/v' + "1" * 5000 + '"}',
    '{"n": ' + "7" * 5000 + '}',
    '{"n": -' + "7" * 4400 + '}',
])
def test_huge_numbers_are_decode_errors(text: str) -> None:
    with pytest.raises(DecodeError):
        decode(text.encode())
    res = verify(text.encode())
    assert not res.ok and res.violations[0].code == "decode"


# -- mutation property ------------------------------------------------------------------

def _leaves(v: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = []
    stack = [(v, path)]
    while stack:
        x, p = stack.pop()
        if isinstance(x, dict):
            stack.extend((y, p + (k,)) for k, y in x.items())
        elif isinstance(x, list):
            stack.extend((y, p + (i,)) for i, y in enumerate(x))
        else:
            out.append(p)
    return out


_POOL: list[Any] = [None, True, False, 0, 1, -1, 2.5, "", "x", "done", "split", "right", "left", "in", "failed",
                    "fail_plan", "fail_branch", "loop", "fork", "string", "number", "boolean", "array<string>",
                    "object", "unknown", "input", "output", "run.state", "P" + "9" * 50 + "D", {}, [],
                    ["lit", "string", {}], ["and", "boolean", ["lit", "string", "a"], ["lit", "boolean", True]]]


def _set(d: Any, path: tuple[Any, ...], value: Any) -> None:
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value


def _env_for(art: Any) -> dict[str, Any]:
    return {"run.input": {}, "run.state": {}, "input": {}, "output": {}, "branches": {}, "winner": {},
            "loop": {"iteration": 1, "state": {}}, "item": {}, "items": []}


#: mutation rounds: every golden at least this many times, and no fewer than
#: ``_MIN_MUTANTS`` mutants in all; sampling goes on (up to ``_MAX_MUTANTS``)
#: until ``_WANT_VERIFIED`` changed mutants have verified (about 1 in 30 does)
_MIN_ROUNDS, _MIN_MUTANTS, _MAX_MUTANTS, _WANT_VERIFIED = 6, 240, 4000, 8


def test_mutated_goldens_are_rejected_or_verify_and_evaluate_safely() -> None:
    """One or two leaves of a golden artifact replaced from ``_POOL`` and the
    digest re-sealed, so the semantic rules see the mutant: ``verify`` never
    raises; a rejection names a pointer and a message for each violation; a
    mutant that verifies evaluates every instruction raising only
    ``EvaluationError``; a mutant equal to its golden verifies.

    Not vacuous, whatever the number of goldens: the goldens are mutated in
    turn, each mutant from its own seed (golden path, round), so adding a
    golden adds mutants without changing the others; most mutants are
    rejected, and sampling goes on until ``_WANT_VERIFIED`` mutants that
    differ from their golden have verified and been evaluated."""
    cases = list(G.cases())
    outcomes = {"rejected": 0, "verified": 0, "unchanged": 0}
    n = 0
    while n < max(_MIN_MUTANTS, _MIN_ROUNDS * len(cases)) or outcomes["verified"] < _WANT_VERIFIED:
        if n >= _MAX_MUTANTS:
            break
        case = cases[n % len(cases)]
        rnd = random.Random(f"20261201/{case.relative_to(G.GOLDEN).as_posix()}/{n // len(cases)}")
        n += 1
        golden = json.loads((case / "expected.json").read_text(encoding="utf-8"))
        d = copy.deepcopy(golden)
        leaves = [p for p in _leaves(d["plan"]) if p]
        for _k in range(rnd.choice((1, 1, 2))):
            _set(d["plan"], rnd.choice(leaves), copy.deepcopy(rnd.choice(_POOL)))
        changed = json.dumps(d, sort_keys=True) != json.dumps(golden, sort_keys=True)  # true != 1 here
        try:
            raw = _seal(d)
        except Exception:  # noqa: BLE001 - some mutations have no canonical form; the decoder sees them raw
            raw = json.dumps(d).encode()
        res = verify(raw)  # never raises
        assert isinstance(res, VerifyResult)
        if not changed:
            assert res.ok, (case.name, res.violations)
            outcomes["unchanged"] += 1
            continue
        if not res.ok:
            assert res.violations and all(isinstance(v.pointer, str) and v.message for v in res.violations)
            outcomes["rejected"] += 1
            continue
        outcomes["verified"] += 1
        env = _env_for(res.artifact)
        for _, instr in res.artifact.instrs():
            try:
                evaluate(instr, env)
            except EvaluationError:
                pass
    assert outcomes["verified"] >= _WANT_VERIFIED, (n, outcomes)
    assert outcomes["rejected"] >= n // 2, (n, outcomes)


def test_verify_never_raises_on_truncations() -> None:
    raw = canonical_bytes(_load("failure/fail_branch"))
    for n in range(0, len(raw), max(1, len(raw) // 60)):
        assert not verify(raw[:n]).ok
    assert not verify(raw.replace(b'"split"', b'"spl\\u0000it"')).ok


def _cli(args: list[str]) -> Any:
    from click.testing import CliRunner

    from loopc.cli.main import cli

    return CliRunner().invoke(cli, args)


def test_cli_lists_violations_and_refuses_special_files(tmp_path: Path) -> None:
    import os

    d = _load("failure/fail_branch")
    i = [e["id"] for e in d["plan"]["edges"]].index("e_right_broken")
    d["plan"]["edges"][i]["disposition"]["owner"] = "right_ask"
    d["plan"]["input"]["oops"] = {"type": "number", "required": False, "default": "NaN"}
    p = tmp_path / "a.json"
    p.write_bytes(_seal(d))
    r = _cli(["verify", str(p)])
    assert r.exit_code == 1
    assert "[disposition]" in r.output and "[contract]" in r.output
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    r = _cli(["verify", str(fifo)])
    assert r.exit_code == 2 and "FIFO" in r.output
    r = _cli(["verify", "/dev/zero"])
    assert r.exit_code == 2 and "device" in r.output
    r = _cli(["verify", str(tmp_path)])
    assert r.exit_code == 2 and "directory" in r.output


def test_cli_read_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from loopc.ir import verifier

    monkeypatch.setattr(verifier, "MAX_ARTIFACT_FILE_BYTES", 1000)
    p = tmp_path / "big.json"
    p.write_bytes(b" " * 2000 + canonical_bytes(_load("send_message/sent_target")))
    r = _cli(["verify", str(p)])
    assert r.exit_code == 1 and "larger than 1000 bytes" in r.output


def test_pretty_artifact_verifies() -> None:
    raw = canonical_bytes(_load("fork/join_all"))
    pretty = json.dumps(json.loads(raw), indent=2, sort_keys=True).encode()
    assert verify(pretty).ok

