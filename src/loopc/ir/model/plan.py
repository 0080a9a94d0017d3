"""The plan and the artifact of the typed IR model (docs/ir.md#plan,
docs/ir.md#envelope-and-versions):
:class:`Entry`, :class:`Plan`, :class:`Artifact`, the instruction-root
iterators, the decoding direction (:func:`from_json`), the one encoder
:func:`encode` (canonical bytes by :mod:`loopc.ir.model.encoder`) and the
JSON view :func:`to_json` (those bytes read back).
Re-exported by :mod:`loopc.ir.model`."""
from __future__ import annotations

import functools
from typing import Any, Iterator, Mapping

import attrs

from loopc.ir.model.configs import _config_instrs, _esc
from loopc.ir.model.contracts import FieldSchema, _bind_from, contract_from_json
from loopc.ir.model.encoder import encode_plan, envelope_text, plan_to_json, view  # noqa: F401 - plan_to_json re-exported
from loopc.ir.model.instrs import Instr
from loopc.ir.model.nodes import Edge, Node, edge_from_json, node_from_json
from loopc.ir.model.scopes import ScopeDecl, _decl_from


@attrs.frozen
class Entry:
    """The entry node and the bindings building its activation input."""

    node: str
    bind: dict[str, Instr]


@attrs.frozen(slots=False)
class Plan:
    """The plan: contracts, entry, nodes and edges (sorted by id), scope
    declarations (sorted by owner)."""

    input: dict[str, FieldSchema]
    output: dict[str, FieldSchema]
    state: dict[str, FieldSchema]
    entry: Entry
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    scopes: tuple[ScopeDecl, ...] = ()

    @functools.cached_property
    def nodes_by_id(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}

    @functools.cached_property
    def edges_by_id(self) -> dict[str, Edge]:
        return {e.id: e for e in self.edges}

    @functools.cached_property
    def scopes_by_owner(self) -> dict[str, ScopeDecl]:
        return {s.owner: s for s in self.scopes}

    def node(self, node_id: str) -> Node:
        """Node ``node_id``; ``KeyError`` when absent."""
        return self.nodes_by_id[node_id]

    def edge(self, edge_id: str) -> Edge:
        """Edge ``edge_id``; ``KeyError`` when absent."""
        return self.edges_by_id[edge_id]

    def scope_decl(self, owner: str) -> ScopeDecl:
        """The scope declaration of ``owner``; ``KeyError`` when absent."""
        return self.scopes_by_owner[owner]


def plan_from_json(p: Mapping[str, Any]) -> Plan:
    """Plan JSON (validated) → :class:`Plan`.  Equal FieldSchemas, contracts,
    scope stacks, effects and dispositions are one object each (one memo per
    call), as in a lowered plan: the model is read-only data."""
    memo: dict[Any, Any] = {}
    return Plan(
        contract_from_json(p["input"], memo), contract_from_json(p["output"], memo),
        contract_from_json(p["state"], memo), Entry(p["entry"]["node"], _bind_from(p["entry"]["bind"], memo)),
        tuple([node_from_json(n, memo) for n in p["nodes"]]), tuple([edge_from_json(e, memo) for e in p["edges"]]),
        tuple([_decl_from(s) for s in p["scopes"]]))


