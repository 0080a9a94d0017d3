"""The loopc type model (docs/reference.md#types, docs/reference.md#references,
docs/reference.md#expressions).

One small frozen :class:`Type` describes every value the compiler reasons
about: FieldSchema types, the ``null`` literal, the statically untyped
``unknown`` (anything below an ``object``-typed value, docs/reference.md#references: paths
below an object-typed value are checked only when the plan runs), and *typed objects* —
``object`` with ``fields`` — which give contracts (Plan input, node input,
join result, ``item.*``...) a static shape so that ``input.a.b`` can be
resolved.

Public helpers:

* :func:`type_of_field` / :func:`record_of` — FieldSchema / contract → Type;
* :func:`assignable` — the only implicit conversions
  (docs/reference.md#types): ``enum`` → ``string``, ``agent`` → ``responder``,
  typed object → ``object``, ``null`` → an optional type, ``unknown`` → anything
  (checked at run time), ``array<S>`` → ``array<T>`` when ``S`` → ``T``;
  never ``channel`` → ``scope``;
* :func:`wire_form_error` / :func:`literal_error` — does a literal (JSON-like
  Python value) conform to a type's wire form (docs/reference.md#wire-forms)?
  A string literal "takes the expected type" when it matches that form;
* :func:`describe` — ``array<agent>``, ``enum(high|low)``, ``member?`` for
  messages.

Types are values: compare them with ``==``; ``optional`` is part of the
value, use :func:`required_form` to compare ignoring it.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Mapping

from loopc import lazyre
from loopc.value import Value, field
from loopc import limits as _limits
from loopc.compiler.model import MISSING as _MISSING
from loopc.compiler.spelling import not_an_enum_value
from loopc.compiler.wireforms import is_canonical_id, is_channel  # the wire forms' one definition

#: FieldSchema types (docs/reference.md#types), in that table's order.
FIELD_KINDS = (
    "string", "enum", "number", "boolean", "duration", "datetime", "object",
    "array", "scope", "channel", "member", "agent", "work_items", "responder",
)
#: Kinds beyond FieldSchema types: the ``null`` literal and the statically
#: untyped value below an ``object`` (checked at run time).
EXTRA_KINDS = ("null", "unknown")
KINDS = FIELD_KINDS + EXTRA_KINDS
_FIELD_KIND_SET = frozenset(FIELD_KINDS)

#: Kinds a multi-part template may interpolate (docs/reference.md#templates).
INTERPOLABLE = frozenset(
    ("string", "enum", "number", "boolean", "duration", "datetime", "member", "agent", "channel")
)
#: Kinds ``==``/``!=`` accept (scalars; docs/reference.md#expressions).
EQUATABLE = frozenset(
    ("string", "enum", "number", "boolean", "duration", "datetime", "member", "agent", "channel")
)
#: Kinds ``< <= > >=`` accept: numbers, strings (code-point order), durations,
#: datetimes (docs/reference.md#expressions).  ``enum`` orders as its string.
ORDERABLE = frozenset(("number", "string", "enum", "duration", "datetime"))
#: Kinds whose wire form is a string (a string literal may take these types).
STRING_SHAPED = frozenset(
    ("string", "enum", "duration", "datetime", "channel", "member", "agent", "responder")
)


class Type(Value):
    """A static type.

    * ``kind`` — one of :data:`KINDS`;
    * ``values`` — the allowed strings of an ``enum`` (authored order);
    * ``items`` — the element type of an ``array`` (``None`` = unknown element,
      e.g. the empty array literal ``[]``);
    * ``fields`` — for ``object`` only: the statically known fields as
      ``((name, Type), ...)`` in authored order, or ``None`` for an untyped
      object (paths below it are ``unknown``);
    * ``optional`` — the value may be absent/``null`` at run time (a field
      that is not required and has no default);
    * ``presence_unknown`` — read from a field whose ``required`` or
      ``default`` the schema pass rejected, so whether it may be absent is
      unknown and no finding about its presence is made
      (docs/architecture.md#one-defect-one-diagnostic).  Not part of the
      type's identity (``==``).
    """

    kind: str
    values: tuple[str, ...] | None = None
    items: "Type | None" = None
    optional: bool = False
    fields: "tuple[tuple[str, Type], ...] | None" = None
    presence_unknown: bool = field(default=False, eq=False)

    def field(self, name: str) -> "Type | None":
        """Type of field ``name`` of a typed object, ``None`` if absent."""
        for k, t in self.fields or ():
            if k == name:
                return t
        return None

    def field_names(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.fields or ())

    @property
    def is_typed_object(self) -> bool:
        return self.kind == "object" and self.fields is not None

    def __repr__(self) -> str:
        return f"Type<{describe(self)}>"


# Common singletons -----------------------------------------------------------
STRING = Type("string")
NUMBER = Type("number")
BOOLEAN = Type("boolean")
DURATION = Type("duration")
DATETIME = Type("datetime")
OBJECT = Type("object")
SCOPE = Type("scope")
CHANNEL = Type("channel")
MEMBER = Type("member")
AGENT = Type("agent")
WORK_ITEMS = Type("work_items")
RESPONDER = Type("responder")
NULL = Type("null")
UNKNOWN = Type("unknown")


def array_of(items: Type | None) -> Type:
    """``array<items>`` (``items=None``: element type unknown)."""
    return Type("array", items=items)


def enum_of(values: Iterable[str]) -> Type:
    return Type("enum", values=tuple(values))


def object_of(fields: Iterable[tuple[str, Type]] | Mapping[str, Type], *, optional: bool = False) -> Type:
    """A typed object with the given fields (authored order kept)."""
    items = fields.items() if isinstance(fields, Mapping) else fields
    return Type("object", fields=tuple(items), optional=optional)


def with_optional(t: Type, optional: bool = True) -> Type:
    """``t`` with its ``optional`` flag set (or cleared)."""
    return t if t.optional == optional else t.evolve(optional=optional)


def required_form(t: Type) -> Type:
    """``t`` without the ``optional`` flag (for comparisons of shape)."""
    return with_optional(t, False)


#: The only shape of a ``scope`` value: its fields are typed so
#: that ``input.room.kind`` resolves (loopc decision).
SCOPE_FIELDS: tuple[tuple[str, Type], ...] = (
    ("kind", enum_of(("channel", "thread", "dm", "task"))),
    ("scopeId", STRING),
)


# ---------------------------------------------------------------------------
# FieldSchema → Type
# ---------------------------------------------------------------------------

def type_of_field(fs: Any) -> Type:
    """Type of a :class:`~loopc.compiler.model.FieldSchema` (docs/reference.md#contracts).

    ``optional`` is true when the field is neither required nor defaulted.
    ``array`` without ``items`` (malformed; already reported by the schema
    pass) gets an unknown element type.  Unknown ``type`` strings map to
    ``unknown`` so that no cascade is reported.  Iterative over nested
    ``items`` (depth is bounded by the YAML nesting budget anyway).
    """
    if fs is not None and getattr(fs, "type", None) != "array":
        return _leaf_type(fs)  # the common case: no ``items`` chain
    chain: list[Any] = []
    cur = fs
    while cur is not None and getattr(cur, "type", None) == "array" and len(chain) < 1000:
        chain.append(cur)
        cur = getattr(cur, "items", None)
    # element types are never optional: ``required``/``default`` of an
    # ``items`` schema have no meaning (an array holds values, not fields)
    t: Type | None = None
    if cur is not None:
        t = _leaf_type(cur)
        if chain:
            t = with_optional(t, False)
    for depth, arr in enumerate(reversed(chain)):
        top = depth == len(chain) - 1
        t = Type("array", items=t, optional=_is_optional(arr) if top else False)
    assert t is not None
    return t


def _is_optional(fs: Any) -> bool:
    return not getattr(fs, "required", False) and getattr(fs, "default", _MISSING) is _MISSING


#: Shared instances of the value-free leaf types (types are immutable values):
#: (kind, optional) → Type.
_LEAF_TYPES: dict[tuple[str, bool], Type] = {}


def _leaf_type(fs: Any) -> Type:
    kind = getattr(fs, "type", None)
    opt = _is_optional(fs)
    if kind == "enum":
        return Type("enum", values=tuple(getattr(fs, "values", None) or ()), optional=opt)
    if kind.__class__ is not str or kind not in _FIELD_KIND_SET:
        kind = "unknown"
    t = _LEAF_TYPES.get((kind, opt))
    if t is None:
        t = _LEAF_TYPES[(kind, opt)] = Type(kind, optional=opt)
    return t


def record_of(contract: Mapping[str, Any] | None, *, optional: bool = False,
              field_type: Callable[[Any], Type] | None = None) -> Type:
    """A typed object for a contract (field name → FieldSchema), e.g. the
    type of the root ``input`` in a node's config.  ``optional`` makes every
    field optional too (branches of an ``all_match`` switch may not run).
    ``field_type`` types one FieldSchema (default :func:`type_of_field`; a
    pass passes its cached equivalent)."""
    fields = []
    typed = field_type or type_of_field
    for name, fs in (contract or {}).items():
        ft = typed(fs)
        if optional:
            ft = with_optional(ft)
        fields.append((name, ft))
    return Type("object", fields=tuple(fields), optional=optional)


# ---------------------------------------------------------------------------
# Context types (docs/reference.md#references) — the roots an ExprContext offers
# ---------------------------------------------------------------------------

#: ``item.*`` inside a fan-out item body (docs/reference.md#references).
ITEM = object_of((
    ("key", STRING),
    ("dependsOn", array_of(STRING)),
    ("workScope", SCOPE),
    ("relatedScopes", array_of(SCOPE)),
    ("responder", RESPONDER),
    ("instruction", STRING),
    ("dependencies", OBJECT),
))

#: Terminal item statuses of a fan-out envelope (docs/reference.md#fan-out-bodies).
ITEM_STATUSES = ("succeeded", "failed", "timed_out", "blocked", "cancelled")

#: One terminal envelope of ``items`` (docs/reference.md#references).
ITEM_ENVELOPE = object_of((
    ("key", STRING),
    ("status", enum_of(ITEM_STATUSES)),
    ("value", Type("object", optional=True)),
    ("error", object_of((("code", STRING), ("detail", STRING)), optional=True)),
    ("blockedBy", array_of(STRING)),
))

#: ``items`` at a fan-out join's ``merge``: source-ordered envelopes.
ITEMS = array_of(ITEM_ENVELOPE)


def branches_of(keys: Iterable[str], contract: Mapping[str, Any] | None, *, optional: bool = False) -> Type:
    """``branches`` at an ``all`` join's merge: one typed object per branch
    key, each with the join's input contract (all fields optional when the
    owner is an ``all_match`` switch, whose branches may not run)."""
    rec = record_of(contract, optional=optional)
    return object_of(tuple((k, rec) for k in keys))


def winner_of(contract: Mapping[str, Any] | None) -> Type:
    """``winner`` at an ``any`` join's merge: ``{key: string, value: <join
    input contract>}`` (docs/reference.md#references)."""
    return object_of((("key", STRING), ("value", record_of(contract))))


def loop_of(state: Mapping[str, Any] | None) -> Type:
    """``loop`` inside a counted-loop body: ``{iteration: number (1-based),
    state: <loop state contract>}``."""
    return object_of((("iteration", NUMBER), ("state", record_of(state))))


# ---------------------------------------------------------------------------
# Assignability
# ---------------------------------------------------------------------------

def assignable(src: Type, dst: Type) -> bool:
    """May a value of type ``src`` flow where ``dst`` is expected?

    Rules (docs/reference.md#types, docs/reference.md#expressions):

    * ``unknown`` on either side: yes (checked at run time);
    * ``null`` only into an optional ``dst`` (or ``unknown``);
    * an optional ``src`` into a required ``dst``: yes statically — absence is
      reported at run time by the destination contract (the compiler cannot
      know whether an optional input was supplied);
    * same kind: enums need ``src.values ⊆ dst.values``; arrays compare
      element types (unknown elements fit anything); typed objects fit an
      untyped ``object``, and a typed ``dst`` object needs every field of
      ``dst`` present and assignable in ``src`` (extra fields are ignored);
    * ``enum`` → ``string``; ``agent`` → ``responder``;
    * nothing else — in particular never ``channel`` → ``scope`` and never a
      ``string`` into ``enum``/``member``/``duration``... (a string *literal*
      may take those types: see :func:`literal_error`).

    Iterative over nested arrays/objects (explicit work list).
    """
    work = [(src, dst)]
    while work:
        s, d = work.pop()
        if s.kind == "unknown" or d.kind == "unknown":
            continue
        if s.kind == "null":
            if d.optional or d.kind == "null":
                continue
            return False
        if s.kind == d.kind:
            if s.kind == "enum":
                if d.values is not None and s.values is not None and not set(s.values) <= set(d.values):
                    return False
            elif s.kind == "array":
                if s.items is not None and d.items is not None:
                    work.append((s.items, d.items))
            elif s.kind == "object":
                if d.fields is not None:
                    if s.fields is None:
                        continue  # untyped object: checked at run time
                    sf = dict(s.fields)
                    for name, dt in d.fields:
                        st = sf.get(name)
                        if st is None:
                            if dt.optional:
                                continue
                            return False
                        work.append((st, dt))
            continue
        if s.kind == "enum" and d.kind == "string":
            continue
        if s.kind == "agent" and d.kind == "responder":
            continue
        return False
    return True


def comparable(a: Type, b: Type) -> bool:
    """Do ``a`` and ``b`` have "one type" for ``==``/``!=``/ordering?  Same
    kind (enum values may differ), or ``enum`` with ``string`` (docs/reference.md#expressions),
    or one side ``unknown``."""
    if a.kind == "unknown" or b.kind == "unknown":
        return True
    if a.kind == b.kind:
        return True
    return {a.kind, b.kind} == {"enum", "string"}


# ---------------------------------------------------------------------------
# Wire forms (docs/reference.md#wire-forms)
# ---------------------------------------------------------------------------

DURATION_RE = _limits.DURATION_RE
DATETIME_RE = lazyre.compile(
    r"(?P<y>[0-9]{4})-(?P<mo>[0-9]{2})-(?P<d>[0-9]{2})[Tt]"
    r"(?P<h>[0-9]{2}):(?P<mi>[0-9]{2}):(?P<s>[0-9]{2})(?:\.[0-9]+)?"
    r"(?P<off>[Zz]|[+-](?P<oh>[0-9]{2}):(?P<om>[0-9]{2}))\Z"
)
MAX_SAFE_INT = _limits.MAX_SAFE_INTEGER
SCOPE_KINDS = ("channel", "thread", "dm", "task")


def is_duration(s: str) -> bool:
    """ISO 8601 ``P[nD][T[nH][nM][n[.f]S]]`` with at least one component and
    no empty ``T`` part (docs/reference.md#wire-forms), within the bounds of :mod:`loopc.limits`."""
    return _limits.is_duration(s)


def duration_seconds(s: str) -> float | None:
    """Length of a duration in seconds (``None`` if malformed)."""
    return _limits.duration_seconds(s)


def is_datetime(s: str) -> bool:
    """RFC 3339 date-time with an offset (``Z`` or ``±hh:mm``), valid calendar
    date, hour < 24, minute < 60, second ≤ 60 (leap second)."""
    m = DATETIME_RE.match(s)
    if not m:
        return False
    import datetime as _dt  # only for a string shaped like a date-time (start-up, issue 26)

    try:
        _dt.date(int(m.group("y")), int(m.group("mo")), int(m.group("d")))
    except ValueError:
        return False
    if int(m.group("h")) > 23 or int(m.group("mi")) > 59 or int(m.group("s")) > 60:
        return False
    if m.group("oh") is not None and (int(m.group("oh")) > 23 or int(m.group("om")) > 59):
        return False
    return True


def is_number(v: Any) -> bool:
    """A JSON number: int within ±(2^53−1) or a finite float (not bool)."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return -MAX_SAFE_INT <= v <= MAX_SAFE_INT
    return isinstance(v, float) and math.isfinite(v)


_WIRE_DESC = {
    "duration": "an ISO 8601 duration such as PT30S or P1D",
    "datetime": "an RFC 3339 date-time with an offset such as 2024-05-01T09:00:00Z",
    "channel": "a channel such as #release",
    "member": "a canonical member id such as mem_ana",
    "agent": "a canonical agent id such as agt_backend",
    "responder": "a canonical agent id such as agt_backend",
}


def wire_form_error(value: str, t: Type) -> str | None:
    """Does the *string* ``value`` match the wire form of string-shaped type
    ``t`` (:data:`STRING_SHAPED`)?  Returns ``None`` when it does, else a
    message fragment (``"'P1X' is not an ISO 8601 duration ..."``)."""
    k = t.kind
    if k in ("string", "unknown"):
        return None
    if k == "enum":
        vals = t.values or ()
        if value in vals:
            return None
        return not_an_enum_value(value, vals)
    ok = {
        "duration": is_duration,
        "datetime": is_datetime,
        "channel": is_channel,
        "member": is_canonical_id,
        "agent": is_canonical_id,
        "responder": is_canonical_id,
    }.get(k)
    if ok is None:
        return f"a string is not {article(describe(t))}"
    if ok(value):
        return None
    shown = value if len(value) <= 60 else value[:57] + "..."
    why = _limits.duration_problem(value) if k == "duration" else None
    extra = f" ({why})" if why is not None and not why.startswith("not ") else ""
    if k == "datetime":
        from loopc.compiler.wireforms import datetime_problem

        day = datetime_problem(value)
        if day is not None:
            return f"'{shown}' is not a date-time: {day}"
    return f"'{shown}' is not {_WIRE_DESC[k]}{extra}"


def literal_error(value: Any, t: Type, *, max_items: int = 100_000) -> str | None:
    """Is the JSON-like Python literal ``value`` a valid value of type ``t``?

    Used for ``{literal: ...}``/plain literal ValueExprs, defaults, and string
    literals inside expressions.  Strings take the expected type when they
    match its wire form (docs/reference.md#types); ``scope`` needs exactly
    ``{kind, scopeId}``; ``work_items`` can never be written by authors;
    ``object`` takes any mapping (typed objects check their fields).
    Returns ``None`` when valid, else a message.  Iterative (explicit stack).
    """
    stack: list[tuple[Any, Type, str]] = [(value, t, "")]
    seen = 0
    while stack:
        v, ty, where = stack.pop()
        seen += 1
        if seen > max_items:
            return None
        at = f" at {where}" if where else ""
        k = ty.kind
        if k == "unknown":
            continue
        if v is None:
            if ty.optional or k == "null":
                continue
            return f"null is not allowed{at}: {describe(ty)} is required"
        if k == "work_items":
            return f"work_items values cannot be written in a plan{at}; they come from a callback's workItems output"
        if isinstance(v, bool):
            if k == "boolean":
                continue
            return f"{_json(v)} is a boolean, not {article(describe(ty))}{at}"
        if isinstance(v, (int, float)):
            if k != "number":
                return f"{_json(v)} is a number, not {article(describe(ty))}{at}"
            if not is_number(v):
                return f"{v!r} is outside the JSON number range (integers within ±(2^53−1), finite decimals){at}"
            continue
        if isinstance(v, str):
            if k not in STRING_SHAPED:
                return f"a string is not {article(describe(ty))}{at}"
            err = wire_form_error(v, ty)
            if err:
                return err + at
            continue
        if isinstance(v, (list, tuple)):
            if k != "array":
                return f"an array is not {article(describe(ty))}{at}"
            if ty.items is not None:
                for i, item in enumerate(v):
                    stack.append((item, ty.items, f"{where}[{i}]"))
            continue
        if isinstance(v, Mapping):
            if k == "scope":
                keys = set(v)
                if keys != {"kind", "scopeId"}:
                    extra = sorted(map(str, keys - {"kind", "scopeId"}))
                    missing = sorted({"kind", "scopeId"} - keys)
                    parts = []
                    if missing:
                        parts.append("missing " + ", ".join(missing))
                    if extra:
                        parts.append("unknown " + ", ".join(extra))
                    return f"a scope is exactly {{kind, scopeId}}{at} ({'; '.join(parts)})"
                if v["kind"] not in SCOPE_KINDS:
                    return f"scope kind must be one of {', '.join(SCOPE_KINDS)}{at}"
                sid = v["scopeId"]
                if not isinstance(sid, str) or not is_canonical_id(sid):
                    return f"scopeId must be a canonical id such as tsk_api{at}"
                continue
            if k != "object":
                return f"a mapping is not {article(describe(ty))}{at}"
            if ty.fields is not None:
                for name, ft in ty.fields:
                    if name in v:
                        stack.append((v[name], ft, f"{where}.{name}" if where else name))
                    elif not ft.optional:
                        return f"missing required field '{name}'{at}"
            continue
        return f"unsupported literal {v!r}{at}"
    return None


def type_of_literal(value: Any) -> Type:
    """Natural type of a JSON-like literal: ``str`` → string, ``bool`` →
    boolean, numbers → number, ``None`` → null, lists → ``array<T>`` when all
    elements share a kind (else ``array<unknown>``), mappings → untyped object."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, (int, float)):
        return NUMBER
    if isinstance(value, str):
        return STRING
    if isinstance(value, (list, tuple)):
        kinds = {type_of_literal(x).kind if not isinstance(x, (list, tuple, Mapping)) else None for x in value}
        if len(kinds) == 1 and None not in kinds:
            return array_of(type_of_literal(value[0]))
        return array_of(None if not value else UNKNOWN)
    return OBJECT


# ---------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------

def describe(t: Type | None) -> str:
    """Human form for messages: ``string``, ``enum(high|low)``,
    ``array<agent>``, ``object{a, b}``, a trailing ``?`` when optional."""
    if t is None:
        return "unknown"
    out: list[str] = []
    closers: list[str] = []
    cur: Type | None = t
    while cur is not None:
        q = "?" if cur.optional else ""
        if cur.kind == "array":
            out.append("array<")
            closers.append(">" + q)
            cur = cur.items
            if cur is None:
                out.append("unknown")
            continue
        if cur.kind == "enum" and cur.values is not None:
            vals = cur.values if len(cur.values) <= 6 else cur.values[:6] + ("…",)
            out.append(f"enum({'|'.join(vals)}){q}")
        elif cur.kind == "object" and cur.fields is not None:
            names = [k for k, _ in cur.fields]
            shown = names if len(names) <= 6 else names[:6] + ["…"]
            out.append(f"object{{{', '.join(shown)}}}{q}")
        else:
            out.append(cur.kind + q)
        break
    return "".join(out) + "".join(reversed(closers))


def article(s: str) -> str:
    """``an object`` / ``a string``."""
    return ("an " if s[:1] in "aeiou" else "a ") + s


def _json(v: Any) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    return repr(v)
