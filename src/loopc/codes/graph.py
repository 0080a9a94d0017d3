"""LP40xx — graph basics: entry, endpoints, ports, routing, reachability
(docs/reference.md#graph-rules)."""
from loopc.codes import Code, register

H = "apiVersion: loop.plan/v1\nkind: PlanVersion\n"

_NOTIFY = """  - id: notify
    type: send_message
    sendMessage: {target: "#release", text: "Released", completion: sent}
"""
_DONE = """  - id: done
    type: end
    end: {status: succeeded}
"""


def _plan(entry: str, nodes: str, edges: str, head: str = "input: {}\noutput: {}\n") -> str:
    return H + head + f"entry: {entry}\nnodes:\n" + nodes + "edges:" + (("\n" + edges) if edges else " []\n")


def _edge(eid: str, frm: str, port: str, to: str, to_port: str | None = None, extra: str = "") -> str:
    tp = f", port: {to_port}" if to_port else ""
    return (f"  - id: {eid}\n    from: {{node: {frm}, port: {port}}}\n"
            f"    to: {{node: {to}{tp}}}\n" + extra)


_OK = _plan("notify", _NOTIFY + _DONE, _edge("e_done", "notify", "completed", "done"))

_APPROVAL_HEAD = "input:\n  approver: {type: member, required: true}\noutput: {}\n"
_APPROVAL = """  - id: approve
    type: request_approval
    input:
      approver: {type: member, required: true}
    requestApproval:
      assignee: "{{ input.approver }}"
      summary: "Ship it?"
"""
_REJECTED = """  - id: rejected
    type: end
    end: {status: failed, code: review_rejected, detail: "Rejected"}
"""

_LOOP_HEAD = "input: {}\noutput:\n  count: {type: number, required: true}\n"
_LOOP = """  - id: repeat
    type: loop
    loop:
      mode: counted
      iterations: 3
      state: {count: {type: number, required: true}}
      init: {count: 0}
  - id: tick
    type: wait
    wait: {duration: PT1M}
"""


def _loop_plan(exit_port: str) -> str:
    return _plan(
        "repeat", _LOOP + _DONE,
        _edge("e_body", "repeat", "body", "tick")
        + _edge("e_next", "tick", "completed", "repeat", exit_port,
                "    bind: {count: {ref: loop.iteration}}\n")
        + _edge("e_done", "repeat", "done", "done"),
        _LOOP_HEAD,
    )


