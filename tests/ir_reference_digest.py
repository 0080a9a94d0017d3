"""Independent reference implementation of loopc's semantic digest.

Written from ``docs/ir.md`` ALONE (sections "Semantic digest", "Canonical
bytes", "Contracts and FieldSchemas", "Nodes", "Edges"), without reading
any loopc source or test and without the ``rfc8785`` package.  Standard
library only.  The golden artifacts (``golden/**/expected.json`` and
``digest.txt``) were used purely as test data, never to decide behaviour.

    digest = "sha256:" + lowercase_hex(SHA-256(TAG || JCS(P)))

* ``TAG``  = ``b"loop.plan.semantic-digest/v1\\x00"`` (29 bytes);
* ``JCS``  = RFC 8785 canonical JSON, own serializer below (keys sorted by
  UTF-16 code units, ECMAScript Number-to-String, minimal string escaping,
  no whitespace, UTF-8);
* ``P``    = the artifact's ``plan`` member with exactly these annotation
  members removed: ``label``/``description`` of every element of
  ``plan.nodes``; ``label`` of every element of ``plan.edges``;
  ``label``/``description`` of every FieldSchema, FieldSchemas being the
  values of the contracts ``plan.input``, ``plan.output``, ``plan.state``,
  each node's ``input``, each ``ports.source[i].output`` that is an object,
  ``config.callbackOutput`` of ``send_message`` nodes, ``config.result`` of
  ``join`` nodes, ``config.state`` of ``loop`` nodes, and recursively the
  ``items`` member of a FieldSchema.  Nothing else is removed.

Places where docs/ir.md is ambiguous or silent, and what this module assumes
----------------------------------------------------------------------------

1. Edge ``description``.  The projection removes only ``label`` from edges,
   and the Edges section lists no ``description`` member.  Silent on what
   happens if an edge carries one (the strict decoder would reject it as an
   unknown member).  Assumed: it is kept ("Nothing else is removed").
2. FieldSchema ``items`` recursion when ``type`` is not ``array``.  The
   Contracts table says ``items`` is present "exactly when type is array";
   the digest section says "recursively, the items member of a FieldSchema"
   without a type condition.  Assumed: recurse into ``items`` whenever it is
   present and is an object, regardless of ``type``.
3. Contracts of non-object shape / missing members.  The projection is only
   defined for well-formed artifacts.  Assumed: a contract, FieldSchema,
   node, port list or config that is not of the documented JSON type is
   left untouched (no error); a node is classified by its ``op`` member
   (``send_message``/``join``/``loop``) to find ``callbackOutput``/
   ``result``/``state``; the config contracts are stripped only when the
   node's ``op`` matches (e.g. a ``state`` in a non-loop config is kept).
4. Contract field *names* ``label``/``description``.  The doc says these
   stay; implemented by only ever deleting members *of a FieldSchema
   value*, never keys of the contract object itself.
5. Node ``label``/``description`` vs. node members nested deeper.  Only the
   node object's own members are removed; ``label``/``description`` keys in
   ``config`` (e.g. inside ``lit`` values or ``merge``/``init`` maps) stay.
6. Numbers.  docs/ir.md says artifact numbers are IEEE 754 doubles (Strict
   decoder §1) and that JCS prints ECMAScript shortest form, but does not say
   how an integer that is not exactly representable as a double (|n| > 2^53)
   is hashed.  Assumed (RFC 8785 §3.2.2.3): every JSON number, integer or
   not, is converted to a double first and printed with the ECMAScript
   Number.prototype.toString algorithm; -0 prints as ``0``; NaN/Infinity and
   integers beyond the double range are rejected (ValueError).  Shortest
   round-trip digits are taken from Python's ``repr(float)``, which, like
   ECMAScript, yields the shortest digit string that round-trips (closest to
   the value on ties).
7. Strings.  The doc lists the escapes; silent on invalid Unicode (lone
   surrogates, which Python's ``json`` can produce from ``"\\ud800"``).
   Assumed: rejected (ValueError), as RFC 8785 requires well-formed
   Unicode.  No Unicode normalization is applied (RFC 8785 forbids it).
   ``\\u00xx`` escapes use lowercase hex (RFC 8785 §3.2.2.2; docs/ir.md
   writes ``\\u00xx`` without stating the case of the hex digits).
8. Missing ``plan`` member.  Silent.  Assumed: KeyError (no digest).
9. Duplicate object keys in the input are not visible after ``json.load``;
   the doc's decoder rejects them, this module cannot see them.
10. The worked example in docs/ir.md writes ``"sha256:"`` + lowercase hex;
    assumed the output string has no trailing newline (``digest.txt``
    contents are compared after stripping whitespace).
11. List order.  P is "the artifact's plan member with the annotations
    removed"; the doc does not say whether the digest re-sorts ``nodes``,
    ``edges``, ``scopes`` or any other list (the Canonical/Normalizations
    sections say the compiler emits them sorted).  Assumed: no re-sorting;
    arrays are hashed in the order they appear in the artifact (only object
    keys are sorted, by JCS).
12. API of this module.  docs/ir.md names ``tests/ir_reference_digest.py``
    as the second implementation but not its functions.  The public entry
    point is ``reference_digest(artifact) -> str``; ``digest`` is an alias
    because the pre-existing ``tests/test_golden.py`` accesses that name.
"""

from __future__ import annotations

import copy
import hashlib
import math

__all__ = ["TAG", "semantic_projection", "jcs", "reference_digest", "digest"]

TAG = b"loop.plan.semantic-digest/v1\x00"
assert len(TAG) == 29

