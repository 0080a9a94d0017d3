"""Hostile inputs end in a diagnostic with a position — never a traceback,
never a hang (pytest-timeout guards each case)."""
from __future__ import annotations

import pytest

import loopc

H = "apiVersion: loop.plan/v1\nkind: PlanVersion\n"


def _plan_with_nodes(n: int) -> str:
    lines = [H + "input: {}\noutput: {}\nentry: n0\nnodes:"]
    for i in range(n):
        lines.append(f"  - {{id: n{i}, type: end, end: {{status: succeeded}}}}")
    lines.append("edges: []")
    return "\n".join(lines) + "\n"


def _expr_nested(depth: int) -> str:
    expr = "(" * depth + "true" + ")" * depth
    return (H + "input: {}\noutput: {}\nentry: s\nnodes:\n"
            "  - id: s\n    type: switch\n    switch:\n      mode: first_match\n"
            f"      cases:\n        - {{port: a, when: \"{expr}\"}}\n      default: b\n"
            "  - {id: done, type: end, end: {status: succeeded}}\n"
            "edges:\n"
            "  - {id: e1, from: {node: s, port: a}, to: {node: done}}\n"
            "  - {id: e2, from: {node: s, port: b}, to: {node: done}}\n")


HOSTILE = {
    "alias_bomb": H + "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
    "nesting_500_flow": H + "input: " + "[" * 500 + "]" * 500 + "\n",
    "nesting_500_block": H + "".join("  " * i + f"k{i}:\n" for i in range(500)),
    "binary": bytes(range(256)) * 40,
    "two_mib": H + "x: " + "a" * (2 * 1024 * 1024) + "\n",
    "empty": "",
    "empty_bytes": b"",
    "two_documents": H + "entry: a\n---\n" + H,
    "six_hundred_nodes": _plan_with_nodes(600),
    "expression_nesting_200": _expr_nested(200),
    "nul_byte": H + "entry: \x00\n",
    "utf16": (H + "entry: a\n").encode("utf-16"),
    "bom_only": "\ufeff",
    "tabs": H + "input:\n\tx: 1\n",
    "crlf": H.replace("\n", "\r\n") + "entry: [\r\n",
    "lone_surrogate": H + "entry: \ud800\n",
    "scalar_root": "just a string\n",
    "sequence_root": "- 1\n- 2\n",
    "huge_scalar_count": H + "x: [" + ",".join(["1"] * 110_000) + "]\n",
    "deep_literal": H + "input: {}\noutput: {}\nentry: d\nnodes:\n  - id: d\n    type: end\n"
    "    end: {status: succeeded}\nedges: []\nstate: {x: {type: object, default: "
    + "{a: " * 40 + "1" + "}" * 40 + "}}\n",
    "long_expression": _expr_nested(1).replace("(true)", "true" + " && true" * 3000),
}


@pytest.mark.timeout(20)
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_is_diagnosed(name: str) -> None:
    res = loopc.check_source(HOSTILE[name])
    assert not res.ok
    assert res.diagnostics
    for d in res.diagnostics:
        assert d.span.line >= 1 and d.span.column >= 1
        assert d.code != "LP5999", d.message


@pytest.mark.timeout(20)
def test_specific_budget_codes() -> None:
    codes = lambda s: {d.code for d in loopc.check_source(s).diagnostics}  # noqa: E731
    assert "LP1010" in codes(HOSTILE["two_mib"])
    assert "LP1011" in codes(HOSTILE["nesting_500_flow"])
    assert "LP1011" in codes(HOSTILE["nesting_500_block"])
    assert "LP1006" in codes(HOSTILE["alias_bomb"])
    assert "LP1002" in codes(HOSTILE["binary"])
    assert "LP1003" in codes(HOSTILE["empty"])
    assert "LP1004" in codes(HOSTILE["two_documents"])
    assert "LP1012" in codes(HOSTILE["huge_scalar_count"])
