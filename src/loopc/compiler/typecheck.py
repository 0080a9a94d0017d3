"""Type and binding pass: passes 4–5 of docs/language.md#compiler-passes (expressions
and templates type-check; bindings are assignable and complete):
docs/reference.md#references, docs/reference.md#expressions, docs/reference.md#templates,
docs/reference.md#nodes, docs/reference.md#edges.

:func:`check_types` types every ValueExpr, expression and template of a
:class:`~loopc.compiler.model.Plan` in the context valid at its location
(:mod:`loopc.compiler.typecheck_context`), checks every mapping onto a
contract (edge ``bind`` and same-name pass-through, the entry's Plan input,
``join.merge``, ``loop.init``, ``setVariable.assign``) and the typed node
configuration keys (:mod:`loopc.compiler.typecheck_nodes`), and returns a
:class:`TypeInfo` for lowering.  Codes LP32xx–LP34xx
(:mod:`loopc.codes.bindings`); expression syntax and operator typing codes
(LP30xx–LP31xx) come from :mod:`loopc.compiler.expr`.

Cascade rules (one defect, one diagnostic): nodes and edges the schema pass
rejected are absent from ``plan.nodes``/``plan.edges`` and never checked;
edges whose endpoints or ports do not exist are left to the graph pass; a
value whose type could not be established (an unknown root, a syntax error)
is not also reported as not assignable; a ``bind`` key that looks like a typo
of a missing required field is reported once, as the unknown key; where the
scope map marks an id ambiguous, context legality is not reported.

Cost: one walk over nodes and edges; parsed expressions and templates are
cached by text; root types are built once per contract.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from loopc.value import Value
from loopc.compiler import typecheck_nodes
from loopc.compiler import types as T
from loopc.compiler.expr import ast as A
from loopc.compiler.model import MISSING, Edge, End, Fork, Join, Loop, Node, Plan, SendMessage, Switch
from loopc.compiler.ports import effective_input, target_ports
from loopc.compiler.report import Reporter, decl_path, edge_entity, presence, writes_entity
from loopc.compiler.scopemap import ScopeMap
from loopc.compiler.typecheck_context import Context, ContextBuilder
from loopc.compiler.typecheck_values import (
    TypedList, TypedLiteral, TypedMap, TypedTemplate, ValueChecker, make_path,
)
from loopc.compiler.types import Type
from loopc.compiler.yamlnodes import YDocument, YMap, YNode

__all__ = [
    "FieldBinding", "TypeInfo", "TypedList", "TypedLiteral", "TypedMap", "TypedTemplate",
    "check_types",
]


# ---------------------------------------------------------------------------
# Typed forms (the compiled values lowering consumes)
# ---------------------------------------------------------------------------

#: What :attr:`TypeInfo.values` holds for one model object:
#: ``Literal`` → :class:`TypedLiteral`; ``Ref`` → a typed
#: :class:`~loopc.compiler.expr.ast.Path`; ``Expr`` → the typed expression
#: AST root (any :mod:`~loopc.compiler.expr.ast` node); ``Template`` →
#: :class:`TypedTemplate`; ``ListValue`` → :class:`TypedList`; ``MapValue`` →
#: :class:`TypedMap`.  Every form has a ``.type``.
Typed = Any


class FieldBinding(Value):
    """One field of a destination contract and the value it receives.

    * ``field`` — destination field name; ``type`` — its declared type;
    * ``value`` — the typed value (:data:`Typed`); for an implicit
      pass-through a typed ``Path`` (``output.<field>`` on edges,
      ``run.input.<field>`` for the entry);
    * ``source`` — the authored ValueExpr, ``None`` when implicit;
    * ``implicit`` — true for same-name pass-through (docs/reference.md#pass-through;
      the artifact always holds explicit bindings, docs/ir.md#edges).
    """

    field: str
    type: Type
    value: Typed
    source: Any = None
    implicit: bool = False


class TypeInfo(Value, eq=False):
    """Result of the type pass, consumed by IR lowering.

    * ``values`` — identity-keyed map from every model ValueExpr, ``Expr``
      and ``Template`` object that was typed (node configuration, ``bind``,
      ``merge``, ``init``, ``assign``, nested list/map members) to its typed
      form (see :data:`Typed`).  Model objects hash by identity, so look
      them up with the very object from the Plan (:meth:`typed`).  Values
      whose type could not be established (a diagnostic was reported) are
      absent.
    * ``edge_bindings`` — edge id → the complete, explicit binding list of
      that edge's destination contract: authored ``bind`` entries in authored
      order, or, for an omitted ``bind``, one implicit ``output.<f>``
      binding per destination field the source port provides (destination
      contract order).  Edges the pass skipped (dangling endpoints or ports)
      are absent.
    * ``entry_bindings`` — the entry node's input built from the Plan input
      by same-name pass-through (``run.input.<f>``).
    * ``dest_contracts`` — edge id → the destination contract the bindings
      build (the destination's effective input; a succeeded End takes the
      Plan output; ``continue``/``break`` build the loop state).
    """

    values: Mapping[Any, Typed]
    edge_bindings: Mapping[str, tuple[FieldBinding, ...]]
    entry_bindings: tuple[FieldBinding, ...]
    dest_contracts: Mapping[str, Mapping[str, Any]]

    def typed(self, obj: Any) -> Typed | None:
        """Typed form of a model object, or ``None`` if it was not typed."""
        return self.values.get(obj)

    def type_of(self, obj: Any) -> Type | None:
        """Static type of a model object, or ``None``."""
        t = self.values.get(obj)
        return None if t is None else t.type


# ---------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------

def check_types(plan: Plan, scopes: ScopeMap | None, reporter: Reporter,
                doc: YDocument | None = None) -> TypeInfo:
    """Type-check ``plan`` (passes 4–5 of docs/language.md#compiler-passes) and report
    LP3xxx findings.

    ``scopes`` is the structural scope map (``item.*``/``loop.*`` legality,
    ambiguity); ``doc`` the loaded source, used to place expression
    diagnostics on their exact character (without it, a diagnostic inside a
    quoted or block scalar with escapes falls back to the whole scalar).
    Returns a :class:`TypeInfo`.  Never raises on a malformed model.
    """
    if doc is None:
        doc = getattr(reporter, "document", None) or getattr(plan, "document", None)
    checker = _PlanChecker(plan, scopes, reporter, doc)
    checker.run()
    return TypeInfo(checker.vc.values, checker.edge_bindings, checker.entry_bindings, checker.dest_contracts)


class _PlanChecker:
    """One run of the pass over one plan (no state survives the call)."""

    def __init__(self, plan: Plan, scopes: ScopeMap | None, reporter: Reporter,
                 doc: YDocument | None) -> None:
        self.plan = plan
        self.scopes = scopes
        self.reporter = reporter
        self.ctx = ContextBuilder(plan, scopes, reporter)
        self.vc = ValueChecker(reporter, doc)
        self.edge_bindings: dict[str, tuple[FieldBinding, ...]] = {}
        self.entry_bindings: tuple[FieldBinding, ...] = ()
        self.dest_contracts: dict[str, Mapping[str, Any]] = {}
        #: type of a FieldSchema, cached by identity (contracts are shared)
        self.ftype: Callable[[Any], Type] = self.ctx.ftype

    def run(self) -> None:
        typecheck_nodes.check_responder_fields(self)
        self.check_entry()
        for node in self.plan.nodes.values():
            typecheck_nodes.check_node(self, node)
        for edge in self.plan.edges.values():
            self.check_edge(edge)

    # -- mappings onto a contract -----------------------------------------
    def mapping(self, entries: Mapping[str, Any], holder: YNode | None, contract: Mapping[str, Any],
                ctx: Context, *, what: str, dest: str, complete: bool,
                node: str | None = None, edge: str | None = None,
                decl_root: str | None = None) -> tuple[FieldBinding, ...]:
        """Check ``entries`` (field → ValueExpr) against ``contract``.

        ``holder`` is the YAML mapping of the entries (its keys locate
        unknown fields; its key in the parent locates missing fields).
        ``complete`` requires every required field without default (LP3301).
        LP3302 for keys not in ``contract`` (with "did you mean"), LP3303
        for values not assignable.  ``decl_root`` names the top-level section
        ``contract`` is (``output``, ``state``): a key naming a field the
        schema pass rejected there is not reported again.  Returns the
        bindings in authored order.
        """
        out: list[FieldBinding] = []
        claimed: set[str] = set()
        names = list(contract)
        for key, value in entries.items():
            if value is None:
                continue  # malformed ValueExpr, reported by the schema pass
            fs = contract.get(key)
            if fs is None:
                key_node = holder.key_node(key) if isinstance(holder, YMap) else None
                hint = _suggest(key, [n for n in names if n not in entries])
                msg = f"{dest} has no field `{key}`"
                if hint:
                    claimed.add(hint)
                    msg += f"; did you mean `{hint}`?"
                elif names:
                    msg += f" (fields: {', '.join(f'`{n}`' for n in names[:12])}{', …' if len(names) > 12 else ''})"
                else:
                    msg += " (it declares no fields)"
                self.reporter.report("LP3302", key_node or value.src, msg, node=node, edge=edge,
                                     fix=_rename_fix(key_node, hint) if hint and key_node is not None else None,
                                     needs=[decl_path(decl_root, key)] if decl_root else (),
                                     taints=[writes_entity(node)] if decl_root == "state" and node else ())
                self.vc.check(value, None, ctx, code="LP3303", what=what)
                continue
            ft = self.ftype(fs)
            typed = self.vc.check(value, ft, ctx, code="LP3303", what=f"field `{key}` of {dest}")
            if typed is not None:
                if fs.required and not fs.has_default:
                    self._optional_source(typed, value.src, key, dest, ctx, node=node, edge=edge,
                                          needs_src=fs.src)
                out.append(FieldBinding(key, ft, typed, value, False))
        if complete:
            missing = [n for n, fs in contract.items()
                       if fs.required and not fs.has_default and n not in entries and n not in claimed
                       and not self._presence_unknown(fs)]
            if missing:
                at = _holder_key(holder)
                listed = ", ".join(f"`{m}`" for m in missing)
                s = "s" if len(missing) > 1 else ""
                self.reporter.report("LP3301", at, f"{what} does not set required field{s} {listed} of {dest}",
                                     node=node, edge=edge)
        return tuple(out)

    def _presence_unknown(self, fs: Any) -> bool:
        """Was the ``required`` or ``default`` of ``fs`` rejected (so whether
        it may be absent is unknown: :func:`~loopc.compiler.report.presence`)?"""
        return self.reporter.presence_tainted(fs.src)

    def _optional_source(self, typed: Any, at: YNode | None, key: str, dest: str, ctx: Context, *,
                         node: str | None, edge: str | None, needs_src: YNode | None = None) -> None:
        """LP3307: a required field without default receives a value that may
        be absent — an optional contract field, or a branch of an all_match
        switch, which runs only when its case matches (docs/language.md#required-destinations).
        ``needs_src``: the FieldSchema mapping of the destination field (the
        finding needs its :func:`~loopc.compiler.report.presence`)."""
        t = getattr(typed, "type", None)
        if t is None or not t.optional or t.presence_unknown or not isinstance(typed, A.Path):
            return
        path = ".".join((typed.root, *typed.segments))
        if typed.root == "branches" and len(typed.segments) > 1 and self._optional_arrival(
                typed.segments[1], path, at, key, dest, ctx, presence(needs_src)):
            return
        if typed.root == "branches" and typed.segments:
            why = (f"branch `{typed.segments[0]}` of an all_match switch runs only when its case "
                   f"matches, so `{path}` may be absent")
        else:
            why = f"`{path}` is optional (not required, no default), so it may be absent"
        self.reporter.report(
            "LP3307", at,
            f"field `{key}` of {dest} is required with no default, but {why}; make `{key}` optional "
            f"or give it a default, or bind a value that is always present", node=node, edge=edge,
            needs=presence(needs_src))

    def _optional_arrival(self, name: str, path: str, at: YNode | None, key: str, dest: str, ctx: Context,
                          needs: tuple) -> bool:
        """LP3307 when ``branches.<key>.<name>`` of a fork's join may be absent
        because field ``name`` of the join's ``input`` (the arrival contract) is
        optional: reported once, at that field, since every merge of it
        follows from it.  Returns whether that is the cause (an all_match
        owner's branch is optional in any case: the caller says so)."""
        join = self.plan.nodes.get(ctx.node) if ctx.node is not None else None
        if join is None or not isinstance(join.config, Join):
            return False
        owner = self.plan.nodes.get(join.config.owner)
        fs = join.input_contract.get(name)
        if owner is None or not isinstance(owner.config, Fork) or fs is None or fs.required or fs.has_default:
            return False
        holder = fs.src.parent if fs.src is not None else None
        decl_at = holder.key_node(name) if isinstance(holder, YMap) else None
        self.reporter.report(
            "LP3307", decl_at or at,
            f"field `{name}` of the input of join `{join.id}` is optional (not required, no default), so "
            f"`{path}` may be absent, but the merge puts it in field `{key}` of {dest}, which is required "
            f"with no default; make `{name}` required or give it a default, or make `{key}` optional",
            node=join.id, related=[(f"merged into `{key}` here", at)] if at is not None else (),
            needs=(*needs, *presence(fs.src)), key=("join input", join.id, name))
        return True

    def passthrough(self, source: Mapping[str, Any] | None, dest: Mapping[str, Any], at: YNode | None, *,
                    root: str, source_desc: str, dest_desc: str, no_source_hint: str = "",
                    node: str | None = None, edge: str | None = None,
                    bind_context: Callable[[], Context] | None = None,
                    source_authored: Callable[[str], bool] | None = None,
                    source_decl: str | None = None) -> tuple[FieldBinding, ...]:
        """Same-name pass-through (docs/reference.md#pass-through): every ``dest`` field takes the
        same-named ``source`` field.  LP3304 lists required fields without
        default that have no same-named source; LP3305 each same-named field
        whose type is not assignable, with the fix that can work: an explicit
        ``bind`` naming a value of the right type when ``bind_context`` (the
        edge's bind context; ``None``: no edge, as at the entry) has one, a
        literal when the type can be written, else making the two contracts
        agree (``source_authored(name)``: whether the source field is declared
        by the author, so its type can be changed; default yes).
        ``source_decl`` names the top-level section ``source`` is
        (``input``): a field the schema pass rejected there is not listed
        again.  Returns the implicit bindings."""
        src = source or {}
        out: list[FieldBinding] = []
        missing: list[str] = []
        for name, fs in dest.items():
            dt = self.ftype(fs)
            sfs = src.get(name)
            if sfs is None:
                if fs.required and not fs.has_default and not self._presence_unknown(fs) and not (
                        source_decl and self.reporter.tainted(decl_path(source_decl, name))):
                    missing.append(name)
                continue
            st = self.ftype(sfs)
            if not T.assignable(st, dt):
                fix = _passthrough_fix(name, dt, st, bind_context() if bind_context is not None else None,
                                       source_desc, dest_desc,
                                       source_authored(name) if source_authored is not None else True)
                self.reporter.report(
                    "LP3305", at,
                    f"same-name pass-through: {source_desc} field `{name}` is {T.describe(st)}, but "
                    f"{dest_desc} field `{name}` is {T.describe(dt)}; {fix}",
                    node=node, edge=edge)
                continue
            segs = tuple(root.split(".")) + (name,)
            if fs.required and not fs.has_default and st.optional:
                self.reporter.report(
                    "LP3307", at,
                    f"same-name pass-through: {dest_desc} field `{name}` is required with no default, "
                    f"but {source_desc} field `{name}` is optional (not required, no default), so it "
                    f"may be absent; make one of them match, give `{name}` a default, or write an "
                    f"explicit `bind` with a value that is always present", node=node, edge=edge,
                    needs=(*presence(fs.src), *presence(sfs.src)))
            out.append(FieldBinding(name, dt, make_path(segs, st), None, True))
        if missing:
            parts = []
            for m in missing:
                hint = _suggest(m, [n for n in src if n not in dest])
                parts.append(f"`{m}`" + (f" ({source_desc} has `{hint}`)" if hint else ""))
            s = "s" if len(missing) > 1 else ""
            msg = (f"{dest_desc} requires field{s} {', '.join(parts)} with no default, and {source_desc} "
                   f"has no same-named field{s}")
            msg += no_source_hint or "; write an explicit `bind`"
            self.reporter.report("LP3304", at, msg, node=node, edge=edge)
        return tuple(out)

    # -- entry ---------------------------------------------------------------
    def check_entry(self) -> None:
        """The entry's input is the Plan input by same-name pass-through
        (docs/reference.md#pass-through: the entry node's input is built from the Plan input)."""
        node = self.plan.nodes.get(self.plan.entry)
        if node is None:
            return
        dest = effective_input(node, self.plan.output)
        at = self.plan.src.get("entry") if isinstance(self.plan.src, YMap) else None
        self.entry_bindings = self.passthrough(
            self.plan.input, dest, at or node.src, root="run.input", source_desc="the Plan input",
            dest_desc=f"entry node '{node.id}' input",
            no_source_hint="; declare it in the Plan `input` (the entry takes the Plan input by name)",
            node=node.id, source_decl="input")

    # -- edges -----------------------------------------------------------------
    def dest_contract(self, dst: Node, port: str) -> Mapping[str, Any] | None:
        """Contract an edge into ``dst``.``port`` builds (None: unknown port)."""
        if port in ("continue", "break") and isinstance(dst.config, Loop):
            return dst.config.state
        if port != "in":
            return None
        return effective_input(dst, self.plan.output)

    def check_edge(self, edge: Edge) -> None:
        """Edge ``bind`` or same-name pass-through (docs/reference.md#edges)."""
        plan = self.plan
        r = self.reporter
        if r.any_tainted and r.tainted(edge_entity(edge.id)):
            return
        src = plan.nodes.get(edge.from_node)
        dst = plan.nodes.get(edge.to_node)
        if src is None or dst is None:
            return
        if edge.from_port not in self.ctx.source_ports(src) or edge.to_port not in target_ports(dst):
            return
        if (isinstance(dst.config, End) and dst.config.status == "succeeded"
                and self.scopes is not None and self.scopes.stack(edge.id, edge=True)
                and self.scopes.context_known(edge.id, edge=True)):
            # a succeeded End inside a fork/all_match/fan-out/loop scope is the
            # analyzer's LP4101; completing the Plan output there is no fix
            return
        dest = self.dest_contract(dst, edge.to_port)
        if dest is None:
            return
        self.dest_contracts[edge.id] = dest
        decl_root = None
        if edge.to_port == "in":
            dest_desc = f"the input of '{dst.id}'"
            if dst.type == "end" and getattr(dst.config, "status", None) == "succeeded":
                dest_desc = f"the Plan output (input of succeeded End '{dst.id}')"
                decl_root = "output"
        else:
            dest_desc = f"the state of loop '{dst.id}' (port `{edge.to_port}`)"
        if edge.bind is not None:
            holder = edge.src.get("bind") if isinstance(edge.src, YMap) else None
            ctx = self.ctx.edge_bind(edge, src)  # only explicit binds evaluate anything
            self.edge_bindings[edge.id] = self.mapping(
                edge.bind, holder, dest, ctx, what=f"the `bind` of edge '{edge.id}'", dest=dest_desc,
                complete=True, edge=edge.id, decl_root=decl_root)
            return
        out = self.ctx.output(src, edge.from_port)
        hint = ""
        if out is None:
            if src.type == "fan_out":
                hint = ("; port `item` carries nothing under `output.*`: write a `bind` from `item.*` "
                        "(for example `{ref: item.instruction}`)")
            elif src.type == "loop":
                hint = ("; port `body` carries nothing under `output.*`: write a `bind` from "
                        "`loop.state.*` / `loop.iteration`")
        at = edge.src.get("to") if isinstance(edge.src, YMap) else None
        self.edge_bindings[edge.id] = self.passthrough(
            out, dest, at or edge.src, root="output",
            source_desc=f"the output of '{src.id}' port `{edge.from_port}`", dest_desc=dest_desc,
            no_source_hint=hint, edge=edge.id, bind_context=lambda: self.ctx.edge_bind(edge, src),
            source_authored=lambda name: _authored_output_field(src, edge.from_port, name))


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _suggest(word: str, candidates: Any) -> str | None:
    from loopc.compiler.graph import suggest

    return suggest(word, candidates)


def _rename_fix(key_node: YNode, new: str) -> Any:
    from loopc.diagnostics import Applicability, Fix, TextEdit

    return Fix(f"rename to `{new}`", (TextEdit(key_node.span, new),), Applicability.UNSAFE)


def _holder_key(holder: YNode | None) -> YNode | None:
    """The key naming ``holder`` in its parent mapping (``bind:``), else
    ``holder`` itself."""
    if holder is None:
        return None
    parent = holder.parent
    if isinstance(parent, YMap) and isinstance(holder.key, str):
        kn = parent.key_node(holder.key)
        if kn is not None:
            return kn
    return holder


# Re-exported for typecheck_nodes.
suggest = _suggest
holder_key = _holder_key


#: Bounds of the search for a bindable value (LP3305's fix): path depth and
#: fields visited, so a huge contract costs a bounded amount.
_BIND_SEARCH_DEPTH = 4
_BIND_SEARCH_FIELDS = 512
#: Kinds authors never write as a value (a callback's WorkItems come only
#: from its compiler-owned output).
_UNWRITABLE = frozenset(("work_items",))


def _writable(t: T.Type) -> bool:
    """Can a value of type ``t`` be written in a plan (a literal)?"""
    if t.kind in _UNWRITABLE:
        return False
    if t.kind == "array" and t.items is not None:
        return _writable(t.items)
    return all(_writable(ft) for _k, ft in t.fields or ())


def bindable_paths(ctx: Context, want: T.Type, prefer: str) -> list[str]:
    """Reference paths in ``ctx`` whose type is assignable to ``want``
    (never ``unknown``-typed ones: they prove nothing), the field named
    ``prefer`` first, then by depth; bounded search."""
    found: list[tuple[int, int, str]] = []
    work: list[tuple[str, T.Type, int]] = [(root, t, 0) for root, t in ctx.roots.items()]
    seen = 0
    while work and seen < _BIND_SEARCH_FIELDS:
        path, t, depth = work.pop(0)
        seen += 1
        if depth > 0 and t.kind != "unknown" and T.assignable(t, want):
            found.append((0 if path.rsplit(".", 1)[-1] == prefer else 1, depth, path))
        if depth < _BIND_SEARCH_DEPTH:
            work.extend((f"{path}.{k}", ft, depth + 1) for k, ft in t.fields or ())
    return [p for _a, _b, p in sorted(found)]


def _authored_output_field(src: Node, port: str, name: str) -> bool:
    """Whether field ``name`` of ``src``'s ``port`` output is declared by the
    author (a join's ``result``, a loop's ``state``, a switch's or fork's
    input, a callback's ``callbackOutput``) rather than fixed by the node
    kind (an approval's ``decidedBy``, a failure's ``error``, ...)."""
    c = src.config
    if port == "failed":
        return False
    if isinstance(c, Join):
        return name in c.result
    if isinstance(c, Loop):
        return name in c.state
    if isinstance(c, (Switch, Fork)):
        return name in src.input_contract
    if isinstance(c, SendMessage):
        return c.completion == "callback" and name in (c.callback_output or {}) and not (
            (name == "workScope" and c.work_scope is not MISSING) or (name == "workItems" and c.has_work_items))
    return False


def _passthrough_fix(name: str, dt: T.Type, st: T.Type, ctx: Context | None,
                     source_desc: str, dest_desc: str, source_authored: bool = True) -> str:
    """The fix LP3305 offers: one that can work — a bind from a value that
    exists, a literal only when the type can be written, a contract change
    only on a contract the author declares."""
    change_dest = f"{dest_desc} field `{name}` to {T.describe(st)}"
    agree = (f"make the two fields' types agree (change {source_desc} field `{name}` to "
             f"{T.describe(dt)}, or {change_dest})" if source_authored
             else f"change {change_dest} ({source_desc} is fixed by its node kind)")
    if ctx is None:
        return agree
    paths = bindable_paths(ctx, dt, name)
    if paths:
        if paths[0].rsplit(".", 1)[-1] == name:
            return f"write an explicit `bind`: `{name}: {{ref: {paths[0]}}}`, or {agree}"
        return (f"write an explicit `bind` from a value of type {T.describe(dt)} (such as "
                f"`{name}: {{ref: {paths[0]}}}`), or {agree}")
    if _writable(dt):
        return (f"nothing of type {T.describe(dt)} can be referenced here, so either {agree} or "
                f"write an explicit `bind` giving `{name}` a literal value")
    return (f"no value of type {T.describe(dt)} can be bound here (nothing of that type can be "
            f"referenced, and it cannot be written as a literal), so {agree}")
