"""The typed IR model: a ``loop.plan.artifact/vN`` as frozen attrs objects
(docs/api.md#the-typed-ir-model; field meanings in docs/ir.md).

:func:`loopc.ir.decode` returns an :class:`Artifact`; lowering
(:mod:`loopc.ir.lower`) builds the same classes; :func:`encode` is the one
encoder (RFC 8785 bytes written straight from the model by
:func:`encode_plan`, which also gives the semantic projection the digest
hashes), so ``decode(encode(m)) == m`` and ``encode(decode(b)) == b``;
:func:`to_json` is the same content as a JSON object
(``encode(m) == canonical_bytes(to_json(m))``, tested on every golden,
example and fixture).

Classes (wire names in docs/ir.md in parentheses):

* :class:`Artifact` — ``version`` N, ``source_version``, ``digest``, ``plan``;
* :class:`Plan` — ``input``/``output``/``state`` contracts, ``entry``
  (:class:`Entry`), ``nodes`` / ``edges`` (sorted by id) / ``scopes``
  (sorted by owner), with :meth:`Plan.node`, :meth:`Plan.edge`,
  :meth:`Plan.scope_decl` lookups by id;
* :class:`FieldSchema` (a *Contract* is a ``dict[str, FieldSchema]`` in
  sorted key order) and :class:`TypeDesc` (type descriptors);
* :class:`Node` — ``id``, ``op``, ``input``, ``source_ports``
  (:class:`SourcePort`, with ``edge`` or an ``implicit``
  :class:`Disposition`), ``target_ports`` (:class:`TargetPort`), ``scope``
  (:class:`ScopeRef` stack, outermost first), ``effects``
  (:class:`NodeEffects`), ``config``, ``retry`` (:class:`Retry`), ``label``,
  ``description``;
* one config class per opcode: :class:`SendMessageConfig` (with
  :class:`WorkScope`, :class:`RelatedScopes`, :class:`WorkItems`),
  :class:`SetVariableConfig`, :class:`WaitConfig`,
  :class:`RequestApprovalConfig`, :class:`SwitchConfig` (:class:`SwitchCase`),
  :class:`ForkConfig`, :class:`JoinConfig`, :class:`FanOutConfig`,
  :class:`LoopConfig`, :class:`EndConfig` (``CONFIG_CLASSES`` maps op →
  class);
* :class:`Edge` — endpoints, ``bind`` (field → instruction), ``scope``,
  ``effects`` (:class:`EdgeEffects`), ``disposition``, ``label``;
* :class:`ScopeDecl`;
* instruction trees (:data:`Instr`): :class:`Lit`, :class:`Ref`,
  :class:`MakeArray`, :class:`MakeObject`, :class:`Template`,
  :class:`Binary` (``eq ne lt le gt ge in contains startsWith endsWith``),
  :class:`Nary` (``and or``), :class:`Unary` (``not length``); evaluate them
  with :func:`loopc.ir.evaluator.evaluate`.

Mappings (contracts, binds) and literal values are plain ``dict``/JSON
values: treat them as read-only.  Conversions are iterative (no recursion
over instruction trees or ``items`` chains).  :func:`from_json` expects data
that the strict decoder (:mod:`loopc.ir.decoder`) has validated; it is not a
validator.
"""
from __future__ import annotations

import functools
import json
from typing import Any, Callable, ClassVar, Iterator, Mapping, TypeVar, Union

import attrs

from loopc.kinds import KINDS
from loopc.kinds import spec as S
from loopc.kinds.base import attr_name

__all__ = [
    "Artifact", "Plan", "Entry", "FieldSchema", "Contract", "TypeDesc", "NO_DEFAULT",
    "Node", "SourcePort", "TargetPort", "ScopeRef", "ScopeDecl", "Disposition", "Retry",
    "NodeEffects", "EdgeEffects", "Edge",
    "Config", "SendMessageConfig", "WorkScope", "RelatedScopes", "WorkItems", "SetVariableConfig",
    "WaitConfig", "RequestApprovalConfig", "SwitchConfig", "SwitchCase", "ForkConfig", "JoinConfig",
    "FanOutConfig", "LoopConfig", "EndConfig", "CONFIG_CLASSES",
    "Instr", "Lit", "Ref", "MakeArray", "MakeObject", "Template", "Binary", "Nary", "Unary",
    "BINARY_OPS", "NARY_OPS", "UNARY_OPS",
    "type_desc_of", "instr_from_json", "instr_to_json", "iter_instrs", "walk_instr",
    "field_from_json", "field_to_json", "contract_from_json", "contract_to_json",
    "config_from_json", "config_to_json", "node_from_json", "node_to_json", "edge_from_json",
    "edge_to_json", "plan_from_json", "plan_to_json", "from_json", "to_json", "encode", "instr_roots",
    "encode_plan", "envelope_text",
    # pre-typed-model names (kept working)
    "FieldView", "PortView", "TargetPortView", "ScopeRefView", "RetryView", "NodeView", "EdgeView",
    "field_view", "contract_view", "node_view", "edge_view",
]


def _esc(k: str) -> str:
    return k.replace("~", "~0").replace("/", "~1")


# ---------------------------------------------------------------------------
# Type descriptors
# ---------------------------------------------------------------------------

@attrs.frozen(cache_hash=True)
class TypeDesc:
    """A static type descriptor: ``kind`` (``string``, ``enum``, ``scope``,
    ``object``, ``null``, ``unknown`` …) under ``depth`` levels of
    ``array<…>``.  ``str(t)`` is the wire form (``array<array<string>>``)."""

    kind: str
    depth: int = 0

    @property
    def is_array(self) -> bool:
        return self.depth > 0

    @property
    def element(self) -> "TypeDesc":
        """The element type of an array descriptor (``unknown`` otherwise)."""
        return type_desc_of(self.kind, self.depth - 1) if self.depth else type_desc_of("unknown")

    @property
    def wire(self) -> str:
        return "array<" * self.depth + self.kind + ">" * self.depth

    def __str__(self) -> str:
        return self.wire


_DESC_BY_WIRE: dict[str, TypeDesc] = {}
_DESC_BY_KEY: dict[tuple[str, int], TypeDesc] = {}


def type_desc_of(kind: str, depth: int = 0) -> TypeDesc:
    """The (interned) :class:`TypeDesc` ``kind`` under ``depth`` arrays."""
    key = (kind, depth)
    t = _DESC_BY_KEY.get(key)
    if t is None:
        t = _DESC_BY_KEY[key] = TypeDesc(kind, depth)
    return t


def parse_type_desc(s: str) -> TypeDesc:
    """Wire descriptor string → :class:`TypeDesc` (interned)."""
    t = _DESC_BY_WIRE.get(s)
    if t is None:
        depth = 0
        inner = s
        while inner.startswith("array<") and inner.endswith(">"):
            inner = inner[6:-1]
            depth += 1
        t = type_desc_of(inner, depth)
        if len(_DESC_BY_WIRE) < 4096:
            _DESC_BY_WIRE[s] = t
    return t


# ---------------------------------------------------------------------------
# Instructions
# ---------------------------------------------------------------------------

BINARY_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "contains", "startsWith", "endsWith")
NARY_OPS = ("and", "or")
UNARY_OPS = ("not", "length")


@attrs.frozen
class Lit:
    """``["lit", T, value]`` — a constant; ``value`` is plain JSON."""

    type: TypeDesc
    value: Any
    op: ClassVar[str] = "lit"

    @property
    def children(self) -> tuple["Instr", ...]:
        return ()


@attrs.frozen
class Ref:
    """``["ref", T, root, seg...]`` — ``root`` one of ``run.input run.state
    input output branches winner loop item items``; ``path`` the segments."""

    type: TypeDesc
    root: str
    path: tuple[str, ...] = ()
    op: ClassVar[str] = "ref"

    @property
    def children(self) -> tuple["Instr", ...]:
        return ()


@attrs.frozen
class MakeArray:
    """``["array", T, item...]`` — a list constructor."""

    type: TypeDesc
    items: tuple["Instr", ...]
    op: ClassVar[str] = "array"

    @property
    def children(self) -> tuple["Instr", ...]:
        return self.items


@attrs.frozen
class MakeObject:
    """``["object", T, k1, i1, ...]`` — ``keys`` (RFC 8785 order) and their
    ``values``, pairwise."""

    type: TypeDesc
    keys: tuple[str, ...]
    values: tuple["Instr", ...]
    op: ClassVar[str] = "object"

    @property
    def children(self) -> tuple["Instr", ...]:
        return self.values


@attrs.frozen
class Template:
    """``["template", T, part...]`` — concatenation of the rendered parts."""

    type: TypeDesc
    parts: tuple["Instr", ...]
    op: ClassVar[str] = "template"

    @property
    def children(self) -> tuple["Instr", ...]:
        return self.parts


@attrs.frozen
class Binary:
    """``[op, T, left, right]`` for ``op`` in :data:`BINARY_OPS`."""

    op: str
    type: TypeDesc
    left: "Instr"
    right: "Instr"

    @property
    def children(self) -> tuple["Instr", ...]:
        return (self.left, self.right)


