"""Reference contexts and path typing (docs/reference.md#references: the
roots table and the types of context values).

A :class:`Context` says which reference roots exist at one location of the
plan (a node's configuration, an edge ``bind``, a join ``merge``, a wait
``condition``) and gives each root's static type.  :func:`resolve_path`
types a dotted path through that context: contracts are typed objects
(:func:`loopc.compiler.types.record_of`), ``scope`` values have ``kind`` and
``scopeId``, and anything below an untyped ``object`` is ``unknown`` (checked
at run time, docs/reference.md#references).  Problems come back as :class:`PathProblem`
values (code, message, offending segment, suggested replacement); the caller
reports them at the exact character.

Contexts are built by :class:`ContextBuilder`, which caches root types per
node and edge so that a plan is typed in time linear in its size.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from loopc.value import Value, field
from loopc.compiler import types as T
from loopc.compiler.model import End, Edge, FanOut, Fork, Join, Loop, Node, Plan, Switch
from loopc.compiler.ports import effective_input, output_contract, source_ports
from loopc.compiler.report import Reporter, decl_path
from loopc.compiler.scopemap import ScopeMap
from loopc.compiler.types import Type
from loopc.compiler.yamlnodes import YMap

#: Roots of docs/reference.md#references (``run`` stands for ``run.input``/``run.state``).
ROOTS = ("run", "input", "output", "branches", "winner", "item", "items", "loop")

#: Legacy roots (docs/reference.md#legacy-shapes) → (replacement for the root segment(s)
#: or None, advice).
LEGACY_ROOTS: Mapping[str, tuple[tuple[str, ...], str]] = {
    "inputs": (("input", "run.input"), "the activation input is `input.*`, the Plan input `run.input.*`"),
    "state": (("run.state",), "typed Run state is `run.state.*`"),
    "event": ((), "plans have no `event.*`: declare the value in the Plan input and read `run.input.*`"),
    "ctx": ((), "plans have no `ctx.*`: read `run.input.*`, `run.state.*` or the activation's `input.*`"),
    "steps": ((), "there is no global `steps.<node>.output` (a node may have many activations): "
                  "bind the value across an edge from `output.*` into the destination's input"),
}

#: ``item.*`` (docs/reference.md#references).
ITEM_TYPE = T.object_of((
    ("key", T.STRING),
    ("dependsOn", T.array_of(T.STRING)),
    ("workScope", T.SCOPE),
    ("relatedScopes", T.array_of(T.SCOPE)),
    ("responder", T.RESPONDER),
    ("instruction", T.STRING),
    ("dependencies", T.OBJECT),
))

#: One terminal item envelope of ``items`` (docs/reference.md#references).
ENVELOPE_TYPE = T.object_of((
    ("key", T.STRING),
    ("status", T.enum_of(("succeeded", "failed", "timed_out", "blocked", "cancelled"))),
    ("value", T.with_optional(T.OBJECT)),
    ("error", T.object_of((("code", T.STRING), ("detail", T.STRING)), optional=True)),
    ("blockedBy", T.array_of(T.STRING)),
))
#: ``items`` at a fan-out join's merge: source-ordered terminal envelopes.
ITEMS_TYPE = T.array_of(ENVELOPE_TYPE)


#: Placeholder for the location label in shared "not here" messages.
WHERE = "{where}"
_NO_ITEM = ("`item.*` is not available in {where}: it exists only on the edge leaving a fan_out's `item` "
            "port and inside that item body")
_NO_LOOP = ("`loop.*` is not available in {where}: it exists only on the edge leaving a loop's `body` port "
            "and inside the loop body up to `continue`/`break`")
_NO_OUTPUT = ("`output.*` is available only in an edge `bind` (the source port's output), not in {where}; "
              "bind the value into this node's input and read `input.*`")
_MERGE_ONLY = {
    "branches": "`branches.*` is available only in an `all` join's `merge`, not in {where}",
    "winner": "`winner.*` is available only in an `any` join's `merge`, not in {where}",
    "items": "`items` is available only in a fan-out join's `merge`, not in {where}",
}


class Context(Value):
    """The reference context at one location.

    * ``kind`` — ``config`` (node configuration), ``bind`` (edge bind),
      ``merge`` (join merge), ``condition`` (wait condition);
    * ``label`` — where, for messages (``"the configuration of node 'ask'"``);
    * ``roots`` — root name (:data:`ROOTS`) → type of the root value, for the
      roots legal here;
    * ``absent`` — root name → why it is not legal here (used in messages;
      :data:`WHERE` in it stands for ``label``);
    * ``silent`` — the scope map marks this location ambiguous: references to
      roots that are not legal here are typed ``unknown`` without a diagnostic;
    * ``node`` / ``edge`` — the culprit ids for diagnostics.
    """

    kind: str
    label: str
    roots: Mapping[str, Type]
    absent: Mapping[str, str] = field(factory=dict)
    silent: bool = False
    node: str | None = None
    edge: str | None = None

    def run_field(self, name: str) -> Type | None:
        """Type of ``run.<name>`` when ``run`` is legal here."""
        run = self.roots.get("run")
        return run.field(name) if run is not None else None


class PathProblem(Value):
    """Why a path cannot be typed.

    ``segment`` is the index of the offending segment (0 = root);
    ``replace``, when set, is ``(first, last_exclusive, text)``: replacing
    segments ``first..last`` (joined with dots) by ``text`` is the suggested
    fix; ``safe`` when that replacement is the one spelling of the same
    meaning (a legacy root whose rewrite types, and is the only one that
    does), else a guess.
    """

    code: str
    message: str
    segment: int
    replace: tuple[int, int, str] | None = None
    safe: bool = False


class Resolved(Value):
    """A typed path: ``type`` of the value; ``static`` is how many segments
    were typed statically (the rest lie below an ``object`` and are checked at
    run time)."""

    type: Type
    static: int


def _suggest(word: str, candidates: Iterable[str]) -> str | None:
    from loopc.compiler.graph import suggest

    return suggest(word, candidates)


def resolve_path(ctx: Context, segments: tuple[str, ...], *, in_expr: bool = False) -> Resolved | PathProblem:
    """Type ``segments`` (the whole dotted path, root first) in ``ctx``.

    Returns :class:`Resolved` or a :class:`PathProblem` carrying one of
    LP3201 ``ref.unknown_root``, LP3202 ``ref.root_not_here``, LP3203
    ``ref.legacy_root``, LP3204 ``ref.unknown_field``, LP3205
    ``ref.no_fields``, LP3206 ``ref.unknown_branch`` (docs/reference.md#references).
    ``in_expr``: the path is inside an expression, where a bare unknown word
    is more likely meant as text (the message says how to quote it).
    Never raises.
    """
    if not segments or not segments[0]:
        return PathProblem("LP3201", "empty reference path", 0)
    root = segments[0]
    if root in LEGACY_ROOTS:
        return _legacy_root(ctx, segments)
    if root not in ROOTS:
        legal = sorted(ctx.roots) or list(ROOTS)
        hint = _suggest(root, legal) or _suggest(root, ROOTS) or _field_hint(ctx, root)
        msg = f"unknown reference root `{root}`"
        if in_expr and len(segments) == 1:
            msg = f"unknown name `{root}` (a path starts with a reference root; to write text, quote it: '{root}')"
        if hint:
            return PathProblem("LP3201", msg + f"; did you mean `{hint}`?", 0, (0, 1, hint))
        return PathProblem("LP3201", msg + f" (roots here: {', '.join(f'`{r}`' for r in legal) or 'none'})", 0)
    rtype = ctx.roots.get(root)
    if rtype is None:
        if ctx.silent:
            return Resolved(T.UNKNOWN, 1)
        why = (ctx.absent.get(root) or f"`{root}.*` is not available in {ctx.label}").replace(WHERE, ctx.label)
        return PathProblem("LP3202", why, 0)
    got = walk_fields(root, rtype, segments)
    if isinstance(got, PathProblem) and got.code == "LP3204" and got.replace is None:
        where = _declare_where(ctx, segments, got.segment)
        if where is not None:
            got = got.evolve(message=got.message + f"; to add it, declare `{segments[got.segment]}` {where}")
    return got


def _legacy_root(ctx: Context, segments: tuple[str, ...]) -> PathProblem:
    """LP3203 for a legacy root: the rewrite is offered for the current
    roots it may mean (``inputs`` → ``input`` or ``run.input``) whose path
    types here — safe when exactly one does (the one spelling of what was
    meant), a guess when several do; none typing, no rewrite (the message
    says what to read instead)."""
    root = segments[0]
    repls, advice = LEGACY_ROOTS[root]
    text = ".".join(segments)
    fits = [r for r in repls if isinstance(resolve_path(ctx, tuple(r.split(".")) + segments[1:]), Resolved)]
    msg = f"legacy reference root `{root}` in `{text}`: {advice}"
    if not fits:
        return PathProblem("LP3203", msg, 0)
    new = ".".join((fits[0],) + segments[1:])
    return PathProblem("LP3203", msg + f" — write `{new}`", 0, (0, 1, fits[0]), safe=len(fits) == 1)


def _declare_where(ctx: Context, segments: tuple[str, ...], i: int) -> str | None:
    """Where the field ``segments[i]`` that a path names but no contract
    declares would be declared (the LP3204 hint), when that is one place:
    a Run-state field or Plan input under the top-level section, a field of
    ``input.`` in the contract of the node whose input it is."""
    if segments[0] == "run" and i == 2 and segments[1] == "state":
        return "under the top-level `state`, with its type and default"
    if segments[0] == "run" and i == 2 and segments[1] == "input":
        return "under the top-level `input`, with its type"
    if segments[0] == "input" and i == 1:
        if ctx.kind == "bind":
            return "in the `input` of the edge's source node (it reads that activation's input)"
        if ctx.kind in ("config", "condition") and ctx.node is not None:
            return f"in the `input` of node `{ctx.node}`, with its type"
    return None


def _field_hint(ctx: Context, word: str) -> str | None:
    """A field of a contract root close to a bare ``word`` (``summry`` →
    ``input.summary``): authors often forget the root."""
    for prefix, t in (("input", ctx.roots.get("input")), ("output", ctx.roots.get("output")),
                      ("run.state", ctx.run_field("state")), ("run.input", ctx.run_field("input"))):
        if t is None or t.fields is None:
            continue
        names = t.field_names()
        if word in names:
            return f"{prefix}.{word}"
        hit = _suggest(word, names)
        if hit is not None:
            return f"{prefix}.{hit}"
    return None


def walk_fields(root: str, rtype: Type, segments: tuple[str, ...]) -> Resolved | PathProblem:
    """Walk ``segments[1:]`` through ``rtype`` (the type of ``segments[0]``)."""
    cur = rtype
    optional = rtype.optional
    if root == "run" and len(segments) == 1:
        return PathProblem("LP3204", "`run` alone is not a value: read `run.input.<field>` or `run.state.<field>`", 0)
    for i in range(1, len(segments)):
        name = segments[i]
        k = cur.kind
        if k == "unknown" or (k == "object" and cur.fields is None):
            return Resolved(T.UNKNOWN, i)
        if k == "scope":
            cur = T.object_of(T.SCOPE_FIELDS, optional=cur.optional)
            k = "object"
        if k != "object":
            prefix = ".".join(segments[:i])
            return PathProblem(
                "LP3205",
                f"`{prefix}` is {T.article(T.describe(T.required_form(cur)))}; it has no field `{name}`",
                i)
        ft = None
        for fname, ftype in cur.fields or ():  # a typed object here (inline ``Type.field``)
            if fname == name:
                ft = ftype
                break
        if ft is None:
            prefix = ".".join(segments[:i])
            names = cur.field_names()
            hint = _suggest(name, names)
            code = "LP3206" if root == "branches" and i == 1 else "LP3204"
            what = "branch" if code == "LP3206" else "field"
            if root == "run" and i == 1:
                msg = f"`run` has `input` and `state`, not `{name}`"
            elif names:
                shown = ", ".join(f"`{n}`" for n in names[:12]) + (", …" if len(names) > 12 else "")
                msg = f"`{prefix}` has no {what} `{name}` (declared: {shown})"
            else:
                msg = f"`{prefix}` has no {what} `{name}` (it declares no fields)"
            if hint:
                return PathProblem(code, msg + f"; did you mean `{hint}`?", i, (i, i + 1, hint))
            return PathProblem(code, msg, i)
        if optional and not ft.optional:
            ft = T.with_optional(ft)
            if cur.presence_unknown:  # absent when its parent is: as unknown
                ft = ft.evolve(presence_unknown=True)
        optional = optional or ft.optional
        cur = ft
    return Resolved(cur, len(segments))


# ---------------------------------------------------------------------------
# Building contexts
# ---------------------------------------------------------------------------

class ContextBuilder:
    """Builds the :class:`Context` of every location of one plan.

    Implements the "where" column of the roots table in docs/reference.md#references:

    * ``run`` everywhere except where a key restricts it (never);
    * ``input``: node config (the node's effective input) and edge binds (the
      source activation's input) — not in a join's ``merge`` nor on edges
      leaving a join (they read the result as ``output.*``);
    * ``output``: edge binds only (the source port's output contract);
    * ``branches``/``winner``: the ``all``/``any`` join's ``merge`` when its
      owner is a fork or an all_match switch; ``items``: a fan-out join's merge;
    * ``item``: the edge leaving a fan_out ``item`` port and every node and
      edge of the item body (scope map);
    * ``loop``: the edge leaving a loop's ``body`` port and every node and
      edge of the body up to ``continue``/``break`` (innermost loop);
    * a wait ``condition`` reads only ``input`` and ``run``.
    """

    def __init__(self, plan: Plan, scopes: ScopeMap | None, reporter: Reporter | None = None) -> None:
        self.plan = plan
        self.scopes = scopes
        self.reporter = reporter
        self._records: dict[tuple[int, bool], tuple[Mapping, Type]] = {}
        self._ports: dict[str, frozenset[str]] = {}
        self._outs: dict[tuple[str, str], Mapping | None] = {}
        self._join_owners: dict[str, int] | None = None
        self._ftypes: dict[int, tuple[Any, Type]] = {}
        self.run_type = T.object_of((("input", self.section_record("input", plan.input)),
                                     ("state", self.section_record("state", plan.state))))

    # -- helpers -----------------------------------------------------------
    def ftype(self, fs: Any) -> Type:
        """:func:`~loopc.compiler.types.type_of_field` of a FieldSchema,
        cached by identity (contracts are shared; each field is typed once
        for the records and the bindings)."""
        hit = self._ftypes.get(id(fs))
        if hit is None:
            hit = (fs, T.type_of_field(fs))  # keeps ``fs`` alive: its id stays unique
            self._ftypes[id(fs)] = hit
        return hit[1]

    def record(self, contract: Mapping | None, *, optional: bool = False) -> Type:
        """Typed object of a contract (cached by identity)."""
        if contract is None:
            contract = {}
        key = (id(contract), optional)
        hit = self._records.get(key)
        if hit is None:
            # the contract is kept in the entry so that its id cannot be reused
            rec = T.record_of(contract, optional=optional, field_type=self.ftype)
            r = self.reporter
            if r is not None and r.any_tainted and any(r.presence_tainted(fs.src) for fs in contract.values()):
                # a field whose `required`/`default` was rejected may or may not
                # be absent: nothing judges its presence
                rec = T.object_of(tuple((n, ft.evolve(presence_unknown=True)
                                         if r.presence_tainted(contract[n].src) else ft)
                                        for n, ft in rec.fields or ()), optional=optional)
            hit = (contract, rec)
            self._records[key] = hit
        return hit[1]

    def section_record(self, section: str, contract: Mapping) -> Type:
        """Typed object of the top-level contract ``section`` (``input``,
        ``state``) as ``run.<section>``.  What the reporter holds as already
        reported wrong has the unknown type, so reading it is not reported
        again: the whole section (misspelt, rejected) or a field the schema
        pass dropped (its type is unknown)."""
        rec = self.record(contract)
        r = self.reporter
        if r is None:
            return rec
        if r.tainted(decl_path(section)):
            return T.UNKNOWN
        src = self.plan.src.get(section) if isinstance(self.plan.src, YMap) else None
        if not isinstance(src, YMap):
            return rec
        dropped = [k for k in src.index if k not in contract and r.tainted(decl_path(section, k))]
        if not dropped:
            return rec
        return T.object_of(tuple(rec.fields or ()) + tuple((k, T.UNKNOWN) for k in dropped))

    def source_ports(self, node: Node) -> frozenset[str]:
        """Source ports of ``node`` (cached: a switch's ports are rebuilt on
        every call of the model property)."""
        hit = self._ports.get(node.id)
        if hit is None:
            hit = self._ports[node.id] = frozenset(source_ports(node))
        return hit

    def output(self, node: Node, port: str) -> Mapping | None:
        """:func:`~loopc.compiler.ports.output_contract`, cached per port; a
        switch or fork port returns the node's own input contract object, so
        its typed record is built once for all ports."""
        key = (node.id, port)
        if key in self._outs:
            return self._outs[key]
        if isinstance(node.config, (Switch, Fork)):
            out: Mapping | None = node.input_contract if port in self.source_ports(node) else None
        else:
            out = output_contract(node, port)
        self._outs[key] = out
        return out

    def unknown(self, element: str, *, edge: bool = False) -> bool:
        """True when the scope map cannot give ``element`` one exact scope
        stack (ambiguous, or not reached from the entry): context legality
        is then not reported."""
        s = self.scopes
        if s is None:
            return False
        known = getattr(s, "context_known", None)
        if known is not None:
            return not known(element, edge=edge)
        return s.is_ambiguous(element)

    def _innermost(self, element: str, kind: str, *, edge: bool) -> str | None:
        if self.scopes is None:
            return None
        sc = self.scopes.innermost(element, kind, edge=edge)
        return sc.owner if sc is not None else None

    def _scope_roots(self, roots: dict[str, Type], absent: dict[str, str], fan_out: str | None,
                     loop: str | None, where: str) -> None:
        if fan_out is not None:
            roots["item"] = ITEM_TYPE
        else:
            absent["item"] = _NO_ITEM
        loop_node = self.plan.nodes.get(loop) if loop is not None else None
        if loop_node is not None and isinstance(loop_node.config, Loop):
            roots["loop"] = T.object_of((("iteration", T.NUMBER), ("state", self.record(loop_node.config.state))))
        elif loop is not None:
            roots["loop"] = T.UNKNOWN
        else:
            absent["loop"] = _NO_LOOP

    @staticmethod
    def _merge_only(absent: dict[str, str], where: str) -> None:
        absent.update(_MERGE_ONLY)

    # -- node configuration ------------------------------------------------
    def node_config(self, node: Node) -> Context:
        """Context of ``node``'s configuration (templates, ValueExprs, ``when``)."""
        where = f"the configuration of node '{node.id}'"
        roots: dict[str, Type] = {"run": self.run_type}
        absent: dict[str, str] = {"output": _NO_OUTPUT}
        cfg = node.config
        if isinstance(cfg, End) and cfg.status == "succeeded":
            roots["input"] = self.record(self.plan.output)
        else:
            roots["input"] = self.record(effective_input(node, self.plan.output))
        self._scope_roots(roots, absent, self._innermost(node.id, "fan_out", edge=False),
                          self._innermost(node.id, "loop", edge=False), where)
        self._merge_only(absent, where)
        return Context("config", where, roots, absent, self.unknown(node.id), node=node.id)

    def wait_condition(self, node: Node) -> Context:
        """A wait ``condition`` reads only ``input.*`` and ``run.*``
        (docs/reference.md#node-wait)."""
        where = f"the `condition` of wait '{node.id}'"
        roots = {"run": self.run_type, "input": self.record(node.input_contract)}
        reason = (f"a wait `condition` reads only `input.*` and `run.*`; bind the value into "
                  f"the input of '{node.id}' and read `input.*`")
        absent = {r: reason for r in ROOTS if r not in roots}
        return Context("condition", where, roots, absent, self.unknown(node.id), node=node.id)

    def join_merge(self, node: Node) -> Context:
        """Context of a join's ``merge``: ``branches.*`` (all), ``winner.*``
        (any), ``items`` (fan-out join) and ``run.*`` only (docs/reference.md#references)."""
        cfg = node.config
        assert isinstance(cfg, Join)
        where = f"the `merge` of join '{node.id}'"
        roots: dict[str, Type] = {"run": self.run_type}
        absent: dict[str, str] = {}
        reason = ("a join's `merge` reads only `branches.*`, `winner.*`, `items` and `run.*`; "
                  "arrivals are exposed under `branches.<key>.*` (all) or `winner.value.*` (any)")
        for r in ("input", "output", "item", "loop"):
            absent[r] = reason
        silent = self.unknown(node.id)
        owner = self.plan.nodes.get(cfg.owner) if cfg.owner else None
        arrival = self.record(node.input_contract)
        # the merge space is the owner's: a join naming its owner with the
        # wrong key (the analyzer's LP4311, fixed by renaming the key) reads
        # what the right key would give it, so its merge is not reported again
        if owner is not None and (isinstance(owner.config, (FanOut, Fork)) or _all_match(owner)):
            fan_join = isinstance(owner.config, FanOut)
        else:
            fan_join = cfg.fan_out_id is not None
        if fan_join:
            if owner is not None and isinstance(owner.config, FanOut):
                roots["items"] = ITEMS_TYPE
            else:
                roots["items"] = T.UNKNOWN  # owner malformed or missing: reported elsewhere
            absent["branches"] = f"`branches.*` exists only at a fork or all_match join; '{node.id}' closes a fan_out: use `items`"
            absent["winner"] = "`winner.*` exists only at an `any` join of a fork or all_match switch; use `items`"
        else:
            absent["items"] = f"`items` exists only at a fan-out join's `merge`; '{node.id}' joins branches"
            keys: tuple[str, ...] | None = None
            optional = False
            if owner is not None and isinstance(owner.config, Fork):
                keys = owner.config.branches
            elif owner is not None and isinstance(owner.config, Switch) and owner.config.mode == "all_match":
                keys = owner.config.ports
                optional = True
            # any other owner opens no branches (the analyzer's LP4301): the
            # branch keys are unknown, so reading them is not reported again;
            # nor are they known when two joins name the owner (LP4309: one of
            # them most likely closes another scope, named in its fix)
            if keys is not None and self._joins_naming(cfg.owner) > 1:
                keys = None
            if cfg.mode == "all":
                if keys is None:
                    roots["branches"] = T.UNKNOWN
                else:
                    rec = self.record(node.input_contract, optional=optional)
                    roots["branches"] = T.object_of(tuple((k, rec) for k in keys))
                absent["winner"] = f"`winner.*` exists only at an `any` join; '{node.id}' is `mode: all`: use `branches.<key>.*`"
            else:
                roots["winner"] = T.object_of((("key", T.STRING), ("value", arrival)))
                absent["branches"] = f"`branches.*` exists only at an `all` join; '{node.id}' is `mode: any`: use `winner.value.*`"
        return Context("merge", where, roots, absent, silent, node=node.id)

    def _joins_naming(self, owner: str) -> int:
        """How many joins of the plan name ``owner`` (counted once per plan)."""
        counts = self._join_owners
        if counts is None:
            counts = self._join_owners = {}
            for n in self.plan.nodes.values():
                if isinstance(n.config, Join):
                    counts[n.config.owner] = counts.get(n.config.owner, 0) + 1
        return counts.get(owner, 0)

    # -- edges -------------------------------------------------------------
    def edge_bind(self, edge: Edge, src: Node) -> Context:
        """Context of ``edge``'s ``bind``: the source activation's ``input.*``,
        the source port's ``output.*``, ``item.*``/``loop.*`` by scope."""
        where = f"the `bind` of edge '{edge.id}'"
        roots: dict[str, Type] = {"run": self.run_type}
        absent: dict[str, str] = {}
        if isinstance(src.config, Join):
            absent["input"] = (f"edges leaving join '{src.id}' read its result as `output.*`, not `input.*`")
        else:
            roots["input"] = self.record(effective_input(src, self.plan.output))
        out = self.output(src, edge.from_port)
        if out is not None:
            roots["output"] = self.record(out)
        elif isinstance(src.config, FanOut):
            absent["output"] = (f"port `item` of fan_out '{src.id}' carries nothing under `output.*`; "
                                "read the WorkItem as `item.*`")
        elif isinstance(src.config, Loop):
            absent["output"] = (f"port `body` of loop '{src.id}' carries nothing under `output.*`; "
                                "read `loop.state.*` / `loop.iteration`")
        else:
            absent["output"] = f"port `{edge.from_port}` of '{src.id}' carries no output"
        fan_out = src.id if isinstance(src.config, FanOut) and edge.from_port == "item" else \
            self._innermost(edge.id, "fan_out", edge=True)
        loop = src.id if isinstance(src.config, Loop) and edge.from_port == "body" else \
            self._innermost(edge.id, "loop", edge=True)
        self._scope_roots(roots, absent, fan_out, loop, where)
        self._merge_only(absent, where)
        return Context("bind", where, roots, absent, self.unknown(edge.id, edge=True),
                       node=None, edge=edge.id)

    def entry(self) -> Context:
        """Context of the entry's Plan-input pass-through (only ``run``)."""
        return Context("entry", "the Plan input", {"run": self.run_type}, {}, False)


def _all_match(node: Node | None) -> bool:
    return node is not None and isinstance(node.config, Switch) and node.config.mode == "all_match"
