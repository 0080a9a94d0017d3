"""``switch``: route by conditions, first match or all matches (docs/reference.md#node-switch)."""

from __future__ import annotations

from typing import Any, Mapping

from loopc.kinds.base import S_EXPRESSION, S_IDENT, Kind, Ports, SourceField, closed, s_choice
from loopc.kinds.spec import INSTR, PORT, Arr, F, Obj, Str

MODES = ("first_match", "all_match")


def _wire_ports(c: Mapping[str, Any]) -> list[str]:
    return [case["port"] for case in c["cases"]] + [c["default"]]


KIND = Kind(
    name="switch",
    config_key="switch",
    since=1,
    summary="Route to the port of the first matching case (first_match) or of every matching case (all_match).",
    source={
        "mode": SourceField(s_choice(*MODES), required=True, choices=MODES),
        "cases": SourceField(
            {
                "type": "array",
                "minItems": 1,
                "items": closed({"port": S_IDENT, "when": S_EXPRESSION}, ["port", "when"]),
            },
            required=True,
            form="structure",
        ),
        "default": SourceField(S_IDENT, required=True),
    },
    wire=Obj(
        {
            "mode": F(Str(enum={"first_match": 1, "all_match": 1})),
            "cases": F(Arr(Obj({"port": F(PORT), "when": F(INSTR)}), min_items=1)),
            "default": F(PORT),
        }
    ),
    ports=Ports(
        authored="ports",
        authored_wire=_wire_ports,
        outputs={"<case port>": "the node's input, unchanged", "<default>": "the node's input, unchanged"},
        carries={"*": "input"},
    ),
    effects="none (all_match opens parallel branches)",
    scope="all_match",
    scope_when=("mode", "all_match"),
)
