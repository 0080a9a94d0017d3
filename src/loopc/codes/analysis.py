"""LP41xx–LP47xx — analyzer: graph soundness for forks, joins, switches,
fan-out and loops (docs/reference.md#parallel-scopes,
docs/reference.md#fan-out-bodies, docs/reference.md#loops, docs/reference.md#run-state).

LP41xx terminals, LP42xx switches, LP43xx fork/join scopes, LP44xx dynamic
fan-out, LP45xx counted loops, LP46xx Run-state effects, LP47xx
consistency.  Reported by :mod:`loopc.analyzer`.
"""
from loopc.codes import Code, register
from loopc.diagnostics import Severity

H = "apiVersion: loop.plan/v1\nkind: PlanVersion\n"


def _plan(entry: str, nodes: str, edges: str, head: str = "input: {}\noutput: {}\n") -> str:
    return H + head + f"entry: {entry}\nnodes:\n" + nodes + "edges:\n" + edges


def _send(nid: str, extra: str = "") -> str:
    return (f"  - id: {nid}\n    type: send_message\n"
            f"    sendMessage: {{target: \"#ops\", text: \"{nid}\", completion: sent}}\n" + extra)


def _done(nid: str = "done") -> str:
    return f"  - id: {nid}\n    type: end\n    end: {{status: succeeded}}\n"


def _fail(nid: str = "failed", code: str = "work_failed") -> str:
    return f"  - id: {nid}\n    type: end\n    end: {{status: failed, code: {code}}}\n"


def _fork(nid: str, branches: str = "[a, b]") -> str:
    return f"  - id: {nid}\n    type: fork\n    fork: {{branches: {branches}}}\n"


def _join(nid: str, owner: str, mode: str = "all", key: str = "forkId") -> str:
    return (f"  - id: {nid}\n    type: join\n"
            f"    join: {{{key}: {owner}, mode: {mode}, result: {{}}, merge: {{}}}}\n")


def _loop(nid: str, iterations: int = 3) -> str:
    return f"  - id: {nid}\n    type: loop\n    loop: {{mode: counted, iterations: {iterations}}}\n"


def _setvar(nid: str, assign: str) -> str:
    return f"  - id: {nid}\n    type: set_variable\n    setVariable: {{assign: {assign}}}\n"


def _e(eid: str, frm: str, port: str, to: str, to_port: str | None = None) -> str:
    tp = f", port: {to_port}" if to_port else ""
    return f"  - {{id: {eid}, from: {{node: {frm}, port: {port}}}, to: {{node: {to}{tp}}}}}\n"


# -- fork / join ------------------------------------------------------------

def _fork_plan(b_to: str = "joined", mode: str = "all", key: str = "forkId", owner: str = "split",
               extra_nodes: str = "", extra_edges: str = "", b_port: str = "completed",
               a_node: str | None = None, b_node: str | None = None, head: str = "input: {}\noutput: {}\n") -> str:
    """fork ``split`` [a, b] → ``do_a`` / ``do_b`` → join ``joined`` → ``done``."""
    return _plan(
        "split",
        _fork("split") + (a_node or _send("do_a")) + (b_node or _send("do_b"))
        + _join("joined", owner, mode, key) + _done() + extra_nodes,
        _e("e_a", "split", "a", "do_a") + _e("e_b", "split", "b", "do_b")
        + _e("e_a_done", "do_a", "completed", "joined") + _e("e_b_done", "do_b", b_port, b_to)
        + _e("e_joined", "joined", "completed", "done") + extra_edges,
        head)


_FORK_OK = _fork_plan()

_SWITCH_HEAD = "input:\n  severity: {type: string, required: true}\noutput: {}\n"


def _switch_plan(cases: str, mode: str = "first_match") -> str:
    return _plan(
        "route",
        "  - id: route\n    type: switch\n    input:\n      severity: {type: string, required: true}\n"
        f"    switch:\n      mode: {mode}\n      cases:\n" + cases + "      default: other\n"
        + _send("page") + _send("log") + _send("ignore") + _done(),
        _e("e_high", "route", "high", "page") + _e("e_low", "route", "low", "log")
        + _e("e_other", "route", "other", "ignore")
        + _e("e_page", "page", "completed", "done") + _e("e_log", "log", "completed", "done")
        + _e("e_ignore", "ignore", "completed", "done"),
        _SWITCH_HEAD)


def _cases(high: str, low: str) -> str:
    return (f"        - {{port: high, when: \"{high}\"}}\n"
            f"        - {{port: low, when: \"{low}\"}}\n")


_SWITCH_OK = _switch_plan(_cases("input.severity == 'high'", "input.severity == 'low'"))


