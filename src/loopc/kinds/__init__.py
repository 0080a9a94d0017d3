"""The node-kind registry: what each ``loop.plan/v1`` node type is, declared
once (docs/architecture.md#add-a-node-kind; docs/node-kinds.md is
generated from it).

One module per kind (:mod:`loopc.kinds.send_message`, ...) holds a
:class:`~loopc.kinds.base.Kind`; this module collects them in canonical
order and derives the tables the layers above read:

* the checker (:mod:`loopc.compiler.schema`): config keys, required keys,
  literal choices and bounds, retry capability;
* the port tables (:mod:`loopc.compiler.ports`, the decoder's expected ports);
* the source JSON Schema (:mod:`loopc.ir.source_schema`);
* the artifact surface v1–v5, its JSON Schemas and version selection
  (:mod:`loopc.ir.surface`, :mod:`loopc.ir.versions`).

This package sits at the bottom layer (it imports only :mod:`attrs`), so the
compiler, analyzer, IR, pipeline and back ends may all import it.
"""

from __future__ import annotations

import sys
from typing import Any, Iterator, Mapping

from loopc.kinds import (
    end,
    fan_out,
    fork,
    join,
    loop,
    request_approval,
    send_message,
    set_variable,
    switch,
    wait,
)
from loopc.kinds.base import (
    MAX_ATTEMPTS,
    MAX_CONCURRENCY,
    MAX_ITERATIONS,
    MAX_RELATED_SCOPES,
    OPTIONAL_PORTS,
    Kind,
    Ports,
    SourceField,
)
from loopc.kinds.spec import INSTR, Arr, MapOf, Obj, Spec, Tagged

__all__ = [
    "KINDS",
    "BY_CONFIG_KEY",
    "NODE_CONFIG_KEYS",
    "RETRY_CAPABLE",
    "NODE_OPS",
    "Kind",
    "Ports",
    "SourceField",
    "MAX_ATTEMPTS",
    "MAX_CONCURRENCY",
    "MAX_ITERATIONS",
    "MAX_RELATED_SCOPES",
    "OPTIONAL_PORTS",
    "kind",
    "wire_source_ports",
    "config_instrs",
    "config_instr_values",
    "field_versions",
    "amend",
]

#: Every node kind, in canonical order (the order of docs and messages).
KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        send_message.KIND,
        set_variable.KIND,
        wait.KIND,
        request_approval.KIND,
        switch.KIND,
        fork.KIND,
        join.KIND,
        fan_out.KIND,
        loop.KIND,
        end.KIND,
    )
}
#: ``sendMessage`` → the send_message kind.
BY_CONFIG_KEY: dict[str, Kind] = {k.config_key: k for k in KINDS.values()}
#: Node type → its source config key.
NODE_CONFIG_KEYS: dict[str, str] = {k.name: k.config_key for k in KINDS.values()}
#: Node types that accept ``retry``.
RETRY_CAPABLE: frozenset[str] = frozenset(k.name for k in KINDS.values() if k.retry)
#: Opcode → the artifact version that introduced it.
NODE_OPS: dict[str, int] = {k.name: k.since for k in KINDS.values()}


#: Modules that derive tables from the registry when imported (everything
#: else that reads it sits above one of them or reads it at call time).
_DERIVING = (
    "loopc.compiler.model",
    "loopc.compiler.schema",
    "loopc.compiler.ports",
    "loopc.ir.versions",
    "loopc.ir.surface",
    "loopc.ir.source_schema",
    "loopc.lsp.completion",
    "loopc.plan.builtin",
)


