"""Node configs of the typed IR model: one frozen class per opcode
(docs/ir.md#node-configs), members derived from the kind's wire surface by
:func:`_wire_fields` (docs/architecture.md#add-one-field-to-one-node-kind),
``CONFIG_CLASSES`` (op -> class), and the per-opcode member tables the
decoder (:func:`config_from_json`) and the encoder
(:mod:`loopc.ir.model.encoder`, which also gives the JSON view) read
(:func:`config_wire_fields`).  Re-exported by :mod:`loopc.ir.model`."""
from __future__ import annotations

from typing import Any, Callable, ClassVar, Iterator, Mapping, TypeVar

import attrs

from loopc.ir.model.contracts import FieldSchema, _bind_from, contract_from_json
from loopc.ir.model.instrs import Instr, instr_from_json
from loopc.kinds import KINDS
from loopc.kinds import spec as S
from loopc.kinds.base import attr_name


def _esc(k: str) -> str:
    """``k`` as a JSON pointer segment (RFC 6901)."""
    return k.replace("~", "~0").replace("/", "~1")


def _w(wire: str, codec: str, *, required: bool = False, default: Any = None) -> Any:
    """A config field: ``wire`` member name, ``codec`` how it converts;
    optional fields default to ``None`` (absent) and are omitted then."""
    if required:
        return attrs.field(metadata={"wire": wire, "codec": codec, "required": True})
    return attrs.field(default=default, metadata={"wire": wire, "codec": codec, "required": False})


def _codec(spec: Any) -> str | None:
    """The codec of a wire field's spec, for the derivable ones."""
    if spec == S.INSTR:
        return "instr"
    if spec == S.BIND:
        return "bind"
    if spec == S.CONTRACT:
        return "contract"
    if isinstance(spec, S.Str):
        return "str"
    if isinstance(spec, S.Int):
        return "int"
    if isinstance(spec, S.Bool):
        return "flag"
    if isinstance(spec, S.Arr) and isinstance(spec.items, S.Str):
        return "strs"
    return None


_T = TypeVar("_T", bound=type)


def _wire_fields(op: str) -> Callable[[_T], _T]:
    """Derive opcode ``op``'s config class members from its kind's wire
    surface (:mod:`loopc.kinds`; docs/architecture.md#add-one-field-to-one-node-kind):
    every wire field the class body does not declare gets its member
    (:func:`loopc.kinds.base.attr_name` of the wire name), converted by the
    codec its spec implies (an instruction, a binding map, a contract, a
    string, an integer, a flag, a list of strings), ``None`` when absent.
    Declaring one in the body is optional (a static type, a bespoke codec).
    Applied under ``attrs.frozen``."""
    def derive(cls: _T) -> _T:
        ann = cls.__dict__.get("__annotations__")
        if ann is None:
            ann = {}
            cls.__annotations__ = ann
        for wire, f in KINDS[op].wire.fields.items():
            name = attr_name(wire)
            if name in ann:
                continue
            codec = _codec(f.spec)
            if codec is None:
                raise TypeError(f"declare {cls.__name__}.{name}: no codec derives from its wire spec")
            ann[name] = "Any"
            setattr(cls, name, _w(wire, codec, required=f.required))
        return cls

    return derive


@attrs.frozen
class WorkScope:
    """``sendMessage.workScope``: ``mode`` ``fixed`` (with ``scope``) or ``agent``."""

    mode: str
    scope: Instr | None = None


@attrs.frozen
class RelatedScopes:
    """``sendMessage.relatedScopes``: ``form`` ``list`` (``items``) or
    ``value`` (one array-valued ``value``)."""

    form: str
    items: tuple[Instr, ...] | None = None
    value: Instr | None = None


@attrs.frozen
class WorkItems:
    allowed_responders: Instr


@attrs.frozen
class SwitchCase:
    port: str
    when: Instr


class Config:
    """Base of the per-opcode config classes; ``OP`` is the opcode."""

    OP: ClassVar[str] = ""

    def instrs(self) -> Iterator[tuple[str, Instr]]:
        """``(pointer suffix under config, instruction)`` for every
        instruction tree this config holds, in wire order."""
        return _config_instrs(self)


@attrs.frozen(kw_only=True)
@_wire_fields("send_message")
class SendMessageConfig(Config):
    OP: ClassVar[str] = "send_message"
    completion: str = _w("completion", "str", required=True)
    text: Instr = _w("text", "instr", required=True)
    target: Instr | None = _w("target", "instr")
    scope: Instr | None = _w("scope", "instr")
    start_thread: bool = _w("startThread", "flag", default=False)
    callback_output: dict[str, FieldSchema] | None = _w("callbackOutput", "contract")
    responder: Instr | None = _w("responder", "instr")
    work_scope: WorkScope | None = _w("workScope", "work_scope")
    related_scopes: RelatedScopes | None = _w("relatedScopes", "related_scopes")
    work_items: WorkItems | None = _w("workItems", "work_items")


