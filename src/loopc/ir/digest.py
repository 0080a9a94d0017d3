"""Semantic projection and semantic digest (docs/ir.md#semantic-digest: the
SHA-256 of a domain-separated canonical projection of the artifact's
meaning).

The projection is the artifact's ``plan`` member with every authoring-only
annotation removed — the ``label``/``description`` members of each node, the
``label`` of each edge, and the ``label``/``description`` of every
FieldSchema.  FieldSchemas sit in contracts at exactly these places (see
docs/ir.md#semantic-digest):

* ``plan.input``, ``plan.output``, ``plan.state``;
* each node's ``input``, each source port's ``output`` (when an object),
  ``config.callbackOutput`` (send_message), ``config.result`` (join),
  ``config.state`` (loop);
* recursively, a FieldSchema's ``items``.

Everything outside ``plan`` (``artifactVersion``, ``compilerVersion``,
``sourceVersion``, ``digest``) is envelope and excluded.  The digest is
``"sha256:" + hex(SHA-256(DIGEST_TAG || canonical_bytes(projection)))``.
"""
from __future__ import annotations

import hashlib
from typing import Any, Mapping

from loopc.ir.canonical import canonical_bytes
from loopc.kinds import tables as _kind_tables

__all__ = ["DIGEST_TAG", "semantic_projection", "semantic_digest", "digest_of_projection", "digest_of_canonical",
           "FIELD_ANNOTATIONS", "NODE_ANNOTATIONS", "EDGE_ANNOTATIONS", "CONFIG_CONTRACTS"]

#: Domain-separation tag prefixed to the canonical projection bytes.
DIGEST_TAG = b"loop.plan.semantic-digest/v1\x00"

#: Authoring-only members left out of the projection: of every FieldSchema
#: (in the contracts listed above), of each node, of each edge.
FIELD_ANNOTATIONS = ("label", "description")
NODE_ANNOTATIONS = ("label", "description")
EDGE_ANNOTATIONS = ("label",)


def _strip(obj: Any, keys: tuple[str, ...]) -> Any:
    if isinstance(obj, dict) and any(k in obj for k in keys):
        return {k: v for k, v in obj.items() if k not in keys}
    return obj


def _field(fs: Any) -> Any:
    """A FieldSchema without annotations (iterative over ``items`` chains)."""
    chain: list[dict[str, Any]] = []
    cur = fs
    while isinstance(cur, dict) and len(chain) < 10_000:
        chain.append(cur)
        cur = cur.get("items")
    out: Any = cur
    for f in reversed(chain):
        g = _strip(f, FIELD_ANNOTATIONS)
        if "items" in g and g["items"] is not out:
            g = dict(g) if g is f else g
            g["items"] = out
        out = g
    return out


def _contract(c: Any) -> Any:
    if not isinstance(c, dict):
        return c
    out = None
    for k, v in c.items():
        if type(v) is dict and "items" not in v and "label" not in v and "description" not in v:
            f = v  # nothing to strip (the common case)
        else:
            f = _field(v)
        if f is not v and out is None:
            out = dict(c)
        if out is not None:
            out[k] = f
    return c if out is None else out


#: opcode -> its config member holding a contract of FieldSchemas, as its kind
#: declares it (:attr:`loopc.kinds.Kind.contract_field`)
CONFIG_CONTRACTS: Mapping[str, str] = _kind_tables().config_contracts


def _node(n: Any) -> Any:
    if not isinstance(n, dict):
        return n
    out = _strip(n, NODE_ANNOTATIONS)
    changed: dict[str, Any] = {}
    if "input" in out:
        c = _contract(out["input"])
        if c is not out["input"]:
            changed["input"] = c
    ports = out.get("ports")
    if isinstance(ports, dict) and isinstance(ports.get("source"), list):
        src = None
        for i, p in enumerate(ports["source"]):
            if isinstance(p, dict) and isinstance(p.get("output"), dict):
                c = _contract(p["output"])
                if c is not p["output"]:
                    if src is None:
                        src = list(ports["source"])
                    src[i] = dict(p)
                    src[i]["output"] = c
        if src is not None:
            ports = dict(ports)
            ports["source"] = src
            changed["ports"] = ports
    cfg = out.get("config")
    if isinstance(cfg, dict):
        key = CONFIG_CONTRACTS.get(out.get("op"))
        if key and key in cfg:
            c = _contract(cfg[key])
            if c is not cfg[key]:
                cfg = dict(cfg)
                cfg[key] = c
                changed["config"] = cfg
    if changed:
        out = dict(out) if out is n else out
        out.update(changed)
    return out


def semantic_projection(artifact: Mapping[str, Any]) -> Any:
    """The semantic projection of an artifact (a JSON dict as produced by
    lowering or the decoder): its ``plan`` without annotations.  Unchanged
    sub-trees are shared, not copied.  Raises ``KeyError`` when ``plan`` is
    missing."""
    plan = artifact["plan"]
    if not isinstance(plan, dict):
        return plan
    out = dict(plan)
    for k in ("input", "output", "state"):
        if k in out:
            out[k] = _contract(out[k])
    if isinstance(out.get("nodes"), list):
        out["nodes"] = [_node(n) for n in out["nodes"]]
    if isinstance(out.get("edges"), list):
        out["edges"] = [_strip(e, EDGE_ANNOTATIONS) for e in out["edges"]]
    return out


def digest_of_projection(projection: Any, *, fast: bool | None = None) -> str:
    """``sha256:<hex>`` of the tagged canonical bytes of a projection
    (``fast``: see :func:`loopc.ir.canonical.canonical_bytes`)."""
    return digest_of_canonical(canonical_bytes(projection, fast=fast))


def digest_of_canonical(projection_bytes: bytes) -> str:
    """``sha256:<hex>`` of the tagged canonical bytes of a projection
    (:func:`loopc.ir.model.encode_plan` gives them from the typed model)."""
    h = hashlib.sha256(DIGEST_TAG)
    h.update(projection_bytes)
    return "sha256:" + h.hexdigest()


def semantic_digest(artifact: Mapping[str, Any]) -> str:
    """Semantic digest of an artifact (docs/ir.md#semantic-digest); independent of the
    artifact's own ``digest`` and version envelopes."""
    return digest_of_projection(semantic_projection(artifact))
