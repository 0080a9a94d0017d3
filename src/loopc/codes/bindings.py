"""LP32xx–LP34xx — references, bindings and typed node configuration
(docs/reference.md#references, docs/reference.md#edges, docs/reference.md#types).

Reported by :mod:`loopc.compiler.typecheck`:

* LP32xx — reference paths (``{ref: ...}`` and paths inside expressions and
  templates): roots, context legality, fields;
* LP33xx — mappings onto a contract: edge ``bind`` (explicit and same-name
  pass-through), the entry's Plan-input pass-through, ``join.merge``,
  ``loop.init``, ``setVariable.assign``; and authored ``work_items`` values;
* LP34xx — typed node configuration keys (``sendMessage.scope`` is a scope,
  ``requestApproval.assignee`` a member, ``when`` a boolean...), agents in
  ``target``, ``responder`` inputs outside a fan-out item body.
"""
from loopc.codes import Code, register
from loopc.diagnostics import Severity

H = "apiVersion: loop.plan/v1\nkind: PlanVersion\n"


def _base(*, text: str = "Review {{ input.topic }}", dest: str = 'target: "#release"',
          node_input: str = "      topic: {type: string, required: true}\n",
          plan_input: str = "  topic: {type: string, required: true}\n",
          callback: str = "        verdict: {type: string, required: true}\n",
          output: str = "  verdict: {type: string, required: true}\n",
          extra_config: str = "", bind: str = "") -> str:
    """One callback send_message ``ask`` → succeeded End ``done``."""
    return (
        H + "input:\n" + plan_input + "output:\n" + output + "entry: ask\nnodes:\n"
        "  - id: ask\n    type: send_message\n    input:\n" + node_input
        + "    sendMessage:\n      " + dest + "\n"
        f"      text: \"{text}\"\n      completion: callback\n" + extra_config
        + "      callbackOutput:\n" + callback
        + "  - id: done\n    type: end\n    end: {status: succeeded}\n"
        "edges:\n  - id: e_done\n    from: {node: ask, port: completed}\n"
        "    to: {node: done}\n" + bind
    )


_OK = _base()


def _fork(merge_ref: str) -> str:
    """fork ``split`` (legal, security) → approvals → all-join ``joined``."""
    return H + """input:
  approver: {type: member, required: true}
output:
  legal_by: {type: member, required: true}
entry: split
nodes:
  - id: split
    type: fork
    input:
      approver: {type: member, required: true}
    fork:
      branches: [legal, security]
  - id: legal_ok
    type: request_approval
    input:
      approver: {type: member, required: true}
    requestApproval: {assignee: "{{ input.approver }}", summary: "Legal review"}
  - id: security_ok
    type: request_approval
    input:
      approver: {type: member, required: true}
    requestApproval: {assignee: "{{ input.approver }}", summary: "Security review"}
  - id: joined
    type: join
    input:
      by: {type: member, required: true}
    join:
      forkId: split
      mode: all
      result:
        legal_by: {type: member, required: true}
      merge:
        legal_by: {ref: """ + merge_ref + """}
  - id: rejected
    type: end
    end: {status: failed, code: review_rejected}
  - id: done
    type: end
    end: {status: succeeded}
edges:
  - {id: e_legal, from: {node: split, port: legal}, to: {node: legal_ok}}
  - {id: e_security, from: {node: split, port: security}, to: {node: security_ok}}
  - id: e_legal_ok
    from: {node: legal_ok, port: approved}
    to: {node: joined}
    bind: {by: {ref: output.decidedBy}}
  - id: e_security_ok
    from: {node: security_ok, port: approved}
    to: {node: joined}
    bind: {by: {ref: output.decidedBy}}
  - {id: e_legal_no, from: {node: legal_ok, port: rejected}, to: {node: rejected}}
  - {id: e_security_no, from: {node: security_ok, port: rejected}, to: {node: rejected}}
  - {id: e_done, from: {node: joined, port: completed}, to: {node: done}}
"""


