"""``send_message``: post a message to a target or scope; optionally wait for
an Agent's callback (docs/reference.md#node-send-message)."""

from __future__ import annotations

from loopc.kinds.base import (
    FAILED_OUTPUT,
    MAX_RELATED_SCOPES,
    S_CONTRACT,
    S_TEMPLATE,
    S_VALUE,
    Kind,
    Ports,
    SourceField,
    closed,
    described,
    s_choice,
)
from loopc.kinds.spec import CONTRACT, INSTR, Arr, Bool, F, Obj, Str, Tagged

#: Keys that only a callback-completion sendMessage may declare.
CALLBACK_ONLY = ("responder", "callbackOutput", "workScope", "relatedScopes", "workItems")
COMPLETIONS = ("sent", "callback")


def _one_destination(d: dict) -> bool:
    return ("target" in d) != ("scope" in d)


WIRE = Obj(
    {
        "text": F(INSTR),
        "completion": F(Str(enum={"sent": 1, "callback": 1})),
        "target": F(INSTR, required=False),
        "scope": F(INSTR, required=False, since=2),
        "startThread": F(Bool(const=True), required=False, since=2),
        "callbackOutput": F(CONTRACT, required=False),
        "responder": F(INSTR, required=False, since=4),
        "workScope": F(
            Tagged("mode", {"fixed": (Obj({"scope": F(INSTR)}), 3), "agent": (Obj({}), 3)}),
            required=False,
            since=3,
        ),
        "relatedScopes": F(
            Tagged(
                "form",
                {
                    "list": (Obj({"items": F(Arr(INSTR, max_items=MAX_RELATED_SCOPES))}), 3),
                    "value": (Obj({"value": F(INSTR)}), 4),
                },
            ),
            required=False,
            since=3,
        ),
        "workItems": F(Obj({"allowedResponders": F(INSTR)}), required=False, since=4),
    },
    checks=(
        ("exactly one of 'target' and 'scope'", _one_destination),
        (
            "'callbackOutput' is present exactly when completion is callback",
            lambda d: (d.get("completion") == "callback") == ("callbackOutput" in d),
        ),
        (
            "'startThread' requires sent completion",
            lambda d: "startThread" not in d or d.get("completion") == "sent",
        ),
        (
            "'responder', 'workScope', 'relatedScopes' and 'workItems' require callback completion",
            lambda d: (
                d.get("completion") == "callback"
                or not any(k in d for k in ("responder", "workScope", "relatedScopes", "workItems"))
            ),
        ),
        (
            "'relatedScopes' is present exactly when 'workScope' is",
            lambda d: ("relatedScopes" in d) == ("workScope" in d),
        ),
    ),
    schema_extra={
        "oneOf": [{"required": ["target"]}, {"required": ["scope"]}],
        "allOf": [
            {
                "if": {"properties": {"completion": {"const": "callback"}}},
                "then": {"required": ["callbackOutput"], "not": {"required": ["startThread"]}},
                "else": {
                    "not": {
                        "anyOf": [
                            {"required": [k]}
                            for k in ("callbackOutput", "responder", "workScope", "relatedScopes", "workItems")
                        ]
                    }
                },
            },
            {
                "if": {"required": ["workScope"]},
                "then": {"required": ["relatedScopes"]},
                "else": {"not": {"required": ["relatedScopes"]}},
            },
        ],
    },
)

KIND = Kind(
    name="send_message",
    config_key="sendMessage",
    since=1,
    summary="Post a message to a target or scope; with callback completion, wait for an Agent's answer.",
    source={
        "target": SourceField(
            described({"type": "string"}, "Target string: #slug, dm:@handle, task:<id>, team:@handle (template)."),
            form="template",
            custom=True,
        ),
        "scope": SourceField(
            described(S_VALUE, "Destination scope (ValueExpr resolving to a scope)."), form="value", custom=True
        ),
        "text": SourceField(S_TEMPLATE, required=True, form="template", type="string", render=True),
        "completion": SourceField(s_choice(*COMPLETIONS), required=True, choices=COMPLETIONS),
        "startThread": SourceField(described({"type": "boolean"}, "sent only: open a child Thread on a Channel root.")),
        "responder": SourceField(
            described(S_VALUE, "callback only: the Agent (agent- or responder-typed) that answers."),
            form="value",
            custom=True,
        ),
        "callbackOutput": SourceField(S_CONTRACT, form="contract"),
        "workScope": SourceField(
            described({"anyOf": [{"type": "null"}, S_VALUE]}, "callback only; null lets the Agent choose."),
            form="value",
            custom=True,
        ),
        "relatedScopes": SourceField(
            {"anyOf": [{"type": "array", "items": S_VALUE, "maxItems": MAX_RELATED_SCOPES}, S_VALUE]},
            form="value",
            custom=True,
        ),
        "workItems": SourceField(closed({"allowedResponders": S_VALUE}, ["allowedResponders"]), form="structure"),
    },
    source_rules={"oneOf": [{"required": ["target"]}, {"required": ["scope"]}]},
    wire=WIRE,
    ports=Ports(
        fixed=("completed", "failed"),
        outputs={
            "completed": "`sent`: nothing, or `{messageId, threadScope}` with `startThread`; `callback`: the "
            "`callbackOutput` fields plus `workScope`/`workItems` when those are authored",
            "failed": FAILED_OUTPUT,
        },
        carries={"completed": "own"},
    ),
    retry=True,
    effects="posts a message (external); callback completion waits for an Agent",
    effect_class="message",
    modes=("sent", "callback"),
    mode_of=lambda get: "callback" if get("completion") == "callback" else "sent",
)
