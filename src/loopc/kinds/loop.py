"""``loop``: a counted loop with loop state (docs/reference.md#node-loop)."""

from __future__ import annotations

from loopc.kinds.base import MAX_ITERATIONS, S_CONTRACT, S_VALUES, Kind, Ports, SourceField, s_choice, s_int
from loopc.kinds.spec import BIND, CONTRACT, F, Int, Obj, Str

MODES = ("counted",)

KIND = Kind(
    name="loop",
    config_key="loop",
    since=1,
    summary="Run the body at most iterations times; the body returns through continue or break.",
    source={
        "mode": SourceField(s_choice(*MODES), required=True, choices=MODES),
        "iterations": SourceField(s_int(1, MAX_ITERATIONS), required=True, bounds=(1, MAX_ITERATIONS)),
        # state and init are optional: omitted means {} (no loop state)
        "state": SourceField(S_CONTRACT, form="contract"),
        "init": SourceField(S_VALUES, form="values"),
    },
    wire=Obj(
        {
            "mode": F(Str(enum={"counted": 1})),
            "iterations": F(Int(1, MAX_ITERATIONS)),
            "state": F(CONTRACT),
            "init": F(BIND),
        }
    ),
    ports=Ports(
        fixed=("body", "done"),
        targets=("in", "continue", "break"),
        outputs={"body": "nothing; use `loop.*`", "done": "the final loop state"},
        carries={"done": "contract"},
    ),
    effects="none",
    scope="loop",
    body_ports=("body",),
    back_ports=("continue", "break"),
)
