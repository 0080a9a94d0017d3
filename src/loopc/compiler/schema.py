"""Schema pass: positioned YAML tree → typed :class:`~loopc.compiler.model.Plan`
(pass 2 and the shape half of pass 3, docs/language.md#compiler-passes; the
rules of docs/reference.md#document, docs/reference.md#contracts,
docs/reference.md#nodes, docs/reference.md#edges and docs/reference.md#wire-forms).

What it checks (LP2xxx, registry in :mod:`loopc.codes.schema`):

* the document header values and its closed set of keys, with dedicated
  diagnostics for the legacy shapes of docs/reference.md#legacy-shapes;
* every mapping is closed: an unknown key is reported on the key with a
  "did you mean" suggestion and a rename :class:`~loopc.diagnostics.Fix`;
* FieldSchema contracts (types, ``values``/``items``, defaults assignable
  without coercion via :mod:`loopc.compiler.wireforms`, state defaults,
  reserved callback fields, the 2,048 declared-field budget);
* node and edge shapes: ids, the discriminated config key, per-type shape
  and bounds rules, literal-only keys, ``retry``;
* ValueExpr construction (docs/reference.md#values) with the literal budgets of
  docs/reference.md#budgets
  (nesting 32, 8,192 values) and the graph budgets (512 nodes, 2,048 edges).

What it does not check: expression syntax and typing, reference roots,
symbol resolution, ports versus edges, connectivity and scopes — later
passes own those and work only on what this pass accepted.  A node or edge
with any schema error is reported once, listed in ``Plan.malformed_nodes``
/ ``malformed_edges``, tainted on the reporter and left out of
``Plan.nodes``/``Plan.edges`` so nothing cascades; a misspelt key with a
suggestion taints the declaration it stands for, and a dropped contract
field or rejected section is tainted too (docs/architecture.md#one-defect-one-diagnostic).

Cost is linear in the document: one walk, dict lookups per key, precompiled
regexes, ``difflib`` only for keys that are already wrong.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterable

import attrs

from loopc import kinds
from loopc.codes.sections import LOCATED
from loopc.compiler.spelling import bool_fix, enum_fix, suggest
from loopc.compiler.model import (
    CONFIG_CLASSES, FIELD_TYPES, MISSING, NODE_CONFIG_KEYS, RETRY_CAPABLE, Edge, Expr, FieldSchema, ListValue,
    Fork, Literal, MapValue, Node, Plan, Ref, Retry, Switch, SwitchCase, Template, ValueExpr,
)
from loopc.compiler.ports import source_ports, target_ports
from loopc.compiler.report import Entity, Reporter, decl, decl_key, edge_entity, node_entity, presence
from loopc.limits import number_text_problem, underflow_problem
from loopc.compiler.wireforms import (
    ERROR_CODE_RE, IDENT_RE, conform, duration_error, is_duration, number_problem,
)
from loopc.compiler.yamlnodes import YDocument, YMap, YNode, YScalar, YSeq, span_in_scalar
from loopc.diagnostics import Applicability, Fix, Span, TextEdit
from loopc.kinds import send_message as _send_message


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


API_VERSION = "loop.plan/v1"
KIND = "PlanVersion"
LEGACY_API_VERSION = "loop.workflow/v1"
LEGACY_KIND = "Workflow"

# Budgets.
MAX_NODES = 512
MAX_EDGES = 2048
MAX_SCHEMA_FIELDS = 2048
MAX_RELATED_SCOPES = kinds.MAX_RELATED_SCOPES
MAX_LITERAL_NESTING = 32
MAX_LITERAL_VALUES = 8192
# Bounds of literal-only integers: declared once, in the node-kind registry.
MAX_ATTEMPTS = kinds.MAX_ATTEMPTS
MAX_CONCURRENCY = kinds.MAX_CONCURRENCY
MAX_ITERATIONS = kinds.MAX_ITERATIONS

ROOT_KEYS = frozenset(("apiVersion", "kind", "input", "output", "state", "entry", "nodes", "edges"))
FIELD_KEYS = frozenset(("type", "required", "default", "values", "items", "label", "description"))
NODE_KEYS = ("id", "type", "label", "description", "input", "retry")
LEGACY_NODE_KEYS = frozenset(("next", "default", "onApprove", "onReject", "onTimeout"))
CONFIG_KEY_TYPES = {v: k for k, v in NODE_CONFIG_KEYS.items()}


def section_at(pointer: str) -> str | None:
    """The reference section of the mapping at JSON ``pointer``, for a
    shape finding there (a missing or unknown key, a wrong shape —
    :data:`loopc.codes.sections.LOCATED`): a node's configuration is its
    kind's section (``/nodes/2/join`` → ``node-join``), its ``retry`` and
    ``input`` are ``retry`` and ``contracts``, the Plan input/output/state
    contracts are ``contracts``, an edge is ``edges``; ``None`` elsewhere
    (the code's own section)."""
    parts = pointer.split("/")[1:]
    if len(parts) >= 3 and parts[0] == "nodes":
        kind = CONFIG_KEY_TYPES.get(parts[2])
        if kind is not None:
            return "node-" + kind.replace("_", "-")
        return {"retry": "retry", "input": "contracts"}.get(parts[2])
    if parts and parts[0] in ("input", "output", "state"):
        return "contracts"
    if len(parts) >= 2 and parts[0] == "edges":
        return "edges"
    return None
EDGE_KEYS = frozenset(("id", "from", "to", "bind", "label"))
FROM_KEYS = frozenset(("node", "port"))
RETRY_KEYS = frozenset(("maxAttempts", "backoff"))
# Closed key sets and literal choices of each node config (loopc.kinds).
_K = kinds.tables().kinds
SEND_KEYS = _K["send_message"].source_keys
CALLBACK_ONLY = _send_message.CALLBACK_ONLY
WORK_ITEMS_KEYS = frozenset(("allowedResponders",))
SET_VARIABLE_KEYS = _K["set_variable"].source_keys
WAIT_KEYS = _K["wait"].source_keys
APPROVAL_KEYS = _K["request_approval"].source_keys
SWITCH_KEYS = _K["switch"].source_keys
CASE_KEYS = frozenset(("port", "when"))
FORK_KEYS = _K["fork"].source_keys
JOIN_KEYS = _K["join"].source_keys
FAN_OUT_KEYS = _K["fan_out"].source_keys
LOOP_KEYS = _K["loop"].source_keys
END_KEYS = _K["end"].source_keys
_COMPLETIONS = _K["send_message"].choices("completion")
_SWITCH_MODES = _K["switch"].choices("mode")
_JOIN_MODES = _K["join"].choices("mode")
_FAILURE_MODES = _K["fan_out"].choices("failureMode")
_LOOP_MODES = _K["loop"].choices("mode")
_END_STATUSES = _K["end"].choices("status")
_RETRY_NAMES = [t for t in _K if t in RETRY_CAPABLE]
_RETRY_TYPES = ", ".join(_RETRY_NAMES[:-1]) + " and " + _RETRY_NAMES[-1]
#: Compiler-owned callback outputs that a ``callbackOutput`` may not declare.
RESERVED_CALLBACK_FIELDS = frozenset(("workScope", "workItems"))
NO_DEFAULT_TYPES = frozenset(("work_items", "responder"))
_FIELD_TYPE_SET = frozenset(FIELD_TYPES)
_VE_KEYS = ("ref", "expr", "literal")

# ``str.isspace`` and the regex ``\s`` (str patterns) are the same predicate
_SPACE_RE = re.compile(r"\s")


def build_plan(doc: YDocument, reporter: Reporter) -> Plan | None:
    """Pass 2: build the typed model of ``doc`` (docs/language.md#schema).

    Reports LP2xxx diagnostics on ``reporter``.  Returns ``None`` only when
    the document cannot be modelled at all (root not a mapping, ``nodes``
    missing or not a list); otherwise a :class:`Plan` holding the well-formed
    nodes and edges, with the ids of rejected ones in ``malformed_nodes`` /
    ``malformed_edges``.  A missing or non-string ``entry`` becomes ``""``
    (already reported).  Never raises on bad input.
    """
    root = doc.root
    if root is None:
        return None
    return _Builder(reporter).plan(root)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

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


def _edge_references(seq: YNode | None) -> dict[str, list[tuple[str, str | None]]]:
    """Node names the authored edges use, in order, each with its uses:
    ``("from" | "to", port or None)``."""
    out: dict[str, list[tuple[str, str | None]]] = {}
    if not isinstance(seq, YSeq):
        return out
    for m in seq.items:
        if not isinstance(m, YMap):
            continue
        for side in ("from", "to"):
            end = m.get(side)
            if not isinstance(end, YMap):
                continue
            name, port = end.get("node"), end.get("port")
            if isinstance(name, YScalar) and name.value.__class__ is str:
                out.setdefault(name.value, []).append(
                    (side, port.value if isinstance(port, YScalar) and port.value.__class__ is str else None))
    return out


def _ports_fit(node: Node, uses: list[tuple[str, str | None]]) -> bool:
    """Could the edges' ``uses`` of a name be edges of ``node``?"""
    for side, port in uses:
        if side == "from" and port is not None and port not in source_ports(node):
            return False
        if side == "to" and (port or "in") not in target_ports(node):
            return False
    return True


def _config_fits(kind: kinds.Kind, body: YNode | None, node: YMap) -> bool:
    """Do the keys of config mapping ``body`` make a config of ``kind``: only
    its keys, its required ones present, one of each ``oneOf`` group of its
    source rules (wait: ``condition`` or ``duration``), and ``node``'s
    ``retry`` only on a kind that may retry?  Keys only: the values are
    checked once the node is configured as that kind."""
    if not isinstance(body, YMap):
        return False
    keys = set(body.keys())
    if not keys <= kind.source_keys or not set(kind.required_source_keys) <= keys:
        return False
    one_of = kind.source_rules.get("oneOf")
    if one_of and sum(set(g.get("required", ())) <= keys for g in one_of) != 1:
        return False
    return node.get("retry") is None or kind.name in RETRY_CAPABLE


def _later_key(m: YMap, a: str, b: str) -> YScalar:
    """The key node of ``a`` or ``b`` (both present in ``m``) written later
    (``a``'s on a tie)."""
    ka, kb = m.key_node(a), m.key_node(b)
    assert ka is not None and kb is not None
    return kb if kb.start > ka.start else ka


def _lacks(cfg: YNode | None, key: str) -> bool:
    """Is ``cfg`` a configuration mapping without ``key``, or empty (``null``:
    its keys were all dedented beside it)?"""
    if isinstance(cfg, YMap):
        return key not in cfg
    return isinstance(cfg, YScalar) and cfg.value is None and cfg.style == "" and cfg.raw == ""


def _rename_fix(at: YNode, new: str, what: str = "rename to") -> Fix:
    return Fix(f"{what} '{new}'", (TextEdit(at.span, new),), Applicability.UNSAFE)


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


#: The port that replaces each legacy node-level pointer (LP2010 messages).
_LEGACY_POINTER_PORTS = {
    "onApprove": "approved", "onReject": "rejected", "onTimeout": "timed_out",
    "next": "completed",
}


class _Builder:
    """One schema walk over a document; holds the reporter and counters."""

    def __init__(self, reporter: Reporter) -> None:
        self.r = reporter
        self.errs = 0
        self.fields = 0
        self.node: str | None = None
        self.edge: str | None = None
        self._count = 0
        self._deep = False
        #: ``mode: any`` fan-out joins: (node id, the mode value, fanOutId)
        self._any_joins: list[tuple[str | None, Any, str | None]] = []
        #: the authored edges' node references (:func:`_edge_references`), read on first use
        self._edge_refs: dict[str, list[tuple[str, str | None]]] | None = None
        #: while reading the nodes: the conforming spellings of ill-formed
        #: node ids the edges name, and the ids read so far
        self._meant_ids: set[str] = set()
        self._ids_seen: dict[str, YNode] = {}

    #: one builder method per node kind, named after it (loopc.kinds); the
    #: plain functions, called with the builder (bound methods kept on the
    #: instance would make a reference cycle)
    _config_builders: dict[str, Callable[..., Any]] = {}

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

    # -- contracts (docs/reference.md#contracts) ----------------------------

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

    # -- document (docs/reference.md#document) ------------------------------

    def plan(self, root: YNode) -> Plan | None:
        if not isinstance(root, YMap):
            self.err("LP2001", root, f"a plan document is a mapping starting with apiVersion and kind, not {_kind(root)}")
            return None
        m: YMap = root
        self.closed(m, ROOT_KEYS, "the plan document", self._root_special)
        if not self.legacy_header(m):
            self.header(m, "apiVersion", API_VERSION, LEGACY_API_VERSION, "LP2002", "LP2003")
            self.header(m, "kind", KIND, LEGACY_KIND, "LP2004", "LP2005")

        contracts: dict[str, dict[str, FieldSchema]] = {}
        for key in ("input", "output", "state"):
            cn = m.get(key)
            c = self.contract(cn, f"the plan {key}", state=key == "state") if cn is not None else None
            contracts[key] = c if c is not None else {}

        entry = ""
        en = m.get("entry")
        if en is None:
            self.missing(m, "entry", "the plan document", " (the id of the first node)")
        elif isinstance(en, YScalar) and en.value.__class__ is str and en.value:
            entry = en.value
        else:
            s = self.lit_scalar(en, "entry", "a node id string")
            if s is not None:
                self.shape(s, "'entry' must be a node id string")

        nn = m.get("nodes")
        if nn is None:
            self.missing(m, "nodes", "the plan document")
            return None
        if not isinstance(nn, YSeq):
            self.shape(nn, "'nodes' must be a list of nodes")
            return None
        nodes, bad_nodes = self.nodes(nn, m)

        edges: dict[str, Edge] = {}
        bad_edges: set[str] = set()
        ed = m.get("edges")
        if ed is not None:
            if not isinstance(ed, YSeq):
                self.shape(ed, "'edges' must be a list of edges (use [] for none)")
                self.r.taint(decl("/edges"))
            else:
                edges, bad_edges = self.edges(ed, m)

        self.r.taint(*map(node_entity, bad_nodes), *map(edge_entity, bad_edges))
        return Plan(
            contracts["input"], contracts["output"], contracts["state"], entry,
            nodes, edges, frozenset(bad_nodes), frozenset(bad_edges), m,
        )

    def _root_special(self, k: str, kn: YScalar, v: YNode) -> bool:
        if k in ("trigger", "triggers"):
            self.err("LP2008", kn, f"'{k}' is not part of plan source: schedules and triggers belong to "
                     "the Binding that starts the plan; remove it")
            return True
        if k == "inputs":
            root = kn.parent
            fix = None
            taints: list[Entity] = []
            if isinstance(root, YMap) and "input" not in root:
                fix = _rename_fix(kn, "input")
                taints.append(decl("/input"))  # it stands in for the Plan input
            self.err("LP2009", kn, "'inputs' is the legacy workflow key; the Plan input contract is "
                     "'input', a mapping of field name to FieldSchema", fix=fix, taints=taints)
            return True
        return False

    def legacy_header(self, m: YMap) -> bool:
        """Both header lines of a legacy workflow (``apiVersion:
        loop.workflow/v1`` and ``kind: Workflow``) are one defect: one LP2003
        at the API version, the kind as a related location, and one fix
        rewriting both lines (docs/reference.md#header).  Returns whether it
        reported."""
        api, kind = m.get("apiVersion"), m.get("kind")
        if not (isinstance(api, YScalar) and isinstance(kind, YScalar)
                and api.value == LEGACY_API_VERSION and kind.value == LEGACY_KIND):
            return False
        fix = Fix(f"replace with 'apiVersion: {API_VERSION}' and 'kind: {KIND}'",
                  (TextEdit(api.span, API_VERSION), TextEdit(kind.span, KIND)), Applicability.UNSAFE)
        self.err("LP2003", api, f"'apiVersion: {LEGACY_API_VERSION}' with 'kind: {LEGACY_KIND}' is the legacy "
                 f"workflow header; plans start with 'apiVersion: {API_VERSION}' and 'kind: {KIND}'",
                 related=[(f"the legacy kind '{LEGACY_KIND}' belongs to the same header", kind)], fix=fix)
        return True

    def header(self, m: YMap, key: str, want: str, legacy: str, code: str, legacy_code: str) -> None:
        v = m.get(key)
        if v is None:
            self.missing(m, key, "the plan document", f" (it must be '{key}: {want}')")
            return
        val = v.value if isinstance(v, YScalar) else None
        if val == want and val.__class__ is str:
            return
        fix = _rename_fix(v, want, "replace with")
        if val == legacy:
            what = "API version" if key == "apiVersion" else "kind"
            self.err(legacy_code, v, f"'{legacy}' is the legacy workflow {what}; plans use "
                     f"'{key}: {want}'", fix=fix)
            return
        shown = f"'{val}'" if val.__class__ is str else _kind(v)
        if key == "kind":
            # One document kind exists, so the replacement is no guess (an
            # apiVersion names a language version: that stays a person's call).
            fix = attrs.evolve(fix, applicability=Applicability.SAFE)
        self.err(code, v, f"'{key}' must be exactly '{want}', not {shown}", fix=fix)

    # -- nodes (docs/reference.md#nodes) -------------------------------------

    def nodes(self, seq: YSeq, root: YMap) -> tuple[dict[str, Node], set[str]]:
        items = seq.items
        if len(items) > MAX_NODES:
            self.err("LP2090", root.key_node("nodes"), f"the plan has {len(items):,} nodes; the limit is "
                     f"{MAX_NODES}")
        nodes: dict[str, Node] = {}
        bad: set[str] = set()
        first: dict[str, YNode] = {}
        dups: list[tuple[str, YNode, Node | None]] = []
        self._meant_ids, self._ids_seen = set(), first
        for item in items:
            self.node = None
            before = self.errs
            deferred = len(self._any_joins)
            nid, idn, node = self.node_(item)
            if nid is None:
                self.node = None
                continue
            if idn is None:  # the id a misspelt 'id' key gives: set aside, never a duplicate
                if nid not in first:
                    bad.add(nid)
                continue
            if nid in first:
                self.any_fan_out_joins(self._any_joins[deferred:], {}, bad)
                del self._any_joins[deferred:]
                dups.append((nid, idn, node))
                continue
            first[nid] = idn
            if node is None or self.errs != before:
                bad.add(nid)
            else:
                nodes[nid] = node
        self.any_fan_out_joins(self._any_joins, nodes, bad)
        bad.update(m for m in self._meant_ids if m not in first)
        self.duplicates(dups, first, root, bad)
        self.node = None
        return nodes, bad

    def any_fan_out_joins(self, joins: list[tuple[str | None, Any, str | None]],
                          nodes: dict[str, Node], bad: set[str]) -> None:
        """LP2061 for each ``mode: any`` join naming its owner with
        ``fanOutId``, unless that owner is a fork or an all_match switch: then
        the key is what is wrong (the analyzer's LP4311), and ``any`` is a
        mode that owner's join may have.  A join reported here is rejected."""
        for nid, mode_node, owner_id in joins:
            owner = nodes.get(owner_id) if owner_id is not None else None
            if owner is not None and (isinstance(owner.config, Fork) or (
                    isinstance(owner.config, Switch) and owner.config.mode == "all_match")):
                continue
            self.node = nid
            self.err("LP2061", mode_node, "a fan-out join waits for every item: use mode: all",
                     fix=_rename_fix(mode_node, "all", "replace with"))
            if nid is not None and nodes.pop(nid, None) is not None:
                bad.add(nid)

    def duplicates(self, dups: list[tuple[str, YNode, Node | None]], first: dict[str, YNode],
                   root: YMap, bad: set[str]) -> None:
        """LP2030 for each node whose id an earlier node already has (the
        first definition is used).  The duplicate is set aside under the id
        it most likely meant: the one name edges use that no node has (when
        exactly one fits, by count and by the ports the edges use).  That id
        is rejected with it (``malformed_nodes``, tainted), so the edges naming
        it are not dangling a second time (LP4002), and the fix renames the
        duplicate to it rather than wiring those edges to the first definition."""
        if not dups:
            return
        refs = _edge_references(root.get("edges"))
        unknown = [n for n in refs if n not in first]
        for nid, idn, node in dups:
            cands = [u for u in unknown if node is None or _ports_fit(node, refs[u])]
            meant = cands[0] if len(cands) == 1 else None
            self.node = nid
            if meant is None:
                self.err("LP2030", idn, f"duplicate node id '{nid}'; the first definition is used",
                         related=[("first defined here", first[nid])])
                continue
            unknown.remove(meant)
            bad.add(meant)
            self.err("LP2030", idn, f"duplicate node id '{nid}'; the first definition is used, and "
                     f"edges name '{meant}', which no node has: did you mean to call this node '{meant}'?",
                     related=[("first defined here", first[nid])], fix=_rename_fix(idn, meant),
                     taints=[node_entity(meant)])

    def _node_id_meant(self, m: YMap, idn: YScalar) -> str | None:
        """LP2014 for a node id that breaks the identifier rule when the
        edges name its conforming spelling (``legal-review`` → ``legal_review``:
        lower case, other characters as ``_``) and not the id as written, and
        no node has that spelling: the node is set aside under it too (the
        edges naming it are not dangling, LP4002) and the fix renames the id.
        Returns that spelling, or ``None`` (the plain LP2014 applies)."""
        val = idn.value
        meant = re.sub(r"[^a-z0-9_]", "_", val.lower())
        refs = self._refs(m)
        if meant == val or IDENT_RE.match(meant) is None or meant not in refs or val in refs:
            return None
        if meant in self._ids_seen:
            return None
        self._meant_ids.add(meant)
        self.err("LP2014", idn, f"node id '{val}' must match ^[a-z][a-z0-9_]{{0,63}}$ (lower-case "
                 f"letter, then lower-case letters, digits or '_', at most 64); the edges name "
                 f"'{meant}': did you mean that?", fix=_rename_fix(idn, meant),
                 taints=[node_entity(meant)])
        return meant

    def node_(self, n: YNode) -> tuple[str | None, YNode | None, Node | None]:
        if not isinstance(n, YMap):
            self.shape(n, "a node must be a mapping with 'id', 'type' and its config key")
            return None, None, None
        m: YMap = n
        nid: str | None = None
        idn = m.get("id")
        if idn is None:
            pass  # after the unknown keys: a misspelt 'id' says it, and gives the id
        elif isinstance(idn, YScalar) and idn.value.__class__ is str:
            nid = idn.value
            self.node = nid
            if IDENT_RE.match(nid) is None and self._node_id_meant(m, idn) is None:
                self.ident(idn, "node id")
        else:
            self.shape(idn, "a node 'id' must be a string")
        what = f"node '{nid}'" if nid else "node"

        t: str | None = None
        tn = m.get("type")
        if tn is not None:
            s = self.lit_scalar(tn, "type", "a node type")
            if s is not None:
                val = s.value
                if val.__class__ is str and val in NODE_CONFIG_KEYS:
                    t = val
                else:
                    shown = val if val.__class__ is str else s.raw
                    sug = CONFIG_KEY_TYPES.get(shown) or (suggest(shown, NODE_CONFIG_KEYS) if shown else None)
                    msg = f"unknown node type '{shown}'"
                    if sug is not None:
                        self.err("LP2031", s, msg + f"; did you mean '{sug}'?", fix=_rename_fix(s, sug, "replace with"))
                    else:
                        self.err("LP2031", s, msg + f" (types: {', '.join(NODE_CONFIG_KEYS)})")
        cfg_key = NODE_CONFIG_KEYS.get(t) if t else None

        # closed keys: common + own config; legacy pointers and foreign config keys are dedicated
        foreign: list[tuple[str, YScalar]] = []
        moved = False  # a key of the configuration sits beside it (misplaced)
        allowed = NODE_KEYS + ((cfg_key,) if cfg_key else tuple(CONFIG_KEY_TYPES))
        for k in m.index:
            if k in allowed or k == cfg_key or k.startswith("\x00"):
                continue
            kn, kv = m.key_node(k), m.get(k)
            assert kn is not None and kv is not None
            if cfg_key and t and k in _K[t].source_keys and _lacks(m.get(cfg_key), k) and (
                    k not in LEGACY_NODE_KEYS or self._port_used(m, kv)):
                self.misplaced(m, cfg_key, kn, k, kv, what)
                moved = True
            elif k in LEGACY_NODE_KEYS:
                port = _LEGACY_POINTER_PORTS.get(k)
                how = (f"add an edge from port `{port}` instead" if port
                       else "add an edge from the right port instead")
                self.err("LP2010", kn, f"node-level '{k}' is a legacy control-flow pointer; control flow is "
                         f"declared only by edges ({how})")
            elif k in CONFIG_KEY_TYPES:
                foreign.append((k, kn))
            else:
                self.unknown(kn, k, allowed, what)
        if idn is None:
            stand_in_ = stand_in(m, "id", allowed)
            if isinstance(stand_in_, YScalar) and stand_in_.value.__class__ is str and stand_in_.value:
                # the node is set aside under the id its misspelt key gives:
                # the entry and the edges naming it are not dangling (LP4001, LP4002)
                nid = stand_in_.value
            else:
                self.missing(m, "id", "node")
        if tn is None:  # after the unknown keys: a misspelt 'type' already says it
            self.missing(m, "type", what, f" ({', '.join(NODE_CONFIG_KEYS)})")
        cfg = m.get(cfg_key) if cfg_key else None
        if t is not None and tn is not None and cfg_key is not None:  # t is read from tn and has a key
            for k, kn in foreign:
                if self.foreign_config(m, t, tn, k, kn, lone=cfg is None and len(foreign) == 1):
                    t = None  # the type is the defect: nothing is judged by it (retry)
                    break  # (only a lone foreign key can be that)
            if cfg is None and not foreign:
                self.err("LP2033", tn, f"a node of type '{t}' needs its configuration mapping '{cfg_key}'",
                         needs=self.needs_one(m, cfg_key))

        label = self.get_str(m, "label", what, literal_only=False)
        description = self.get_str(m, "description", what, literal_only=False)
        inp = None
        inn = m.get("input")
        if inn is not None:
            inp = self.contract(inn, f"the input of {what}")
        retry = None
        rn = m.get("retry")
        if rn is not None and t is not None:
            if t not in RETRY_CAPABLE:
                self.err("LP2034", m.key_node("retry"), f"'retry' applies only to {_RETRY_TYPES}, not {t}")
            else:
                retry = self.retry(rn)

        config = None
        if t is not None and cfg is not None:
            if not isinstance(cfg, YMap):
                if not moved:  # else empty because its keys were dedented: said there
                    self.shape(cfg, f"'{cfg_key}' must be a mapping")
            else:
                config = self.config(t, cfg, m)
        if nid is None or config is None or t is None:  # (a config is built only for a type)
            return nid, idn, None
        return nid, idn, Node(nid, t, config, inp, retry, label, description, m)

    def misplaced(self, m: YMap, cfg_key: str, kn: YScalar, k: str, v: YNode, what: str) -> None:
        """LP2007 for a key of the node's configuration written beside it, at
        node level (a dedented ``callbackOutput``): it stands in for that key
        of the configuration, so "missing ``k``" there is a follow-on.  The fix
        indents it into the configuration when it directly follows a block
        configuration and its value stays deeper than the key."""
        cfg = m.get(cfg_key)
        ckn = m.key_node(cfg_key)
        assert cfg is not None and ckn is not None
        first = cfg.first_key() if isinstance(cfg, YMap) else None
        # the configuration's key column: its first key's, or two deeper than an empty one
        col = first.col if first is not None else ckn.col + 2
        keys = m.keys()
        fix = None
        if not (isinstance(cfg, YMap) and cfg.flow) and col > kn.col and keys.index(k) == keys.index(cfg_key) + 1 \
                and (not isinstance(v, (YMap, YSeq)) or v.flow or v.line == kn.line or v.col > col):
            fix = Fix(f"indent '{k}' under '{cfg_key}'",
                      (TextEdit(Span(kn.line + 1, kn.col + 1, kn.line + 1, kn.col + 1), " " * (col - kn.col)),),
                      Applicability.UNSAFE)
        line_up = f"to line up with '{first.value}'" if first is not None else f"deeper than '{cfg_key}'"
        self.err("LP2007", kn, f"'{k}' belongs under '{cfg_key}', the configuration of {what}, not beside it "
                 f"at node level: indent it {line_up}", fix=fix,
                 taints=[decl_key(cfg, k)] if isinstance(cfg, YMap) else [decl_key(m, cfg_key)])

    def foreign_config(self, m: YMap, t: str, tn: YNode, k: str, kn: YScalar, lone: bool) -> bool:
        """LP2032 for config key ``k`` (another kind's) on a node of type
        ``t``.  When it is the node's only config and its keys fit that other
        kind but not ``t`` (:func:`_config_fits`), the ``type`` is what is
        wrong: reported at the type, with the fix ``type: <kind>``.  The fix
        renaming the key is offered only when its keys fit ``t``; when they
        fit neither, no fix.  Returns whether the type was reported."""
        other = CONFIG_KEY_TYPES[k]
        body = m.get(k)
        fits_own = lone and _config_fits(_K[t], body, m)
        fits_other = lone and _config_fits(_K[other], body, m)
        if fits_other and not fits_own and isinstance(tn, YScalar) and self._ports_fit_kind(m, _K[other], body):
            self.err("LP2032", tn, f"this node has type '{t}' but is configured as a {other} node: '{k}' holds "
                     f"a {other} configuration; did you mean 'type: {other}'?",
                     related=[(f"the {other} configuration", kn)], fix=_rename_fix(tn, other, "replace with"))
            return True
        self.err("LP2032", kn, f"'{k}' configures a {other} node; a node of type "
                 f"'{t}' is configured under '{NODE_CONFIG_KEYS[t]}'",
                 fix=_rename_fix(kn, NODE_CONFIG_KEYS[t]) if fits_own else None)
        return False

    def _port_used(self, m: YMap, v: YNode) -> bool:
        """Is ``v`` a scalar naming a source port that authored edges leave
        node mapping ``m`` by (a switch's ``default`` port, not a legacy
        node-level ``default`` pointer naming a node)?"""
        idn = m.get("id")
        if not isinstance(v, YScalar) or not isinstance(idn, YScalar):
            return False
        return ("from", v.value) in self._refs(m).get(idn.value, ())

    def _refs(self, m: YMap) -> dict[str, list[tuple[str, str | None]]]:
        """The authored edges' node references of the document holding node mapping ``m``."""
        if self._edge_refs is None:
            root = m.parent.parent if m.parent is not None else None
            self._edge_refs = _edge_references(root.get("edges")) if isinstance(root, YMap) else {}
        return self._edge_refs

    def _ports_fit_kind(self, m: YMap, kind: kinds.Kind, body: YNode | None) -> bool:
        """Could the authored edges naming node mapping ``m``'s id be edges of
        a ``kind`` node configured by ``body``?  (Fixed ports only: a kind whose
        ports are authored is taken to fit.)"""
        idn = m.get("id")
        if kind.ports.authored is not None or not isinstance(idn, YScalar) or not isinstance(body, YMap):
            return True
        present = set(body.keys())
        srcs = {p for p in kind.ports.fixed if p not in kind.ports.conditional or kind.ports.conditional[p] in present}
        for side, port in self._refs(m).get(idn.value, ()):
            if side == "from" and port is not None and port not in srcs:
                return False
            if side == "to" and (port or "in") not in kind.ports.targets:
                return False
        return True

    def retry(self, rn: YNode) -> Retry | None:
        if not isinstance(rn, YMap):
            self.shape(rn, "'retry' must be a mapping {maxAttempts, backoff}")
            return None
        m: YMap = rn
        self.closed(m, RETRY_KEYS, "retry")
        ma = self.get_int(m, "maxAttempts", 1, MAX_ATTEMPTS, "retry", required=True)
        bo = None
        bn = m.get("backoff")
        if bn is None:
            self.missing(m, "backoff", "retry", " (a duration such as PT5S)")
        else:
            s = self.lit_scalar(bn, "backoff", "a duration such as PT5S")
            if s is not None:
                if s.value.__class__ is str and is_duration(s.value):
                    bo = s.value
                else:
                    shown = s.value if s.value.__class__ is str else s.raw
                    shown = shown if len(shown) <= 60 else shown[:57] + "..."
                    self.err("LP2035", s, f"'backoff' must be an ISO 8601 duration such as PT5S or P1D "
                             f"(days, hours, minutes, seconds), not '{shown}'{duration_error(s.value)}")
        if ma is None or bo is None:
            return None
        return Retry(ma, bo, m)

    # per-type configs ------------------------------------------------------

    def config(self, t: str, c: YMap, node: YMap) -> Any:
        """The typed config of a node of type ``t``: its closed keys, every
        generic field read by :meth:`generic`, then the kind's own fields by
        the builder method named after the kind (if any), which returns them
        as keyword arguments, or ``None`` when the config is unusable."""
        kind = _K[t]
        what = kind.config_key
        self.closed(c, kind.source_keys, what)
        got, ok = self.generic(c, kind, what)
        custom = self._config_builders.get(t)
        if custom is not None:
            more = custom(self, c, node, got)
            if more is None:
                return None
            got.update(more)
        if not ok:
            return None
        return CONFIG_CLASSES[t](**got, src=c)

    def generic(self, c: YMap, kind: kinds.Kind, what: str) -> tuple[dict[str, Any], bool]:
        """Read the generic fields of ``kind`` (:attr:`loopc.kinds.Kind.generic_fields`)
        from config mapping ``c`` by form: a template, an expression, a
        ValueExpr, a literal choice or bounded integer.  Returns ``{attribute:
        value}`` of the keys present (``None`` where unusable, after reporting)
        and whether every required one is usable; a missing required key is
        reported (LP2006, with the field's ``hint``)."""
        out: dict[str, Any] = {}
        ok = True
        for key, attr, f in kind.generic_fields:
            form = f.form
            x: Any
            if form == "template":
                x = self.get_template(c, key, what, required=f.required)
            elif form == "literal":
                if f.choices is not None:
                    x = self.get_choice(c, key, f.choices, what, required=f.required)
                else:
                    lo, hi = f.bounds  # type: ignore[misc]
                    x = self.get_int(c, key, lo, hi, what, required=f.required)
            else:
                v = c.get(key)
                if v is None:
                    if f.required:
                        self.missing(c, key, what, f.hint)
                    x = None
                else:
                    x = self.expr_text(v, key) if form == "expression" else self.value(v)
            if x is None:
                if f.required:
                    ok = False
                if key not in c:
                    continue  # omitted: the model's default
            out[attr] = x
        return out, ok

    # the kinds' own fields (cross-field rules); generic fields need nothing here

    def send_message(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        what = "sendMessage"
        completion = got.get("completion")
        tn, sn = c.get("target"), c.get("scope")
        target = scope = None
        if tn is not None and sn is not None:
            later = _later_key(c, "target", "scope")
            self.err("LP2040", later, "declare exactly one destination: 'target' (a target string) or "
                     "'scope' (a scope value), not both")
        elif tn is None and sn is None:
            self.err("LP2040", self.anchor(c), "sendMessage needs a destination: 'target' (such as "
                     "\"#release\") or 'scope' (a scope value)", needs=self.needs_one(c, "target", "scope"))
        if tn is not None:
            target = self.get_template(c, "target", what)
        if sn is not None:
            scope = self.value(sn)
        start_thread = None
        if "startThread" in c:
            start_thread = self.get_bool(c, "startThread", what)
            if completion == "callback":
                self.err("LP2042", c.key_node("startThread"), "'startThread' applies only to sent completion; "
                         "open the thread with a sent node and address the callback node by its threadScope")
        if completion == "sent":
            for k in CALLBACK_ONLY:
                kn = c.key_node(k)
                if kn is not None:
                    self.err("LP2041", kn, f"'{k}' applies only to callback completion (this node uses "
                             "completion: sent)")
        responder = None
        rn = c.get("responder")
        if rn is not None:
            responder = self.value(rn)
        callback_output = None
        con = c.get("callbackOutput")
        if con is not None:
            callback_output = self.contract(con, "callbackOutput", callback=True)
        work_scope: Any = MISSING
        wn = c.get("workScope")
        if wn is not None:
            if isinstance(wn, YScalar) and wn.value is None:
                work_scope = None
            else:
                work_scope = self.value(wn)
        related: Any = None
        rsn = c.get("relatedScopes")
        if rsn is not None:
            if wn is None:
                self.err("LP2043", c.key_node("relatedScopes"), "'relatedScopes' needs 'workScope' (a scope "
                         "value, or null to let the Agent choose)", needs=self.needs_one(c, "workScope"))
            if isinstance(rsn, YSeq):
                elems = rsn.items
                if not elems:
                    self.err("LP2044", rsn, "'relatedScopes' must list at least one scope; omit the key for none")
                elif len(elems) > MAX_RELATED_SCOPES:
                    self.err("LP2093", rsn, f"'relatedScopes' lists {len(elems)} scopes; the limit is "
                             f"{MAX_RELATED_SCOPES}")
                related = tuple(self.value(e) for e in elems)
            else:
                related = self.value(rsn)
                if isinstance(related, Literal) and isinstance(related.value, list):
                    if not related.value:
                        self.err("LP2044", rsn, "'relatedScopes' must hold at least one scope; omit the key for none")
                    elif len(related.value) > MAX_RELATED_SCOPES:
                        self.err("LP2093", rsn, f"'relatedScopes' lists {len(related.value)} scopes; the limit "
                                 f"is {MAX_RELATED_SCOPES}")
        allowed_responders = None
        has_work_items = False
        win = c.get("workItems")
        if win is not None:
            has_work_items = True
            if not isinstance(win, YMap):
                self.shape(win, "'workItems' must be a mapping {allowedResponders: <array<agent> value>}")
            else:
                self.closed(win, WORK_ITEMS_KEYS, "workItems")
                an = win.get("allowedResponders")
                if an is None:
                    self.missing(win, "allowedResponders", "workItems", " (an array<agent> value)")
                else:
                    allowed_responders = self.value(an)
        if completion == "callback" and con is None and wn is None:
            self.err("LP2045", c.key_node("completion"), "a callback sendMessage needs 'callbackOutput' (the "
                     "fields the Agent returns) unless it declares 'workScope'",
                     needs=self.needs_one(c, "callbackOutput", "workScope"))
        return dict(target=target, scope=scope, start_thread=start_thread, responder=responder,
                    callback_output=callback_output, work_scope=work_scope, related_scopes=related,
                    allowed_responders=allowed_responders, has_work_items=has_work_items)

    def set_variable(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        an = c.get("assign")
        if an is None:
            self.missing(c, "assign", "setVariable", " (a mapping of Run state field to value)")
            return None
        assign = self.value_map(an, "assign")
        return None if assign is None else {"assign": assign}

    def wait(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        cn, dn, ton = c.get("condition"), c.get("duration"), c.get("timeout")
        if cn is not None and dn is not None:
            later = _later_key(c, "condition", "duration")
            self.err("LP2050", later, "a wait has exactly one of 'condition' (resume on a Run-state change) "
                     "or 'duration' (a pure timer), not both")
        elif cn is None and dn is None:
            self.err("LP2050", self.anchor(c), "a wait needs 'condition' (resume on a Run-state change) or "
                     "'duration' (a pure timer)", needs=self.needs_one(c, "condition", "duration"))
        if ton is not None and cn is None and dn is not None:
            self.err("LP2051", c.key_node("timeout"), "'timeout' applies only to a wait with a 'condition'; "
                     "a pure timer already ends after its duration", needs=self.needs_one(c, "condition"))
        return {}

    def switch(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        what = "switch"
        ports: dict[str, YNode] = {}
        cases: list[SwitchCase] = []
        ok = True
        cn = c.get("cases")
        if cn is None:
            self.missing(c, "cases", what, " (a list of {port, when})")
            ok = False
        elif not isinstance(cn, YSeq):
            self.shape(cn, "'cases' must be a list of {port, when}")
            ok = False
        elif not cn.items:
            self.err("LP2055", cn, "a switch needs at least one case")
            ok = False
        else:
            for item in cn.items:
                case = self.case(item, ports)
                if case is None:
                    ok = False
                else:
                    cases.append(case)
        default = None
        dn = c.get("default")
        if dn is None:
            self.missing(c, "default", what, " (the port taken when no case matches)")
        else:
            s = self.lit_scalar(dn, "default", "a port name")
            if s is not None and self.ident(s, "default port"):
                default = s.value
                self._port(default, s, ports)
        if default is None or not ok:
            return None
        return {"cases": tuple(cases), "default": default}

    def _port(self, name: str, at: YNode, seen: dict[str, YNode], noun: str = "port") -> bool:
        if name in seen:
            where = "across the switch's cases and default" if noun == "port" else "within the fork"
            self.err("LP2056", at, f"duplicate {noun} '{name}'; {noun}s are unique {where}",
                     related=[("first used here", seen[name])])
            return False
        seen[name] = at
        return True

    def case(self, n: YNode, ports: dict[str, YNode]) -> SwitchCase | None:
        if not isinstance(n, YMap):
            self.shape(n, "a switch case must be a mapping {port, when}")
            return None
        m: YMap = n
        self.closed(m, CASE_KEYS, "switch case")
        port = None
        pn = m.get("port")
        if pn is None:
            self.missing(m, "port", "switch case")
        else:
            s = self.lit_scalar(pn, "port", "a port name")
            if s is not None and self.ident(s, "case port") and self._port(s.value, s, ports):
                port = s.value
        when = None
        wn = m.get("when")
        if wn is None:
            self.missing(m, "when", "switch case", " (a condition expression)")
        else:
            when = self.expr_text(wn, "when")
        if port is None or when is None:
            return None
        return SwitchCase(port, when, m)

    def fork(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        bn = c.get("branches")
        if bn is None:
            self.missing(c, "branches", "fork", " (a list of at least two branch keys)")
            return None
        if isinstance(bn, YMap) and len(bn.index) == 1:
            k0, v0 = next(bn.entries())
            if k0 in ("ref", "expr"):
                self.err("LP2013", bn, "'branches' takes a literal list of branch keys")
                return None
            if k0 == "literal":
                self.literal_wrapper(bn, v0, "branches")
                return None
        if not isinstance(bn, YSeq):
            self.shape(bn, "'branches' must be a list of branch keys")
            return None
        seen: dict[str, YNode] = {}
        ok = True
        for e in bn.items:
            s = self.lit_scalar(e, "branches", "a branch key")
            if s is None or not self.ident(s, "branch key") or not self._port(s.value, s, seen, "branch key"):
                ok = False
        if len(bn.items) < 2:
            self.err("LP2057", bn, f"a fork needs at least two branches (found {len(bn.items)}); "
                     "a single path needs no fork")
            return None
        if not ok:
            return None
        return {"branches": tuple(seen)}

    def join(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        what = "join"
        fk, fo = c.get("forkId"), c.get("fanOutId")
        if fk is not None and fo is not None:
            later = _later_key(c, "forkId", "fanOutId")
            self.err("LP2060", later, "a join names exactly one owner: 'forkId' (a fork or all_match switch) "
                     "or 'fanOutId' (a fan_out), not both")
        elif fk is None and fo is None:
            self.err("LP2060", self.anchor(c), "a join needs its owner: 'forkId' (a fork or all_match "
                     "switch) or 'fanOutId' (a fan_out)", needs=self.needs_one(c, "forkId", "fanOutId"))
        fork_id = self.get_str(c, "forkId", what) if fk is not None else None
        fan_out_id = self.get_str(c, "fanOutId", what) if fo is not None else None
        if got.get("mode") == "any" and fo is not None:
            # decided once every node is read (:meth:`any_fan_out_joins`): a
            # `fanOutId` naming a fork or all_match switch is the defect
            # (the analyzer's LP4311, fixed by renaming the key), not the mode
            self._any_joins.append((self.node, c.get("mode"), fan_out_id))
        result: dict[str, FieldSchema] | None = {}
        rn = c.get("result")
        if rn is not None:
            result = self.contract(rn, "the join result")
        merge: dict[str, ValueExpr | None] | None = {}
        mn = c.get("merge")
        if mn is not None:
            merge = self.value_map(mn, "merge")
        if result is None or merge is None or (fork_id is None and fan_out_id is None):
            return None
        if fork_id is not None and fan_out_id is not None:
            return None
        return {"result": result, "merge": merge, "fork_id": fork_id, "fan_out_id": fan_out_id}

    def loop(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        state: dict[str, FieldSchema] | None = {}
        sn = c.get("state")
        if sn is not None:
            state = self.contract(sn, "the loop state")
        init: dict[str, ValueExpr | None] | None = {}
        inn = c.get("init")
        if inn is not None:
            init = self.value_map(inn, "init")
        if state is None or init is None:
            return None
        return {"state": state, "init": init}

    def end(self, c: YMap, node: YMap, got: dict[str, Any]) -> dict[str, Any] | None:
        what = "end"
        status = got.get("status")
        code = None
        detail = None
        if status == "succeeded":
            for k, holder in (("input", node), ("code", c), ("detail", c)):
                kn = holder.key_node(k)
                if kn is not None:
                    why = ("its input contract is the Plan output" if k == "input"
                           else "only a failed End records an error")
                    self.err("LP2065", kn, f"a succeeded End has no '{k}': {why}")
            return {"code": None, "detail": None}
        if status == "failed":
            cn = c.get("code")
            if cn is None:
                self.missing(c, "code", "a failed End", " (a stable error code such as review_rejected)")
            else:
                s = self.lit_scalar(cn, "code", "an error code string")
                if s is not None:
                    if s.value.__class__ is str and ERROR_CODE_RE.match(s.value):
                        code = s.value
                    else:
                        shown = s.value if s.value.__class__ is str else s.raw
                        self.err("LP2066", s, f"error code '{shown}' must match ^[a-z][a-z0-9_.]{{0,63}}$ "
                                 "(such as review_rejected)")
            if "detail" in c:
                detail = self.get_template(c, "detail", what)
                if detail is None:
                    return None
            if code is None:
                return None
            return {"code": code, "detail": detail}
        return None

    # -- edges (docs/reference.md#edges) -------------------------------------

    def edges(self, seq: YSeq, root: YMap) -> tuple[dict[str, Edge], set[str]]:
        items = seq.items
        if len(items) > MAX_EDGES:
            self.err("LP2091", root.key_node("edges"), f"the plan has {len(items):,} edges; the limit is "
                     f"{MAX_EDGES:,}")
        edges: dict[str, Edge] = {}
        bad: set[str] = set()
        first: dict[str, YNode] = {}
        for item in items:
            self.edge = None
            before = self.errs
            eid, idn, edge = self.edge_(item)
            if eid is None:
                continue
            if idn is None:  # the id a misspelt 'id' key gives: set aside, never a duplicate
                if eid not in first:
                    bad.add(eid)
                continue
            if eid in first:
                self.err("LP2070", idn, f"duplicate edge id '{eid}'; the first definition is used",
                         related=[("first defined here", first[eid])])
                continue
            first[eid] = idn
            if edge is None or self.errs != before:
                bad.add(eid)
            else:
                edges[eid] = edge
        self.edge = None
        return edges, bad

    def edge_(self, n: YNode) -> tuple[str | None, YNode | None, Edge | None]:
        if not isinstance(n, YMap):
            self.shape(n, "an edge must be a mapping with 'id', 'from' and 'to'")
            return None, None, None
        m: YMap = n
        eid: str | None = None
        idn = m.get("id")
        if idn is None:
            pass  # after the unknown keys: a misspelt 'id' says it
        elif isinstance(idn, YScalar) and idn.value.__class__ is str:
            eid = idn.value
            self.edge = eid
            self.ident(idn, "edge id")
        else:
            self.shape(idn, "an edge 'id' must be a string")
        what = f"edge '{eid}'" if eid else "edge"
        self.closed(m, EDGE_KEYS, what, self._edge_special)
        if idn is None:
            sub = stand_in(m, "id", EDGE_KEYS)
            if isinstance(sub, YScalar) and sub.value.__class__ is str and sub.value:
                eid = sub.value  # set aside under the id its misspelt key gives
            else:
                self.missing(m, "id", "edge")
        src = self.endpoint(m, "from", what)
        dst = self.endpoint(m, "to", what)
        bind = None
        bn = m.get("bind")
        if bn is not None:
            bind = self.value_map(bn, "bind")
        label = self.get_str(m, "label", what, literal_only=False)
        if eid is None or src is None or dst is None or (bn is not None and bind is None):
            return eid, idn, None
        assert src[1] is not None  # 'from' requires its port (endpoint)
        return eid, idn, Edge(eid, src[0], src[1], dst[0], dst[1] or "in", bind, label, m)

    def _edge_special(self, k: str, kn: YScalar, v: YNode) -> bool:
        if k in ("when", "condition", "if"):
            self.err("LP2007", kn, f"unknown key '{k}' in an edge: edges carry no conditions; route "
                     "conditionally with a switch node")
            return True
        return False

    def endpoint(self, m: YMap, key: str, what: str) -> tuple[str, str | None] | None:
        v = m.get(key)
        if v is None:
            self.missing(m, key, what, " ({node, port})" if key == "from" else " ({node})")
            return None
        if isinstance(v, YScalar) and v.value.__class__ is str:
            text = v.value
            fix = None
            if key == "to" and text == "end":
                msg = ("'to: end' is the legacy magic end target; add an explicit end node "
                       "(type: end, end: {status: succeeded}) and route to it with to: {node: <its id>}")
            elif key == "to":
                msg = f"an edge target is a mapping {{node, port}}; write to: {{node: {text}}}"
                fix = Fix(f"write {{node: {text}}}", (TextEdit(v.span, f"{{node: {text}}}"),), Applicability.SAFE)
            else:
                msg = (f"an edge source is a mapping {{node, port}} naming the source port; write "
                       f"from: {{node: {text}, port: <port>}}")
            self.err("LP2011", v, msg, fix=fix)
            return None
        if not isinstance(v, YMap):
            self.shape(v, f"'{key}' must be a mapping {{node, port}}")
            return None
        em: YMap = v
        self.closed(em, FROM_KEYS, f"'{key}' of {what}")
        node = self.get_str(em, "node", f"'{key}' of {what}", required=True)
        port = None
        if key == "from":
            port = self.get_str(em, "port", f"'from' of {what}", required=True)
            if port is None:
                return None
        elif "port" in em:
            port = self.get_str(em, "port", f"'to' of {what}")
            if port is None:
                return None
        if node is None:
            return None
        return node, port


_Builder._config_builders = {t: getattr(_Builder, t) for t in _K if hasattr(_Builder, t)}
