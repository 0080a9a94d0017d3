"""Typed node configuration (docs/reference.md#nodes and each kind's section
below it; which keys take templates, expressions or literals:
docs/reference.md#values).

Every generic field of a kind (a template, expression or value declared in
:mod:`loopc.kinds` with its ``type``) is typed by :func:`check_generic`, in
the node's context
(:meth:`~loopc.compiler.typecheck_context.ContextBuilder.node_config`, or a
wait condition's): ``sendMessage.text``, ``requestApproval.assignee``
(member), ``summary``, ``feedbackScope`` (scope), ``wait.condition``
(boolean; reads ``input.*``/``run.*`` only), ``duration``/``timeout``
(duration), ``fanOut.items`` (``work_items``).  One function per node type
types the kind's own fields:

* send_message — ``target`` (template; never an interpolated agent, LP3402;
  literal parts fit a target form, LP3404; ``startThread`` only towards a
  Channel root, LP3405),
  ``scope`` (scope), ``responder`` (agent or responder),
  ``workScope`` (scope, or null), ``relatedScopes`` (scope expressions or one
  ``array<scope>``), ``workItems.allowedResponders`` (``array<agent>``);
* switch — every case ``when`` (boolean);
* set_variable — ``assign`` onto the Run ``state`` contract;
* join — ``merge`` onto ``result`` (complete), over ``branches``/``winner``/``items``/``run``;
* loop — ``init`` onto the loop ``state`` (complete);
* end — a failed End's ``detail`` template over its input.

Mismatches are LP3401 ``config.not_assignable`` (LP3303 inside mappings).
:func:`check_responder_fields` implements "``responder`` is legal only on a
fan-out item body's input" (docs/reference.md#types) — LP3403.
"""
from __future__ import annotations

from typing import Any, Iterator, Mapping, Protocol

from loopc import lazyre
from loopc.compiler import types as T
from loopc.compiler.model import (
    MISSING, End, FieldSchema, Join, Loop, Node, Plan, SendMessage, SetVariable, Switch,
)
from loopc.compiler.report import decl, node_entity
from loopc.compiler.yamlnodes import YMap, YNode
from loopc.kinds import KINDS, Kind



class _PlanChecker(Protocol):
    """What the per-node checks read from the type pass's plan checker
    (:class:`loopc.compiler.typecheck._PlanChecker` satisfies it); a protocol,
    so this module does not import the type pass back."""

    plan: Plan
    scopes: Any
    reporter: Any
    ctx: Any
    vc: Any

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
    """Type the configuration of one well-formed node: every generic field
    of its kind by form (:func:`check_generic`), then the kind's own fields."""
    r = pc.reporter
    if r.any_tainted and r.tainted(node_entity(node.id)):
        return
    kind = KINDS.get(node.type)
    ctx = check_generic(pc, node, kind) if kind is not None else None
    fn = _BY_TYPE.get(node.type)
    if fn is not None:
        fn(pc, node, ctx)


#: type names of :attr:`loopc.kinds.SourceField.type` (docs/reference.md#types)
_TYPES: dict[str, T.Type] = {
    "string": T.STRING, "number": T.NUMBER, "boolean": T.BOOLEAN, "duration": T.DURATION,
    "datetime": T.DATETIME, "object": T.OBJECT, "scope": T.SCOPE, "channel": T.CHANNEL, "member": T.MEMBER,
    "agent": T.AGENT, "work_items": T.WORK_ITEMS, "responder": T.RESPONDER,
}


def type_named(name: str) -> T.Type:
    """The type a :class:`~loopc.kinds.SourceField` declares (``"member"``,
    ``"array<agent>"``); ``KeyError`` for an unknown name."""
    if name.startswith("array<") and name.endswith(">"):
        return T.array_of(type_named(name[6:-1]))
    return _TYPES[name]


def check_generic(pc: "_PlanChecker", node: Node, kind: Kind) -> Any:
    """Type every generic template, expression and value of ``kind``
    (:attr:`loopc.kinds.Kind.generic_fields`) present in ``node``'s config
    against its declared type, in the node's configuration context (a wait
    condition's for ``context="condition"``); mismatches are LP3401.
    Returns the configuration context if it was built, else ``None``."""
    c = node.config
    ctx = None
    vc = pc.vc
    for attr, template, condition, what, t, render in _typed_fields(kind):
        x = getattr(c, attr)
        if x is None:
            continue
        if condition:
            cx = pc.ctx.wait_condition(node)
        else:
            if ctx is None:
                ctx = pc.ctx.node_config(node)
            cx = ctx
        if template:
            vc.template(x, t, cx, code=CFG, what=what, render=render)
        else:
            vc.check(x, t, cx, code=CFG, what=what)
    return ctx


