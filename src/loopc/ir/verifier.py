"""The artifact verifier (``loopc verify``, :func:`loopc.ir.verify`;
docs/ir.md#the-verifier).

In the spirit of WebAssembly validation: after the strict decode
(:func:`loopc.ir.decoder.decode`: JSON, envelope, closed per-version
surface, cross-references), prove the typed model (:mod:`loopc.ir.model`)
well-formed as a whole, so a runtime that accepts only verified artifacts
never meets a state no compiler would produce.  Every violation carries an
RFC 6901 pointer, a message and a stable ``code``:

* ``decode`` — the strict decoder rejected the bytes (one violation);
* ``digest`` — the semantic digest does not match the content;
* ``budget`` — nodes > 512, edges > 2,048 or canonical bytes > 8 MiB;
* ``graph`` — a node unreachable from the entry, a cycle that does not pass
  through a loop's ``continue``/``break`` port, a ``continue``/``break`` edge from
  outside that loop's body;
* ``scope`` — a scope stack entry without a matching declaration (a scope
  naming an End as loop owner), an unknown branch, a fork / all_match
  switch / fan-out / loop without its declaration, declared branches that
  differ from the owner's, a declaration whose ``join`` does not name it (or
  a join naming an owner whose declaration does not name the join);
* ``disposition`` — a failure disposition or implicit route naming a
  non-fork/switch (or non-fan-out) owner, an unknown branch, the wrong join,
  an owner that is not the innermost failure scope of the element, or
  ``fail_plan`` inside a fork/all_match/fan-out scope;
* ``instr`` — an instruction tree ill-typed against its descriptors (a
  literal whose value is not of its type, ``and``/``or``/``not`` over
  non-booleans, comparisons not typed ``boolean``, ...), a reference root
  not legal in its context, a reference to a field the contract does not
  declare;
* ``bind`` — a binding to a field the destination contract does not
  declare, a required destination field without default left unbound, a
  bound value whose type cannot fit the destination field;
* ``contract`` — a FieldSchema whose default does not fit its type, enum
  values that repeat.

Never raises on bad input.
"""
from __future__ import annotations

import re
from typing import Any, Iterator, Mapping

import attrs

from loopc import limits as _limits
from loopc.kinds import tables as _kind_tables

from loopc.ir.model import (
    Artifact, Binary, Edge, FieldSchema, Instr, JoinConfig, Lit, LoopConfig, MakeArray, MakeObject, Nary, Node,
    Ref, ScopeRef, SetVariableConfig, SwitchConfig, Template, TypeDesc, Unary, WaitConfig,
)

__all__ = ["Violation", "VerifyResult", "verify", "verify_artifact", "MAX_ARTIFACT_FILE_BYTES"]

#: Largest artifact file ``loopc verify`` reads (pretty output of an 8 MiB
#: canonical artifact stays well below it); the 8 MiB artifact budget applies
#: to the canonical bytes.
MAX_ARTIFACT_FILE_BYTES = 64 * 1024 * 1024
MAX_ARTIFACT_BYTES = 8 * 1024 * 1024
MAX_NODES = 512
MAX_EDGES = 2048
MAX_VIOLATIONS = 200


@attrs.frozen
class Violation:
    """One defect: ``pointer`` (RFC 6901, ``""`` = the whole document),
    ``message``, ``code`` (see the module docstring)."""

    pointer: str
    message: str
    code: str = "decode"

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.message}"


@attrs.frozen
class VerifyResult:
    """Outcome of :func:`verify`.

    * ``ok`` — no violation;
    * ``artifact`` — the decoded :class:`~loopc.ir.model.Artifact` when the
      strict decode succeeded (also when other checks failed), else ``None``;
    * ``violations`` — every violation found (at most 200), in pointer order
      of discovery;
    * ``message`` — one line: ``ok: <version> <digest>`` or the first violation;
    * ``computed_digest`` — the recomputed digest (when decoding succeeded).
    """

    ok: bool
    message: str
    artifact: Artifact | None = None
    computed_digest: str | None = None
    violations: tuple[Violation, ...] = ()


