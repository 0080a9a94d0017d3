"""Vocabulary of the node-kind registry (docs/architecture.md#add-a-node-kind).

A :class:`Kind` is one node type of ``loop.plan/v1`` described once, as data:

* ``source`` — the closed keys of its config mapping (``sendMessage: {...}``),
  each a :class:`SourceField` with the JSON Schema fragment editors see, whether
  the key is required, the literal bounds it carries and what it holds
  (a template, an expression, a ValueExpr, a contract, ...);
* ``wire`` — the closed artifact config object (:mod:`loopc.kinds.spec`), every
  field tagged with the artifact version that introduced it;
* ``ports`` — its source ports (:class:`Ports`) and target ports;
* ``retry`` — whether the node accepts a ``retry`` policy;
* ``effects`` — what running it does outside the token game (prose);
* the facets the passes read instead of spelling kinds out: ``effect_class``
  (:data:`EFFECT_CLASSES`), ``scope`` (:data:`SCOPES`, the scope it opens),
  ``back_ports`` (target ports that return to it from inside its scope),
  ``modes`` (its separate action types, chosen by ``mode_of``) and ``conditional_outputs`` (output
  fields present only when a config key is set).

The checker's key sets, the source and artifact JSON Schemas, version
selection and port tables are computed from these records; nothing else
spells a node kind out.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Mapping

from loopc.value import Value, field
from loopc.kinds.spec import CONTRACT, Obj

__all__ = [
    "Kind",
    "SourceField",
    "Ports",
    "MAX_ATTEMPTS",
    "MAX_CONCURRENCY",
    "MAX_ITERATIONS",
    "MAX_RELATED_SCOPES",
    "OPTIONAL_PORTS",
    "EFFECT_CLASSES",
    "EXTERNAL_EFFECTS",
    "SCOPES",
    "CARRIES",
    "SCOPE_OWNERS",
    "an_owner",
    "IDENT",
    "DURATION",
    "GENERIC_FORMS",
    "attr_name",
]

# Bounds of literal-only integers (docs/language.md; declared once, read by the
# checker, the source schema and the artifact surface).
#: ``retry.maxAttempts`` is 1..MAX_ATTEMPTS.
MAX_ATTEMPTS = 100
#: ``fanOut.maxConcurrency`` is 1..MAX_CONCURRENCY.
MAX_CONCURRENCY = 64
#: ``loop.iterations`` is 1..MAX_ITERATIONS.
MAX_ITERATIONS = 10_000
#: At most this many ``sendMessage.relatedScopes``.
MAX_RELATED_SCOPES = 64

#: Ports that may be left unrouted (their omission is lowered as a failure route).
OPTIONAL_PORTS = frozenset(("failed", "timed_out"))
#: what every ``failed`` port carries under ``output.*`` (:attr:`Ports.outputs`)
FAILED_OUTPUT = "`{code: string, detail: string}`"

#: What running a node of a kind does outside the token game, as a class
#: (docs/node-kinds.md): ``none`` — pure control flow; ``state`` — writes Run
#: state; ``timer`` — waits on Run state or a clock; ``message`` — posts a
#: message (external); ``approval`` — opens an approval task (external).
EFFECT_CLASSES = ("none", "state", "timer", "message", "approval")
#: Effect classes that submit an external effect (plan EffectSubmit steps).
EXTERNAL_EFFECTS = frozenset(("message", "approval"))
#: The scope a node of a kind opens: ``none``, ``fork`` (its branches),
#: ``all_match`` (a switch in all_match mode), ``fan_out`` (its item bodies),
#: ``loop`` (its body).
SCOPES = ("none", "fork", "all_match", "fan_out", "loop")
#: How messages name the owner of each scope (``a fork``, ``an all_match switch``).
SCOPE_OWNERS = {"fork": "fork", "all_match": "all_match switch", "fan_out": "fan_out", "loop": "loop"}


def an_owner(scope: str) -> str:
    """The owner of ``scope`` with its article: ``a fork``, ``an all_match switch``."""
    noun = SCOPE_OWNERS[scope]
    return ("an " if noun[0] in "aeiou" else "a ") + noun


#: What a source port carries under ``output.*`` (:attr:`Ports.carries`):
#: ``empty`` — an empty object; ``input`` — the node's input, unchanged;
#: ``contract`` — the kind's contract field (:attr:`Kind.contract_field`:
#: a join's ``result``, a loop's ``state``); ``own`` — what the kind's own
#: function in the port table computes (``loopc.compiler.ports``).  A port
#: not listed carries nothing under ``output.*`` (``fan_out.item``, ``loop.body``).
CARRIES = ("empty", "input", "contract", "own")
#: A kind's run-time behaviour when a generic interpreter handler fits
#: (:attr:`Kind.behaviour`): ``pass`` — complete at once on its single fixed
#: source port with an empty output (pure control flow, docs/architecture.md#add-a-node-kind).
BEHAVIOURS = ("pass",)

#: Author-declared identifiers (ids, ports, field names).
IDENT = r"^[a-z][a-z0-9_]{0,63}$"
#: ISO 8601 durations as loopc accepts them (``PT30S``, ``P1DT2H``).
DURATION = r"^P(?:[0-9]+D)?(?:T(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+(?:\.[0-9]+)?S)?)?$"

#: What a source key holds (docs/reference.md#values).
FORMS = frozenset(
    (
        "template",  # a template string: text with {{ expression }} interpolations
        "expression",  # a bare expression string
        "value",  # a ValueExpr
        "values",  # a mapping of names to ValueExprs
        "contract",  # a mapping of field names to FieldSchemas
        "literal",  # a literal-only value, fixed at compile time
        "structure",  # a nested closed mapping or list with its own rules
    )
)


#: Forms the generic, registry-driven passes read, type, lower and count
#: (with ``literal`` when the field has ``choices`` or ``bounds``).
GENERIC_FORMS = frozenset(("template", "expression", "value"))


@functools.cache
def attr_name(key: str) -> str:
    """Model and IR attribute name of a source/wire key (``feedbackScope`` →
    ``feedback_scope``; cached: the passes ask per node)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