def _fan_out(dispatch_bind: str) -> str:
    """callback ``plan`` emits workItems → fan_out ``dispatch`` → item body
    ``work`` → fan-out join ``collected`` → End."""
    return H + """input:
  room: {type: scope, required: true}
  planner: {type: agent, required: true}
  workers: {type: array, required: true, items: {type: agent, required: true}}
output:
  results: {type: array, required: true, items: {type: object, required: true}}
entry: plan
nodes:
  - id: plan
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
  - id: dispatch
    type: fan_out
    input:
      work_items: {type: work_items, required: true}
    fanOut:
      items: {ref: input.work_items}
  - id: work
    type: send_message
    input:
      instruction: {type: string, required: true}
      scope: {type: scope, required: true}
      responder: {type: responder, required: true}
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
      mode: all
      result:
        results: {type: array, required: true, items: {type: object, required: true}}
      merge:
        results: {ref: items}
  - id: done
    type: end
    end: {status: succeeded}
edges:
  - id: e_dispatch
    from: {node: plan, port: completed}
    to: {node: dispatch}
    bind: {work_items: """ + dispatch_bind + """}
  - id: e_item
    from: {node: dispatch, port: item}
    to: {node: work}
    bind:
      instruction: {ref: item.instruction}
      scope: {ref: item.workScope}
      responder: {ref: item.responder}
  - {id: e_collect, from: {node: work, port: completed}, to: {node: collected}}
  - {id: e_done, from: {node: collected, port: completed}, to: {node: done}}
"""