@attrs.frozen
class Nary:
    """``["and"|"or", T, a, b, ...]`` (two or more operands)."""

    op: str
    type: TypeDesc
    operands: tuple["Instr", ...]

    @property
    def children(self) -> tuple["Instr", ...]:
        return self.operands


@attrs.frozen
class Unary:
    """``["not"|"length", T, a]``."""

    op: str
    type: TypeDesc
    operand: "Instr"

    @property
    def children(self) -> tuple["Instr", ...]:
        return (self.operand,)


Instr = Union[Lit, Ref, MakeArray, MakeObject, Template, Binary, Nary, Unary]
INSTR_CLASSES = (Lit, Ref, MakeArray, MakeObject, Template, Binary, Nary, Unary)

_BIN = frozenset(BINARY_OPS)
_NARY = frozenset(NARY_OPS)
_UN = frozenset(UNARY_OPS)


class InstrShapeError(ValueError):
    """A JSON value is not an instruction (``pointer`` relative to the root)."""

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(f"{pointer or '/'}: {message}")
        self.pointer = pointer
        self.message = message


class _Bad(Exception):
    pass


def instr_from_json(value: Any, memo: dict[Any, Any] | None = None) -> Instr:
    """Wire instruction (a JSON array) → typed :data:`Instr`.  Iterative.
    Raises :class:`InstrShapeError` (with a pointer) for a value that is not
    an instruction; the strict decoder has already rejected those in an
    artifact.  Equal sub-trees are one object (frozen, so sharing is
    invisible): within the tree, or within every tree decoded with one
    ``memo`` (as :func:`contract_from_json`'s)."""
    try:
        return _build(value, {} if memo is None else memo)
    except (_Bad, IndexError, TypeError, KeyError, AttributeError):
        _locate_shape_error(value)
        raise InstrShapeError("", "expected an instruction [op, type, operands...]") from None


#: Interned leaf instructions (frozen, so sharing is invisible); bounded.
_LEAVES: dict[tuple[Any, ...], Instr] = {}


def _build(root: Any, memo: dict[Any, Any]) -> Instr:
    desc = parse_type_desc
    leaves = _LEAVES
    if len(leaves) > 65536:
        leaves.clear()
    if type(root) is list and len(root) >= 3 and root[0] == "ref" and type(root[1]) is str:
        # a reference on its own (most roots): its interned leaf
        key = (root[1], root[2], tuple(root[3:]))
        got = leaves.get(key)
        if got is not None:
            return got
    out: list[Any] = []
    push_out = out.append
    stack: list[Any] = [root]
    pop = stack.pop
    push = stack.append
    while stack:
        v = pop()
        if type(v) is tuple:  # post-order marker: build v[0] from the last children
            v = v[0]
            op = v[0]
            n = (len(v) - 2) >> 1 if op == "object" else len(v) - 2
            if n:
                kids = tuple(out[-n:])
                del out[-n:]
            else:
                kids = ()
            # the children are shared (or held by what is): equal ids, equal trees
            key = ("instr", op, v[1], tuple(v[2::2]) if op == "object" else None, *map(id, kids))
            got = memo.get(key)
            if got is None:
                t = desc(v[1])
                if op == "object":
                    got = MakeObject(t, tuple(v[2::2]), kids)
                elif op in _BIN:
                    got = Binary(op, t, kids[0], kids[1])
                elif op == "template":
                    got = Template(t, kids)
                elif op == "array":
                    got = MakeArray(t, kids)
                elif op in _NARY:
                    got = Nary(op, t, kids)
                else:
                    got = Unary(op, t, kids[0])
                memo[key] = got
            push_out(got)
            continue
        if type(v) is not list or len(v) < 2 or type(v[1]) is not str:
            raise _Bad
        op = v[0]
        if op == "lit":
            if len(v) != 3:
                raise _Bad
            x = v[2]
            tx = type(x)
            if tx is str or tx is int or tx is bool or tx is float or x is None:
                key = (v[1], tx, x)
                got = leaves.get(key)
                if got is None:
                    got = leaves[key] = Lit(desc(v[1]), x)
                push_out(got)
            else:
                push_out(Lit(desc(v[1]), x))
            continue
        if op == "ref":
            if len(v) < 3:
                raise _Bad
            path = tuple(v[3:])
            for seg in path:
                if type(seg) is not str:
                    raise _Bad
            if type(v[2]) is not str:
                raise _Bad
            key = (v[1], v[2], path)
            got = leaves.get(key)
            if got is None:
                got = leaves[key] = Ref(desc(v[1]), v[2], path)
            push_out(got)
            continue
        n = len(v) - 2
        if op == "object":
            if n < 2 or n & 1:
                raise _Bad
            for k in v[2::2]:
                if type(k) is not str:
                    raise _Bad
            push((v,))
            rest = v[3::2]
        elif op in _BIN:
            if n != 2:
                raise _Bad
            push((v,))
            rest = v[2:]
        elif op in _UN:
            if n != 1:
                raise _Bad
            push((v,))
            rest = v[2:]
        elif op == "template" or (op == "array" and n >= 1) or (op in _NARY and n >= 2):
            push((v,))
            rest = v[2:]
        else:
            raise _Bad
        rest.reverse()
        stack.extend(rest)
    return out[0]  # type: ignore[no-any-return]


