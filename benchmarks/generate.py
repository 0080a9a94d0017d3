"""Deterministic ``loop.plan/v1`` plan generators for benchmarks and budget tests.

Three valid plans (each checks clean through :func:`loopc.check_source`):

* :func:`typical_plan` — about 30 nodes, the size of a real team workflow;
* :func:`hundred_node_plan` — about 100 nodes (the typical plan's blocks
  three times over plus a four-branch fork): the language-server and
  re-check benchmarks' document;
* :func:`near_budget_plan` — about 500 nodes, 1,300–2,000 edges and 0.9 MiB
  of source, under every authoring budget of seed 004 §3.2 (512 nodes,
  2,048 edges, 1 MiB, 100,000 YAML nodes, nesting 64, 2,048 declared schema
  fields), with a realistic mix of callbacks and sent messages with long
  templates, first_match and all_match switches, forks with ``all`` and
  ``any`` joins, counted loops, ``set_variable``, waits, approvals and a
  dynamic fan-out;
* :func:`max_budget_plan` — exactly 512 nodes and 2,048 edges, with forks
  nested in forks, loops nested in fork branches and forks nested in loop
  bodies.

A plan is a chain of self-contained *blocks*.  Every block is valid on its
own terms: its entry node takes ``{topic: string}``, every must-route port is
routed, joins close their forks inside the block, succeeded Ends appear only
at the top level, and Run state is written only by loop-body ``set_variable``
nodes or by the single writer branch of a Run-state gate (a fork whose other
branch waits on that state), never by two concurrent branches and never in a
fan-out body.  The
generators are pure functions of their parameters (no randomness beyond a
fixed-seed ``random.Random``), so repeated calls return identical text.

:func:`stats` measures a source (nodes, edges, bytes, YAML nodes, nesting,
declared schema fields) with the ruamel C composer.
"""
from __future__ import annotations

import json
import math
import random
import re
from typing import Any, Callable

__all__ = ["typical_plan", "hundred_node_plan", "near_budget_plan", "max_budget_plan", "stats", "PlanBuilder"]

#: seed 004 §3.2 authoring budgets.
MAX_NODES = 512
MAX_EDGES = 2048
MAX_BYTES = 1024 * 1024
MAX_YAML_NODES = 100_000
MAX_NESTING = 64
MAX_SCHEMA_FIELDS = 2048

FIELD_TYPES = frozenset((
    "string", "enum", "number", "boolean", "duration", "datetime", "object",
    "array", "scope", "channel", "member", "agent", "work_items", "responder",
))

# --------------------------------------------------------------------------
# A tiny deterministic YAML emitter (block style, flow style for small maps)
# --------------------------------------------------------------------------


class Flow(dict):
    """A mapping emitted in flow style (``{a: 1, b: x}``)."""


_PLAIN = re.compile(r"^(?:[a-z][A-Za-z0-9_.]*|P[0-9A-Z.]+)$")
_RESERVED = frozenset(("true", "false", "null", "yes", "no", "on", "off", "y", "n"))


def _scalar(v: Any) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    s = str(v)
    if _PLAIN.match(s) and s not in _RESERVED:
        return s
    return json.dumps(s, ensure_ascii=False)


def _flow(v: Any) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_flow(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_flow(x) for x in v) + "]"
    return _scalar(v)


def _is_inline(v: Any) -> bool:
    if isinstance(v, Flow):
        return True
    if isinstance(v, list):
        return all(not isinstance(x, (dict, list)) for x in v)
    return not isinstance(v, dict)


def _emit(v: Any, indent: int, out: list[str]) -> None:
    pad = " " * indent
    if isinstance(v, dict) and not isinstance(v, Flow):
        for k, x in v.items():
            if _is_inline(x):
                out.append(f"{pad}{k}: {_flow(x)}")
            elif isinstance(x, list):
                out.append(f"{pad}{k}:")
                _emit(x, indent + 2, out)
            else:
                out.append(f"{pad}{k}:")
                _emit(x, indent + 2, out)
        return
    if isinstance(v, list):
        for x in v:
            if _is_inline(x):
                out.append(f"{pad}- {_flow(x)}")
                continue
            sub: list[str] = []
            _emit(x, indent + 2, sub)
            sub[0] = pad + "- " + sub[0][indent + 2:]
            out.extend(sub)
        return
    out.append(pad + _flow(v))


def _flow_text(v: Any) -> str:
    return _flow(v) if not isinstance(v, list) else "\n".join(_flow(x) for x in v)


def dump_plan(doc: dict) -> str:
    """Emit a plan document; the header lines come first, exactly."""
    out = ["apiVersion: loop.plan/v1", "kind: PlanVersion"]
    rest = {k: v for k, v in doc.items() if k not in ("apiVersion", "kind")}
    _emit(rest, 0, out)
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# Prose for message templates (deterministic filler)
# --------------------------------------------------------------------------

_WORDS = (
    "release candidate rollout checklist owner migration schema backfill "
    "customer impact dashboard latency budget regression runbook on-call "
    "rollback plan canary cohort feature flag dependency upgrade audit "
    "evidence sign-off window freeze staging production verification "
    "metrics alert threshold incident review follow-up action item "
    "timeline stakeholder summary risk mitigation acceptance criteria "
    "documentation changelog handoff capacity forecast quota"
).split()