@attrs.frozen(slots=False)
class Artifact:
    """A decoded (or freshly compiled) artifact ``loop.plan.artifact/v<version>``.

    * ``version`` — N (the envelope's ``artifactVersion`` and
      ``compilerVersion`` both carry it);
    * ``source_version`` — ``loop.plan/v1``;
    * ``digest`` — ``sha256:<64 hex>`` semantic digest as written;
    * ``plan`` — the typed :class:`Plan`.

    :meth:`to_json` / :meth:`to_bytes` encode it (cached per instance).
    """

    version: int
    digest: str
    plan: Plan
    source_version: str = "loop.plan/v1"

    @property
    def artifact_version(self) -> str:
        return f"loop.plan.artifact/v{self.version}"

    @property
    def compiler_version(self) -> str:
        return f"loop.plan.compiler/v{self.version}"

    @functools.cached_property
    def _json(self) -> dict[str, Any]:
        return to_json(self)

    def to_json(self) -> dict[str, Any]:
        """The wire JSON object (:func:`to_json`; cached, treat as read-only)."""
        return self._json

    @property
    def data(self) -> dict[str, Any]:
        """Alias of :meth:`to_json` (the pre-typed-model ``Artifact.data``)."""
        return self._json

    @functools.cached_property
    def _bytes(self) -> bytes:
        return encode(self)

    def to_bytes(self) -> bytes:
        """Canonical RFC 8785 bytes (:func:`encode`; cached)."""
        return self._bytes

    def pretty(self) -> str:
        """Review form: sorted keys, indent 2, trailing newline."""
        from loopc.ir.canonical import pretty_text

        return pretty_text(self._json)

    def recompute_digest(self) -> str:
        """The semantic digest recomputed from the content."""
        from loopc.ir.canonical import text_bytes
        from loopc.ir.digest import digest_of_canonical

        return digest_of_canonical(text_bytes(encode_plan(self.plan)[1]))

    @property
    def nodes(self) -> tuple[Node, ...]:
        """``plan.nodes`` (sorted by id)."""
        return self.plan.nodes

    @property
    def edges(self) -> tuple[Edge, ...]:
        """``plan.edges`` (sorted by id)."""
        return self.plan.edges

    def node(self, node_id: str) -> Node:
        """Node ``node_id``; ``KeyError`` when absent."""
        return self.plan.node(node_id)

    def edge(self, edge_id: str) -> Edge:
        """Edge ``edge_id``; ``KeyError`` when absent."""
        return self.plan.edge(edge_id)

    def instrs(self) -> Iterator[tuple[str, Instr]]:
        """``(JSON pointer, instruction)`` of every instruction tree: entry
        bindings, node configs (node order), edge binds (edge order)."""
        return iter_instrs(self.plan)


def iter_instrs(plan: Plan) -> Iterator[tuple[str, Instr]]:
    """``(JSON pointer, instruction root)`` for every instruction tree of ``plan``."""
    for k, x in plan.entry.bind.items():
        yield f"/plan/entry/bind/{_esc(k)}", x
    for i, n in enumerate(plan.nodes):
        for suffix, x in _config_instrs(n.config):
            yield f"/plan/nodes/{i}/config{suffix}", x
    for i, e in enumerate(plan.edges):
        for k, x in e.bind.items():
            yield f"/plan/edges/{i}/bind/{_esc(k)}", x


def instr_roots(plan: Plan) -> Iterator[tuple[str, str, Instr]]:
    """``(kind, id, instruction root)`` for every instruction tree of
    ``plan``, in :func:`iter_instrs` order: ``("node", entry id, x)`` for the
    entry bindings, ``("node", node id, x)`` for node configs, ``("edge",
    edge id, x)`` for edge binds (no pointers are built)."""
    entry = plan.entry.node
    for x in plan.entry.bind.values():
        yield "node", entry, x
    for n in plan.nodes:
        for _, x in _config_instrs(n.config, False):
            yield "node", n.id, x
    for e in plan.edges:
        for x in e.bind.values():
            yield "edge", e.id, x


def from_json(value: Mapping[str, Any]) -> Artifact:
    """Validated artifact JSON → :class:`Artifact` (the strict decoder calls
    this after its checks; use :func:`loopc.ir.decode` for untrusted bytes)."""
    from loopc.ir.versions import parse_artifact_version

    version = parse_artifact_version(value["artifactVersion"])
    if version is None:
        raise ValueError(f"unknown artifactVersion {value['artifactVersion']!r}")
    return Artifact(version, value["digest"], plan_from_json(value["plan"]), value["sourceVersion"])


def to_json(art: Artifact) -> dict[str, Any]:
    """:class:`Artifact` → wire JSON object (docs/ir.md): its canonical
    bytes (:func:`encode`) read back, as the strict decoder reads them
    (:func:`loopc.ir.model.encoder.view`).  Raises
    :class:`~loopc.ir.canonical.CanonicalizationError` as :func:`encode` does."""
    return view(envelope_text(art.version, art.digest, art.source_version, encode_plan(art.plan)[0]))


def encode(art: Artifact) -> bytes:
    """The one encoder: canonical RFC 8785 bytes of ``art``
    (``canonical_bytes(to_json(art))``, written straight from the model by
    :func:`encode_plan`; always freshly encoded, never from a cache: the
    round-trip tests use this).  Raises
    :class:`~loopc.ir.canonical.CanonicalizationError` for a value RFC 8785
    cannot represent."""
    from loopc.ir.canonical import text_bytes

    return text_bytes(envelope_text(art.version, art.digest, art.source_version, encode_plan(art.plan)[0]))