def _nested_plan(y_to: str, with_inner_join: bool = True) -> str:
    """fork ``outer`` [a, b]; branch a opens fork ``inner`` [x, y]."""
    nodes = (_fork("outer") + _fork("inner", "[x, y]") + _send("do_x") + _send("do_y") + _send("do_b")
             + (_join("inner_join", "inner") if with_inner_join else "") + _join("outer_join", "outer")
             + _done())
    edges = (_e("e_a", "outer", "a", "inner") + _e("e_b", "outer", "b", "do_b")
             + _e("e_x", "inner", "x", "do_x") + _e("e_y", "inner", "y", "do_y")
             + _e("e_x_done", "do_x", "completed", "inner_join" if with_inner_join else "outer_join")
             + _e("e_y_done", "do_y", "completed", y_to)
             + (_e("e_inner", "inner_join", "completed", "outer_join") if with_inner_join else "")
             + _e("e_b_done", "do_b", "completed", "outer_join")
             + _e("e_done", "outer_join", "completed", "done"))
    return _plan("outer", nodes, edges)


def _overlap_plan(shared: bool) -> str:
    """Two forks on the alternative ports of a first_match switch."""
    nodes = ("  - id: route\n    type: switch\n    input:\n      severity: {type: string, required: true}\n"
             "    switch:\n      mode: first_match\n      cases:\n"
             "        - {port: high, when: \"input.severity == 'high'\"}\n      default: other\n"
             + _fork("f") + _fork("g", "[c, d]") + _send("do_b") + _send("do_d")
             + (_send("notify") if shared else _send("notify_a") + _send("notify_c"))
             + _join("f_join", "f") + _join("g_join", "g") + _done())
    edges = (_e("e_high", "route", "high", "f") + _e("e_other", "route", "other", "g")
             + _e("e_a", "f", "a", "notify" if shared else "notify_a")
             + _e("e_c", "g", "c", "notify" if shared else "notify_c")
             + (_e("e_notify", "notify", "completed", "f_join") if shared else
                _e("e_notify_a", "notify_a", "completed", "f_join")
                + _e("e_notify_c", "notify_c", "completed", "g_join"))
             + _e("e_b", "f", "b", "do_b") + _e("e_b_done", "do_b", "completed", "f_join")
             + _e("e_d", "g", "d", "do_d") + _e("e_d_done", "do_d", "completed", "g_join")
             + _e("e_f_done", "f_join", "completed", "done") + _e("e_g_done", "g_join", "completed", "done"))
    return _plan("route", nodes, edges, _SWITCH_HEAD)


def _merge_plan(merge: bool) -> str:
    nodes = _fork("split") + _send("do_a") + _send("do_b") + _send("review") + _join("joined", "split") + _done()
    if merge:
        edges = (_e("e_a", "split", "a", "do_a") + _e("e_b", "split", "b", "do_b")
                 + _e("e_a_done", "do_a", "completed", "review") + _e("e_b_done", "do_b", "completed", "review")
                 + _e("e_review", "review", "completed", "joined") + _e("e_joined", "joined", "completed", "done"))
    else:
        edges = (_e("e_a", "split", "a", "do_a") + _e("e_b", "split", "b", "do_b")
                 + _e("e_a_done", "do_a", "completed", "joined") + _e("e_b_done", "do_b", "completed", "joined")
                 + _e("e_joined", "joined", "completed", "review") + _e("e_review", "review", "completed", "done"))
    return _plan("split", nodes, edges)


def _ingress_plan(ingress: bool) -> str:
    return _plan(
        "start",
        _send("start") + _fork("split") + _send("do_a") + _send("do_b") + _join("joined", "split") + _done(),
        _e("e_start", "start", "completed", "split")
        + (_e("e_start_failed", "start", "failed", "do_a") if ingress else "")
        + _e("e_a", "split", "a", "do_a") + _e("e_b", "split", "b", "do_b")
        + _e("e_a_done", "do_a", "completed", "joined") + _e("e_b_done", "do_b", "completed", "joined")
        + _e("e_joined", "joined", "completed", "done"))


def _dup_join_plan(dup: bool) -> str:
    return _plan(
        "split",
        _fork("split") + _send("do_a") + _send("do_b") + _join("joined", "split")
        + (_join("joined_b", "split") if dup else "") + _done(),
        _e("e_a", "split", "a", "do_a") + _e("e_b", "split", "b", "do_b")
        + _e("e_a_done", "do_a", "completed", "joined")
        + _e("e_b_done", "do_b", "completed", "joined_b" if dup else "joined")
        + _e("e_joined", "joined", "completed", "done")
        + (_e("e_joined_b", "joined_b", "completed", "done") if dup else ""))


# -- fan-out ----------------------------------------------------------------

