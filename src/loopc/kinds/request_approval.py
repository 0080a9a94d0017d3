"""``request_approval``: ask a member to approve or reject
(docs/reference.md#node-request-approval)."""

from __future__ import annotations

from loopc.kinds.base import FAILED_OUTPUT, S_TEMPLATE, S_VALUE, Kind, Ports, SourceField, described
from loopc.kinds.spec import INSTR, F, Obj

KIND = Kind(
    name="request_approval",
    config_key="requestApproval",
    since=1,
    summary="Ask an assignee to approve or reject; optionally post the decision comment to a scope.",
    source={
        "assignee": SourceField(S_TEMPLATE, required=True, form="template", type="member"),
        "summary": SourceField(S_TEMPLATE, required=True, form="template", type="string", render=True),
        "feedbackScope": SourceField(
            described(S_VALUE, "Optional scope where a decision comment is posted."), form="value", type="scope"
        ),
    },
    wire=Obj(
        {
            "assignee": F(INSTR),
            "summary": F(INSTR),
            "feedbackScope": F(INSTR, required=False, since=5),
        }
    ),
    ports=Ports(
        fixed=("approved", "rejected", "failed"),
        outputs={
            "approved": "`{decidedBy: member}`, plus `comment: string` with `feedbackScope`",
            "rejected": "`{decidedBy: member}`, plus `comment: string` with `feedbackScope`",
            "failed": FAILED_OUTPUT,
        },
        carries={"approved": "own", "rejected": "own"},
    ),
    retry=True,
    effects="opens an approval task (external) and waits for the decision",
    effect_class="approval",
    conditional_outputs={"comment": "feedbackScope"},
)
