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

Layout: this module holds the entry point and the document (header, root
keys, sections); the walk's other parts are the bases of its ``_Builder``,
each in its own module — the vocabulary (key sets, budgets:
:mod:`loopc.compiler.schema_keys`), the scalar and value readers
(:mod:`~loopc.compiler.schema_readers`), contracts
(:mod:`~loopc.compiler.schema_contracts`), per-kind configs
(:mod:`~loopc.compiler.schema_configs`), nodes
(:mod:`~loopc.compiler.schema_nodes`) and edges
(:mod:`~loopc.compiler.schema_edges`).  The public names of those modules are
imported from here.

Cost is linear in the document: one walk, dict lookups per key, precompiled
regexes, ``difflib`` only for keys that are already wrong.
"""

from __future__ import annotations


from loopc.compiler.model import Edge, FieldSchema, Plan
from loopc.compiler.report import Entity, Reporter, decl, edge_entity, node_entity
from loopc.compiler.schema_edges import _Edges
from loopc.compiler.schema_keys import (
    API_VERSION, KIND, LEGACY_API_VERSION, LEGACY_KIND, MAX_NODES, MAX_EDGES, MAX_SCHEMA_FIELDS,
    MAX_RELATED_SCOPES, MAX_LITERAL_NESTING, MAX_LITERAL_VALUES, MAX_ATTEMPTS, MAX_CONCURRENCY,
    MAX_ITERATIONS, ROOT_KEYS, FIELD_KEYS, NODE_KEYS, LEGACY_NODE_KEYS, CONFIG_KEY_TYPES, section_at,
    EDGE_KEYS, FROM_KEYS, RETRY_KEYS, SEND_KEYS, CALLBACK_ONLY, WORK_ITEMS_KEYS, SET_VARIABLE_KEYS,
    WAIT_KEYS, APPROVAL_KEYS, SWITCH_KEYS, CASE_KEYS, FORK_KEYS, JOIN_KEYS, FAN_OUT_KEYS, LOOP_KEYS,
    END_KEYS, RESERVED_CALLBACK_FIELDS, NO_DEFAULT_TYPES,
)
from loopc.compiler.schema_nodes import _Nodes
from loopc.compiler.schema_readers import _kind, _rename_fix, literal_number_problem, stand_in
from loopc.compiler.yamlnodes import YDocument, YMap, YNode, YScalar, YSeq
from loopc.diagnostics import Applicability, Fix, TextEdit

__all__ = [
    "build_plan", "literal_number_problem", "API_VERSION", "KIND", "LEGACY_API_VERSION", "LEGACY_KIND",
    "MAX_NODES", "MAX_EDGES", "MAX_SCHEMA_FIELDS", "MAX_RELATED_SCOPES", "MAX_LITERAL_NESTING",
    "MAX_LITERAL_VALUES", "MAX_ATTEMPTS", "MAX_CONCURRENCY", "MAX_ITERATIONS", "ROOT_KEYS", "FIELD_KEYS",
    "NODE_KEYS", "LEGACY_NODE_KEYS", "CONFIG_KEY_TYPES", "section_at", "EDGE_KEYS", "FROM_KEYS",
    "RETRY_KEYS", "SEND_KEYS", "CALLBACK_ONLY", "WORK_ITEMS_KEYS", "SET_VARIABLE_KEYS", "WAIT_KEYS",
    "APPROVAL_KEYS", "SWITCH_KEYS", "CASE_KEYS", "FORK_KEYS", "JOIN_KEYS", "FAN_OUT_KEYS", "LOOP_KEYS",
    "END_KEYS", "RESERVED_CALLBACK_FIELDS", "NO_DEFAULT_TYPES", "stand_in",
]


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



class _Builder(_Nodes, _Edges):
    """One schema walk over a document: the document itself here; contracts,
    configs, nodes and edges from its bases."""


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
            fix = fix.evolve(applicability=Applicability.SAFE)
        self.err(code, v, f"'{key}' must be exactly '{want}', not {shown}", fix=fix)
