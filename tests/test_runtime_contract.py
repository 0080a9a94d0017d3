"""The runtime contract's decisions (issue 23), each pinned on the reference
interpreter: docs/ir.md#evaluation and docs/conformance.md#the-journal.

* a single ``{{ expr }}`` where a message text, an approval summary or an End
  detail is expected is rendered to text, exactly as inside a longer
  template (numbers in ECMAScript form, other values as RFC 8785 text);
* an arrival already queued at an ``any`` join when it closes reaches the
  closed join in its own step and is journaled as ``join.refused``;
* ``selectOne`` is SHA-256 over the effect key, read big-endian, modulo the
  pool size (no language runtime's generator).
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest

from loopc.interpreter.choice import pick_index, select_one
from loopc.interpreter.engine import Engine
from loopc.conformance import SCENARIO_DIR, journal_path, scenarios
from loopc.interpreter.runner import parse_journal, prepare_file, run_file, run_prepared

from conftest import ROOT

GOLDEN = Path(SCENARIO_DIR)

def _scenario(name: str) -> Any:
    rep = run_file(str(GOLDEN / f"{name}.yaml"))
    assert not isinstance(rep, list), [p.render() for p in rep]
    assert rep.ok, rep.differences
    return rep


def test_single_interpolation_text_is_rendered() -> None:
    rep = _scenario("join_any_queued_arrival_refused")
    texts = [r["request"]["text"] for r in rep.to_json()["journal"] if r["kind"] == "effect.reserved"]
    assert texts == ["1", '{"a":[2.5,null],"b":true}']


def test_arrival_queued_when_any_join_closes_is_refused() -> None:
    steps = _scenario("join_any_queued_arrival_refused").steps
    closing = next(i for i, s in enumerate(steps) if any(r["kind"] == "join.arrived" for r in s))
    assert [r["kind"] for r in steps[closing]] == ["join.arrived", "activation.completed"]
    refused = steps[closing + 1]
    assert len(refused) == 1
    r = dict(refused[0])
    for k in ("seq", "step", "at"):
        r.pop(k)
    join_act = steps[closing][0]["act"]
    assert r == {"kind": "join.refused", "act": join_act, "branch": "two", "reason": "closed"}


def test_select_one_golden_picks_by_the_documented_algorithm() -> None:
    """Recomputed here with hashlib alone, as another runtime would."""
    steps = parse_journal((GOLDEN / "select_one_picks.journal.jsonl").read_text(encoding="utf-8"))
    picks = [r for s in steps for r in s if r["kind"] == "effect.reserved" and "responderPool" in r["request"]]
    for r in picks:
        pool = r["request"]["responderPool"]
        n = int.from_bytes(hashlib.sha256(r["key"].encode("utf-8")).digest(), "big")
        assert r["request"]["responder"] == pool[n % len(pool)]
    assert len(picks) >= 5 and len({len(r["request"]["responderPool"]) for r in picks}) >= 3
    assert any(r["attempt"] == 2 for r in picks)  # a retry picks again


def test_a_lease_moves_when_a_retry_picks_another_agent() -> None:
    steps = parse_journal((GOLDEN / "select_one_picks.journal.jsonl").read_text(encoding="utf-8"))
    holder: dict[str, str] = {}
    for r in (r for s in steps for r in s):
        if r["kind"] == "agent.leased":
            assert r["agent"] not in holder, f"{r['agent']} leased twice"
            holder[r["agent"]] = r["act"]
        elif r["kind"] == "agent.released":
            assert holder.pop(r["agent"]) == r["act"]
    assert not holder


def test_cancellation_never_passes_a_lease_to_an_activation_cancelled_with_it() -> None:
    for name in ("cancel_nested_scopes", "any_win_cancels_nested"):
        step = next(s for s in _scenario(name).steps if any(r["kind"] == "activation.cancelled" for r in s))
        kinds = [(r["kind"], r.get("act")) for r in step if r["kind"] != "agent.released"]
        assert ("agent.leased", "act_7") not in kinds
        cancelled = [a for k, a in kinds if k == "activation.cancelled"]
        assert cancelled == sorted(cancelled, key=lambda a: int(a.split("_")[1]))  # activation order
        assert "act_4" in cancelled  # the inner join, nested two scopes deep


def test_select_one_is_sha256_mod_pool_size() -> None:
    key = "run_0123456789abcdef:act_4:2"
    want = int(hashlib.sha256(key.encode("utf-8")).hexdigest(), 16)
    for size in range(1, 12):
        assert pick_index(key, size) == want % size
    assert select_one(key, ["agt_a"]) == "agt_a"
    with pytest.raises(ValueError):
        pick_index(key, 0)


# --------------------------------------------------------------- the worked example
CONFORMANCE = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")


def test_select_one_worked_example_holds() -> None:
    m = re.search(r"<!-- selectone-example -->\n```text\n(.*?)```", CONFORMANCE, re.S)
    assert m, "docs/conformance.md#selectone-the-pick lost its worked example"
    lines = m.group(1).splitlines()
    fields = {ln.split()[0]: ln.split()[1] for ln in lines[:3]}
    key = fields["key"]
    assert hashlib.sha256(key.encode("utf-8")).hexdigest() == fields["SHA-256"]
    assert int(fields["SHA-256"], 16) == int(fields["integer"])
    picks = 0
    for ln in lines[3:]:
        pm = re.match(r"pool \[(.*?)\]\s+integer mod (\d+) = (\d+)\s+pick (\S+)\Z", ln)
        assert pm, ln
        pool = [p.strip() for p in pm.group(1).split(",")]
        assert len(pool) == int(pm.group(2))
        assert pick_index(key, len(pool)) == int(pm.group(3)) == int(fields["integer"]) % len(pool)
        assert select_one(key, pool) == pm.group(4)
        picks += 1
    assert picks >= 3


# --------------------------------------------------------------- refusals on the engine
def _golden(name: str) -> Any:
    prep = prepare_file(str(GOLDEN / f"{name}.yaml"))
    assert not isinstance(prep, list)
    return prep


def _twice(port_or_node: str) -> type[Engine]:
    """An engine fed a second token for the first arrival matching
    ``port_or_node``: what an artifact from elsewhere (not one the compiler
    emits, see docs/conformance.md#record-order-within-a-step) could send."""

    class Twice(Engine):
        doubled = False

        def _arrive(self, nid: str, port: str, ctx: tuple, val: dict[str, Any], edge: str | None = None) -> None:
            if not self.doubled and port_or_node in (nid, port):
                self.doubled = True
                self.ready.append(("arrive", nid, port, ctx, val, edge))
            super()._arrive(nid, port, ctx, val, edge)

    return Twice


def _refusal_steps(rep: Any, kind: str) -> list[list[dict[str, Any]]]:
    return [s for s in rep.steps if any(r["kind"] == kind for r in s)]


def test_loop_refuses_a_stale_iteration() -> None:
    rep = run_prepared(_golden("loop_exact"), engine_cls=_twice("continue"))
    assert rep.ok, rep.differences
    (step,) = _refusal_steps(rep, "loop.refused")
    assert [{k: v for k, v in r.items() if k not in ("seq", "step", "at")} for r in step] == [
        {"kind": "loop.refused", "act": "act_1", "iteration": 1, "port": "continue"}]


def test_fan_out_join_refuses_an_item_that_is_no_longer_running() -> None:
    rep = run_prepared(_golden("fanout_one_item"), engine_cls=_twice("collect"))
    assert rep.ok, rep.differences
    (step,) = _refusal_steps(rep, "item.refused")
    (r,) = step
    assert r["kind"] == "item.refused" and r["status"] == "succeeded" and r["item"].endswith("/a")


def test_join_refuses_a_second_arrival_of_one_branch() -> None:
    rep = run_prepared(_golden("fork_all_success"), engine_cls=_twice("gather"))
    assert rep.ok, rep.differences
    (step,) = _refusal_steps(rep, "join.refused")
    (r,) = step
    assert r["reason"] == "duplicate"


# --------------------------------------------------------------- detail and reason formats
def _table(doc: str, header: str) -> list[list[str]]:
    """Rows (cells, backticks stripped) of the first table whose header line starts with ``header``."""
    lines = doc.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(header))
    rows = []
    for ln in lines[start + 2:]:
        if not ln.startswith("|"):
            break
        rows.append([re.sub(r"^`(.*)`$", r"\1", c.strip()) for c in ln.strip().strip("|").split(" | ")])
    return rows