@attrs.frozen(kw_only=True)
@_wire_fields("set_variable")
class SetVariableConfig(Config):
    OP: ClassVar[str] = "set_variable"
    assign: dict[str, Instr] = _w("assign", "bind", required=True)


@attrs.frozen(kw_only=True)
@_wire_fields("wait")
class WaitConfig(Config):
    OP: ClassVar[str] = "wait"
    condition: Instr | None = _w("condition", "instr")
    duration: Instr | None = _w("duration", "instr")
    timeout: Instr | None = _w("timeout", "instr")


@attrs.frozen(kw_only=True)
@_wire_fields("request_approval")
class RequestApprovalConfig(Config):
    OP: ClassVar[str] = "request_approval"
    assignee: Instr = _w("assignee", "instr", required=True)
    summary: Instr = _w("summary", "instr", required=True)
    feedback_scope: Instr | None = _w("feedbackScope", "instr")


@attrs.frozen(kw_only=True)
@_wire_fields("switch")
class SwitchConfig(Config):
    OP: ClassVar[str] = "switch"
    mode: str = _w("mode", "str", required=True)
    cases: tuple[SwitchCase, ...] = _w("cases", "cases", required=True)
    default: str = _w("default", "str", required=True)


@attrs.frozen(kw_only=True)
@_wire_fields("fork")
class ForkConfig(Config):
    OP: ClassVar[str] = "fork"
    branches: tuple[str, ...] = _w("branches", "strs", required=True)


@attrs.frozen(kw_only=True)
@_wire_fields("join")
class JoinConfig(Config):
    OP: ClassVar[str] = "join"
    mode: str = _w("mode", "str", required=True)
    fork_id: str | None = _w("forkId", "str")
    fan_out_id: str | None = _w("fanOutId", "str")
    result: dict[str, FieldSchema] = _w("result", "contract", required=True)
    merge: dict[str, Instr] = _w("merge", "bind", required=True)

    @property
    def owner(self) -> str:
        """The fork / all_match switch / fan-out this join closes."""
        return self.fork_id if self.fork_id is not None else self.fan_out_id  # type: ignore[return-value]


@attrs.frozen(kw_only=True)
@_wire_fields("fan_out")
class FanOutConfig(Config):
    OP: ClassVar[str] = "fan_out"
    items: Instr = _w("items", "instr", required=True)
    max_concurrency: int = _w("maxConcurrency", "int", required=True)
    failure_mode: str = _w("failureMode", "str", required=True)


@attrs.frozen(kw_only=True)
@_wire_fields("loop")
class LoopConfig(Config):
    OP: ClassVar[str] = "loop"
    mode: str = _w("mode", "str", required=True)
    iterations: int = _w("iterations", "int", required=True)
    state: dict[str, FieldSchema] = _w("state", "contract", required=True)
    init: dict[str, Instr] = _w("init", "bind", required=True)


@attrs.frozen(kw_only=True)
@_wire_fields("end")
class EndConfig(Config):
    OP: ClassVar[str] = "end"
    status: str = _w("status", "str", required=True)
    code: str | None = _w("code", "str")
    detail: Instr | None = _w("detail", "instr")


CONFIG_CLASSES: dict[str, type] = {
    c.OP: c for c in (SendMessageConfig, SetVariableConfig, WaitConfig, RequestApprovalConfig, SwitchConfig,
                      ForkConfig, JoinConfig, FanOutConfig, LoopConfig, EndConfig)
}


def _generic_config(op: str) -> type:
    """The config class of a kind that declares none here (a kind whose
    wire fields all have a derivable codec, such as a toy kind in its one
    file under :mod:`loopc.kinds`; docs/architecture.md#add-a-node-kind):
    every member derived by :func:`_wire_fields`, as
    :func:`loopc.compiler.model._generic_class` does for the compiler model.
    ``TypeError`` naming the member when a wire field has no derivable codec
    (declare the class here then)."""
    name = "".join(p.title() for p in op.split("_")) + "Config"
    body = {"__annotations__": {}, "OP": op, "__module__": __name__,
            "__doc__": f"The config of a ``{op}`` node (every member derived from its kind)."}
    return attrs.frozen(kw_only=True)(_wire_fields(op)(type(name, (Config,), body)))


CONFIG_CLASSES.update({op: _generic_config(op) for op in KINDS if op not in CONFIG_CLASSES})


