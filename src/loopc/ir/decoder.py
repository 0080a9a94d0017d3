"""Strict artifact decoder (docs/ir.md#strict-decoder-and-verify:
it accepts every artifact version, checks each against its own closed set
of fields and types, and never reads a newer field under an older version).

:func:`decode` turns bytes into the typed IR model
(:class:`loopc.ir.model.Artifact`; docs/api.md#the-typed-ir-model) or raises
:class:`DecodeError` with an RFC 6901 pointer and a precise message.  It
checks, in order:

1. UTF-8 text without BOM holding exactly one JSON object; no duplicate
   keys, no ``NaN``/``Infinity``, no unpaired surrogate (an escape such as
   ``"\\ud800"`` not part of a pair); numbers are IEEE 754 doubles (an
   integer token beyond ±(2^53−1) is read as a double, a number beyond the
   double range is rejected, and so is one no compiler emits: over 64
   characters or 17 significant digits, :mod:`loopc.limits`);
2. ``artifactVersion`` names a known version N and ``compilerVersion`` is
   ``loop.plan.compiler/vN``;
3. envelope nesting ≤ 256;
4. the closed surface of version N (:mod:`loopc.ir.surface`) — unknown
   fields and fields of newer versions are rejected;
5. minimality: the artifact uses at least one feature of version N (a
   conforming compiler emits the lowest version that holds the plan), so
   one plan has exactly one artifact;
6. cross-references: nodes, edges and scopes sorted by id without
   duplicates; the entry, every edge endpoint, every port's edge, every
   target port's edge list, join owners and scope owners resolve; the
   source-port table of each node is the one its opcode and config imply;
   expression nesting ≤ 128.

:func:`loopc.ir.verifier.verify` (above this module, which it imports)
adds the digest recomputation.  ``canonical_bytes(decode(b)) == b`` for
every canonical artifact ``b``.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterator, Mapping


from loopc import limits as _limits
from loopc.kinds import config_instr_values as _kind_config_instr_values
from loopc.kinds import config_instrs as _kind_config_instrs
from loopc.kinds import tables as _kind_tables
from loopc.kinds import wire_source_ports
from loopc.ir.canonical import CanonicalizationError, canonical_bytes, scan
from loopc.ir.instr import instr_depth
from loopc.ir.model import Artifact, from_json
from loopc.ir.surface import SurfaceError, accept_parsed, validate
from loopc.ir.versions import LATEST, parse_artifact_version, parse_compiler_version

__all__ = ["Artifact", "DecodeError", "decode", "decode_data", "iter_instr_roots", "config_instrs"]

MAX_ENVELOPE_NESTING = 256
MAX_EXPRESSION_NESTING = 128
MAX_SAFE_INT = 2**53 - 1


class DecodeError(ValueError):
    """The bytes are not a valid artifact.  ``pointer`` locates the problem
    (RFC 6901, ``""`` = the whole document)."""

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(f"{pointer or '/'}: {message}" if pointer else message)
        self.pointer = pointer
        self.message = message


# ---------------------------------------------------------------------------
# JSON text
# ---------------------------------------------------------------------------

def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise DecodeError("", f"duplicate object key {k!r}")
            seen.add(k)
    return d


def _constant(name: str) -> Any:
    raise DecodeError("", f"{name} is not a JSON number")


class _NumberProblem(ValueError):
    """A number token out of the compiler's bounds (located by :func:`parse_json`)."""

    def __init__(self, token: str, why: str) -> None:
        super().__init__(why)
        self.token = token
        self.why = why


def _int(s: str) -> int | float:
    """JSON numbers are IEEE 754 doubles (RFC 8785 §3.2.2.3): an integer token
    beyond ±(2^53−1) — how RFC 8785 prints a large integral double — is read
    as that double; it must then be one a compiler can emit (the bounds of
    :mod:`loopc.limits`: at most 64 characters and 17 significant digits)."""
    if len(s) < 16:
        return int(s)
    if len(s) > _limits.MAX_NUMBER_CHARS:  # before any conversion (Python's int-conversion digit limit)
        raise _NumberProblem(s, _limits.number_text_problem(s) or "out of range")
    v = int(s)
    if -MAX_SAFE_INT <= v <= MAX_SAFE_INT:
        return v
    digits = s.lstrip("-").rstrip("0")
    if len(digits) > _limits.MAX_SIGNIFICANT_DIGITS:
        raise _NumberProblem(s, f"integer {s} is outside ±(2^53−1) and has {len(digits)} significant digits: "
                                f"not a double (at most {_limits.MAX_SIGNIFICANT_DIGITS}), so no compiler emits it")
    return _float(s)