class SourceField(Value):
    """One key of a node kind's source config mapping.

    ``schema`` is its JSON Schema (draft-07) fragment for editors; ``required``
    says whether the key must be present; ``form`` is one of :data:`FORMS`;
    ``bounds`` is the inclusive ``(lo, hi)`` range of a literal integer;
    ``choices`` the allowed values of a literal string, in the order messages
    list them.

    A field is *generic* (:attr:`generic`) unless ``custom``: a template,
    expression or value, or a literal with ``choices`` or ``bounds``.  A
    generic field needs no per-pass code
    (docs/architecture.md#add-one-field-to-one-node-kind): its model
    attribute (:func:`attr_name` of the key) is derived on the kind's model
    class, the schema pass reads it by form, the type pass types it by form
    against ``type`` (a type name of docs/reference.md#types,
    ``"array<agent>"`` for arrays; ``render``: a template that renders text;
    ``context``: ``"config"`` — the node's configuration context — or
    ``"condition"``, a wait condition's), lowering writes it under the same
    wire name (``default`` when the key is omitted and the wire field is
    required) and the budget counts it.  ``what`` is how messages name it
    (default ```key```), ``hint`` is appended to "missing required key".
    ``custom`` fields have cross-field semantics and are handled by the
    kind's own code in each pass.
    """

    schema: Mapping[str, Any]
    required: bool = False
    form: str = "literal"
    bounds: tuple[int, int] | None = None
    choices: tuple[str, ...] | None = None
    custom: bool = False
    type: str | None = None
    render: bool = False
    context: str = "config"
    what: str | None = None
    hint: str = ""
    default: Any = None

    def __post_init__(self) -> None:
        if self.form not in FORMS:
            raise ValueError(f"unknown source form {self.form!r}")
        if self.context not in ("config", "condition"):
            raise ValueError(f"unknown context {self.context!r}")
        if self.generic and self.form in GENERIC_FORMS and self.type is None:
            raise ValueError(f"a generic {self.form} field declares its type")

    @property
    def generic(self) -> bool:
        """Read, typed, lowered and counted by the generic passes."""
        if self.custom:
            return False
        return self.form in GENERIC_FORMS or (self.form == "literal" and (self.choices or self.bounds) is not None)


