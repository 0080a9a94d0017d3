"""LP2xxx — schema pass: document header, closed mappings, FieldSchema
contracts, node/edge shapes, ValueExpr construction and the graph/literal
budgets (docs/reference.md#document to
docs/reference.md#node-end, docs/reference.md#budgets).

Every ``example`` is a complete plan that produces the code and every
``fixed`` a complete plan that checks clean (both run by the test-suite).
"""
from loopc.codes import Code, register

H = "apiVersion: loop.plan/v1\nkind: PlanVersion\n"
END = """  - id: done
    type: end
    end: {status: succeeded}
"""


def _plan(nodes: str, edges: str = "edges: []\n", *, entry: str = "done",
          head: str = "input: {}\noutput: {}\n") -> str:
    return H + head + f"entry: {entry}\nnodes:\n" + nodes + edges


#: The minimal valid plan.
OK = _plan(END)

_SEND = """  - id: ask
    type: send_message
    sendMessage:
      target: "#release"
      text: "Release is ready"
      completion: sent
"""
_SEND_EDGES = """edges:
  - id: e_done
    from: {node: ask, port: completed}
    to: {node: done}
"""


def _send(config: str = _SEND, head: str = "input: {}\noutput: {}\n", extra: str = "") -> str:
    return _plan(config + extra + END, _SEND_EDGES, entry="ask", head=head)


SEND_OK = _send()

_CB_HEAD = """input:
  topic: {type: string, required: true}
  reviewer: {type: agent, required: true}
  room: {type: scope, required: true}
output:
  verdict: {type: string, required: true}
"""
_CB_NODE = """  - id: ask
    type: send_message
    input:
      topic: {type: string, required: true}
      reviewer: {type: agent, required: true}
      room: {type: scope, required: true}
    sendMessage:
      scope: {ref: input.room}
      responder: {ref: input.reviewer}
      text: "Please review {{ input.topic }}"
      completion: callback
%s"""
_CB_OUTPUT = """      callbackOutput:
        verdict: {type: enum, values: [approve, reject], required: true}
"""
_CB_EDGES = """edges:
  - id: e_done
    from: {node: ask, port: completed}
    to: {node: done}
    bind: {verdict: {ref: output.verdict}}
"""


def _callback(extra: str = _CB_OUTPUT) -> str:
    return _plan(_CB_NODE % extra + END, _CB_EDGES, entry="ask", head=_CB_HEAD)


CALLBACK_OK = _callback()

_WS_HEAD = """input:
  room: {type: scope, required: true}
  reviewer: {type: agent, required: true}
  context: {type: scope, required: true}
output: {}
"""
_WS_NODE = """  - id: ask
    type: send_message
    input:
      room: {type: scope, required: true}
      reviewer: {type: agent, required: true}
      context: {type: scope, required: true}
    sendMessage:
      scope: {ref: input.room}
      responder: {ref: input.reviewer}
      text: "Pick a task and do the work"
      completion: callback
%s"""


def _work_scope(extra: str) -> str:
    return _plan(_WS_NODE % extra + END, _SEND_EDGES, entry="ask", head=_WS_HEAD)


WS_OK = _work_scope("      workScope: null\n      relatedScopes:\n        - {ref: input.context}\n")

_STATE_HEAD = """input: {}
output: {}
state:
  score: {type: number, default: 0}
"""
_SET = """  - id: reset
    type: set_variable
    setVariable:
      assign: {score: %s}
"""
_SET_EDGES = """edges:
  - id: e_done
    from: {node: reset, port: completed}
    to: {node: done}
"""


def _set(value: str) -> str:
    return _plan(_SET % value + END, _SET_EDGES, entry="reset", head=_STATE_HEAD)


_WAIT = """  - id: nap
    type: wait
    wait:
%s"""
_WAIT_EDGES = """edges:
  - id: e_done
    from: {node: nap, port: completed}
    to: {node: done}
"""
_WAIT_HEAD = """input: {}
output: {}
state:
  ready: {type: boolean, default: false}
"""


