"""Hostile inputs end in a diagnostic with a position — never a traceback,
never a hang (pytest-timeout guards each case)."""
from __future__ import annotations

import re

import pytest

import loopc

from conftest import HEADER as H


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


def _end_detail(detail: str) -> str:
    return (H + "input: {}\noutput: {}\nentry: f\nnodes:\n"
            "  - id: f\n    type: end\n    input: {x: {type: string, required: true}}\n"
            f"    end: {{status: failed, code: bad, detail: {detail}}}\nedges: []\n")


def _many_edges(n: int) -> str:
    return (H + "input: {}\noutput: {}\nentry: n0\nnodes:\n"
            "  - {id: n0, type: fork, fork: {branches: [a, b]}}\n"
            "  - {id: done, type: end, end: {status: succeeded}}\nedges:\n"
            + "".join(f"  - {{id: e{i}, from: {{node: n0, port: a}}, to: {{node: done}}}}\n" for i in range(n)))


_PLAN = (H + "input:\n  topic: {type: string, required: true}\noutput: {}\nentry: done\nnodes:\n"
         "  - {id: done, type: end, end: {status: succeeded}}\nedges: []\n")


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
    # added by the mutation-fuzzing pass
    "long_line": H + "entry: " + "a" * 500_000 + "\n",
    "edges_5000": _many_edges(5000),
    "and_chain_5000": _expr_nested(1).replace("(true)", " && ".join(["x"] * 5000)),
    "and_chain_under_8k": _expr_nested(1).replace("(true)", " && ".join(["input.x"] * 700)),
    "not_chain_3000": _expr_nested(1).replace("(true)", "!" * 3000 + "true"),
    "call_nesting_2000": _expr_nested(1).replace("(true)", "length(" * 2000 + "'a'" + ")" * 2000 + " > 0"),
    "template_64k": _end_detail('"' + ("{{ input.x }} " * 4700)[:65536] + '"'),
    "template_many_bad": _end_detail('"' + "{{ input.y }}" * 3000 + '"'),
    "template_many_open": _end_detail('"' + "{{" * 20000 + '"'),
    "template_nested_braces": _end_detail('"' + "{{ {{ }} }}" * 2000 + '"'),
    "huge_float": _PLAN.replace("type: string, required: true", "type: number, default: 1e400"),
    "huge_int": _PLAN.replace("type: string, required: true", "type: number, default: 99999999999999999999"),
    "huge_int_5000_digits": _PLAN.replace("type: string, required: true", "type: number, default: " + "9" * 5000),
    "huge_hex_5000_digits": _PLAN.replace("type: string, required: true", "type: number, default: 0x" + "f" * 5000),
    "huge_int_in_expression": _expr_nested(1).replace("(true)", "9" * 5000 + " > 1e400"),
    "unicode_id": _PLAN.replace("id: done", "id: dóne😀").replace("entry: done", "entry: dóne😀"),
    "unicode_key": _PLAN.replace("topic:", "tópic😀:"),
    "number_keys": H + "1: a\n2.5: b\n0x10: c\n",
    "bool_null_keys": H + "true: a\nnull: b\n~: c\n",
    "complex_key": H + "? [a, b]\n: c\n",
    "complex_key_too_deep": H + "? " + "[" * 100 + "]" * 100 + "\n: c\n",
    "line_separators": _PLAN.replace("\n", "\u2028"),
    "nel_in_plain_value": _PLAN.replace("type: end", "type: e\x85nd"),
    "bom_twice": "\ufeff\ufeff" + _PLAN,
    "bom_mid_document": _PLAN.replace("entry:", "\ufeffentry:"),
    "tagged_scalar": _PLAN.replace("required: true", 'required: !!bool "true"'),
    "flow_nesting_10000": H + "x: " + "{a: " * 10000 + "1" + "}" * 10000 + "\n",
    "many_unknown_keys": H + "".join(f"x{i}: 1\n" for i in range(5000)),
}


# codes whose findings are about the whole source and carry no position
NO_POSITION = {"LP1003", "LP1010", "LP1011"}


@pytest.mark.timeout(20)
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_is_diagnosed(name: str) -> None:
    res = loopc.check_source(HOSTILE[name])
    assert not res.ok
    assert res.diagnostics
    src = HOSTILE[name]
    text = src.decode("utf-8", "replace") if isinstance(src, bytes) else src
    n_lines = len(re.split(r"\r\n|\r|\n", text.lstrip("\ufeff")))
    for d in res.diagnostics:
        s = d.span
        if s is None:  # a finding about the whole source (too large, empty)
            assert d.code in NO_POSITION, d
            continue
        assert s.line >= 1 and s.column >= 1
        assert (s.end_line, s.end_column) >= (s.line, s.column)
        assert s.line <= n_lines + 1 and s.end_line <= n_lines + 1
        assert d.code != "LP5999", d.message


@pytest.mark.timeout(20)
@pytest.mark.parametrize("ending", ["\r\n", "\r"])
@pytest.mark.parametrize("bom", ["", "\ufeff"])
def test_line_endings_and_bom_keep_positions(ending: str, bom: str) -> None:
    """CRLF, old-Mac CR-only line endings and a BOM before the header check
    like the LF original, with the same positions."""
    base = _PLAN.replace("type: end, end", "type: ennd, end")
    def where(d: loopc.Diagnostic) -> tuple:  # offsets differ: CRLF is two code points
        return (d.code, d.span.line, d.span.column, d.span.end_line, d.span.end_column)

    want = [where(d) for d in loopc.check_source(base).diagnostics]
    assert want and loopc.check_source(bom + _PLAN.replace("\n", ending)).ok
    for src in (bom + base.replace("\n", ending), (bom + base.replace("\n", ending)).encode()):
        assert [where(d) for d in loopc.check_source(src).diagnostics] == want


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