def _rx(fmt: str, subs: dict[str, str]) -> str:
    out = []
    for part in re.split(r"(<[a-zA-Z]+>)", fmt):
        if re.fullmatch(r"<[a-zA-Z]+>", part):
            out.append(subs.get(part, ".+?"))
        else:
            out.append(re.escape(part))
    return "".join(out)


def _alt(formats: list[str], subs: dict[str, str] | None = None) -> str:
    return "(?:" + "|".join(_rx(f, subs or {}) for f in formats) + ")"


IR = (ROOT / "docs" / "ir.md").read_text(encoding="utf-8")
EVAL_ERRORS = [r[0] for r in _table(IR[IR.index("### Evaluation errors"):], "| message | when |")]
WHERE = [r[0] for r in _table(CONFORMANCE, "| where | what |")]
CONTRACT = [r[0] for r in _table(CONFORMANCE, "| reason | when |")]
WORKITEM = [r[0] for r in _table(CONFORMANCE[CONFORMANCE.index('<a id="workitem-reasons">'):], "| reason |")]
REASON = {"<where>": _alt(WHERE), "<message>": _alt(EVAL_ERRORS),
          "<reason>": _alt(CONTRACT + WORKITEM + ["not a valid scope", "not a valid agent", "<value> is not a duration"])}
