"""Schema pass (seed 004 §5 pass 2; syntax sheet §1–§5, §7): fixtures, the
typed model it builds, diagnostics and fixes, wire forms, budgets, speed.

The pass is exercised directly (``yamlload.load`` + ``schema.build_plan``) so
these tests do not depend on the later passes; only LP2xxx findings count.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopc import codes
from loopc.compiler import schema, wireforms, yamlload
from loopc.compiler.model import (
    MISSING, End, Expr, FanOut, FieldSchema, Fork, Join, ListValue, Literal, Loop,
    MapValue, Plan, Ref, RequestApproval, SendMessage, SetVariable, Switch, Template, Wait,
)
from loopc.compiler.report import Reporter

FIXTURES = Path(__file__).parent / "fixtures" / "schema"
CASES = sorted(FIXTURES.glob("*.yaml"))
SCHEMA_CODES = [c for c in codes.all_codes() if c.code.startswith("LP2")]
from conftest import HEADER as H


def build(src: str | bytes) -> tuple[Plan | None, Reporter]:
    r = Reporter()
    doc = yamlload.load(src, r)
    plan = schema.build_plan(doc, r) if doc is not None and doc.root is not None else None
    return plan, r


def found(r: Reporter) -> list[str]:
    return sorted(f"{d.span.line}:{d.span.column} {d.code}" for d in r.diagnostics if d.code.startswith("LP2"))


def lp2(r: Reporter) -> list[str]:
    return [d.code for d in r.diagnostics if d.code.startswith("LP2")]


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.yaml").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------
# fixtures and registry
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_fixture(path: Path) -> None:
    _, r = build(path.read_bytes())
    # this runs the schema pass alone: compare its (LP2xxx) findings; the full
    # pipeline's view of the same files is tests/test_fixtures.py
    want = sorted(l.strip() for l in path.with_suffix(".out").read_text().splitlines()
                  if l.strip() and l.split()[1].startswith("LP2"))
    assert found(r) == want, "\n".join(f"{d.span.line}:{d.span.column} {d.code} {d.message}" for d in r.diagnostics)
    assert not [d for d in r.diagnostics if d.code.startswith("LP1")], "fixtures must be valid YAML"


def test_every_schema_code_has_a_failing_fixture_and_a_near_miss() -> None:
    failing: set[str] = set()
    for out in FIXTURES.glob("*.out"):
        for line in out.read_text().splitlines():
            if line.strip() and line.split()[1].startswith("LP2"):
                failing.add(line.split()[1])
                assert (FIXTURES / f"{out.stem}_ok.yaml").exists() or out.stem.endswith("_ok")
    assert {c.code for c in SCHEMA_CODES} - failing == set()
    for p in CASES:
        if not p.stem.endswith("_ok"):
            ok_codes = [l.split()[1] for l in (FIXTURES / f"{p.stem}_ok.out").read_text().splitlines() if l.strip()]
            assert all(not c.startswith("LP2") for c in ok_codes), p.stem


@pytest.mark.parametrize("c", SCHEMA_CODES, ids=[c.code for c in SCHEMA_CODES])
def test_registry_example_and_fix(c: codes.Code) -> None:
    assert c.name.startswith(("schema.", "resource.")) and c.title and c.explanation
    if not c.example.startswith("<"):
        _, r = build(c.example)
        assert c.code in lp2(r), [(d.code, d.message) for d in r.diagnostics]
    plan, r = build(c.fixed)
    assert plan is not None and r.diagnostics == [], [(d.code, d.message) for d in r.diagnostics]


def test_every_code_used_by_the_pass_is_registered() -> None:
    import re

    # the pass and its parts (schema_readers, schema_contracts, schema_configs, ...)
    text = "".join(p.read_text(encoding="utf-8") for p in sorted(Path(schema.__file__).parent.glob("schema*.py")))
    used = set(re.findall(r'"(LP2\d{3})"', text))
    assert used == {c.code for c in SCHEMA_CODES}


# ---------------------------------------------------------------------------
# the model
# ---------------------------------------------------------------------------

def test_syntax_sheet_example_builds_the_full_model() -> None:
    sheet = Path(__file__).resolve().parents[2] / "shared" / "spec" / "syntax.md"
    text = sheet.read_text(encoding="utf-8") if sheet.exists() else None
    if text is None:
        pytest.skip("spec not available")
    src = text.split("## 6. Example")[1].split("```yaml\n")[1].split("```")[0]
    plan, r = build(src)
    assert r.diagnostics == []
    assert plan is not None and plan.entry == "ask"
    assert list(plan.input) == ["topic", "reviewer", "room"]
    assert plan.input["reviewer"].type == "agent" and plan.input["reviewer"].required
    assert plan.state == {} and list(plan.output) == ["verdict"]
    ask = plan.nodes["ask"]
    c = ask.config
    assert isinstance(c, SendMessage)
    assert c.completion == "callback" and c.target is None
    assert isinstance(c.scope, Ref) and c.scope.path == ("input", "room")
    assert isinstance(c.responder, Ref) and c.responder.text == "input.reviewer"
    assert isinstance(c.text, Template) and c.text.text == "Please review {{ input.topic }}"
    assert c.callback_output is not None
    assert c.callback_output["verdict"].values == ("approve", "reject")
    assert c.work_scope is MISSING and c.related_scopes is None and not c.has_work_items
    assert isinstance(plan.nodes["done"].config, End) and plan.nodes["done"].input is None
    e = plan.edges["e_done"]
    assert (e.from_node, e.from_port, e.to_node, e.to_port) == ("ask", "completed", "done", "in")
    assert isinstance(e.bind["verdict"], Ref)  # type: ignore[index]
    assert plan.malformed_nodes == frozenset() and plan.malformed_edges == frozenset()
    # every model object keeps its YAML node
    assert ask.src is not None and c.src is not None and e.src is not None
    assert c.scope.src.span.line == 18  # type: ignore[union-attr]


def test_every_node_type_is_modelled() -> None:
    plan, r = build(fixture("out_of_range_concurrency_ok"))
    assert r.diagnostics == [] and plan is not None
    fo = plan.nodes["dispatch"].config
    assert isinstance(fo, FanOut) and fo.max_concurrency == 64 and fo.failure_mode == "collect"
    assert isinstance(fo.items, Ref)
    sm = plan.nodes["plan"].config
    assert isinstance(sm, SendMessage) and sm.has_work_items and isinstance(sm.allowed_responders, Ref)
    assert isinstance(sm.work_scope, Ref)
    j = plan.nodes["collected"].config
    assert isinstance(j, Join) and j.fan_out_id == "dispatch" and j.fork_id is None and j.mode == "all"
    assert j.result["results"].items is not None and j.result["results"].items.type == "object"
    assert isinstance(j.merge["results"], Ref) and j.owner == "dispatch"
    assert plan.input["workers"].items.type == "agent"  # type: ignore[union-attr]
    assert plan.edges["e_item"].bind is not None and plan.edges["e_done"].bind is None

    plan, r = build(fixture("out_of_range_iterations_ok"))
    lp = plan.nodes["poll"].config  # type: ignore[union-attr]
    assert isinstance(lp, Loop) and lp.iterations == 1 and lp.mode == "counted" and lp.state == {} and lp.init == {}
    assert plan.edges["e_next"].to_port == "continue"  # type: ignore[union-attr]
    w = plan.nodes["nap"].config  # type: ignore[union-attr]
    assert isinstance(w, Wait) and isinstance(w.duration, Literal) and w.duration.value == "PT1M"
    assert w.condition is None and w.timeout is None

    plan, r = build(fixture("wait_neither_ok"))
    w = plan.nodes["nap"].config  # type: ignore[union-attr]
    assert isinstance(w.condition, Expr) and w.condition.text == "run.state.ready"
    assert isinstance(w.timeout, Literal)
    assert plan.state["ready"].default is False  # type: ignore[union-attr]

    plan, r = build(fixture("duplicate_port_ok"))
    s = plan.nodes["route"].config  # type: ignore[union-attr]
    assert isinstance(s, Switch) and s.mode == "first_match" and s.ports == ("urgent", "routine")
    assert isinstance(s.cases[0].when, Expr) and s.cases[0].when.text == "input.severity == 'high'"

    plan, r = build(fixture("duplicate_branch_ok"))
    f = plan.nodes["split"].config  # type: ignore[union-attr]
    assert isinstance(f, Fork) and f.branches == ("legal", "security")
    j = plan.nodes["both"].config  # type: ignore[union-attr]
    assert isinstance(j, Join) and j.fork_id == "split" and j.result == {} and j.merge == {}

    plan, r = build(fixture("invalid_error_code_ok"))
    a = plan.nodes["approve"].config  # type: ignore[union-attr]
    assert isinstance(a, RequestApproval) and isinstance(a.assignee, Template) and a.feedback_scope is None
    end = plan.nodes["rejected"].config  # type: ignore[union-attr]
    assert isinstance(end, End) and end.status == "failed" and end.code == "review.rejected_2"
    assert isinstance(end.detail, Template) and plan.nodes["rejected"].input is not None  # type: ignore[union-attr]

    plan, r = build(fixture("out_of_range_attempts_ok"))
    rt = plan.nodes["ask"].retry  # type: ignore[union-attr]
    assert rt is not None and (rt.max_attempts, rt.backoff) == (100, "PT5S")

    plan, r = build(fixture("related_scopes_empty_ok"))
    sm = plan.nodes["ask"].config  # type: ignore[union-attr]
    assert sm.work_scope is None and isinstance(sm.related_scopes, tuple) and isinstance(sm.related_scopes[0], Ref)

    plan, r = build(fixture("related_scopes_empty_literal_ok"))
    sm = plan.nodes["ask"].config  # type: ignore[union-attr]
    assert isinstance(sm.related_scopes, Ref) and sm.related_scopes.path == ("input", "context")

    plan, r = build(fixture("invalid_number_ok"))
    sv = plan.nodes["reset"].config  # type: ignore[union-attr]
    assert isinstance(sv, SetVariable) and sv.assign["score"].value == 1.5e300  # type: ignore[union-attr]


def _assign(value: str) -> tuple[object, Reporter]:
    src = (H + "input: {}\noutput: {}\nstate:\n  v: {type: object, default: {}}\nentry: s\nnodes:\n"
           f"  - id: s\n    type: set_variable\n    setVariable:\n      assign:\n        v: {value}\n"
           "  - id: done\n    type: end\n    end: {status: succeeded}\n")
    plan, r = build(src)
    if plan is None or "s" not in plan.nodes:
        return None, r
    return plan.nodes["s"].config.assign["v"], r  # type: ignore[union-attr]


@pytest.mark.parametrize("text,kind,check", [
    ("{ref: run.state.v}", Ref, lambda v: v.path == ("run", "state", "v")),
    ("{expr: \"length(input.x) > 2\"}", Expr, lambda v: v.text == "length(input.x) > 2"),
    ("{expr: true}", Expr, lambda v: v.text == "true"),
    ("{literal: {ref: not.a.ref}}", Literal, lambda v: v.verbatim and v.value == {"ref": "not.a.ref"}),
    ("{literal: \"{{ x }}\"}", Literal, lambda v: v.value == "{{ x }}"),
    ("\"Hi {{ input.n }}\"", Template, lambda v: v.text == "Hi {{ input.n }}"),
    ("plain words", Literal, lambda v: v.value == "plain words" and not v.verbatim),
    ("'5'", Literal, lambda v: v.value == "5"),
    ("5", Literal, lambda v: v.value == 5),
    ("010", Literal, lambda v: v.value == 10),
    ("yes", Literal, lambda v: v.value == "yes"),
    ("null", Literal, lambda v: v.value is None),
    ("[{ref: input.a}, x, 1]", ListValue, lambda v: isinstance(v.items[0], Ref) and v.items[1].value == "x"),
    ("{a: {ref: input.b}, b: 1}", MapValue, lambda v: isinstance(v.entries["a"], Ref) and list(v.entries) == ["a", "b"]),
    ("{}", MapValue, lambda v: v.entries == {}),
])
def test_value_expr_construction(text: str, kind: type, check) -> None:
    v, r = _assign(text)
    assert r.diagnostics == [] and isinstance(v, kind) and check(v), (v, r.diagnostics)


@pytest.mark.parametrize("text,code", [
    ("{ref: ''}", "LP2019"),
    ("{ref: 'a. b'}", "LP2019"),
    ("{ref: .a}", "LP2019"),
    ("{ref: [a]}", "LP2019"),
    ("{expr: [a]}", "LP2028"),
    ("{expr: {a: 1}}", "LP2028"),
    ("{ref: a, expr: b}", "LP2018"),
    ("[1, .nan]", "LP2017"),
    ("{literal: [-.inf]}", "LP2017"),
    ("9007199254740992", "LP2017"),
    ("{literal: -9007199254740992}", "LP2017"),
])
def test_value_expr_errors(text: str, code: str) -> None:
    v, r = _assign(text)
    assert v is None and lp2(r) == [code], [(d.code, d.message) for d in r.diagnostics]


def test_literal_budgets_at_their_edges() -> None:
    ok = "[" * 32 + "1" + "]" * 32
    v, r = _assign(ok)
    assert r.diagnostics == [] and isinstance(v, ListValue)
    v, r = _assign("[" * 33 + "1" + "]" * 33)
    assert lp2(r) == ["LP2094"]
    v, r = _assign("{literal: " + "[" * 33 + "1" + "]" * 33 + "}")
    assert lp2(r) == ["LP2094"]
    v, r = _assign("[" + ", ".join(["1"] * 8191) + "]")
    assert r.diagnostics == []
    v, r = _assign("[" + ", ".join(["1"] * 8192) + "]")
    assert lp2(r) == ["LP2095"]


# ---------------------------------------------------------------------------
# diagnostics: messages, fixes, related locations, malformed bookkeeping
# ---------------------------------------------------------------------------

def test_unknown_key_suggests_and_fixes() -> None:
    _, r = build(fixture("unknown_key_suggest"))
    (d,) = r.diagnostics
    assert "did you mean 'required'?" in d.message and d.fix is not None
    (edit,) = d.fix.edits
    assert edit.new_text == "required" and (edit.span.line, edit.span.column) == (4, 25)
    assert (edit.span.end_line, edit.span.end_column) == (4, 32)
    assert d.pointer == "/input/topic/requird"


def test_unknown_key_without_close_match_lists_allowed_keys() -> None:
    _, r = build(fixture("unknown_key_root"))
    (d,) = r.diagnostics
    assert d.fix is None and "allowed:" in d.message and "apiVersion" in d.message


@pytest.mark.parametrize("name,new_text", [
    ("api_version", "loop.plan/v1"),
    ("legacy_api_version", "loop.plan/v1"),
    ("kind", "PlanVersion"),
    ("legacy_kind", "PlanVersion"),
    ("legacy_inputs", "input"),
    ("invalid_choice", "sent"),
    ("unknown_field_type", "string"),
    ("unknown_node_type_suggest", "send_message"),
    ("wrong_config_key", "wait"),
    ("fan_out_join_mode", "all"),
    ("legacy_to_string", "{node: done}"),
    ("invalid_expr_mapping", "\"input.severity == 'high'\""),
    ("literal_only_wrapper", "3"),
])
def test_fixes_produce_the_near_miss(name: str, new_text: str) -> None:
    src = fixture(name)
    _, r = build(src)
    fixes = [d.fix for d in r.diagnostics if d.fix is not None]
    assert len(fixes) == 1 and fixes[0].edits[0].new_text == new_text
    fixed = apply_fix(src, fixes[0])
    _, r2 = build(fixed)
    assert lp2(r2) == [], [(d.code, d.message) for d in r2.diagnostics]


def apply_fix(src: str, fix) -> str:
    lines = src.split("\n")
    for e in sorted(fix.edits, key=lambda e: (e.span.line, e.span.column), reverse=True):
        start = sum(len(l) + 1 for l in lines[: e.span.line - 1]) + e.span.column - 1
        end = sum(len(l) + 1 for l in lines[: e.span.end_line - 1]) + e.span.end_column - 1
        src = src[:start] + e.new_text + src[end:]
        lines = src.split("\n")
    return src


def test_duplicate_node_reports_second_with_first_related_and_first_wins() -> None:
    src = (H + "input: {}\noutput: {}\nentry: done\nnodes:\n"
           "  - id: done\n    type: end\n    end: {status: succeeded}\n"
           "  - id: done\n    type: end\n    end: {status: failed, code: boom}\n")
    plan, r = build(src)
    (d,) = r.diagnostics
    assert d.code == "LP2030" and d.span.line == 10 and d.related[0].span.line == 7 and d.node == "done"
    assert plan is not None and plan.nodes["done"].config.status == "succeeded"  # type: ignore[union-attr]
    assert "done" not in plan.malformed_nodes


def test_malformed_nodes_and_edges_are_set_aside() -> None:
    src = (H + "input: {}\noutput: {}\nentry: ask\nnodes:\n"
           "  - id: ask\n    type: send_message\n    sendMessage: {text: hi, completion: sent}\n"
           "  - id: Bad\n    type: end\n    end: {status: succeeded}\n"
           "  - id: done\n    type: end\n    end: {status: succeeded}\n"
           "edges:\n"
           "  - {id: e1, from: {node: ask, port: completed}, to: {node: done}}\n"
           "  - {id: e2, from: {node: ask}, to: {node: done}}\n"
           "  - {id: e3, from: {node: ask, port: failed}, to: {node: done}, bind: []}\n")
    plan, r = build(src)
    assert plan is not None
    assert sorted(lp2(r)) == ["LP2006", "LP2012", "LP2014", "LP2040"]
    assert set(plan.nodes) == {"done"} and plan.malformed_nodes == {"ask", "Bad"}
    assert set(plan.edges) == {"e1"} and plan.malformed_edges == {"e2", "e3"}
    assert r.tainted_names("node") == {"ask", "Bad"} and r.tainted_names("edge") == {"e2", "e3"}
    by_code = {d.code: d for d in r.diagnostics}
    assert by_code["LP2040"].node == "ask" and by_code["LP2006"].edge == "e2"


@pytest.mark.parametrize("src", [
    "- a\n- b\n",
    "just a string\n",
    H + "input: {}\noutput: {}\nentry: x\n",
    H + "input: {}\noutput: {}\nentry: x\nnodes: {a: 1}\n",
])
def test_unmodellable_documents_return_none(src: str) -> None:
    plan, r = build(src)
    assert plan is None and lp2(r)


def test_missing_entry_still_models_the_plan() -> None:
    plan, r = build(fixture("missing_entry"))
    assert plan is not None and plan.entry == "" and "done" in plan.nodes and lp2(r) == ["LP2006"]


def test_root_contract_errors_keep_usable_fields() -> None:
    src = (H + "input:\n  a: {type: number, default: '5'}\n  b: {type: strng}\n  c: {type: array}\n"
           "  d: {type: enum, values: [x, x]}\noutput: {}\nstate:\n  s: {type: string}\n"
           "entry: done\nnodes:\n  - id: done\n    type: end\n    end: {status: succeeded}\n")
    plan, r = build(src)
    assert sorted(lp2(r)) == ["LP2020", "LP2021", "LP2023", "LP2024", "LP2026"]
    assert plan is not None and set(plan.input) == {"a", "d"}
    assert plan.input["a"].default is MISSING and plan.input["d"].values == ("x",)
    assert "s" in plan.state and "done" in plan.nodes


@pytest.mark.parametrize("cfg,codes_", [
    ("sendMessage: {target: '#a', text: hi, completion: sent, startThread: 'yes'}", ["LP2012"]),
    ("sendMessage: {target: '#a', text: hi, completion: sent, startThread: false}", []),
    ("sendMessage: {target: {ref: input.t}, text: hi, completion: sent}", ["LP2012"]),
    ("sendMessage: {target: '#a', text: hi, completion: sent, workScope: null}", ["LP2041"]),
    ("sendMessage: {target: '#a', text: hi, completion: callback, workScope: null}", []),
    ("sendMessage: {target: '#a', text: hi, completion: callback, workScope: null, relatedScopes: {ref: input.r}}", []),
    ("sendMessage: {target: '#a', text: hi, completion: callback, workScope: null, workItems: {allowed: 1}}",
     ["LP2006", "LP2007"]),
    ("sendMessage: {target: '#a', text: hi, completion: callback, callbackOutput: {workItems: {type: string}}}",
     ["LP2027"]),
])
def test_send_message_rules(cfg: str, codes_: list[str]) -> None:
    src = (H + "input: {}\noutput: {}\nentry: n\nnodes:\n  - id: n\n    type: send_message\n    "
           + cfg + "\n  - id: done\n    type: end\n    end: {status: succeeded}\n")
    _, r = build(src)
    assert sorted(lp2(r)) == codes_, [(d.code, d.message) for d in r.diagnostics]


@pytest.mark.parametrize("node,codes_", [
    ("type: loop\n    loop: {mode: counted, iterations: 10001}", ["LP2016"]),
    ("type: loop\n    loop: {mode: counted, iterations: 2.0}", ["LP2012"]),
    ("type: loop\n    loop: {mode: counted, iterations: true}", ["LP2012"]),
    ("type: loop\n    loop: {mode: while, iterations: 2}", ["LP2015"]),
    ("type: loop\n    loop: {mode: counted, iterations: \"{{ input.n }}\"}", ["LP2013"]),
    ("type: fan_out\n    fanOut: {items: {ref: input.w}, failureMode: fail_fast}", ["LP2015"]),
    ("type: fan_out\n    fanOut: {maxConcurrency: 0}", ["LP2006", "LP2016"]),
    ("type: join\n    join: {forkId: f, mode: any, merge: []}", ["LP2012"]),
    ("type: join\n    join: {forkId: {ref: input.f}, mode: all}", ["LP2013"]),
    ("type: switch\n    switch: {mode: all_match, cases: [{port: a, when: x}, {port: B, when: y}], default: c}",
     ["LP2014"]),
    ("type: switch\n    switch: {mode: all_match, cases: [{port: a}], default: c}", ["LP2006"]),
    ("type: switch\n    switch: {mode: all_match, cases: [{port: a, when: true}], default: c}", []),
    ("type: fork\n    fork: {branches: {ref: input.b}}", ["LP2013"]),
    ("type: fork\n    fork: {branches: {literal: [a, b]}}", ["LP2013"]),
    ("type: end\n    end: {status: {literal: succeeded}}", ["LP2013"]),
    ("type: wait\n    wait: {duration: PT5M}\n    retry: {maxAttempts: 2}", ["LP2006"]),
    ("type: wait\n    wait: {duration: PT5M}\n    retry: {maxAttempts: {ref: input.n}, backoff: PT1S}", ["LP2013"]),
    ("type: request_approval\n    requestApproval: {assignee: 5, summary: s}", ["LP2012"]),
    ("type: end\n    end: {status: failed, code: x, detail: 5}", ["LP2012"]),
    ("type: end\n    end: {status: failed, code: \"{{ input.code }}\"}", ["LP2013"]),
    ("type: end\n    end: {status: succeeded, detail: hi}\n    input: {}", ["LP2065", "LP2065"]),
    ("type: end\n    end: succeeded", ["LP2012"]),
    ("type: end\n    end: {status: succeeded}\n    onTimeout: x\n    default: y", ["LP2010", "LP2010"]),
    ("type: end\n    end: {status: succeeded}\n    wait: {duration: PT1S}", ["LP2032"]),
    ("type: wait", ["LP2033"]),
    ("type: 5\n    end: {status: succeeded}", ["LP2031"]),
    ("type: end\n    end: {status: succeeded}\n    label: 5", ["LP2012"]),
])
def test_node_rules(node: str, codes_: list[str]) -> None:
    src = (H + "input: {}\noutput: {}\nentry: n\nnodes:\n  - id: n\n    " + node
           + "\n  - id: done\n    type: end\n    end: {status: succeeded}\n")
    plan, r = build(src)
    assert sorted(lp2(r)) == codes_, [(d.code, d.message) for d in r.diagnostics]
    assert plan is not None and (("n" in plan.malformed_nodes) == bool(codes_))


# ---------------------------------------------------------------------------
# wire forms
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("fn,good,bad", [
    (wireforms.is_duration, ["PT30S", "P1D", "PT1M30S", "P2DT3H", "PT0.5S", "PT0S"],
     ["P", "PT", "P1DT", "P1Y", "P1W", "P1M", "PT1.S", "pt1s", "1h", "", 5]),
    (wireforms.is_datetime, ["2024-02-29T10:00:00Z", "2024-01-01T00:00:00.123+05:30", "2023-12-31t23:59:60z"],
     ["2023-02-29T10:00:00Z", "2024-01-01T10:00:00", "2024-01-01 10:00:00Z", "2024-13-01T00:00:00Z",
      "2024-01-01T24:00:00Z", "2024-01-01", 1]),
    (wireforms.is_channel, ["#release", "#a-b_c", "#0"], ["release", "#Release", "#", "#-a", None]),
    (wireforms.is_canonical_id, ["agt_backend", "mem_ana", "tsk_API-1", "a_" + "x" * 254],
     ["agt", "Agt_x", "_x", "agt_", "a_" + "x" * 255, "agt_a b", 3]),
    (wireforms.is_number, [0, -1, 1.5, 2**53 - 1, -(2**53 - 1), 1e308],
     [True, False, 2**53, float("nan"), float("inf"), "5", None]),
    (wireforms.is_scope, [{"kind": "task", "scopeId": "tsk_api"}, {"scopeId": "chn_a", "kind": "channel"}],
     [{"kind": "team", "scopeId": "tm_a"}, {"kind": "task"}, {"kind": "task", "scopeId": "tsk_a", "x": 1},
      {"kind": "task", "scopeId": "bad"}, "tsk_api", None]),
    (wireforms.is_target, ["#release", "dm:@ana", "team:@core", "task:tsk_1"],
     ["release", "dm:ana", "task:bad", "#Bad", "scope:x"]),
    (wireforms.is_identifier, ["a", "a_1", "x" * 64], ["A", "1a", "_a", "a-b", "x" * 65, ""]),
])
def test_wire_forms(fn, good, bad) -> None:
    for v in good:
        assert fn(v), v
    for v in bad:
        assert not fn(v), v


def test_conform_never_coerces() -> None:
    fs = FieldSchema
    assert wireforms.conform(fs("number"), "5") is not None
    assert "quoted" in wireforms.conform(fs("number"), "5")  # type: ignore[operator]
    assert wireforms.conform(fs("boolean"), "true") is not None
    assert wireforms.conform(fs("string"), 5) is not None
    assert wireforms.conform(fs("enum", values=("a",)), "a") is None
    assert wireforms.conform(fs("array", items=fs("number")), [1, "2"]) is not None
    assert wireforms.conform(fs("object"), {"a": [1]}) is None
    assert wireforms.conform(fs("member"), "mem_ana") is None
    assert wireforms.conform(fs("work_items"), []) is not None
    assert math.isclose(wireforms.duration_seconds("PT1M30.5S"), 90.5)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# robustness and speed
# ---------------------------------------------------------------------------

_KEYS = sorted({
    "apiVersion", "kind", "input", "output", "state", "entry", "nodes", "edges", "id", "type",
    "sendMessage", "wait", "end", "join", "fork", "switch", "loop", "fanOut", "setVariable",
    "requestApproval", "retry", "ref", "expr", "literal", "status", "code", "detail", "mode",
    "cases", "port", "when", "default", "branches", "forkId", "fanOutId", "items", "values",
    "required", "from", "to", "node", "bind", "completion", "text", "target", "scope",
    "callbackOutput", "workScope", "relatedScopes", "workItems", "iterations", "maxAttempts",
    "backoff", "condition", "duration", "timeout", "assign", "merge", "result", "init", "next",
})
_TYPES = ["send_message", "wait", "end", "join", "fork", "switch", "loop", "fan_out", "set_variable",
          "request_approval", "string", "enum", "array", "number", "scope", "sent", "callback",
          "succeeded", "failed", "counted", "all", "any", "first_match", "PT1S", "{{ x }}", "a.b", ""]
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 2**60), st.sampled_from(_TYPES),
                     st.floats(allow_nan=True, allow_infinity=True))
_values = st.recursive(
    _scalars,
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(st.sampled_from(_KEYS), kids, max_size=5)),
    max_leaves=40,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(_KEYS), _values, max_size=8),
       st.lists(st.dictionaries(st.sampled_from(_KEYS), _values, max_size=6), max_size=4))
@pytest.mark.slow
def test_arbitrary_documents_never_crash(root: dict, nodes: list) -> None:
    root.setdefault("nodes", nodes)
    src = json.dumps(root, allow_nan=True).replace("NaN", ".nan").replace("Infinity", ".inf")
    plan, r = build(src)
    if plan is not None:
        for nid in plan.nodes:
            assert nid not in plan.malformed_nodes


def _big_plan(nodes: int = 500) -> str:
    pad = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 26
    out = [H.rstrip("\n"), "input:", "  f0: {type: string, required: true}",
           "  f1: {type: string, required: true}", "output: {}", "entry: n0", "nodes:"]
    for i in range(nodes):
        out += [f"  - id: n{i}", "    type: send_message", f"    description: \"{pad}\"",
                "    input:", "      f0: {type: string, required: true}", "      f1: {type: string, required: true}",
                "    retry: {maxAttempts: 3, backoff: PT5S}", "    sendMessage:", "      target: \"#release\"",
                f"      text: \"Step {i}: {{{{ input.f0 }}}} {{{{ input.f1 }}}}\"", "      completion: sent"]
    out += ["  - id: done", "    type: end", "    end: {status: succeeded}", "edges:"]
    for i in range(nodes):
        out += [f"  - id: e{i}", f"    from: {{node: n{i}, port: completed}}",
                f"    to: {{node: {'n%d' % (i + 1) if i + 1 < nodes else 'done'}}}",
                "    bind: {f0: {ref: input.f0}, f1: {ref: input.f1}, x: {a: [1, {ref: input.f0}], b: \"y\"}}"]
    return "\n".join(out) + "\n"


@pytest.mark.timeout(60)  # a hang guard; the schema/YAML cost ratio is in benchmarks/
def test_schema_pass_on_a_near_budget_plan() -> None:
    src = _big_plan()
    assert 0.85 * 2**20 < len(src.encode()) < 2**20
    r = Reporter()
    doc = yamlload.load(src, r)
    plan = schema.build_plan(doc, r)  # type: ignore[arg-type]
    assert r.diagnostics == [] and plan is not None and len(plan.nodes) == 501


def test_a_decimal_rounding_to_zero_is_out_of_range() -> None:
    """``1e-400`` is not zero but every runtime reads 0: LP2017, like an
    integer beyond 2^53 (docs/language.md#numbers-and-durations-bounds);
    ``0e5``, ``0.0`` and ``1e-300`` are fine."""
    import loopc

    base = (Path(__file__).parent / "fixtures" / "schema" / "invalid_number_ok.yaml").read_text()
    for text, bad in (("1e-400", True), ("-2.5e-999", True), ("0e5", False), ("0.0", False), ("1e-300", False)):
        src = base.replace("default: 0}", f"default: {text}}}", 1)
        assert src != base
        got = [d.code for d in loopc.check_source(src).diagnostics]
        assert got == (["LP2017"] if bad else []), (text, got)
