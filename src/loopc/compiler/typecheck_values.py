"""Typing of ValueExprs, expressions and templates against an expected type
(docs/reference.md#values,
docs/reference.md#types: a string literal takes the expected type in its wire form).

:class:`ValueChecker` types one value in a :class:`~loopc.compiler.typecheck_context.Context`:

* ``Literal`` — takes the expected type when it conforms to its wire form
  (:func:`loopc.compiler.types.literal_error`); never ``work_items`` (LP3306);
* ``Ref`` — the path typed through the context (LP32xx on failure);
* ``Expr`` — parsed (cached by text) and typed by
  :mod:`loopc.compiler.expr` with a context whose ``resolve`` is
  :func:`~loopc.compiler.typecheck_context.resolve_path`, so paths inside
  expressions get the same LP32xx diagnostics as ``{ref: ...}``;
* ``Template`` — a template that is exactly one ``{{ expr }}`` has the
  expression's type, any other is a ``string`` (docs/reference.md#templates); text-valued keys
  render any scalar;
* ``ListValue`` / ``MapValue`` — constructors, typed member by member; a
  ``{kind, scopeId}`` map is a ``scope`` where a scope is expected.

A value that is not assignable is reported with the caller's code (LP3303 in
mappings, LP3401 in node configuration) at the value; a value whose type
could not be established is not reported again.
"""
from __future__ import annotations

from typing import Any, Sequence

from loopc.value import Value
from loopc import codes
from loopc.compiler import types as T
from loopc.compiler.expr import ast as A
from loopc.compiler.expr.checker import (
    CheckedTemplate, ContextError, ExprContext, check_ast, check_template_ast,
)
from loopc.compiler.expr.parser import ExprError, parse_expression, parse_template
from loopc.compiler.model import Expr, ListValue, Literal, MapValue, Ref, Template
from loopc.compiler.report import Reporter, expr_entity
from loopc.compiler.typecheck_context import Context, PathProblem, Resolved, resolve_path
from loopc.compiler.types import Type
from loopc.compiler.spelling import bool_fix, enum_fix
from loopc.compiler.yamlnodes import YDocument, YNode, YScalar, span_in_scalar
from loopc.diagnostics import Applicability, Fix, Severity, Span, TextEdit

#: Checker codes this pass reports itself (paths and agent-in-target), so the
#: expression checker's versions are dropped: see :meth:`ValueChecker._expr_errors`.
_ROOT_CODE = "LP3201"
_NON_SCALAR = "LP3030"
_AGENT_IN_TARGET = "LP3402"
_ROOTS = frozenset(A.ROOTS)


class TypedLiteral(Value):
    """A literal ValueExpr with the type it takes at its location (a string
    literal takes the expected type when it matches its wire form, docs/reference.md#types).
    ``value`` is the JSON-like Python value."""

    value: Any
    type: Type


class TypedList(Value):
    """A list constructor: ``items`` are the typed members in order."""

    items: tuple[Any, ...]
    type: Type


class TypedMap(Value):
    """A map constructor: ``entries`` are ``(key, typed member)`` in authored
    order; ``type`` is ``object``, or ``scope`` for a ``{kind, scopeId}``
    constructor where a scope is expected."""

    entries: tuple[tuple[str, Any], ...]
    type: Type


class TypedTemplate(Value):
    """A template.

    * ``ast`` — the typed :class:`~loopc.compiler.expr.ast.TemplateAst`
      (every interpolated expression typed);
    * ``type`` — the value's type: the expression's type when the template is
      exactly one ``{{ expr }}`` passed as is, else ``string`` (docs/reference.md#templates);
    * ``renders`` — true when the value is the rendered text (literal parts
      plus interpolations rendered as in docs/reference.md#templates: strings as is, numbers in
      shortest round-trip form, booleans ``true``/``false``, ids and channels
      as their string); false when the single expression's value is passed
      unchanged.
    """

    ast: A.TemplateAst
    type: Type
    renders: bool = True


def make_path(segments: tuple[str, ...], t: Type, start: int = 0, end: int = 0) -> A.Path:
    """A typed AST :class:`~loopc.compiler.expr.ast.Path` for ``segments``
    (root normalised as the parser does: ``run.input``/``run.state``)."""
    if len(segments) >= 2 and segments[0] == "run" and segments[1] in ("input", "state"):
        root, rest = "run." + segments[1], segments[2:]
    else:
        root, rest = segments[0], segments[1:]
    return A.Path(root=root, segments=tuple(rest), start=start, end=end, type=t)


