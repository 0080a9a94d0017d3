"""The artifact budget with its real limits (seed 004 §3.2): plans within
every authoring budget whose artifact would still be too large.

LP5006 (envelope nesting) and LP5007 (expression nesting) cannot be reached
from a source within the authoring budgets — expression nesting 64 plus
constructor nesting 32 stay below 128, and one instruction level is one JSON
level — so they are exercised with reduced limits in ``tests/test_ir.py``.
"""
from __future__ import annotations

from loopc.pipeline import compile_source

from conftest import HEADER as H


def wide_switch(n_ports: int, fields: str) -> str:
    """A first_match switch whose input contract (``fields``, YAML lines at
    indent 6) is copied onto each of its ``n_ports`` + 1 ports."""
    cases = "".join(f"        - {{port: p{i}, when: \"input.f0 == 'v{i}'\"}}\n" for i in range(n_ports))
    edges = "".join(
        f"  - {{id: e{i}, from: {{node: route, port: p{i}}}, to: {{node: done}}, bind: {{}}}}\n"
        for i in range(n_ports))
    return (H + "input: {}\noutput: {}\nentry: route\nnodes:\n"
            "  - id: route\n    type: switch\n    input:\n" + fields +
            "    switch:\n      mode: first_match\n      cases:\n" + cases + "      default: other\n"
            "  - id: done\n    type: end\n    end: {status: succeeded}\n"
            "  - id: failed\n    type: end\n    end: {status: failed, code: unmatched}\n"
            "edges:\n" + edges +
            "  - {id: e_other, from: {node: route, port: other}, to: {node: failed}, bind: {}}\n")


def codes(src: str) -> set[str]:
    """Budget codes of a compile; the projection (LP5001–LP5004) already runs
    in ``check_source`` so that validation and publish agree (seed 004 §2.2),
    and ``loopc check`` reports the same codes as ``compile``."""
    res = compile_source(src)
    check_codes = {d.code for d in res.check.errors}
    assert check_codes <= {"LP5001", "LP5002", "LP5003", "LP5004"}, [
        (d.code, d.message) for d in res.check.errors][:3]
    assert check_codes <= {d.code for d in res.errors}
    return {d.code for d in res.errors}


def test_schema_fields_lp5001() -> None:
    fields = "".join(f"      f{i}: {{type: string}}\n" for i in range(170))
    assert codes(wide_switch(100, fields)) == {"LP5001"}
    assert codes(wide_switch(20, fields)) == set()


def test_materialized_bytes_lp5004() -> None:
    desc = "d" * 200_000
    fields = f"      f0: {{type: string, description: {desc}}}\n"
    assert codes(wide_switch(60, fields)) == {"LP5004"}


def test_canonical_size_lp5005() -> None:
    desc = "d" * 100_000
    fields = f"      f0: {{type: string, description: {desc}}}\n"
    assert codes(wide_switch(90, fields)) == {"LP5005"}
    assert codes(wide_switch(60, fields)) == set()


def test_expression_instructions_lp5002() -> None:
    template = "{{ input.a }}" * 5_000
    nodes = "".join(
        f"  - id: m{i}\n    type: send_message\n    input: {{a: {{type: string}}}}\n"
        f"    sendMessage: {{target: '#ops', completion: sent, text: \"{template}\"}}\n" for i in range(7))
    edges = "".join(
        f"  - {{id: e{i}, from: {{node: m{i}, port: completed}}, to: {{node: {f'm{i + 1}' if i < 6 else 'done'}}}}}\n"
        for i in range(7))
    src = (H + "input: {}\noutput: {}\nentry: m0\nnodes:\n" + nodes +
           "  - id: done\n    type: end\n    end: {status: succeeded}\nedges:\n" + edges)
    assert codes(src) == {"LP5002"}