FILL = "@@FILL@@"  # survives JSON quoting; never produced otherwise


def _sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def _prose(rng: random.Random, nbytes: int) -> str:
    parts: list[str] = []
    size = 0
    while size < nbytes:
        s = _sentence(rng, rng.randint(6, 14))
        parts.append(s)
        size += len(s) + 1
    text = " ".join(parts)
    if len(text) > nbytes:
        text = text[:nbytes].rsplit(" ", 1)[0]
    return text.rstrip()


# --------------------------------------------------------------------------
# Builder
# --------------------------------------------------------------------------

def S(t: str, **kw: Any) -> Flow:
    """A FieldSchema in flow style: ``S('string', required=True)``."""
    f = Flow(type=t)
    for k, v in kw.items():
        f[k] = v
    return f


def R(path: str) -> Flow:
    """A typed reference ``{ref: path}``."""
    return Flow(ref=path)


TOPIC = {"topic": S("string", required=True)}


class PlanBuilder:
    """Accumulates nodes and edges; blocks call :meth:`node` / :meth:`edge`.

    ``text_bytes`` is the length of deterministic prose in each message
    template; ``fill`` adds a placeholder that :func:`_fill_to` later
    expands to reach an exact byte size.
    """

    def __init__(self, seed: int, text_bytes: int = 120, fill: bool = False) -> None:
        self.rng = random.Random(seed)
        self.text_bytes = text_bytes
        self.fill = fill
        self.nodes: list[dict] = []
        self.edges: list[dict] = []
        self.plan_input: dict[str, Flow] = {
            "topic": S("string", required=True, description="What this run is about"),
            "room": S("scope", required=True),
            "reviewer": S("agent", required=True),
            "approver": S("member", required=True),
            "workers": S("array", required=True, items=S("agent", required=True)),
        }
        self.plan_output = {"summary": S("string", required=True)}
        self.state = {
            "stage": S("string", default="start"),
            "ready": S("boolean", default=False),
        }
        self.failed_end = "step_failed"
        self.blocked_end = "blocked"
        self.rejected_end = "rejected"

    # -- primitives -------------------------------------------------------
    def node(self, nid: str, ntype: str, config_key: str, config: Any, *,
             input: dict | None = None, retry: Flow | None = None, label: str | None = None) -> str:
        n: dict[str, Any] = {"id": nid, "type": ntype}
        if label:
            n["label"] = label
        if input is not None:
            n["input"] = input
        if retry is not None:
            n["retry"] = retry
        n[config_key] = config
        self.nodes.append(n)
        return nid

    def edge(self, src: str, port: str, dst: str, bind: dict | None = None, *,
             to_port: str | None = None, eid: str | None = None) -> None:
        e: dict[str, Any] = {"id": eid or "",
                             "from": Flow(node=src, port=port),
                             "to": Flow(node=dst) if to_port is None else Flow(node=dst, port=to_port)}
        if bind is not None:
            e["bind"] = bind
        self.edges.append(e)

    def text(self, lead: str) -> str:
        body = _prose(self.rng, self.text_bytes)
        return f"{lead} {body}{FILL if self.fill else ''}"

    # -- common node shapes --------------------------------------------------
    def callback(self, nid: str, lead: str, output: dict, *, input: dict | None = None,
                 responder: str = "run.input.reviewer", scope: str = "run.input.room",
                 retry: bool = False) -> str:
        cfg = {
            "scope": R(scope),
            "responder": R(responder),
            "text": self.text(lead),
            "completion": "callback",
            "callbackOutput": output,
        }
        return self.node(nid, "send_message", "sendMessage", cfg, input=TOPIC if input is None else input,
                         retry=Flow(maxAttempts=3, backoff="PT30S") if retry else None)

    def sent(self, nid: str, lead: str, *, input: dict | None = None, scope: str = "run.input.room") -> str:
        cfg = {"scope": R(scope), "text": self.text(lead), "completion": "sent"}
        return self.node(nid, "send_message", "sendMessage", cfg, input=TOPIC if input is None else input)

    # -- document ----------------------------------------------------------------
    def _used_roots(self) -> set[str]:
        """Plan input fields any node or edge reads as ``run.input.<name>``."""
        text = _flow_text(self.nodes) + "\n" + _flow_text(self.edges)
        return set(re.findall(r"run\.input\.([a-z][a-z0-9_]*)", text))

    def finish(self, entry: str) -> str:
        """Add the shared Ends and emit the document."""
        self.node("done", "end", "end", Flow(status="succeeded"))
        self.node(self.failed_end, "end", "end", {
            "status": "failed", "code": "step_failed",
            "detail": "A step failed ({{ input.code }}): {{ input.detail }}",
        }, input={"code": S("string", required=True), "detail": S("string", required=True)})
        self.node(self.blocked_end, "end", "end", {
            "status": "failed", "code": "blocked",
            "detail": "Blocked while working on {{ run.input.topic }}",
        })
        self.node(self.rejected_end, "end", "end", {
            "status": "failed", "code": "approval_rejected",
            "detail": "Rejected by {{ input.by }}",
        }, input={"by": S("member", required=True)})
        for j, e in enumerate(self.edges):
            if not e["id"]:
                e["id"] = f"e{j + 1:04d}_{e['from']['node']}"[:64]
        roots = self._used_roots()
        used = {k: v for k, v in self.plan_input.items() if k == "topic" or k in roots}
        doc = {
            "input": used,
            "output": self.plan_output,
            "state": self.state,
            "entry": entry,
            "nodes": self.nodes,
            "edges": self.edges,
        }
        return dump_plan(doc)


