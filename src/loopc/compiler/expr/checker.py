"""Static typing of expressions and templates (every
expression is typed in the context legal where it is: docs/reference.md#references,
docs/reference.md#expressions, docs/reference.md#templates).

An :class:`ExprContext` says which reference roots exist at a location and
their types (built by the type pass from the plan, the scope map and the
node/edge being checked).  :func:`check_ast` types a parsed tree bottom-up
without recursion and returns a :class:`Checked` holding a *typed* copy of
the tree (every node's ``type`` set, string literals re-typed where they
took an expected type) for lowering.

Typing rules (strict; no coercion except string literals taking a
string-shaped type when they match its wire form):

* ``!``, ``&&``, ``||`` take booleans;
* ``==``/``!=`` take scalars of one type (an ``enum`` with a ``string``;
  ``null`` only against an optional value);
* ``< <= > >=`` take numbers, strings/enums (code-point order), durations or
  datetimes, both sides of one type;
* ``x in arr`` needs an array whose element type compares with ``x``;
* ``contains(string, string)`` / ``contains(array<T>, T)``,
  ``startsWith``/``endsWith(string, string)``, ``length(string|array)``
  → number;
* array literals have elements of one type;
* a path below an untyped ``object`` is ``unknown`` and fits anywhere
  (checked at run time, docs/reference.md#references); after an error a subtree is
  ``unknown`` too, so one defect gives one diagnostic.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence, TypeGuard

from loopc.value import Value
from loopc.compiler import types as T
from loopc.compiler.expr import ast as A
from loopc.compiler.expr.parser import ExprError, parse_expression, parse_path, parse_template
from loopc.compiler.types import Type

# Codes (registered in loopc/codes/types.py).
UNKNOWN_ROOT = "LP3201"
ROOT_UNAVAILABLE = "LP3202"
UNKNOWN_FIELD = "LP3204"
NOT_AN_OBJECT = "LP3205"
TYPE_MISMATCH = "LP3020"
UNKNOWN_FUNCTION = "LP3021"
BAD_ARGUMENTS = "LP3022"
NOT_BOOLEAN = "LP3023"
NOT_COMPARABLE = "LP3024"
LITERAL_MISMATCH = "LP3025"
MIXED_ARRAY = "LP3026"
NULL_COMPARE = "LP3027"
NON_SCALAR = "LP3030"
AGENT_IN_TARGET = "LP3402"


# ---------------------------------------------------------------------------
# Context
# ---------------------------------------------------------------------------

class ContextError(Value):
    """Why a path does not resolve: ``code`` (LP3202/LP3204/LP3205),
    ``message``, and ``segment`` — the index of the offending segment
    (``-1`` = the root itself)."""

    code: str
    message: str
    segment: int = -1
    #: suggested replacement for the offending segment (did-you-mean)
    replacement: str | None = None


#: Where each root is legal (docs/reference.md#references), for the default "not here" message.
ROOT_WHERE = {
    "run.input": "everywhere",
    "run.state": "everywhere",
    "input": "in node configuration and edge binds",
    "output": "in an edge bind (the source activation's output)",
    "branches": "in the merge of an `all` join closing a fork or all_match switch",
    "winner": "in the merge of an `any` join",
    "item": "on edges leaving a fan_out's item port and inside the item body",
    "items": "in the merge of the join closing a fan_out",
    "loop": "inside a counted loop's body (from the edge leaving its body port up to continue/break)",
}

_LEGACY = {
    "inputs": "legacy root 'inputs' is not part of loop.plan/v1: use run.input.* (Plan input) "
              "or input.* (this activation's input)",
    "event": "'event.*' is not part of loop.plan/v1: expressions read typed contexts only "
             "(run.input, run.state, input, output, ...)",
    "ctx": "'ctx.*' is not part of loop.plan/v1: expressions read typed contexts only "
           "(run.input, run.state, input, output, ...)",
    "state": "legacy root 'state' is not part of loop.plan/v1: use run.state.*",
    "steps": "there is no global 'steps.<node>.output' in loop.plan/v1 (a node may run many times): "
             "pass values along edges with bind and read them as input.*",
}


class ExprContext:
    """The typed roots legal at one location.

    ``roots`` maps a root name (:data:`~loopc.compiler.expr.ast.ROOTS`) to
    its type — usually a typed object (:func:`~loopc.compiler.types.record_of`
    of a contract) or e.g. :data:`~loopc.compiler.types.ITEMS`.
    ``unavailable`` optionally maps a root that is *not* legal here to a
    message explaining why (otherwise a default from :data:`ROOT_WHERE`).

    Override :meth:`resolve` for custom behaviour; the default walks typed
    objects field by field.
    """

    def __init__(self, roots: Mapping[str, Type], unavailable: Mapping[str, str] | None = None) -> None:
        self.roots = dict(roots)
        self.unavailable = dict(unavailable or {})

    def resolve(self, root: str, segments: Sequence[str]) -> Type | ContextError:
        """Type of ``root.seg1.seg2...`` or a :class:`ContextError`.

        ``root`` is a known root name.  Fields of a typed object must exist
        (LP3204 with a suggestion); below an untyped ``object`` (or
        ``unknown``) the type is ``unknown``; selecting a field of a scalar or
        array is LP3205.  ``scope`` values have ``kind`` and ``scopeId``.
        Optionality propagates to everything below an optional value.
        """
        t = self.roots.get(root)
        if t is None:
            why = self.unavailable.get(root)
            if why is None:
                where = ROOT_WHERE.get(root, "")
                why = f"'{root}.*' is not available here" + (f"; it exists {where}" if where else "")
            return ContextError(ROOT_UNAVAILABLE, why, -1)
        return resolve_fields(t, root, segments)


def resolve_fields(t: Type, root: str, segments: Sequence[str]) -> Type | ContextError:
    """Walk ``segments`` below a value of type ``t`` (see
    :meth:`ExprContext.resolve`)."""
    optional = t.optional
    where = root
    for i, seg in enumerate(segments):
        k = t.kind
        if k == "unknown" or (k == "object" and t.fields is None):
            return T.with_optional(T.UNKNOWN, optional)
        if k == "object":
            ft = t.field(seg)
            if ft is None:
                names = t.field_names()
                hint = _suggest(seg, names)
                if names:
                    known = ", ".join(names[:12]) + (", …" if len(names) > 12 else "")
                    msg = f"'{where}' has no field '{seg}'{hint}; its fields are: {known}"
                else:
                    msg = f"'{where}' has no field '{seg}': it declares no fields"
                return ContextError(UNKNOWN_FIELD, msg, i)
            t = ft
        elif k == "scope":
            ft = dict(T.SCOPE_FIELDS).get(seg)
            if ft is None:
                return ContextError(UNKNOWN_FIELD, f"a scope has only 'kind' and 'scopeId', not '{seg}'", i)
            t = ft
        else:
            return ContextError(
                NOT_AN_OBJECT,
                f"'{where}' is {T.article(T.describe(T.required_form(t)))}, which has no fields "
                f"(cannot read '.{seg}')", i)
        optional = optional or t.optional
        where = f"{where}.{seg}"
    return T.with_optional(t, optional) if optional else t


def _suggest(word: str, names: Sequence[str]) -> str:
    import difflib  # diagnostics only (start-up: issue 26)

    m = difflib.get_close_matches(word, list(names), n=1, cutoff=0.6)
    if not m:
        low = {n.lower(): n for n in names}
        if word.lower() in low:
            m = [low[word.lower()]]
    return f" (did you mean '{m[0]}'?)" if m else ""


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------

class Checked(Value):
    """A checked expression or path: ``ast`` is the typed tree (``None`` if
    it did not parse), ``type`` its type (``None`` if it did not parse;
    ``unknown`` parts where errors were found), ``errors`` in source order."""

    ast: A.Expr | None
    type: Type | None
    errors: tuple[ExprError, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors


class CheckedTemplate(Value):
    """A checked template.

    ``ast`` is the typed :class:`~loopc.compiler.expr.ast.TemplateAst`
    (``None`` if it did not parse), ``type`` the template's type, and
    ``passthrough`` true when the template is exactly one ``{{ expr }}`` whose
    value is used as is (typed like ``expr``); false when the template renders
    a string (text around interpolations, or a single non-string scalar
    rendered where a string is expected).
    """

    ast: A.TemplateAst | None
    type: Type | None
    errors: tuple[ExprError, ...] = ()
    passthrough: bool = False

    @property
    def ok(self) -> bool:
        return not self.errors


# ---------------------------------------------------------------------------
# The checker
# ---------------------------------------------------------------------------

def _is_str_lit(n: A.Expr) -> TypeGuard[A.Lit]:
    return n.__class__ is A.Lit and isinstance(n.value, str) and (n.type is None or n.type.kind == "string")


def _is_null_lit(n: A.Expr) -> bool:
    return n.__class__ is A.Lit and n.value is None


def _kind(n: A.Expr) -> str:
    return n.type.kind if n.type is not None else "unknown"


class _Checker:
    """One checking run: collects errors while rebuilding the tree."""

    def __init__(self, ctx: ExprContext) -> None:
        self.ctx = ctx
        self.errors: list[ExprError] = []

    def err(self, code: str, msg: str, start: int, end: int) -> None:
        self.errors.append(ExprError(code, msg, start, end))

    # -- coercion of literals to an expected type ---------------------------
    def coerce(self, n: A.Expr, target: Type) -> tuple[A.Expr, bool | None]:
        """Try to give literal ``n`` the type ``target``.

        Returns ``(node, True)`` when re-typed (or trivially fitting),
        ``(node, False)`` after reporting a literal mismatch, ``(node, None)``
        when ``n`` is not a coercible literal (caller applies normal rules).
        """
        tk = target.kind
        if _is_str_lit(n):
            if tk == "unknown" or tk == "string":
                return n, True
            if tk in T.STRING_SHAPED:
                why = T.wire_form_error(n.value, target)
                if why:
                    near = _enum_fix(n.value, target)
                    self.errors.append(ExprError(LITERAL_MISMATCH, _expected(why, target), n.start, n.end, near,
                                                 None if near is None else (n.start + 1, n.end - 1)))
                    return n.evolve(type=T.UNKNOWN), False
                return n.evolve(type=T.required_form(target)), True
            return n, None
        if n.__class__ is A.ArrayLit and tk == "array" and target.items is not None and n.items:
            new_items = []
            ok = True
            changed = False
            for it in n.items:
                c, r = self.coerce(it, target.items)
                if r is None:
                    if not T.assignable(it.type or T.UNKNOWN, target.items):
                        return n, None
                    c = it
                elif r is False:
                    ok = False
                changed = changed or c is not it
                new_items.append(c)
            if not ok:
                return n.evolve(items=tuple(new_items), type=T.UNKNOWN), False
            if changed:
                return n.evolve(items=tuple(new_items), type=T.array_of(T.required_form(target.items))), True
            return n, None
        return n, None

    def unify_pair(self, left: A.Expr, right: A.Expr) -> tuple[A.Expr, A.Expr, bool | None]:
        """Let a string literal on one side take the other side's string-shaped
        type.  Third item: True coerced, False reported, None nothing to do."""
        if _is_str_lit(left) and not _is_str_lit(right) and right.type is not None:
            c, r = self.coerce(left, T.required_form(right.type))
            if r is not None:
                return c, right, r
        if _is_str_lit(right) and not _is_str_lit(left) and left.type is not None:
            c, r = self.coerce(right, T.required_form(left.type))
            if r is not None:
                return left, c, r
        return left, right, None

    # -- per-node rules -------------------------------------------------------
    def visit(self, n: A.Expr, kids: tuple[A.Expr, ...]) -> A.Expr:
        cls = n.__class__
        if cls is A.Lit:
            v = n.value  # type: ignore[union-attr]
            return n.evolve(type=T.type_of_literal(v))
        if cls is A.Path:
            return n.evolve(type=self.path(n))  # type: ignore[arg-type]
        if cls is A.Not:
            (op,) = kids
            self.need_bool(op, "'!'")
            return A.with_children(n, kids, type=T.BOOLEAN)
        if cls is A.And or cls is A.Or:
            sym = "'&&'" if cls is A.And else "'||'"
            for k in kids:
                self.need_bool(k, sym)
            return A.with_children(n, kids, type=T.BOOLEAN)
        if cls is A.Compare:
            return self.compare(n, kids)  # type: ignore[arg-type]
        if cls is A.Call:
            return self.call(n, kids)  # type: ignore[arg-type]
        if cls is A.ArrayLit:
            return self.array(n, kids)  # type: ignore[arg-type]
        raise TypeError(f"not an expression node: {n!r}")  # pragma: no cover

    def path(self, n: A.Path) -> Type:
        root = n.root
        if root not in A.ROOTS:
            s, e = n.segment_span(-1)
            if root in _LEGACY:
                msg = _LEGACY[root]
            elif root == "run":
                msg = "'run' has only run.input.* (Plan input) and run.state.* (Run state)"
            elif not n.segments:
                hint = _suggest(root, A.ROOTS)
                msg = (f"unknown name '{root}'{hint}: a path starts with one of "
                       f"{', '.join(A.ROOTS)}; write a string literal in quotes ('{root}')")
            else:
                hint = _suggest(root, A.ROOTS)
                msg = f"unknown reference root '{root}'{hint}; roots are {', '.join(A.ROOTS)}"
            self.err(UNKNOWN_ROOT, msg, s, e)
            return T.UNKNOWN
        try:
            r = self.ctx.resolve(root, n.segments)
        except Exception as exc:  # noqa: BLE001 - a bad context must not crash checking
            self.err(ROOT_UNAVAILABLE, f"cannot resolve '{n.text}': {exc}", n.start, n.end)
            return T.UNKNOWN
        if isinstance(r, ContextError):
            if r.segment < 0:
                s, e = n.segment_span(-1)
            else:
                s, e = n.segment_span(r.segment)
            self.errors.append(ExprError(r.code, r.message, s, e, r.replacement))
            return T.UNKNOWN
        return r

    def need_bool(self, k: A.Expr, what: str) -> None:
        kd = _kind(k)
        if kd in ("boolean", "unknown"):
            return
        self.err(NOT_BOOLEAN, f"{what} needs a boolean operand; this is "
                 f"{T.article(T.describe(k.type))}", k.start, k.end)

    def compare(self, n: A.Compare, kids: tuple[A.Expr, ...]) -> A.Expr:
        left, right = kids
        op = n.op
        done = lambda l, r: A.with_children(n, (l, r), type=T.BOOLEAN)  # noqa: E731
        lk, rk = _kind(left), _kind(right)
        if op == "in":
            if rk == "unknown":
                return done(left, right)
            if rk != "array":
                self.err(NOT_COMPARABLE, f"'in' needs an array on the right; this is "
                         f"{T.article(T.describe(right.type))}", right.start, right.end)
                return done(left, right)
            elem = right.type.items if right.type is not None else None
            if elem is None or lk == "unknown" or elem.kind == "unknown":
                return done(left, right)
            if lk not in T.EQUATABLE:
                self.err(NOT_COMPARABLE, f"'in' tests membership of a scalar; this is "
                         f"{T.article(T.describe(left.type))}", left.start, left.end)
                return done(left, right)
            # a literal array on the right takes the left's type; a string
            # literal on the left takes the element type
            if right.__class__ is A.ArrayLit and left.type is not None and not _is_str_lit(left):
                c, r = self.coerce(right, T.array_of(T.required_form(left.type)))
                if r is not None:
                    return done(left, c)
            if _is_str_lit(left):
                c, r = self.coerce(left, T.required_form(elem))
                if r is not None:
                    return done(c, right)
            assert left.type is not None  # lk != "unknown"
            if not T.comparable(left.type, elem) or not self.enum_overlap(left.type, elem):
                self.err(TYPE_MISMATCH, f"'in' compares {T.describe(left.type)} with elements of type "
                         f"{T.describe(elem)}; both must have one type", n.start, n.end)
            return done(left, right)
        # == != < <= > >=
        if lk == "unknown" or rk == "unknown":
            return done(left, right)
        if _is_null_lit(left) or _is_null_lit(right):
            other = right if _is_null_lit(left) else left
            if op not in ("==", "!="):
                self.err(NOT_COMPARABLE, f"'{op}' cannot compare with null", n.start, n.end)
            elif other.type is not None and not other.type.optional and other.type.kind not in ("null", "unknown"):
                self.err(NULL_COMPARE, f"'{A.to_source(other)}' is {T.describe(other.type)} and never "
                         "null (it is required or has a default); only optional values compare with null",
                         n.start, n.end)
            return done(left, right)
        left, right, coerced = self.unify_pair(left, right)
        if coerced is False:
            return done(left, right)
        lk, rk = _kind(left), _kind(right)
        if lk == "unknown" or rk == "unknown":
            return done(left, right)
        allowed = T.EQUATABLE if op in ("==", "!=") else T.ORDERABLE
        for side in (left, right):
            if _kind(side) not in allowed:
                what = "scalars" if op in ("==", "!=") else "numbers, strings, durations or datetimes"
                self.err(NOT_COMPARABLE, f"'{op}' compares {what}; this is "
                         f"{T.article(T.describe(side.type))}", side.start, side.end)
                return done(left, right)
        if not T.comparable(left.type, right.type):  # type: ignore[arg-type]
            self.err(TYPE_MISMATCH, f"'{op}' compares values of one type; left is "
                     f"{T.describe(left.type)}, right is {T.describe(right.type)}", n.start, n.end)
        elif not self.enum_overlap(left.type, right.type):
            self.err(TYPE_MISMATCH, f"'{op}' compares two enums with no value in common "
                     f"({T.describe(left.type)} vs {T.describe(right.type)})", n.start, n.end)
        return done(left, right)

    @staticmethod
    def enum_overlap(a: Type | None, b: Type | None) -> bool:
        if a is None or b is None or a.kind != "enum" or b.kind != "enum":
            return True
        if a.values is None or b.values is None:
            return True
        return bool(set(a.values) & set(b.values))

    def call(self, n: A.Call, kids: tuple[A.Expr, ...]) -> A.Expr:
        name = n.name
        if name not in A.FUNCTIONS:
            hint = _suggest(name, A.FUNCTIONS)
            self.err(UNKNOWN_FUNCTION, f"unknown function '{name}'{hint}; the functions are "
                     "contains, startsWith, endsWith and length", n.start, n.name_end)
            return A.with_children(n, kids, type=T.UNKNOWN)
        arity = 1 if name == "length" else 2
        if len(kids) != arity:
            self.err(BAD_ARGUMENTS, f"{name}() takes {arity} argument{'s' if arity > 1 else ''}, "
                     f"not {len(kids)}", n.start, n.end)
            return A.with_children(n, kids, type=T.NUMBER if name == "length" else T.BOOLEAN)
        if name == "length":
            (x,) = kids
            if _kind(x) not in ("string", "enum", "array", "unknown"):
                self.err(BAD_ARGUMENTS, f"length() takes a string or an array; this is "
                         f"{T.article(T.describe(x.type))}", x.start, x.end)
            return A.with_children(n, kids, type=T.NUMBER)
        a, b = kids
        ak = _kind(a)
        stringish = ("string", "enum")
        if name == "contains" and ak == "array":
            elem = a.type.items if a.type is not None else None
            if elem is not None and elem.kind != "unknown" and _kind(b) != "unknown":
                if _is_str_lit(b):
                    c, r = self.coerce(b, T.required_form(elem))
                    if r is not None:
                        return A.with_children(n, (a, c), type=T.BOOLEAN)
                if _kind(b) not in T.EQUATABLE:
                    self.err(BAD_ARGUMENTS, f"contains(array, x) needs a scalar x; this is "
                             f"{T.article(T.describe(b.type))}", b.start, b.end)
                elif not T.comparable(b.type, elem) or not self.enum_overlap(b.type, elem):  # type: ignore[arg-type]
                    self.err(BAD_ARGUMENTS, f"contains() looks for {T.describe(b.type)} in "
                             f"{T.describe(a.type)}; the element types differ", b.start, b.end)
            return A.with_children(n, kids, type=T.BOOLEAN)
        if ak not in stringish + ("unknown",):
            want = "a string or an array" if name == "contains" else "a string"
            self.err(BAD_ARGUMENTS, f"{name}() takes {want} as its first argument; this is "
                     f"{T.article(T.describe(a.type))}", a.start, a.end)
            return A.with_children(n, kids, type=T.BOOLEAN)
        if _kind(b) not in stringish + ("unknown",):
            self.err(BAD_ARGUMENTS, f"{name}() takes a string as its second argument; this is "
                     f"{T.article(T.describe(b.type))}", b.start, b.end)
        return A.with_children(n, kids, type=T.BOOLEAN)

    def array(self, n: A.ArrayLit, kids: tuple[A.Expr, ...]) -> A.Expr:
        if not kids:
            return A.with_children(n, kids, type=T.array_of(None))
        # anchor: the first element that is neither a string literal nor unknown
        anchor: Type | None = None
        for k in kids:
            if k.type is not None and k.type.kind != "unknown" and not _is_str_lit(k):
                anchor = T.required_form(k.type)
                break
        if anchor is None:
            if all(_is_str_lit(k) for k in kids):
                return A.with_children(n, kids, type=T.array_of(T.STRING))
            return A.with_children(n, kids, type=T.array_of(T.UNKNOWN))
        out = []
        elem = anchor
        bad = False
        for k in kids:
            if _kind(k) == "unknown" and not _is_str_lit(k):
                out.append(k)
                continue
            if _is_str_lit(k):
                c, r = self.coerce(k, anchor)
                if r is not None:
                    out.append(c)
                    bad = bad or r is False
                    continue
            kt = k.type or T.UNKNOWN
            if kt.kind in ("array", "object"):
                same = T.assignable(kt, anchor) or T.assignable(anchor, kt)
                same = same and kt.kind == anchor.kind
            else:
                same = T.comparable(kt, anchor) and kt.kind != "null" and anchor.kind != "null"
            if not same:
                self.err(MIXED_ARRAY, f"array elements must have one type: this is "
                         f"{T.describe(kt)}, an earlier element is {T.describe(anchor)}", k.start, k.end)
                bad = True
            elif {kt.kind, anchor.kind} == {"enum", "string"}:
                elem = T.STRING
            out.append(k)
        return A.with_children(n, tuple(out), type=T.UNKNOWN if bad else T.array_of(elem))

    # -- entry points ---------------------------------------------------------
    def run(self, node: A.Expr) -> A.Expr:
        return A.map_postorder(node, self.visit)

    def expect(self, node: A.Expr, expected: Type) -> A.Expr:
        """Check the whole expression against ``expected`` (top level)."""
        c, r = self.coerce(node, expected)
        if r is not None:
            return c
        t = node.type or T.UNKNOWN
        if not T.assignable(t, expected):
            self.err(TYPE_MISMATCH, f"this expression is {T.describe(t)}; "
                     f"{T.describe(T.required_form(expected))} is expected here", node.start, node.end)
        return node


def _sorted(errors: list[ExprError]) -> tuple[ExprError, ...]:
    return tuple(sorted(errors, key=lambda e: (e.start, e.end, e.code)))


def check_ast(node: A.Expr, ctx: ExprContext, expected: Type | None = None) -> Checked:
    """Type-check a parsed expression against ``ctx`` (and ``expected``, if
    given: a string literal may take it, otherwise the type must be
    :func:`~loopc.compiler.types.assignable` — LP3020).  Never raises."""
    ch = _Checker(ctx)
    typed = ch.run(node)
    if expected is not None:
        typed = ch.expect(typed, expected)
    return Checked(typed, typed.type, _sorted(ch.errors))


def check_expression(text: str, ctx: ExprContext, expected: Type | None = None) -> Checked:
    """Parse and type-check one expression (``when``, ``wait.condition``,
    ``{expr: ...}``).  ``expected`` is e.g. ``BOOLEAN`` for conditions.
    Errors carry offsets into ``text`` (docs/reference.md#expressions)."""
    node, errs = parse_expression(text)
    if errs or node is None:
        return Checked(None, None, tuple(errs))
    return check_ast(node, ctx, expected)


def check_path(text: str, ctx: ExprContext, expected: Type | None = None) -> Checked:
    """Parse and type-check the path of ``{ref: <path>}`` (docs/reference.md#values)."""
    node, errs = parse_path(text)
    if errs or node is None:
        return Checked(None, None, tuple(errs))
    return check_ast(node, ctx, expected)


def check_template_ast(tpl: A.TemplateAst, ctx: ExprContext, expected: Type | None = None,
                       *, forbid_agent: bool = False) -> CheckedTemplate:
    """Type a parsed template (docs/reference.md#templates).

    * exactly one ``{{ expr }}`` and nothing else → the expression's type
      (``passthrough``); where a ``string`` is ``expected`` a non-string
      scalar is rendered instead (type ``string``);
    * otherwise ``string``, and every interpolation must be a scalar
      (:data:`~loopc.compiler.types.INTERPOLABLE`; LP3030 otherwise);
    * a template with no interpolation is its text, which — like a string
      literal — takes a string-shaped ``expected`` type when it matches the
      wire form (LP3025 otherwise);
    * ``forbid_agent`` (the ``target`` key, docs/reference.md#templates): interpolating an
      agent is LP3402.
    """
    ch = _Checker(ctx)
    parts: list[Any] = []
    for p in tpl.parts:
        if isinstance(p, A.Interp):
            parts.append(p.evolve(expr=ch.run(p.expr)))
        else:
            parts.append(p)
    interps = [p for p in parts if isinstance(p, A.Interp)]
    for ip in interps:
        t = ip.expr.type or T.UNKNOWN
        if forbid_agent and t.kind == "agent":
            ch.err(AGENT_IN_TARGET, "an agent cannot be interpolated into a message target "
                   "; address a channel, dm, task or team instead", ip.start, ip.end)
    typed = tpl.evolve(parts=tuple(parts))
    passthrough = False
    if len(parts) == 1 and isinstance(parts[0], A.Interp):
        ip = parts[0]
        t = ip.expr.type or T.UNKNOWN
        passthrough = True
        if expected is not None:
            if expected.kind == "string" and t.kind in T.INTERPOLABLE and t.kind != "string":
                passthrough = t.kind == "enum"  # an enum is a string already
                t = T.STRING
            elif expected.kind == "string" and t.kind not in T.INTERPOLABLE and t.kind != "unknown":
                ch.err(NON_SCALAR, f"cannot interpolate {T.article(T.describe(t))}: templates render "
                       "scalars only (string, enum, number, boolean, duration, datetime, member, "
                       "agent, channel)", ip.start, ip.end)
                t = T.UNKNOWN
            else:
                new = ch.expect(ip.expr, expected)
                if new is not ip.expr:
                    typed = typed.evolve(parts=(ip.evolve(expr=new),))
                    t = new.type or t
        return CheckedTemplate(typed, t, _sorted(ch.errors), passthrough)
    for ip in interps:
        t = ip.expr.type or T.UNKNOWN
        if t.kind not in T.INTERPOLABLE and t.kind != "unknown":
            ch.err(NON_SCALAR, f"cannot interpolate {T.article(T.describe(t))}: templates render "
                   "scalars only (string, enum, number, boolean, duration, datetime, member, agent, "
                   "channel)", ip.start, ip.end)
    ttype: Type = T.STRING
    if expected is not None and expected.kind not in ("string", "unknown"):
        if not interps and expected.kind in T.STRING_SHAPED:
            why = T.wire_form_error(tpl.text, expected)
            if why:
                ch.errors.append(ExprError(LITERAL_MISMATCH, _expected(why, expected), 0, len(tpl.text),
                                           _enum_fix(tpl.text, expected, whole=True)))
            else:
                ttype = T.required_form(expected)
        else:
            what = ("text with {{ }} interpolations is a string" if interps else "this text is a string")
            ch.err(TYPE_MISMATCH, f"{what}; {T.describe(T.required_form(expected))} is expected here"
                   + (" (use exactly one {{ expression }} and nothing else to pass a typed value)"
                      if interps else ""), 0, len(tpl.text))
    return CheckedTemplate(typed, ttype, _sorted(ch.errors), False)


def check_template(text: str, ctx: ExprContext, expected: Type | None = None,
                   *, forbid_agent: bool = False) -> CheckedTemplate:
    """Parse and type a template (``text``, ``summary``, ``target``,
    ``assignee``, ``end.detail``, or any string ValueExpr containing
    ``{{``).  See :func:`check_template_ast`.  Offsets are relative to
    ``text``.  Never raises."""
    tpl, errs = parse_template(text)
    if errs or tpl is None:
        return CheckedTemplate(None, None, tuple(errs), False)
    return check_template_ast(tpl, ctx, expected, forbid_agent=forbid_agent)


def _enum_fix(value: str, target: Type, *, whole: bool = False) -> str | None:
    """The did-you-mean enum value for a mismatching string literal (the
    LP3025 fix), when it can be written as is: inside the literal's quotes,
    in any YAML scalar style; ``whole``: as a template's whole text, whose
    YAML style is not known here (so also as a plain scalar)."""
    if target.kind != "enum":
        return None
    from loopc.compiler.spelling import enum_suggestion, writable_in_scalar

    near = enum_suggestion(value, target.values or ())
    if near is None or not writable_in_scalar(near, '"'):
        return None
    return near if not whole or writable_in_scalar(near, "") else None


def _expected(why: str, target: Type) -> str:
    """A literal-mismatch message: ``why`` plus the expected type, unless
    ``why`` already lists what is allowed (an enum's values)."""
    if target.kind == "enum":
        return why
    return f"{why} ({T.describe(T.required_form(target))} expected)"
