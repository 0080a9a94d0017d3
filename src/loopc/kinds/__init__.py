"""The node-kind registry: what each ``loop.plan/v1`` node type is, declared
once (docs/architecture.md#add-a-node-kind; docs/node-kinds.md is
generated from it).

One module per kind (:mod:`loopc.kinds.send_message`, ...) holds a
:class:`~loopc.kinds.base.Kind`; this module collects them in canonical
order and derives, once and cached (:func:`tables`), the tables the layers
above read:

* the checker (:mod:`loopc.compiler.schema`): config keys, required keys,
  literal choices and bounds, retry capability;
* the port tables (:mod:`loopc.compiler.ports`, the decoder's expected ports);
* the source JSON Schema (:mod:`loopc.ir.source_schema`);
* the artifact surface of every version, its JSON Schemas and version selection
  (:mod:`loopc.ir.surface`, :mod:`loopc.ir.versions`).

Tests amend the registry only through :func:`amended`.  This package sits
at the bottom layer (it imports only :mod:`attrs`), so the
compiler, analyzer, IR, pipeline and back ends may all import it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
import types
from typing import Any, Iterator, Mapping

from loopc.value import Value
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
    "Tables",
    "tables",
    "amended",
    "discovered",
]

#: The kinds in canonical order (the order of docs and messages).
_CANONICAL = (
    send_message.KIND,
    set_variable.KIND,
    wait.KIND,
    request_approval.KIND,
    switch.KIND,
    fork.KIND,
    join.KIND,
    fan_out.KIND,
    loop.KIND,
)

#: Modules of this package that declare no kind.
_NOT_KINDS = frozenset(("base", "spec", "docs"))


def discovered(known: frozenset[str], folder: str | None = os.path.dirname(__file__)) -> list[str]:
    """The kind modules in ``folder`` (this package's directory) that are not
    among ``known``, sorted by name: every ``<name>.py`` except the package's
    own modules and names starting with ``_``.  A new kind is one new module
    (docs/architecture.md#add-a-node-kind); ``[]`` where the package has no
    directory to list."""
    if not folder:
        return []
    try:
        with os.scandir(folder) as it:
            names = [e.name[:-3] for e in it if e.name.endswith(".py") and not e.name.startswith("_")]
    except OSError:
        return []
    return sorted(n for n in names if n not in known and n not in _NOT_KINDS)


def _load(name: str) -> Kind:
    """The ``KIND`` of module ``loopc.kinds.<name>``; ``TypeError`` when it
    declares none or one of another name (the module is named after its kind)."""
    k = getattr(importlib.import_module(f"{__name__}.{name}"), "KIND", None)
    if not isinstance(k, Kind) or k.name != name:
        raise TypeError(f"loopc/kinds/{name}.py must declare KIND = Kind(name={name!r}, ...)")
    return k


#: Every node kind, in canonical order: the kinds above, then any other kind
#: module of this package (by name), then ``end``.  The registry itself:
#: everything derived from it is read through :func:`tables`.
KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        *_CANONICAL,
        *(_load(n) for n in discovered(frozenset(k.name for k in (*_CANONICAL, end.KIND)))),
        end.KIND,
    )
}


def _frozen(d: Mapping[Any, Any]) -> Mapping[Any, Any]:
    return types.MappingProxyType(dict(d))


class Tables(Value):
    """Every table derived from the registry, computed once by :func:`tables`
    (read-only mappings, frozensets and tuples; registry order wherever a
    table is ordered).

    ``kinds`` is the registry (node type → :class:`Kind`); ``by_config_key``
    maps ``sendMessage`` → its kind; ``node_config_keys`` node type → config
    key; ``retry_capable`` the types accepting ``retry``; ``node_ops`` opcode
    → the artifact version that introduced it; ``config_keys`` config key →
    its closed source key set and ``enums`` config key → key → its literal
    choices (editor completion); ``ports`` type → :class:`Ports`,
    ``fixed_ports`` the source ports of the kinds whose ports do not depend
    on the config, ``target_ports`` type → its target ports, ``all_targets``
    every target port name (first-seen order), ``fails`` the types with a
    ``failed`` port; ``back_ports`` every back port (edges into them return
    to their scope owner); ``scope_owners`` type → the scope it opens (only
    kinds that open one); ``external_ops`` the types whose nodes submit an
    external effect; ``control_ops`` the pure control-flow types (effect
    class ``none``); ``modes`` type → its separate action types;
    ``conditional_outputs`` type → ``{output field: source key}``;
    ``config_contracts`` opcode → its wire config field holding a contract
    (:attr:`Kind.contract_field`; the semantic digest projects it);
    ``closes`` source key → the scopes a node closes by naming their owner
    under it (:attr:`Kind.closes`: ``forkId`` → fork, all_match).
    """

    kinds: Mapping[str, Kind]
    by_config_key: Mapping[str, Kind]
    node_config_keys: Mapping[str, str]
    retry_capable: frozenset[str]
    node_ops: Mapping[str, int]
    config_keys: Mapping[str, frozenset[str]]
    enums: Mapping[str, Mapping[str, tuple[str, ...]]]
    ports: Mapping[str, Ports]
    fixed_ports: Mapping[str, tuple[str, ...]]
    target_ports: Mapping[str, tuple[str, ...]]
    all_targets: tuple[str, ...]
    fails: frozenset[str]
    back_ports: frozenset[str]
    scope_owners: Mapping[str, str]
    external_ops: tuple[str, ...]
    control_ops: tuple[str, ...]
    modes: Mapping[str, tuple[str, ...]]
    conditional_outputs: Mapping[str, Mapping[str, str]]
    config_contracts: Mapping[str, str]
    closes: Mapping[str, tuple[str, ...]]


@functools.cache
def tables() -> Tables:
    """The derived tables of the registry as it stands (cached; cleared by
    :func:`amended`).  Layers above read ``kinds.tables().<table>`` where they
    use it, or bind it once when imported (docs/architecture.md#add-a-node-kind)."""
    ks = list(KINDS.values())
    ports = {k.name: k.ports for k in ks}
    return Tables(
        kinds=_frozen(KINDS),
        by_config_key=_frozen({k.config_key: k for k in ks}),
        node_config_keys=_frozen({k.name: k.config_key for k in ks}),
        retry_capable=frozenset(k.name for k in ks if k.retry),
        node_ops=_frozen({k.name: k.since for k in ks}),
        config_keys=_frozen({k.config_key: k.source_keys for k in ks}),
        enums=_frozen({k.config_key: _frozen({n: f.choices for n, f in k.source.items() if f.choices}) for k in ks}),
        ports=_frozen(ports),
        fixed_ports=_frozen({t: p.fixed for t, p in ports.items() if p.authored is None and not p.conditional}),
        target_ports=_frozen({t: p.targets for t, p in ports.items()}),
        all_targets=tuple(dict.fromkeys(p for k in ks for p in k.ports.targets)),
        fails=frozenset(t for t, p in ports.items() if "failed" in p.fixed),
        back_ports=frozenset(p for k in ks for p in k.back_ports),
        scope_owners=_frozen({k.name: k.scope for k in ks if k.scope != "none"}),
        external_ops=tuple(k.name for k in ks if k.external),
        control_ops=tuple(k.name for k in ks if k.effect_class == "none"),
        modes=_frozen({k.name: k.modes for k in ks if k.modes}),
        conditional_outputs=_frozen({k.name: _frozen(k.conditional_outputs) for k in ks if k.conditional_outputs}),
        config_contracts=_frozen({k.name: c for k in ks if (c := k.contract_field) is not None}),
        closes=_frozen({key: scopes for k in ks for key, scopes in k.closes.items()}),
    )


#: Module attributes read off :func:`tables` (``kinds.NODE_OPS`` and friends).
_TABLE_ATTRS = {
    "BY_CONFIG_KEY": "by_config_key",
    "NODE_CONFIG_KEYS": "node_config_keys",
    "RETRY_CAPABLE": "retry_capable",
    "NODE_OPS": "node_ops",
}


def __getattr__(name: str) -> Any:
    attr = _TABLE_ATTRS.get(name)
    if attr is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(tables(), attr)


@contextlib.contextmanager
def amended(*new: Kind) -> Iterator[Tables]:
    """Within the block, the registry holds ``new`` kinds in place of the
    kinds of the same names (as if their modules under ``src/loopc/kinds/``
    declared them), and :func:`tables` derives from it; on exit the registry
    and the tables are restored.  Yields the amended tables.  ``KeyError``
    for a name the registry does not hold.

    For tests and experiments: modules reading ``tables()`` at use see the
    amendment at once; modules that build classes or compiled validators
    when imported (the typed models, the artifact surface and versions) see
    it only when imported inside the block — ``tests/test_add_field.py``
    imports loopc afresh there (docs/architecture.md#add-one-field-to-one-node-kind)."""
    for k in new:
        if k.name not in KINDS:
            raise KeyError(k.name)
    saved = dict(KINDS)
    modules = {k.name: sys.modules.get(f"{__name__}.{k.name}") for k in new}
    try:
        for k in new:
            KINDS[k.name] = k
            module = modules[k.name]
            if module is not None:
                module.KIND = k  # type: ignore[attr-defined]
        tables.cache_clear()
        yield tables()
    finally:
        KINDS.clear()
        KINDS.update(saved)
        for name, module in modules.items():
            if module is not None:
                module.KIND = saved[name]  # type: ignore[attr-defined]
        tables.cache_clear()


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
