"""Typed node configuration (docs/reference.md#nodes and each kind's section
below it; which keys take templates, expressions or literals:
docs/reference.md#values).

One function per node type, each typing its configuration values in the
node's context (:meth:`~loopc.compiler.typecheck_context.ContextBuilder.node_config`):

* send_message — ``target`` (template; never an interpolated agent, LP3402;
  literal parts fit a target form, LP3404; ``startThread`` only towards a
  Channel root, LP3405),
  ``scope`` (scope), ``text`` (template), ``responder`` (agent or responder),
  ``workScope`` (scope, or null), ``relatedScopes`` (scope expressions or one
  ``array<scope>``), ``workItems.allowedResponders`` (``array<agent>``);
* request_approval — ``assignee`` (member), ``summary`` (template),
  ``feedbackScope`` (scope);
* wait — ``condition`` (boolean; reads ``input.*``/``run.*`` only),
  ``duration``/``timeout`` (duration);
* switch — every case ``when`` (boolean);
* set_variable — ``assign`` onto the Run ``state`` contract;
* join — ``merge`` onto ``result`` (complete), over ``branches``/``winner``/``items``/``run``;
* fan_out — ``items`` (``work_items``);
* loop — ``init`` onto the loop ``state`` (complete);
* end — a failed End's ``detail`` template over its input.

Mismatches are LP3401 ``config.not_assignable`` (LP3303 inside mappings).
:func:`check_responder_fields` implements "``responder`` is legal only on a
fan-out item body's input" (docs/reference.md#types) — LP3403.
"""
from __future__ import annotations

import re
from typing import Any, Iterator, Mapping, Protocol

from loopc.compiler import types as T
from loopc.compiler.model import (
    MISSING, End, FanOut, FieldSchema, Join, Loop, Node, Plan, RequestApproval, SendMessage, SetVariable,
    Switch, Wait,
)
from loopc.compiler.report import node_entity
from loopc.compiler.yamlnodes import YMap, YNode



class _PlanChecker(Protocol):
    """What the per-node checks read from the type pass's plan checker
    (:class:`loopc.compiler.typecheck._PlanChecker` satisfies it); a protocol,
    so this module does not import the type pass back."""

    plan: Plan
    scopes: Any
    reporter: Any
    ctx: Any
    vc: Any
    compiler: Any

    def mapping(self, entries: Mapping[str, Any], holder: YNode | None, contract: Mapping[str, Any],
                ctx: Any, *, what: str, dest: str, complete: bool,
                node: str | None = None, edge: str | None = None,
                decl_root: str | None = None) -> Any: ...

CFG = "LP3401"


def _sub(holder: Any, key: str) -> YNode | None:
    s = getattr(holder, "src", None)
    if isinstance(s, YMap):
        return s.get(key)
    return None


# ---------------------------------------------------------------------------
# responder placement
# ---------------------------------------------------------------------------

def _responder_nodes(fs: FieldSchema, kind: str = "responder") -> Iterator[YNode | None]:
    """``type`` value nodes of every ``kind`` field in ``fs`` (array items included)."""
    cur: FieldSchema | None = fs
    depth = 0
    while cur is not None and depth < 1000:
        if cur.type == kind:
            yield _sub(cur, "type") or cur.src
            return
        cur = cur.items if cur.type == "array" else None
        depth += 1


def check_responder_fields(pc: "_PlanChecker") -> None:
    """LP3403: ``responder`` fields anywhere but the input of a node inside a
    fan-out item body (docs/reference.md#types, docs/reference.md#fan-out-bodies)."""
    plan = pc.plan
    rep = pc.reporter

    def flag(contract: Any, where: str, node: str | None = None) -> None:
        for name, fs in (contract or {}).items():
            if not isinstance(fs, FieldSchema):
                continue
            for at in _responder_nodes(fs):
                rep.report("LP3403", at, f"field `{name}` of {where} is responder-typed; `responder` is "
                           "legal only on the input of a node inside a fan_out item body (declare an "
                           "`agent` here)", node=node)

    flag(plan.input, "the Plan input")
    flag(plan.output, "the Plan output")
    flag(plan.state, "the Run state")
    check_work_items_fields(pc)
    scopes = pc.scopes
    for node in plan.nodes.values():
        cfg = node.config
        if node.input:
            inside = scopes is not None and scopes.innermost(node.id, "fan_out") is not None
            if not inside and not pc.ctx.unknown(node.id):
                flag(node.input, f"the input of '{node.id}' (which is not inside a fan_out item body)", node.id)
        if isinstance(cfg, SendMessage) and cfg.callback_output:
            flag(cfg.callback_output, f"the callbackOutput of '{node.id}'", node.id)
        elif isinstance(cfg, Join):
            flag(cfg.result, f"the result of join '{node.id}'", node.id)
        elif isinstance(cfg, Loop):
            flag(cfg.state, f"the state of loop '{node.id}'", node.id)


