"""``wait``: resume on a Run-state condition or after a duration (docs/reference.md#node-wait)."""

from __future__ import annotations

from loopc.kinds.base import FAILED_OUTPUT, S_EXPRESSION, S_VALUE, Kind, Ports, SourceField, described
from loopc.kinds.spec import INSTR, F, Obj

WIRE = Obj(
    {
        "condition": F(INSTR, required=False),
        "duration": F(INSTR, required=False),
        "timeout": F(INSTR, required=False),
    },
    checks=(
        ("exactly one of 'condition' and 'duration'", lambda d: ("condition" in d) != ("duration" in d)),
        ("'timeout' requires 'condition'", lambda d: "timeout" not in d or "condition" in d),
    ),
    schema_extra={
        "oneOf": [{"required": ["condition"]}, {"required": ["duration"]}],
        "dependentRequired": {"timeout": ["condition"]},
    },
)

KIND = Kind(
    name="wait",
    config_key="wait",
    since=1,
    summary="Resume when a Run-state condition holds (optionally with a timeout), or after a duration.",
    source={
        "condition": SourceField(
            S_EXPRESSION, form="expression", type="boolean", context="condition", what="the wait `condition`"
        ),
        "duration": SourceField(described(S_VALUE, "A pure timer (ISO 8601 duration)."), form="value", type="duration"),
        "timeout": SourceField(
            described(S_VALUE, "Optional deadline for a condition; enables the timed_out port."),
            form="value",
            type="duration",
        ),
    },
    source_rules={"oneOf": [{"required": ["condition"]}, {"required": ["duration"]}]},
    wire=WIRE,
    ports=Ports(
        fixed=("completed", "timed_out", "failed"),
        conditional={"timed_out": "timeout"},
        outputs={"completed": "nothing", "timed_out": "nothing", "failed": FAILED_OUTPUT},
        carries={"completed": "empty", "timed_out": "empty"},
    ),
    retry=True,
    effects="watches Run state (condition) or a timer",
    effect_class="timer",
    modes=("condition", "timer"),
    mode_of=lambda get: "condition" if get("condition") is not None else "timer",
)