def _float(s: str) -> float:
    """A decimal token within the compiler's bounds (:func:`loopc.limits.number_text_problem`:
    at most 64 characters and 17 significant digits, which every double's
    shortest form fits) and the double range: not rounding to infinity, nor
    to zero unless it is zero."""
    why = _limits.number_text_problem(s)
    if why is not None:
        raise _NumberProblem(s, why)
    v = float(s)
    if v in (float("inf"), float("-inf")):
        raise _NumberProblem(s, f"number {s} is out of range")
    if v == 0.0 and s.lstrip("-").split("e")[0].split("E")[0].strip("0.") != "":
        raise _NumberProblem(s, f"number {s} is not zero but rounds to zero: out of range (a compiler writes 0)")
    return v


def _located_number(text: str, exc: _NumberProblem) -> DecodeError:
    """``exc`` as a :class:`DecodeError` naming the line and column of its
    token (its first occurrence as a number: not inside a string)."""
    for m in re.finditer(re.escape(exc.token) + r"(?![0-9.eE+-])", text):
        i = m.start()
        if i == 0 or text[i - 1] in ":[, \t\r\n":
            line = text.count("\n", 0, i) + 1
            col = i - (text.rfind("\n", 0, i) + 1) + 1
            return DecodeError("", f"{exc.why} (at line {line} column {col})")
    return DecodeError("", exc.why)


def parse_json(data: bytes | str) -> Any:
    """Strict JSON text → Python value (see module docstring, step 1)."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        if raw.startswith(b"\xef\xbb\xbf"):
            raise DecodeError("", "artifact starts with a byte-order mark")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError("", f"artifact is not UTF-8 (byte {exc.start})") from None
    else:
        text = data
    # A lone surrogate can only come from a \uD800–\uDFFF escape
    # (UTF-8 bytes cannot hold one) or from ``str`` input: only then walk.
    check_unicode = _SURROGATE_ESCAPE.search(text) is not None
    if not check_unicode and not isinstance(data, (bytes, bytearray, memoryview)):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            check_unicode = True
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant,
                           parse_int=_int, parse_float=_float)
    except DecodeError:
        raise
    except _NumberProblem as exc:
        raise _located_number(text, exc) from None
    except RecursionError:
        raise DecodeError("", f"artifact nests deeper than {MAX_ENVELOPE_NESTING}") from None
    except json.JSONDecodeError as exc:
        raise DecodeError("", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except UnicodeEncodeError:  # pragma: no cover - a raw surrogate outside strings is invalid JSON
        raise DecodeError("", "artifact text is not valid Unicode") from None
    if check_unicode:
        _reject_lone_surrogates(value)
    return value


#: opcode -> its target ports, as its kind declares them (Kind.ports.targets)
_TARGET_PORTS = {op: list(t) for op, t in _kind_tables().target_ports.items()}
#: scope kind -> the opcode that opens it (Kind.scope)
_SCOPE_OPENER = {scope: op for op, scope in _kind_tables().scope_owners.items()}
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _esc(k: str) -> str:
    return k.replace("~", "~0").replace("/", "~1")


def _lone_surrogate(s: str) -> str | None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"U+{ord(s[exc.start]):04X}"
    return None


def _reject_lone_surrogates(value: Any) -> None:
    """Raise :class:`DecodeError` at the first string (or key) holding an
    unpaired surrogate: RFC 8785 and UTF-8 need well-formed Unicode, so such an
    artifact has no canonical bytes and no digest.  Iterative."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        v, ptr = stack.pop()
        if isinstance(v, str):
            bad = _lone_surrogate(v)
            if bad is not None:
                raise DecodeError(ptr, f"string contains the unpaired surrogate {bad} (not valid Unicode)")
        elif isinstance(v, dict):
            for k, x in v.items():
                bad = _lone_surrogate(k)
                if bad is not None:
                    raise DecodeError(ptr, f"object key contains the unpaired surrogate {bad} (not valid Unicode)")
                stack.append((x, f"{ptr}/{_esc(k)}"))
        elif isinstance(v, list):
            stack.extend((x, f"{ptr}/{i}") for i, x in enumerate(v))