_FAN_HEAD = """input:
  room: {type: scope, required: true}
  planner: {type: agent, required: true}
  workers: {type: array, required: true, items: {type: agent, required: true}}
output: {}
"""

_PLANNER = """  - id: plan
    type: send_message
    input:
      room: {type: scope, required: true}
      planner: {type: agent, required: true}
      workers: {type: array, required: true, items: {type: agent, required: true}}
    sendMessage:
      scope: {ref: input.room}
      responder: {ref: input.planner}
      text: "Split the work"
      completion: callback
      workScope: null
      workItems:
        allowedResponders: {ref: input.workers}
"""

_DISPATCH = """  - id: dispatch
    type: fan_out
    input:
      work_items: {type: work_items, required: true}
    fanOut:
      items: {ref: input.work_items}
"""

_E_DISPATCH = """  - id: e_dispatch
    from: {node: plan, port: completed}
    to: {node: dispatch}
    bind: {work_items: {ref: output.workItems}}
"""


def _fan_plan(body: str = "", body_edges: str = "", *, join: bool = True, extra: str = "",
              extra_edges: str = "", head: str = _FAN_HEAD, item_to: str = "work",
              work_to: str = "collected", after: str = "done") -> str:
    """Planner callback → fan_out ``dispatch`` → ``work`` → join ``collected`` → End."""
    nodes = (_PLANNER + _DISPATCH + _send("work") + body
             + (_join("collected", "dispatch", "all", "fanOutId") if join else "") + _done() + extra)
    edges = (_E_DISPATCH + _e("e_item", "dispatch", "item", item_to) + body_edges
             + _e("e_collect", "work", "completed", work_to)
             + (_e("e_done", "collected", "completed", after) if join else "") + extra_edges)
    return _plan("plan", nodes, edges, head)


_FAN_OK = _fan_plan()


# -- loops --------------------------------------------------------------------

def _loop_plan(body: str, body_edges: str, nodes_after: str = "", done_to: str = "done",
               extra_edges: str = "") -> str:
    """loop ``polish`` (3 iterations) with the given body → ``done``."""
    return _plan(
        "polish",
        _loop("polish") + body + nodes_after + _done(),
        _e("e_body", "polish", "body", body.split("id: ", 1)[1].split("\n", 1)[0]) + body_edges
        + _e("e_after", "polish", "done", done_to) + extra_edges)


_LOOP_OK = _loop_plan(_send("draft"), _e("e_next", "draft", "completed", "polish", "continue"))


# -- state ----------------------------------------------------------------------

_STATE_HEAD = """input: {}
output: {}
state:
  status: {type: string, default: "new"}
  owner: {type: string, default: ""}
  ready: {type: boolean, default: false}
"""


def _state_head(*used: str) -> str:
    """:data:`_STATE_HEAD` with only the Run state fields the example uses
    (a declared field nothing reads or writes is LP3502)."""
    keep = [line for line in _STATE_HEAD.splitlines()
            if not line.startswith("  ") or line.split(":")[0].strip() in used]
    return "\n".join(keep) + "\n"


def _race_plan(b_field: str, mode: str = "all") -> str:
    return _fork_plan(
        mode=mode, head=_state_head("status", b_field),
        a_node=_setvar("do_a", "{status: \"legal\"}"),
        b_node=_setvar("do_b", "{" + b_field + ": \"security\"}"))


def _wait_plan(writer: bool, condition: str = "run.state.ready == true") -> str:
    wait = ("  - id: do_a\n    type: wait\n"
            f"    wait: {{condition: \"{condition}\", timeout: P1D}}\n")
    b = _setvar("do_b", "{ready: true}") if writer else _send("do_b")
    return _fork_plan(head=_state_head("ready"), a_node=wait, b_node=b)


def _cycle_plan(back: bool) -> str:
    """``draft`` → ``publish``; the failing variant retries by hand."""
    return _plan(
        "draft", _send("draft") + _send("publish") + _done(),
        _e("e_publish", "draft", "completed", "publish") + _e("e_done", "publish", "completed", "done")
        + (_e("e_retry", "publish", "failed", "draft") if back else ""))


_E = Severity.ERROR
_W = Severity.WARNING