#: One generic field the type pass types: (attribute, is a template, read in
#: a wait condition's context, how messages name it, its type, renders text).
_TypedField = tuple[str, bool, bool, str, T.Type, bool]

#: id(kind) -> (kind, its typed fields); the kind is kept so the id stays its own
_TYPED: dict[int, tuple[Kind, tuple[_TypedField, ...]]] = {}


def _typed_fields(kind: Kind) -> tuple[_TypedField, ...]:
    """The generic fields of ``kind`` that hold a template, expression or
    value (not a literal), derived once per kind."""
    got = _TYPED.get(id(kind))
    if got is None or got[0] is not kind:
        fields = tuple((attr, f.form == "template", f.context == "condition", f.what or f"`{key}`",
                        type_named(f.type), f.render)  # type: ignore[arg-type]
                       for key, attr, f in kind.generic_fields if f.form != "literal")
        got = _TYPED[id(kind)] = (kind, fields)
    return got[1]


# the kinds' own (cross-field) fields; generic fields need nothing below


def _send_message(pc: "_PlanChecker", node: Node, ctx: Any) -> None:
    c: SendMessage = node.config  # type: ignore[assignment]
    if ctx is None:
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
    ("#", lazyre.compile(r"[a-z0-9_-]*\Z"), "a channel `#slug` (lowercase letters, digits, `_`, `-`)"),
    ("dm:@", lazyre.compile(r"[A-Za-z0-9_.-]*\Z"), "a direct message `dm:@handle`"),
    ("team:@", lazyre.compile(r"[A-Za-z0-9_.-]*\Z"), "a team `team:@handle`"),
    ("task:", lazyre.compile(r"[A-Za-z0-9_-]*\Z"), "a task `task:<id>`"),
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


def _switch(pc: "_PlanChecker", node: Node, ctx: Any) -> None:
    c: Switch = node.config  # type: ignore[assignment]
    if ctx is None:
        ctx = pc.ctx.node_config(node)
    for case in c.cases:
        if case.when is not None:
            typed = pc.vc.check(case.when, T.BOOLEAN, ctx, code=CFG, what=f"the `when` of case `{case.port}`")
            if typed is None and isinstance(case.when.src, YNode):
                # rejected (already reported): what the analyzer proves about the
                # cases (shadowing, exhaustiveness) must not rest on it
                pc.reporter.taint(decl(case.when.src.pointer))


def _set_variable(pc: "_PlanChecker", node: Node, ctx: Any) -> None:
    c: SetVariable = node.config  # type: ignore[assignment]
    pc.mapping(c.assign, _sub(c, "assign"), pc.plan.state, pc.ctx.node_config(node),
               what=f"the `assign` of set_variable '{node.id}'", dest="the Run state", complete=False,
               node=node.id, decl_root="state")


def _join(pc: "_PlanChecker", node: Node, ctx: Any) -> None:
    c: Join = node.config  # type: ignore[assignment]
    holder = _sub(c, "merge")
    pc.mapping(c.merge, holder if holder is not None else c.src, c.result, pc.ctx.join_merge(node),
               what=f"the `merge` of join '{node.id}'", dest=f"the `result` of join '{node.id}'",
               complete=True, node=node.id)


def _loop(pc: "_PlanChecker", node: Node, ctx: Any) -> None:
    c: Loop = node.config  # type: ignore[assignment]
    holder = _sub(c, "init")
    pc.mapping(c.init, holder if holder is not None else c.src, c.state, pc.ctx.node_config(node),
               what=f"the `init` of loop '{node.id}'", dest=f"the state of loop '{node.id}'",
               complete=True, node=node.id)


def _end(pc: "_PlanChecker", node: Node, ctx: Any) -> None:
    c: End = node.config  # type: ignore[assignment]
    if c.status == "failed" and c.detail is not None:
        pc.vc.template(c.detail, T.STRING, pc.ctx.node_config(node), code=CFG, what="`detail`", render=True)


#: node type -> the type checks of its kind's own fields
_BY_TYPE: dict[str, Any] = {
    "send_message": _send_message,
    "switch": _switch,
    "set_variable": _set_variable,
    "join": _join,
    "loop": _loop,
    "end": _end,
}