# --------------------------------------------------------------------------
# Blocks.  Signature: block(b, prefix, next_id, **params) -> entry id.
# Every block's entry takes {topic: string}; the block routes to ``next_id``
# binding {topic}.  ``fail`` is the failure End for the block's scope.
# --------------------------------------------------------------------------

BRANCH_NAMES = (
    "legal", "security", "finance", "ops", "docs", "privacy", "design",
    "support", "sales", "infra", "data", "qa",
)


def review_switch(b: PlanBuilder, p: str, nxt: str, *, cases: int = 8, acks: int = 3) -> str:
    """Callback classifies a topic; a first_match switch routes its category
    to one of ``acks`` sent acknowledgements (several cases share one)."""
    cats = [f"cat{j:02d}" for j in range(cases + 2)]
    ask = b.callback(f"{p}_ask", "Classify {{ input.topic }} into one category.", {
        "category": S("enum", values=cats, required=True),
        "note": S("string", required=True),
    }, retry=True)
    b.edge(ask, "completed", f"{p}_route", {
        "topic": R("input.topic"), "category": R("output.category"), "note": R("output.note"),
    })
    b.edge(ask, "failed", b.failed_end)
    ack_ids = [f"{p}_ack{j}" for j in range(acks)]
    b.node(f"{p}_route", "switch", "switch", {
        "mode": "first_match",
        "cases": [Flow(port=c, when=f"input.category == '{c}'") for c in cats[:cases]],
        "default": "other",
    }, input={"topic": S("string", required=True),
              "category": S("enum", values=cats, required=True),
              "note": S("string", required=True)})
    for j, c in enumerate(cats[:cases] + ["other"]):
        dst = ack_ids[j % acks]
        if j % 2:
            b.edge(f"{p}_route", c, dst)  # same-name pass-through of topic, note
        else:
            b.edge(f"{p}_route", c, dst, {"topic": R("output.topic"), "note": R("output.note")})
    for a in ack_ids:
        b.sent(a, "Acknowledged {{ input.topic }}: {{ input.note }}.",
               input={"topic": S("string", required=True), "note": S("string", required=True)})
        b.edge(a, "completed", nxt, {"topic": R("input.topic")})
        b.edge(a, "failed", b.failed_end)
    return f"{p}_ask"


def fork_all(b: PlanBuilder, p: str, nxt: str, *, branches: int = 4, timers: bool = True,
             nested: Callable[[PlanBuilder, str, str], str] | None = None) -> str:
    """Fork with ``branches`` review branches and an ``all`` join; a
    first_match gate after the join checks every branch approved.
    ``nested(b, prefix, join_id)`` may build one extra branch body that binds
    ``{ok, notes}`` into the join (nested forks and loops)."""
    keys = list(BRANCH_NAMES[:branches])
    join = f"{p}_join"
    b.node(f"{p}_fork", "fork", "fork", {"branches": keys}, input=dict(TOPIC))
    for j, k in enumerate(keys):
        first = f"{p}_{k}"
        if nested is not None and j == branches - 1:
            entry = nested(b, f"{p}_{k}", join)
            b.edge(f"{p}_fork", k, entry, {"topic": R("output.topic")})
            continue
        if timers and j == 1:
            w = b.node(f"{p}_{k}_delay", "wait", "wait", Flow(duration=f"PT{5 + j}M"), input=dict(TOPIC))
            b.edge(f"{p}_fork", k, w, {"topic": R("output.topic")})
            b.edge(w, "completed", first, {"topic": R("input.topic")})
        else:
            b.edge(f"{p}_fork", k, first, {"topic": R("output.topic")})
        b.callback(first, f"[{k}] Review {{{{ input.topic }}}} and approve or object.", {
            "ok": S("boolean", required=True), "notes": S("string", required=True)})
        if j == 0:
            b.edge(first, "completed", join)  # same-name pass-through: ok, notes
        else:
            b.edge(first, "completed", join, {"ok": R("output.ok"), "notes": R("output.notes")})
        if j == 2:
            # A failed End inside a branch fails only that branch.
            fe = b.node(f"{p}_{k}_failed", "end", "end", {
                "status": "failed", "code": f"{k}_review_failed", "detail": "{{ input.detail }}",
            }, input={"detail": S("string", required=True)})
            b.edge(first, "failed", fe, {"detail": R("output.detail")})
    b.node(join, "join", "join", {
        "forkId": f"{p}_fork", "mode": "all",
        "result": {f"{k}_ok": S("boolean", required=True) for k in keys},
        "merge": {f"{k}_ok": R(f"branches.{k}.ok") for k in keys},
    }, input={"ok": S("boolean", required=True), "notes": S("string", required=True)})
    gate = f"{p}_gate"
    b.edge(join, "completed", gate)
    b.edge(join, "failed", b.failed_end)
    b.node(gate, "switch", "switch", {
        "mode": "first_match",
        "cases": [Flow(port="cleared", when=" && ".join(f"input.{k}_ok" for k in keys))],
        "default": "objected",
    }, input={f"{k}_ok": S("boolean", required=True) for k in keys})
    b.edge(gate, "cleared", nxt, {"topic": R("run.input.topic")})
    b.edge(gate, "objected", b.blocked_end)
    return f"{p}_fork"