def _timer(config: str) -> str:
    """A plan whose entry is the timer wait ``nap`` configured by ``config``."""
    return _plan(_WAIT % config + END, _WAIT_EDGES, entry="nap", head="input: {}\noutput: {}\n")


_GATE = """  - id: split
    type: fork
    fork:
      branches: [gate, open]
""" + _WAIT + """  - id: open
    type: set_variable
    setVariable:
      assign: {ready: true}
  - id: both
    type: join
    join: {forkId: split, mode: all}
"""
_GATE_EDGES = """edges:
  - id: e_gate
    from: {node: split, port: gate}
    to: {node: nap}
  - id: e_open
    from: {node: split, port: open}
    to: {node: open}
  - id: e_nap
    from: {node: nap, port: completed}
    to: {node: both}
  - id: e_set
    from: {node: open, port: completed}
    to: {node: both}
  - id: e_done
    from: {node: both, port: completed}
    to: {node: done}
"""


def _gate(config: str) -> str:
    """A fork of the condition wait ``nap`` (configured by ``config``) and
    the set_variable ``open`` that writes what it watches, joined: the
    smallest plan in which a state wait is correct (no LP4603)."""
    return _plan(_GATE % config + END, _GATE_EDGES, entry="split", head=_WAIT_HEAD)


_LOOP = """  - id: poll
    type: loop
    loop:
      mode: counted
      iterations: %s
  - id: nap
    type: wait
    wait: {duration: PT1M}
"""
_LOOP_EDGES = """edges:
  - id: e_body
    from: {node: poll, port: body}
    to: {node: nap}
  - id: e_next
    from: {node: nap, port: completed}
    to: {node: poll, port: continue}
  - id: e_done
    from: {node: poll, port: done}
    to: {node: done}
"""


def _loop(iterations: str, head: str = "input: {}\noutput: {}\n") -> str:
    return _plan(_LOOP % iterations + END, _LOOP_EDGES, entry="poll", head=head)


_APPROVAL_HEAD = """input:
  approver: {type: member, required: true}
output: {}
"""
_APPROVAL = """  - id: approve
    type: request_approval
    input:
      approver: {type: member, required: true}
    requestApproval:
%s  - id: rejected
    type: end
    input:
      by: {type: member, required: true}
    end: {status: failed, code: %s, detail: "Rejected by {{ input.by }}"}
"""
_APPROVAL_EDGES = """edges:
  - id: e_ok
    from: {node: approve, port: approved}
    to: {node: done}
  - id: e_no
    from: {node: approve, port: rejected}
    to: {node: rejected}
    bind: {by: {ref: output.decidedBy}}
"""
_APPROVAL_CFG = """      assignee: "{{ input.approver }}"
      summary: "Approve the release"
"""


def _approval(config: str = _APPROVAL_CFG, code: str = "review_rejected", end: str = END) -> str:
    return _plan(_APPROVAL % (config, code) + end, _APPROVAL_EDGES, entry="approve", head=_APPROVAL_HEAD)


_SWITCH_HEAD = """input:
  severity: {type: enum, values: [high, low], required: true}
output: {}
"""
_SWITCH = """  - id: route
    type: switch
    input:
      severity: {type: enum, values: [high, low], required: true}
    switch:
      mode: first_match
%s      default: %s
  - id: paged
    type: end
    end: {status: succeeded}
"""
_SWITCH_EDGES = """edges:
  - id: e_urgent
    from: {node: route, port: urgent}
    to: {node: paged}
  - id: e_other
    from: {node: route, port: %s}
    to: {node: done}
"""
_URGENT = "      cases:\n        - {port: urgent, when: \"input.severity == 'high'\"}\n"


def _switch(cases: str = _URGENT, default: str = "routine") -> str:
    return _plan(_SWITCH % (cases, default) + END, _SWITCH_EDGES % default, entry="route", head=_SWITCH_HEAD)