# --------------------------------------------------------------------------
# Semantic projection
# --------------------------------------------------------------------------

_FIELDSCHEMA_ANNOTATIONS = ("label", "description")
_NODE_ANNOTATIONS = ("label", "description")
_EDGE_ANNOTATIONS = ("label",)

# node op -> config member holding a Contract
_CONFIG_CONTRACTS = {
    "send_message": "callbackOutput",
    "join": "result",
    "loop": "state",
}


def _strip_fieldschema(schema):
    if not isinstance(schema, dict):
        return
    for k in _FIELDSCHEMA_ANNOTATIONS:
        schema.pop(k, None)
    items = schema.get("items")
    if isinstance(items, dict):
        _strip_fieldschema(items)


def _strip_contract(contract):
    if not isinstance(contract, dict):
        return
    for schema in contract.values():
        _strip_fieldschema(schema)


def semantic_projection(artifact: dict) -> dict:
    """Return P: a deep copy of ``artifact["plan"]`` without annotations."""
    plan = copy.deepcopy(artifact["plan"])
    if not isinstance(plan, dict):
        return plan
    for key in ("input", "output", "state"):
        _strip_contract(plan.get(key))

    nodes = plan.get("nodes")
    if isinstance(nodes, list):
        for node in nodes:
            if not isinstance(node, dict):
                continue
            for k in _NODE_ANNOTATIONS:
                node.pop(k, None)
            _strip_contract(node.get("input"))
            ports = node.get("ports")
            if isinstance(ports, dict):
                source = ports.get("source")
                if isinstance(source, list):
                    for port in source:
                        if isinstance(port, dict) and isinstance(port.get("output"), dict):
                            _strip_contract(port["output"])
            member = _CONFIG_CONTRACTS.get(node.get("op"))
            config = node.get("config")
            if member is not None and isinstance(config, dict):
                _strip_contract(config.get(member))

    edges = plan.get("edges")
    if isinstance(edges, list):
        for edge in edges:
            if isinstance(edge, dict):
                for k in _EDGE_ANNOTATIONS:
                    edge.pop(k, None)
    return plan


# --------------------------------------------------------------------------
# RFC 8785 (JCS) serializer
# --------------------------------------------------------------------------

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def _jcs_string(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif o < 0x20:
            out.append("\\u%04x" % o)
        elif 0xD800 <= o <= 0xDFFF:
            raise ValueError("lone surrogate U+%04X is not valid Unicode" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _es_number(x) -> str:
    """ECMAScript Number::toString for a finite double (RFC 8785 §3.2.2.3)."""
    if isinstance(x, int):
        try:
            x = float(x)
        except OverflowError:
            raise ValueError("integer outside the IEEE 754 double range") from None
    if not math.isfinite(x):
        raise ValueError("NaN/Infinity cannot be serialized")
    if x == 0:
        return "0"  # also -0
    sign = "-" if x < 0 else ""
    r = repr(abs(x))  # shortest round-trip digits
    if "e" in r:
        mant, exp = r.split("e")
        exp = int(exp)
    else:
        mant, exp = r, 0
    if "." in mant:
        ip, fp = mant.split(".")
    else:
        ip, fp = mant, ""
    digits = ip + fp
    n = len(ip) + exp  # value = 0.digits * 10**n
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        es = ("+" if e >= 0 else "-") + str(abs(e))
        if k == 1:
            s = digits + "e" + es
        else:
            s = digits[0] + "." + digits[1:] + "e" + es
    return sign + s


def _utf16_key(s: str) -> bytes:
    # big-endian bytes compare exactly like the sequence of UTF-16 code units
    return s.encode("utf-16-be", "surrogatepass")


def _jcs(value, out: list) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_jcs_string(value))
    elif isinstance(value, (int, float)):
        out.append(_es_number(value))
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, v in enumerate(value):
            if i:
                out.append(",")
            _jcs(v, out)
        out.append("]")
    elif isinstance(value, dict):
        for k in value:
            if not isinstance(k, str):
                raise TypeError("object keys must be strings")
        out.append("{")
        for i, k in enumerate(sorted(value, key=_utf16_key)):
            if i:
                out.append(",")
            out.append(_jcs_string(k))
            out.append(":")
            _jcs(value[k], out)
        out.append("}")
    else:
        raise TypeError("not a JSON value: %r" % type(value).__name__)


def jcs(value) -> bytes:
    """RFC 8785 canonical UTF-8 bytes of a JSON value."""
    out: list = []
    _jcs(value, out)
    return "".join(out).encode("utf-8")


# --------------------------------------------------------------------------
# Digest
# --------------------------------------------------------------------------


def reference_digest(artifact: dict) -> str:
    """``"sha256:<64 hex>"`` semantic digest of a decoded artifact."""
    payload = jcs(semantic_projection(artifact))
    return "sha256:" + hashlib.sha256(TAG + payload).hexdigest()


# Alias: the pre-existing tests/test_golden.py accesses the module attribute
# ``digest``; same function, same signature as ``reference_digest``.
digest = reference_digest


if __name__ == "__main__":  # pragma: no cover - manual check
    import json
    import pathlib
    import sys

    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "golden")
    bad = 0
    files = sorted(root.rglob("expected.json"))
    for f in files:
        art = json.loads(f.read_text(encoding="utf-8"))
        got = reference_digest(art)
        want = (f.parent / "digest.txt").read_text(encoding="utf-8").strip()
        ok = got == want == art.get("digest")
        bad += not ok
        print("ok  " if ok else "FAIL", f.parent, got if not ok else "")
    print("%d/%d agree" % (len(files) - bad, len(files)))
    sys.exit(1 if bad else 0)