def fork_any(b: PlanBuilder, p: str, nxt: str, *, branches: int = 3) -> str:
    """Fork racing ``branches`` responders; ``any`` join takes the first answer."""
    keys = [f"r{j}" for j in range(branches)]
    b.node(f"{p}_fork", "fork", "fork", {"branches": keys}, input=dict(TOPIC))
    for k in keys:
        b.edge(f"{p}_fork", k, f"{p}_{k}", {"topic": R("output.topic")})
        b.callback(f"{p}_{k}", "Whoever answers first: what is the status of {{ input.topic }}?",
                   {"answer": S("string", required=True)})
        b.edge(f"{p}_{k}", "completed", f"{p}_join", {"answer": R("output.answer")})
    b.node(f"{p}_join", "join", "join", {
        "forkId": f"{p}_fork", "mode": "any",
        "result": {"winner": S("string", required=True), "answer": S("string", required=True)},
        "merge": {"winner": R("winner.key"), "answer": R("winner.value.answer")},
    }, input={"answer": S("string", required=True)})
    b.edge(f"{p}_join", "completed", nxt, {"topic": "{{ output.winner }}: {{ output.answer }}"})
    b.edge(f"{p}_join", "failed", b.failed_end, {"code": R("output.code"), "detail": R("output.detail")})
    return f"{p}_fork"


def all_match(b: PlanBuilder, p: str, nxt: str, *, cases: int = 3) -> str:
    """all_match switch on keywords in the topic, one review per matched port."""
    kws = ["api", "docs", "billing", "mobile", "infra", "data"][:cases]
    ports = kws + ["general"]
    b.node(f"{p}_route", "switch", "switch", {
        "mode": "all_match",
        "cases": [Flow(port=k, when=f"contains(input.topic, '{k}')") for k in kws],
        "default": "general",
    }, input=dict(TOPIC))
    for k in ports:
        b.edge(f"{p}_route", k, f"{p}_{k}", {"topic": R("output.topic")})
        b.callback(f"{p}_{k}", f"[{k}] Look at {{{{ input.topic }}}}.", {"notes": S("string", required=True)})
        b.edge(f"{p}_{k}", "completed", f"{p}_join")
    b.node(f"{p}_join", "join", "join", {
        "forkId": f"{p}_route", "mode": "all",
        "result": {f"{k}_notes": S("string") for k in ports},
        "merge": {f"{k}_notes": R(f"branches.{k}.notes") for k in ports},
    }, input={"notes": S("string", required=True)})
    b.edge(f"{p}_join", "completed", nxt, {"topic": R("run.input.topic")})
    b.edge(f"{p}_join", "failed", b.failed_end)
    return f"{p}_route"


def counted_loop(b: PlanBuilder, p: str, nxt: str, *, iterations: int = 3, record: bool = False,
                 fail_end: bool = True, body: Callable[[PlanBuilder, str, str], str] | None = None) -> str:
    """Counted polishing loop; the state is a draft.  ``record`` writes Run
    state from the body (legal: a loop body is sequential).  ``body(b, p,
    loop_id)`` may build a custom body whose exit binds ``{draft}`` into the
    loop's ``continue`` port (forks nested in loops)."""
    loop = f"{p}_loop"
    b.node(loop, "loop", "loop", {
        "mode": "counted", "iterations": iterations,
        "state": {"draft": S("string", required=True)},
        "init": {"draft": R("input.topic")},
    }, input=dict(TOPIC))
    if body is not None:
        entry = body(b, p, loop)
        b.edge(loop, "body", entry, {"topic": R("loop.state.draft")})
    else:
        edit = b.callback(f"{p}_edit", "Round {{ input.round }}: improve this draft. {{ input.draft }}", {
            "draft": S("string", required=True), "final": S("boolean", required=True),
        }, input={"draft": S("string", required=True), "round": S("number", required=True)})
        b.edge(loop, "body", edit, {"draft": R("loop.state.draft"), "round": R("loop.iteration")})
        if fail_end:
            fe = b.node(f"{p}_edit_failed", "end", "end", {
                "status": "failed", "code": "edit_failed",
                "detail": "Editing failed in round {{ input.round }}",
            }, input={"round": S("number", required=True)})
            b.edge(edit, "failed", fe, {"round": R("loop.iteration")})
        check_in = {"draft": S("string", required=True), "final": S("boolean", required=True)}
        after = f"{p}_check"
        if record:
            b.edge(edit, "completed", f"{p}_record", {"draft": R("output.draft"), "final": R("output.final")})
            b.node(f"{p}_record", "set_variable", "setVariable", {
                "assign": {"stage": "Polishing round {{ loop.iteration }}"},
            }, input=dict(check_in))
            b.edge(f"{p}_record", "completed", after, {"draft": R("input.draft"), "final": R("input.final")})
        else:
            b.edge(edit, "completed", after)  # same-name pass-through: draft, final
        b.node(after, "switch", "switch", {
            "mode": "first_match",
            "cases": [Flow(port="final", when="input.final == true")],
            "default": "again",
        }, input=check_in)
        b.edge(after, "final", loop, {"draft": R("output.draft")}, to_port="break")
        b.edge(after, "again", loop, {"draft": R("output.draft")}, to_port="continue")
    b.edge(loop, "done", nxt, {"topic": R("output.draft")})
    return loop


