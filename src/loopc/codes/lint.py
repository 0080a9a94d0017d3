"""LP19xx — suppression comments (``loopc check`` and the language server's
lint layer, :mod:`loopc.lint.suppress`)."""

from loopc.codes import Code, register
from loopc.diagnostics import Severity

_H = "apiVersion: loop.plan/v1\nkind: PlanVersion\n"
_TOP = """input: {}
output: {}
state:
  ready: {type: boolean, default: false}
entry: split
nodes:
  - id: split
    type: fork
    fork: {branches: [a, b]}
"""
_WAIT = """  - id: do_a
    type: wait
    wait: {condition: "run.state.ready == true", timeout: P1D}
"""
_REST = """  - id: do_b
    type: send_message
    sendMessage: {target: "#ops", text: "do_b", completion: sent}
  - id: joined
    type: join
    join: {forkId: split, mode: all, result: {}, merge: {}}
  - id: done
    type: end
    end: {status: succeeded}
edges:
  - {id: e_a, from: {node: split, port: a}, to: {node: do_a}}
  - {id: e_b, from: {node: split, port: b}, to: {node: do_b}}
  - {id: e_a_done, from: {node: do_a, port: completed}, to: {node: joined}}
  - {id: e_b_done, from: {node: do_b, port: completed}, to: {node: joined}}
  - {id: e_joined, from: {node: joined, port: completed}, to: {node: done}}
"""
_S = "suppression-comments"
_REASON = "  # loopc: disable=LP4603 -- the flag is set by an operator through the API\n"


def _plan(comment: str) -> str:
    return _H + _TOP + comment + _WAIT + _REST


register(
    Code(
        "LP1901",
        "suppression.unused",
        "Suppression comment suppresses nothing",
        "A `# loopc: disable=CODE -- reason` comment names a code that is not reported in what it covers "
        "(the node after it, or the key after it and that key's subtree), or it is not directly before a "
        "node's `- id:` line or a key, so it covers nothing. Stale suppressions hide future warnings; "
        "remove it, or move it directly above the node or key it is meant for.",
        _plan("  # loopc: disable=LP4702 -- no longer needed\n" + _REASON),
        _plan(_REASON),
        Severity.WARNING,
        _S,
    ),
    Code(
        "LP1902",
        "suppression.no_reason",
        "Suppression comment without a reason",
        "Every suppression says why the warning does not apply: write "
        "`# loopc: disable=CODE -- reason`. The suppression still applies, but this warning replaces "
        "the one it hides until a reason is given.",
        _plan("  # loopc: disable=LP4603\n"),
        _plan(_REASON),
        Severity.WARNING,
        _S,
    ),
    Code(
        "LP1903",
        "suppression.error_code",
        "An error cannot be suppressed",
        "Only warnings can be suppressed, inline or in the configuration: an error means the plan cannot "
        "compile, so it is reported whatever the comment says. Fix the error instead.",
        _H + "input: {}\noutput: {}\nentry: done\nnodes:\n  # loopc: disable=LP2007 -- colour is ours\n"
        "  - id: done\n    type: end\n    colour: red\n    end: {status: succeeded}\nedges: []\n",
        _H + "input: {}\noutput: {}\nentry: done\nnodes:\n"
        "  - id: done\n    type: end\n    end: {status: succeeded}\nedges: []\n",
        Severity.WARNING,
        _S,
    ),
    Code(
        "LP1904",
        "suppression.malformed",
        "Suppression comment does not parse",
        "A comment line starting with `# loopc:` is a directive; the only one is "
        "`# loopc: disable=CODE[,CODE] -- reason`, where each CODE is a registered code (`LP4603`) "
        "or its slug (`wait.condition_static`). See `loopc explain --list` for the codes.",
        _plan("  # loopc: disable=LP9999 -- typo in the code\n" + _REASON),
        _plan(_REASON),
        Severity.WARNING,
        _S,
    ),
)
