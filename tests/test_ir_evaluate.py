"""The instruction evaluator (loopc.ir.evaluator) on compiled expressions."""
from __future__ import annotations

import pytest

from loopc.ir.evaluator import EvaluationError, evaluate, render


def L(v: object, t: str = "unknown") -> list:
    return ["lit", t, v]


def R(t: str, root: str, *path: str) -> list:
    return ["ref", t, root, *path]


ENV = {
    "input": {"name": "report.md", "n": 3, "tags": ["a", "b"], "wait": "PT60S", "opt": None,
              "at": "2024-05-01T10:00:00+02:00", "obj": {"deep": {"x": 1}}},
    "run.state": {"ready": True},
    "loop": {"iteration": 2, "state": {"draft": "d"}},
}


@pytest.mark.parametrize("instr,expected", [
    (L(1, "number"), 1),
    (R("string", "input", "name"), "report.md"),
    (R("unknown", "input", "obj", "deep", "x"), 1),
    (R("unknown", "input", "obj", "missing", "x"), None),
    (R("number", "loop", "iteration"), 2),
    (["eq", "boolean", R("duration", "input", "wait"), L("PT1M", "duration")], True),
    (["ne", "boolean", R("string", "input", "name"), L("x", "string")], True),
    (["lt", "boolean", R("number", "input", "n"), L(10, "number")], True),
    (["ge", "boolean", R("datetime", "input", "at"), L("2024-05-01T08:00:00Z", "datetime")], True),
    (["gt", "boolean", R("datetime", "input", "at"), L("2024-05-01T08:00:00Z", "datetime")], False),
    (["le", "boolean", L("b", "string"), L("a", "string")], False),
    (["in", "boolean", L("a", "string"), R("array<string>", "input", "tags")], True),
    (["contains", "boolean", R("string", "input", "name"), L(".md", "string")], True),
    (["contains", "boolean", R("array<string>", "input", "tags"), L("c", "string")], False),
    (["startsWith", "boolean", R("string", "input", "name"), L("rep", "string")], True),
    (["endsWith", "boolean", R("string", "input", "name"), L(".txt", "string")], False),
    (["length", "number", R("string", "input", "name")], 9),
    (["length", "number", L(["é", "ü"], "array<string>")], 2),
    (["not", "boolean", R("boolean", "run.state", "ready")], False),
    (["and", "boolean", L(True, "boolean"), L(False, "boolean"), ["not", "boolean", L(None, "null")]], False),
    (["or", "boolean", L(False, "boolean"), R("boolean", "run.state", "ready")], True),
    (["eq", "boolean", R("string", "input", "opt"), L(None, "null")], True),
    (["eq", "boolean", L(1, "number"), L(1.0, "number")], True),
    (["eq", "boolean", L(True, "unknown"), L(1, "unknown")], False),
    (["template", "string", L("n="), R("number", "input", "n"), L(" ok="), L(True, "boolean"),
      L(" x="), L(1.5e21, "number"), L(" none="), L(None, "null")], "n=3 ok=true x=1.5e+21 none=null"),
    (["array", "array<string>", R("string", "input", "name"), L("z", "string")], ["report.md", "z"]),
    (["object", "object", "a", R("number", "input", "n"), "b", L([1], "array<number>")], {"a": 3, "b": [1]}),
])
def test_evaluate(instr: list, expected: object) -> None:
    assert evaluate(instr, ENV) == expected


def test_short_circuit_skips_failing_operands() -> None:
    boom = R("unknown", "item", "key")  # root not available: would raise
    assert evaluate(["and", "boolean", L(False, "boolean"), boom], ENV) is False
    assert evaluate(["or", "boolean", L(True, "boolean"), boom], ENV) is True
    with pytest.raises(EvaluationError, match="not available"):
        evaluate(["and", "boolean", L(True, "boolean"), boom], ENV)


def test_errors() -> None:
    with pytest.raises(EvaluationError):
        evaluate(R("unknown", "input", "name", "x"), ENV)
    with pytest.raises(EvaluationError):
        evaluate(["lt", "boolean", L(1, "unknown"), L("a", "unknown")], ENV)
    with pytest.raises(EvaluationError):
        evaluate(["eq", "boolean", L("P1X", "duration"), L("PT1S", "duration")], ENV)
    with pytest.raises(EvaluationError):
        evaluate({"op": "lit"}, ENV)  # type: ignore[arg-type]


def test_deep_trees_do_not_recurse() -> None:
    expr: list = L(True, "boolean")
    for _ in range(5000):
        expr = ["not", "boolean", expr]
    assert evaluate(expr, ENV) is True


def test_render() -> None:
    assert render(0.1) == "0.1" and render(10.0) == "10" and render("x") == "x"
    assert render({"b": 1, "a": 2}) == '{"a":2,"b":1}'


def test_evaluates_compiled_golden_expressions() -> None:
    import json
    from pathlib import Path

    art = json.loads((Path(__file__).resolve().parents[1] / "golden/switch/expressions/expected.json").read_text())
    node = next(n for n in art["plan"]["nodes"] if n["id"] == "classify")
    env = {"input": {"name": "notes.md", "score": 50, "wait_for": "PT2H", "due": "2024-06-01T00:00:00Z",
                     "owner": "mem_ana"}, "run.state": {"attempts": 0}}
    ports = [c["port"] for c in node["config"]["cases"] if evaluate(c["when"], env)]
    assert ports == ["renamed", "slow"]