def _locate_shape_error(value: Any) -> None:
    """Raise :class:`InstrShapeError` at the first malformed instruction."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        v, p = stack.pop()
        if not isinstance(v, list) or len(v) < 2 or not isinstance(v[0], str) or not isinstance(v[1], str):
            raise InstrShapeError(p, "expected an instruction [op, type, operands...]")
        op = v[0]
        n = len(v) - 2
        if op == "lit":
            if n != 1:
                raise InstrShapeError(p, "'lit' takes exactly one value")
            continue
        if op == "ref":
            if n < 1 or not all(isinstance(x, str) for x in v[2:]):
                raise InstrShapeError(p, "'ref' takes a root and string segments")
            continue
        if op == "object":
            if n < 2 or n % 2 or not all(isinstance(x, str) for x in v[2::2]):
                raise InstrShapeError(p, "'object' takes key/instruction pairs")
            idx = range(3, len(v), 2)
        elif op in _BIN or op in _NARY or op in _UN or op in ("array", "template"):
            if (op in _BIN and n != 2) or (op in _UN and n != 1) or (op in _NARY and n < 2) \
                    or (op == "array" and n < 1):
                raise InstrShapeError(p, f"wrong number of operands for '{op}'")
            idx = range(2, len(v))
        else:
            raise InstrShapeError(p + "/0", f"unknown instruction {op!r}")
        stack.extend((v[i], f"{p}/{i}") for i in idx)


def instr_to_json(instr: Instr, memo: dict[int, Any] | None = None) -> list[Any]:
    """Typed :data:`Instr` → wire JSON array.  Iterative.  ``memo`` (one
    encoding's, keyed by object id; the objects outlive it): a leaf
    instruction shared in the model (:func:`loopc.ir.exprs.lower_typed`
    interns them) is encoded once and its JSON array shared too."""
    if memo is None:
        memo = {}
    else:
        got = memo.get(id(instr))
        if got is not None:
            return got  # type: ignore[no-any-return]
    root: list[Any] = [None]
    stack: list[tuple[Instr, list[Any], int]] = [(instr, root, 0)]
    while stack:
        i, holder, slot = stack.pop()
        cls = i.__class__
        if cls is Lit or cls is Ref:
            got = memo.get(id(i))
            if got is None:
                if cls is Lit:
                    got = ["lit", i.type.wire, i.value]  # type: ignore[union-attr]
                else:
                    got = ["ref", i.type.wire, i.root, *i.path]  # type: ignore[union-attr]
                memo[id(i)] = got
            holder[slot] = got
            continue
        if cls is MakeObject:
            arr: list[Any] = ["object", i.type.wire]
            for k in i.keys:  # type: ignore[union-attr]
                arr.append(k)
                arr.append(None)
            holder[slot] = arr
            for j, x in enumerate(i.values):  # type: ignore[union-attr]
                stack.append((x, arr, 3 + 2 * j))
            continue
        kids = i.children
        arr = [i.op, i.type.wire]
        arr.extend([None] * len(kids))
        holder[slot] = arr
        for j, x in enumerate(kids):
            stack.append((x, arr, 2 + j))
    return root[0]


def walk_instr(instr: Instr) -> Iterator[tuple[Instr, int]]:
    """Every instruction of a tree with its depth (the root is 1), pre-order.
    Iterative."""
    stack = [(instr, 1)]
    while stack:
        i, d = stack.pop()
        yield i, d
        kids = i.children
        for k in reversed(kids):
            stack.append((k, d + 1))


# ---------------------------------------------------------------------------
# Contracts
# ---------------------------------------------------------------------------

class _NoDefault:
    _inst: "ClassVar[_NoDefault | None]" = None

    def __new__(cls) -> "_NoDefault":
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __reduce__(self) -> str:
        return "NO_DEFAULT"


#: ``FieldSchema.default`` when the wire field has no ``default`` member.
NO_DEFAULT: Any = _NoDefault()


@attrs.frozen
class FieldSchema:
    """One FieldSchema: ``type`` a field type (``string`` … ``array``);
    ``default`` :data:`NO_DEFAULT` when absent; ``values`` exactly for
    ``enum``; ``items`` exactly for ``array``."""

    type: str
    required: bool = False
    default: Any = NO_DEFAULT
    values: tuple[str, ...] | None = None
    items: "FieldSchema | None" = None
    label: str | None = None
    description: str | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


#: A contract: field name → :class:`FieldSchema`, keys in sorted order.
Contract = dict


#: Default values a decoded FieldSchema may share with an equal one (with
#: the value's type: ``1 == True`` but they are different defaults).
_SHARED_DEFAULTS = frozenset({str, int, bool, _NoDefault, type(None)})


def field_from_json(d: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> FieldSchema:
    """FieldSchema JSON → :class:`FieldSchema` (iterative over ``items``).
    ``memo`` (one decoding's): equal FieldSchemas with scalar defaults are
    one object, as lowering shares them."""
    chain = []
    cur: Any = d
    while type(cur) is dict:
        chain.append(cur)
        cur = cur.get("items")
    out: FieldSchema | None = None
    for f in reversed(chain):
        vals = f.get("values")
        default = f.get("default", NO_DEFAULT)
        # ``items`` by identity: it is itself shared (or held by what is)
        key = ("field", f["type"], f["required"], type(default), default, None if vals is None else tuple(vals),
               None if out is None or "items" not in f else id(out), f.get("label"), f.get("description"))
        got = None if memo is None or key[3] not in _SHARED_DEFAULTS else memo.get(key)
        if got is None:
            got = FieldSchema(key[1], key[2], default, key[5], out if "items" in f else None, key[7], key[8])
            if memo is not None and key[3] in _SHARED_DEFAULTS:
                memo[key] = got
        out = got
    assert out is not None
    return out


def field_to_json(fs: FieldSchema) -> dict[str, Any]:
    """:class:`FieldSchema` → JSON (iterative over ``items``)."""
    chain = []
    cur: FieldSchema | None = fs
    while cur is not None:
        chain.append(cur)
        cur = cur.items
    out: dict[str, Any] | None = None
    for f in reversed(chain):
        d: dict[str, Any] = {"type": f.type, "required": f.required}
        if f.default is not NO_DEFAULT:
            d["default"] = f.default
        if f.values is not None:
            d["values"] = list(f.values)
        if out is not None:
            d["items"] = out
        if f.label is not None:
            d["label"] = f.label
        if f.description is not None:
            d["description"] = f.description
        out = d
    assert out is not None
    return out


def contract_from_json(c: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> dict[str, FieldSchema]:
    """Contract JSON → ``{name: FieldSchema}`` in sorted name order.  With
    ``memo`` (as :func:`field_from_json`) equal contracts are one (read-only)
    dict."""
    if memo is None:
        return {k: field_from_json(c[k]) for k in sorted(c)}
    fields = [(k, field_from_json(c[k], memo)) for k in sorted(c)]
    key = ("contract", *[(k, id(f)) for k, f in fields])
    got = memo.get(key)
    if got is None:
        got = memo[key] = dict(fields)
    return got  # type: ignore[no-any-return]


def contract_to_json(c: Mapping[str, FieldSchema], memo: dict[int, Any] | None = None) -> dict[str, Any]:
    """Contract → JSON; with ``memo`` (as :func:`instr_to_json`) a contract
    or FieldSchema shared in the model is encoded once."""
    if memo is None:
        return {k: field_to_json(v) for k, v in c.items()}
    got = memo.get(id(c))
    if got is None:
        got = memo[id(c)] = {}
        for k, v in c.items():
            f = memo.get(id(v))
            if f is None:
                f = memo[id(v)] = field_to_json(v)
            got[k] = f
    return got  # type: ignore[no-any-return]


def _bind_from(d: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> dict[str, Instr]:
    return {k: instr_from_json(d[k], memo) for k in sorted(d)}


def _bind_to(d: Mapping[str, Instr], memo: dict[int, Any] | None = None) -> dict[str, Any]:
    if memo is None:
        memo = {}
    get = memo.get
    out = {}
    for k, v in d.items():
        got = get(id(v))  # bindings are mostly shared leaves: no call for them
        out[k] = got if got is not None else instr_to_json(v, memo)
    return out


# ---------------------------------------------------------------------------
# Scopes, routes, retry, effects
# ---------------------------------------------------------------------------

@attrs.frozen
class ScopeRef:
    """One entry of a scope stack: ``kind`` ``fork``/``all_match`` (with
    ``branch``) or ``fan_out``/``loop``; ``owner`` the owning node id."""

    kind: str
    owner: str
    branch: str | None = None


def _scope_from(lst: Any, memo: dict[Any, Any] | None = None) -> tuple[ScopeRef, ...]:
    """A scope stack; with ``memo`` (one decoding's) equal stacks are one tuple."""
    if memo is None:
        return tuple(ScopeRef(s["kind"], s["owner"], s.get("branch")) for s in lst)
    if not lst:
        return ()
    key = ("scope", *[(s["kind"], s["owner"], s.get("branch")) for s in lst])
    got = memo.get(key)
    if got is None:
        got = memo[key] = tuple(ScopeRef(*k) for k in key[1:])
    return got  # type: ignore[no-any-return]


def _scope_to(stack: tuple[ScopeRef, ...], memo: dict[int, Any] | None = None) -> list[dict[str, Any]]:
    if memo is not None:
        got = memo.get(id(stack))
        if got is None:
            got = memo[id(stack)] = _scope_to(stack)
        return got  # type: ignore[no-any-return]
    out = []
    for s in stack:
        d: dict[str, Any] = {"kind": s.kind, "owner": s.owner}
        if s.branch is not None:
            d["branch"] = s.branch
        out.append(d)
    return out


@attrs.frozen
class ScopeDecl:
    """A scope declaration: ``kind`` ``fork``/``all_match`` (``branches``),
    ``fan_out`` or ``loop``; ``join`` the closing join or ``None`` (always
    ``None`` for ``loop``, which has no join member on the wire)."""

    kind: str
    owner: str
    branches: tuple[str, ...] | None = None
    join: str | None = None


def _decl_from(s: Mapping[str, Any]) -> ScopeDecl:
    b = s.get("branches")
    return ScopeDecl(s["kind"], s["owner"], tuple(b) if b is not None else None, s.get("join"))


def _decl_to(s: ScopeDecl) -> dict[str, Any]:
    d: dict[str, Any] = {"kind": s.kind, "owner": s.owner}
    if s.branches is not None:
        d["branches"] = list(s.branches)
    if s.kind != "loop":
        d["join"] = s.join
    return d


#: Members each disposition action carries (besides ``action``).
DISPOSITION_MEMBERS = {
    "fail_plan": (), "fail_branch": ("owner", "branch", "join"), "fail_item": ("owner", "join"), "never": (),
}


@attrs.frozen
class Disposition:
    """A failure disposition (an edge into a failed End) or, with
    ``status``, the implicit route of an omitted ``failed``/``timed_out``
    port.  ``action``: ``fail_plan``, ``fail_branch`` (``owner``,
    ``branch``, ``join``), ``fail_item`` (``owner``, ``join``) or ``never``
    (implicit routes only); ``join`` may be ``None``."""

    action: str
    owner: str | None = None
    branch: str | None = None
    join: str | None = None
    status: str | None = None


def _disp_from(d: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> Disposition:
    key = ("disp", d["action"], d.get("owner"), d.get("branch"), d.get("join"), d.get("status"))
    if memo is None:
        return Disposition(*key[1:])
    got = memo.get(key)
    if got is None:
        got = memo[key] = Disposition(*key[1:])
    return got  # type: ignore[no-any-return]


def _disp_to(d: Disposition, memo: dict[int, Any] | None = None) -> dict[str, Any]:
    if memo is not None:
        got = memo.get(id(d))
        if got is None:
            got = memo[id(d)] = _disp_to(d)
        return got  # type: ignore[no-any-return]
    out: dict[str, Any] = {"action": d.action}
    if d.status is not None:
        out["status"] = d.status
    for k in DISPOSITION_MEMBERS.get(d.action, ()):
        out[k] = getattr(d, k)
    return out


@attrs.frozen
class Retry:
    """``maxAttempts`` 1..100 and ``backoff`` (an ISO 8601 duration)."""

    max_attempts: int
    backoff: str


@attrs.frozen
class NodeEffects:
    """Run-state effects: sorted, unique state field names."""

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    watches: tuple[str, ...] = ()


@attrs.frozen
class EdgeEffects:
    reads: tuple[str, ...] = ()


# ---------------------------------------------------------------------------
# Node configs (one class per opcode; wire names in field metadata)
# ---------------------------------------------------------------------------

def _w(wire: str, codec: str, *, required: bool = False, default: Any = None) -> Any:
    """A config field: ``wire`` member name, ``codec`` how it converts;
    optional fields default to ``None`` (absent) and are omitted then."""
    if required:
        return attrs.field(metadata={"wire": wire, "codec": codec, "required": True})
    return attrs.field(default=default, metadata={"wire": wire, "codec": codec, "required": False})


def _codec(spec: Any) -> str | None:
    """The codec of a wire field's spec, for the derivable ones."""
    if spec == S.INSTR:
        return "instr"
    if spec == S.BIND:
        return "bind"
    if spec == S.CONTRACT:
        return "contract"
    if isinstance(spec, S.Str):
        return "str"
    if isinstance(spec, S.Int):
        return "int"
    if isinstance(spec, S.Bool):
        return "flag"
    if isinstance(spec, S.Arr) and isinstance(spec.items, S.Str):
        return "strs"
    return None


_T = TypeVar("_T", bound=type)
_E = TypeVar("_E")


def _wire_fields(op: str) -> Callable[[_T], _T]:
    """Derive opcode ``op``'s config class members from its kind's wire
    surface (:mod:`loopc.kinds`; docs/architecture.md#add-one-field-to-one-node-kind):
    every wire field the class body does not declare gets its member
    (:func:`loopc.kinds.base.attr_name` of the wire name), converted by the
    codec its spec implies (an instruction, a binding map, a contract, a
    string, an integer, a flag, a list of strings), ``None`` when absent.
    Declaring one in the body is optional (a static type, a bespoke codec).
    Applied under ``attrs.frozen``."""
    def derive(cls: _T) -> _T:
        ann = cls.__dict__.get("__annotations__")
        if ann is None:
            ann = {}
            cls.__annotations__ = ann
        for wire, f in KINDS[op].wire.fields.items():
            name = attr_name(wire)
            if name in ann:
                continue
            codec = _codec(f.spec)
            if codec is None:
                raise TypeError(f"declare {cls.__name__}.{name}: no codec derives from its wire spec")
            ann[name] = "Any"
            setattr(cls, name, _w(wire, codec, required=f.required))
        return cls

    return derive


@attrs.frozen
class WorkScope:
    """``sendMessage.workScope``: ``mode`` ``fixed`` (with ``scope``) or ``agent``."""

    mode: str
    scope: Instr | None = None


@attrs.frozen
class RelatedScopes:
    """``sendMessage.relatedScopes``: ``form`` ``list`` (``items``) or
    ``value`` (one array-valued ``value``)."""

    form: str
    items: tuple[Instr, ...] | None = None
    value: Instr | None = None


@attrs.frozen
class WorkItems:
    allowed_responders: Instr


@attrs.frozen
class SwitchCase:
    port: str
    when: Instr


class Config:
    """Base of the per-opcode config classes; ``OP`` is the opcode."""

    OP: ClassVar[str] = ""

    def instrs(self) -> Iterator[tuple[str, Instr]]:
        """``(pointer suffix under config, instruction)`` for every
        instruction tree this config holds, in wire order."""
        return _config_instrs(self)


@attrs.frozen(kw_only=True)
@_wire_fields("send_message")
class SendMessageConfig(Config):
    OP: ClassVar[str] = "send_message"
    completion: str = _w("completion", "str", required=True)
    text: Instr = _w("text", "instr", required=True)
    target: Instr | None = _w("target", "instr")
    scope: Instr | None = _w("scope", "instr")
    start_thread: bool = _w("startThread", "flag", default=False)
    callback_output: dict[str, FieldSchema] | None = _w("callbackOutput", "contract")
    responder: Instr | None = _w("responder", "instr")
    work_scope: WorkScope | None = _w("workScope", "work_scope")
    related_scopes: RelatedScopes | None = _w("relatedScopes", "related_scopes")
    work_items: WorkItems | None = _w("workItems", "work_items")


@attrs.frozen(kw_only=True)
@_wire_fields("set_variable")
class SetVariableConfig(Config):
    OP: ClassVar[str] = "set_variable"
    assign: dict[str, Instr] = _w("assign", "bind", required=True)


@attrs.frozen(kw_only=True)
@_wire_fields("wait")
class WaitConfig(Config):
    OP: ClassVar[str] = "wait"
    condition: Instr | None = _w("condition", "instr")
    duration: Instr | None = _w("duration", "instr")
    timeout: Instr | None = _w("timeout", "instr")


@attrs.frozen(kw_only=True)
@_wire_fields("request_approval")
class RequestApprovalConfig(Config):
    OP: ClassVar[str] = "request_approval"
    assignee: Instr = _w("assignee", "instr", required=True)
    summary: Instr = _w("summary", "instr", required=True)
    feedback_scope: Instr | None = _w("feedbackScope", "instr")


@attrs.frozen(kw_only=True)
@_wire_fields("switch")
class SwitchConfig(Config):
    OP: ClassVar[str] = "switch"
    mode: str = _w("mode", "str", required=True)
    cases: tuple[SwitchCase, ...] = _w("cases", "cases", required=True)
    default: str = _w("default", "str", required=True)


@attrs.frozen(kw_only=True)
@_wire_fields("fork")
class ForkConfig(Config):
    OP: ClassVar[str] = "fork"
    branches: tuple[str, ...] = _w("branches", "strs", required=True)


@attrs.frozen(kw_only=True)
@_wire_fields("join")
class JoinConfig(Config):
    OP: ClassVar[str] = "join"
    mode: str = _w("mode", "str", required=True)
    fork_id: str | None = _w("forkId", "str")
    fan_out_id: str | None = _w("fanOutId", "str")
    result: dict[str, FieldSchema] = _w("result", "contract", required=True)
    merge: dict[str, Instr] = _w("merge", "bind", required=True)

    @property
    def owner(self) -> str:
        """The fork / all_match switch / fan-out this join closes."""
        return self.fork_id if self.fork_id is not None else self.fan_out_id  # type: ignore[return-value]


@attrs.frozen(kw_only=True)
@_wire_fields("fan_out")
class FanOutConfig(Config):
    OP: ClassVar[str] = "fan_out"
    items: Instr = _w("items", "instr", required=True)
    max_concurrency: int = _w("maxConcurrency", "int", required=True)
    failure_mode: str = _w("failureMode", "str", required=True)


@attrs.frozen(kw_only=True)
@_wire_fields("loop")
class LoopConfig(Config):
    OP: ClassVar[str] = "loop"
    mode: str = _w("mode", "str", required=True)
    iterations: int = _w("iterations", "int", required=True)
    state: dict[str, FieldSchema] = _w("state", "contract", required=True)
    init: dict[str, Instr] = _w("init", "bind", required=True)


@attrs.frozen(kw_only=True)
@_wire_fields("end")
class EndConfig(Config):
    OP: ClassVar[str] = "end"
    status: str = _w("status", "str", required=True)
    code: str | None = _w("code", "str")
    detail: Instr | None = _w("detail", "instr")


CONFIG_CLASSES: dict[str, type] = {
    c.OP: c for c in (SendMessageConfig, SetVariableConfig, WaitConfig, RequestApprovalConfig, SwitchConfig,
                      ForkConfig, JoinConfig, FanOutConfig, LoopConfig, EndConfig)
}


def _ws_from(d: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> WorkScope:
    return WorkScope(d["mode"], instr_from_json(d["scope"], memo) if "scope" in d else None)


def _ws_to(w: WorkScope, memo: dict[int, Any]) -> dict[str, Any]:
    d: dict[str, Any] = {"mode": w.mode}
    if w.scope is not None:
        d["scope"] = instr_to_json(w.scope, memo)
    return d


def _rs_from(d: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> RelatedScopes:
    items = d.get("items")
    return RelatedScopes(d["form"], tuple(instr_from_json(x, memo) for x in items) if items is not None else None,
                         instr_from_json(d["value"], memo) if "value" in d else None)


def _rs_to(r: RelatedScopes, memo: dict[int, Any]) -> dict[str, Any]:
    d: dict[str, Any] = {"form": r.form}
    if r.items is not None:
        d["items"] = [instr_to_json(x, memo) for x in r.items]
    if r.value is not None:
        d["value"] = instr_to_json(r.value, memo)
    return d


#: codec -> (decode(wire value, memo), encode(model value, memo)); ``memo``
#: as in :func:`contract_from_json` / :func:`instr_to_json`, one per
#: decoding / encoding.  A ``None`` decoder keeps the wire value as it is.
_CODECS: dict[str, tuple[Callable[[Any, Any], Any] | None, Callable[[Any, dict[int, Any]], Any]]] = {
    "str": (None, lambda x, m: x),
    "int": (lambda x, m: int(x), lambda x, m: x),
    "flag": (lambda x, m: bool(x), lambda x, m: x),
    "instr": (instr_from_json, instr_to_json),
    "bind": (_bind_from, _bind_to),
    "contract": (contract_from_json, contract_to_json),
    "strs": (lambda x, m: tuple(x), lambda x, m: list(x)),
    "cases": (lambda lst, m: tuple(SwitchCase(c["port"], instr_from_json(c["when"], m)) for c in lst),
              lambda cs, m: [{"port": c.port, "when": instr_to_json(c.when, m)} for c in cs]),
    "work_scope": (_ws_from, _ws_to),
    "related_scopes": (_rs_from, _rs_to),
    "work_items": (lambda d, m: WorkItems(instr_from_json(d["allowedResponders"], m)),
                   lambda w, m: {"allowedResponders": instr_to_json(w.allowed_responders, m)}),
}

# op -> [(attr name, wire name, codec, required)]
_CONFIG_FIELDS: dict[str, list[tuple[str, str, str, bool]]] = {
    op: [(a.name, a.metadata["wire"], a.metadata["codec"], a.metadata["required"]) for a in attrs.fields(cls)]
    for op, cls in CONFIG_CLASSES.items()
}


# op -> [(attr name, wire name, decoder)]
_CONFIG_DECODERS: dict[str, list[tuple[str, str, Callable[[Any, Any], Any] | None]]] = {
    op: [(name, wire, _CODECS[codec][0]) for name, wire, codec, _ in fields] for op, fields in _CONFIG_FIELDS.items()
}

#: codecs whose wire value is the model value (their encoder is not called)
_IDENTITY_CODECS = frozenset({"str", "int", "flag"})

# op -> [(attr name, wire name, encoder or None for the identity, required)]
_CONFIG_ENCODERS: dict[str, list[tuple[str, str, Callable[[Any, dict[int, Any]], Any] | None, bool]]] = {
    op: [(name, wire, None if codec in _IDENTITY_CODECS else _CODECS[codec][1], required)
         for name, wire, codec, required in fields]
    for op, fields in _CONFIG_FIELDS.items()
}


# op -> _CONFIG_FIELDS[op] in wire-name (canonical member) order
_CONFIG_FIELDS_BY_WIRE: dict[str, list[tuple[str, str, str, bool]]] = {
    op: sorted(fields, key=lambda f: f[1]) for op, fields in _CONFIG_FIELDS.items()
}


def config_wire_fields(op: str) -> list[str]:
    """Wire member names of opcode ``op``'s config (drift-tested against
    :data:`loopc.ir.surface.CONFIGS`)."""
    return [w for _, w, _, _ in _CONFIG_FIELDS[op]]


def config_from_json(op: str, c: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> Config:
    """Config JSON of opcode ``op`` → its config class (``memo`` as in
    :func:`contract_from_json`)."""
    kw = {}
    for name, wire, dec in _CONFIG_DECODERS[op]:
        if wire in c:
            kw[name] = c[wire] if dec is None else dec(c[wire], memo)
    return CONFIG_CLASSES[op](**kw)  # type: ignore[no-any-return]


def config_to_json(cfg: Config, memo: dict[int, Any] | None = None) -> dict[str, Any]:
    """Config class → wire JSON (optional members omitted when ``None``;
    ``startThread`` written only when true)."""
    if memo is None:
        memo = {}
    d: dict[str, Any] = {}
    for name, wire, enc, required in _CONFIG_ENCODERS[cfg.OP]:
        v = getattr(cfg, name)
        if not required and (v is None or v is False):
            continue
        d[wire] = v if enc is None else enc(v, memo)
    return d


#: codecs of config members that hold instruction trees
_INSTR_CODECS = frozenset({"instr", "bind", "cases", "work_scope", "related_scopes", "work_items"})

# op -> [(attr name, wire name, codec)] of the members holding instruction trees
_CONFIG_INSTR_FIELDS: dict[str, list[tuple[str, str, str]]] = {
    op: [(name, wire, codec) for name, wire, codec, _ in fields if codec in _INSTR_CODECS]
    for op, fields in _CONFIG_FIELDS.items()
}


def _config_instrs(cfg: Any, pointers: bool = True) -> Iterator[tuple[Any, Instr]]:
    """``(pointer suffix, instruction)`` of every instruction tree of
    ``cfg`` in wire order; every suffix ``None`` when not ``pointers``."""
    p = pointers
    for name, wire, codec in _CONFIG_INSTR_FIELDS[cfg.OP]:
        v = getattr(cfg, name)
        if v is None:
            continue
        if codec == "instr":
            yield f"/{wire}" if p else None, v
        elif codec == "bind":
            for k, x in v.items():
                yield f"/{wire}/{_esc(k)}" if p else None, x
        elif codec == "cases":
            for i, case in enumerate(v):
                yield f"/{wire}/{i}/when" if p else None, case.when
        elif codec == "work_scope":
            if v.scope is not None:
                yield f"/{wire}/scope" if p else None, v.scope
        elif codec == "related_scopes":
            if v.items is not None:
                for i, x in enumerate(v.items):
                    yield f"/{wire}/items/{i}" if p else None, x
            if v.value is not None:
                yield f"/{wire}/value" if p else None, v.value
        elif codec == "work_items":
            yield f"/{wire}/allowedResponders" if p else None, v.allowed_responders


# ---------------------------------------------------------------------------
# Nodes and edges
# ---------------------------------------------------------------------------

@attrs.frozen
class SourcePort:
    """A source port: ``output`` is ``None`` for ``item``/``body``; exactly
    one of ``edge`` (outgoing edge id) and ``implicit`` (the lowered route of
    an omitted ``failed``/``timed_out`` port)."""

    name: str
    output: dict[str, FieldSchema] | None
    edge: str | None = None
    implicit: Disposition | None = None


@attrs.frozen
class TargetPort:
    """A target port (``in``; ``continue``/``break`` on loops) and the
    sorted ids of the edges entering it."""

    name: str
    edges: tuple[str, ...] = ()


@attrs.frozen
class Node:
    """A node; ``op`` is ``config.OP``."""

    id: str
    input: dict[str, FieldSchema]
    source_ports: tuple[SourcePort, ...]
    target_ports: tuple[TargetPort, ...]
    scope: tuple[ScopeRef, ...]
    effects: NodeEffects
    config: Config
    retry: Retry | None = None
    label: str | None = None
    description: str | None = None

    @property
    def op(self) -> str:
        return self.config.OP

    @property
    def reads(self) -> tuple[str, ...]:
        return self.effects.reads

    @property
    def writes(self) -> tuple[str, ...]:
        return self.effects.writes

    @property
    def watches(self) -> tuple[str, ...]:
        return self.effects.watches

    def port(self, name: str) -> SourcePort:
        """Source port ``name``; ``KeyError`` when absent."""
        for p in self.source_ports:
            if p.name == name:
                return p
        raise KeyError(name)

    def target_port(self, name: str) -> TargetPort:
        for p in self.target_ports:
            if p.name == name:
                return p
        raise KeyError(name)


def node_from_json(n: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> Node:
    """Node JSON (validated) → :class:`Node` (``memo`` as in :func:`contract_from_json`)."""
    ports = n["ports"]
    src = []
    for p in ports["source"]:
        out = p["output"]
        imp = p.get("implicit")
        src.append(SourcePort(p["name"], None if out is None else contract_from_json(out, memo), p.get("edge"),
                              None if imp is None else _disp_from(imp, memo)))
    tgt = tuple(TargetPort(t["name"], tuple(t["edges"])) for t in ports["target"])
    eff = n["effects"]
    r = n.get("retry")
    return Node(
        n["id"], contract_from_json(n["input"], memo), tuple(src), tgt, _scope_from(n["scope"], memo),
        _effects_from(NodeEffects, (tuple(eff["reads"]), tuple(eff["writes"]), tuple(eff["watches"])), memo),
        config_from_json(n["op"], n["config"], memo),
        Retry(int(r["maxAttempts"]), r["backoff"]) if r is not None else None, n.get("label"), n.get("description"))


def _effects_from(cls: type[_E], lists: tuple[tuple[str, ...], ...], memo: dict[Any, Any] | None) -> _E:
    """:class:`NodeEffects` / :class:`EdgeEffects`, equal ones shared under ``memo``."""
    if memo is None:
        return cls(*lists)
    key = (cls, *lists)
    got = memo.get(key)
    if got is None:
        got = memo[key] = cls(*lists)
    return got  # type: ignore[no-any-return]


def node_to_json(n: Node, memo: dict[int, Any] | None = None) -> dict[str, Any]:
    """:class:`Node` → wire JSON (``memo`` as in :func:`instr_to_json`)."""
    if memo is None:
        memo = {}
    get = memo.get
    src = []
    for p in n.source_ports:
        o = p.output
        if o is not None:
            o = get(id(o)) or contract_to_json(o, memo)
        d: dict[str, Any] = {"name": p.name, "output": o}
        if p.edge is not None:
            d["edge"] = p.edge
        if p.implicit is not None:
            d["implicit"] = _disp_to(p.implicit, memo)
        src.append(d)
    eff = n.effects
    effects = get(id(eff))
    if effects is None:
        effects = memo[id(eff)] = {"reads": list(eff.reads), "writes": list(eff.writes), "watches": list(eff.watches)}
    out: dict[str, Any] = {
        "id": n.id,
        "op": n.op,
        "input": get(id(n.input)) or contract_to_json(n.input, memo),
        "ports": {"source": src, "target": [{"name": t.name, "edges": list(t.edges)} for t in n.target_ports]},
        "scope": get(id(n.scope)) or _scope_to(n.scope, memo),
        "effects": effects,
        "config": config_to_json(n.config, memo),
    }
    if n.retry is not None:
        out["retry"] = {"maxAttempts": n.retry.max_attempts, "backoff": n.retry.backoff}
    if n.label is not None:
        out["label"] = n.label
    if n.description is not None:
        out["description"] = n.description
    return out


@attrs.frozen
class Edge:
    """An edge ``from_node.from_port → to_node.to_port``; ``bind`` builds the
    destination contract (field → instruction); ``disposition`` exactly when
    ``to_node`` is a failed End."""

    id: str
    from_node: str
    from_port: str
    to_node: str
    to_port: str
    bind: dict[str, Instr]
    scope: tuple[ScopeRef, ...]
    effects: EdgeEffects = EdgeEffects()
    disposition: Disposition | None = None
    label: str | None = None

    @property
    def reads(self) -> tuple[str, ...]:
        return self.effects.reads


def edge_from_json(e: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> Edge:
    """Edge JSON (validated) → :class:`Edge` (``memo`` as in :func:`contract_from_json`)."""
    d = e.get("disposition")
    f, t = e["from"], e["to"]
    return Edge(e["id"], f["node"], f["port"], t["node"], t["port"], _bind_from(e["bind"], memo),
                _scope_from(e["scope"], memo), _effects_from(EdgeEffects, (tuple(e["effects"]["reads"]),), memo),
                None if d is None else _disp_from(d, memo), e.get("label"))


def edge_to_json(e: Edge, memo: dict[int, Any] | None = None) -> dict[str, Any]:
    """:class:`Edge` → wire JSON (``memo`` as in :func:`instr_to_json`)."""
    if memo is None:
        memo = {}
    get = memo.get
    eff = e.effects
    effects = get(id(eff))
    if effects is None:
        effects = memo[id(eff)] = {"reads": list(eff.reads)}
    out: dict[str, Any] = {
        "id": e.id,
        "from": {"node": e.from_node, "port": e.from_port},
        "to": {"node": e.to_node, "port": e.to_port},
        "bind": _bind_to(e.bind, memo) if e.bind else {},
        "scope": get(id(e.scope)) or _scope_to(e.scope, memo),
        "effects": effects,
    }
    if e.disposition is not None:
        out["disposition"] = _disp_to(e.disposition, memo)
    if e.label is not None:
        out["label"] = e.label
    return out


# ---------------------------------------------------------------------------
# Plan and artifact
# ---------------------------------------------------------------------------

@attrs.frozen
class Entry:
    """The entry node and the bindings building its activation input."""

    node: str
    bind: dict[str, Instr]


@attrs.frozen(slots=False)
class Plan:
    """The plan: contracts, entry, nodes and edges (sorted by id), scope
    declarations (sorted by owner)."""

    input: dict[str, FieldSchema]
    output: dict[str, FieldSchema]
    state: dict[str, FieldSchema]
    entry: Entry
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    scopes: tuple[ScopeDecl, ...] = ()

    @functools.cached_property
    def nodes_by_id(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}

    @functools.cached_property
    def edges_by_id(self) -> dict[str, Edge]:
        return {e.id: e for e in self.edges}

    @functools.cached_property
    def scopes_by_owner(self) -> dict[str, ScopeDecl]:
        return {s.owner: s for s in self.scopes}

    def node(self, node_id: str) -> Node:
        """Node ``node_id``; ``KeyError`` when absent."""
        return self.nodes_by_id[node_id]

    def edge(self, edge_id: str) -> Edge:
        """Edge ``edge_id``; ``KeyError`` when absent."""
        return self.edges_by_id[edge_id]

    def scope_decl(self, owner: str) -> ScopeDecl:
        """The scope declaration of ``owner``; ``KeyError`` when absent."""
        return self.scopes_by_owner[owner]


def plan_from_json(p: Mapping[str, Any]) -> Plan:
    """Plan JSON (validated) → :class:`Plan`.  Equal FieldSchemas, contracts,
    scope stacks, effects and dispositions are one object each (one memo per
    call), as in a lowered plan: the model is read-only data."""
    memo: dict[Any, Any] = {}
    return Plan(
        contract_from_json(p["input"], memo), contract_from_json(p["output"], memo),
        contract_from_json(p["state"], memo), Entry(p["entry"]["node"], _bind_from(p["entry"]["bind"], memo)),
        tuple([node_from_json(n, memo) for n in p["nodes"]]), tuple([edge_from_json(e, memo) for e in p["edges"]]),
        tuple([_decl_from(s) for s in p["scopes"]]))


def plan_to_json(p: Plan) -> dict[str, Any]:
    """:class:`Plan` → wire JSON.  Objects shared in the model (contracts,
    FieldSchemas, leaf instructions) are encoded once and their JSON shared
    (one memo per call): the result is read-only data."""
    memo: dict[int, Any] = {}
    return {
        "input": contract_to_json(p.input, memo),
        "output": contract_to_json(p.output, memo),
        "state": contract_to_json(p.state, memo),
        "entry": {"node": p.entry.node, "bind": _bind_to(p.entry.bind, memo)},
        "nodes": [node_to_json(n, memo) for n in p.nodes],
        "edges": [edge_to_json(e, memo) for e in p.edges],
        "scopes": [_decl_to(s) for s in p.scopes],
    }


@attrs.frozen(slots=False)
class Artifact:
    """A decoded (or freshly compiled) artifact ``loop.plan.artifact/v<version>``.

    * ``version`` — N (the envelope's ``artifactVersion`` and
      ``compilerVersion`` both carry it);
    * ``source_version`` — ``loop.plan/v1``;
    * ``digest`` — ``sha256:<64 hex>`` semantic digest as written;
    * ``plan`` — the typed :class:`Plan`.

    :meth:`to_json` / :meth:`to_bytes` encode it (cached per instance).
    """

    version: int
    digest: str
    plan: Plan
    source_version: str = "loop.plan/v1"

    @property
    def artifact_version(self) -> str:
        return f"loop.plan.artifact/v{self.version}"

    @property
    def compiler_version(self) -> str:
        return f"loop.plan.compiler/v{self.version}"

    @functools.cached_property
    def _json(self) -> dict[str, Any]:
        return to_json(self)

    def to_json(self) -> dict[str, Any]:
        """The wire JSON object (:func:`to_json`; cached, treat as read-only)."""
        return self._json

    @property
    def data(self) -> dict[str, Any]:
        """Alias of :meth:`to_json` (the pre-typed-model ``Artifact.data``)."""
        return self._json

    @functools.cached_property
    def _bytes(self) -> bytes:
        return encode(self)

    def to_bytes(self) -> bytes:
        """Canonical RFC 8785 bytes (:func:`encode`; cached)."""
        return self._bytes

    def pretty(self) -> str:
        """Review form: sorted keys, indent 2, trailing newline."""
        from loopc.ir.canonical import pretty_text

        return pretty_text(self._json)

    def recompute_digest(self) -> str:
        """The semantic digest recomputed from the content."""
        from loopc.ir.canonical import text_bytes
        from loopc.ir.digest import digest_of_canonical

        return digest_of_canonical(text_bytes(encode_plan(self.plan)[1]))

    @property
    def nodes(self) -> tuple[Node, ...]:
        """``plan.nodes`` (sorted by id)."""
        return self.plan.nodes

    @property
    def edges(self) -> tuple[Edge, ...]:
        """``plan.edges`` (sorted by id)."""
        return self.plan.edges

    def node(self, node_id: str) -> Node:
        """Node ``node_id``; ``KeyError`` when absent."""
        return self.plan.node(node_id)

    def edge(self, edge_id: str) -> Edge:
        """Edge ``edge_id``; ``KeyError`` when absent."""
        return self.plan.edge(edge_id)

    def instrs(self) -> Iterator[tuple[str, Instr]]:
        """``(JSON pointer, instruction)`` of every instruction tree: entry
        bindings, node configs (node order), edge binds (edge order)."""
        return iter_instrs(self.plan)


def iter_instrs(plan: Plan) -> Iterator[tuple[str, Instr]]:
    """``(JSON pointer, instruction root)`` for every instruction tree of ``plan``."""
    for k, x in plan.entry.bind.items():
        yield f"/plan/entry/bind/{_esc(k)}", x
    for i, n in enumerate(plan.nodes):
        for suffix, x in _config_instrs(n.config):
            yield f"/plan/nodes/{i}/config{suffix}", x
    for i, e in enumerate(plan.edges):
        for k, x in e.bind.items():
            yield f"/plan/edges/{i}/bind/{_esc(k)}", x


def instr_roots(plan: Plan) -> Iterator[tuple[str, str, Instr]]:
    """``(kind, id, instruction root)`` for every instruction tree of
    ``plan``, in :func:`iter_instrs` order: ``("node", entry id, x)`` for the
    entry bindings, ``("node", node id, x)`` for node configs, ``("edge",
    edge id, x)`` for edge binds (no pointers are built)."""
    entry = plan.entry.node
    for x in plan.entry.bind.values():
        yield "node", entry, x
    for n in plan.nodes:
        for _, x in _config_instrs(n.config, False):
            yield "node", n.id, x
    for e in plan.edges:
        for x in e.bind.values():
            yield "edge", e.id, x


def from_json(value: Mapping[str, Any]) -> Artifact:
    """Validated artifact JSON → :class:`Artifact` (the strict decoder calls
    this after its checks; use :func:`loopc.ir.decode` for untrusted bytes)."""
    from loopc.ir.versions import parse_artifact_version

    version = parse_artifact_version(value["artifactVersion"])
    if version is None:
        raise ValueError(f"unknown artifactVersion {value['artifactVersion']!r}")
    return Artifact(version, value["digest"], plan_from_json(value["plan"]), value["sourceVersion"])


def to_json(art: Artifact) -> dict[str, Any]:
    """:class:`Artifact` → wire JSON object (docs/ir.md); its canonical
    bytes are :func:`encode`'s."""
    return {
        "artifactVersion": art.artifact_version,
        "compilerVersion": art.compiler_version,
        "sourceVersion": art.source_version,
        "digest": art.digest,
        "plan": plan_to_json(art.plan),
    }


def encode(art: Artifact) -> bytes:
    """The one encoder: canonical RFC 8785 bytes of ``art``
    (``canonical_bytes(to_json(art))``, written straight from the model by
    :func:`encode_plan`; always freshly encoded, never from a cache: the
    round-trip tests use this).  Raises
    :class:`~loopc.ir.canonical.CanonicalizationError` for a value RFC 8785
    cannot represent."""
    from loopc.ir.canonical import text_bytes

    return text_bytes(envelope_text(art.version, art.digest, art.source_version, encode_plan(art.plan)[0]))


# ---------------------------------------------------------------------------
# The canonical encoder: model -> RFC 8785 text of the plan and of its
# semantic projection, without building the JSON tree
# ---------------------------------------------------------------------------

_q = json.encoder.encode_basestring  # a JSON string as RFC 8785 writes it (no ASCII escaping)
_MAX_SAFE = 2**53 - 1


def _utf16(k: str) -> bytes:
    return k.encode("utf-16-be")


def _keys(d: Mapping[str, Any]) -> list[str]:
    """``d``'s keys in RFC 8785 order (UTF-16 code units; code points when
    every key is in the Basic Multilingual Plane)."""
    ks = sorted(d)
    for k in ks:
        if not k.isascii() and max(k) > "\uffff":
            return sorted(ks, key=_utf16)
    return ks


def _scalar(v: Any) -> tuple[str, int]:
    """Canonical text and nesting depth of a JSON value."""
    t = type(v)
    if t is str:
        return _q(v), 0
    if t is bool:
        return ("true" if v else "false"), 0
    if v is None:
        return "null", 0
    if t is int and -_MAX_SAFE <= v <= _MAX_SAFE:
        return str(v), 0
    from loopc.ir.canonical import value_text

    return value_text(v)


def _strs(xs: Any) -> str:
    return "[" + ",".join([_q(x) for x in xs]) + "]"


#: a memo of one encoding: object id -> its text(s) and depth (the model outlives it)
_Memo = dict

#: what the semantic projection leaves out (:mod:`loopc.ir.digest`: annotations
#: of FieldSchemas, nodes, edges; opcode -> config contract), read on first use
_PROJECTION: Any = ()


def _projection_rules() -> None:
    global _PROJECTION
    if not _PROJECTION:
        from loopc.ir import digest as D

        _PROJECTION = (D.FIELD_ANNOTATIONS, D.NODE_ANNOTATIONS, D.EDGE_ANNOTATIONS, D.CONFIG_CONTRACTS)


def _field_text(fs: FieldSchema, memo: _Memo) -> tuple[str, str, int]:
    """``(text, projection text, depth)`` of a FieldSchema (members as
    :func:`field_to_json` writes them, in key order; iterative over ``items``)."""
    got = memo.get(id(fs))
    if got is not None:
        return got  # type: ignore[no-any-return]
    annotations = _PROJECTION[0]
    chain = []
    cur: FieldSchema | None = fs
    while cur is not None and id(cur) not in memo:
        chain.append(cur)
        cur = cur.items
    inner = memo[id(cur)] if cur is not None else None
    for f in reversed(chain):
        depth = 1
        default = desc = items = items_p = label = values = ""
        if f.default is not NO_DEFAULT:
            t, d = _scalar(f.default)
            default = f'"default":{t},'
            depth = max(depth, d + 1)
        if f.description is not None:
            desc = f'"description":{_q(f.description)},'
        if f.items is not None:
            assert inner is not None  # f.items is cur (memoized) or the previous chain step
            items = f'"items":{inner[0]},'
            items_p = items if inner[1] is inner[0] else f'"items":{inner[1]},'
            depth = max(depth, inner[2] + 1)
        if f.label is not None:
            label = f'"label":{_q(f.label)},'
        if f.values is not None:
            values = f',"values":{_strs(f.values)}'
            depth = max(depth, 2)
        tail = f'"required":{"true" if f.required else "false"},"type":{_q(f.type)}{values}}}'
        text = f"{{{default}{desc}{items}{label}{tail}"
        desc_p = "" if "description" in annotations else desc
        label_p = "" if "label" in annotations else label
        if desc_p is desc and label_p is label and items_p is items:
            proj = text
        else:
            proj = f"{{{default}{desc_p}{items_p}{label_p}{tail}"
        inner = memo[id(f)] = (text, proj, depth)
    return inner  # type: ignore[return-value]


def _contract_text(c: Mapping[str, FieldSchema], memo: _Memo) -> tuple[str, str, int]:
    """``(text, projection text, depth)`` of a contract."""
    got = memo.get(id(c))
    if got is not None:
        return got  # type: ignore[no-any-return]
    full = []
    proj = []
    depth = 1
    same = True
    for k in _keys(c):
        f, p, d = _field_text(c[k], memo)
        key = _q(k) + ":"
        full.append(key + f)
        proj.append(key + p)
        same = same and f is p
        if d >= depth:
            depth = d + 1
    text = "{" + ",".join(full) + "}"
    got = memo[id(c)] = (text, text if same else "{" + ",".join(proj) + "}", depth)
    return got  # type: ignore[no-any-return]


def _instr_text(instr: Instr, memo: _Memo) -> tuple[str, int]:
    """``(text, depth)`` of an instruction tree.  Iterative (post-order)."""
    got = memo.get(id(instr))
    if got is not None:
        return got  # type: ignore[no-any-return]
    out: list[tuple[str, int]] = []
    stack: list[tuple[Any, bool]] = [(instr, False)]
    pop = stack.pop
    push = stack.append
    while stack:
        i, built = pop()
        if not built:
            got = memo.get(id(i))
            if got is None:
                cls = i.__class__
                if cls is Lit:
                    t, d = _scalar(i.value)
                    got = memo[id(i)] = ('["lit",' + _q(i.type.wire) + "," + t + "]", d + 1)
                elif cls is Ref:
                    got = memo[id(i)] = ('["ref",' + ",".join([_q(x) for x in (i.type.wire, i.root, *i.path)]) + "]", 1)
                else:
                    push((i, True))
                    for k in reversed(i.children):
                        push((k, False))
                    continue
            out.append(got)
            continue
        n = len(i.children)
        kids = out[len(out) - n:]
        del out[len(out) - n:]
        parts = [_q(i.op), _q(i.type.wire)]
        if i.__class__ is MakeObject:
            for k, (t, _) in zip(i.keys, kids):
                parts.append(_q(k))
                parts.append(t)
        else:
            parts.extend([t for t, _ in kids])
        got = memo[id(i)] = ("[" + ",".join(parts) + "]", 1 + max([0] + [d for _, d in kids]))
        out.append(got)
    return out[0]


def _bind_text(b: Mapping[str, Instr], memo: _Memo) -> tuple[str, int]:
    if not b:
        return "{}", 1
    parts = []
    depth = 1
    get = memo.get
    for k in _keys(b):
        x = b[k]
        t, d = get(id(x)) or _instr_text(x, memo)
        parts.append(_q(k) + ":" + t)
        if d >= depth:
            depth = d + 1
    return "{" + ",".join(parts) + "}", depth


def _scope_text(stack: tuple[ScopeRef, ...], memo: _Memo) -> tuple[str, int]:
    got = memo.get(id(stack))
    if got is None:
        parts = [("{" if s.branch is None else '{"branch":' + _q(s.branch) + ",")
                 + '"kind":' + _q(s.kind) + ',"owner":' + _q(s.owner) + "}" for s in stack]
        got = memo[id(stack)] = ("[" + ",".join(parts) + "]", 2 if parts else 1)
    return got  # type: ignore[no-any-return]


def _disp_text(d: Disposition, memo: _Memo) -> str:
    got = memo.get(id(d))
    if got is None:
        members = {"action": d.action}
        if d.status is not None:
            members["status"] = d.status
        for k in DISPOSITION_MEMBERS.get(d.action, ()):
            members[k] = getattr(d, k)
        got = memo[id(d)] = "{" + ",".join([f'"{k}":' + _scalar(members[k])[0] for k in sorted(members)]) + "}"
    return got  # type: ignore[no-any-return]


def _config_text(cfg: Config, memo: _Memo) -> tuple[str, str, int]:
    """``(text, projection text, depth)`` of a node config (members as
    :func:`config_to_json` writes them, in key order)."""
    projected = _PROJECTION[3].get(cfg.OP)
    full = []
    proj = []
    depth = 1
    for name, wire, codec, required in _CONFIG_FIELDS_BY_WIRE[cfg.OP]:
        v = getattr(cfg, name)
        if not required and (v is None or v is False):
            continue
        p = None
        d = 0
        if codec == "str" or codec == "int" or codec == "flag":
            t, d = _scalar(v)
        elif codec == "instr":
            t, d = _instr_text(v, memo)
        elif codec == "bind":
            t, d = _bind_text(v, memo)
        elif codec == "contract":
            t, p, d = _contract_text(v, memo)
            if wire != projected:
                p = None
        elif codec == "strs":
            t, d = _strs(v), 1
        elif codec == "cases":
            parts = []
            d = 1
            for c in v:
                w, wd = _instr_text(c.when, memo)
                parts.append('{"port":' + _q(c.port) + ',"when":' + w + "}")
                d = max(d, wd + 2)
            t = "[" + ",".join(parts) + "]"
        elif codec == "work_scope":
            t, d = '{"mode":' + _q(v.mode), 1
            if v.scope is not None:
                s, sd = _instr_text(v.scope, memo)
                t, d = t + ',"scope":' + s, sd + 1
            t += "}"
        elif codec == "related_scopes":
            t, d = '{"form":' + _q(v.form), 1
            if v.items is not None:
                items = [_instr_text(x, memo) for x in v.items]
                t += ',"items":[' + ",".join([s for s, _ in items]) + "]"
                d = max([2] + [sd + 2 for _, sd in items])
            if v.value is not None:
                s, sd = _instr_text(v.value, memo)
                t += ',"value":' + s
                d = max(d, sd + 1)
            t += "}"
        elif codec == "work_items":
            s, sd = _instr_text(v.allowed_responders, memo)
            t, d = '{"allowedResponders":' + s + "}", sd + 1
        else:  # pragma: no cover - every codec of _CODECS is handled above
            raise TypeError(f"no canonical text for codec {codec!r}")
        key = f'"{wire}":'
        full.append(key + t)
        proj.append(key + (t if p is None else p))
        if d >= depth:
            depth = d + 1
    text = "{" + ",".join(full) + "}"
    return text, (text if projected is None else "{" + ",".join(proj) + "}"), depth


def _node_text(n: Node, memo: _Memo) -> tuple[str, str, int]:
    """``(text, projection text, depth)`` of a node (members as
    :func:`node_to_json` writes them, in key order)."""
    get = memo.get
    config, config_p, depth = _config_text(n.config, memo)
    eff = n.effects
    effects = get(id(eff))
    if effects is None:
        effects = memo[id(eff)] = (f'{{"reads":{_strs(eff.reads)},"watches":{_strs(eff.watches)},'
                                   f'"writes":{_strs(eff.writes)}}}')
    inp, inp_p, d = get(id(n.input)) or _contract_text(n.input, memo)
    depth = max(depth, d, 2)
    src = []
    src_p = []
    pd = 1  # depth of the deeper of the source and target lists
    for p in n.source_ports:
        edge = "" if p.edge is None else f'"edge":{_q(p.edge)},'
        if p.implicit is not None:
            edge += f'"implicit":{_disp_text(p.implicit, memo)},'
            pd = max(pd, 3)
        if p.output is None:
            t = f'{{{edge}"name":{_q(p.name)},"output":null}}'
            src.append(t)
            src_p.append(t)
            pd = max(pd, 2)
        else:
            o, o_p, od = get(id(p.output)) or _contract_text(p.output, memo)
            head = f'{{{edge}"name":{_q(p.name)},"output":'
            t = f"{head}{o}}}"
            src.append(t)
            src_p.append(t if o_p is o else f"{head}{o_p}}}")
            pd = max(pd, od + 2)
    if n.target_ports:
        pd = max(pd, 3)
    scope, sd = get(id(n.scope)) or _scope_text(n.scope, memo)
    depth = max(depth, pd + 1, sd) + 1
    desc = "" if n.description is None else f',"description":{_q(n.description)}'
    label = "" if n.label is None else f',"label":{_q(n.label)}'
    mid = f',"effects":{effects},"id":{_q(n.id)},"input":'
    ports = f',"op":{_q(n.config.OP)},"ports":{{"source":['
    target = ",".join([f'{{"edges":{_strs(t.edges)},"name":{_q(t.name)}}}' for t in n.target_ports])
    retry = ""
    if n.retry is not None:
        retry = (f',"retry":{{"backoff":{_scalar(n.retry.backoff)[0]},'
                 f'"maxAttempts":{_scalar(n.retry.max_attempts)[0]}}}')
    tail = f'],"target":[{target}]}}{retry},"scope":{scope}}}'
    source = ",".join(src)
    text = f'{{"config":{config}{desc}{mid}{inp}{label}{ports}{source}{tail}'
    ann = _PROJECTION[1]
    desc_p = "" if "description" in ann else desc
    label_p = "" if "label" in ann else label
    if config is config_p and inp is inp_p and desc is desc_p and label is label_p and src == src_p:
        return text, text, depth
    source = ",".join(src_p)
    return text, f'{{"config":{config_p}{desc_p}{mid}{inp_p}{label_p}{ports}{source}{tail}', depth


def _edge_text(e: Edge, memo: _Memo) -> tuple[str, str, int]:
    """``(text, projection text, depth)`` of an edge (members as
    :func:`edge_to_json` writes them, in key order)."""
    get = memo.get
    bind, depth = _bind_text(e.bind, memo)
    eff = e.effects
    effects = get(id(eff))
    if effects is None:
        effects = memo[id(eff)] = f'{{"reads":{_strs(eff.reads)}}}'
    scope, sd = get(id(e.scope)) or _scope_text(e.scope, memo)
    depth = max(depth, sd, 2) + 1
    disp = "" if e.disposition is None else ',"disposition":' + _disp_text(e.disposition, memo)
    head = (f'{{"bind":{bind}{disp},"effects":{effects},"from":{{"node":{_q(e.from_node)},"port":'
            f'{_q(e.from_port)}}},"id":{_q(e.id)}')
    tail = f',"scope":{scope},"to":{{"node":{_q(e.to_node)},"port":{_q(e.to_port)}}}}}'
    if e.label is None:
        text = head + tail
        return text, text, depth
    text = f'{head},"label":{_q(e.label)}{tail}'
    return text, head + tail if "label" in _PROJECTION[2] else text, depth


def _decl_text(s: ScopeDecl) -> tuple[str, int]:
    t = "{"
    if s.branches is not None:
        t += '"branches":' + _strs(s.branches) + ","
    if s.kind != "loop":
        t += '"join":' + _scalar(s.join)[0] + ","
    return t + '"kind":' + _q(s.kind) + ',"owner":' + _q(s.owner) + "}", 1 if s.branches is None else 2


def _list_depth(depths: list[int]) -> int:
    return 1 + max(depths) if depths else 1


def encode_plan(plan: Plan) -> tuple[str, str, int]:
    """The one encoder's core: ``(text, projection, depth)`` — the RFC 8785
    canonical text of ``plan``'s wire JSON (what :func:`plan_to_json`
    gives), that of its semantic projection (:func:`loopc.ir.digest.semantic_projection`
    of it, which the digest hashes) and its nesting depth
    (:func:`loopc.ir.canonical.scan`), straight from the model: objects
    shared in the model are encoded once.  Raises
    :class:`~loopc.ir.canonical.CanonicalizationError` as
    :func:`~loopc.ir.canonical.canonical_bytes` does (for a literal value)."""
    _projection_rules()
    memo: _Memo = {}
    nodes = [_node_text(n, memo) for n in plan.nodes]
    edges = [_edge_text(e, memo) for e in plan.edges]
    inp = _contract_text(plan.input, memo)
    out = _contract_text(plan.output, memo)
    state = _contract_text(plan.state, memo)
    bind, bd = _bind_text(plan.entry.bind, memo)
    entry = ',"entry":{"bind":' + bind + ',"node":' + _q(plan.entry.node) + "}"
    decls = [_decl_text(s) for s in plan.scopes]
    scopes = ',"scopes":[' + ",".join([t for t, _ in decls]) + "]"
    depth = 1 + max(_list_depth([d for _, _, d in edges]), bd + 1, inp[2], _list_depth([d for _, _, d in nodes]),
                    out[2], _list_depth([d for _, d in decls]), state[2])
    text = ('{"edges":[' + ",".join([t for t, _, _ in edges]) + "]" + entry + ',"input":' + inp[0]
            + ',"nodes":[' + ",".join([t for t, _, _ in nodes]) + '],"output":' + out[0] + scopes
            + ',"state":' + state[0] + "}")
    proj = ('{"edges":[' + ",".join([p for _, p, _ in edges]) + "]" + entry + ',"input":' + inp[1]
            + ',"nodes":[' + ",".join([p for _, p, _ in nodes]) + '],"output":' + out[1] + scopes
            + ',"state":' + state[1] + "}")
    return text, proj, depth


def envelope_text(version: int, digest: str, source_version: str, plan_text: str) -> str:
    """Canonical text of an artifact from its envelope and :func:`encode_plan`'s text."""
    from loopc.ir.versions import artifact_version, compiler_version

    return ('{"artifactVersion":' + _q(artifact_version(version)) + ',"compilerVersion":'
            + _q(compiler_version(version)) + ',"digest":' + _q(digest) + ',"plan":' + plan_text
            + ',"sourceVersion":' + _q(source_version) + "}")


# ---------------------------------------------------------------------------
# Pre-typed-model names (kept so older callers keep working)
# ---------------------------------------------------------------------------

FieldView = FieldSchema
PortView = SourcePort
TargetPortView = TargetPort
ScopeRefView = ScopeRef
RetryView = Retry
NodeView = Node
EdgeView = Edge
field_view = field_from_json
contract_view = contract_from_json
node_view = node_from_json
edge_view = edge_from_json