_FORK = """  - id: split
    type: fork
    fork: {branches: %s}
  - id: legal_ok
    type: wait
    wait: {duration: PT1M}
  - id: security_ok
    type: wait
    wait: {duration: PT1M}
  - id: both
    type: join
    join: {%s, mode: all}
"""
_FORK_EDGES = """edges:
  - id: e_legal
    from: {node: split, port: legal}
    to: {node: legal_ok}
  - id: e_security
    from: {node: split, port: security}
    to: {node: security_ok}
  - id: e_legal_done
    from: {node: legal_ok, port: completed}
    to: {node: both}
  - id: e_security_done
    from: {node: security_ok, port: completed}
    to: {node: both}
  - id: e_done
    from: {node: both, port: completed}
    to: {node: done}
"""


def _fork(branches: str = "[legal, security]", owner: str = "forkId: split") -> str:
    return _plan(_FORK % (branches, owner) + END, _FORK_EDGES, entry="split")


_FAN_HEAD = """input:
  room: {type: scope, required: true}
  planner: {type: agent, required: true}
  workers: {type: array, required: true, items: {type: agent, required: true}}
output:
  results: {type: array, required: true, items: {type: object, required: true}}
"""
_FAN = """  - id: plan
    type: send_message
    input:
      room: {type: scope, required: true}
      planner: {type: agent, required: true}
      workers: {type: array, required: true, items: {type: agent, required: true}}
    sendMessage:
      scope: {ref: input.room}
      responder: {ref: input.planner}
      text: "Split the work into items"
      completion: callback
      workScope: {ref: input.room}
      workItems:
        allowedResponders: {ref: input.workers}
  - id: dispatch
    type: fan_out
    input:
      work_items: {type: work_items, required: true}
    fanOut:
      items: {ref: input.work_items}
%s  - id: work
    type: send_message
    input:
      scope: {type: scope, required: true}
      responder: {type: responder, required: true}
      instruction: {type: string, required: true}
    sendMessage:
      scope: {ref: input.scope}
      responder: {ref: input.responder}
      text: "{{ input.instruction }}"
      completion: callback
      callbackOutput:
        result: {type: string, required: true}
  - id: collected
    type: join
    input:
      result: {type: string, required: true}
    join:
      fanOutId: dispatch
      mode: %s
      result:
        results: {type: array, required: true, items: {type: object, required: true}}
      merge:
        results: {ref: items}
"""
_FAN_EDGES = """edges:
  - id: e_dispatch
    from: {node: plan, port: completed}
    to: {node: dispatch}
    bind: {work_items: {ref: output.workItems}}
  - id: e_item
    from: {node: dispatch, port: item}
    to: {node: work}
    bind:
      scope: {ref: item.workScope}
      responder: {ref: item.responder}
      instruction: {ref: item.instruction}
  - id: e_collect
    from: {node: work, port: completed}
    to: {node: collected}
    bind: {result: {ref: output.result}}
  - id: e_done
    from: {node: collected, port: completed}
    to: {node: done}
"""


def _fan(fan_extra: str = "", mode: str = "all") -> str:
    return _plan(_FAN % (fan_extra, mode) + END, _FAN_EDGES, entry="plan", head=_FAN_HEAD)


FAN_OK = _fan()