def _ws_from(d: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> WorkScope:
    return WorkScope(d["mode"], instr_from_json(d["scope"], memo) if "scope" in d else None)


def _rs_from(d: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> RelatedScopes:
    items = d.get("items")
    return RelatedScopes(d["form"], tuple(instr_from_json(x, memo) for x in items) if items is not None else None,
                         instr_from_json(d["value"], memo) if "value" in d else None)


#: codec -> its decoder (wire value, memo) -> model value; ``memo`` as in
#: :func:`contract_from_json`, one per decoding.  ``None`` keeps the wire
#: value as it is.  The encoder (:mod:`loopc.ir.model.encoder`) writes each
#: codec's canonical text, and the JSON view is read back from that text.
_CODECS: dict[str, Callable[[Any, Any], Any] | None] = {
    "str": None,
    "int": lambda x, m: int(x),
    "flag": lambda x, m: bool(x),
    "instr": instr_from_json,
    "bind": _bind_from,
    "contract": contract_from_json,
    "strs": lambda x, m: tuple(x),
    "cases": lambda lst, m: tuple(SwitchCase(c["port"], instr_from_json(c["when"], m)) for c in lst),
    "work_scope": _ws_from,
    "related_scopes": _rs_from,
    "work_items": lambda d, m: WorkItems(instr_from_json(d["allowedResponders"], m)),
}

# op -> [(attr name, wire name, codec, required)]
_CONFIG_FIELDS: dict[str, list[tuple[str, str, str, bool]]] = {
    op: [(a.name, a.metadata["wire"], a.metadata["codec"], a.metadata["required"]) for a in attrs.fields(cls)]
    for op, cls in CONFIG_CLASSES.items()
}


# op -> [(attr name, wire name, decoder)]
_CONFIG_DECODERS: dict[str, list[tuple[str, str, Callable[[Any, Any], Any] | None]]] = {
    op: [(name, wire, _CODECS[codec]) for name, wire, codec, _ in fields] for op, fields in _CONFIG_FIELDS.items()
}

# op -> _CONFIG_FIELDS[op] in wire-name (canonical member) order
_CONFIG_FIELDS_BY_WIRE: dict[str, list[tuple[str, str, str, bool]]] = {
    op: sorted(fields, key=lambda f: f[1]) for op, fields in _CONFIG_FIELDS.items()
}


def config_wire_fields(op: str) -> list[str]:
    """Wire member names of opcode ``op``'s config (drift-tested against
    :data:`loopc.ir.surface.CONFIGS`)."""
    return [w for _, w, _, _ in _CONFIG_FIELDS[op]]


def config_from_json(op: str, c: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> Config:
    """Config JSON of opcode ``op`` → its config class (``memo`` as in
    :func:`contract_from_json`)."""
    kw = {}
    for name, wire, dec in _CONFIG_DECODERS[op]:
        if wire in c:
            kw[name] = c[wire] if dec is None else dec(c[wire], memo)
    return CONFIG_CLASSES[op](**kw)


#: codecs of config members that hold instruction trees
_INSTR_CODECS = frozenset({"instr", "bind", "cases", "work_scope", "related_scopes", "work_items"})

# op -> [(attr name, wire name, codec)] of the members holding instruction trees
_CONFIG_INSTR_FIELDS: dict[str, list[tuple[str, str, str]]] = {
    op: [(name, wire, codec) for name, wire, codec, _ in fields if codec in _INSTR_CODECS]
    for op, fields in _CONFIG_FIELDS.items()
}


def _config_instrs(cfg: Any, pointers: bool = True) -> Iterator[tuple[Any, Instr]]:
    """``(pointer suffix, instruction)`` of every instruction tree of
    ``cfg`` in wire order; every suffix ``None`` when not ``pointers``."""
    p = pointers
    for name, wire, codec in _CONFIG_INSTR_FIELDS[cfg.OP]:
        v = getattr(cfg, name)
        if v is None:
            continue
        if codec == "instr":
            yield f"/{wire}" if p else None, v
        elif codec == "bind":
            for k, x in v.items():
                yield f"/{wire}/{_esc(k)}" if p else None, x
        elif codec == "cases":
            for i, case in enumerate(v):
                yield f"/{wire}/{i}/when" if p else None, case.when
        elif codec == "work_scope":
            if v.scope is not None:
                yield f"/{wire}/scope" if p else None, v.scope
        elif codec == "related_scopes":
            if v.items is not None:
                for i, x in enumerate(v.items):
                    yield f"/{wire}/items/{i}" if p else None, x
            if v.value is not None:
                yield f"/{wire}/value" if p else None, v.value
        elif codec == "work_items":
            yield f"/{wire}/allowedResponders" if p else None, v.allowed_responders
