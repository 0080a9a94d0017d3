"""``join``: close a fork, an all_match switch or a fan_out (docs/reference.md#node-join)."""

from __future__ import annotations

from loopc.kinds.base import FAILED_OUTPUT, S_CONTRACT, S_IDENT, S_VALUES, Kind, Ports, SourceField, s_choice
from loopc.kinds.spec import BIND, CONTRACT, ID, F, Obj, Str

MODES = ("all", "any")

WIRE = Obj(
    {
        "mode": F(Str(enum={"all": 1, "any": 1})),
        "forkId": F(ID, required=False),
        "fanOutId": F(ID, required=False, since=4),
        "result": F(CONTRACT),
        "merge": F(BIND),
    },
    checks=(
        ("exactly one of 'forkId' and 'fanOutId'", lambda d: ("forkId" in d) != ("fanOutId" in d)),
        ("a fan-out join has mode all", lambda d: "fanOutId" not in d or d.get("mode") == "all"),
    ),
    schema_extra={
        "oneOf": [{"required": ["forkId"]}, {"required": ["fanOutId"]}],
        "if": {"required": ["fanOutId"]},
        "then": {"properties": {"mode": {"const": "all"}}},
    },
)

KIND = Kind(
    name="join",
    config_key="join",
    since=1,
    summary="Wait for all (or any) branches of its owner; merge branch outputs into its result.",
    source={
        "forkId": SourceField(S_IDENT),
        "fanOutId": SourceField(S_IDENT),
        "mode": SourceField(s_choice(*MODES), required=True, choices=MODES),
        # result and merge are optional: an omitted result is {} and an omitted merge binds nothing
        "result": SourceField(S_CONTRACT, form="contract"),
        "merge": SourceField(S_VALUES, form="values"),
    },
    source_rules={"oneOf": [{"required": ["forkId"]}, {"required": ["fanOutId"]}]},
    wire=WIRE,
    ports=Ports(
        fixed=("completed", "failed"),
        outputs={"completed": "the join's `result`", "failed": FAILED_OUTPUT},
        carries={"completed": "contract"},
    ),
    effects="none (cancels the other branches of an any join)",
    closes={"forkId": ("fork", "all_match"), "fanOutId": ("fan_out",)},
)