class PlanExprContext(ExprContext):
    """Adapter: the expression checker's context protocol over a
    :class:`~loopc.compiler.typecheck_context.Context` — every path inside an
    expression is typed by :func:`resolve_path`, so it gets LP32xx codes."""

    def __init__(self, ctx: Context) -> None:
        super().__init__({}, {})
        self.plan_ctx = ctx

    def resolve(self, root: str, segments: Sequence[str]) -> Type | ContextError:
        names = tuple(root.split(".")) + tuple(segments)
        r = resolve_path(self.plan_ctx, names)
        if isinstance(r, Resolved):
            return r.type
        nroot = len(names) - len(segments)
        seg = -1 if r.segment < nroot else r.segment - nroot
        fix = None
        if r.replace is not None and r.replace[0] == r.segment and r.replace[1] == r.segment + 1 and seg >= 0:
            fix = r.replace[2]  # one segment replaced by one name: offer it as a fix
        return ContextError(r.code, r.message, seg, fix)


class ValueChecker:
    """Types values and records their typed forms in :attr:`values`
    (identity-keyed).  Holds the per-run parse caches."""

    def __init__(self, reporter: Reporter, doc: YDocument | None) -> None:
        self.reporter = reporter
        self.doc = doc
        self.values: dict[Any, Any] = {}
        self._exprs: dict[str, tuple[A.Expr | None, list[ExprError]]] = {}
        self._templates: dict[str, tuple[A.TemplateAst | None, list[ExprError]]] = {}
        self._ectx: dict[int, tuple[Context, PlanExprContext]] = {}
        self._paths: dict[str, tuple[A.Path, ...]] = {}
        self._checked: dict[tuple[Any, ...], Any] = {}
        self._value_span: Any = _load_value_span()

    # -- positions -----------------------------------------------------------
    def sub_span(self, scalar: YNode | None, start: int, end: int) -> Span | YNode | None:
        """Source span of ``[start, end)`` inside ``scalar``'s value."""
        if not isinstance(scalar, YScalar):
            return scalar
        if self._value_span is not None and self.doc is not None:
            try:
                return self._value_span(self.doc, scalar, start, end)
            except Exception:  # noqa: BLE001 - fall back to our own mapping
                pass
        return span_in_scalar(scalar, start, end)

    def report(self, code: str, at: Any, message: str, ctx: Context | None, fix: Fix | None = None) -> None:
        self.reporter.report(code, at, message, node=ctx.node if ctx else None,
                             edge=ctx.edge if ctx else None, fix=fix,
                             pointer=getattr(at, "pointer", None) if isinstance(at, YNode) else None)

    def _enum_value_fix(self, scalar: YNode | None, value: Any, expected: Type) -> Fix | None:
        """The did-you-mean of a misspelt enum value written as a plain
        value (LP3303, LP3401): an unsafe edit of the scalar's text, quotes
        kept, when the suggestion can be written there as is."""
        if expected.kind != "enum" or not isinstance(value, str) or not isinstance(scalar, YScalar):
            return None
        at = self.sub_span(scalar, 0, len(value))
        if not isinstance(at, Span):
            return None
        return enum_fix(value, expected.values or (), scalar.style, at)

    def report_in(self, code: str, scalar: YNode | None, start: int, end: int, message: str,
                  ctx: Context | None, fix_text: str | None = None,
                  fix_span: tuple[int, int] | None = None, *, safe: bool = False) -> None:
        at = self.sub_span(scalar, start, end)
        pointer = scalar.pointer if isinstance(scalar, YNode) else ""
        fix = None
        if fix_text is not None and isinstance(at, Span):
            edit_at = at if fix_span is None else self.sub_span(scalar, *fix_span)
            if isinstance(edit_at, Span):
                title = f"replace with `{fix_text}`"
                if fix_span is not None and fix_span[0] == fix_span[1]:
                    # an insertion: the empty range before the point
                    edit_at = Span(edit_at.line, edit_at.column, edit_at.line, edit_at.column)
                    title = f"insert `{fix_text}`"
                fix = Fix(title, (TextEdit(edit_at, fix_text),),
                          Applicability.SAFE if safe else Applicability.UNSAFE)
        self.reporter.report(code, at, message, pointer=pointer, node=ctx.node if ctx else None,
                             edge=ctx.edge if ctx else None, fix=fix)

    def _path_problem(self, p: PathProblem, scalar: YNode | None, starts: Sequence[int],
                      names: Sequence[str], whole: tuple[int, int], ctx: Context) -> None:
        if len(starts) == len(names) and p.segment < len(names):
            if p.replace is not None:
                a, b, text = p.replace
                s, e = starts[a], starts[b - 1] + len(names[b - 1])
            else:
                s, e, text = starts[p.segment], starts[p.segment] + len(names[p.segment]), None
        else:
            (s, e), text = whole, None
        # A legacy root's replacement is safe when it is the one current
        # spelling that types (PathProblem.safe); a did-you-mean is a guess.
        self.report_in(p.code, scalar, s, e, p.message, ctx, text, safe=p.safe)

    def _expr_ctx(self, ctx: Context) -> PlanExprContext:
        hit = self._ectx.get(id(ctx))
        if hit is None or hit[0] is not ctx:
            hit = (ctx, PlanExprContext(ctx))
            self._ectx[id(ctx)] = hit
        return hit[1]

    # -- public ------------------------------------------------------------------
    def check(self, v: Any, expected: Type | None, ctx: Context, *, code: str, what: str) -> Any:
        """Type ``v`` (a ValueExpr) in ``ctx`` against ``expected`` (``None``:
        no expectation).  Reports problems (mismatches with ``code``) and
        returns the typed form, or ``None`` when the type could not be
        established or did not fit."""
        if v is None:
            return None
        cls = v.__class__
        if cls is Literal:
            return self._literal(v, expected, ctx, code, what)
        if cls is Ref:
            return self._ref(v, expected, ctx, code, what)
        if cls is Template:
            return self.template(v, expected, ctx, code=code, what=what)
        if cls is Expr:
            return self.expression(v, expected, ctx, code=code, what=what)
        if cls is ListValue:
            return self._list(v, expected, ctx, code, what)
        if cls is MapValue:
            return self._map(v, expected, ctx, code, what)
        return None

    def mismatch(self, v: Any, expected: Type, got: Type | str, ctx: Context, code: str, what: str,
                 at: Any = None) -> None:
        got_s = got if isinstance(got, str) else T.describe(got)
        hint = ""
        if not isinstance(got, str) and got.kind == "responder" and expected.kind == "agent":
            # docs/reference.md#types: agent widens to responder, never back
            hint = ("; a responder may be a choice among agents (`{selectOne: [...]}`), not one agent: "
                    "declare the field `{type: responder}` (legal in the input of a node inside a "
                    "fan-out item body)")
        self.report(code, at if at is not None else v.src,
                    f"{what} expects {_expect(expected)}, got {got_s}{hint}", ctx)

    def _fits(self, v: Any, t: Type, expected: Type | None, ctx: Context, code: str, what: str,
              at: Any = None) -> bool:
        if expected is None or T.assignable(t, expected):
            return True
        if expected.kind == "work_items" and v.__class__ in (Literal, ListValue, MapValue):
            self._work_items_literal(v, ctx)
            return False
        self.mismatch(v, expected, t, ctx, code, what, at)
        return False

    def _work_items_literal(self, v: Any, ctx: Context) -> None:
        self.report("LP3306", v.src, "a work_items value cannot be written in a plan: it comes from a "
                    "callback's `workItems` output (bind it with `{ref: output.workItems}` and pass it "
                    "on through inputs)", ctx)

    # -- literals and constructors -----------------------------------------------
    def _literal(self, v: Literal, expected: Type | None, ctx: Context, code: str, what: str) -> Any:
        if expected is None or expected.kind == "unknown":
            typed = TypedLiteral(v.value, T.type_of_literal(v.value))
        else:
            if expected.kind == "work_items":
                self._work_items_literal(v, ctx)
                return None
            err = T.literal_error(v.value, expected)
            if err is not None:
                if expected.kind == "scope" and isinstance(v.value, str):
                    err += (" (a scope is {kind, scopeId}; a target string such as \"#general\" goes in "
                            "`sendMessage.target`, and is never coerced into a scope)")
                fix = self._enum_value_fix(v.src, v.value, expected)
                if expected.kind == "boolean" and isinstance(v.src, YScalar) and (fix := bool_fix(v.src)):
                    err += f" (under YAML 1.2 '{v.value}' is a string)"
                self.report(code, v.src, f"{what} expects {_expect(expected)}: {err}", ctx, fix=fix)
                return None
            t = T.NULL if v.value is None else T.required_form(expected)
            typed = TypedLiteral(v.value, t)
        self.values[v] = typed
        return typed

    def _list(self, v: ListValue, expected: Type | None, ctx: Context, code: str, what: str) -> Any:
        if expected is not None and expected.kind == "work_items":
            self._work_items_literal(v, ctx)
            return None
        elem: Type | None = None
        if expected is not None and expected.kind not in ("unknown", "array"):
            self.mismatch(v, expected, "a list", ctx, code, what)
            for it in v.items:  # still type the members (their references may be wrong too)
                self.check(it, None, ctx, code=code, what=what)
            return None
        if expected is not None and expected.kind == "array":
            elem = expected.items
        ok = True
        items = []
        for i, it in enumerate(v.items):
            typed = self.check(it, elem, ctx, code=code, what=f"element {i + 1} of {what}")
            ok = ok and typed is not None
            items.append(typed)
        if not ok:
            return None
        if elem is not None:
            t = T.array_of(T.required_form(elem))
        else:
            kinds = {x.type.kind for x in items}
            t = T.array_of(items[0].type if len(kinds) == 1 else (T.UNKNOWN if items else None))
        typed = TypedList(tuple(items), t)
        self.values[v] = typed
        return typed

    def _map(self, v: MapValue, expected: Type | None, ctx: Context, code: str, what: str) -> Any:
        k = expected.kind if expected is not None else "object"
        if k == "work_items":
            self._work_items_literal(v, ctx)
            return None
        if k == "scope":
            return self._scope_map(v, ctx, code, what)
        if k not in ("object", "unknown"):
            self.mismatch(v, expected, "a mapping", ctx, code, what)  # type: ignore[arg-type]
            for m in v.entries.values():
                self.check(m, None, ctx, code=code, what=what)
            return None
        fields = dict(expected.fields) if expected is not None and expected.fields is not None else None
        ok = True
        entries = []
        for key, m in v.entries.items():
            ft = fields.get(key) if fields is not None else None
            typed = self.check(m, ft, ctx, code=code, what=f"`{key}` of {what}")
            ok = ok and typed is not None
            entries.append((key, typed))
        if fields is not None:
            missing = [n for n, ft in fields.items() if not ft.optional and n not in v.entries]
            if missing:
                self.report(code, v.src, f"{what} is missing required field"
                            f"{'s' if len(missing) > 1 else ''} {', '.join(f'`{m}`' for m in missing)}", ctx)
                return None
        if not ok:
            return None
        typed = TypedMap(tuple(entries), T.OBJECT)
        self.values[v] = typed
        return typed

    def _scope_map(self, v: MapValue, ctx: Context, code: str, what: str) -> Any:
        keys = set(v.entries)
        if keys != {"kind", "scopeId"}:
            extra = sorted(keys - {"kind", "scopeId"})
            missing = sorted({"kind", "scopeId"} - keys)
            parts = ([f"missing {', '.join(missing)}"] if missing else []) + \
                    ([f"unknown {', '.join(extra)}"] if extra else [])
            self.report(code, v.src, f"{what} expects a scope, which is exactly {{kind, scopeId}} "
                        f"({'; '.join(parts)})", ctx)
            return None
        kind = self.check(v.entries["kind"], T.enum_of(T.SCOPE_KINDS), ctx, code=code, what=f"`kind` of {what}")
        sid_v = v.entries["scopeId"]
        sid = None
        if sid_v.__class__ is Literal:
            if not isinstance(sid_v.value, str) or not T.is_canonical_id(sid_v.value):
                self.report(code, sid_v.src, f"`scopeId` of {what} must be a canonical id such as tsk_api", ctx)
            else:
                sid = self.check(sid_v, T.STRING, ctx, code=code, what=f"`scopeId` of {what}")
        else:
            sid = self.check(sid_v, T.STRING, ctx, code=code, what=f"`scopeId` of {what}")
        if kind is None or sid is None:
            return None
        typed = TypedMap((("kind", kind), ("scopeId", sid)), T.SCOPE)
        self.values[v] = typed
        return typed

    # -- references ----------------------------------------------------------------
    def _ref(self, v: Ref, expected: Type | None, ctx: Context, code: str, what: str) -> Any:
        names = tuple(v.path)
        r = resolve_path(ctx, names)
        if isinstance(r, PathProblem):
            starts = _starts_in_dotted(v.text, names)
            self._path_problem(r, v.src, starts, names, (0, len(v.text)), ctx)
            return None
        typed = make_path(names, r.type, 0, len(v.text))
        if not self._fits(v, r.type, expected, ctx, code, what):
            return None
        self.values[v] = typed
        return typed

    # -- expressions -----------------------------------------------------------------
    def parse_expr(self, text: str) -> tuple[A.Expr | None, list[ExprError]]:
        hit = self._exprs.get(text)
        if hit is None:
            hit = parse_expression(text)
            self._exprs[text] = hit
        return hit

    def parse_tpl(self, text: str) -> tuple[A.TemplateAst | None, list[ExprError]]:
        """:func:`~loopc.compiler.expr.parser.parse_template`, memoised by
        template text (the parser also memoises every embedded expression by
        its own text, so ``{{ input.topic }}`` is parsed once)."""
        hit = self._templates.get(text)
        if hit is None:
            hit = parse_template(text)
            self._templates[text] = hit
        return hit

    def _roots_first(self, paths: Sequence[A.Path], scalar: YNode | None, ctx: Context) -> None:
        """Report paths whose root is not a root of docs/reference.md#references (unknown or legacy
        roots) with LP3201/LP3203; the checker's own LP3201 is dropped."""
        for p in paths:
            if p.root in A.ROOTS:
                continue
            names = tuple(p.root.split(".")) + p.segments
            r = resolve_path(ctx, names, in_expr=True)
            if isinstance(r, PathProblem):
                starts = list(p.name_starts) if len(p.name_starts) == len(names) else []
                self._path_problem(r, scalar, starts, names, (p.start, p.end), ctx)

    def _expr_errors(self, errors: Sequence[ExprError], scalar: YNode | None, ctx: Context,
                     drop: frozenset[tuple[int, int]] = frozenset()) -> None:
        for e in errors:
            if e.code in (_ROOT_CODE, _AGENT_IN_TARGET):
                continue
            if e.code == _NON_SCALAR and (e.start, e.end) in drop:
                continue
            self.report_in(e.code, scalar, e.start, e.end, e.message, ctx, e.replacement, e.fix_span)

    def expression(self, v: Expr, expected: Type | None, ctx: Context, *, code: str, what: str) -> Any:
        """Type an ``Expr`` (``{expr: ...}``, ``when``, ``wait.condition``)."""
        node, errs = self.parse_expr(v.text)
        if node is None:
            self._expr_errors(errs, v.src, ctx)
            self._rejected(v, errs)
            return None
        checked = self._check_cached(v.text, node, ctx)
        if checked is None:
            paths = [n for n in A.walk(node) if n.__class__ is A.Path]
            self._roots_first(paths, v.src, ctx)
            checked = check_ast(node, self._expr_ctx(ctx))
        self._expr_errors(checked.errors, v.src, ctx)
        if checked.errors or checked.ast is None:
            self._rejected(v, checked.errors)
            return None
        typed = checked.ast
        t = typed.type or T.UNKNOWN
        if expected is not None and typed.__class__ is A.Lit and isinstance(typed.value, str) \
                and expected.kind in T.STRING_SHAPED and expected.kind != "string":
            err = T.wire_form_error(typed.value, expected)
            if err:
                self.report(code, v.src, f"{what} expects {_expect(expected)}: {err}", ctx)
                return None
            typed = typed.evolve(type=T.required_form(expected))
            t = typed.type
        if not self._fits(v, t, expected, ctx, code, what):
            return None
        self.values[v] = typed
        return typed

    def _rejected(self, v: Expr, errors: Sequence[ExprError]) -> None:
        """Taint the meaning of an expression this pass rejected with an
        error (:func:`~loopc.compiler.report.expr_entity`)."""
        if v.src is not None and any(codes.get(e.code).severity is Severity.ERROR for e in errors):
            self.reporter.taint(expr_entity(v.src.pointer))

    def _check_cached(self, text: str, tree: Any, ctx: Context) -> Any:
        """The checker's result for ``tree`` (an expression or a template
        parsed from ``text``), memoised by ``text`` and the types its paths
        resolve to — everything the checker's outcome depends on.  ``None``
        (check it the slow way) when a path does not resolve here: those
        messages name this location."""
        paths = self._paths.get(text)
        if paths is None:
            roots = [ip.expr for ip in tree.interps] if tree.__class__ is A.TemplateAst else [tree]
            paths = tuple(n for r in roots for n in A.walk(r) if n.__class__ is A.Path)
            self._paths[text] = paths
        types = []
        for p in paths:
            if p.root not in _ROOTS:
                return None
            r = resolve_path(ctx, (*p.root.split("."), *p.segments), in_expr=True)
            if r.__class__ is not Resolved:
                return None
            types.append(r.type)
        key = (text, tree.__class__ is A.TemplateAst, tuple(types))
        hit = self._checked.get(key)
        if hit is None:
            ectx = self._expr_ctx(ctx)
            hit = check_template_ast(tree, ectx) if tree.__class__ is A.TemplateAst else check_ast(tree, ectx)
            self._checked[key] = hit
        return hit

    def _paths_only(self, tpl: A.TemplateAst, ctx: Context) -> CheckedTemplate | None:
        """Fast path of :func:`check_template_ast` for the common template
        whose interpolations are all bare paths that resolve, and that would
        raise no error (a multi-part template interpolating scalars only).
        Returns the same typed tree the checker would build, or ``None`` to
        let the checker run (and report whatever is wrong)."""
        parts: list[Any] = []
        interps = 0
        nonscalar = False
        for p in tpl.parts:
            if p.__class__ is str:
                parts.append(p)
                continue
            e = p.expr  # type: ignore[union-attr]
            if e.__class__ is not A.Path or e.root not in _ROOTS:
                return None
            r = resolve_path(ctx, (*e.root.split("."), *e.segments), in_expr=True)
            if r.__class__ is not Resolved:
                return None
            t = r.type
            nonscalar = nonscalar or (t.kind not in T.INTERPOLABLE and t.kind != "unknown")
            interps += 1
            parts.append(A.Interp(expr=A.Path(root=e.root, segments=e.segments, start=e.start, end=e.end,
                                              name_starts=e.name_starts, type=t),
                                  start=p.start, end=p.end))  # type: ignore[union-attr]
        single = interps == 1 and len(parts) == 1
        if nonscalar and not single:
            return None
        return CheckedTemplate(A.TemplateAst(parts=tuple(parts), text=tpl.text), None, (), single)

    def template(self, v: Template, expected: Type | None, ctx: Context, *, code: str, what: str,
                 render: bool = False, forbid_agent: bool = False) -> TypedTemplate | None:
        """Type a ``Template``.

        ``render`` — the key renders text (``text``, ``summary``, ``target``,
        ``detail``): a single ``{{ expr }}`` of any scalar type is rendered;
        a non-scalar one is a mismatch.  ``forbid_agent`` — ``target``: an
        interpolated ``agent``/``array<agent>`` is LP3402 (docs/reference.md#templates).
        Otherwise a single ``{{ expr }}`` passes its value with its type, and
        any other template is a ``string`` (docs/reference.md#templates).
        """
        tpl, errs = self.parse_tpl(v.text)
        if tpl is None:
            self._expr_errors(errs, v.src, ctx)
            return None
        checked = self._paths_only(tpl, ctx) or self._check_cached(v.text, tpl, ctx)
        if checked is None:
            interps = tpl.interps
            paths = [n for ip in interps for n in A.walk(ip.expr) if n.__class__ is A.Path]
            self._roots_first(paths, v.src, ctx)
            checked = check_template_ast(tpl, self._expr_ctx(ctx))
        drop: set[tuple[int, int]] = set()
        agents: list[A.Interp] = []
        typed_ast = checked.ast
        if forbid_agent and typed_ast is not None:
            for ip in typed_ast.interps:
                it = ip.expr.type
                if it is not None and (it.kind == "agent" or (it.kind == "array" and it.items is not None
                                                               and it.items.kind == "agent")):
                    agents.append(ip)
                    drop.add((ip.start, ip.end))
        self._expr_errors(checked.errors, v.src, ctx, frozenset(drop))
        for ip in agents:
            self.report_in("LP3402", v.src, ip.start, ip.end,
                           f"{T.describe(ip.expr.type)} `{A.to_source(ip.expr)}` interpolated into "
                           "`target`: agent identity selects callback execution through `responder`, not "
                           "the delivery destination; address a channel, dm, task or team, "
                           "and declare `responder` separately", ctx)
        if checked.errors or agents or typed_ast is None:
            return None
        single = typed_ast.is_single
        if typed_ast.is_constant:
            t: Type = T.STRING
            if expected is not None and expected.kind not in ("string", "unknown"):
                if expected.kind == "work_items":
                    self._work_items_literal(v, ctx)
                    return None
                err = T.literal_error(v.text, expected)
                if err is not None:
                    self.report(code, v.src, f"{what} expects {_expect(expected)}: {err}", ctx)
                    return None
                t = T.required_form(expected)
            out = TypedTemplate(typed_ast, t, True)
        elif single:
            ip = typed_ast.parts[0]
            assert isinstance(ip, A.Interp)  # is_single
            et = ip.expr.type or T.UNKNOWN
            if render:
                if et.kind not in T.INTERPOLABLE and et.kind not in ("unknown",):
                    self.report_in(_NON_SCALAR, v.src, ip.start, ip.end,
                                   f"cannot interpolate {T.article(T.describe(et))} into {what}: templates "
                                   "render scalars only (string, enum, number, boolean, duration, datetime, "
                                   "member, agent, channel)", ctx)
                    return None
                out = TypedTemplate(typed_ast, T.STRING, et.kind not in ("string", "enum"))
            else:
                lit = ip.expr
                if expected is not None and lit.__class__ is A.Lit and isinstance(lit.value, str) \
                        and expected.kind in T.STRING_SHAPED and expected.kind != "string":
                    # "{{ 'PT2H' }}": the string literal takes the expected type
                    # (docs/reference.md#types)
                    err = T.wire_form_error(lit.value, expected)
                    if err:
                        self.report_in(code, v.src, lit.start, lit.end, f"{what} expects {_expect(expected)}: {err}", ctx)
                        return None
                    et = T.required_form(expected)
                    typed_ast = typed_ast.evolve(parts=(ip.evolve(expr=lit.evolve(type=et)),))
                if expected is not None and not T.assignable(et, expected):
                    if expected.kind == "string" and et.kind in T.INTERPOLABLE:
                        out = TypedTemplate(typed_ast, T.STRING, True)  # rendered into a string
                    else:
                        self.mismatch(v, expected, et, ctx, code, what,
                                      self.sub_span(v.src, ip.expr.start, ip.expr.end))
                        return None
                else:
                    out = TypedTemplate(typed_ast, et, False)
        else:
            if expected is not None and not render and expected.kind not in ("string", "unknown") \
                    and not T.assignable(T.STRING, expected):
                self.report(code, v.src, f"{what} expects {_expect(expected)}, but text "
                            "with {{ }} interpolations is a string (use exactly one {{ expression }} and "
                            "nothing else to pass a typed value)", ctx)
                return None
            out = TypedTemplate(typed_ast, T.STRING, True)
        self.values[v] = out
        return out


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _expect(t: Type) -> str:
    """``expects ...`` wording: a responder slot also takes an agent."""
    if t.kind == "responder":
        return "an agent or responder"
    return T.describe(T.required_form(t))


def _starts_in_dotted(text: str, names: Sequence[str]) -> list[int]:
    """Start offsets of each dot-separated name of a ``{ref: ...}`` path."""
    out = []
    pos = 0
    for n in names:
        out.append(pos)
        pos += len(n) + 1
    return out if pos - 1 == len(text) else []


def _load_value_span() -> Any:
    try:
        from loopc.compiler.scalarpos import value_span
    except Exception:  # noqa: BLE001 - module not available yet
        return None
    return value_span
