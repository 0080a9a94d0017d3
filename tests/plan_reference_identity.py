"""Second implementation of the execution-plan digests, written from
docs/plan.md ("Digests", "Plan identity") alone: standard library only, no
loopc import, its own RFC 8785 serializer for the JSON values these digests
use (objects, arrays, strings, integers, booleans, null).

Entry points:

* ``catalog_digests(catalog) -> {"catalog": str, "binding": str, "entries":
  {action: {"descriptorDigest", "bindingFingerprint", "entryDigest"}}}`` for
  a catalog file's JSON object (the ``loopc catalog`` format);
* ``payload_digest(plan) -> str`` and ``plan_identity(plan) -> str`` for a
  ``loopc plan --format json`` object.
"""

from __future__ import annotations

import hashlib
from typing import Any


def _string(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20:
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _utf16_key(k: str) -> list[int]:
    units = []
    for ch in k:
        o = ord(ch)
        if o >= 0x10000:
            o -= 0x10000
            units += [0xD800 + (o >> 10), 0xDC00 + (o & 0x3FF)]
        else:
            units.append(o)
    return units


def _ser(v: Any) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_ser(x) for x in v) + "]"
    if isinstance(v, dict):
        keys = sorted(v, key=_utf16_key)
        return "{" + ",".join(_string(k) + ":" + _ser(v[k]) for k in keys) + "}"
    raise TypeError(f"not a digestable JSON value: {type(v).__name__}")


def jcs(v: Any) -> bytes:
    return _ser(v).encode("utf-8")


def D(tag: str, value: Any) -> str:
    return "sha256:" + hashlib.sha256(tag.encode("ascii") + b"\x00" + jcs(value)).hexdigest()


def catalog_digests(catalog: dict[str, Any]) -> dict[str, Any]:
    descs = {d["action"]: d for d in catalog["descriptors"]}
    binds = {b["action"]: b for b in catalog["bindings"]}
    entries = {}
    for action, d in descs.items():
        caps = d["capabilities"]
        ddig = D("loop.plan.capability-descriptor/v1", caps)
        b = binds.get(action)
        if b is not None:
            fp = D(
                "loop.plan.binding-fingerprint/v1",
                {
                    "digestAlgorithm": "loop.plan.digest/v1",
                    "owner": b["owner"],
                    "handler": b["handler"],
                    "implementationVersion": b["implementationVersion"],
                    "descriptorDigest": ddig,
                },
            )
            handler, version = b["handler"], b["implementationVersion"]
        else:
            fp = handler = version = None
        edig = D(
            "loop.plan.catalog-entry/v1",
            {
                "action": action,
                "owner": d["owner"],
                "descriptor": caps,
                "descriptorDigest": ddig,
                "handler": handler,
                "implementationVersion": version,
                "bindingFingerprint": fp,
            },
        )
        entries[action] = {"descriptorDigest": ddig, "bindingFingerprint": fp, "entryDigest": edig}
    binding = D("loop.plan.runtime-work-binding/v1", catalog["binding"])
    cat = D(
        "loop.plan.catalog/v1",
        {
            "contractVersion": "loop.plan.capability/v1",
            "runtimeWorkBindingDigest": binding,
            "entries": sorted(e["entryDigest"] for e in entries.values()),
        },
    )
    return {"catalog": cat, "binding": binding, "entries": entries}


def payload_digest(plan: dict[str, Any]) -> str:
    return D("loop.plan.payload/v1", {"profile": plan["profile"], "steps": plan["steps"], "bounds": plan["bounds"]})


def plan_identity(plan: dict[str, Any]) -> str:
    return D(
        "loop.plan.identity/v1",
        {
            "artifactDigest": plan["artifactDigest"],
            "compilerVersion": plan["compilerVersion"],
            "backendVersion": "loop.plan.backend/v1",
            "policyVersion": "loop.plan.policy/v1",
            "catalogDigest": plan["catalog"]["digest"],
            "entries": plan["catalog"]["entries"],
            "payloadDigest": payload_digest(plan),
        },
    )
