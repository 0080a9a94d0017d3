"""``fork``: open parallel branches (docs/reference.md#node-fork)."""

from __future__ import annotations

from typing import Any, Mapping

from loopc.kinds.base import S_IDENT, Kind, Ports, SourceField
from loopc.kinds.spec import PORT, Arr, F, Obj


def _wire_ports(c: Mapping[str, Any]) -> list[str]:
    return list(c["branches"])


KIND = Kind(
    name="fork",
    config_key="fork",
    since=1,
    summary="Open two or more parallel branches, closed by a join.",
    source={
        "branches": SourceField({"type": "array", "minItems": 2, "uniqueItems": True, "items": S_IDENT}, required=True),
    },
    wire=Obj({"branches": F(Arr(PORT, min_items=2))}),
    ports=Ports(
        authored="branches",
        authored_wire=_wire_ports,
        outputs={"<branch>": "the node's input, unchanged"},
        carries={"*": "input"},
    ),
    effects="none (opens parallel branches)",
    scope="fork",
)