register(
    # -- document -------------------------------------------------------------
    Code("LP2001", "schema.root_not_mapping", "Plan document is not a mapping",
         "A plan is one YAML mapping that starts with `apiVersion` and `kind`. A list or a scalar at the "
         "top level cannot be a plan; nothing else is checked.",
         "- loop.plan/v1\n- PlanVersion\n", OK),
    Code("LP2002", "schema.api_version", "Wrong apiVersion",
         "`apiVersion` must be exactly `loop.plan/v1`. The fix replaces the value.",
         OK.replace("loop.plan/v1", "loop.plan/v2"), OK),
    Code("LP2003", "schema.legacy_api_version", "Legacy workflow apiVersion",
         "`loop.workflow/v1` is the legacy workflow format. Plans are written against `loop.plan/v1`: "
         "control flow lives in explicit edges, inputs in `input`, and triggers outside the source. "
         "A header whose `kind` is the legacy `Workflow` too is one defect: one LP2003, the kind as "
         "a related location, and one fix that rewrites both lines (no LP2005).",
         OK.replace("loop.plan/v1", "loop.workflow/v1"), OK),
    Code("LP2004", "schema.kind", "Wrong kind",
         "`kind` must be exactly `PlanVersion`. The fix replaces the value.",
         OK.replace("kind: PlanVersion", "kind: Plan"), OK),
    Code("LP2005", "schema.legacy_kind", "Legacy kind Workflow",
         "`kind: Workflow` is the legacy workflow format; a plan source has `kind: PlanVersion`.",
         OK.replace("kind: PlanVersion", "kind: Workflow"), OK),
    Code("LP2006", "schema.missing_key", "Required key missing",
         "A mapping lacks a key its shape requires: `apiVersion`, `kind`, `entry` and `nodes` at the top; "
         "`id` and `type` on a node; the required keys of a node's configuration (for example "
         "`requestApproval.summary`, `retry.backoff`, `from.port`, a failed End's `code`). The diagnostic "
         "sits on the key that holds the incomplete mapping.",
         _approval('      assignee: "{{ input.approver }}"\n'), _approval()),
    Code("LP2007", "schema.unknown_key", "Unknown key",
         "Every mapping in a plan is closed: a key that the syntax does not define is an error. When a "
         "defined key is close, the message suggests it and a fix renames the key. Close means "
         "a similar spelling, or, for short keys, the only defined key one edit away (a letter "
         "changed, added or dropped, or two adjacent letters swapped: `ot` for `to`). A misspelt "
         "key that stands in for a required one is this one diagnostic: the key is not also "
         "missing (LP2006), a node or edge whose `id` is misspelt is set aside under the id the "
         "key gives (its edges are not dangling), and a misspelt `node` or `port` of an endpoint "
         "still routes that port. A key of the node's configuration written beside it at node "
         "level (a dedented `callbackOutput`) is reported as belonging under the configuration "
         "key, once: the configuration is not also said to miss it; the fix indents it when it "
         "directly follows a block configuration.",
         OK.replace("input: {}", "input:\n  topic: {type: string, requird: false}"),
         OK.replace("input: {}", "input:\n  topic: {type: string, required: false}")),
    Code("LP2008", "schema.legacy_trigger", "Triggers are not part of plan source",
         "`trigger`/`triggers` belong to the Binding that starts a plan, not to the PlanVersion "
         "source. Remove the key and configure the schedule on the Binding.",
         OK.replace("input: {}", "trigger: {schedule: daily}\ninput: {}"), OK),
    Code("LP2009", "schema.legacy_inputs", "Legacy 'inputs' key",
         "The Plan input contract is `input` (singular), a mapping of field name to FieldSchema. "
         "`inputs` is the legacy workflow key; the fix renames it when `input` is absent.",
         OK.replace("input: {}", "inputs:\n  topic: {type: string}"),
         OK.replace("input: {}", "input:\n  topic: {type: string}")),
    Code("LP2010", "schema.legacy_node_pointer", "Legacy control-flow pointer on a node",
         "Node-level `next`, `default`, `onApprove`, `onReject` and `onTimeout` are forbidden: the "
         "graph's edges are the only source of control flow. Add an edge from the node's port "
         "instead.",
         _plan(_SEND.replace("    sendMessage:", "    next: done\n    sendMessage:") + END,
               _SEND_EDGES, entry="ask"),
         SEND_OK),
    Code("LP2011", "schema.legacy_edge_endpoint", "Edge endpoint is a bare string",
         "Edge endpoints are mappings: `from: {node, port}` and `to: {node, port?}`. A bare string "
         "— in particular the legacy magic `to: end` — is rejected: add an explicit End node and "
         "route to it (no completion through a magic sentinel).",
         SEND_OK.replace("to: {node: done}", "to: end"), SEND_OK),
    Code("LP2012", "schema.wrong_shape", "Value has the wrong shape",
         "A key holds the wrong kind of YAML value: a list where a mapping is needed, a number "
         "where a string is needed, and so on. Quoted scalars are strings and are never coerced. "
         "Under YAML 1.2 a plain `yes`/`no`/`on`/`off` is a string; where `true` or `false` is "
         "needed (`required: yes`) the fix writes the boolean YAML 1.1 read it as, a safe fix.",
         OK.replace("input: {}", "input: []"), OK),
    Code("LP2013", "schema.literal_only", "Key takes a literal value",
         "Some keys are fixed when the plan compiles and take only a literal: `completion`, "
         "`mode`, `iterations`, `maxConcurrency`, `failureMode`, `retry.*`, `startThread`, "
         "`end.status`, `end.code`, case `port`, `default`, `branches`, `forkId`, `fanOutId`, and "
         "FieldSchema defaults. A `{ref}`/`{expr}` or a `{{ }}` template there is an error, and so "
         "is a `{literal: ...}` wrapper on these keys (write the value directly; the fix does it). "
         "A default may use `{literal: \"...\"}` for text containing `{{`.",
         _loop("{ref: input.n}", head="input:\n  n: {type: number, required: true}\noutput: {}\n"),
         _loop("3")),
    Code("LP2014", "schema.invalid_identifier", "Invalid identifier",
         "Identifiers an author declares — node ids, edge ids, switch ports, fork branch keys and "
         "field names — match `^[a-z][a-z0-9_]{0,63}$`. A node id written with a dash or capitals "
         "whose conforming spelling (lower case, other characters as `_`) the edges name gets "
         "the fix renaming it to that spelling.",
         OK.replace("id: done", "id: Done").replace("entry: done", "entry: Done"), OK),
    Code("LP2015", "schema.invalid_choice", "Value is not one of the allowed words",
         "A literal-only key holds a word outside its closed set: `completion` (sent, callback), "
         "switch `mode` (first_match, all_match), join `mode` (all, any), loop `mode` (counted), "
         "`failureMode` (collect), End `status` (succeeded, failed). A close match is suggested.",
         SEND_OK.replace("completion: sent", "completion: sents"), SEND_OK),
    Code("LP2016", "schema.out_of_range", "Integer out of range",
         "Bounded integers: `retry.maxAttempts` 1..100, `fanOut.maxConcurrency` 1..64, "
         "`loop.iterations` 1..10,000.",
         _send(extra="    retry: {maxAttempts: 500, backoff: PT5S}\n"),
         _send(extra="    retry: {maxAttempts: 5, backoff: PT5S}\n")),
    Code("LP2017", "schema.invalid_number", "Number is not a JSON number",
         "Numbers in plan values are JSON numbers: integers within ±(2^53−1), finite decimals; "
         "`.nan` and `.inf` are rejected.",
         _set(".inf"), _set("100")),
    Code("LP2018", "schema.mixed_value_expr", "'ref'/'expr'/'literal' mixed with other keys",
         "A mapping whose only key is `ref`, `expr` or `literal` is a reference, expression or "
         "verbatim literal. With other keys beside it the meaning is ambiguous, so it is rejected; "
         "build an object that has such a key with `{literal: {...}}`.",
         _set("{literal: 5, fallback: 0}"), _set("{literal: 5}")),
    Code("LP2019", "schema.invalid_ref", "Malformed reference path",
         "`{ref: <path>}` takes a string of dot-separated, non-empty segments without spaces, such "
         "as `run.state.score`.",
         _set("{ref: run..state.score}"), _set("{ref: run.state.score}")),
    Code("LP2020", "schema.unknown_field_type", "Unknown field type",
         "FieldSchema `type` is one of string, enum, number, boolean, duration, datetime, object, "
         "array, scope, channel, member, agent, work_items, responder.",
         OK.replace("input: {}", "input:\n  topic: {type: strng}"),
         OK.replace("input: {}", "input:\n  topic: {type: string}")),
    Code("LP2021", "schema.enum_values", "Invalid enum values",
         "An `enum` field needs a non-empty `values` list of distinct strings. Unquoted numbers or "
         "booleans are not strings; quote them. A field without its values has no type: it is "
         "left out, so what binds or reads it is not reported again.",
         OK.replace("input: {}", "input:\n  level: {type: enum, values: [low, high, low]}"),
         OK.replace("input: {}", "input:\n  level: {type: enum, values: [low, high]}")),
    Code("LP2022", "schema.misplaced_constraint", "'values' or 'items' on the wrong type",
         "`values` applies only to `enum` fields and `items` only to `array` fields.",
         OK.replace("input: {}", "input:\n  level: {type: string, values: [low, high]}"),
         OK.replace("input: {}", "input:\n  level: {type: enum, values: [low, high]}")),
    Code("LP2023", "schema.array_items", "Array field without 'items'",
         "An `array` field declares the FieldSchema of its elements in `items`.",
         OK.replace("input: {}", "input:\n  tags: {type: array}"),
         OK.replace("input: {}", "input:\n  tags: {type: array, items: {type: string}}")),
    Code("LP2024", "schema.invalid_default", "Default not assignable to the field type",
         "A `default` must be a value of the field's type, with no coercion: a quoted \"5\" is not "
         "a number, durations/datetimes/scopes/channels/ids must have their wire form, an enum "
         "default is one of its values. A misspelt enum default gets a did-you-mean and its "
         "replacement as a fix (unsafe: a guess to review) that keeps the value's quotes, offered "
         "only where YAML reads the suggestion back as that string (never a plain `yes`, `no`, "
         "`on`, `off` or number). A date-time of the right shape that names no real moment says "
         "which part does not exist (February 30). A boolean default written `yes`/`no`/`on`/`off` "
         "(a string under YAML 1.2) gets the safe fix to the boolean YAML 1.1 read it as.",
         OK.replace("input: {}", "input:\n  limit: {type: number, default: \"5\"}"),
         OK.replace("input: {}", "input:\n  limit: {type: number, default: 5}")),
    Code("LP2025", "schema.default_not_allowed", "Field type cannot have a default",
         "`work_items` and `responder` values are never written by authors, so their fields have no "
         "`default`.",
         FAN_OK.replace("      responder: {type: responder, required: true}\n",
                        "      responder: {type: responder, default: agt_backend}\n"),
         FAN_OK),
    Code("LP2026", "schema.state_default_required", "Run state field without a default",
         "Every typed Run `state` field declares a `default`: the state exists before any "
         "`set_variable` writes it. Until it has one, what the field starts as is unknown: "
         "nothing that rests on it (an optional source, LP3307; the wait rule of a race, LP4601; "
         "LP4604) is reported.",
         _set("1").replace("score: {type: number, default: 0}", "score: {type: number}"),
         _set("1")),
    Code("LP2027", "schema.reserved_callback_field", "callbackOutput declares a compiler-owned field",
         "`workScope` and `workItems` are compiler-owned outputs of a callback node, added when "
         "the node declares `sendMessage.workScope` / `sendMessage.workItems`; `callbackOutput` "
         "cannot declare them.",
         _callback(_CB_OUTPUT + "        workScope: {type: scope, required: true}\n"), CALLBACK_OK),
    Code("LP2028", "schema.invalid_expr", "Expression is not a string",
         "`when`, `wait.condition` and `{expr: ...}` take an expression string.",
         _gate("      condition: [run.state.ready]\n"),
         _gate("      condition: \"run.state.ready == true\"\n")),
    # -- nodes ---------------------------------------------------------------
    Code("LP2030", "schema.duplicate_node_id", "Duplicate node id",
         "Node ids are unique. The diagnostic sits on the second definition and points at the first; "
         "the first is used. When the edges name exactly one id that no node has (and use ports "
         "the duplicate has), the duplicate is taken to be that node: the fix renames it, and "
         "those edges are not reported dangling (LP4002).",
         _plan(END + END), OK),
    Code("LP2031", "schema.unknown_node_type", "Unknown node type",
         "Node `type` is one of send_message, set_variable, wait, request_approval, switch, fork, "
         "join, fan_out, loop, end.",
         OK.replace("type: end", "type: finish"), OK),
    Code("LP2032", "schema.wrong_config_key", "Configuration under another type's key",
         "A node is configured under the key named for its type (`send_message` → `sendMessage`, "
         "`wait` → `wait`, ...). A config key of another type is rejected. When it is the node's only "
         "config and its keys make a config of that other kind but not of the declared type (its "
         "required keys present, no key of its own missing, edges using its ports), the `type` is "
         "what is wrong: the diagnostic sits on the `type`, and the fix replaces it with that kind "
         "(`type: set_variable` with a `wait:` config → `type: wait`). The fix renames the config "
         "key only when its keys make a config of the declared type; when they fit neither, no fix "
         "is offered.",
         _timer("      duration: PT5M\n").replace("    wait:\n", "    sendMessage:\n"),
         _timer("      duration: PT5M\n")),
    Code("LP2033", "schema.missing_config", "Node without its configuration",
         "Every node carries its configuration mapping under the key named for its type.",
         _plan("  - id: done\n    type: end\n"), OK),
    Code("LP2034", "schema.retry_not_allowed", "retry on a node that cannot retry",
         "`retry` applies only to the retry-capable actions send_message, wait and "
         "request_approval.",
         _set("100").replace("    setVariable:", "    retry: {maxAttempts: 3, backoff: PT5S}\n    setVariable:"),
         _set("100")),
    Code("LP2035", "schema.invalid_duration", "retry.backoff is not a duration",
         "`retry.backoff` is an ISO 8601 duration `P[nD][T[nH][nM][n[.f]S]]`, such as `PT5S` or "
         "`PT1M30S`.",
         _send(extra="    retry: {maxAttempts: 3, backoff: 5s}\n"),
         _send(extra="    retry: {maxAttempts: 3, backoff: PT5S}\n")),
    Code("LP2040", "schema.send_destination", "send_message needs exactly one destination",
         "A send_message declares exactly one of `target` (a target string such as `#release`) and "
         "`scope` (a scope value).",
         _send(_SEND.replace('      target: "#release"\n', "")), SEND_OK),
    Code("LP2041", "schema.callback_only", "Key applies only to callback completion",
         "`responder`, `callbackOutput`, `workScope`, `relatedScopes` and `workItems` describe the "
         "Agent callback and are invalid with `completion: sent`.",
         _send(_SEND + "      callbackOutput:\n        ok: {type: boolean}\n"), SEND_OK),
    Code("LP2042", "schema.start_thread_callback", "startThread with callback completion",
         "`startThread` opens a Thread under a sent Channel-root message and is incompatible with "
         "callback completion: open the Thread with a sent node, then address the callback node by "
         "its `threadScope`.",
         _callback(_CB_OUTPUT + "      startThread: true\n"), CALLBACK_OK),
    Code("LP2043", "schema.related_scopes_without_work_scope", "relatedScopes without workScope",
         "`relatedScopes` may be authored only when `workScope` is present — a scope value, or "
         "`null` to let the Agent choose.",
         _work_scope("      relatedScopes:\n        - {ref: input.context}\n"
                     "      callbackOutput:\n        summary: {type: string, required: true}\n"), WS_OK),
    Code("LP2044", "schema.related_scopes_empty", "Empty relatedScopes list",
         "A `relatedScopes` list holds at least one scope expression; omit the key for none.",
         _work_scope("      workScope: null\n      relatedScopes: []\n"),
         _work_scope("      workScope: null\n")),
    Code("LP2045", "schema.callback_output_required", "Callback without callbackOutput",
         "A callback send_message declares `callbackOutput`, the fields the Agent returns, unless "
         "its only result is the compiler-owned `workScope`.",
         _work_scope(""), _work_scope("      workScope: null\n")),
    Code("LP2050", "schema.wait_mode", "wait needs exactly one of condition and duration",
         "A wait either resumes on a Run-state change (`condition`) or is a pure timer "
         "(`duration`): exactly one of the two.",
         _gate("      condition: \"run.state.ready == true\"\n      duration: PT5M\n"),
         _gate("      condition: \"run.state.ready == true\"\n")),
    Code("LP2051", "schema.timeout_without_condition", "timeout on a timer wait",
         "`timeout` (which enables the `timed_out` port) applies only to a wait with a `condition`.",
         _timer("      duration: PT5M\n      timeout: PT1H\n"), _timer("      duration: PT5M\n")),
    Code("LP2055", "schema.switch_no_cases", "switch without cases",
         "A switch has at least one case besides its default.",
         _switch(cases="      cases: []\n"),
         _switch()),
    Code("LP2056", "schema.duplicate_port", "Duplicate port or branch key",
         "Switch ports are unique across its cases and default; fork branch keys are unique.",
         _switch(default="urgent"), _switch()),
    Code("LP2057", "schema.fork_branches", "fork with fewer than two branches",
         "A fork declares at least two branches; a single path needs no fork.",
         _fork("[legal]"), _fork()),
    Code("LP2060", "schema.join_owner", "join needs exactly one owner",
         "A join names exactly one of `forkId` (a fork or all_match switch) and `fanOutId` (a "
         "fan_out).",
         _fork(owner="forkId: split, fanOutId: split"), _fork()),
    Code("LP2061", "schema.fan_out_join_mode", "fan-out join with mode any",
         "A join that closes a fan_out waits for every item: its mode is `all`. A `fanOutId` "
         "that names a fork or an all_match switch is LP4311 instead (the key is wrong, not the mode).",
         _fan(mode="any"), FAN_OK),
    Code("LP2065", "schema.end_succeeded_extra", "succeeded End with input, code or detail",
         "A succeeded End takes the Plan output as its input contract and records no error, so it "
         "has no `input`, `code` or `detail`.",
         _plan(END.replace("{status: succeeded}", "{status: succeeded, code: all_good}")), OK),
    Code("LP2066", "schema.invalid_error_code", "Invalid failed-End code",
         "A failed End's `code` is a stable error code matching `^[a-z][a-z0-9_.]{0,63}$`, such as "
         "`review_rejected`.",
         _approval(code="Review-Rejected"), _approval()),
    # -- edges ---------------------------------------------------------------
    Code("LP2070", "schema.duplicate_edge_id", "Duplicate edge id",
         "Edge ids are unique. The diagnostic sits on the second definition and points at the first; "
         "the first is used.",
         _approval().replace("id: e_no", "id: e_ok"), _approval()),
    # -- budgets (docs/reference.md#budgets) -----------------------------------------
    Code("LP2090", "resource.graph_nodes", "More than 512 nodes",
         "A plan graph holds at most 512 nodes.",
         "<a plan with 513 nodes>", OK),
    Code("LP2091", "resource.graph_edges", "More than 2,048 edges",
         "A plan graph holds at most 2,048 edges.",
         "<a plan with 2,049 edges>", OK),
    Code("LP2092", "resource.schema_fields", "More than 2,048 declared schema fields",
         "A plan declares at most 2,048 schema fields across every contract, nested array item "
         "schemas included. The diagnostic sits on the field that exceeds it.",
         "<a plan declaring 2,049 FieldSchemas>", OK),
    Code("LP2093", "resource.related_scopes", "More than 64 relatedScopes",
         "One `sendMessage.relatedScopes` list holds at most 64 scope expressions.",
         "<a relatedScopes list with 65 entries>", WS_OK),
    Code("LP2094", "resource.literal_nesting", "Literal value nests deeper than 32",
         "A literal value (a default, a constructor, a `{literal: ...}`) nests at most 32 levels.",
         "<a default nested 33 levels deep>", OK),
    Code("LP2095", "resource.literal_values", "Literal value holds more than 8,192 values",
         "A literal value holds at most 8,192 values, scalars and collections counted.",
         "<a default list with 8,193 elements>", OK),
)