_STRUCTURAL = (b",", b":", b"[", b"]", b"{", b"}", b'"')


def canonical_floor(data: bytes | bytearray | str) -> int:
    """A lower bound on the length of ``data``'s canonical bytes, computed
    before any parsing: every literal ``, : [ ] { } "`` byte of a JSON
    text appears unchanged in its RFC 8785 form (structural characters stay,
    and inside strings they are never escaped, ``"`` as ``\\"`` in both).
    Above :data:`MAX_ARTIFACT_BYTES` the artifact is over budget whatever
    its whitespace, so the verifier refuses it without building a value
    (a 64 MiB file of ``[0,0,...]`` would otherwise cost seconds and
    hundreds of megabytes).  Linear, at C speed."""
    b = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    return sum(b.count(c) for c in _STRUCTURAL)


def verify(data: bytes | str) -> VerifyResult:
    """Strictly decode ``data`` and verify the artifact (module docstring).
    Never raises."""
    from loopc.ir.decoder import DecodeError, decode

    if isinstance(data, (bytes, bytearray)) and len(data) > MAX_ARTIFACT_FILE_BYTES:
        v = Violation("", f"artifact is {len(data)} bytes; the verifier reads at most "
                          f"{MAX_ARTIFACT_FILE_BYTES} bytes", "budget")
        return VerifyResult(False, f"invalid artifact: {v.message}", violations=(v,))
    floor = canonical_floor(data)
    if floor > MAX_ARTIFACT_BYTES:
        v = Violation("", f"canonical artifact is at least {floor} bytes (its structural characters alone); the "
                          f"budget is {MAX_ARTIFACT_BYTES}", "budget")
        return VerifyResult(False, f"invalid artifact: {v.message}", violations=(v,))
    try:
        art = decode(data)
    except DecodeError as exc:
        where = f" at {exc.pointer}" if exc.pointer else ""
        v = Violation(exc.pointer, exc.message, "decode")
        return VerifyResult(False, f"invalid artifact{where}: {exc.message}", violations=(v,))
    except Exception as exc:  # noqa: BLE001 - the verifier never raises on bad input
        v = Violation("", f"cannot decode: {type(exc).__name__}: {exc}", "decode")
        return VerifyResult(False, f"invalid artifact: {v.message}", violations=(v,))
    return verify_artifact(art, raw_len=len(data) if isinstance(data, (bytes, bytearray)) else None)


def verify_artifact(art: Artifact, *, raw_len: int | None = None) -> VerifyResult:
    """Verify an already decoded artifact (digest and whole-artifact rules)."""
    out: list[Violation] = []
    computed: str | None = None
    try:
        computed = art.recompute_digest()
        if computed != art.digest:
            out.append(Violation("/digest", f"digest mismatch: artifact says {art.digest}, content hashes to "
                                            f"{computed}", "digest"))
        _Checker(art, out, raw_len).run()
    except _Full:
        pass
    except Exception as exc:  # noqa: BLE001 - a verifier defect must not crash a runtime
        out.append(Violation("", f"internal verifier error: {type(exc).__name__}: {exc}", "internal"))
    if out:
        first = out[0]
        where = f" at {first.pointer}" if first.pointer else ""
        if first.code == "digest":
            msg = first.message
        else:
            msg = f"invalid artifact{where}: {first.message}"
        if len(out) > 1:
            msg += f" (and {len(out) - 1} more)"
        return VerifyResult(False, msg, art, computed, tuple(out))
    return VerifyResult(True, f"ok: {art.artifact_version} {computed}", art, computed)


class _Full(Exception):
    pass


def _esc(k: str) -> str:
    return k.replace("~", "~0").replace("/", "~1")