def state_wait(b: PlanBuilder, p: str, nxt: str, *, timeout: str = "PT1H") -> str:
    """A Run-state gate: a fork whose ``watch`` branch waits on a
    ``run.state`` condition (with a timeout) while its ``mark`` branch — the
    only writer — records progress with ``set_variable``; an ``all`` join
    closes both.  (A condition nothing concurrent can change would be
    LP4603.)"""
    f = b.node(f"{p}_gate", "fork", "fork", {"branches": ["watch", "mark"]}, input=dict(TOPIC))
    w = b.node(f"{p}_wait", "wait", "wait", {
        "condition": "run.state.ready == true && startsWith(run.state.stage, 'Waiting')",
        "timeout": timeout,
    }, input=dict(TOPIC), retry=Flow(maxAttempts=2, backoff="PT1M"))
    sv = b.node(f"{p}_mark", "set_variable", "setVariable", {
        "assign": {"stage": "Waiting on {{ input.topic }}", "ready": True},
    }, input=dict(TOPIC))
    j = f"{p}_gated"
    b.edge(f, "watch", w, {"topic": R("output.topic")})
    b.edge(f, "mark", sv)  # same-name pass-through: topic
    b.edge(w, "completed", j, {"note": "Gate passed for {{ input.topic }}"})
    b.edge(sv, "completed", j, {"note": R("input.topic")})
    b.node(j, "join", "join", {
        "forkId": f, "mode": "all",
        "result": {"note": S("string", required=True)},
        "merge": {"note": R("branches.watch.note")},
    }, input={"note": S("string", required=True)})
    b.edge(j, "completed", nxt, {"topic": R("run.input.topic")})
    b.edge(j, "failed", b.failed_end)
    return f


def approval(b: PlanBuilder, p: str, nxt: str) -> str:
    """A human approval; rejected goes to the shared rejected End."""
    a = b.node(f"{p}_approve", "request_approval", "requestApproval", {
        "assignee": "{{ run.input.approver }}",
        "summary": b.text("Approve the next step for {{ input.topic }}?"),
    }, input=dict(TOPIC))
    b.edge(a, "approved", nxt, {"topic": R("input.topic")})
    b.edge(a, "rejected", b.rejected_end, {"by": R("output.decidedBy")})
    b.edge(a, "failed", b.failed_end)
    return a


def timer(b: PlanBuilder, p: str, nxt: str, *, minutes: int = 15) -> str:
    """A pure duration timer followed by a sent status message."""
    w = b.node(f"{p}_pause", "wait", "wait", Flow(duration=f"PT{minutes}M"), input=dict(TOPIC))
    s = b.sent(f"{p}_status", "Status after the pause: {{ input.topic }}.")
    b.edge(w, "completed", s, {"topic": R("input.topic")})
    b.edge(w, "failed", b.failed_end)
    b.edge(s, "completed", nxt, {"topic": R("input.topic")})
    b.edge(s, "failed", b.failed_end)
    return w


def fan_out(b: PlanBuilder, p: str, nxt: str, *, concurrency: int = 4) -> str:
    """Planner callback → fan_out over WorkItems → item callback → join."""
    plan = b.node(f"{p}_plan", "send_message", "sendMessage", {
        "scope": R("run.input.room"),
        "responder": R("run.input.reviewer"),
        "text": b.text("Split {{ input.topic }} into WorkItems."),
        "completion": "callback",
        "workScope": R("run.input.room"),
        "workItems": {"allowedResponders": R("run.input.workers")},
    }, input=dict(TOPIC))
    fo = b.node(f"{p}_dispatch", "fan_out", "fanOut", {
        "items": R("input.work_items"), "maxConcurrency": concurrency, "failureMode": "collect",
    }, input={"work_items": S("work_items", required=True)})
    b.edge(plan, "completed", fo, {"work_items": R("output.workItems")})
    b.edge(plan, "failed", b.failed_end)
    item = b.node(f"{p}_item", "send_message", "sendMessage", {
        "scope": R("input.work_scope"),
        "responder": R("input.responder"),
        "text": b.text("WorkItem {{ input.key }}: {{ input.instruction }}"),
        "completion": "callback",
        "callbackOutput": {"summary": S("string", required=True)},
    }, input={"key": S("string", required=True), "instruction": S("string", required=True),
              "work_scope": S("scope", required=True), "responder": S("responder", required=True)})
    b.edge(fo, "item", item, {
        "key": R("item.key"), "instruction": R("item.instruction"),
        "work_scope": R("item.workScope"), "responder": R("item.responder"),
    })
    j = b.node(f"{p}_collect", "join", "join", {
        "fanOutId": fo, "mode": "all",
        "result": {"results": S("array", required=True, items=S("object", required=True))},
        "merge": {"results": R("items")},
    }, input={"result": S("object", required=True)})
    b.edge(item, "completed", j, {"result": {"key": R("input.key"), "summary": R("output.summary")}})
    b.edge(j, "completed", nxt, {"topic": "{{ length(output.results) }} WorkItems finished"})
    return plan