register(
    # -- terminals ---------------------------------------------------------------
    Code("LP4101", "scope.succeeded_end_inside", "Succeeded End inside a scope",
         "A succeeded End is legal only outside every fork, all_match, fan-out and loop scope: "
         "finishing the Run while another branch, item or iteration is live would strand that work "
         "(\"one token reaching End does not complete a Run while another live token or open "
         "fork/fan-out/loop scope exists\"). Route the path to the scope's join (or to the loop's "
         "`continue`/`break`), and reach the succeeded End after it. A *failed* End inside a scope "
         "is fine: it fails that branch, records that item's failed envelope, or (in a loop body "
         "outside any parallel scope) fails the Plan.",
         _fork_plan(b_to="done"), _FORK_OK, _E),
    # -- switches ----------------------------------------------------------------
    Code("LP4201", "switch.shadowed_case", "first_match case can never be selected",
         "`first_match` evaluates its cases in authored order and takes the first that matches, so "
         "a case whose condition repeats an earlier one, or that follows a condition that is "
         "always true, is dead: its port could never fire. Reorder or fix the conditions. "
         "Conditions are compared on their parsed form, so whitespace and parentheses do not hide "
         "a repeat.",
         _switch_plan(_cases("input.severity == 'high'", "input.severity == 'high'")), _SWITCH_OK, _E),
    Code("LP4202", "switch.unreachable_default", "Switch default can never fire",
         "The switch's default port — selected only when no case matches — never fires: a case "
         "condition is always true (`true`, `!false`, `x || true`), or the cases together match "
         "every value. A warning: the plan runs, but the default branch is dead. What loopc can "
         "prove: conditions built with `!`, `&&` and `||` from comparisons of one reference with "
         "literals (`== != < <= > >=`, orderings on numbers only), `in` over a literal list and bare "
         "boolean references; each reference is tried on a value for every class its literals "
         "distinguish and its declared type allows, so a verdict is a proof. The declaration of "
         "the field (`input.x` in the switch's `input`, `run.input.x`, `run.state.x`) narrows the "
         "values: a required field or one with a default is never `null`, so `x >= 7` / `x < 7` "
         "over a required number is exhaustive; an enum holds only its members, so cases naming "
         "every member are exhaustive; a boolean is `true` or `false`. What it cannot: Run state "
         "and optional fields without a default may be `null`; nested paths (`input.a.b`) and "
         "references declared nowhere the switch can see range over every value; function calls, "
         "comparisons of two references and orderings of strings, durations or datetimes are "
         "independent unknowns; beyond 4,096 value combinations for one switch it claims nothing. "
         "So no warning does not mean the default is reachable.",
         _switch_plan(_cases("input.severity == 'high'", "true")), _SWITCH_OK, _W),
    Code("LP4203", "switch.case_never_matches", "Switch case never matches",
         "A case condition is always false, so its port never fires. A warning.",
         _switch_plan(_cases("input.severity == 'high'", "false")), _SWITCH_OK, _W),
    # -- fork / join scopes ----------------------------------------------------
    Code("LP4301", "join.owner_not_parallel", "Join owner opens no parallel scope",
         "`forkId` names the fork or `all_match` switch whose branches the join correlates, and "
         "`fanOutId` the fan_out whose items it collects. A first_match switch chooses one port "
         "and creates no branch lineage, and an action, loop, join or End opens no scope, so there "
         "is nothing to join: merge alternative paths by pointing them at the same node, or make "
         "the switch `all_match`.",
         _plan("route",
               "  - id: route\n    type: switch\n    input:\n      severity: {type: string, required: true}\n"
               "    switch:\n      mode: first_match\n      cases:\n"
               "        - {port: high, when: \"input.severity == 'high'\"}\n      default: other\n"
               + _send("page") + _send("log") + _join("joined", "route") + _done(),
               _e("e_high", "route", "high", "page") + _e("e_other", "route", "other", "log")
               + _e("e_page", "page", "completed", "joined") + _e("e_log", "log", "completed", "joined")
               + _e("e_joined", "joined", "completed", "done"), _SWITCH_HEAD),
         _plan("route",
               "  - id: route\n    type: switch\n    input:\n      severity: {type: string, required: true}\n"
               "    switch:\n      mode: all_match\n      cases:\n"
               "        - {port: high, when: \"input.severity == 'high'\"}\n      default: other\n"
               + _send("page") + _send("log") + _join("joined", "route") + _done(),
               _e("e_high", "route", "high", "page") + _e("e_other", "route", "other", "log")
               + _e("e_page", "page", "completed", "joined") + _e("e_log", "log", "completed", "joined")
               + _e("e_joined", "joined", "completed", "done"), _SWITCH_HEAD), _E),
    Code("LP4302", "join.cross_scope", "Arrival at a join from outside its owner's scope",
         "A join correlates arrivals by the activation of the fork, all_match switch or fan_out it "
         "names. An edge that reaches the join on a path that never went through that owner "
         "carries no such activation: the arrival can never be matched, and a join waiting for it "
         "would wait forever. Route the path around the join, or through the owner.",
         _fork_plan(extra_nodes=_send("audit") + "  - id: start\n    type: switch\n    input:\n"
                    "      severity: {type: string, required: true}\n    switch:\n      mode: first_match\n"
                    "      cases:\n        - {port: high, when: \"input.severity == 'high'\"}\n"
                    "      default: other\n",
                    extra_edges=_e("e_high", "start", "high", "split") + _e("e_other", "start", "other", "audit")
                    + _e("e_audit", "audit", "completed", "joined"),
                    head=_SWITCH_HEAD).replace("entry: split", "entry: start"),
         _fork_plan(extra_nodes=_send("audit") + "  - id: start\n    type: switch\n    input:\n"
                    "      severity: {type: string, required: true}\n    switch:\n      mode: first_match\n"
                    "      cases:\n        - {port: high, when: \"input.severity == 'high'\"}\n"
                    "      default: other\n",
                    extra_edges=_e("e_high", "start", "high", "split") + _e("e_other", "start", "other", "audit")
                    + _e("e_audit", "audit", "completed", "done"),
                    head=_SWITCH_HEAD).replace("entry: split", "entry: start"), _E),
    Code("LP4303", "join.double_arrival", "A branch can arrive twice at a join",
         "Each branch arrives at its join exactly once per owner activation (\"a branch cannot "
         "arrive twice at the same join for one fork activation\"). When a branch opens an inner "
         "fork (or all_match switch, or fan_out) and two of the inner branches reach the outer "
         "join directly, the outer branch arrives twice. Close the inner scope with its own join "
         "first, then continue to the outer join.",
         _nested_plan("outer_join", with_inner_join=False).replace(
             "do_x, port: completed}, to: {node: inner_join}", "do_x, port: completed}, to: {node: outer_join}"),
         _nested_plan("inner_join"), _E),
    Code("LP4304", "join.bypassed_branch", "Branch bypasses its join",
         "A branch of a fork or all_match switch leaves the scope without passing the scope's "
         "closing join — it reaches the join of an enclosing scope, or a node after the scope. The "
         "join then waits for a branch that will never arrive (\"joins that can wait forever for "
         "an unactivated or bypassed branch\"), and the escaped token runs on while its siblings "
         "are still live. Route every branch to its own join (or to a failure).",
         _nested_plan("outer_join"), _nested_plan("inner_join"), _E),
    Code("LP4305", "scope.improper_nesting", "Scopes overlap instead of nesting",
         "A node is reached from inside two different scopes that do not contain each other (for "
         "example from a branch of fork `f` and from a branch of fork `g`, on alternative paths). "
         "Fork/join scopes are properly nested: every node belongs to exactly one stack of open "
         "scopes, which is what its join correlation and failure routing rely on. Give each scope "
         "its own nodes, and meet only after the joins.",
         _overlap_plan(True), _overlap_plan(False), _E),
    Code("LP4306", "scope.merge_without_join", "Parallel branches merge without a join",
         "Two branches of one fork (or all_match switch) lead into the same ordinary node. That "
         "node would run once per branch with the same activation — classical Petri nets allow it, "
         "but loop.plan's activation identity does not: a node never holds two tokens of one owner "
         "activation, and branches meet only in their join. Join first, then continue, or give "
         "each branch its own node.",
         _merge_plan(True), _merge_plan(False), _E),
    Code("LP4307", "scope.external_ingress", "Edge enters a scope from outside",
         "A node inside a fork/all_match branch or a loop body is also reached by an edge from "
         "outside that scope. A token entering that way belongs to no branch (or iteration) of the "
         "scope, so the join — or the loop — can never correlate it. A scope is entered only "
         "through its opening port. When no edge leads to the owner at all (the edge that did "
         "was rerouted into its scope), the diagnostic sits on that edge with the fix routing it "
         "to the owner, and the owner and what only it leads to are not also unreachable "
         "(LP4006).",
         _ingress_plan(True), _ingress_plan(False), _E),
    Code("LP4308", "scope.no_join", "Fork or all_match switch has no join",
         "A fork or all_match switch starts parallel branches; they must meet again in exactly one "
         "join that names it with `forkId`. Without it the branches can never complete the scope: "
         "add the join and route every branch to it.",
         _fork_plan(b_to="done").replace("e_a_done, from: {node: do_a, port: completed}, to: {node: joined}",
                                         "e_a_done, from: {node: do_a, port: completed}, to: {node: done}")
         .replace(_join("joined", "split"), "").replace(_e("e_joined", "joined", "completed", "done"), ""),
         _FORK_OK, _E),
    Code("LP4309", "join.duplicate_owner", "Two joins close the same fork",
         "A fork or all_match switch has exactly one join: with two, each would wait for the "
         "branches that went to the other (scopes are properly nested). Route every branch to one "
         "join. When every arrival at the second join comes from the branches of another fork or "
         "all_match switch that has no join of its own, the join names the wrong owner: the "
         "diagnostic suggests that owner, and the join is read as closing it, so its arrivals and "
         "the other scope's missing join are not reported as well; while two joins name one "
         "owner, their `merge` reads of `branches.*` are not checked against its branch keys.",
         _dup_join_plan(True), _dup_join_plan(False), _E),
    Code("LP4310", "join.branch_never_arrives", "Branch never reaches its `all` join",
         "Every path of one branch ends in a failure (a failed End or an omitted failure port), so "
         "the `all` join can never complete: whenever that branch runs, the join takes its failure "
         "route. A warning — the plan is sound, but probably not what was meant.",
         _fork_plan(b_to="failed", extra_nodes=_fail()), _FORK_OK, _W),
    Code("LP4311", "join.owner_key_mismatch", "Join names its owner with the wrong key",
         "`forkId` names a fork or an all_match switch; `fanOutId` names a fan_out. The two kinds "
         "of join expose different merge spaces (`branches.*` / `winner.*` versus `items`), so the "
         "key must match the owner. The fix renames the key; until then the join is read as the "
         "owner's kind (its merge, mode and routes), so nothing else is reported about it.",
         _fork_plan(key="fanOutId"), _FORK_OK, _E),
    Code("LP4312", "join.owner_unknown", "Join owner names no node",
         "`forkId`/`fanOutId` must be the id of a fork, all_match switch or fan_out (dangling "
         "references are rejected). The diagnostic suggests the closest owner.",
         _fork_plan(owner="splt"), _FORK_OK, _E),
    # -- fan-out -------------------------------------------------------------------
    Code("LP4401", "fan_out.no_join", "fan_out has no closing join",
         "Every fan_out is closed by exactly one join with `fanOutId` and `mode: all`; it becomes "
         "ready once every item is terminal — immediately for zero WorkItems — and exposes the "
         "items' envelopes in source order as `items`.",
         _fan_plan(join=False, work_to="done"), _FAN_OK, _E),
    Code("LP4402", "fan_out.multiple_joins", "fan_out has more than one join",
         "A fan_out has exactly one closing join (\"missing or multiply paired fan-out joins\" are "
         "rejected). Route every item path to the same join. When every arrival at the second "
         "join comes from the item body of another fan_out that has no join of its own, the join "
         "names the wrong fan_out: the diagnostic suggests it, and nothing else is reported about "
         "either scope.",
         _fan_plan(extra=_join("collected_failures", "dispatch", "all", "fanOutId"),
                   extra_edges=_e("e_work_failed", "work", "failed", "collected_failures")
                   + _e("e_failures", "collected_failures", "completed", "done")),
         _FAN_OK, _E),
    Code("LP4403", "fan_out.external_ingress", "Edge enters a fan-out item body from outside",
         "The item body of a fan_out is entered only from its `item` port, once per WorkItem "
         "(\"one entry, no external body ingress\"). An edge from outside the body into one of its "
         "nodes would run that node with no item at all. When no edge leads to the fan_out at all "
         "(the edge that did was rerouted into its body), the diagnostic sits on that edge with "
         "the fix routing it to the fan_out, and nothing is reported unreachable.",
         _fan_plan(extra_edges=_e("e_plan_failed", "plan", "failed", "work")), _FAN_OK, _E),
    Code("LP4404", "fan_out.open_item_path", "Item path leaves the fan-out body",
         "Every path of a fan-out item body ends at the closing join or at a failure (which "
         "records that item's failed envelope); an edge from the body to a node after the join, or "
         "to an enclosing scope, leaves the item open (open item paths are rejected).",
         _fan_plan(after="review", extra=_send("review"),
                   extra_edges=_e("e_review", "review", "completed", "done")
                   + _e("e_work_failed", "work", "failed", "review")),
         _fan_plan(after="review", extra=_send("review"),
                   extra_edges=_e("e_review", "review", "completed", "done")), _E),
    Code("LP4405", "fan_out.nested", "fan_out inside another fan-out item body",
         "loop.plan/v1 (artifact v4) rejects a fan_out nested inside another fan_out's item body; "
         "a second dynamically returned batch needs a future contract. Run the second batch after "
         "the first fan-out's join.",
         _fan_plan(
             body="""  - id: inner_plan
    type: send_message
    sendMessage:
      target: "#ops"
      responder: {ref: run.input.planner}
      text: "Split again"
      completion: callback
      workScope: null
      workItems:
        allowedResponders: {ref: run.input.workers}
  - id: inner
    type: fan_out
    input:
      work_items: {type: work_items, required: true}
    fanOut:
      items: {ref: input.work_items}
""" + _join("inner_collected", "inner", "all", "fanOutId") + _send("inner_work"),
             body_edges="""  - id: e_inner
    from: {node: inner_plan, port: completed}
    to: {node: inner}
    bind: {work_items: {ref: output.workItems}}
""" + _e("e_inner_item", "inner", "item", "inner_work")
             + _e("e_inner_work", "inner_work", "completed", "inner_collected")
             + _e("e_inner_done", "inner_collected", "completed", "collected"),
             work_to="inner_plan"),
         _FAN_OK, _E),
    Code("LP4406", "fan_out.state_write", "Run-state write inside a fan-out item body",
         "A fan_out's items run concurrently, so a `set_variable` in the item body would race with "
         "itself (\"Run state writes inside that body are rejected\"). Carry the value to the "
         "fan-out join (it is in `items`) and write it after the join.",
         _fan_plan(head=_FAN_HEAD + "state:\n  status: {type: string, default: \"new\"}\n",
                   body=_setvar("note", "{status: \"working\"}"),
                   body_edges=_e("e_note", "note", "completed", "collected"), work_to="note"),
         _fan_plan(head=_FAN_HEAD + "state:\n  status: {type: string, default: \"new\"}\n",
                   body=_setvar("note", "{status: \"collected\"}"),
                   body_edges=_e("e_note", "note", "completed", "done"), after="note"), _E),
    # -- loops ------------------------------------------------------------------------
    Code("LP4501", "loop.cycle_outside_loop", "Cycle outside a counted loop",
         "Cycles exist only inside an explicit counted loop: the body leaves the loop's `body` "
         "port and comes back to its `continue` (or `break`) port (\"back-edges and self-loops "
         "outside an explicit loop scope are compile errors\"). The diagnostic sits on the edge "
         "that closes the cycle and lists the cycle; wrap the repeated part in a `loop` with a "
         "fixed `iterations` count.",
         _cycle_plan(True), _cycle_plan(False), _E),
    Code("LP4502", "loop.scope_leak", "continue/break leaves an inner scope open",
         "An edge into a loop's `continue` or `break` ends the iteration; it must not come from "
         "inside a fork branch, fan-out body or inner loop that is still open (\"a break or final "
         "continue cannot leave unjoined parallel work or another open graph scope behind\"). Join "
         "the parallel work first, then continue.",
         _loop_plan(_fork("split") + _send("do_a") + _send("do_b") + _join("joined", "split"),
                    _e("e_a", "split", "a", "do_a") + _e("e_b", "split", "b", "do_b")
                    + _e("e_a_done", "do_a", "completed", "polish", "continue")
                    + _e("e_b_done", "do_b", "completed", "joined")
                    + _e("e_next", "joined", "completed", "polish", "continue")),
         _loop_plan(_fork("split") + _send("do_a") + _send("do_b") + _join("joined", "split"),
                    _e("e_a", "split", "a", "do_a") + _e("e_b", "split", "b", "do_b")
                    + _e("e_a_done", "do_a", "completed", "joined")
                    + _e("e_b_done", "do_b", "completed", "joined")
                    + _e("e_next", "joined", "completed", "polish", "continue")), _E),
    Code("LP4503", "loop.body_escape", "Path leaves a loop body without continue/break",
         "A path inside a loop body leads to a node after the loop (or to an enclosing scope's "
         "join) instead of ending the iteration at the loop's `continue` or `break` port. The loop "
         "activation would stay open while the escaped token runs on (loop scope leaks are "
         "rejected). Leave the loop through `break`, then its `done` port.",
         _loop_plan(_send("draft"), _e("e_next", "draft", "completed", "polish", "continue")
                    + _e("e_draft_failed", "draft", "failed", "publish"),
                    nodes_after=_send("publish"), done_to="publish",
                    extra_edges=_e("e_publish", "publish", "completed", "done")),
         _loop_plan(_send("draft"), _e("e_next", "draft", "completed", "polish", "continue"),
                    nodes_after=_send("publish"), done_to="publish",
                    extra_edges=_e("e_publish", "publish", "completed", "done")), _E),
    Code("LP4504", "loop.back_edge_outside_body", "continue/break from outside the loop body",
         "Only a path that started at a loop's `body` port can end its iteration: an edge into "
         "`continue` or `break` from anywhere else carries no iteration of that loop (back-edges "
         "outside an explicit loop scope are errors).",
         _loop_plan(_send("draft"), _e("e_next", "draft", "completed", "polish", "continue"),
                    nodes_after=_send("publish"), done_to="publish",
                    extra_edges=_e("e_publish", "publish", "completed", "done")
                    + _e("e_publish_failed", "publish", "failed", "polish", "break")),
         _loop_plan(_send("draft"), _e("e_next", "draft", "completed", "polish", "continue"),
                    nodes_after=_send("publish"), done_to="publish",
                    extra_edges=_e("e_publish", "publish", "completed", "done")), _E),
    # -- Run-state effects -----------------------------------------------------------
    Code("LP4601", "state.race", "Concurrent Run-state access can race",
         "Two points that can run at the same time — different branches of one fork or all_match "
         "activation — access the same `run.state` field and at least one writes it: the outcome "
         "depends on arrival order, so loopc rejects it. Ordinary reads (bindings, templates, switch "
         "conditions) count; a `wait.condition` watching a field a concurrent branch writes is the "
         "intended synchronization and does not. An access that runs only after such a wait is "
         "ordered after the concurrent write when the wait cannot pass before it: the condition "
         "is false at the field's default, nothing writes the field before the fork (other than a "
         "literal at which the condition is false too, such as a reset to the default) or in the "
         "waiting branch before the wait, and at most one concurrent write runs (its writers sit "
         "on exclusive paths, such as the approved and rejected ports of one approval). One "
         "diagnostic per race, at a write (of two writers, the one that breaks the wait rule, "
         "such as a write in the waiting branch before its wait); the other access is its related "
         "note, and beside a wait a second note says which of these conditions fails (the wait "
         "watches another field; its condition can hold at the default; a write before the fork "
         "or before the wait; several concurrent writes). A race that rests on a field without "
         "a default (LP2026) or on a condition that does not parse (LP3001) is not reported "
         "beside that error.",
         _race_plan("status"), _race_plan("owner"), _E),
    Code("LP4602", "state.cancellable_write", "Run-state write in a branch an `any` join may cancel",
         "An `any` join accepts the first successful branch and cancels the others; a "
         "`set_variable` on a branch it may cancel may or may not have run when the join "
         "continues, so the state after the join depends on timing. Write after the join, from "
         "`winner.*`.",
         _fork_plan(mode="any", head=_state_head("status"), a_node=_setvar("do_a", "{status: \"legal\"}")),
         _fork_plan(mode="all", head=_state_head("status"), a_node=_setvar("do_a", "{status: \"legal\"}")), _E),
    Code("LP4603", "wait.condition_static", "Nothing can change a wait's condition",
         "A `wait.condition` resumes on a Run-state change, and only a `set_variable` changes Run "
         "state. When no set_variable that can run while the wait waits (one in a concurrent "
         "branch) writes a field the condition reads, the condition cannot change: the wait passes "
         "at once or never — it times out, or without `timeout` waits forever. A warning.",
         _wait_plan(False), _wait_plan(True), _W),
    Code("LP4604", "wait.condition_true_at_default", "A wait's condition already holds at the field's default",
         "A condition wait watches a Run-state field that a concurrent branch writes, but the "
         "condition is already true while the field holds its declared default (and nothing writes "
         "the field before the wait starts): the wait can pass at once, before the concurrent write, "
         "so it does not wait for it, and an access after the wait is not ordered after the write "
         "([A wait orders what follows it](language.md#wait-orders)). Write the condition so that it is "
         "false at the default — `run.state.ready == true` with default `false`, "
         "`run.state.decision != 'pending'` with default `pending`. The warning names the "
         "concurrent write as its related location; when a read after the wait races with the write, "
         "the race (LP4601) says this instead. A warning.",
         _wait_plan(True, "run.state.ready == false"), _wait_plan(True), _W),
    # -- consistency -------------------------------------------------------------------
    Code("LP4701", "join.fan_out_failed_route", "Route from a fan-out join's `failed` port",
         "A fan-out join never fires `failed`: it becomes ready once every item is terminal, "
         "failed ones included, and exposes them in `items`. An edge from its `failed` port is "
         "dead. A warning.",
         _fan_plan(extra=_fail("collect_failed", "collect_failed"),
                   extra_edges=_e("e_collect_failed", "collected", "failed", "collect_failed")),
         _FAN_OK, _W),
    Code("LP4702", "callback.work_items_unconsumed", "Callback WorkItems never dispatched",
         "A callback `send_message` declares `workItems`, but no fan_out follows it, so the "
         "WorkItems its responder returns are never dispatched. Bind `output.workItems` into a "
         "fan_out, or drop `workItems`. A warning.",
         _plan("plan", _PLANNER + _done(), _e("e_done", "plan", "completed", "done"), _FAN_HEAD),
         _plan("plan", _PLANNER.replace("      workItems:\n        allowedResponders: {ref: input.workers}\n", "")
               + _done(), _e("e_done", "plan", "completed", "done"), _FAN_HEAD), _W),
)