def check_work_items_fields(pc: "_PlanChecker") -> None:
    """LP3406: ``work_items`` values flow only from a callback's compiler-owned
    ``workItems`` output through node inputs and bindings to a fan_out
    (docs/reference.md#types): the Plan input, output and Run state, and a
    ``callbackOutput``, cannot declare them (an invoker, a set_variable or an
    Agent would be authoring WorkItems)."""
    plan = pc.plan

    def flag(contract: Any, where: str, node: str | None = None) -> None:
        for name, fs in (contract or {}).items():
            if not isinstance(fs, FieldSchema):
                continue
            for at in _responder_nodes(fs, "work_items"):
                pc.reporter.report(
                    "LP3406", at, f"field `{name}` of {where} is work_items-typed; WorkItems come only "
                    "from a callback's `workItems` output (declare `workItems` on the send_message and "
                    "bind `output.workItems` into the fan_out's input)", node=node)

    flag(plan.input, "the Plan input")
    flag(plan.output, "the Plan output")
    flag(plan.state, "the Run state")
    for node in plan.nodes.values():
        cfg = node.config
        if isinstance(cfg, SendMessage) and cfg.callback_output:
            flag(cfg.callback_output, f"the callbackOutput of '{node.id}'", node.id)


# ---------------------------------------------------------------------------
# per node type
# ---------------------------------------------------------------------------

def check_node(pc: "_PlanChecker", node: Node) -> None:
    """Type the configuration of one well-formed node."""
    if pc.reporter.tainted(node_entity(node.id)):
        return
    fn = _BY_TYPE.get(node.config.__class__)
    if fn is not None:
        fn(pc, node)


def _send_message(pc: "_PlanChecker", node: Node) -> None:
    c: SendMessage = node.config  # type: ignore[assignment]
    ctx = pc.ctx.node_config(node)
    vc = pc.vc
    if c.target is not None:
        typed = vc.template(c.target, T.STRING, ctx, code=CFG, what="`target`", render=True, forbid_agent=True)
        if typed is not None:
            _check_target(pc, node, c, typed)
    if c.scope is not None:
        typed = vc.check(c.scope, T.SCOPE, ctx, code=CFG, what="`scope`")
        if typed is not None and c.start_thread and c.completion == "sent":
            kind = _literal_scope_kind(typed)
            if kind is not None and kind != "channel":
                pc.reporter.report("LP3405", c.scope.src, f"`startThread` opens a Thread under a Channel root "
                                   f"message, but this scope is a {kind}", node=node.id)
    if c.text is not None:
        vc.template(c.text, T.STRING, ctx, code=CFG, what="`text`", render=True)
    if c.responder is not None:
        vc.check(c.responder, T.RESPONDER, ctx, code=CFG, what="`responder`")
    if c.work_scope is not MISSING and c.work_scope is not None:
        vc.check(c.work_scope, T.SCOPE, ctx, code=CFG, what="`workScope`")
    rs = c.related_scopes
    if isinstance(rs, tuple):
        for i, item in enumerate(rs):
            vc.check(item, T.SCOPE, ctx, code=CFG, what=f"`relatedScopes` entry {i + 1}")
    elif rs is not None:
        vc.check(rs, T.array_of(T.Type("scope")), ctx, code=CFG,
                 what="`relatedScopes`")
    if c.allowed_responders is not None:
        vc.check(c.allowed_responders, T.array_of(T.AGENT), ctx, code=CFG, what="`workItems.allowedResponders`")


#: Characters allowed after each target prefix (docs/reference.md#wire-forms).
_TARGET_FORMS = (
    ("#", re.compile(r"[a-z0-9_-]*\Z"), "a channel `#slug` (lowercase letters, digits, `_`, `-`)"),
    ("dm:@", re.compile(r"[A-Za-z0-9_.-]*\Z"), "a direct message `dm:@handle`"),
    ("team:@", re.compile(r"[A-Za-z0-9_.-]*\Z"), "a team `team:@handle`"),
    ("task:", re.compile(r"[A-Za-z0-9_-]*\Z"), "a task `task:<id>`"),
)


def _check_target(pc: "_PlanChecker", node: Node, c: SendMessage, typed: Any) -> None:
    """LP3404: the literal parts of ``target`` must fit one target form
    (``#slug``, ``dm:@handle``, ``task:<id>``, ``team:@handle``); a target
    that starts with an interpolation is resolved and checked at run time.
    LP3405: ``startThread`` needs a Channel-root (``#slug``) destination."""
    from loopc.compiler.wireforms import is_target

    parts = typed.ast.parts
    text = c.target.text  # type: ignore[union-attr]
    if not parts or not isinstance(parts[0], str):
        return  # dynamic: resolved (and checked) at run time (docs/reference.md#node-send-message)
    first = parts[0]
    if typed.ast.is_constant:
        ok = is_target(text)
        form = next((f for f in _TARGET_FORMS if text.startswith(f[0])), None)
    else:
        form = next((f for f in _TARGET_FORMS if first.startswith(f[0])), None)
        ok = form is not None and all(
            form[1].match(p[len(form[0]):] if i == 0 else p) is not None
            for i, p in enumerate(parts) if isinstance(p, str))
    if not ok:
        what = (f"`target` is {form[2]}, but `{text}` does not fit it" if form is not None else
                f"`target` `{text}` is not a message target")
        pc.reporter.report("LP3404", c.target.src, what + " (targets: `#slug`, `dm:@handle`, `task:<id>`, "  # type: ignore[union-attr]
                           "`team:@handle`; for a scope value use `scope`)", node=node.id)
        return
    if c.start_thread and c.completion == "sent" and form is not None and form[0] != "#":
        pc.reporter.report("LP3405", c.target.src, "`startThread` opens a Thread under a Channel root "  # type: ignore[union-attr]
                           f"message; `{text}` is not a channel (`#slug`) destination",
                           node=node.id)


