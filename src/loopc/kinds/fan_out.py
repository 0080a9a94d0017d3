"""``fan_out``: run its body once per work item (docs/reference.md#node-fan-out)."""

from __future__ import annotations

from loopc.kinds.base import MAX_CONCURRENCY, S_VALUE, Kind, Ports, SourceField, s_choice, s_int
from loopc.kinds.spec import INSTR, F, Int, Obj, Str

FAILURE_MODES = ("collect",)
#: ``maxConcurrency`` when the source omits it.
DEFAULT_MAX_CONCURRENCY = 4

KIND = Kind(
    name="fan_out",
    config_key="fanOut",
    since=4,
    summary="Run the item body once per work item, at most maxConcurrency at a time; a join with fanOutId closes it.",
    source={
        "items": SourceField(
            S_VALUE,
            required=True,
            form="value",
            type="work_items",
            what="`fanOut.items`",
            hint=" (the work_items value, e.g. {ref: input.work_items})",
        ),
        "maxConcurrency": SourceField(
            s_int(1, MAX_CONCURRENCY), bounds=(1, MAX_CONCURRENCY), default=DEFAULT_MAX_CONCURRENCY
        ),
        "failureMode": SourceField(s_choice(*FAILURE_MODES), choices=FAILURE_MODES, default="collect"),
    },
    wire=Obj(
        {
            "items": F(INSTR),
            "maxConcurrency": F(Int(1, MAX_CONCURRENCY)),
            "failureMode": F(Str(enum={"collect": 4})),
        }
    ),
    ports=Ports(fixed=("item",), outputs={"item": "nothing; use `item.*`"}),
    effects="none (item bodies run concurrently)",
    scope="fan_out",
    body_ports=("item",),
)
