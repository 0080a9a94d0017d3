"""The schema pass's vocabulary (:mod:`loopc.compiler.schema`): the document
header values, the budgets of docs/reference.md#budgets, the closed key set
of every mapping the pass reads (docs/reference.md#document,
docs/reference.md#nodes, docs/reference.md#edges — the node configs' own
derived from the node-kind registry, :mod:`loopc.kinds`) and the reference
section of a shape finding (:func:`section_at`).

Data only: no reader, no diagnostic.  :mod:`loopc.compiler.schema`
re-exports every public name, which is where other passes import them from.
"""
from __future__ import annotations

from loopc import kinds
from loopc.compiler.model import FIELD_TYPES, NODE_CONFIG_KEYS, RETRY_CAPABLE
from loopc.kinds import send_message as _send_message


API_VERSION = "loop.plan/v1"
KIND = "PlanVersion"
LEGACY_API_VERSION = "loop.workflow/v1"
LEGACY_KIND = "Workflow"

# Budgets.
MAX_NODES = 512
MAX_EDGES = 2048
MAX_SCHEMA_FIELDS = 2048
MAX_RELATED_SCOPES = kinds.MAX_RELATED_SCOPES
MAX_LITERAL_NESTING = 32
MAX_LITERAL_VALUES = 8192
# Bounds of literal-only integers: declared once, in the node-kind registry.
MAX_ATTEMPTS = kinds.MAX_ATTEMPTS
MAX_CONCURRENCY = kinds.MAX_CONCURRENCY
MAX_ITERATIONS = kinds.MAX_ITERATIONS

ROOT_KEYS = frozenset(("apiVersion", "kind", "input", "output", "state", "entry", "nodes", "edges"))
FIELD_KEYS = frozenset(("type", "required", "default", "values", "items", "label", "description"))
NODE_KEYS = ("id", "type", "label", "description", "input", "retry")
LEGACY_NODE_KEYS = frozenset(("next", "default", "onApprove", "onReject", "onTimeout"))
CONFIG_KEY_TYPES = {v: k for k, v in NODE_CONFIG_KEYS.items()}


def section_at(pointer: str) -> str | None:
    """The reference section of the mapping at JSON ``pointer``, for a
    shape finding there (a missing or unknown key, a wrong shape —
    :data:`loopc.codes.sections.LOCATED`): a node's configuration is its
    kind's section (``/nodes/2/join`` → ``node-join``), its ``retry`` and
    ``input`` are ``retry`` and ``contracts``, the Plan input/output/state
    contracts are ``contracts``, an edge is ``edges``; ``None`` elsewhere
    (the code's own section)."""
    parts = pointer.split("/")[1:]
    if len(parts) >= 3 and parts[0] == "nodes":
        kind = CONFIG_KEY_TYPES.get(parts[2])
        if kind is not None:
            return "node-" + kind.replace("_", "-")
        return {"retry": "retry", "input": "contracts"}.get(parts[2])
    if parts and parts[0] in ("input", "output", "state"):
        return "contracts"
    if len(parts) >= 2 and parts[0] == "edges":
        return "edges"
    return None
EDGE_KEYS = frozenset(("id", "from", "to", "bind", "label"))
FROM_KEYS = frozenset(("node", "port"))
RETRY_KEYS = frozenset(("maxAttempts", "backoff"))
# Closed key sets and literal choices of each node config (loopc.kinds).
_K = kinds.tables().kinds
SEND_KEYS = _K["send_message"].source_keys
CALLBACK_ONLY = _send_message.CALLBACK_ONLY
WORK_ITEMS_KEYS = frozenset(("allowedResponders",))
SET_VARIABLE_KEYS = _K["set_variable"].source_keys
WAIT_KEYS = _K["wait"].source_keys
APPROVAL_KEYS = _K["request_approval"].source_keys
SWITCH_KEYS = _K["switch"].source_keys
CASE_KEYS = frozenset(("port", "when"))
FORK_KEYS = _K["fork"].source_keys
JOIN_KEYS = _K["join"].source_keys
FAN_OUT_KEYS = _K["fan_out"].source_keys
LOOP_KEYS = _K["loop"].source_keys
END_KEYS = _K["end"].source_keys
_COMPLETIONS = _K["send_message"].choices("completion")
_SWITCH_MODES = _K["switch"].choices("mode")
_JOIN_MODES = _K["join"].choices("mode")
_FAILURE_MODES = _K["fan_out"].choices("failureMode")
_LOOP_MODES = _K["loop"].choices("mode")
_END_STATUSES = _K["end"].choices("status")
_RETRY_NAMES = [t for t in _K if t in RETRY_CAPABLE]
_RETRY_TYPES = ", ".join(_RETRY_NAMES[:-1]) + " and " + _RETRY_NAMES[-1]
#: Compiler-owned callback outputs that a ``callbackOutput`` may not declare.
RESERVED_CALLBACK_FIELDS = frozenset(("workScope", "workItems"))
NO_DEFAULT_TYPES = frozenset(("work_items", "responder"))
_FIELD_TYPE_SET = frozenset(FIELD_TYPES)
_VE_KEYS = ("ref", "expr", "literal")
