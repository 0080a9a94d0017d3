"""The typed IR model: a ``loop.plan.artifact/vN`` as frozen attrs objects
(docs/api.md#the-typed-ir-model; field meanings in docs/ir.md).

:func:`loopc.ir.decode` returns an :class:`Artifact`; lowering
(:mod:`loopc.ir.lower`) builds the same classes; :func:`encode` is the one
encoder (RFC 8785 bytes written straight from the model by
:func:`encode_plan`, which also gives the semantic projection the digest
hashes), so ``decode(encode(m)) == m`` and ``encode(decode(b)) == b``;
:func:`to_json` (and ``plan_to_json``, ``node_to_json`` ...) is that
canonical text read back as the strict decoder reads it (:func:`view`), so
the JSON form and the bytes are one description, not two that must agree.

Classes (wire names in docs/ir.md in parentheses):

* :class:`Artifact` — ``version`` N, ``source_version``, ``digest``, ``plan``;
* :class:`Plan` — ``input``/``output``/``state`` contracts, ``entry``
  (:class:`Entry`), ``nodes`` / ``edges`` (sorted by id) / ``scopes``
  (sorted by owner), with :meth:`Plan.node`, :meth:`Plan.edge`,
  :meth:`Plan.scope_decl` lookups by id;
* :class:`FieldSchema` (a *Contract* is a ``dict[str, FieldSchema]`` in
  sorted key order) and :class:`TypeDesc` (type descriptors);
* :class:`Node` — ``id``, ``op``, ``input``, ``source_ports``
  (:class:`SourcePort`, with ``edge`` or an ``implicit``
  :class:`Disposition`), ``target_ports`` (:class:`TargetPort`), ``scope``
  (:class:`ScopeRef` stack, outermost first), ``effects``
  (:class:`NodeEffects`), ``config``, ``retry`` (:class:`Retry`), ``label``,
  ``description``;
* one config class per opcode: :class:`SendMessageConfig` (with
  :class:`WorkScope`, :class:`RelatedScopes`, :class:`WorkItems`),
  :class:`SetVariableConfig`, :class:`WaitConfig`,
  :class:`RequestApprovalConfig`, :class:`SwitchConfig` (:class:`SwitchCase`),
  :class:`ForkConfig`, :class:`JoinConfig`, :class:`FanOutConfig`,
  :class:`LoopConfig`, :class:`EndConfig` (``CONFIG_CLASSES`` maps op →
  class);
* :class:`Edge` — endpoints, ``bind`` (field → instruction), ``scope``,
  ``effects`` (:class:`EdgeEffects`), ``disposition``, ``label``;
* :class:`ScopeDecl`;
* instruction trees (:data:`Instr`): :class:`Lit`, :class:`Ref`,
  :class:`MakeArray`, :class:`MakeObject`, :class:`Template`,
  :class:`Binary` (``eq ne lt le gt ge in contains startsWith endsWith``),
  :class:`Nary` (``and or``), :class:`Unary` (``not length``); evaluate them
  with :func:`loopc.ir.evaluator.evaluate`.

Mappings (contracts, binds) and literal values are plain ``dict``/JSON
values: treat them as read-only.  Conversions are iterative (no recursion
over instruction trees or ``items`` chains).  :func:`from_json` expects data
that the strict decoder (:mod:`loopc.ir.decoder`) has validated; it is not a
validator.

The package's modules, one per seam (each imports only those before it, and
``plan`` reaches ``encoder`` only downward): :mod:`~loopc.ir.model.typedesc`,
:mod:`~loopc.ir.model.instrs`, :mod:`~loopc.ir.model.contracts`,
:mod:`~loopc.ir.model.scopes`, :mod:`~loopc.ir.model.configs`,
:mod:`~loopc.ir.model.nodes`, :mod:`~loopc.ir.model.encoder`,
:mod:`~loopc.ir.model.plan`.  Import the names from here
(``from loopc.ir.model import Node``); the module split is not part of the API.
"""
from __future__ import annotations

from loopc.ir.model.configs import (
    CONFIG_CLASSES, Config, EndConfig, FanOutConfig, ForkConfig, JoinConfig, LoopConfig, RelatedScopes,
    RequestApprovalConfig, SendMessageConfig, SetVariableConfig, SwitchCase, SwitchConfig, WaitConfig, WorkItems,
    WorkScope, config_from_json,
)
from loopc.ir.model.configs import config_wire_fields as config_wire_fields
from loopc.ir.model.contracts import NO_DEFAULT, Contract, FieldSchema, contract_from_json, field_from_json
from loopc.ir.model.encoder import (
    config_to_json, contract_to_json, edge_to_json, encode_plan, envelope_text, field_to_json, instr_to_json,
    node_to_json, plan_to_json, view,
)
from loopc.ir.model.instrs import (
    BINARY_OPS, NARY_OPS, UNARY_OPS, Binary, Instr, Lit, MakeArray, MakeObject, Nary, Ref, Template, Unary,
    instr_from_json, walk_instr,
)
from loopc.ir.model.instrs import INSTR_CLASSES as INSTR_CLASSES
from loopc.ir.model.instrs import InstrShapeError as InstrShapeError
from loopc.ir.model.nodes import Edge, Node, SourcePort, TargetPort, edge_from_json, node_from_json
from loopc.ir.model.plan import Artifact, Entry, Plan, encode, from_json, instr_roots, iter_instrs, plan_from_json, to_json
from loopc.ir.model.scopes import Disposition, EdgeEffects, NodeEffects, Retry, ScopeDecl, ScopeRef
from loopc.ir.model.typedesc import TypeDesc, type_desc_of
from loopc.ir.model.typedesc import parse_type_desc as parse_type_desc

__all__ = [
    "Artifact", "Plan", "Entry", "FieldSchema", "Contract", "TypeDesc", "NO_DEFAULT",
    "Node", "SourcePort", "TargetPort", "ScopeRef", "ScopeDecl", "Disposition", "Retry",
    "NodeEffects", "EdgeEffects", "Edge",
    "Config", "SendMessageConfig", "WorkScope", "RelatedScopes", "WorkItems", "SetVariableConfig",
    "WaitConfig", "RequestApprovalConfig", "SwitchConfig", "SwitchCase", "ForkConfig", "JoinConfig",
    "FanOutConfig", "LoopConfig", "EndConfig", "CONFIG_CLASSES",
    "Instr", "Lit", "Ref", "MakeArray", "MakeObject", "Template", "Binary", "Nary", "Unary",
    "BINARY_OPS", "NARY_OPS", "UNARY_OPS",
    "type_desc_of", "instr_from_json", "instr_to_json", "iter_instrs", "walk_instr",
    "field_from_json", "field_to_json", "contract_from_json", "contract_to_json",
    "config_from_json", "config_to_json", "node_from_json", "node_to_json", "edge_from_json",
    "edge_to_json", "plan_from_json", "plan_to_json", "from_json", "to_json", "encode", "instr_roots",
    "encode_plan", "envelope_text", "view",
    # pre-typed-model names (kept working)
    "FieldView", "PortView", "TargetPortView", "ScopeRefView", "RetryView", "NodeView", "EdgeView",
    "field_view", "contract_view", "node_view", "edge_view",
]


# Pre-typed-model names (kept so older callers keep working)
FieldView = FieldSchema
PortView = SourcePort
TargetPortView = TargetPort
ScopeRefView = ScopeRef
RetryView = Retry
NodeView = Node
EdgeView = Edge
field_view = field_from_json
contract_view = contract_from_json
node_view = node_from_json
edge_view = edge_from_json
