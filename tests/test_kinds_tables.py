"""The registry's derived tables (:func:`loopc.kinds.tables`) and its facets
(docs/architecture.md#add-a-node-kind): computed once, read-only, and the
layers above read them instead of restating what a kind declares."""

from __future__ import annotations

import types

import attrs
import pytest

from loopc import kinds
from loopc.kinds.base import EFFECT_CLASSES, SCOPES, Kind


def test_tables_are_cached_and_read_only() -> None:
    t = kinds.tables()
    assert kinds.tables() is t
    assert isinstance(t.kinds, types.MappingProxyType)
    with pytest.raises(TypeError):
        t.node_ops["x"] = 1  # type: ignore[index]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        t.node_ops = {}  # type: ignore[misc]
    assert list(t.kinds) == list(kinds.KINDS)
    # the module-level names of the registry read the same tables
    assert kinds.NODE_OPS is t.node_ops and kinds.RETRY_CAPABLE is t.retry_capable
    assert kinds.BY_CONFIG_KEY is t.by_config_key and kinds.NODE_CONFIG_KEYS is t.node_config_keys
    with pytest.raises(AttributeError):
        kinds.NO_SUCH_TABLE  # noqa: B018


def test_facets_are_declared_and_valid() -> None:
    t = kinds.tables()
    for k in t.kinds.values():
        assert k.effect_class in EFFECT_CLASSES and k.scope in SCOPES
        assert set(k.back_ports) <= set(k.ports.targets)
    assert t.back_ports == frozenset(("continue", "break"))
    assert t.external_ops == ("send_message", "request_approval")
    assert t.control_ops == ("switch", "fork", "join", "fan_out", "loop", "end")
    assert dict(t.modes) == {"send_message": ("sent", "callback"), "wait": ("condition", "timer")}
    assert {k: dict(v) for k, v in t.conditional_outputs.items()} == {"request_approval": {"comment": "feedbackScope"}}
    assert dict(t.scope_owners) == {"switch": "all_match", "fork": "fork", "fan_out": "fan_out", "loop": "loop"}


def test_a_bad_facet_is_refused_when_declared() -> None:
    k = kinds.KINDS["loop"]
    with pytest.raises(ValueError, match="effect class"):
        k.evolve(effect_class="teleport")
    with pytest.raises(ValueError, match="scope"):
        k.evolve(scope="galaxy")
    with pytest.raises(ValueError, match="back port"):
        k.evolve(back_ports=("sideways",))
    with pytest.raises(ValueError, match="conditional output"):
        k.evolve(conditional_outputs={"comment": "nope"})


def test_the_readers_read_the_facets() -> None:
    from loopc.analyzer import context
    from loopc.compiler import scopemap
    from loopc.plan import builtin, derive

    # equal, not identical: an earlier test's kinds.amended() clears the
    # cache on exit, so tables() may be a fresh (equal) object by now
    t = kinds.tables()
    assert scopemap.LOOP_CLOSING_PORTS == t.back_ports
    assert context.LOOP_BACK_PORTS == t.back_ports
    assert derive._BACK_PORTS == t.back_ports
    assert derive._EXTERNAL_OPS == frozenset(t.external_ops)
    assert builtin.CONTROL_OPS == t.control_ops and builtin.MODES == t.modes


def test_amended_tables_reach_the_readers_at_use() -> None:
    """A reader at use (the port tables) sees an amendment at once and the
    original after it."""
    from loopc.compiler import ports
    from loopc.compiler.model import RequestApproval, Template

    old = kinds.KINDS["request_approval"]
    cfg = RequestApproval(Template("x"), Template("y"))
    assert ports.approval_output(cfg).keys() == {"decidedBy"}
    new: Kind = old.evolve(conditional_outputs={"comment": "assignee"})
    with kinds.amended(new):
        assert ports.approval_output(cfg).keys() == {"decidedBy", "comment"}
    assert ports.approval_output(cfg).keys() == {"decidedBy"}


def test_the_scope_a_node_opens_is_read_off_its_kind() -> None:
    from loopc.compiler.model import Switch
    from loopc.compiler.scopemap import owner_kind

    sw = kinds.KINDS["switch"]
    assert sw.opened_scope(types.SimpleNamespace(mode="all_match")) == "all_match"
    assert sw.opened_scope(types.SimpleNamespace(mode="first_match")) is None
    assert kinds.KINDS["loop"].opened_scope(object()) == "loop"
    assert kinds.KINDS["wait"].opened_scope(object()) is None
    with pytest.raises(ValueError, match="scope_when"):
        sw.evolve(scope_when=("nope", "x"))
    assert owner_kind(None) is None
    node = types.SimpleNamespace(config=Switch.__new__(Switch))
    object.__setattr__(node.config, "mode", "all_match")
    assert owner_kind(node) == "all_match"  # type: ignore[arg-type]


def test_the_contract_a_config_carries_is_read_off_its_wire_surface() -> None:
    from loopc.ir import digest
    from loopc.kinds.spec import CONTRACT, F

    want = {"send_message": "callbackOutput", "join": "result", "loop": "state"}
    assert dict(kinds.tables().config_contracts) == want == dict(digest.CONFIG_CONTRACTS)
    k = kinds.KINDS["loop"]
    with pytest.raises(ValueError, match="more than one contract"):
        k.evolve(wire=k.wire.evolve(fields={**k.wire.fields, "other": F(CONTRACT)}))