_STRINGY = frozenset(("string", "enum", "duration", "datetime", "channel", "member", "agent"))
_DATETIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})\Z")
_ORDERED = frozenset(("string", "enum", "number", "duration", "datetime", "unknown", "null"))
_FAIL_SCOPES = ("fork", "all_match", "fan_out")


def _value_fits(kind: str, depth: int, value: Any) -> str | None:
    """Why JSON ``value`` is not of type ``array<…kind…>`` (or ``None``)."""
    stack = [(value, depth)]
    while stack:
        v, d = stack.pop()
        if v is None and (kind in ("unknown", "null") or d >= 0):
            # null is the absent optional value of any type
            continue
        if d > 0:
            if not isinstance(v, list):
                return f"expected an array, found {_jkind(v)}"
            stack.extend((x, d - 1) for x in v)
            continue
        if kind == "unknown":
            continue
        if kind in _STRINGY:
            if not isinstance(v, str):
                return f"expected a {kind} string, found {_jkind(v)}"
            if kind == "duration":
                why = _limits.duration_problem(v)  # the compiler's bounds, one source
                if why is not None:
                    return f"'{v[:40]}' is not an accepted duration: {why}"
            if kind == "datetime" and not _DATETIME.match(v):
                return f"'{v[:40]}' is not an RFC 3339 datetime"
        elif kind == "number":
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return f"expected a number, found {_jkind(v)}"
        elif kind == "boolean":
            if not isinstance(v, bool):
                return f"expected a boolean, found {_jkind(v)}"
        elif kind in ("object", "scope"):
            if not isinstance(v, dict):
                return f"expected an object, found {_jkind(v)}"
        elif kind == "null":
            return f"expected null, found {_jkind(v)}"
    return None


def _jkind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    return "an object"


def _field_desc(fs: FieldSchema) -> tuple[str, int]:
    depth = 0
    cur: FieldSchema | None = fs
    while cur is not None and cur.type == "array":
        depth += 1
        cur = cur.items
    return ("unknown" if cur is None else cur.type), depth


def _fits(t: TypeDesc, fs: FieldSchema) -> bool:
    """Can a value of static type ``t`` be bound to field ``fs``?"""
    if t.kind in ("unknown", "null"):
        return True
    kind, depth = _field_desc(fs)
    if kind in ("unknown", "object") and t.depth >= depth:
        return True
    if t.depth != depth:
        return False
    if t.kind == kind:
        return True
    return t.kind in _STRINGY and kind in _STRINGY and "string" in (t.kind, kind)


# A scope of the reference-root table: contract roots and what they carry.
_UNKNOWN = object()


