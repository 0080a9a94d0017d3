"""``set_variable``: assign Run state fields (docs/reference.md#node-set-variable)."""

from __future__ import annotations

from loopc.kinds.base import S_IDENT_VALUES, Kind, Ports, SourceField
from loopc.kinds.spec import BIND, F, Obj

KIND = Kind(
    name="set_variable",
    config_key="setVariable",
    since=1,
    summary="Assign Run state fields.",
    source={"assign": SourceField(S_IDENT_VALUES, required=True, form="values")},
    wire=Obj({"assign": F(BIND)}),
    ports=Ports(fixed=("completed",), outputs={"completed": "nothing"}, carries={"completed": "empty"}),
    effects="writes Run state",
    effect_class="state",
)
