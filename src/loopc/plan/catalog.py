"""The sealed capability catalog: entries, digests, the conflict policy and
the catalog file (docs/plan.md#capability-descriptors,
docs/plan.md#digests, docs/plan.md#conflict-policy, docs/plan.md#catalog-file).

* :class:`CatalogBuilder` takes descriptor and handler-binding submissions
  for one binding scope and seals them into a :class:`Catalog`, or rejects
  the whole generation with :class:`Problem` records (no precedence, no
  last-writer-wins);
* :func:`builtin_catalog` is the built-in catalog (``loopc catalog``);
* :func:`load_catalog` reads a catalog file (JSON or YAML, through loopc's
  strict YAML layer, so every problem has a line and column) and never
  raises: it returns a :class:`CatalogLoad` with diagnostics.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any, Mapping, Sequence

import attrs

from loopc.diagnostics import Diagnostic, Related, Span
from loopc.plan.builtin import (
    ACTION_TYPES,
    BUILTIN_IMPLEMENTATION_VERSION,
    PLATFORM_OWNER,
    builtin_descriptors,
    builtin_handler,
)
from loopc.plan.descriptor import (
    CONTRACT_VERSION,
    FIELDS,
    CapabilityDescriptor,
    DescriptorError,
    InconsistentDescriptor,
    broadens,
    descriptor_from_json,
)
from loopc.plan.digests import (
    DIGEST_ALGORITHM,
    TAG_BINDING,
    TAG_CATALOG,
    TAG_DESCRIPTOR,
    TAG_ENTRY,
    TAG_SCOPE,
    tagged_digest,
)

CATALOG_VERSION = "loop.plan.catalog/v1"
"""The catalog file format version (``catalogVersion``)."""

MAX_SUBMISSIONS = 1024
"""At most this many descriptor and this many binding submissions per file."""

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+-]{0,199}(/[A-Za-z0-9][A-Za-z0-9._:@+-]{0,199}){0,15}\Z")


@attrs.frozen
class BindingScope:
    """The runtime work binding a catalog generation is sealed for."""

    org: str
    installation: str
    runtime_capability: str
    generation: str

    def to_json(self) -> dict[str, str]:
        return {
            "org": self.org,
            "installation": self.installation,
            "runtimeCapability": self.runtime_capability,
            "generation": self.generation,
        }

    @property
    def digest(self) -> str:
        """``RuntimeWorkBindingDigest`` (tag ``loop.plan.runtime-work-binding/v1``)."""
        return tagged_digest(TAG_SCOPE, self.to_json())


BUILTIN_SCOPE = BindingScope("local", "local", "loop.plan.reference", "builtin")


def descriptor_digest(d: CapabilityDescriptor) -> str:
    """Digest of the normalized descriptor (tag ``loop.plan.capability-descriptor/v1``)."""
    return tagged_digest(TAG_DESCRIPTOR, d.to_json())


def binding_fingerprint(owner: str, handler: str, implementation_version: str, desc_digest: str) -> str:
    """``BindingFingerprint`` (tag ``loop.plan.binding-fingerprint/v1``) over the
    digest-algorithm version, owner, handler reference, handler implementation
    version and descriptor digest."""
    return tagged_digest(
        TAG_BINDING,
        {
            "digestAlgorithm": DIGEST_ALGORITHM,
            "owner": owner,
            "handler": handler,
            "implementationVersion": implementation_version,
            "descriptorDigest": desc_digest,
        },
    )


@attrs.frozen
class CatalogEntry:
    """One effective entry: the owner's descriptor and, for an executable
    action, its single handler binding (``handler`` None = contract-only).
    ``reasons`` are annotations (never digested)."""

    action: str
    owner: str
    descriptor: CapabilityDescriptor
    handler: str | None
    implementation_version: str | None
    reasons: Mapping[str, str] = attrs.field(factory=dict, eq=False)

    @property
    def executable(self) -> bool:
        return self.handler is not None

    @property
    def descriptor_digest(self) -> str:
        return descriptor_digest(self.descriptor)

    @property
    def binding_fingerprint(self) -> str | None:
        if self.handler is None or self.implementation_version is None:
            return None
        return binding_fingerprint(self.owner, self.handler, self.implementation_version, self.descriptor_digest)

    def digest_payload(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "owner": self.owner,
            "descriptor": self.descriptor.to_json(),
            "descriptorDigest": self.descriptor_digest,
            "handler": self.handler,
            "implementationVersion": self.implementation_version,
            "bindingFingerprint": self.binding_fingerprint,
        }

    @property
    def entry_digest(self) -> str:
        """``EntryDigest`` (tag ``loop.plan.catalog-entry/v1``) of the complete entry."""
        return tagged_digest(TAG_ENTRY, self.digest_payload())


@attrs.frozen
class Catalog:
    """A sealed, immutable catalog generation; ``entries`` sorted by action."""

    scope: BindingScope
    entries: Mapping[str, CatalogEntry]

    @property
    def digest(self) -> str:
        """``CatalogDigest`` (tag ``loop.plan.catalog/v1``): contract version,
        binding-scope digest and the sorted entry digests."""
        return tagged_digest(
            TAG_CATALOG,
            {
                "contractVersion": CONTRACT_VERSION,
                "runtimeWorkBindingDigest": self.scope.digest,
                "entries": sorted(e.entry_digest for e in self.entries.values()),
            },
        )

    def entry(self, action: str) -> CatalogEntry | None:
        return self.entries.get(action)

    def to_json(self) -> dict[str, Any]:
        """The catalog file form that :func:`load_catalog` accepts."""
        descs = []
        binds = []
        for a in sorted(self.entries):
            e = self.entries[a]
            descs.append(
                {"action": a, "owner": e.owner, "capabilities": e.descriptor.to_json(), "reasons": dict(e.reasons)}
            )
            if e.handler is not None:
                binds.append(
                    {
                        "action": a,
                        "owner": e.owner,
                        "handler": e.handler,
                        "implementationVersion": e.implementation_version,
                    }
                )
        return {
            "catalogVersion": CATALOG_VERSION,
            "contractVersion": CONTRACT_VERSION,
            "binding": self.scope.to_json(),
            "descriptors": descs,
            "bindings": binds,
        }

    def to_text(self) -> str:
        """Pretty JSON (indent 2, sorted keys, trailing newline): ``loopc catalog``."""
        return json.dumps(self.to_json(), ensure_ascii=False, indent=2, sort_keys=True) + "\n"


@attrs.frozen
class Problem:
    """One rejection: ``code`` LP6xxx, ``pointer`` into the catalog file,
    optional related pointer (the earlier, conflicting submission)."""

    code: str
    pointer: str
    message: str
    related: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class _Desc:
    owner: str
    descriptor: CapabilityDescriptor
    reasons: Mapping[str, str]
    pointer: str


@attrs.frozen
class _Bind:
    owner: str
    handler: str
    implementation_version: str
    descriptor: CapabilityDescriptor | None
    pointer: str


class CatalogBuilder:
    """Builds one catalog generation for ``scope`` (docs/plan.md#conflict-policy).

    Submit every descriptor and binding, then :meth:`seal`.  A byte-identical
    re-submission (same owner, same descriptor / same handler binding) is
    idempotent; any other second submission for an action rejects the whole
    generation.
    """

    def __init__(self, scope: BindingScope) -> None:
        self.scope = scope
        self.problems: list[Problem] = []
        self._descs: dict[str, _Desc] = {}
        self._binds: dict[str, _Bind] = {}

    def _action_ok(self, action: str, pointer: str) -> bool:
        if action in ACTION_TYPES:
            return True
        near = difflib.get_close_matches(action, ACTION_TYPES, n=1, cutoff=0.6)
        hint = f"; did you mean '{near[0]}'?" if near else f" (action types: {', '.join(ACTION_TYPES)})"
        self.problems.append(Problem("LP6004", pointer, f"'{action}' is not an action type of loop.plan/v1{hint}"))
        return False

    def submit_descriptor(
        self,
        action: str,
        owner: str,
        descriptor: CapabilityDescriptor,
        reasons: Mapping[str, str] | None = None,
        *,
        pointer: str = "",
    ) -> None:
        """Register ``owner``'s descriptor for ``action``."""
        if not self._action_ok(action, f"{pointer}/action"):
            return
        prev = self._descs.get(action)
        if prev is None:
            self._descs[action] = _Desc(owner, descriptor, dict(reasons or {}), pointer)
            return
        if prev.owner != owner:
            self.problems.append(
                Problem(
                    "LP6010",
                    f"{pointer}/owner",
                    f"action '{action}' is already owned by '{prev.owner}'; a second owner '{owner}' "
                    "rejects the whole catalog",
                    (("first registration", f"{prev.pointer}/owner"),),
                )
            )
        elif prev.descriptor != descriptor:
            diff = [n for n in FIELDS if prev.descriptor.to_json()[n] != descriptor.to_json()[n]]
            self.problems.append(
                Problem(
                    "LP6012",
                    f"{pointer}/capabilities/{diff[0]}" if diff else f"{pointer}/capabilities",
                    f"action '{action}' is registered twice by '{owner}' with different capabilities "
                    f"({', '.join(diff)}); one action has exactly one descriptor",
                    (("first registration", f"{prev.pointer}/capabilities"),),
                )
            )

    def submit_binding(
        self,
        action: str,
        owner: str,
        handler: str,
        implementation_version: str,
        descriptor: CapabilityDescriptor | None = None,
        *,
        pointer: str = "",
    ) -> None:
        """Register the handler binding of ``action``; ``descriptor`` is the
        capability set the handler declares (optional; it may not differ
        from, and above all not broaden, the owner's descriptor)."""
        if not self._action_ok(action, f"{pointer}/action"):
            return
        prev = self._binds.get(action)
        new = _Bind(owner, handler, implementation_version, descriptor, pointer)
        if prev is None:
            self._binds[action] = new
            return
        if prev.owner != owner:
            self.problems.append(
                Problem(
                    "LP6010",
                    f"{pointer}/owner",
                    f"action '{action}' already has a handler binding from '{prev.owner}'; a binding from "
                    f"'{owner}' rejects the whole catalog",
                    (("first binding", f"{prev.pointer}/owner"),),
                )
            )
        elif (prev.handler, prev.implementation_version) != (handler, implementation_version):
            field = "handler" if prev.handler != handler else "implementationVersion"
            self.problems.append(
                Problem(
                    "LP6011",
                    f"{pointer}/{field}",
                    f"action '{action}' already has the handler binding '{prev.handler}' version "
                    f"'{prev.implementation_version}'; a second binding '{handler}' version "
                    f"'{implementation_version}' rejects the whole catalog (no last-writer-wins)",
                    (("first binding", f"{prev.pointer}/{field}"),),
                )
            )
        elif prev.descriptor != descriptor:
            self.problems.append(
                Problem(
                    "LP6012",
                    f"{pointer}/capabilities",
                    f"action '{action}' is bound twice with different declared capabilities",
                    (("first binding", f"{prev.pointer}"),),
                )
            )

    def seal(self) -> Catalog | None:
        """The sealed catalog, or ``None`` when any problem was recorded
        (:attr:`problems`)."""
        entries: dict[str, CatalogEntry] = {}
        for action, b in sorted(self._binds.items()):
            d = self._descs.get(action)
            if d is None:
                self.problems.append(
                    Problem(
                        "LP6014",
                        f"{b.pointer}/action",
                        f"handler binding for '{action}' but no descriptor registers that action; "
                        "add its descriptor (a binding never creates capabilities)",
                    )
                )
                continue
            if b.owner != d.owner:
                self.problems.append(
                    Problem(
                        "LP6010",
                        f"{b.pointer}/owner",
                        f"action '{action}' is owned by '{d.owner}'; a handler binding from '{b.owner}' "
                        "cannot override it",
                        (("owner registration", f"{d.pointer}/owner"),),
                    )
                )
                continue
            if b.descriptor is not None and b.descriptor != d.descriptor:
                wider = broadens(d.descriptor, b.descriptor)
                if wider:
                    name, was, now = wider[0]
                    self.problems.append(
                        Problem(
                            "LP6013",
                            f"{b.pointer}/capabilities/{name}",
                            f"the handler binding for '{action}' broadens {name} from '{was}' to '{now}'; "
                            "a runtime binding cannot broaden its owner's descriptor",
                            (("owner's descriptor", f"{d.pointer}/capabilities/{name}"),),
                        )
                    )
                else:
                    diff = [n for n in FIELDS if d.descriptor.to_json()[n] != b.descriptor.to_json()[n]]
                    self.problems.append(
                        Problem(
                            "LP6012",
                            f"{b.pointer}/capabilities/{diff[0]}" if diff else f"{b.pointer}/capabilities",
                            f"the handler binding for '{action}' declares capabilities that differ from its "
                            f"owner's descriptor ({', '.join(diff)}); restate them exactly or omit them",
                            (("owner's descriptor", f"{d.pointer}/capabilities"),),
                        )
                    )
                continue
        if self.problems:
            return None
        for action, d in sorted(self._descs.items()):
            bound = self._binds.get(action)
            entries[action] = CatalogEntry(
                action,
                d.owner,
                d.descriptor,
                bound.handler if bound else None,
                bound.implementation_version if bound else None,
                d.reasons,
            )
        return Catalog(self.scope, dict(sorted(entries.items())))


def builtin_catalog() -> Catalog:
    """The built-in catalog: every action type owned by ``loop.platform`` and
    bound to its reference handler ``loop.reference/<action>`` version 1."""
    b = CatalogBuilder(BUILTIN_SCOPE)
    for action, (desc, reasons) in builtin_descriptors().items():
        b.submit_descriptor(action, PLATFORM_OWNER, desc, reasons)
        b.submit_binding(action, PLATFORM_OWNER, builtin_handler(action), BUILTIN_IMPLEMENTATION_VERSION)
    cat = b.seal()
    assert cat is not None, b.problems
    return cat


# ---------------------------------------------------------------------------
# the catalog file
# ---------------------------------------------------------------------------


@attrs.frozen
class CatalogLoad:
    """Result of :func:`load_catalog`: ``catalog`` is None exactly when a
    diagnostic has error severity."""

    catalog: Catalog | None
    diagnostics: tuple[Diagnostic, ...]

    @property
    def ok(self) -> bool:
        return self.catalog is not None


class _Reject(Exception):
    def __init__(self, pointer: str, message: str, code: str = "LP6001") -> None:
        super().__init__(message)
        self.pointer = pointer
        self.message = message
        self.code = code


def _obj(v: Any, p: str, required: Sequence[str], optional: Sequence[str] = ()) -> Mapping[str, Any]:
    if not isinstance(v, dict):
        raise _Reject(p, f"expected an object with {', '.join(required)}")
    allowed = (*required, *optional)
    for k in v:
        if k not in allowed:
            near = difflib.get_close_matches(str(k), allowed, n=1, cutoff=0.6)
            hint = f"; did you mean '{near[0]}'?" if near else f" (allowed: {', '.join(allowed)})"
            raise _Reject(f"{p}/{_esc(str(k))}", f"unknown member '{k}'{hint}")
    for k in required:
        if k not in v:
            raise _Reject(p, f"missing member '{k}'")
    return v


def _esc(k: str) -> str:
    return k.replace("~", "~0").replace("/", "~1")


def _str(v: Any, p: str, what: str) -> str:
    if not isinstance(v, str) or not _NAME_RE.match(v):
        raise _Reject(
            p,
            f"{what} must be a non-empty name of letters, digits and . _ : @ + - (segments "
            "separated by '/', at most 200 characters each)",
        )
    return v


def _list(v: Any, p: str) -> list[Any]:
    if not isinstance(v, list):
        raise _Reject(p, "expected a list")
    if len(v) > MAX_SUBMISSIONS:
        raise _Reject(p, f"at most {MAX_SUBMISSIONS} submissions per list ({len(v)} given)", "LP6003")
    return v


def _reasons(v: Any, p: str) -> dict[str, str]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise _Reject(p, "expected an object: capability name → reason text")
    out = {}
    for k, t in v.items():
        if k not in FIELDS:
            raise _Reject(f"{p}/{_esc(str(k))}", f"'{k}' is not a capability name")
        if not isinstance(t, str) or len(t) > 2000:
            raise _Reject(f"{p}/{_esc(k)}", "a reason is a string of at most 2000 characters")
        out[k] = t
    return out


def _descriptor(v: Any, p: str) -> CapabilityDescriptor:
    try:
        return descriptor_from_json(v, p)
    except DescriptorError as exc:
        raise _Reject(
            exc.pointer, exc.message, "LP6005" if isinstance(exc, InconsistentDescriptor) else "LP6001"
        ) from None


def parse_catalog_data(data: Any) -> tuple[Catalog | None, list[Problem]]:
    """Catalog JSON data → sealed catalog or problems (pointers into ``data``).
    Structural problems stop at the first one; conflict problems are all
    reported."""
    try:
        root = _obj(data, "", ("catalogVersion", "contractVersion", "binding", "descriptors", "bindings"))
        if root["catalogVersion"] != CATALOG_VERSION:
            raise _Reject(
                "/catalogVersion",
                f"unsupported catalogVersion {root['catalogVersion']!r}; this loopc reads {CATALOG_VERSION!r}",
                "LP6002",
            )
        if root["contractVersion"] != CONTRACT_VERSION:
            raise _Reject(
                "/contractVersion",
                f"unsupported contractVersion {root['contractVersion']!r}; this loopc reads {CONTRACT_VERSION!r}",
                "LP6002",
            )
        s = _obj(root["binding"], "/binding", ("org", "installation", "runtimeCapability", "generation"))
        scope = BindingScope(
            *(_str(s[k], f"/binding/{k}", k) for k in ("org", "installation", "runtimeCapability", "generation"))
        )
        builder = CatalogBuilder(scope)
        for i, d in enumerate(_list(root["descriptors"], "/descriptors")):
            p = f"/descriptors/{i}"
            d = _obj(d, p, ("action", "owner", "capabilities"), ("reasons",))
            action = _str(d["action"], f"{p}/action", "action")
            owner = _str(d["owner"], f"{p}/owner", "owner")
            builder.submit_descriptor(
                action,
                owner,
                _descriptor(d["capabilities"], f"{p}/capabilities"),
                _reasons(d.get("reasons"), f"{p}/reasons"),
                pointer=p,
            )
        for i, b in enumerate(_list(root["bindings"], "/bindings")):
            p = f"/bindings/{i}"
            b = _obj(b, p, ("action", "owner", "handler", "implementationVersion"), ("capabilities",))
            caps = b.get("capabilities")
            builder.submit_binding(
                _str(b["action"], f"{p}/action", "action"),
                _str(b["owner"], f"{p}/owner", "owner"),
                _str(b["handler"], f"{p}/handler", "handler"),
                _str(b["implementationVersion"], f"{p}/implementationVersion", "implementationVersion"),
                None if caps is None else _descriptor(caps, f"{p}/capabilities"),
                pointer=p,
            )
    except _Reject as exc:
        return None, [Problem(exc.code, exc.pointer, exc.message)]
    cat = builder.seal()
    return cat, list(builder.problems)


def _node_at(root: Any, pointer: str) -> Any:
    """Deepest YAML node on ``pointer`` (RFC 6901) below ``root``."""
    from loopc.compiler.yamlnodes import YMap, YSeq

    node = root
    if not pointer:
        return node
    for raw in pointer.split("/")[1:]:
        seg = raw.replace("~1", "/").replace("~0", "~")
        nxt = None
        if isinstance(node, YMap):
            if seg in node:
                # point a missing-value problem at the key; otherwise at the value
                nxt = node.get(seg)
        elif isinstance(node, YSeq) and seg.isdigit() and int(seg) < len(node.items):
            nxt = node.items[int(seg)]
        if nxt is None:
            if isinstance(node, YMap) and seg in node:
                return node.key_node(seg)
            return node
        node = nxt
    return node


def _unknown_key_node(root: Any, pointer: str) -> Any:
    """For an unknown-member pointer, the key node itself."""
    from loopc.compiler.yamlnodes import YMap

    parent_ptr, _, last = pointer.rpartition("/")
    parent = _node_at(root, parent_ptr)
    seg = last.replace("~1", "/").replace("~0", "~")
    if isinstance(parent, YMap) and seg in parent:
        return parent.key_node(seg)
    return None


def load_catalog(src: str | bytes, *, path: str | None = None) -> CatalogLoad:
    """Read a catalog file (JSON or YAML text or bytes; at most 1 MiB,
    nesting 64, 100,000 YAML nodes) and seal it.  Never raises: YAML
    problems are LP1xxx, catalog problems LP6001–LP6014, each positioned in
    the file (1-based line/column, RFC 6901 pointer)."""
    from loopc import codes
    from loopc.compiler.report import Reporter
    from loopc.compiler.yamlload import load

    rep = Reporter()
    try:
        doc = load(src, rep, path=path)
    except Exception as exc:  # pragma: no cover - the YAML layer never raises on bad input
        return CatalogLoad(None, (_diag("LP6001", None, "", f"unreadable catalog: {exc}"),))
    from loopc.compiler.report import finish

    yaml_diags = [d for d in rep.sorted() if d.code != "LP1009"]
    text = doc.text if doc is not None else None
    if any(d.is_error for d in yaml_diags) or doc is None or doc.root is None:
        if not yaml_diags:
            yaml_diags = [_diag("LP6001", None, "", "the catalog file is empty")]
        return CatalogLoad(None, finish(yaml_diags, text, path))
    data = doc.root.to_data()
    cat, problems = parse_catalog_data(data)
    diags = Reporter()
    diags.extend(yaml_diags)
    for pr in problems:
        node = _unknown_key_node(doc.root, pr.pointer) if "unknown member" in pr.message else None
        node = node or _node_at(doc.root, pr.pointer)
        rel = tuple(Related(m, _node_at(doc.root, rp).span, rp) for m, rp in pr.related)
        diags.add(
            Diagnostic(
                pr.code,
                codes.get(pr.code).name,
                codes.get(pr.code).severity,
                pr.message,
                node.span,
                pr.pointer,
                related=rel,
            )
        )
    return CatalogLoad(cat if not problems else None, finish(diags.diagnostics, text, path))


def _diag(code: str, span: Span | None, pointer: str, message: str) -> Diagnostic:
    from loopc import codes

    c = codes.get(code)
    return Diagnostic(code, c.name, c.severity, message, span, pointer)


#: Byte budget of a catalog file (a larger one is LP1010 from
#: :func:`load_catalog`'s YAML layer; readers read at most one byte more).
MAX_CATALOG_BYTES = 1024 * 1024


def load_catalog_file(path: str) -> CatalogLoad:
    """Read ``path`` (at most :data:`MAX_CATALOG_BYTES` + 1 bytes, only a
    regular file, never blocking on a FIFO or device:
    :func:`loopc.boundedio.read_bounded`) and :func:`load_catalog` it;
    :class:`loopc.boundedio.ReadError` (an ``OSError`` with a precise
    ``reason``) propagates (the CLI maps it to exit code 2)."""
    from loopc.boundedio import read_bounded

    return load_catalog(read_bounded(path, MAX_CATALOG_BYTES), path=path)
