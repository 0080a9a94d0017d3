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

__all__ = ["DIGEST_TAG", "semantic_projection", "semantic_digest", "digest_of_projection"]

#: Domain-separation tag prefixed to the canonical projection bytes.
DIGEST_TAG = b"loop.plan.semantic-digest/v1\x00"

_FIELD_ANNOTATIONS = ("label", "description")
_NODE_ANNOTATIONS = ("label", "description")
_EDGE_ANNOTATIONS = ("label",)


def _strip(obj: Any, keys: tuple[str, ...]) -> Any:
    if isinstance(obj, dict) and any(k in obj for k in keys):
        return {k: v for k, v in obj.items() if k not in keys}
    return obj


def _field(fs: Any) -> Any:
    """A FieldSchema without annotations (iterative over ``items`` chains)."""
    chain = []
    cur = fs
    while isinstance(cur, dict) and len(chain) < 10_000:
        chain.append(cur)
        cur = cur.get("items")
    out: Any = cur
    for f in reversed(chain):
        g = _strip(f, _FIELD_ANNOTATIONS)
        if "items" in g:
            g = dict(g) if g is f else g
            g["items"] = out
        out = g
    return out


def _contract(c: Any) -> Any:
    if not isinstance(c, dict):
        return c
    return {k: _field(v) for k, v in c.items()}


def _node(n: Any) -> Any:
    if not isinstance(n, dict):
        return n
    out = _strip(n, _NODE_ANNOTATIONS)
    out = dict(out)
    if "input" in out:
        out["input"] = _contract(out["input"])
    ports = out.get("ports")
    if isinstance(ports, dict) and isinstance(ports.get("source"), list):
        src = []
        for p in ports["source"]:
            if isinstance(p, dict) and isinstance(p.get("output"), dict):
                p = dict(p)
                p["output"] = _contract(p["output"])
            src.append(p)
        ports = dict(ports)
        ports["source"] = src
        out["ports"] = ports
    cfg = out.get("config")
    if isinstance(cfg, dict):
        key = {"send_message": "callbackOutput", "join": "result", "loop": "state"}.get(out.get("op"))  # type: ignore[arg-type]
        if key and key in cfg:
            cfg = dict(cfg)
            cfg[key] = _contract(cfg[key])
            out["config"] = cfg
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
        out["edges"] = [_strip(e, _EDGE_ANNOTATIONS) for e in out["edges"]]
    return out


def digest_of_projection(projection: Any, *, fast: bool | None = None) -> str:
    """``sha256:<hex>`` of the tagged canonical bytes of a projection
    (``fast``: see :func:`loopc.ir.canonical.canonical_bytes`)."""
    h = hashlib.sha256(DIGEST_TAG)
    h.update(canonical_bytes(projection, fast=fast))
    return "sha256:" + h.hexdigest()


def semantic_digest(artifact: Mapping[str, Any]) -> str:
    """Semantic digest of an artifact (docs/ir.md#semantic-digest); independent of the
    artifact's own ``digest`` and version envelopes."""
    return digest_of_projection(semantic_projection(artifact))