def _literal_scope_kind(typed: Any) -> str | None:
    """The ``kind`` of a literal or constructed scope, if written literally."""
    from loopc.compiler.typecheck_values import TypedLiteral, TypedMap

    if isinstance(typed, TypedLiteral) and isinstance(typed.value, Mapping):
        k = typed.value.get("kind")
        return k if isinstance(k, str) else None
    if isinstance(typed, TypedMap):
        for key, v in typed.entries:
            if key == "kind" and isinstance(v, TypedLiteral) and isinstance(v.value, str):
                return v.value
    return None


def _request_approval(pc: "_PlanChecker", node: Node) -> None:
    c: RequestApproval = node.config  # type: ignore[assignment]
    ctx = pc.ctx.node_config(node)
    vc = pc.vc
    if c.assignee is not None:
        vc.template(c.assignee, T.MEMBER, ctx, code=CFG, what="`assignee`")
    if c.summary is not None:
        vc.template(c.summary, T.STRING, ctx, code=CFG, what="`summary`", render=True)
    if c.feedback_scope is not None:
        vc.check(c.feedback_scope, T.SCOPE, ctx, code=CFG, what="`feedbackScope`")


def _wait(pc: "_PlanChecker", node: Node) -> None:
    c: Wait = node.config  # type: ignore[assignment]
    vc = pc.vc
    if c.condition is not None:
        vc.check(c.condition, T.BOOLEAN, pc.ctx.wait_condition(node), code=CFG, what="the wait `condition`")
    if c.duration is not None or c.timeout is not None:
        ctx = pc.ctx.node_config(node)
        if c.duration is not None:
            vc.check(c.duration, T.DURATION, ctx, code=CFG, what="`duration`")
        if c.timeout is not None:
            vc.check(c.timeout, T.DURATION, ctx, code=CFG, what="`timeout`")


def _switch(pc: "_PlanChecker", node: Node) -> None:
    c: Switch = node.config  # type: ignore[assignment]
    ctx = pc.ctx.node_config(node)
    for case in c.cases:
        if case.when is not None:
            pc.vc.check(case.when, T.BOOLEAN, ctx, code=CFG, what=f"the `when` of case `{case.port}`")


def _set_variable(pc: "_PlanChecker", node: Node) -> None:
    c: SetVariable = node.config  # type: ignore[assignment]
    pc.mapping(c.assign, _sub(c, "assign"), pc.plan.state, pc.ctx.node_config(node),
               what=f"the `assign` of set_variable '{node.id}'", dest="the Run state", complete=False,
               node=node.id, decl_root="state")


def _join(pc: "_PlanChecker", node: Node) -> None:
    c: Join = node.config  # type: ignore[assignment]
    holder = _sub(c, "merge")
    pc.mapping(c.merge, holder if holder is not None else c.src, c.result, pc.ctx.join_merge(node),
               what=f"the `merge` of join '{node.id}'", dest=f"the `result` of join '{node.id}'",
               complete=True, node=node.id)


def _fan_out(pc: "_PlanChecker", node: Node) -> None:
    c: FanOut = node.config  # type: ignore[assignment]
    if c.items is not None:
        pc.vc.check(c.items, T.WORK_ITEMS, pc.ctx.node_config(node), code=CFG, what="`fanOut.items`")


def _loop(pc: "_PlanChecker", node: Node) -> None:
    c: Loop = node.config  # type: ignore[assignment]
    holder = _sub(c, "init")
    pc.mapping(c.init, holder if holder is not None else c.src, c.state, pc.ctx.node_config(node),
               what=f"the `init` of loop '{node.id}'", dest=f"the state of loop '{node.id}'",
               complete=True, node=node.id)


def _end(pc: "_PlanChecker", node: Node) -> None:
    c: End = node.config  # type: ignore[assignment]
    if c.status == "failed" and c.detail is not None:
        pc.vc.template(c.detail, T.STRING, pc.ctx.node_config(node), code=CFG, what="`detail`", render=True)


_BY_TYPE: dict[type, Any] = {
    SendMessage: _send_message,
    RequestApproval: _request_approval,
    Wait: _wait,
    Switch: _switch,
    SetVariable: _set_variable,
    Join: _join,
    FanOut: _fan_out,
    Loop: _loop,
    End: _end,
}