# Nested bodies --------------------------------------------------------------

def nested_fork_branch(b: PlanBuilder, p: str, join: str) -> str:
    """A branch body that is itself a fork with an ``all`` join; binds
    ``{ok, notes}`` into the outer ``join``."""
    keys = ["left", "right"]
    f = b.node(f"{p}_fork", "fork", "fork", {"branches": keys}, input=dict(TOPIC))
    for k in keys:
        b.edge(f, k, f"{p}_{k}", {"topic": R("output.topic")})
        b.callback(f"{p}_{k}", f"[{k}] Second opinion on {{{{ input.topic }}}}.",
                   {"ok": S("boolean", required=True)})
        b.edge(f"{p}_{k}", "completed", f"{p}_join", {"ok": R("output.ok")})
    b.node(f"{p}_join", "join", "join", {
        "forkId": f, "mode": "all",
        "result": {"ok": S("boolean", required=True), "notes": S("string", required=True)},
        "merge": {"ok": R("branches.left.ok"), "notes": "Left and right reviewed"},
    }, input={"ok": S("boolean", required=True)})
    b.edge(f"{p}_join", "completed", join)  # pass-through: ok, notes
    return f


def nested_loop_branch(b: PlanBuilder, p: str, join: str) -> str:
    """A branch body that is a counted loop (no Run-state writes: inside a
    parallel branch); binds ``{ok, notes}`` into the outer ``join``."""
    return _loop_into_join(b, p, join)


def _loop_into_join(b: PlanBuilder, p: str, join: str) -> str:
    """Counted loop whose ``done`` binds ``{ok: true, notes: <draft>}`` into ``join``."""
    loop = f"{p}_loop"
    b.node(loop, "loop", "loop", {
        "mode": "counted", "iterations": 2,
        "state": {"draft": S("string", required=True)},
        "init": {"draft": R("input.topic")},
    }, input=dict(TOPIC))
    edit = b.callback(f"{p}_edit", "Iteration {{ input.round }}: refine {{ input.draft }}",
                      {"draft": S("string", required=True)},
                      input={"draft": S("string", required=True), "round": S("number", required=True)})
    b.edge(loop, "body", edit, {"draft": R("loop.state.draft"), "round": R("loop.iteration")})
    b.edge(edit, "completed", loop, {"draft": R("output.draft")}, to_port="continue")
    b.edge(loop, "done", join, {"ok": True, "notes": R("output.draft")})
    return loop


def fork_in_loop_body(b: PlanBuilder, p: str, loop: str) -> str:
    """A loop body that forks two reviewers and joins them before
    ``continue`` (each iteration gets a fresh fork activation)."""
    keys = ["author", "editor"]
    f = b.node(f"{p}_bfork", "fork", "fork", {"branches": keys}, input=dict(TOPIC))
    for k in keys:
        b.edge(f, k, f"{p}_b{k}", {"topic": R("output.topic")})
        b.callback(f"{p}_b{k}", f"[{k}] Iteration {{{{ loop.iteration }}}} on {{{{ input.topic }}}}.",
                   {"text": S("string", required=True)})
        b.edge(f"{p}_b{k}", "completed", f"{p}_bjoin", {"text": R("output.text")})
    b.node(f"{p}_bjoin", "join", "join", {
        "forkId": f, "mode": "all",
        "result": {"draft": S("string", required=True)},
        "merge": {"draft": R("branches.editor.text")},
    }, input={"text": S("string", required=True)})
    b.edge(f"{p}_bjoin", "completed", loop, {"draft": R("output.draft")}, to_port="continue")
    return f


def nested_loop_fork_loop(b: PlanBuilder, p: str, loop: str) -> str:
    """Loop body → fork whose one branch is itself a counted loop."""
    keys = ["quick", "deep"]
    f = b.node(f"{p}_nfork", "fork", "fork", {"branches": keys}, input=dict(TOPIC))
    b.edge(f, "quick", f"{p}_nquick", {"topic": R("output.topic")})
    b.callback(f"{p}_nquick", "Quick pass on {{ input.topic }}.", {"ok": S("boolean", required=True),
                                                                    "notes": S("string", required=True)})
    b.edge(f"{p}_nquick", "completed", f"{p}_njoin")
    entry = _loop_into_join(b, f"{p}_ndeep", f"{p}_njoin")
    b.edge(f, "deep", entry, {"topic": R("output.topic")})
    b.node(f"{p}_njoin", "join", "join", {
        "forkId": f, "mode": "all",
        "result": {"draft": S("string", required=True)},
        "merge": {"draft": R("branches.deep.notes")},
    }, input={"ok": S("boolean", required=True), "notes": S("string", required=True)})
    b.edge(f"{p}_njoin", "completed", loop, {"draft": R("output.draft")}, to_port="continue")
    return f