register(
    # ------------------------------------------------------------------ refs
    Code("LP3201", "ref.unknown_root", "Unknown reference root",
         "A reference path starts with one of the reference roots: `run.input`, `run.state`, "
         "`input`, `output`, `branches`, `winner`, `item`, `items`, `loop`. Any other first word is "
         "rejected, with a \"did you mean\" suggestion when a root is close. (The legacy roots "
         "`inputs`, `event`, `state`, `steps`, `ctx` have their own code, LP3203.)",
         _base(text="Review {{ inptu.topic }}"), _OK),
    Code("LP3202", "ref.root_not_here", "Reference root not available here",
         "Every root is legal only where its context exists: `output.*` only in "
         "an edge `bind` (the source port's output); `input.*` in node configuration and edge "
         "binds, but not in a join's `merge` nor on edges leaving a join; `branches.*` only in an "
         "`all` join's merge and `winner.*` only in an `any` join's merge (of a fork or all_match "
         "switch); `items` only in a fan-out join's merge; `item.*` on the edge leaving a "
         "fan_out's `item` port and inside the item body; `loop.*` on the edge leaving a loop's "
         "`body` port and inside the loop body up to `continue`/`break`; a wait `condition` reads "
         "only `input.*` and `run.*`.",
         _base(text="Review {{ output.verdict }}"), _OK),
    Code("LP3203", "ref.legacy_root", "Legacy reference root",
         "The roots `inputs.*`, `event.*`, `state.*`, `steps.*` and `ctx.*` belong to the legacy "
         "workflow format. `loop.plan/v1` reads the activation input as `input.*`, the Plan input as "
         "`run.input.*` and typed Run state as `run.state.*`; there is no global `steps.<node>.output` "
         "(one node may have many activations) — bind the value you need across an edge from "
         "`output.*` instead; `event.*` and `ctx.*` do not exist. The fix rewrites `inputs.x` to "
         "whichever of `input.x` and `run.input.x` declares the field (safe when only one does; a "
         "suggestion when both do) and `state.x` to `run.state.x` when the field is declared.",
         _base(text="Review {{ inputs.topic }}"), _OK),
    Code("LP3204", "ref.unknown_field", "Unknown field in a reference",
         "A path is typed through the contract of its root: the field after `input.` must be "
         "declared in the node's input contract, after `output.` in the source port's output, "
         "after `run.state.` in the Plan's `state`, and so on. Paths below an `object`-typed "
         "value are not typed statically (they are checked at run time). A name close to a "
         "declared field gets a did-you-mean and a fix; otherwise the message says where the field "
         "would be declared (the top-level `state` or `input`, or the node's `input`), without a "
         "fix: its type is the author's choice.",
         _base(text="Review {{ input.topik }}"), _OK),
    Code("LP3205", "ref.no_fields", "Field selected on a value that has none",
         "Only typed objects (contracts), `object` values (unchecked below) and `scope` values "
         "(`kind`, `scopeId`) have fields. Selecting a field of a string, number, array or other "
         "scalar value is rejected.",
         _base(text="Review {{ input.topic.title }}"), _OK),
    Code("LP3206", "ref.unknown_branch", "Unknown branch key",
         "`branches.<key>` names a branch of the join's owner: a fork branch key or an all_match "
         "switch port (its default included).",
         _fork("branches.legl.by"), _fork("branches.legal.by")),
    # -------------------------------------------------------------- bindings
    Code("LP3301", "bind.missing_field", "Required field not bound",
         "A mapping onto a contract must give every required destination field that has no default "
         "a value: an explicit edge `bind` (a partial `bind` passes nothing through implicitly), a "
         "join's `merge` (every required `result` field), a loop's `init` and the `bind` of edges "
         "into `continue`/`break` (the loop state).",
         _base(output="  verdict: {type: string, required: true}\n  notes: {type: string, required: true}\n",
               bind="    bind: {verdict: {ref: output.verdict}}\n"),
         _base(output="  verdict: {type: string, required: true}\n  notes: {type: string, required: true}\n",
               bind="    bind: {verdict: {ref: output.verdict}, notes: {ref: input.topic}}\n")),
    Code("LP3302", "bind.unknown_field", "Mapping names a field the destination does not declare",
         "Every key of an edge `bind`, a join `merge`, a loop `init` or a `setVariable.assign` "
         "must be a field of the destination contract (the destination's input, the join's "
         "`result`, the loop `state`, the Plan's `state`). A misspelt `assign` key leaves that "
         "write unknown, so no wait is then said to watch a field nothing writes (LP4603).",
         _base(bind="    bind: {verdict: {ref: output.verdict}, topic: {ref: input.topic}}\n"),
         _base(bind="    bind: {verdict: {ref: output.verdict}}\n")),
    Code("LP3303", "bind.not_assignable", "Mapped value has the wrong type",
         "The value mapped onto a field must be assignable to the field's type: same type, `enum` "
         "into `string`, `agent` into `responder`, and a string literal that matches the wire form "
         "of the expected type. `channel` is never a `scope`. A misspelt enum value gets a "
         "did-you-mean and its replacement as a fix (unsafe), quotes kept, where YAML reads the "
         "suggestion back as that string.",
         _base(callback="        verdict: {type: string, required: true}\n        score: {type: number, required: true}\n",
               bind="    bind: {verdict: {ref: output.score}}\n"),
         _base(callback="        verdict: {type: string, required: true}\n        score: {type: number, required: true}\n",
               bind="    bind: {verdict: {ref: output.verdict}}\n")),
    Code("LP3304", "bind.passthrough_missing", "No same-name source for a required field",
         "An edge without `bind` passes every destination field the same-named `output.*` field of "
         "its source port; the entry node takes the Plan input the same way. A required "
         "destination field with no default needs such a field, or write an explicit `bind`.",
         _base(callback="        answer: {type: string, required: true}\n"), _OK),
    Code("LP3305", "bind.passthrough_not_assignable", "Same-name pass-through has the wrong type",
         "In a same-name pass-through (an edge without `bind`, or the entry node's Plan input) "
         "each destination field takes the same-named source field, which must be assignable to "
         "it. Write an explicit `bind` to map a different value.",
         _base(callback="        verdict: {type: number, required: true}\n"), _OK),
    Code("LP3307", "bind.optional_source", "Required field fed from a value that may be absent",
         "A required destination field without a default needs a source that is present on every "
         "run that reaches it. An optional field (not required, no default) may be absent, and "
         "so may `branches.<key>.*` of an all_match switch, whose branch runs only when its case "
         "matches. When a fork join's merge reads `branches.<key>.<field>` and `<field>` is optional "
         "in the join's `input` (the contract of each arrival), that field is the cause: one "
         "diagnostic at it, however many merges read it. Make the destination field optional or "
         "give it a default, make the source required, or bind a value that is always present.",
         _base(callback="        verdict: {type: string}\n",
               bind="    bind: {verdict: {ref: output.verdict}}\n"),
         _base(callback="        verdict: {type: string}\n",
               output="  verdict: {type: string}\n",
               bind="    bind: {verdict: {ref: output.verdict}}\n")),
    Code("LP3306", "value.work_items_literal", "work_items value written in the plan",
         "A `work_items` value is nominal and compiler-owned: it flows only from a callback's "
         "`workItems` output through node inputs and bindings to a `fan_out`. A literal, list or "
         "map written where `work_items` is expected is rejected.",
         _fan_out("[]"), _fan_out("{ref: output.workItems}")),
    # ---------------------------------------------------------------- config
    Code("LP3401", "config.not_assignable", "Node configuration value has the wrong type",
         "Typed configuration keys take values of the one type their node kind declares "
         "(docs/node-kinds.md gives each key's type), for example: `sendMessage.scope`, `workScope` and "
         "`requestApproval.feedbackScope` a scope; `responder` an agent or responder; "
         "`relatedScopes` scope expressions or one `array<scope>`; `workItems.allowedResponders` "
         "an `array<agent>`; `assignee` a member; `when` and `wait.condition` a boolean; "
         "`wait.duration`/`timeout` a duration; `fanOut.items` `work_items`; `text`, `summary`, "
         "`target`, `detail` a renderable scalar.",
         _base(dest="scope: {ref: input.topic}"), _OK),
    Code("LP3402", "send_message.agent_in_target", "Agent interpolated into a target",
         "An `agent` or `array<agent>` value may not be interpolated into `target`, bare or inside "
         "an address such as `dm:@{{ input.worker }}`: agent identity selects callback execution "
         "through `responder`; it does not identify the delivery destination.",
         _base(dest='target: "dm:@{{ input.worker }}"',
               node_input="      topic: {type: string, required: true}\n      worker: {type: agent, required: true}\n",
               plan_input="  topic: {type: string, required: true}\n  worker: {type: agent, required: true}\n"),
         _base(extra_config="      responder: {ref: input.worker}\n",
               node_input="      topic: {type: string, required: true}\n      worker: {type: agent, required: true}\n",
               plan_input="  topic: {type: string, required: true}\n  worker: {type: agent, required: true}\n")),
    Code("LP3403", "responder.outside_item_body", "responder field outside a fan-out item body's input",
         "The `responder` type carries a WorkItem's responder union (a fixed agent or a "
         "`selectOne` pool); it exists only inside a fan_out item body, where `item.responder` "
         "provides it. Only the `input` of a node inside an item body may declare it; the Plan "
         "input, output and state, callback outputs, join results, loop state and the inputs of "
         "other nodes declare an `agent` instead.",
         _base(extra_config="      responder: {ref: input.reviewer}\n",
               node_input="      topic: {type: string, required: true}\n      reviewer: {type: responder, required: true}\n",
               plan_input="  topic: {type: string, required: true}\n  reviewer: {type: agent, required: true}\n"),
         _base(extra_config="      responder: {ref: input.reviewer}\n",
               node_input="      topic: {type: string, required: true}\n      reviewer: {type: agent, required: true}\n",
               plan_input="  topic: {type: string, required: true}\n  reviewer: {type: agent, required: true}\n")),
    Code("LP3501", "input.unused", "Required Plan input never used",
         "A required Plan input field that nothing reads — no `run.input.<field>` reference and "
         "no same-name pass-through into the entry node's input — forces every invoker to send a "
         "value that has no effect. Remove the field, read it, or make it optional. Not reported "
         "while the plan has errors (a mistyped reference would make its field look unused).",
         H + "input:\n  topic: {type: string, required: true}\n  ticket: {type: string, required: true}\n"
         "output: {}\nentry: ask\nnodes:\n  - id: ask\n    type: send_message\n    input:\n"
         "      topic: {type: string, required: true}\n    sendMessage: {target: \"#release\", text: "
         "\"Review {{ input.topic }}\", completion: sent}\n  - id: done\n    type: end\n"
         "    end: {status: succeeded}\nedges:\n  - {id: e_done, from: {node: ask, port: completed}, "
         "to: {node: done}}\n",
         H + "input:\n  topic: {type: string, required: true}\n  ticket: {type: string, required: true}\n"
         "output: {}\nentry: ask\nnodes:\n  - id: ask\n    type: send_message\n    input:\n"
         "      topic: {type: string, required: true}\n    sendMessage: {target: \"#release\", text: "
         "\"Review {{ input.topic }} ({{ run.input.ticket }})\", completion: sent}\n  - id: done\n"
         "    type: end\n    end: {status: succeeded}\nedges:\n  - {id: e_done, from: {node: ask, "
         "port: completed}, to: {node: done}}\n",
         severity=Severity.WARNING, section="contracts"),
    Code("LP3502", "state.never_read", "Run state field never used",
         "A Run state field that nothing reads (`run.state.<field>` in a binding, configuration, "
         "condition or merge) and no `set_variable` writes is a dead declaration: it keeps its "
         "default for the whole Run. Remove the field or use it. A field that is written but "
         "never read is not reported: the final Run state is part of the Run's record. Not "
         "reported while the plan has errors.",
         H + "input: {}\noutput: {}\nstate:\n  attempts: {type: number, default: 0}\n"
         "  note: {type: string, default: \"\"}\nentry: count\n"
         "nodes:\n  - id: count\n    type: set_variable\n    setVariable:\n      assign: {attempts: 1}\n"
         "  - id: done\n    type: end\n    end: {status: succeeded}\nedges:\n"
         "  - {id: e_done, from: {node: count, port: completed}, to: {node: done}}\n",
         H + "input: {}\noutput: {}\nstate:\n  attempts: {type: number, default: 0}\nentry: count\n"
         "nodes:\n  - id: count\n    type: set_variable\n    setVariable:\n      assign: {attempts: 1}\n"
         "  - id: tell\n    type: send_message\n    sendMessage: {target: \"#ops\", text: "
         "\"attempt {{ run.state.attempts }}\", completion: sent}\n"
         "  - id: done\n    type: end\n    end: {status: succeeded}\nedges:\n"
         "  - {id: e_tell, from: {node: count, port: completed}, to: {node: tell}}\n"
         "  - {id: e_done, from: {node: tell, port: completed}, to: {node: done}}\n",
         severity=Severity.WARNING, section="run-state"),
    Code("LP3406", "work_items.outside_graph", "work_items field where authors would supply WorkItems",
         "`work_items` is the closed, compiler-owned output of a callback that declares "
         "`workItems`; it flows through node inputs and edge bindings to a `fan_out`. The Plan "
         "input (the invoker), the Plan output, the Run state (a set_variable) and a "
         "`callbackOutput` (the Agent's business output) cannot declare it.",
         H + """input:
  room: {type: scope, required: true}
  batch: {type: work_items, required: true}
output: {}
entry: dispatch
nodes:
  - id: dispatch
    type: fan_out
    input: {batch: {type: work_items, required: true}}
    fanOut: {items: {ref: input.batch}}
  - id: collect
    type: join
    input: {key: {type: string, required: true}}
    join: {fanOutId: dispatch, mode: all}
  - id: done
    type: end
    end: {status: succeeded}
edges:
  - {id: e_item, from: {node: dispatch, port: item}, to: {node: collect}, bind: {key: {ref: item.key}}}
  - {id: e_done, from: {node: collect, port: completed}, to: {node: done}}
""",
         H + """input:
  room: {type: scope, required: true}
  planner: {type: agent, required: true}
output: {}
entry: plan
nodes:
  - id: plan
    type: send_message
    input:
      room: {type: scope, required: true}
      planner: {type: agent, required: true}
    sendMessage:
      scope: {ref: input.room}
      responder: {ref: input.planner}
      text: "Plan the work"
      completion: callback
      workScope: null
      workItems: {allowedResponders: {literal: [agt_worker]}}
  - id: dispatch
    type: fan_out
    input: {batch: {type: work_items, required: true}}
    fanOut: {items: {ref: input.batch}}
  - id: collect
    type: join
    input: {key: {type: string, required: true}}
    join: {fanOutId: dispatch, mode: all}
  - id: done
    type: end
    end: {status: succeeded}
edges:
  - {id: e_plan, from: {node: plan, port: completed}, to: {node: dispatch}, bind: {batch: {ref: output.workItems}}}
  - {id: e_item, from: {node: dispatch, port: item}, to: {node: collect}, bind: {key: {ref: item.key}}}
  - {id: e_done, from: {node: collect, port: completed}, to: {node: done}}
"""),
    Code("LP3404", "send_message.bad_target", "Target string has no valid form",
         "A `target` is one of `#slug` (a channel), `dm:@handle`, `task:<id>` or `team:@handle`. "
         "Its literal parts are checked: a template such as `dm:@{{ input.handle }}` must start "
         "with a known prefix and use only that form's characters; a target that starts with an "
         "interpolation is resolved and checked at run time. A scope value goes in `scope`, never "
         "in `target`.",
         _base(dest='target: "release"'), _OK),
    Code("LP3405", "send_message.thread_destination", "startThread needs a Channel root",
         "`startThread: true` opens a child Thread under the root message of a Channel; authored "
         "DM, Task and Team destinations (and a literal scope of another kind) are invalid. "
         "Dynamic targets and scope values are checked again at run time.",
         H + """input: {}
output: {}
entry: announce
nodes:
  - id: announce
    type: send_message
    sendMessage: {target: "dm:@release_bot", text: "Release is out", completion: sent, startThread: true}
  - id: done
    type: end
    end: {status: succeeded}
edges:
  - {id: e_done, from: {node: announce, port: completed}, to: {node: done}}
""", H + """input: {}
output: {}
entry: announce
nodes:
  - id: announce
    type: send_message
    sendMessage: {target: "#releases", text: "Release is out", completion: sent, startThread: true}
  - id: done
    type: end
    end: {status: succeeded}
edges:
  - {id: e_done, from: {node: announce, port: completed}, to: {node: done}}
"""),
)