def amend(new: Kind) -> Kind:
    """Replace the registry's kind named ``new.name`` with ``new`` (as if its
    module under ``src/loopc/kinds/`` declared it) and return the kind it
    replaces.  For tests and experiments: the layers above derive their
    tables (model attributes, key sets, artifact surface, versions) from the
    registry when first imported, so amend first — ``RuntimeError`` when a
    deriving module is imported already (docs/architecture.md#add-one-field-to-one-node-kind;
    ``tests/test_add_field.py`` imports loopc afresh around it)."""
    global RETRY_CAPABLE
    loaded = [m for m in _DERIVING if m in sys.modules]
    if loaded:
        raise RuntimeError(f"amend the registry before importing {', '.join(loaded)}")
    if new.name not in KINDS:
        raise KeyError(new.name)
    old = KINDS[new.name]
    KINDS[new.name] = new
    BY_CONFIG_KEY.clear()
    BY_CONFIG_KEY.update({k.config_key: k for k in KINDS.values()})
    NODE_CONFIG_KEYS.clear()
    NODE_CONFIG_KEYS.update({k.name: k.config_key for k in KINDS.values()})
    RETRY_CAPABLE = frozenset(k.name for k in KINDS.values() if k.retry)
    NODE_OPS.clear()
    NODE_OPS.update({k.name: k.since for k in KINDS.values()})
    module = sys.modules.get(f"{__name__}.{new.name}")
    if module is not None and getattr(module, "KIND", None) is old:
        module.KIND = new  # type: ignore[attr-defined]
    return old


def kind(name: str) -> Kind | None:
    """The kind of node type ``name``, or ``None``."""
    return KINDS.get(name)


def wire_source_ports(op: str, config: Mapping[str, Any]) -> list[str]:
    """Source port names implied by an artifact node's opcode and config
    (``[]`` for an unknown opcode)."""
    k = KINDS.get(op)
    return k.ports.of_wire(config) if k is not None else []


def field_versions(op: str) -> dict[str, int]:
    """``{config field: artifact version that introduced it}`` of ``op``."""
    return {name: f.since for name, f in KINDS[op].wire.fields.items()}


def _esc(k: str) -> str:
    return k.replace("~", "~0").replace("/", "~1")


def _instrs(spec: Spec, v: Any, p: str | None) -> Iterator[tuple[str | None, Any]]:
    """Instruction trees inside wire value ``v`` of ``spec``, in field order
    (iterative; ``p`` ``None``: no pointers are built, every one is ``None``)."""
    stack: list[tuple[Any, Any, str | None]] = [(spec, v, p)]
    pop = stack.pop
    push = stack.append
    while stack:
        sp, v, p = pop()
        if sp is INSTR or sp == INSTR:
            yield p, v
            continue
        cls = sp.__class__
        if not isinstance(v, dict) and cls is not Arr:
            continue
        if cls is Obj:
            todo = [
                (f.spec, v[name], None if p is None else f"{p}/{_esc(name)}")
                for name, f in sp.fields.items()
                if name in v
            ]
        elif cls is Tagged:
            alt = sp.variants.get(v.get(sp.tag))
            if alt is not None:
                push((alt[0], v, p))
            continue
        elif cls is MapOf:
            vs = sp.values
            todo = [(vs, x, None if p is None else f"{p}/{_esc(k)}") for k, x in v.items()]
        elif cls is Arr:
            if not isinstance(v, list):
                continue
            its = sp.items
            todo = [(its, x, None if p is None else f"{p}/{i}") for i, x in enumerate(v)]
        else:
            continue
        todo.reverse()
        stack.extend(todo)


def config_instrs(op: str, config: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """``(pointer suffix, instruction)`` for every instruction tree held by a
    wire config of opcode ``op``, read off the kind's wire surface (docs/ir.md
    lists these positions)."""
    k = KINDS.get(op)
    if k is not None:
        yield from _instrs(k.wire, config, "")  # type: ignore[misc]


def config_instr_values(op: str, config: Mapping[str, Any]) -> Iterator[Any]:
    """The instruction trees of :func:`config_instrs` without their pointers
    (for scans that need no location)."""
    k = KINDS.get(op)
    if k is not None:
        for _, x in _instrs(k.wire, config, None):
            yield x
