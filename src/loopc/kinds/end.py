"""``end``: finish the Run, succeeded or failed (docs/reference.md#node-end)."""

from __future__ import annotations

from loopc.kinds.base import S_TEMPLATE, Kind, Ports, SourceField, s_choice
from loopc.kinds.spec import ERROR_CODE, INSTR, F, Obj, Str

STATUSES = ("succeeded", "failed")

WIRE = Obj(
    {
        "status": F(Str(enum={"succeeded": 1, "failed": 1})),
        "code": F(Str(pattern=ERROR_CODE), required=False),
        "detail": F(INSTR, required=False),
    },
    checks=(
        (
            "a failed End has 'code'; a succeeded End has neither 'code' nor 'detail'",
            lambda d: "code" in d if d.get("status") == "failed" else not any(k in d for k in ("code", "detail")),
        ),
    ),
    schema_extra={
        "if": {"properties": {"status": {"const": "failed"}}},
        "then": {"required": ["code"]},
        "else": {"not": {"anyOf": [{"required": ["code"]}, {"required": ["detail"]}]}},
    },
)

KIND = Kind(
    name="end",
    config_key="end",
    since=1,
    summary="Finish the Run (succeeded: its input is the Plan output) or fail it with a stable error code.",
    source={
        "status": SourceField(s_choice(*STATUSES), required=True, choices=STATUSES),
        "code": SourceField({"type": "string", "pattern": ERROR_CODE}),
        # a failed End's only: read, typed and lowered by the kind's own code
        "detail": SourceField(S_TEMPLATE, form="template", custom=True, render=True),
    },
    wire=WIRE,
    ports=Ports(fixed=()),
    effects="ends the Run",
)