def tail_switch(b: PlanBuilder, p: str, nxt: str, *, ports: int) -> str:
    """A first_match router with ``ports`` ports (``ports - 1`` cases + the
    default) that all lead to ``nxt`` — routing by a region code."""
    cases = [Flow(port=f"r{j:03d}", when=f"input.topic == 'region-{j:03d}'") for j in range(ports - 1)]
    b.node(f"{p}_router", "switch", "switch", {
        "mode": "first_match", "cases": cases, "default": "elsewhere",
    }, input=dict(TOPIC))
    for c in cases:
        b.edge(f"{p}_router", c["port"], nxt)  # pass-through: topic
    b.edge(f"{p}_router", "elsewhere", nxt, {"topic": R("output.topic")})
    return f"{p}_router"


def tail_message(b: PlanBuilder, p: str, nxt: str) -> str:
    """A sent progress note (two edges: completed, failed)."""
    s = b.sent(f"{p}_note", "Progress on {{ input.topic }}.")
    b.edge(s, "completed", nxt, {"topic": R("input.topic")})
    b.edge(s, "failed", b.failed_end)
    return s


# --------------------------------------------------------------------------
# Plan assembly
# --------------------------------------------------------------------------

Block = tuple[Callable[..., str], dict]


def _chain(b: PlanBuilder, blocks: list[Block], *, final: str = "done") -> str:
    """Build ``blocks`` back to front so each knows its successor; the last
    one routes to a closing sent summary and then ``final``."""
    nxt = b.sent("wrap_up", "Run finished for {{ input.topic }}.")
    b.edge("wrap_up", "completed", final, {"summary": "Finished {{ input.topic }}"})
    b.edge("wrap_up", "failed", b.failed_end)
    groups = [(b.nodes, b.edges)]
    for i in range(len(blocks) - 1, -1, -1):
        fn, kw = blocks[i]
        b.nodes, b.edges = [], []
        nxt = fn(b, f"b{i:03d}", nxt, **kw)
        groups.append((b.nodes, b.edges))
    # Emit in reading order: first block first, wrap-up last.
    b.nodes = [n for ns, _ in reversed(groups) for n in ns]
    b.edges = [e for _, es in reversed(groups) for e in es]
    return nxt


def _fill_to(src: str, target: int, seed: int) -> str:
    """Expand the FILL placeholders so the UTF-8 source is ``target`` bytes
    (or the placeholders are removed when the source is already larger)."""
    n = src.count(FILL)
    base = len(src.replace(FILL, "").encode("utf-8"))
    if n == 0:
        return src
    deficit = max(0, target - base)
    rng = random.Random(seed)
    per, extra = divmod(deficit, n)
    parts = src.split(FILL)
    out = [parts[0]]
    for j, rest in enumerate(parts[1:]):
        want = per + (1 if j < extra else 0)
        pad = (" " + _prose(rng, want + 80))[:want]  # ASCII: chars == bytes
        out.append(pad)
        out.append(rest)
    return "".join(out)


def _typical_blocks() -> list[Block]:
    """The typical plan's seven blocks (a fresh list each call)."""
    return [
        (review_switch, {"cases": 4, "acks": 2}),
        (fork_all, {"branches": 3}),
        (approval, {}),
        (state_wait, {}),
        (counted_loop, {"iterations": 3}),
        (all_match, {"cases": 2}),
        (timer, {}),
    ]


def typical_plan() -> str:
    """A ~30-node plan: classification switch, a 3-branch review fork with an
    ``all`` join, an approval, a Run-state gate, a polishing loop, all_match
    routing and a timer."""
    b = PlanBuilder(seed=30, text_bytes=160)
    entry = _chain(b, _typical_blocks())
    return b.finish(entry)


def hundred_node_plan() -> str:
    """A ~100-node plan (57 KiB): the typical plan's seven blocks three
    times over, then a four-branch review fork."""
    b = PlanBuilder(seed=100, text_bytes=160)
    blocks: list[Block] = _typical_blocks() * 3 + [(fork_all, {"branches": 4})]
    entry = _chain(b, blocks)
    return b.finish(entry)


def _near_blocks() -> list[Block]:
    cycle: list[Block] = [
        (review_switch, {"cases": 32, "acks": 3}),
        (fork_all, {"branches": 4}),
        (counted_loop, {"iterations": 3, "record": True}),
        (state_wait, {}),
        (review_switch, {"cases": 24, "acks": 2}),
        (fork_any, {"branches": 3}),
        (approval, {}),
        (all_match, {"cases": 3}),
        (timer, {}),
        (counted_loop, {"iterations": 5}),
    ]
    blocks: list[Block] = []
    for rep in range(NEAR_CYCLES):
        blocks.extend(cycle)
        if rep in (2, 7):
            blocks.append((fan_out, {"concurrency": 2 + rep}))
    return blocks


