"""Per-kind behaviour is looked up in tables keyed by kind, proved complete
against the registry here, so a kind without a handler fails at test time
(docs/architecture.md#add-a-node-kind)."""

from __future__ import annotations

from loopc import kinds
from loopc.interpreter import engine


def test_every_kind_has_exactly_one_interpreter_handler() -> None:
    acts = set(engine.ACTIVATION_HANDLERS)
    arrivals = set(engine.ARRIVAL_OPS)
    assert not acts & arrivals
    assert acts | arrivals == set(kinds.KINDS)
    for op, h in engine.ACTIVATION_HANDLERS.items():
        assert h is getattr(engine.Engine, "_op_" + op)