class Ports(Value):
    """Source and target ports of a node kind, in canonical order.

    ``fixed`` are always present except those in ``conditional``, which
    appear only when the named config field is set (``wait.timed_out`` needs
    ``timeout``).  ``authored`` names the model attribute holding ports the
    author declares (``ports`` of a switch, ``branches`` of a fork) and
    ``authored_wire`` reads the same from a wire config; then ``fixed`` is
    empty.  ``outputs`` documents what each port carries under ``output.*``
    and ``carries`` declares it (port → one of :data:`CARRIES`; ``"*"`` for
    every authored port; the ``failed`` port always carries ``{code, detail}``).
    """

    fixed: tuple[str, ...] = ()
    conditional: Mapping[str, str] = field(factory=dict)
    authored: str | None = None
    authored_wire: Callable[[Mapping[str, Any]], list[str]] | None = None
    targets: tuple[str, ...] = ("in",)
    outputs: Mapping[str, str] = field(factory=dict)
    carries: Mapping[str, str] = field(factory=dict)

    def of_model(self, config: Any) -> tuple[str, ...]:
        """Source ports of a typed source config (:mod:`loopc.compiler.model`)."""
        if self.authored is not None:
            return tuple(getattr(config, self.authored))
        if not self.conditional:
            return self.fixed
        cond = self.conditional
        return tuple(p for p in self.fixed if p not in cond or getattr(config, cond[p]) is not None)

    def of_wire(self, config: Mapping[str, Any]) -> list[str]:
        """Source ports implied by a wire (artifact) config mapping."""
        if self.authored_wire is not None:
            return list(self.authored_wire(config))
        cond = self.conditional
        return [p for p in self.fixed if p not in cond or cond[p] in config]