NEAR_BYTES = int(0.9 * MAX_BYTES)
NEAR_CYCLES = 11


def near_budget_plan() -> str:
    """A ~500-node, ~0.9 MiB plan just under the seed 004 §3.2 budgets.

    Eleven repetitions of a ten-block cycle (classification switches, ``all``
    and ``any`` forks, ``all_match`` routing, counted loops with Run-state
    writes in the body, Run-state gates with timeouts, approvals, timers)
    plus two dynamic fan-outs; message templates carry long prose padded so
    the source is 0.9 MiB.
    """
    b = PlanBuilder(seed=500, text_bytes=200, fill=True)
    entry = _chain(b, _near_blocks())
    return _fill_to(b.finish(entry), NEAR_BYTES, seed=501)


def _max_main(b: PlanBuilder) -> list[Block]:
    return [
        (fork_all, {"branches": 4, "nested": nested_fork_branch}),
        (counted_loop, {"iterations": 4, "body": fork_in_loop_body}),
        (fork_all, {"branches": 5, "nested": nested_loop_branch}),
        (counted_loop, {"iterations": 2, "body": nested_loop_fork_loop}),
        (review_switch, {"cases": 40, "acks": 4}),
        (fork_any, {"branches": 4}),
        (all_match, {"cases": 4}),
        (fan_out, {"concurrency": 8}),
        (state_wait, {}),
        (approval, {}),
    ] * 7 + [(counted_loop, {"iterations": 10, "record": True})] * 4


def max_budget_plan() -> str:
    """Exactly 512 nodes and 2,048 edges (seed 004 §3.2 graph budget).

    Forks nested in fork branches, loops nested in fork branches, forks in
    loop bodies and a fork-in-loop-in-fork-in-loop, then a tail of
    progress notes and wide first_match routers (up to 96 ports) sized so
    the totals land exactly on the budget.
    """
    def build(tail: list[Block]) -> PlanBuilder:
        b = PlanBuilder(seed=512, text_bytes=40)
        entry = _chain(b, _max_main(b) + tail)
        b._entry = entry  # type: ignore[attr-defined]
        return b

    probe = build([])
    n0 = len(probe.nodes) + 4  # + the four shared Ends added by finish()
    e0 = len(probe.edges)
    rn, re_ = MAX_NODES - n0, MAX_EDGES - e0
    if rn < 1 or re_ < 2 * rn:
        raise ValueError(f"main structure too large for the budget: {n0} nodes, {e0} edges")
    kmax = 96
    # s routers of k_i ports and m = rn - s notes: 2m + sum(k) = re_.
    s = max(1, math.ceil((re_ - 2 * rn) / (kmax - 2)))
    if s > rn:
        raise ValueError("cannot reach the edge budget with the remaining nodes")
    total_k = re_ - 2 * (rn - s)
    ks = [total_k // s + (1 if j < total_k % s else 0) for j in range(s)]
    tail: list[Block] = []
    notes = rn - s
    for j in range(max(s, notes)):
        if j < s:
            tail.append((tail_switch, {"ports": ks[j]}))
        if j < notes:
            tail.append((tail_message, {}))
    b = build(tail)
    return b.finish(b._entry)  # type: ignore[attr-defined]


# --------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------

def stats(src: str) -> dict[str, int]:
    """Measure ``src``: graph ``nodes``/``edges``, UTF-8 ``bytes``,
    ``yaml_nodes`` (every mapping, sequence and scalar, keys included),
    collection ``depth`` and declared ``schema_fields`` (every FieldSchema,
    nested ``items`` included).  Raises ``ValueError`` when not parseable."""
    from ruamel.yaml import YAML
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    root = YAML(typ="safe").compose(src)
    if not isinstance(root, MappingNode):
        raise ValueError("not a mapping document")
    yaml_nodes = depth = fields = 0
    stack: list[tuple[Any, int]] = [(root, 1)]
    while stack:
        n, d = stack.pop()
        yaml_nodes += 1
        if isinstance(n, MappingNode):
            depth = max(depth, d)
            for k, v in n.value:
                yaml_nodes += 1
                if k.value == "type" and isinstance(v, ScalarNode) and v.value in FIELD_TYPES:
                    fields += 1
                stack.append((v, d + 1))
        elif isinstance(n, SequenceNode):
            depth = max(depth, d)
            stack.extend((x, d + 1) for x in n.value)
    top = {k.value: v for k, v in root.value}
    return {
        "nodes": len(top["nodes"].value) if "nodes" in top else 0,
        "edges": len(top["edges"].value) if "edges" in top else 0,
        "bytes": len(src.encode("utf-8")),
        "yaml_nodes": yaml_nodes,
        "depth": depth,
        "schema_fields": fields,
    }


if __name__ == "__main__":  # pragma: no cover - manual inspection
    for name in ("typical_plan", "hundred_node_plan", "near_budget_plan", "max_budget_plan"):
        print(name, stats(globals()[name]()))