register(
    Code("LP4001", "graph.entry_missing", "Entry names no node",
         "`entry` must be the id of a node declared under `nodes` (a missing entry is rejected). "
         "The diagnostic suggests the closest node id. Reachability is not checked until the entry "
         "exists.",
         _plan("notfy", _NOTIFY + _DONE, _edge("e_done", "notify", "completed", "done")),
         _OK),
    Code("LP4002", "graph.dangling_node", "Edge endpoint names no node",
         "Both `from.node` and `to.node` of an edge must name declared nodes (dangling edges are "
         "rejected). A missing id is one diagnostic however many edges name it (a deleted or "
         "misspelt node is one defect): it sits on the first edge naming it, says how many edges "
         "do, and points at the others. It suggests the closest node id only when that node fits "
         "every one of those edges (their ports are its ports, a source port has no edge yet, "
         "and no edge would lead from the node to itself), so an End is never offered where an "
         "edge leaves the missing node; the fix renames every endpoint. An endpoint naming a "
         "node that is itself malformed is not reported again, and a missing node a reached "
         "edge leads to may have been the succeeded End (no LP4007).",
         _plan("notify", _NOTIFY + _DONE, _edge("e_done", "notify", "completed", "dnoe")),
         _OK),
    Code("LP4003", "graph.unknown_port", "Unknown port on an edge",
         "`from.port` must be a source port of the source node's type and `to.port` a target port "
         "of the destination: every node has the target port `in`, a loop also `continue` and "
         "`break`. `timed_out` exists only on a wait with a `timeout`, and an End has no source "
         "ports at all, so no edge may leave it.",
         _plan("notify", _NOTIFY + _DONE, _edge("e_done", "notify", "complete", "done")),
         _OK),
    Code("LP4004", "graph.port_multiple_edges", "More than one edge from a source port",
         "A source port has at most one outgoing edge: ordinary nodes never branch implicitly. "
         "Choice is a `switch`, parallelism a `fork` or `fan_out`. The diagnostic sits on the "
         "second edge and points at the first; that edge is set aside, so no later pass analyses "
         "it (its binds, the branches it would merge).",
         _plan("notify", _NOTIFY + _DONE + """  - id: audit
    type: end
    end: {status: succeeded}
""", _edge("e_done", "notify", "completed", "done") + _edge("e_audit", "notify", "completed", "audit")),
         _OK),
    Code("LP4005", "graph.port_unrouted", "Success or control port has no edge",
         "Every success or control port — `completed`, `approved`, `rejected`, each switch case "
         "and default, each fork branch, loop `body` and `done`, fan-out `item`, join `completed` "
         "— must have an edge; a missing edge never completes a Run. Only `failed` and `timed_out` "
         "may be omitted (the compiler lowers them to a failure route). Route an unwanted outcome "
         "to a failed End. A node the missing edge led to, now cut off (no edge leads to it), is "
         "not also reported unreachable (LP4006). A node that no edge leads to or leaves is one "
         "defect, reported as not connected (LP4006), not also for its ports.",
         _plan("approve", _APPROVAL + _DONE, _edge("e_approved", "approve", "approved", "done"),
               _APPROVAL_HEAD),
         _plan("approve", _APPROVAL + _DONE + _REJECTED,
               _edge("e_approved", "approve", "approved", "done")
               + _edge("e_rejected", "approve", "rejected", "rejected"),
               _APPROVAL_HEAD)),
    Code("LP4006", "graph.unreachable", "Node unreachable from the entry",
         "Every node must be reachable from `entry` by following edges (unreachable nodes are "
         "rejected). Connect the node or delete it. A node with ports to route that no edge leads "
         "to or leaves is said to be not connected, and this one diagnostic stands for it: its "
         "unrouted ports (LP4005) and, for a loop, its missing `continue` edge (LP4008) are the "
         "same defect. A node reached by edges but with a port missing its edge is LP4005 alone; "
         "a node with edges out but none in is LP4006 alone. A node an edge no longer reaches "
         "because that edge was rerouted is not reported when the rerouted edge is: into the scope "
         "of the owner it used to lead to (LP4307, LP4403), into a cycle outside every loop "
         "(LP4501) or to a loop's `continue`/`break` from outside its body (LP4504).",
         _plan("notify", _NOTIFY + _DONE + """  - id: orphan
    type: end
    end: {status: failed, code: never_used}
""", _edge("e_done", "notify", "completed", "done")),
         _OK),
    Code("LP4007", "graph.no_succeeded_end", "No succeeded End is reachable",
         "At least one End with `status: succeeded` must be reachable from the entry (every Plan "
         "has an explicit succeeded End, which maps and validates Plan output). Reported at "
         "`entry`.",
         _plan("notify", _NOTIFY + """  - id: done
    type: end
    end: {status: failed, code: not_done}
""", _edge("e_done", "notify", "completed", "done")),
         _OK),
    Code("LP4008", "graph.continue_unrouted", "Loop has no edge into `continue`",
         "A counted loop has a required incoming `continue` port: the body's exit leads back to "
         "the loop's `continue` port, whose `bind` builds the next state. `break` alone cannot "
         "make a counted loop. When the body's exit enters the loop's `in` port instead, the "
         "diagnostic sits on that edge with the fix (the cycle it closes is not also LP4501); "
         "when a port in the body has no edge, it sits on that port's node (not also LP4005); "
         "when the body's exit leads to a succeeded End, it sits on that edge with the fix (the "
         "End is not also inside the loop body, LP4101).",
         _loop_plan("break"), _loop_plan("continue")),
)