class _Checker:
    def __init__(self, art: Artifact, out: list[Violation], raw_len: int | None) -> None:
        self.art = art
        self.plan = art.plan
        self.out = out
        self.raw_len = raw_len
        self.nodes = self.plan.nodes_by_id
        self.node_index = {n.id: i for i, n in enumerate(self.plan.nodes)}
        self.edge_index = {e.id: i for i, e in enumerate(self.plan.edges)}

    def add(self, pointer: str, message: str, code: str) -> None:
        self.out.append(Violation(pointer, message, code))
        if len(self.out) >= MAX_VIOLATIONS:
            raise _Full

    def run(self) -> None:
        self.budgets()
        self.contracts()
        self.scopes()
        self.graph()
        self.dispositions()
        self.binds()
        self.instructions()

    # -- budgets -------------------------------------------------------------
    def budgets(self) -> None:
        p = self.plan
        if len(p.nodes) > MAX_NODES:
            self.add("/plan/nodes", f"{len(p.nodes)} nodes exceed the budget of {MAX_NODES}", "budget")
        if len(p.edges) > MAX_EDGES:
            self.add("/plan/edges", f"{len(p.edges)} edges exceed the budget of {MAX_EDGES}", "budget")
        if self.raw_len is None or self.raw_len > MAX_ARTIFACT_BYTES:
            size = len(self.art.to_bytes())
            if size > MAX_ARTIFACT_BYTES:
                self.add("", f"canonical artifact is {size} bytes; the budget is {MAX_ARTIFACT_BYTES}", "budget")

    # -- contracts -----------------------------------------------------------
    def _contracts(self) -> Iterator[tuple[str, Mapping[str, FieldSchema]]]:
        p = self.plan
        yield "/plan/input", p.input
        yield "/plan/output", p.output
        yield "/plan/state", p.state
        for i, n in enumerate(p.nodes):
            base = f"/plan/nodes/{i}"
            yield f"{base}/input", n.input
            for j, sp in enumerate(n.source_ports):
                if sp.output is not None:
                    yield f"{base}/ports/source/{j}/output", sp.output
            c = n.config
            if isinstance(c, JoinConfig):
                yield f"{base}/config/result", c.result
            elif isinstance(c, LoopConfig):
                yield f"{base}/config/state", c.state
            elif getattr(c, "callback_output", None) is not None:
                yield f"{base}/config/callbackOutput", c.callback_output  # type: ignore[attr-defined]

    def contracts(self) -> None:
        for ptr, contract in self._contracts():
            for name, fs in contract.items():
                p = f"{ptr}/{_esc(name)}"
                cur: FieldSchema | None = fs
                while cur is not None:
                    if cur.values is not None and len(set(cur.values)) != len(cur.values):
                        self.add(f"{p}/values", "enum values must be unique", "contract")
                    if cur.has_default:
                        kind, depth = _field_desc(cur)
                        why = _value_fits(kind, depth, cur.default)
                        if why is None and cur.type == "enum" and cur.values is not None \
                                and cur.default is not None and cur.default not in cur.values:
                            why = f"'{cur.default}' is not one of the enum values"
                        if why is not None:
                            self.add(f"{p}/default", f"default does not fit type {cur.type}: {why}", "contract")
                    cur = cur.items
                    p += "/items"

    # -- scopes --------------------------------------------------------------
    @staticmethod
    def _owner_kind(n: Node) -> str | None:
        """The scope ``n`` opens, as its kind declares (:attr:`loopc.kinds.Kind.scope`)."""
        k = _kind_tables().kinds.get(n.op)
        return k.opened_scope(n.config) if k is not None else None

    @staticmethod
    def _branches(n: Node) -> tuple[str, ...] | None:
        c = n.config
        if n.op == "fork":
            return c.branches  # type: ignore[attr-defined]
        if isinstance(c, SwitchConfig):
            return tuple(case.port for case in c.cases) + (c.default,)
        return None

    def _check_stack(self, ptr: str, stack: tuple[ScopeRef, ...]) -> None:
        decls = self.plan.scopes_by_owner
        for j, s in enumerate(stack):
            d = decls.get(s.owner)
            owner = self.nodes.get(s.owner)
            if d is None or d.kind != s.kind or owner is None or self._owner_kind(owner) != s.kind:
                what = f"'{s.owner}' ({owner.op})" if owner is not None else f"'{s.owner}'"
                self.add(f"{ptr}/scope/{j}", f"scope entry names {what} as {s.kind} owner, but it declares no "
                                             f"{s.kind} scope", "scope")
                continue
            if s.kind in ("fork", "all_match") and (d.branches is None or s.branch not in d.branches):
                self.add(f"{ptr}/scope/{j}/branch", f"'{s.branch}' is not a branch of {s.kind} '{s.owner}'", "scope")

    def scopes(self) -> None:
        p = self.plan
        decls = p.scopes_by_owner
        for i, n in enumerate(p.nodes):
            self._check_stack(f"/plan/nodes/{i}", n.scope)
            kind = self._owner_kind(n)
            if kind is not None and (n.id not in decls or decls[n.id].kind != kind):
                self.add(f"/plan/nodes/{i}", f"{kind} '{n.id}' has no {kind} scope declaration", "scope")
            if isinstance(n.config, JoinConfig):
                owner = n.config.owner
                d = decls.get(owner)
                if d is not None and d.join != n.id:
                    self.add(f"/plan/nodes/{i}/config",
                             f"join '{n.id}' closes '{owner}', but the scope declaration of '{owner}' names "
                             f"join {d.join!r}", "scope")
        for i, e in enumerate(p.edges):
            self._check_stack(f"/plan/edges/{i}", e.scope)
        for i, d in enumerate(p.scopes):
            owner_node = self.nodes.get(d.owner)
            if owner_node is None:
                continue
            want = self._branches(owner_node)
            if d.kind in ("fork", "all_match") and d.branches != want:
                self.add(f"/plan/scopes/{i}/branches", f"declared branches {list(d.branches or ())} differ from "
                                                       f"the branches of '{d.owner}' {list(want or ())}", "scope")
            if d.join is not None:
                j = self.nodes.get(d.join)
                if j is None or not isinstance(j.config, JoinConfig) or j.config.owner != d.owner:
                    self.add(f"/plan/scopes/{i}/join", f"join '{d.join}' does not close '{d.owner}'", "scope")

    # -- graph -----------------------------------------------------------------
    def graph(self) -> None:
        import networkx as nx

        p = self.plan
        g = nx.DiGraph()
        g.add_nodes_from(self.nodes)
        for e in p.edges:
            if e.to_port not in ("continue", "break"):
                g.add_edge(e.from_node, e.to_node, id=e.id)
        full = g.copy()
        for e in p.edges:
            full.add_edge(e.from_node, e.to_node)
        reach = nx.descendants(full, p.entry.node) | {p.entry.node}
        for i, n in enumerate(p.nodes):
            if n.id not in reach:
                self.add(f"/plan/nodes/{i}", f"node '{n.id}' is not reachable from the entry '{p.entry.node}'",
                         "graph")
        try:
            cycle = nx.find_cycle(g)
        except nx.NetworkXNoCycle:
            cycle = None
        if cycle:
            first = g.edges[cycle[0][0], cycle[0][1]]["id"]
            path = " → ".join([cycle[0][0]] + [b for _, b in cycle])
            self.add(f"/plan/edges/{self.edge_index[first]}",
                     f"cycle {path} does not pass through a loop's continue or break port (cycles exist only inside loops)",
                     "graph")
        for i, e in enumerate(p.edges):
            if e.to_port in ("continue", "break"):
                if not any(s.kind == "loop" and s.owner == e.to_node for s in e.scope):
                    self.add(f"/plan/edges/{i}/to", f"edge '{e.id}' enters '{e.to_port}' of loop '{e.to_node}' "
                                                    "from outside its body", "graph")

    # -- dispositions ------------------------------------------------------------
    def _check_disp(self, ptr: str, d: Any, stack: tuple[ScopeRef, ...], node: Node | None) -> None:
        inner = next((s for s in reversed(stack) if s.kind in _FAIL_SCOPES), None)
        a = d.action
        if a == "fail_plan":
            if inner is not None:
                self.add(f"{ptr}/action", f"fail_plan inside {inner.kind} '{inner.owner}' (its failures end the "
                                          "branch or item)", "disposition")
            return
        if a == "never":
            if node is None or not isinstance(node.config, JoinConfig) or node.config.fan_out_id is None:
                self.add(f"{ptr}/action", "'never' marks only a fan-out join's failed port", "disposition")
            return
        owner = self.nodes.get(d.owner) if d.owner is not None else None
        want = ("fork", "all_match") if a == "fail_branch" else ("fan_out",)
        kind = self._owner_kind(owner) if owner is not None else None
        if kind not in want:
            what = f"'{d.owner}' ({owner.op})" if owner is not None else f"'{d.owner}'"
            self.add(f"{ptr}/owner", f"{a} names {what}, which is not a "
                                     f"{' or all_match switch'.join(('fork', '')) if a == 'fail_branch' else 'fan_out'}",
                     "disposition")
            return
        decl = self.plan.scopes_by_owner.get(owner.id)  # type: ignore[union-attr]
        if a == "fail_branch" and (decl is None or decl.branches is None or d.branch not in decl.branches):
            self.add(f"{ptr}/branch", f"'{d.branch}' is not a branch of '{d.owner}'", "disposition")
            return
        if decl is not None and d.join != decl.join:
            self.add(f"{ptr}/join", f"join {d.join!r} is not the join of '{d.owner}' ({decl.join!r})", "disposition")
        if inner is None or inner.owner != d.owner or (a == "fail_branch" and inner.branch != d.branch):
            self.add(f"{ptr}/owner", f"'{d.owner}' is not the innermost failure scope here", "disposition")

    def dispositions(self) -> None:
        for i, n in enumerate(self.plan.nodes):
            for j, sp in enumerate(n.source_ports):
                if sp.implicit is not None:
                    self._check_disp(f"/plan/nodes/{i}/ports/source/{j}/implicit", sp.implicit, n.scope, n)
        for i, e in enumerate(self.plan.edges):
            if e.disposition is not None:
                self._check_disp(f"/plan/edges/{i}/disposition", e.disposition, e.scope, None)

    # -- binds ---------------------------------------------------------------------
    def _check_bind(self, ptr: str, bind: Mapping[str, Instr], dest: Mapping[str, FieldSchema], what: str,
                    *, complete: bool) -> None:
        for k, instr in bind.items():
            fs = dest.get(k)
            if fs is None:
                self.add(f"{ptr}/{_esc(k)}", f"'{k}' is not a field of {what}", "bind")
            elif not _fits(instr.type, fs):
                self.add(f"{ptr}/{_esc(k)}", f"a {instr.type} value cannot be bound to '{k}' ({fs.type}) of {what}",
                         "bind")
        if complete:
            for k, fs in dest.items():
                if fs.required and not fs.has_default and k not in bind:
                    self.add(ptr, f"required field '{k}' of {what} is not bound", "bind")

    def binds(self) -> None:
        p = self.plan
        entry = self.nodes.get(p.entry.node)
        if entry is not None:
            self._check_bind("/plan/entry/bind", p.entry.bind, entry.input, f"the input of '{entry.id}'",
                             complete=False)
        for i, e in enumerate(p.edges):
            dst = self.nodes.get(e.to_node)
            if dst is None:
                continue
            if e.to_port in ("continue", "break") and isinstance(dst.config, LoopConfig):
                dest, what = dst.config.state, f"the state of loop '{dst.id}'"
            else:
                dest, what = dst.input, f"the input of '{dst.id}'"
            self._check_bind(f"/plan/edges/{i}/bind", e.bind, dest, what, complete=False)
        for i, n in enumerate(p.nodes):
            c = n.config
            base = f"/plan/nodes/{i}/config"
            if isinstance(c, SetVariableConfig):
                self._check_bind(f"{base}/assign", c.assign, p.state, "the Run state", complete=False)
            elif isinstance(c, LoopConfig):
                self._check_bind(f"{base}/init", c.init, c.state, f"the state of loop '{n.id}'", complete=False)
            elif isinstance(c, JoinConfig):
                self._check_bind(f"{base}/merge", c.merge, c.result, f"the result of join '{n.id}'", complete=False)

    # -- instructions ----------------------------------------------------------------
    def _roots_node(self, n: Node, suffix: str) -> dict[str, Any]:
        p = self.plan
        run = {"run.input": p.input, "run.state": p.state}
        if isinstance(n.config, WaitConfig) and suffix == "/condition":
            return {**run, "input": n.input}
        if isinstance(n.config, JoinConfig) and suffix.startswith("/merge/"):
            roots: dict[str, Any] = dict(run)
            owner = self.nodes.get(n.config.owner)
            if n.config.fan_out_id is not None:
                roots["items"] = _UNKNOWN
            elif owner is not None:
                keys = self._branches(owner) or ()
                if n.config.mode == "all":
                    roots["branches"] = ("branches", keys, n.input)
                else:
                    roots["winner"] = ("winner", n.input)
            return roots
        roots = {**run, "input": n.input}
        self._scope_roots(roots, n.scope)
        return roots

    def _scope_roots(self, roots: dict[str, Any], stack: tuple[ScopeRef, ...], *, fan_out: str | None = None,
                     loop: str | None = None) -> None:
        for s in reversed(stack):
            if s.kind == "fan_out" and fan_out is None:
                fan_out = s.owner
            if s.kind == "loop" and loop is None:
                loop = s.owner
        if fan_out is not None:
            roots["item"] = _UNKNOWN
        if loop is not None:
            ln = self.nodes.get(loop)
            roots["loop"] = ("loop", ln.config.state if ln is not None and isinstance(ln.config, LoopConfig) else None)

    def _roots_edge(self, e: Edge) -> dict[str, Any]:
        p = self.plan
        roots: dict[str, Any] = {"run.input": p.input, "run.state": p.state}
        src = self.nodes.get(e.from_node)
        if src is None:
            return roots
        if not isinstance(src.config, JoinConfig):
            roots["input"] = src.input
        try:
            out = src.port(e.from_port).output
        except KeyError:
            out = None
        if out is not None:
            roots["output"] = out
        self._scope_roots(roots, e.scope, fan_out=src.id if src.op == "fan_out" and e.from_port == "item" else None,
                          loop=src.id if src.op == "loop" and e.from_port == "body" else None)
        return roots

    def _positions(self) -> Iterator[tuple[str, Instr, dict[str, Any]]]:
        p = self.plan
        entry_roots = {"run.input": p.input, "run.state": p.state}
        for k, x in p.entry.bind.items():
            yield f"/plan/entry/bind/{_esc(k)}", x, entry_roots
        for i, n in enumerate(p.nodes):
            cache: dict[str, dict[str, Any]] = {}
            for suffix, x in n.config.instrs():
                key = "cond" if suffix == "/condition" else ("merge" if suffix.startswith("/merge/") else "")
                if key not in cache:
                    cache[key] = self._roots_node(n, suffix)
                yield f"/plan/nodes/{i}/config{suffix}", x, cache[key]
        for i, e in enumerate(p.edges):
            if e.bind:
                roots = self._roots_edge(e)
                for k, x in e.bind.items():
                    yield f"/plan/edges/{i}/bind/{_esc(k)}", x, roots

    def instructions(self) -> None:
        for ptr, root, roots in self._positions():
            # pointers of sub-instructions: recomputed alongside the walk
            stack: list[tuple[Instr, str]] = [(root, ptr)]
            while stack:
                i, p = stack.pop()
                self._instr(i, p, roots)
                if isinstance(i, MakeObject):
                    for j, k in enumerate(i.values):
                        stack.append((k, f"{p}/{3 + 2 * j}"))
                else:
                    for j, k in enumerate(i.children):
                        stack.append((k, f"{p}/{2 + j}"))

    def _instr(self, i: Instr, p: str, roots: dict[str, Any]) -> None:
        t = i.type
        cls = i.__class__
        if cls is Lit:
            why = _value_fits(t.kind, t.depth, i.value)  # type: ignore[union-attr]
            if why is not None:
                self.add(f"{p}/2", f"literal typed {t} does not hold a {t} value: {why}", "instr")
            return
        if cls is Ref:
            self._ref(i, p, roots)  # type: ignore[arg-type]
            return
        if cls is Binary:
            if not (t.kind == "boolean" and t.depth == 0):
                self.add(f"{p}/1", f"'{i.op}' yields a boolean, not {t}", "instr")
            a, b = i.left.type, i.right.type  # type: ignore[union-attr]
            if i.op in ("lt", "le", "gt", "ge"):
                for side, x in ((2, a), (3, b)):
                    if x.depth or x.kind not in _ORDERED:
                        self.add(f"{p}/{side}", f"'{i.op}' orders numbers, strings, durations or datetimes, not {x}",
                                 "instr")
            elif i.op in ("startsWith", "endsWith"):
                for side, x in ((2, a), (3, b)):
                    if x.depth or x.kind not in _STRINGY | {"unknown", "null"}:
                        self.add(f"{p}/{side}", f"'{i.op}' takes strings, not {x}", "instr")
            elif i.op == "in" and not (b.depth or b.kind in ("unknown", "null")):
                self.add(f"{p}/3", f"'in' needs an array on the right, not {b}", "instr")
            return
        if cls is Nary or (cls is Unary and i.op == "not"):
            if not (t.kind == "boolean" and t.depth == 0):
                self.add(f"{p}/1", f"'{i.op}' yields a boolean, not {t}", "instr")
            for j, k in enumerate(i.children):
                kt = k.type
                if kt.depth or kt.kind not in ("boolean", "unknown", "null"):
                    self.add(f"{p}/{2 + j}", f"'{i.op}' takes booleans, not {kt}", "instr")
            return
        if cls is Unary:  # length
            if not (t.kind == "number" and t.depth == 0):
                self.add(f"{p}/1", f"'length' yields a number, not {t}", "instr")
            kt = i.operand.type  # type: ignore[union-attr]
            if not kt.depth and kt.kind not in ("string", "enum", "unknown", "null"):
                self.add(f"{p}/2", f"'length' takes a string or an array, not {kt}", "instr")
            return
        if cls is Template:
            if t.depth or t.kind != "string":
                self.add(f"{p}/1", f"a template yields a string, not {t}", "instr")
            return
        if cls is MakeArray:
            if not t.depth:
                self.add(f"{p}/1", f"an array constructor yields an array, not {t}", "instr")
            return
        if cls is MakeObject:
            if t.depth or t.kind not in ("object", "scope", "responder", "unknown"):
                self.add(f"{p}/1", f"an object constructor yields an object, not {t}", "instr")

    def _ref(self, r: Ref, p: str, roots: dict[str, Any]) -> None:
        if r.root not in roots:
            legal = ", ".join(sorted(roots))
            self.add(f"{p}/2", f"reference root '{r.root}' is not available here (legal here: {legal})", "instr")
            return
        ctx = roots[r.root]
        path = r.path
        contract: Mapping[str, FieldSchema] | None = None
        rest: tuple[str, ...] = ()
        if isinstance(ctx, dict):
            contract, rest = ctx, path
        elif isinstance(ctx, tuple) and ctx[0] == "loop":
            if path and path[0] not in ("iteration", "state"):
                self.add(f"{p}/3", f"'loop.{path[0]}' does not exist (loop.iteration, loop.state.*)", "instr")
                return
            if len(path) >= 1 and path[0] == "state" and ctx[1] is not None:
                contract, rest = ctx[1], path[1:]
        elif isinstance(ctx, tuple) and ctx[0] == "branches":
            if path:
                if path[0] not in ctx[1]:
                    self.add(f"{p}/3", f"'{path[0]}' is not a branch here", "instr")
                    return
                contract, rest = ctx[2], path[1:]
        elif isinstance(ctx, tuple) and ctx[0] == "winner":
            if path and path[0] not in ("key", "value"):
                self.add(f"{p}/3", f"'winner.{path[0]}' does not exist (winner.key, winner.value.*)", "instr")
                return
            if path and path[0] == "value":
                contract, rest = ctx[1], path[1:]
        if contract is None or not rest:
            return
        fs = contract.get(rest[0])
        seg_ptr = f"{p}/{2 + 1 + (len(path) - len(rest))}"
        if fs is None:
            self.add(seg_ptr, f"reference to '{rest[0]}', which the contract here does not declare", "instr")
            return
        if len(rest) == 1 and not _fits(r.type, fs) and r.type.kind != "object":
            self.add(f"{p}/1", f"reference typed {r.type} reads '{rest[0]}' of type {fs.type}", "instr")
