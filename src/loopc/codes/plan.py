"""LP6xxx — execution plans: the capability catalog file (LP60xx, positioned
in the catalog file) and plan derivation (LP61xx, positioned in the plan
source).  See docs/plan.md.

Failing examples of LP60xx codes are catalog files (YAML), not plans;
``tests/test_plan_codes.py`` loads them with :func:`loopc.plan.load_catalog`.
Examples of LP61xx codes are plans, planned by ``tests/test_plan_codes.py``
(LP6101 with the requested profile ``bounded_atomic``).
"""

from loopc.codes import Code, register

_HEAD = """catalogVersion: loop.plan.catalog/v1
contractVersion: loop.plan.capability/v1
binding: {org: acme, installation: main, runtimeCapability: worker, generation: g1}
"""
_SETVAR_CAPS = """    capabilities:
      ExecutionClass: record_mutation
      TransactionPolicy: owned_transaction
      ReplayPolicy: deterministic_replay
      FanoutBound: {kind: static, maximum: 1}
      ReadContract: checkpoint_only
      LockPlanContract: {kind: static_keys, resourceClasses: [run_state]}
      EffectOwner: {kind: none, owner: null}
      IdempotencyPolicy: {keyShape: [], scope: none}
      OutputDurability: checkpointed
      SecurityPolicy: {principal: run_principal, reauthorization: never}
      MinimumCapabilityVersion: {contract: loop.plan.capability, generation: 1}
"""


def _cat(descriptors: str, bindings: str) -> str:
    return _HEAD + "descriptors:\n" + descriptors + "bindings:\n" + bindings


_DESC = "  - action: set_variable\n    owner: loop.platform\n" + _SETVAR_CAPS
_BIND = "  - {action: set_variable, owner: loop.platform, handler: acme/set_variable, implementationVersion: '3'}\n"
_OK = _cat(_DESC, _BIND)
_BROAD_BIND = (
    "  - action: set_variable\n    owner: loop.platform\n    handler: acme/set_variable\n"
    "    implementationVersion: '3'\n" + _SETVAR_CAPS.replace("deterministic_replay", "not_replayable")
)

_PLAN_HEAD = """apiVersion: loop.plan/v1
kind: PlanVersion
input: {}
output: {}
"""
_ATOMIC_OK = (
    _PLAN_HEAD
    + """state:
  count: {type: number, required: false, default: 0}
entry: bump
nodes:
  - id: bump
    type: set_variable
    setVariable:
      assign: {count: 1}
  - id: done
    type: end
    end: {status: succeeded}
edges:
  - {id: e1, from: {node: bump, port: completed}, to: {node: done}}
"""
)
_ATOMIC_BAD = (
    _PLAN_HEAD
    + """state:
  count: {type: number, required: false, default: 0}
entry: bump
nodes:
  - id: bump
    type: set_variable
    setVariable:
      assign: {count: 1}
  - id: pause
    type: wait
    wait: {duration: PT1M}
  - id: done
    type: end
    end: {status: succeeded}
edges:
  - {id: e1, from: {node: bump, port: completed}, to: {node: pause}}
  - {id: e2, from: {node: pause, port: completed}, to: {node: done}}
"""
)