# ---------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------

def decode(data: bytes | str, *, canonical: bool = False) -> Artifact:
    """Strictly decode artifact bytes (or text).

    With ``canonical=True`` the input must also be exactly its own RFC 8785
    form (what ``loopc compile`` writes without ``--pretty``).  Raises
    :class:`DecodeError`.  Does not check the digest: see :func:`loopc.ir.verifier.verify`.
    """
    value = parse_json(data)
    art = _decode_data(value, True)
    if canonical:
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        if canonical_bytes(value) != raw:
            raise DecodeError("", "artifact bytes are not in RFC 8785 canonical form")
    return art


def _short(v: Any) -> str:
    r = repr(v) if isinstance(v, (str, int, float, bool)) or v is None else type(v).__name__
    return r if len(r) <= 80 else r[:60] + f"… ({len(r)} characters)"


def decode_data(value: Any) -> Artifact:
    """Validate already-parsed JSON data as an artifact (steps 2–6)."""
    return _decode_data(value, False)


def _decode_data(value: Any, parsed: bool) -> Artifact:
    """:func:`decode_data`; ``parsed``: ``value`` comes from :func:`parse_json`
    (builtin types only), so the nesting scan and the surface check can be
    one walk (:func:`loopc.ir.surface.accept_parsed`) when it fits."""
    if not isinstance(value, dict):
        raise DecodeError("", "an artifact is a JSON object")
    av, cv_raw = value.get("artifactVersion"), value.get("compilerVersion")
    # a version number of thousands of digits is simply unknown (and must not
    # reach int(), whose digit limit raises ValueError)
    version = parse_artifact_version(av) if not (isinstance(av, str) and len(av) > 64) else None
    if version is None:
        raise DecodeError("/artifactVersion",
                          f"unsupported artifactVersion {_short(av)} "
                          f"(known: loop.plan.artifact/v1 … v{LATEST})")
    cv = parse_compiler_version(cv_raw) if not (isinstance(cv_raw, str) and len(cv_raw) > 64) else None
    if cv != version:
        raise DecodeError("/compilerVersion",
                          f"compilerVersion must be loop.plan.compiler/v{version} for "
                          f"loop.plan.artifact/v{version}; found {_short(cv_raw)}")
    got = accept_parsed(value, version) if parsed else None
    if got is not None and got[2] <= MAX_ENVELOPE_NESTING:
        used, fast, depth = got
    else:  # step 3 before step 4, each with its own diagnostic
        try:
            fast, depth = scan(value)
        except CanonicalizationError as exc:
            raise DecodeError("", str(exc)) from None
        if depth > MAX_ENVELOPE_NESTING:
            raise DecodeError("", f"artifact nests {depth} levels deep (limit {MAX_ENVELOPE_NESTING})")
        try:
            used = validate(value, version)
        except SurfaceError as exc:
            raise DecodeError(exc.pointer, exc.message) from None
    if used < version:
        raise DecodeError(
            "/artifactVersion",
            f"artifact declares loop.plan.artifact/v{version} but uses no feature newer than v{used}; "
            f"a conforming compiler emits loop.plan.artifact/v{used} for it")
    # An instruction tree of depth d nests d arrays, and the shallowest one
    # (an entry binding) sits 4 levels down: below this, none can be too deep.
    _check_references(value["plan"], deep=depth - 4 > MAX_EXPRESSION_NESTING)
    if not fast:
        try:
            canonical_bytes(value, fast=False)
        except CanonicalizationError as exc:
            raise DecodeError("", str(exc)) from None
    art = from_json(value)
    # ``value`` is what ``to_json(art)`` gives (``encode(decode(b)) == b`` is
    # tested on every golden), so seed the model's JSON cache with it.
    art.__dict__["_json"] = value
    return art