DETAILS: dict[str, list[re.Pattern[str]]] = {}
for code, fmt, _ in _table(CONFORMANCE, "| code | detail format |"):
    DETAILS.setdefault(code, []).append(re.compile(_rx(fmt, REASON) + r"\Z"))
REASONS: dict[str, list[re.Pattern[str]]] = {}
for kind, fmt, _ in _table(CONFORMANCE, "| record | reason format |"):
    REASONS.setdefault(kind, []).append(re.compile(_rx(fmt, {}) + r"\Z"))


def _emitted(records: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(record kind, code or 'reason', text) of every runtime-produced detail
    and reason: {code, detail} pairs anywhere in a record whose code the
    runtime owns, and the reasons of cancellations and refusals."""
    out = []
    for r in records:
        stack: list[Any] = [r]
        while stack:
            v = stack.pop()
            if isinstance(v, dict):
                if isinstance(v.get("code"), str) and isinstance(v.get("detail"), str) and v["code"] in DETAILS:
                    out.append((r["kind"], v["code"], v["detail"]))
                stack.extend(v.values())
            elif isinstance(v, list):
                stack.extend(v)
        if "reason" in r:
            out.append((r["kind"], "reason", r["reason"]))
    return out


def _journals() -> list[tuple[str, list[dict[str, Any]]]]:
    out = []
    for sc in scenarios():
        steps = parse_journal(Path(journal_path(sc)).read_text(encoding="utf-8"))
        out.append((Path(sc).stem, [r for s in steps for r in s]))
    return out


def test_the_format_tables_parse() -> None:
    assert {"delivery.failed", "delivery.exhausted", "join.no_branch_succeeded", "wait.timed_out",
            "run.output_invalid", "runtime.evaluation_failed", "runtime.input_invalid"} <= set(DETAILS)
    assert len(WHERE) >= 10 and len(CONTRACT) >= 4 and len(WORKITEM) >= 15 and len(EVAL_ERRORS) >= 12
    assert set(REASONS) == {"activation.cancelled", "join.refused"}


def test_every_emitted_detail_and_reason_matches_a_documented_format() -> None:
    bad = []
    seen = 0
    for name, records in _journals():
        for kind, code, text in _emitted(records):
            seen += 1
            pats = REASONS.get(kind, []) if code == "reason" else DETAILS[code]
            if not any(p.match(text) for p in pats):
                bad.append(f"{name}: {kind} {code}: {text!r}")
    assert seen >= 40
    assert not bad, ("runtime-produced details/reasons with no format in docs/conformance.md"
                     f"#detail-and-reason-formats: {bad}")


@pytest.mark.parametrize("code,text,ok", [
    ("runtime.evaluation_failed", "edge 'e_x': cannot order number and string", True),
    ("runtime.evaluation_failed", "send_message 'ask' text: reference root 'item' is not available here", True),
    ("runtime.evaluation_failed", "edge 'e_x' cannot order number and string", False),
    ("runtime.evaluation_failed", "somewhere: cannot order number and string", False),
    ("runtime.input_invalid", "edge 'e_x': input.topic is required", True),
    ("runtime.input_invalid", "fan_out 'dispatch' items: workItems dependencies form a cycle", True),
    ("runtime.input_invalid", "edge 'e_x': topic is missing", False),
    ("delivery.failed", "delivery 2 of 'announce' failed", True),
    ("delivery.failed", "delivery 2 of 'announce' failed!", False),
    ("join.no_branch_succeeded", "no branch of 'race' succeeded (one: nope; two: nope)", True),
])
def test_format_matching_has_teeth(code: str, text: str, ok: bool) -> None:
    assert any(p.match(text) for p in DETAILS[code]) is ok


# --------------------------------------------------------------- docs stay whole
def test_implementing_a_runtime_names_exactly_the_kit_scenarios() -> None:
    part = CONFORMANCE[CONFORMANCE.index("## Implementing a runtime"):]
    rows = _table(part, "| stage | scenario | proves |")
    named = [r[1] for r in rows]
    kit = sorted(Path(sc).stem for sc in scenarios())
    assert sorted(named) == kit, (sorted(set(kit) - set(named)), sorted(set(named) - set(kit)))
    assert len(named) == len(set(named))
    stages = [int(r[0]) for r in rows]
    assert stages == sorted(stages) and set(stages) <= set(range(1, 12))


def _slug(heading: str) -> str:
    s = re.sub(r"[`*_]", "", heading.strip().lower())
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def _anchors(text: str) -> set[str]:
    heads = {_slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}
    return heads | set(re.findall(r'<a id="([^"]+)">', text))


@pytest.mark.parametrize("doc", ["ir.md", "conformance.md", "language.md"])
def test_contract_doc_links_resolve(doc: str) -> None:
    docs = ROOT / "docs"
    text = (docs / doc).read_text(encoding="utf-8")
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith(("http:", "https:", "mailto:")):
            continue
        path, _, anchor = target.partition("#")
        file = docs / path if path else docs / doc
        if not file.exists():
            bad.append(target)
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file.read_text(encoding="utf-8")):
            bad.append(target)
    assert not bad, f"docs/{doc}: links that resolve nowhere: {bad}"


_RENDER_PLAN = """apiVersion: loop.plan/v1
kind: PlanVersion
input:
  meta: {type: object, required: true}
  who: {type: member, required: true}
output: {}
entry: ask
nodes:
  - id: ask
    type: request_approval
    input:
      meta: {type: object, required: true}
      who: {type: member, required: true}
    requestApproval:
      assignee: "{{ input.who }}"
      summary: "{{ input.meta.n }}"
  - id: ok
    type: end
    end: {status: succeeded}
  - id: no
    type: end
    input:
      meta: {type: object, required: true}
    end: {status: failed, code: rejected, detail: "{{ input.meta.why }}"}
edges:
  - {id: e_ok, from: {node: ask, port: approved}, to: {node: ok}}
  - {id: e_no, from: {node: ask, port: rejected}, to: {node: no}, bind: {meta: {ref: input.meta}}}
"""


@pytest.mark.parametrize("why,detail", [({"b": 1.0, "a": True}, '{"a":true,"b":1}'), (None, "null"),
                                        (False, "false"), (1e21, "1e+21"), ("text", "text")])
def test_single_interpolation_summary_and_end_detail_are_rendered(tmp_path: Path, why: Any, detail: str) -> None:
    import json

    (tmp_path / "plan.yaml").write_text(_RENDER_PLAN, encoding="utf-8")
    meta = {"n": 2.0, **({"why": why} if why is not None else {})}
    sc = tmp_path / "s.yaml"
    sc.write_text(f"plan: plan.yaml\ninput: {json.dumps({'meta': meta, 'who': 'mem_ana'})}\n"
                  "events:\n  - reject: {node: ask}\n"
                  f"expect: {{status: failed, error: {json.dumps({'code': 'rejected', 'detail': detail})}}}\n",
                  encoding="utf-8")
    rep = run_file(str(sc))
    assert not isinstance(rep, list), [p.render() for p in rep]
    assert rep.ok, rep.differences
    (req,) = [r["request"] for r in rep.to_json()["journal"] if r["kind"] == "effect.reserved"]
    assert req["summary"] == "2" and req["assignee"] == "mem_ana"