register(
    Code(
        "LP6001",
        "catalog.schema",
        "Catalog file does not have the catalog shape",
        "A catalog file is one object with catalogVersion, contractVersion, binding, descriptors and "
        "bindings (docs/plan.md, 'Catalog file'); every object is closed and every capability value "
        "comes from its documented set. The position is the first member that does not fit.",
        _cat(_DESC.replace("deterministic_replay", "replay_if_you_like"), _BIND),
        _OK,
        section="capability-catalog",
    ),
    Code(
        "LP6002",
        "catalog.version",
        "Unsupported catalog or capability contract version",
        "This loopc reads catalogVersion loop.plan.catalog/v1 with contractVersion "
        "loop.plan.capability/v1. A catalog written for another version cannot be sealed by it.",
        _OK.replace("loop.plan.catalog/v1", "loop.plan.catalog/v9"),
        _OK,
        section="capability-catalog",
    ),
    Code(
        "LP6003",
        "catalog.limit",
        "Too many submissions in a catalog file",
        "A catalog file holds at most 1,024 descriptors and 1,024 bindings (besides the 1 MiB, "
        "nesting-64 and 100,000-node limits of the YAML layer).",
        "<a catalog whose descriptors list has 1,025 entries>",
        "",
        section="capability-catalog",
    ),
    Code(
        "LP6004",
        "catalog.unknown_action",
        "Catalog names an action type loop.plan/v1 does not have",
        "Action types are the node kinds of loop.plan/v1, with send_message and wait split by mode: "
        "send_message.sent, send_message.callback, request_approval, wait.condition, wait.timer, "
        "set_variable, switch, fork, join, fan_out, loop, end. Any other name is a typo or a "
        "registration for another language.",
        _cat(_DESC.replace("action: set_variable", "action: set_variables"), _BIND),
        _OK,
        section="capability-catalog",
    ),
    Code(
        "LP6005",
        "catalog.inconsistent_descriptor",
        "Capability values that cannot go together",
        "Some combinations are contradictions: an external_effect must be transaction_forbidden and "
        "have an effect owner; only an external_effect has an effect owner or an owner_receipt "
        "output; idempotent_by_key replay needs a key shape.",
        _cat(
            _DESC.replace(
                "EffectOwner: {kind: none, owner: null}", "EffectOwner: {kind: runtime_delivery, owner: null}"
            ),
            _BIND,
        ),
        _OK,
        section="capability-catalog",
    ),
    Code(
        "LP6010",
        "catalog.conflict.owner",
        "One action type registered by two owners",
        "An action type has exactly one owner in a catalog generation. A second owner's descriptor, "
        "or a handler binding from another owner than the descriptor's, rejects the whole catalog: "
        "there is no precedence and no last-writer-wins. Correct the source registrations and "
        "build a new catalog.",
        _cat(_DESC + _DESC.replace("owner: loop.platform", "owner: acme.pack"), _BIND),
        _OK,
        section="capability-catalog",
    ),
    Code(
        "LP6011",
        "catalog.conflict.handler",
        "One action type bound to two handlers",
        "An action type has exactly one executable handler binding. Re-submitting the identical "
        "binding is harmless; a second binding with another handler reference or implementation "
        "version rejects the whole catalog.",
        _cat(_DESC, _BIND + _BIND.replace("'3'", "'4'")),
        _OK,
        section="capability-catalog",
    ),
    Code(
        "LP6012",
        "catalog.conflict.descriptor",
        "One action type with two different descriptors",
        "The same owner registered the action twice with different capabilities, or a handler "
        "binding restates capabilities that differ from its owner's descriptor (without broadening "
        "them). One action has exactly one descriptor; a binding either restates it exactly or "
        "omits it.",
        _cat(_DESC + _DESC.replace("checkpointed\n", "ephemeral\n"), _BIND),
        _OK,
        section="capability-catalog",
    ),
    Code(
        "LP6013",
        "catalog.broadening",
        "A handler binding broadens its owner's capabilities",
        "A runtime handler binding may restate the capabilities its owner declared, but never declare "
        "a broader (less restrictive) value: a later value of an enum (e.g. not_replayable instead of "
        "deterministic_replay), a larger fan-out bound, another lock class, a weaker idempotency key.",
        _cat(_DESC, _BROAD_BIND),
        _OK,
        section="capability-catalog",
    ),
    Code(
        "LP6014",
        "catalog.binding_without_descriptor",
        "A handler binding for an action nobody registered",
        "A binding attaches a handler to an owner's descriptor; it never creates capabilities. Add the "
        "action's descriptor (from `loopc catalog`) or remove the binding.",
        _cat(
            _DESC,
            _BIND + "  - {action: wait.timer, owner: loop.platform, handler: acme/timer, implementationVersion: '1'}\n",
        ),
        _OK,
        section="capability-catalog",
    ),
    Code(
        "LP6101",
        "plan.profile_unprovable",
        "The requested execution profile cannot be proven",
        "A plan runs under the most restrictive execution profile loopc can prove. Requesting a "
        "profile (`loopc plan --profile P`) that the proof does not reach is an error naming the "
        "exact blocker: the node, the capability and its value (for example a wait's ExecutionClass "
        "wait blocks bounded_atomic). Embedded Before-Save is never provable for a loop.plan: plans "
        "have no record-trigger binding. Remove the blocker or request a larger profile.",
        _ATOMIC_BAD,
        _ATOMIC_OK,
        section="execution-plans",
    ),
    Code(
        "LP6102",
        "plan.capability_missing",
        "A node's action type has no catalog entry",
        "Every node needs its action type's capability descriptor in the catalog the plan is derived "
        "with. The catalog given with --catalog replaces the built-in one completely; start from "
        "`loopc catalog` and keep every entry your plans use.",
        "<a plan with a wait node, planned with a catalog that has no wait.timer entry>",
        "",
        section="execution-plans",
    ),
    Code(
        "LP6103",
        "plan.not_executable",
        "A node's action type has no handler binding",
        "The catalog has the action's descriptor but no handler binding (a contract-only action): "
        "the plan cannot become executable until the action's owner supplies exactly one binding.",
        "<a plan with a set_variable node, planned with a catalog without a set_variable binding>",
        "",
        section="execution-plans",
    ),
    Code(
        "LP6104",
        "plan.unbounded",
        "No bound proof for the plan's graph",
        "Bounds are maxima over every possible run, computed over the plan's forward graph (loop "
        "continue/break edges excluded). An artifact whose forward graph has a cycle, or whose scopes "
        "do not close, has no proof; loopc never emits a plan for it. A plan that checks clean "
        "always has one.",
        "<an artifact whose edges form a cycle outside a counted loop>",
        "",
        section="execution-plans",
    ),
    Code(
        "LP6105",
        "plan.invalid_artifact",
        "The artifact does not pass verify",
        "Plans are derived only from artifacts that decode strictly and whose semantic digest "
        "matches (`loopc verify`).",
        "<an artifact whose digest does not match its plan>",
        "",
        section="execution-plans",
    ),
    Code(
        "LP6106",
        "plan.effect_pair_invalid",
        "An effect is not lowered to one valid submit/completion pair",
        "Every external effect becomes exactly one EffectSubmit step and one EffectCompletion step; "
        "the submit never waits on itself and no step path leads from the completion back to its "
        "submit. loopc validates every plan it emits; this code means the derivation itself is wrong.",
        "<a derivation that produced a completion without its submit>",
        "",
        section="execution-plans",
    ),
)
