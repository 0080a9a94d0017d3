"""Typed source model of a ``loop.plan/v1`` document (docs/reference.md#document).

Built by the schema pass (:mod:`loopc.compiler.schema`) from the positioned
YAML tree; consumed by the type/expression pass, the graph passes, the
analyzer and lowering.  Every object keeps ``src``, the YAML node it came
from, so any later pass can report at an exact range (``src.get(key)`` for a
key's value, ``src.key_node(key)`` for the key itself).

All classes are frozen value classes (:mod:`loopc.value`) with identity
equality/hash (``eq=False``) so passes can keep side tables keyed by model objects.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Mapping, TypeVar, Union

from loopc.value import Value, ValueMeta, add_field, fields
from loopc import kinds as _kinds
from loopc.kinds.spec import FIELD_TYPES as _FIELD_TYPES
from loopc.compiler.yamlnodes import YMap, YNode

#: FieldSchema types (docs/reference.md#types), from the registry (:mod:`loopc.kinds.spec`).
FIELD_TYPES = tuple(_FIELD_TYPES)

#: Node types (docs/reference.md#nodes) and their config keys; the retry-capable
#: types.  Both come from the node-kind registry (:mod:`loopc.kinds`).
NODE_CONFIG_KEYS: dict[str, str] = dict(_kinds.tables().node_config_keys)
RETRY_CAPABLE = _kinds.tables().retry_capable


class _Missing:
    """Sentinel for "key absent" where ``None`` means an authored null."""

    _instance: "_Missing | None" = None

    def __new__(cls) -> "_Missing":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()



# --------------------------------------------------------------------------
# Contracts
# --------------------------------------------------------------------------

class FieldSchema(Value, eq=False):
    """One typed field (docs/reference.md#contracts).  ``default`` is ``MISSING``
    when absent; ``values`` only for ``enum``; ``items`` only for ``array``."""

    type: str
    required: bool = False
    default: Any = MISSING
    values: tuple[str, ...] | None = None
    items: "FieldSchema | None" = None
    label: str | None = None
    description: str | None = None
    src: YNode | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not MISSING


#: A contract: field name → FieldSchema, authored order preserved.
Contract = Mapping[str, FieldSchema]


# --------------------------------------------------------------------------
# ValueExprs (docs/reference.md#values)
# --------------------------------------------------------------------------

class Literal(Value, eq=False):
    """A literal value (JSON-like Python data).  ``verbatim`` is true for the
    explicit ``{literal: v}`` form."""

    value: Any
    src: YNode | None = None
    verbatim: bool = False


class Ref(Value, eq=False):
    """``{ref: a.b.c}`` — ``path`` is the dotted path split into segments."""

    path: tuple[str, ...]
    text: str
    src: YNode | None = None  # the scalar holding the path text


class Expr(Value, eq=False):
    """``{expr: "..."}`` or a bare expression string (``when``,
    ``wait.condition``).  ``src`` is the scalar holding the expression text."""

    text: str
    src: YNode | None = None


class Template(Value, eq=False):
    """A string that may contain ``{{ expression }}`` segments (docs/reference.md#templates).
    A plain string without ``{{`` is still a Template where the key takes one."""

    text: str
    src: YNode | None = None


class ListValue(Value, eq=False):
    """A list constructor whose members are ValueExprs (``None`` for a member
    the schema pass rejected and reported)."""

    items: tuple["ValueExpr | None", ...]
    src: YNode | None = None


class MapValue(Value, eq=False):
    """A map constructor whose members are ValueExprs (keys in authored order;
    ``None`` for a member the schema pass rejected and reported)."""

    entries: Mapping[str, "ValueExpr | None"]
    src: YNode | None = None


ValueExpr = Union[Literal, Ref, Expr, Template, ListValue, MapValue]
#: The value mappings (``assign``, ``merge``, ``init``, ``bind``) keep a name
#: whose value the schema pass rejected (and reported) with the value ``None``.


_C = TypeVar("_C", bound=type)

#: node type → its config class (the classes below, in registry order)
CONFIG_CLASSES: dict[str, type] = {}


def _kind_fields(name: str) -> Callable[[_C], _C]:
    """Derive the attributes of node kind ``name``'s config class from the
    registry (docs/architecture.md#add-one-field-to-one-node-kind): every
    generic source field (:attr:`loopc.kinds.Kind.generic_fields`) the class
    body does not declare gets its attribute (:func:`loopc.kinds.base.attr_name`
    of the key) after the declared ones — ``None`` when the key is omitted,
    keyword-only when the key is required — so positional construction keeps
    working.  Declaring one in the body is optional: it gives the attribute a
    static type and a place among the positional parameters.  Applied to
    a ``slots=False`` value class; registers the class in :data:`CONFIG_CLASSES`."""

    def derive(cls: _C) -> _C:
        declared = {f.name for f in fields(cls)}
        for _key, attr, f in _kinds.tables().kinds[name].generic_fields:
            if attr not in declared:
                if f.required:
                    add_field(cls, attr, kw_only=True)
                else:
                    add_field(cls, attr, default=None)
        return cls

    return derive


# --------------------------------------------------------------------------
# Node configurations (docs/reference.md#nodes)
# --------------------------------------------------------------------------

class Retry(Value, eq=False):
    max_attempts: int
    backoff: str
    src: YNode | None = None


@_kind_fields("send_message")
class SendMessage(Value, eq=False, slots=False):
    """``work_scope`` is ``MISSING`` (absent), ``None`` (authored null: the
    Agent chooses) or a ValueExpr.  ``related_scopes`` is ``None`` (absent),
    a tuple of ValueExprs (list form) or one ValueExpr (array-valued form)."""

    text: Template
    completion: str
    target: Template | None = None
    scope: ValueExpr | None = None
    start_thread: bool | None = None
    responder: ValueExpr | None = None
    callback_output: Contract | None = None
    work_scope: Any = MISSING
    related_scopes: Any = None
    allowed_responders: ValueExpr | None = None  # workItems.allowedResponders
    has_work_items: bool = False
    src: YMap | None = None


@_kind_fields("set_variable")
class SetVariable(Value, eq=False, slots=False):
    assign: Mapping[str, ValueExpr | None]
    src: YMap | None = None


@_kind_fields("wait")
class Wait(Value, eq=False, slots=False):
    condition: Expr | None = None
    duration: ValueExpr | None = None
    timeout: ValueExpr | None = None
    src: YMap | None = None


@_kind_fields("request_approval")
class RequestApproval(Value, eq=False, slots=False):
    assignee: Template
    summary: Template
    feedback_scope: ValueExpr | None = None
    src: YMap | None = None


class SwitchCase(Value, eq=False):
    port: str
    when: Expr
    src: YMap | None = None


@_kind_fields("switch")
class Switch(Value, eq=False, slots=False):
    mode: str  # first_match | all_match
    cases: tuple[SwitchCase, ...]
    default: str
    src: YMap | None = None

    @functools.cached_property
    def ports(self) -> tuple[str, ...]:
        """The case ports in authored order, then the default port (computed
        once: every pass asks for it per edge)."""
        return tuple(c.port for c in self.cases) + (self.default,)


@_kind_fields("fork")
class Fork(Value, eq=False, slots=False):
    branches: tuple[str, ...]
    src: YMap | None = None


@_kind_fields("join")
class Join(Value, eq=False, slots=False):
    """Exactly one of ``fork_id`` / ``fan_out_id`` is set."""

    mode: str  # all | any
    result: Contract
    merge: Mapping[str, ValueExpr | None]
    fork_id: str | None = None
    fan_out_id: str | None = None
    src: YMap | None = None

    @property
    def owner(self) -> str:
        return self.fork_id or self.fan_out_id or ""


@_kind_fields("fan_out")
class FanOut(Value, eq=False, slots=False):
    items: ValueExpr
    max_concurrency: int | None = None  # None = default 4, frozen by lowering
    failure_mode: str = "collect"
    src: YMap | None = None


@_kind_fields("loop")
class Loop(Value, eq=False, slots=False):
    mode: str  # counted
    iterations: int
    state: Contract
    init: Mapping[str, ValueExpr | None]
    src: YMap | None = None


@_kind_fields("end")
class End(Value, eq=False, slots=False):
    status: str  # succeeded | failed
    code: str | None = None
    detail: Template | None = None
    src: YMap | None = None


NodeConfig = Union[SendMessage, SetVariable, Wait, RequestApproval, Switch, Fork, Join, FanOut, Loop, End]
_DECLARED: dict[str, type] = {
    "send_message": SendMessage, "set_variable": SetVariable, "wait": Wait, "request_approval": RequestApproval,
    "switch": Switch, "fork": Fork, "join": Join, "fan_out": FanOut, "loop": Loop, "end": End,
}


def _generic_class(name: str) -> type:
    """The config class of a kind that declares none here: every field is
    derived (:func:`_kind_fields`), so the kind must have no custom field
    (:attr:`loopc.kinds.Kind.custom_keys`; ``TypeError`` naming them)."""
    kind = _kinds.tables().kinds[name]
    if kind.custom_keys:
        raise TypeError(f"node kind {name!r} has custom fields {list(kind.custom_keys)}: declare its config "
                        "class in loopc.compiler.model (docs/architecture.md#add-a-node-kind)")
    body = {"__annotations__": {"src": "YMap | None"}, "src": None, "__module__": __name__,
            "__doc__": f"The config of a ``{name}`` node (every field derived from its kind)."}
    cls = ValueMeta("".join(p.title() for p in name.split("_")), (Value,), body, eq=False, slots=False)
    return _kind_fields(name)(cls)


CONFIG_CLASSES.update({t: _DECLARED.get(t) or _generic_class(t) for t in _kinds.tables().kinds})


# --------------------------------------------------------------------------
# Graph
# --------------------------------------------------------------------------

class Node(Value, eq=False):
    """A graph node.  ``input`` is the declared input contract; ``None`` when
    the key is absent (for a succeeded End the Plan output is used instead)."""

    id: str
    type: str
    config: NodeConfig
    input: Contract | None = None
    retry: Retry | None = None
    label: str | None = None
    description: str | None = None
    src: YMap | None = None

    @property
    def input_contract(self) -> Contract:
        return self.input if self.input is not None else {}


class Edge(Value, eq=False):
    """``bind`` is ``None`` when omitted (same-name pass-through applies)."""

    id: str
    from_node: str
    from_port: str
    to_node: str
    to_port: str = "in"
    bind: Mapping[str, ValueExpr | None] | None = None
    label: str | None = None
    src: YMap | None = None


class Plan(Value, eq=False):
    """A whole PlanVersion source (docs/reference.md#document).

    ``nodes``/``edges`` hold only well-formed entries, keyed by id in authored
    order; ``malformed_nodes``/``malformed_edges`` hold ids that were declared
    but rejected by the schema pass (later passes stay silent about them).
    """

    input: Contract
    output: Contract
    state: Contract
    entry: str
    nodes: Mapping[str, Node]
    edges: Mapping[str, Edge]
    malformed_nodes: frozenset[str] = frozenset()
    malformed_edges: frozenset[str] = frozenset()
    src: YMap | None = None
