"""Contracts of the schema pass (:mod:`loopc.compiler.schema`;
docs/reference.md#contracts): ``{name: FieldSchema}`` mappings — the Plan
input/output/state, a node's ``input``, a join ``result``, a loop ``state``,
a ``callbackOutput`` — with their types, ``values``/``items``, defaults
assignable without coercion (:mod:`loopc.compiler.wireforms`), state
defaults, reserved callback fields and the declared-field budget
(LP2014, LP2020–LP2027, LP2092).  Never raises on bad input.
"""
from __future__ import annotations

from typing import Any, Iterable

from loopc.compiler.model import FIELD_TYPES, MISSING, FieldSchema
from loopc.compiler.report import Reporter, decl, decl_key, presence
from loopc.compiler.schema_keys import (
    _FIELD_TYPE_SET, FIELD_KEYS, MAX_SCHEMA_FIELDS, NO_DEFAULT_TYPES, RESERVED_CALLBACK_FIELDS,
)
from loopc.compiler.schema_readers import _kind, _rename_fix, _Readers
from loopc.compiler.spelling import bool_fix, enum_fix, suggest
from loopc.compiler.wireforms import IDENT_RE, conform
from loopc.compiler.yamlnodes import YMap, YNode, YScalar, YSeq, span_in_scalar
from loopc.diagnostics import Fix, Span


#: Type names authors bring from other languages → the loop.plan type they
#: mean (LP2020's suggestion by meaning when no spelling is close).
#: Type names authors bring from other languages → the loop.plan type they
#: mean (LP2020's suggestion by meaning when no spelling is close).
_TYPE_SYNONYMS = {
    "user": "member", "person": "member", "human": "member", "people": "member", "assignee": "member",
    "bot": "agent", "assistant": "agent", "ai": "agent",
    "int": "number", "integer": "number", "float": "number", "double": "number", "decimal": "number",
    "bool": "boolean", "str": "string", "text": "string",
    "list": "array", "map": "object", "dict": "object", "json": "object", "record": "object",
    "date": "datetime", "time": "datetime", "timestamp": "datetime",
    "interval": "duration", "period": "duration", "timespan": "duration",
    "room": "scope", "thread": "scope", "space": "scope",
}


def _enum_default_fix(dn: YNode, data: Any, values: Iterable[str] | None) -> Fix | None:
    """LP2024's did-you-mean for a misspelt enum default: the value's text
    replaced, quotes kept (the whole scalar, as a plain one, when its text
    is not the value itself: escapes, several lines)."""
    if not isinstance(dn, YScalar) or not isinstance(data, str):
        return None
    at = span_in_scalar(dn, 0, len(data))
    if isinstance(at, Span):
        return enum_fix(data, values or (), dn.style, at)
    return enum_fix(data, values or (), "", dn.span)


