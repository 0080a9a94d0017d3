"""Scalar, mapping and value readers of the schema pass
(:mod:`loopc.compiler.schema`; docs/reference.md#values,
docs/reference.md#identifiers): the reporting core every part of the pass
reports through (LP2006 missing keys, LP2007 unknown keys, LP2012 shapes),
literal-only scalars (strings, choices, bounded integers, booleans,
templates, expressions; LP2013–LP2016, LP2028) and ValueExprs with their
literal budgets (LP2017–LP2019, LP2094, LP2095).

:class:`_Readers` is the base of the schema walk's classes (contracts,
per-kind configs, nodes, edges — :mod:`loopc.compiler.schema_contracts`,
``schema_configs``, ``schema_nodes``, ``schema_edges``); it holds the reporter
and the counters of one walk.  Never raises on bad input.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterable

from loopc.codes.sections import LOCATED
from loopc.compiler.model import Expr, ListValue, Literal, MapValue, Ref, Template, ValueExpr
from loopc.compiler.report import Entity, Reporter, decl_key
from loopc.compiler.schema_keys import MAX_LITERAL_NESTING, MAX_LITERAL_VALUES, _VE_KEYS, section_at
from loopc.compiler.spelling import bool_fix, suggest
from loopc.compiler.wireforms import IDENT_RE, number_problem
from loopc.compiler.yamlnodes import YMap, YNode, YScalar, YSeq
from loopc.diagnostics import Applicability, Fix, TextEdit
from loopc.limits import number_text_problem, underflow_problem


def literal_number_problem(n: YScalar, v: Any) -> str | None:
    """Why the number ``v`` written as scalar ``n`` is not an accepted JSON
    number: the bounds on its text first (length, significant digits —
    :mod:`loopc.limits`), then its value (integer range, finiteness)."""
    raw = n.raw
    if raw and raw[0] in "0123456789-+.":
        why = number_text_problem(raw) or underflow_problem(raw, v)
        if why is not None:
            return why
    return number_problem(v)


# ``str.isspace`` and the regex ``\s`` (str patterns) are the same predicate
_SPACE_RE = re.compile(r"\s")


def _kind(n: YNode | None) -> str:
    """Noun phrase for the YAML kind of ``n`` ("a mapping", "a string" ...)."""
    if n.__class__ is YMap:
        return "a mapping"
    if n.__class__ is YSeq:
        return "a list"
    if n.__class__ is YScalar:
        v = n.value
        if v is None:
            return "null"
        vc = v.__class__
        if vc is bool:
            return "a boolean"
        if vc is int or vc is float:
            return "a number"
        return "an empty string" if v == "" else "a string"
    return "nothing"



def _rename_fix(at: YNode, new: str, what: str = "rename to") -> Fix:
    return Fix(f"{what} '{new}'", (TextEdit(at.span, new),), Applicability.UNSAFE)


def stand_in(m: YMap, key: str, allowed: Iterable[str]) -> YNode | None:
    """The value of the unknown key of ``m`` that LP2007 reads as a
    misspelling of the absent ``key`` (the first, when several do), or
    ``None``: what a pass reads in place of ``key`` once LP2007 said it."""
    if key in m:
        return None
    for k, _kn, v in m.pairs():
        if k not in allowed and not k.startswith("\x00") and suggest(k, allowed) == key:
            return v
    return None



class _Readers:
    """The reporting core and the scalar/value readers of one schema walk;
    holds the reporter, the error count and the literal budget counters."""

    def __init__(self, reporter: Reporter) -> None:
        self.r = reporter
        self.errs = 0
        self.node: str | None = None
        self.edge: str | None = None
        self._count = 0
        self._deep = False

    # -- reporting -------------------------------------------------------

    def err(self, code: str, at: Any, msg: str, **kw: Any) -> None:
        self.errs += 1
        if isinstance(at, YScalar) and at.style == "*":
            self.r.taint(*kw.get("taints", ()))
            return  # an alias, already reported by the YAML layer (LP1006)
        if code in LOCATED and "section" not in kw and isinstance(at, YNode):
            kw["section"] = section_at(at.pointer)
        self.r.report(code, at, msg, node=self.node, edge=self.edge, **kw)

    def anchor(self, m: YNode) -> YNode:
        """Where to report something missing from mapping ``m``: the key
        that holds it, else its first key, else the mapping itself."""
        p = m.parent
        if p is not None and isinstance(p, YMap) and isinstance(m.key, str):
            kn = p.key_node(m.key)
            if kn is not None and p.get(m.key) is m:
                return kn
        if isinstance(m, YMap) and m.kv:
            return m.first_key()  # type: ignore[return-value]
        return m

    def missing(self, m: YMap, key: str, what: str, hint: str = "") -> None:
        # silent when "unknown key 'tpye'; did you mean 'type'?" already said it (the reporter's policy)
        self.err("LP2006", self.anchor(m), f"{what} is missing required key '{key}'{hint}",
                 needs=[decl_key(m, key)])

    def needs_one(self, m: YMap, *keys: str) -> list[Entity]:
        """Dependence of a finding that a key of ``m`` (one of ``keys``) is
        missing: silent when a misspelling already stands in for one."""
        return [decl_key(m, k) for k in keys]

    def shape(self, n: YNode, msg: str, fix: Fix | None = None) -> None:
        self.err("LP2012", n, f"{msg}, not {_kind(n)}", fix=fix)

    def closed(
        self, m: YMap, allowed: Iterable[str], what: str,
        special: Callable[[str, YScalar, YNode], bool] | None = None,
    ) -> None:
        """Report keys of ``m`` outside ``allowed``; ``special(key, keynode,
        value)`` may claim a key (returning True) for a dedicated diagnostic."""
        allowed_set = allowed if isinstance(allowed, (frozenset, set)) else frozenset(allowed)
        if allowed_set.issuperset(m.index):
            return  # the common case: every key is allowed
        for k, kn, v in m.pairs():
            if k in allowed_set or k.startswith("\x00"):
                continue
            if special is not None and special(k, kn, v):
                continue
            self.unknown(kn, k, allowed_set, what)

    def unknown(self, kn: YScalar, k: str, allowed: Iterable[str], what: str) -> None:
        sug = suggest(k, allowed)
        if sug is not None:
            # the misspelt key stands in for the key it names: findings that
            # the key is missing, or about what it would declare, are follow-ons
            parent = kn.parent
            taints = [decl_key(parent, sug)] if isinstance(parent, YMap) and sug not in parent else []
            self.err("LP2007", kn, f"unknown key '{k}' in {what}; did you mean '{sug}'?",
                     fix=_rename_fix(kn, sug), taints=taints)
        else:
            self.err("LP2007", kn, f"unknown key '{k}' in {what} (allowed: {', '.join(sorted(allowed))})")

    # -- literal-only scalars (docs/reference.md#values) -------------

    def lit_scalar(self, v: YNode, key: str, expect: str) -> YScalar | None:
        """The scalar of a literal-only key, or ``None`` after reporting LP2013
        (a ``{ref}``/``{expr}``/``{literal}`` form or a template) / LP2012 (shape)."""
        if isinstance(v, YMap) and len(v.index) == 1:
            k0, kn0, v0 = next(v.pairs())
            if k0 == "ref" or k0 == "expr":
                self.err("LP2013", v, f"'{key}' takes a literal value, not a {{{k0}: ...}} expression; "
                         "it is fixed when the plan is compiled")
                return None
            if k0 == "literal":
                self.literal_wrapper(v, v0, key)
                return None
        if isinstance(v, YScalar):
            val = v.value
            if val.__class__ is str and "{{" in val:
                self.err("LP2013", v, f"'{key}' takes a literal value, not a template; "
                         "it is fixed when the plan is compiled")
                return None
            return v
        self.shape(v, f"'{key}' must be {expect}")
        return None

    def literal_wrapper(self, v: YNode, inner: YNode, key: str) -> None:
        """LP2013 for ``{literal: x}`` on a literal-only key: write ``x`` directly."""
        fix = None
        if isinstance(inner, YScalar) and inner.value is not None:
            import json  # diagnostics only (start-up: issue 26)

            text = inner.raw if inner.style == "" else json.dumps(inner.raw, ensure_ascii=False)
            fix = Fix(f"write {key}: {text}", (TextEdit(v.span, text),), Applicability.SAFE)
        self.err("LP2013", v, f"'{key}' takes a plain literal; {{literal: ...}} belongs to value "
                 "expressions — write the value directly", fix=fix)

    def get_str(self, m: YMap, key: str, what: str, *, required: bool = False,
                literal_only: bool = True) -> str | None:
        v = m.get(key)
        if v is None:
            if required:
                self.missing(m, key, what)
            return None
        s = self.lit_scalar(v, key, "a string") if literal_only else (v if isinstance(v, YScalar) else None)
        if s is None:
            if not literal_only:
                self.shape(v, f"'{key}' must be a string")
            return None
        if s.value.__class__ is not str:
            self.shape(s, f"'{key}' must be a string")
            return None
        return s.value

    def get_choice(self, m: YMap, key: str, choices: tuple[str, ...], what: str,
                   *, required: bool = True) -> str | None:
        v = m.get(key)
        if v is None:
            if required:
                self.missing(m, key, what, f" ({' | '.join(choices)})")
            return None
        s = self.lit_scalar(v, key, f"one of {', '.join(choices)}")
        if s is None:
            return None
        val = s.value
        if val in choices and val.__class__ is str:
            return val
        if val is None:
            self.shape(s, f"'{key}' must be one of {', '.join(choices)}")
            return None
        shown = val if val.__class__ is str else s.raw
        sug = suggest(shown, choices) if shown else None
        msg = f"'{key}' must be {' or '.join(choices) if len(choices) < 3 else 'one of ' + ', '.join(choices)}, not '{shown}'"
        if sug is not None:
            self.err("LP2015", s, msg + f"; did you mean '{sug}'?", fix=_rename_fix(s, sug, "replace with"))
        else:
            self.err("LP2015", s, msg)
        return None

    def get_int(self, m: YMap, key: str, lo: int, hi: int, what: str,
                *, required: bool = False) -> int | None:
        v = m.get(key)
        if v is None:
            if required:
                self.missing(m, key, what, f" (an integer {lo}..{hi:,})")
            return None
        s = self.lit_scalar(v, key, f"an integer {lo}..{hi:,}")
        if s is None:
            return None
        val = s.value
        if val.__class__ is not int:
            hint = " (quoted numbers are strings)" if val.__class__ is str and s.style else ""
            self.shape(s, f"'{key}' must be an integer {lo}..{hi:,}{hint}")
            return None
        if not lo <= val <= hi:
            self.err("LP2016", s, f"'{key}' must be between {lo} and {hi:,}, not {val}")
            return None
        return val

    def get_bool(self, m: YMap, key: str, what: str) -> bool | None:
        v = m.get(key)
        if v is None:
            return None
        s = self.lit_scalar(v, key, "true or false")
        if s is None:
            return None
        if s.value.__class__ is not bool:
            fix = bool_fix(s)
            if s.value in ("true", "false"):
                hint = " (quoted booleans are strings)"
            elif fix is not None:
                hint = f" (under YAML 1.2 '{s.value}' is a string)"
            elif s.value.__class__ is str and s.value.lower() in ("yes", "no", "on", "off", "y", "n"):
                hint = f" (under YAML 1.2 '{s.value}' is a string)"
            else:
                hint = ""
            self.shape(s, f"'{key}' must be true or false{hint}", fix=fix)
            return None
        return s.value

    def ident(self, s: YScalar, what: str) -> bool:
        """Check an author-declared identifier scalar (docs/reference.md#identifiers)."""
        val = s.value
        if val.__class__ is not str:
            self.shape(s, f"{what} must be a string")
            return False
        if IDENT_RE.match(val) is None:
            self.err("LP2014", s, f"{what} '{val}' must match ^[a-z][a-z0-9_]{{0,63}}$ "
                     "(lower-case letter, then lower-case letters, digits or '_', at most 64)")
            return False
        return True

    def get_template(self, m: YMap, key: str, what: str, *, required: bool = False) -> Template | None:
        v = m.get(key)
        if v is None:
            if required:
                self.missing(m, key, what)
            return None
        if isinstance(v, YScalar) and v.value.__class__ is str:
            return Template(v.value, v)
        self.shape(v, f"'{key}' takes a template string (use quotes, e.g. \"{{{{ input.x }}}}\")")
        return None

    def expr_text(self, v: YNode, key: str) -> Expr | None:
        """A bare expression (``when``, ``wait.condition``, ``{expr: ...}``).
        Plain scalars that YAML resolves to booleans/numbers keep their text."""
        if isinstance(v, YScalar):
            val = v.value
            if val.__class__ is str:
                return Expr(val, v)
            if val is not None and v.style == "":
                return Expr(v.raw, v)
        if key != "expr" and isinstance(v, YMap) and len(v.index) == 1 and "expr" in v.index:
            inner = v.get("expr")
            if isinstance(inner, YScalar) and inner.value.__class__ is str:
                import json  # diagnostics only (start-up: issue 26)

                text = json.dumps(inner.value, ensure_ascii=False)
                self.err("LP2028", v, f"'{key}' is already an expression: write it directly, {key}: {text}",
                         fix=Fix(f"write {key}: {text}", (TextEdit(v.span, text),), Applicability.SAFE))
                return None
        self.err("LP2028", v, f"'{key}' takes an expression string, not {_kind(v)}")
        return None

    # -- ValueExprs (docs/reference.md#values) -------------------------------

    def value(self, n: YNode) -> ValueExpr | None:
        """Build one ValueExpr, enforcing the literal budgets at its root."""
        self._count = 0
        self._deep = False
        ve = self._vx(n, 0)
        self._budget(n)
        return ve

    def _budget(self, n: YNode) -> None:
        if self._deep:
            self.err("LP2094", n, f"value nests deeper than {MAX_LITERAL_NESTING} levels")
        if self._count > MAX_LITERAL_VALUES:
            self.err("LP2095", n, f"value holds {self._count:,} values; the limit is "
                     f"{MAX_LITERAL_VALUES:,}")

    def _vx(self, n: YNode, depth: int) -> Any:
        self._count += 1
        if n.__class__ is YScalar:
            v = n.value
            vc = v.__class__
            if vc is str:
                return Template(v, n) if "{{" in v else Literal(v, n)
            if vc is float or (vc is int and (v > 9007199254740991 or v < -9007199254740991)):
                why = literal_number_problem(n, v)
                if why is not None:
                    self.err("LP2017", n, f"{why}; numbers are JSON numbers")
            return Literal(v, n)
        if depth >= MAX_LITERAL_NESTING:
            self._deep = True
        if n.__class__ is YMap:
            idx = n.index
            if len(idx) == 1:
                k0, v0 = next(n.entries())
                if k0 == "ref":
                    return self.ref(v0)
                if k0 == "expr":
                    return self.expr_text(v0, "expr")
                if k0 == "literal":
                    return Literal(self._data(v0, depth), n, verbatim=True)
            elif "ref" in idx or "expr" in idx or "literal" in idx:
                k0 = next(k for k in _VE_KEYS if k in idx)
                others = [k for k in idx if k != k0]
                self.err("LP2018", n.key_node(k0),
                         f"a mapping with '{k0}' must have no other keys (found {', '.join(map(repr, others))}); "
                         "to build an object with such a key write {literal: {...}}")
                return None
            return MapValue({k: self._vx(v, depth + 1) for k, v in n.entries()}, n)
        if n.__class__ is YSeq:
            return ListValue(tuple(self._vx(x, depth + 1) for x in n.items), n)
        return None

    def _data(self, n: YNode, depth: int) -> Any:
        """Plain data of a verbatim literal, counting values and nesting."""
        self._count += 1
        if n.__class__ is YScalar:
            v = n.value
            vc = v.__class__
            if vc is float or (vc is int and (v > 9007199254740991 or v < -9007199254740991)):
                why = literal_number_problem(n, v)
                if why is not None:
                    self.err("LP2017", n, f"{why}; numbers are JSON numbers")
            return v
        if depth >= MAX_LITERAL_NESTING:
            self._deep = True
        if n.__class__ is YMap:
            return {k: self._data(v, depth + 1) for k, v in n.entries()}
        assert isinstance(n, YSeq)  # the loader builds scalars, mappings and sequences only
        return [self._data(x, depth + 1) for x in n.items]

    def ref(self, v: YNode) -> Ref | None:
        if not isinstance(v, YScalar) or v.value.__class__ is not str:
            self.err("LP2019", v, f"'ref' takes a dotted path string such as input.topic, not {_kind(v)}")
            return None
        text = v.value
        segs = tuple(text.split("."))
        if not text or "" in segs or _SPACE_RE.search(text) is not None:
            self.err("LP2019", v, f"'{text}' is not a reference path: write dot-separated, non-empty "
                     "segments without spaces, such as run.input.topic")
            return None
        return Ref(segs, text, v)

    def value_map(self, n: YNode, key: str) -> dict[str, ValueExpr | None] | None:
        """A mapping of names to ValueExprs (``bind``, ``merge``, ``assign``,
        ``init``); a rejected value (reported) keeps its name with ``None``."""
        if not isinstance(n, YMap):
            self.shape(n, f"'{key}' must be a mapping of field name to value")
            return None
        out: dict[str, ValueExpr | None] = {}
        for k, v in n.entries():
            if k.startswith("\x00"):
                continue
            out[k] = self.value(v)
        return out