class Kind(Value):
    """One node kind (see the module docstring)."""

    #: ``type`` value in source and ``op`` in the artifact (``send_message``).
    name: str
    #: the config key in source (``sendMessage``).
    config_key: str
    #: artifact version that introduced the opcode.
    since: int
    #: one-line description (docs/node-kinds.md).
    summary: str
    source: Mapping[str, SourceField]
    wire: Obj
    ports: Ports
    retry: bool = False
    #: what running the node does outside the token game (docs only).
    effects: str = "none"
    #: extra JSON Schema keywords of the source config (cross-field rules).
    source_rules: Mapping[str, Any] = field(factory=dict)
    #: what running it does, as one of :data:`EFFECT_CLASSES`.
    effect_class: str = "none"
    #: the scope it opens, one of :data:`SCOPES`.
    scope: str = "none"
    #: ``(source key, value)``: it opens :attr:`scope` only when the key holds
    #: the value (a switch opens ``all_match`` in ``mode: all_match``).
    scope_when: tuple[str, str] | None = None
    #: source ports whose edges enter its scope (a fan_out's ``item``, a
    #: loop's ``body``); empty for a kind whose authored ports each open a
    #: branch of its scope (a fork's branches, an all_match switch's ports).
    body_ports: tuple[str, ...] = ()
    #: target ports through which its scope's body returns to it (a loop's
    #: ``continue``/``break``); edges into them are back edges.
    back_ports: tuple[str, ...] = ()
    #: its separate action types (``<kind>.<mode>``; docs/plan.md#built-in-catalog).
    modes: tuple[str, ...] = ()
    #: ``{output field: source key}``: the field is in the node's output only
    #: when the key is set (``comment`` iff ``feedbackScope``).
    conditional_outputs: Mapping[str, str] = field(factory=dict)
    #: with :attr:`modes`: which mode a node is in, from a getter of its
    #: config's wire fields by name (``get("completion")``; ``None`` when absent).
    mode_of: Callable[[Callable[[str], Any]], str] | None = None
    #: ``{source key: scopes}``: a node of this kind closes the scope of the
    #: owner it names under the key, which must open one of ``scopes`` (a
    #: join's ``forkId`` names a fork or an all_match switch, ``fanOutId`` a fan_out).
    closes: Mapping[str, tuple[str, ...]] = field(factory=dict)
    #: one of :data:`BEHAVIOURS` when a generic interpreter handler runs a
    #: node of this kind; ``None`` when its engine layer defines ``_op_<kind>``.
    behaviour: str | None = None

    def __post_init__(self) -> None:
        if self.behaviour is not None:
            if self.behaviour not in BEHAVIOURS:
                raise ValueError(f"{self.name}: unknown behaviour {self.behaviour!r}")
            ports = self.ports
            if (
                len(ports.fixed) != 1
                or ports.authored is not None
                or ports.conditional
                or self.scope != "none"
                or self.effect_class != "none"
                or ports.carries.get(ports.fixed[0], "empty") != "empty"
            ):
                raise ValueError(
                    f"{self.name}: behaviour 'pass' needs one fixed source port carrying nothing, "
                    "no scope and no effects"
                )
        if self.effect_class not in EFFECT_CLASSES:
            raise ValueError(f"{self.name}: unknown effect class {self.effect_class!r}")
        if self.scope not in SCOPES:
            raise ValueError(f"{self.name}: unknown scope {self.scope!r}")
        if self.scope_when is not None and self.scope_when[0] not in self.source:
            raise ValueError(f"{self.name}: scope_when on unknown key {self.scope_when[0]!r}")
        if self.scope != "none" and not self.body_ports and self.ports.authored is None:
            raise ValueError(f"{self.name}: opens a scope but names no body port and has no authored ports")
        for port in self.body_ports:
            if port not in self.ports.fixed:
                raise ValueError(f"{self.name}: body port {port!r} is not a source port")
        for port in self.back_ports:
            if port not in self.ports.targets:
                raise ValueError(f"{self.name}: back port {port!r} is not a target port")
        if len([n for n, f in self.wire.fields.items() if f.spec == CONTRACT]) > 1:
            raise ValueError(f"{self.name}: more than one contract field (the semantic digest projects one)")
        for key, scopes in self.closes.items():
            if key not in self.source or not scopes or not set(scopes) <= set(SCOPES[1:]):
                raise ValueError(f"{self.name}: closes {key!r}: {scopes!r}")
        ports = self.ports
        for port, what in ports.carries.items():
            if what not in CARRIES or port not in ((("*",) if ports.authored else ()) + ports.fixed):
                raise ValueError(f"{self.name}: port {port!r} carries {what!r}")
            if what == "contract" and self.contract_field is None:
                raise ValueError(f"{self.name}: port {port!r} carries its contract, but it declares none")
        if bool(self.modes) != (self.mode_of is not None):
            raise ValueError(f"{self.name}: modes and mode_of go together")
        for key in self.conditional_outputs.values():
            if key not in self.source:
                raise ValueError(f"{self.name}: conditional output on unknown key {key!r}")

    @property
    def contract_field(self) -> str | None:
        """The wire config field holding a contract of FieldSchemas
        (``callbackOutput``, ``result``, ``state``), or ``None``."""
        return next((n for n, f in self.wire.fields.items() if f.spec == CONTRACT), None)

    def opened_scope(self, config: Any) -> str | None:
        """The scope a node of this kind with typed ``config`` (a source
        model or IR config object; attributes named by :func:`attr_name`)
        opens, or ``None``."""
        if self.scope == "none":
            return None
        when = self.scope_when
        if when is not None and getattr(config, attr_name(when[0]), None) != when[1]:
            return None
        return self.scope

    def mode(self, config: Any) -> str | None:
        """The mode (one of :attr:`modes`) of a node of this kind with
        ``config`` — a typed config (attributes named by :func:`attr_name`)
        or a wire mapping — or ``None`` for a kind without modes."""
        if self.mode_of is None:
            return None
        if isinstance(config, Mapping):
            return self.mode_of(config.get)
        return self.mode_of(lambda key: getattr(config, attr_name(key), None))

    @property
    def external(self) -> bool:
        """Running it submits an external effect (:data:`EXTERNAL_EFFECTS`)."""
        return self.effect_class in EXTERNAL_EFFECTS

    @property
    def generic_fields(self) -> tuple[tuple[str, str, SourceField], ...]:
        """``(key, attribute name, field)`` of every generic source field
        (:attr:`SourceField.generic`), in declaration order."""
        got = _GENERIC.get(id(self))
        if got is None or got[0] is not self:
            got = _GENERIC[id(self)] = (self, tuple((k, attr_name(k), f) for k, f in self.source.items() if f.generic))
        return got[1]

    @property
    def custom_keys(self) -> tuple[str, ...]:
        """Source keys of its custom fields (not :attr:`SourceField.generic`),
        in declaration order.  A kind with any has an entry in each per-pass
        table of its own fields: the schema pass's reader method, lowering's
        ``_CUSTOM`` (docs/architecture.md#add-a-node-kind)."""
        return tuple(k for k, f in self.source.items() if not f.generic)

    @property
    def custom_value_keys(self) -> tuple[str, ...]:
        """The :attr:`custom_keys` that hold more than a literal (a template,
        expression, value, contract or structure): a kind with any has an
        entry in the type pass's ``_BY_TYPE`` and the budget's ``_CUSTOM``."""
        return tuple(k for k in self.custom_keys if self.source[k].form != "literal")

    @property
    def source_keys(self) -> frozenset[str]:
        """The closed key set of the source config mapping."""
        return frozenset(self.source)

    @property
    def required_source_keys(self) -> tuple[str, ...]:
        return tuple(k for k, f in self.source.items() if f.required)

    def keys_of_form(self, form: str) -> tuple[str, ...]:
        """Source keys holding ``form`` (``"template"`` → ``("text", ...)``)."""
        return tuple(k for k, f in self.source.items() if f.form == form)

    def choices(self, key: str) -> tuple[str, ...]:
        c = self.source[key].choices
        if c is None:
            raise KeyError(f"{self.name}.{key} has no choices")
        return c

    def bounds(self, key: str) -> tuple[int, int]:
        b = self.source[key].bounds
        if b is None:
            raise KeyError(f"{self.name}.{key} has no bounds")
        return b

    def source_schema(self) -> dict[str, Any]:
        """The JSON Schema (draft-07) of the source config mapping."""
        out: dict[str, Any] = {
            "type": "object",
            "properties": {k: dict(f.schema) for k, f in self.source.items()},
            "additionalProperties": False,
        }
        req = list(self.required_source_keys)
        if req:
            out["required"] = req
        out.update(self.source_rules)
        return out