class _Contracts(_Readers):
    """FieldSchema contracts, read with the scalar readers of :class:`_Readers`."""

    def __init__(self, reporter: Reporter) -> None:
        super().__init__(reporter)
        #: declared schema fields read so far (LP2092)
        self.fields = 0


    def contract(self, n: YNode, what: str, *, state: bool = False,
                 callback: bool = False) -> dict[str, FieldSchema] | None:
        """A ``{name: FieldSchema}`` mapping.  Fields whose type is unusable
        are dropped; other defects keep the field with the bad part removed."""
        if not isinstance(n, YMap):
            self.shape(n, f"{what} must be a mapping of field name to FieldSchema (use {{}} for none)")
            self.r.taint(decl(n.pointer))  # what reads the contract's fields is a follow-on
            return None
        out: dict[str, FieldSchema] = {}
        for k, kn, v in n.pairs():
            if k.startswith("\x00"):
                continue
            if callback and k in RESERVED_CALLBACK_FIELDS:
                self.err("LP2027", kn, f"'{k}' is a compiler-owned callback output and cannot be declared "
                         f"in callbackOutput; it is added automatically when the node declares '{k}'")
                continue
            if IDENT_RE.match(k) is None:
                self.err("LP2014", kn, f"field name '{k}' must match ^[a-z][a-z0-9_]{{0,63}}$")
            fs = self.field(v, k, kn, f"field '{k}' of {what}")
            if fs is None:
                # dropped (its type is unusable, already reported): what reads,
                # binds or passes the field is a follow-on (reporter policy)
                self.r.taint(decl_key(n, k))
                continue
            if state and not fs.has_default and isinstance(v, YMap) and "default" not in v:  # a rejected default is reported already
                # what the field starts as is unknown: nothing that judges its
                # presence or its default (LP3307, the wait rule of races) is reported
                self.err("LP2026", kn, f"Run state field '{k}' needs a 'default' (every state field starts "
                         "with a value)", taints=presence(v))
            out[k] = fs
        return out

    def field(self, n: YNode, name: str, at: YNode | None, what: str) -> FieldSchema | None:
        """One FieldSchema; ``None`` when its type is missing or unknown."""
        self.fields += 1
        if self.fields == MAX_SCHEMA_FIELDS + 1:
            self.err("LP2092", at, f"more than {MAX_SCHEMA_FIELDS:,} declared schema fields (nested item "
                     "schemas included)")
        if not isinstance(n, YMap):
            self.shape(n, f"{what} must be a FieldSchema mapping such as {{type: string}}")
            return None
        m: YMap = n
        self.closed(m, FIELD_KEYS, f"the FieldSchema of {what}")
        t: str | None = None
        tn = m.get("type")
        if tn is None:
            self.missing(m, "type", what, f" ({', '.join(FIELD_TYPES)})")
        else:
            s = self.lit_scalar(tn, "type", "a type name")
            if s is not None:
                val = s.value
                if val.__class__ is str and val in _FIELD_TYPE_SET:
                    t = val
                else:
                    shown = val if val.__class__ is str else s.raw
                    sug = (_TYPE_SYNONYMS.get(shown.lower()) or suggest(shown, FIELD_TYPES)) if shown else None
                    msg = f"unknown field type '{shown}'"
                    if sug is not None:
                        self.err("LP2020", s, msg + f"; did you mean '{sug}'?", fix=_rename_fix(s, sug, "replace with"))
                    else:
                        self.err("LP2020", s, msg + f" (types: {', '.join(FIELD_TYPES)})")
        before = self.errs
        required = self.get_bool(m, "required", what)
        if self.errs != before:
            # whether the field may be absent is unknown: what depends on it
            # (docs/architecture.md#one-defect-one-diagnostic, presence) is a follow-on
            self.r.taint(decl_key(m, "required"))
        label = self.get_str(m, "label", what, literal_only=False)
        description = self.get_str(m, "description", what, literal_only=False)
        values: tuple[str, ...] | None = None
        vn = m.get("values")
        if vn is not None:
            if t is not None and t != "enum":
                self.err("LP2022", m.key_node("values"), f"'values' applies only to type enum, not {t}")
            elif t == "enum":
                values = self.enum_values(vn, what)
        elif t == "enum":
            # silent when a misspelt key ("valeus") stands in for 'values'
            self.err("LP2021", tn, f"{what} is an enum and needs a non-empty 'values' list of strings",
                     needs=[decl_key(m, "values")])
        items: FieldSchema | None = None
        inn = m.get("items")
        if inn is not None:
            if t is not None and t != "array":
                self.err("LP2022", m.key_node("items"), f"'items' applies only to type array, not {t}")
            elif t == "array":
                items = self.field(inn, name, m.key_node("items"), f"the items of {what}")
        elif t == "array":
            self.err("LP2023", tn, f"{what} is an array and needs 'items', the FieldSchema of its elements",
                     needs=[decl_key(m, "items")])
        default: Any = MISSING
        dn = m.get("default")
        if dn is not None and t is not None and not (t == "enum" and not values):  # no values: no check
            if t in NO_DEFAULT_TYPES:
                self.err("LP2025", m.key_node("default"),
                         f"a {t} field cannot have a default: {t} values are never written by authors")
            else:
                default = self.default(dn, t, values, items, m)
        if dn is not None and default is MISSING:
            self.r.taint(decl_key(m, "default"))  # rejected: presence unknown, as above
        if t is None or (t == "array" and items is None) or (t == "enum" and not values):
            # unusable type (an enum without its values is no type either):
            # dropped (already reported)
            return None
        return FieldSchema(
            t, bool(required), default, values, items, label, description, m,
        )

    def enum_values(self, vn: YNode, what: str) -> tuple[str, ...] | None:
        if not isinstance(vn, YSeq):
            if isinstance(vn, YMap) and len(vn.index) == 1 and next(iter(vn.index)) in ("ref", "expr"):
                self.err("LP2013", vn, "'values' takes a literal list of strings")
            else:
                self.shape(vn, "'values' must be a list of strings")
            return None
        elems = vn.items
        if not elems:
            self.err("LP2021", vn, f"{what} is an enum and needs at least one value")
            return None
        seen: dict[str, YNode] = {}
        for e in elems:
            if not isinstance(e, YScalar) or e.value.__class__ is not str:
                hint = f" (quote it: '{e.raw}')" if isinstance(e, YScalar) and e.value is not None else ""
                self.err("LP2021", e, f"enum values must be strings, not {_kind(e)}{hint}")
                continue
            if e.value in seen:
                self.err("LP2021", e, f"duplicate enum value '{e.value}'",
                         related=[("first listed here", seen[e.value])])
                continue
            seen[e.value] = e
        return tuple(seen)

    def default(self, dn: YNode, t: str, values: tuple[str, ...] | None,
                items: FieldSchema | None, m: YMap) -> Any:
        """Check a ``default`` (plain data, no coercion); MISSING when invalid."""
        if isinstance(dn, YMap) and len(dn.index) == 1:
            k0, v0 = next(dn.entries())
            if k0 in ("ref", "expr"):
                self.err("LP2013", dn, "a default is a literal value, not an expression")
                return MISSING
            if k0 == "literal":
                dn = v0
        elif isinstance(dn, YScalar) and dn.value.__class__ is str and "{{" in dn.value:
            self.err("LP2013", dn, "a default is a literal value, not a template; write "
                     "{literal: \"...\"} for text that contains '{{'")
            return MISSING
        before = self.errs
        self._count = 0
        self._deep = False
        data = self._data(dn, 0)
        self._budget(dn)
        if self.errs != before:
            return MISSING
        if t == "array" and items is None:
            return MISSING  # LP2023 already reported
        why = conform(FieldSchema(t, values=values, items=items), data)
        if why is not None:
            fix = _enum_default_fix(dn, data, values) if t == "enum" else None
            if t == "boolean" and isinstance(dn, YScalar) and (fix := bool_fix(dn)) is not None:
                why += f" (under YAML 1.2 '{dn.value}' is a string)"
            self.err("LP2024", dn, f"default is not a valid {t}: {why}", fix=fix)
            return MISSING
        return data