# ---------------------------------------------------------------------------
# Cross-reference checks
# ---------------------------------------------------------------------------

def _sorted_unique(items: list[Any], key: str, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    prev: str | None = None
    for i, it in enumerate(items):
        k = it[key]
        if prev is not None and not prev < k:
            if prev == k:
                raise DecodeError(f"{where}/{i}/{key}", f"duplicate {key} '{k}'")
            raise DecodeError(f"{where}/{i}/{key}", f"'{k}' is out of order: {where} are sorted by {key}")
        prev = k
        out[k] = it
    return out


def expected_source_ports(node: Mapping[str, Any]) -> list[str]:
    """Source port names implied by a node's opcode and config, as its kind
    declares them (:mod:`loopc.kinds`)."""
    return wire_source_ports(node["op"], node["config"])


def _check_references(plan: Mapping[str, Any], *, deep: bool = True) -> None:
    """Step 6.  ``deep=False``: the artifact nests too little for any
    expression to pass the nesting gate, so its depth is not measured."""
    nodes = _sorted_unique(plan["nodes"], "id", "/plan/nodes")
    edges = _sorted_unique(plan["edges"], "id", "/plan/edges")
    _sorted_unique(plan["scopes"], "owner", "/plan/scopes")
    if plan["entry"]["node"] not in nodes:
        raise DecodeError("/plan/entry/node", f"entry node '{plan['entry']['node']}' does not exist")
    for i, n in enumerate(plan["nodes"]):
        base = f"/plan/nodes/{i}"
        src = n["ports"]["source"]
        names = [p["name"] for p in src]
        want = expected_source_ports(n)
        if names != want:
            raise DecodeError(f"{base}/ports/source",
                              f"node '{n['id']}' ({n['op']}) must have source ports {want}, found {names}")
        for j, p in enumerate(src):
            if "edge" in p:
                e = edges.get(p["edge"])
                if e is None or e["from"]["node"] != n["id"] or e["from"]["port"] != p["name"]:
                    raise DecodeError(f"{base}/ports/source/{j}/edge",
                                      f"edge '{p['edge']}' does not leave port '{p['name']}' of '{n['id']}'")
            elif p["name"] not in ("failed", "timed_out"):
                raise DecodeError(f"{base}/ports/source/{j}",
                                  f"port '{p['name']}' must be routed by an edge (only failed/timed_out "
                                  "ports take an implicit route)")
            elif p["implicit"]["status"] != p["name"]:
                raise DecodeError(f"{base}/ports/source/{j}/implicit/status",
                                  f"implicit route status must be '{p['name']}'")
        tnames = [t["name"] for t in n["ports"]["target"]]
        twant = _TARGET_PORTS.get(n["op"], ["in"])
        if tnames != twant:
            raise DecodeError(f"{base}/ports/target", f"node '{n['id']}' must have target ports {twant}")
        for j, t in enumerate(n["ports"]["target"]):
            if len(t["edges"]) > 1 and t["edges"] != sorted(set(t["edges"])):
                raise DecodeError(f"{base}/ports/target/{j}/edges", "edge ids must be sorted and unique")
            for eid in t["edges"]:
                e = edges.get(eid)
                if e is None or e["to"]["node"] != n["id"] or e["to"]["port"] != t["name"]:
                    raise DecodeError(f"{base}/ports/target/{j}/edges",
                                      f"edge '{eid}' does not enter port '{t['name']}' of '{n['id']}'")
        for key in ("reads", "writes", "watches"):
            lst = n["effects"][key]
            if len(lst) > 1 and lst != sorted(set(lst)):
                raise DecodeError(f"{base}/effects/{key}", "state fields must be sorted and unique")
        for j, s in enumerate(n["scope"]):
            if s["owner"] not in nodes:
                raise DecodeError(f"{base}/scope/{j}/owner", f"scope owner '{s['owner']}' does not exist")
        c = n["config"]
        if n["op"] == "join":
            owner = c.get("forkId") or c.get("fanOutId")
            o = nodes.get(owner)
            ok_owner = o is not None and (
                (o["op"] == "fork" or (o["op"] == "switch" and o["config"]["mode"] == "all_match"))
                if "forkId" in c else o["op"] == "fan_out")
            if not ok_owner:
                key = "forkId" if "forkId" in c else "fanOutId"
                raise DecodeError(f"{base}/config/{key}", f"'{owner}' is not a valid join owner")
        for suffix, instr in config_instrs(n["op"], c) if deep else ():
            d = instr_depth(instr)
            if d > MAX_EXPRESSION_NESTING:
                raise DecodeError(f"{base}/config{suffix}",
                                  f"expression nested {d} levels deep (limit {MAX_EXPRESSION_NESTING})")
    for i, e in enumerate(plan["edges"]):
        base = f"/plan/edges/{i}"
        for end_key, side in (("from", "source"), ("to", "target")):
            ep = e[end_key]
            n = nodes.get(ep["node"])
            if n is None:
                raise DecodeError(f"{base}/{end_key}/node", f"node '{ep['node']}' does not exist")
            ports = {p["name"]: p for p in n["ports"][side]}
            p = ports.get(ep["port"])
            if p is None:
                raise DecodeError(f"{base}/{end_key}/port",
                                  f"node '{ep['node']}' has no {side} port '{ep['port']}'")
            if side == "source" and p.get("edge") != e["id"]:
                raise DecodeError(f"{base}/from", f"port '{ep['port']}' of '{ep['node']}' names edge "
                                                  f"{p.get('edge')!r}, not '{e['id']}'")
            if side == "target" and e["id"] not in p["edges"]:
                raise DecodeError(f"{base}/to", f"port '{ep['port']}' of '{ep['node']}' does not list '{e['id']}'")
        to = nodes[e["to"]["node"]]
        failed_end = to["op"] == "end" and to["config"]["status"] == "failed"
        if failed_end != ("disposition" in e):
            raise DecodeError(f"{base}/disposition" if "disposition" in e else base,
                              "an edge has a 'disposition' exactly when it enters a failed End")
        if len(e["effects"]["reads"]) > 1 and e["effects"]["reads"] != sorted(set(e["effects"]["reads"])):
            raise DecodeError(f"{base}/effects/reads", "state fields must be sorted and unique")
        for k, instr in e["bind"].items() if deep else ():
            d = instr_depth(instr)
            if d > MAX_EXPRESSION_NESTING:
                raise DecodeError(f"{base}/bind/{k}", f"expression nested {d} levels deep "
                                                      f"(limit {MAX_EXPRESSION_NESTING})")
    for k, instr in plan["entry"]["bind"].items() if deep else ():
        d = instr_depth(instr)
        if d > MAX_EXPRESSION_NESTING:
            raise DecodeError(f"/plan/entry/bind/{k}", f"expression nested {d} levels deep "
                                                        f"(limit {MAX_EXPRESSION_NESTING})")
    for i, s in enumerate(plan["scopes"]):
        o = nodes.get(s["owner"])
        want_op = _SCOPE_OPENER[s["kind"]]
        if o is None or o["op"] != want_op:
            raise DecodeError(f"/plan/scopes/{i}/owner", f"'{s['owner']}' is not a {want_op} node")
        j = s.get("join")
        if j is not None and (j not in nodes or nodes[j]["op"] != "join"):
            raise DecodeError(f"/plan/scopes/{i}/join", f"'{j}' is not a join node")


def config_instrs(op: str, c: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """``(pointer suffix, instruction)`` for every instruction tree held by a
    node config of opcode ``op`` (docs/ir.md lists these positions), read off
    the kind's wire surface (:func:`loopc.kinds.config_instrs`)."""
    return _kind_config_instrs(op, c)


def iter_instr_roots(artifact: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """``(kind, id, instruction)`` for every instruction tree of an artifact:
    entry bindings (kind ``node``, the entry id), node configs, edge binds."""
    plan = artifact["plan"]
    for x in plan["entry"]["bind"].values():
        yield "node", plan["entry"]["node"], x
    for n in plan["nodes"]:
        for x in _kind_config_instr_values(n["op"], n["config"]):
            yield "node", n["id"], x
    for e in plan["edges"]:
        for x in e["bind"].values():
            yield "edge", e["id"], x