#: id(kind) -> (kind, its generic fields); the kind is kept so the id stays its own
_GENERIC: dict[int, tuple[Kind, tuple[tuple[str, str, SourceField], ...]]] = {}


# ---------------------------------------------------------------------------
# Source JSON Schema atoms (draft-07 fragments shared by the kind modules)
# ---------------------------------------------------------------------------


def ref(name: str) -> dict[str, str]:
    """``{"$ref": "#/definitions/<name>"}`` of the source schema."""
    return {"$ref": f"#/definitions/{name}"}


def described(schema: Mapping[str, Any], desc: str) -> dict[str, Any]:
    """``schema`` with a ``description``."""
    return {**schema, "description": desc}


def closed(props: dict[str, Any], required: list[str] | None = None, desc: str | None = None) -> dict[str, Any]:
    """A closed object schema."""
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    if desc:
        out["description"] = desc
    return out


S_IDENT: dict[str, Any] = {"type": "string", "pattern": IDENT}
S_TEMPLATE = described({"type": "string"}, "A template: text with `{{ expression }}` interpolations.")
S_EXPRESSION = described({"type": "string"}, "A bounded expression (no `{{ }}`), e.g. `input.severity == 'high'`.")
S_VALUE = ref("ValueExpr")
S_CONTRACT = ref("Contract")
S_VALUES: dict[str, Any] = {"type": "object", "additionalProperties": S_VALUE}
S_IDENT_VALUES: dict[str, Any] = {
    "type": "object",
    "propertyNames": {"pattern": IDENT},
    "additionalProperties": S_VALUE,
}


def s_int(lo: int, hi: int) -> dict[str, Any]:
    """An integer in ``lo..hi``."""
    return {"type": "integer", "minimum": lo, "maximum": hi}


def s_choice(*values: str) -> dict[str, Any]:
    """One of ``values`` (``const`` when there is one)."""
    return {"const": values[0]} if len(values) == 1 else {"enum": list(values)}
