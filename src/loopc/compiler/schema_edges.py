"""Edges of the schema pass (:mod:`loopc.compiler.schema`;
docs/reference.md#edges): the edge list and its budget, ids and duplicates,
the ``from``/``to`` endpoints (legacy string forms), ``bind`` and ``label``
(LP2011, LP2070, LP2091).  Never raises on bad input.
"""
from __future__ import annotations

from loopc.compiler.model import Edge
from loopc.compiler.schema_keys import EDGE_KEYS, FROM_KEYS, MAX_EDGES
from loopc.compiler.schema_readers import _Readers, stand_in
from loopc.compiler.yamlnodes import YMap, YNode, YScalar, YSeq
from loopc.diagnostics import Applicability, Fix, TextEdit


class _Edges(_Readers):
    """The edge list and each edge, read with the scalar readers of :class:`_Readers`."""


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
